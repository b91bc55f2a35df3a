#include "manifests/loss_file.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/grow.h"

#define MAX_FIELDS 4

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* A plain decimal: [-+]digits[.digits][(e|E)[-+]digits], at least one
 * mantissa digit. Checked by hand because strtof alone would also take
 * "nan", "inf" and hex floats, which a loss file must spell as bits. */
static int is_plain_decimal(const char *s) {
  size_t i = 0, digits = 0;
  if (s[i] == '-' || s[i] == '+') i++;
  while (s[i] >= '0' && s[i] <= '9') i++, digits++;
  if (s[i] == '.') {
    i++;
    while (s[i] >= '0' && s[i] <= '9') i++, digits++;
  }
  if (digits == 0) return 0;
  if (s[i] == 'e' || s[i] == 'E') {
    i++;
    if (s[i] == '-' || s[i] == '+') i++;
    size_t ed = 0;
    while (s[i] >= '0' && s[i] <= '9') i++, ed++;
    if (ed == 0) return 0;
  }
  return s[i] == 0;
}

int loss_parse_f32(const char *tok, uint32_t *bits, const char **why) {
  if (tok[0] == '0' && (tok[1] == 'x' || tok[1] == 'X')) {
    uint32_t v = 0;
    size_t i = 2;
    for (; tok[i]; i++) {
      int d = hex_digit(tok[i]);
      if (d < 0 || i >= 10) break;
      v = v << 4 | (uint32_t)d;
    }
    if (i != 10 || tok[i]) {
      *why = "expected \"0x\" and 8 hex digits";
      return -1;
    }
    *bits = v;
    return 0;
  }
  if (!is_plain_decimal(tok)) {
    *why = "expected a decimal number or \"0x\" and 8 hex digits";
    return -1;
  }
  errno = 0;
  float f = strtof(tok, NULL);
  /* Underflow rounds to a subnormal or zero, which is the correctly
   * rounded value; only overflow to infinity is an error. */
  if (isinf(f)) {
    *why = "decimal value is outside the float32 range";
    return -1;
  }
  memcpy(bits, &f, sizeof f);
  return 0;
}

static int parse_step(const char *tok, uint64_t *out) {
  uint64_t v = 0;
  if (!tok[0]) return -1;
  for (const char *p = tok; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    uint64_t d = (uint64_t)(*p - '0');
    /* JSON readers keep integers in int64, so steps stay below 2^63. */
    if (v > ((uint64_t)INT64_MAX - d) / 10) return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int parse_wall(const char *tok, double *out) {
  if (tok[0] == '-' || tok[0] == '+' || !is_plain_decimal(tok)) return -1;
  double v = strtod(tok, NULL);
  if (!isfinite(v)) return -1;
  *out = v;
  return 0;
}

/* Split line (modified in place) into at most MAX_FIELDS fields; returns
 * the count, or MAX_FIELDS + 1 if there are more. */
static int split_fields(char *line, char *fields[MAX_FIELDS]) {
  int n = 0;
  char *p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (!*p) return n;
    if (n == MAX_FIELDS) return MAX_FIELDS + 1;
    fields[n++] = p;
    while (*p && *p != ' ' && *p != '\t') p++;
    if (*p) *p++ = 0;
  }
}

static int parse_fields(char **f, int nf, const char *name, long long ln, loss_record *r,
                        pg_error *err) {
  const char *why = NULL;
  memset(r, 0, sizeof *r);
  if (nf < 2) return pg_fail_line(err, name, ln, "expected STEP LOSS [LR_MULT [WALL_MS]]");
  if (nf > MAX_FIELDS)
    return pg_fail_line(err, name, ln, "too many fields (at most STEP LOSS LR_MULT WALL_MS)");
  if (parse_step(f[0], &r->step) != 0)
    return pg_fail_line(err, name, ln, "step '%.40s': expected an integer in [0, 2^63)", f[0]);
  if (loss_parse_f32(f[1], &r->loss_bits, &why) != 0)
    return pg_fail_line(err, name, ln, "loss '%.40s': %s", f[1], why);
  if (nf > 2) {
    if (loss_parse_f32(f[2], &r->lr_mult_bits, &why) != 0)
      return pg_fail_line(err, name, ln, "lr_mult '%.40s': %s", f[2], why);
    r->has_lr_mult = 1;
  }
  if (nf > 3) {
    if (parse_wall(f[3], &r->wall_ms) != 0)
      return pg_fail_line(err, name, ln, "wall_ms '%.40s': expected a non-negative decimal", f[3]);
    r->has_wall_ms = 1;
  }
  return 0;
}

static int push(loss_list *l, size_t *cap, const loss_record *r) {
  if (PG_GROW(l->recs, *cap, l->n + 1, 64)) return -1;
  l->recs[l->n++] = *r;
  return 0;
}

/* One line (without its '\n'); appends a record unless it is blank. */
static int parse_line(const char *s, size_t n, const char *name, long long ln, loss_list *out,
                      size_t *cap, pg_error *err) {
  char line[LOSS_FILE_MAX_LINE + 1];
  if (n > LOSS_FILE_MAX_LINE)
    return pg_fail_line(err, name, ln, "line longer than %d bytes", LOSS_FILE_MAX_LINE);
  if (memchr(s, 0, n)) return pg_fail_line(err, name, ln, "NUL byte in a text file");
  memcpy(line, s, n);
  line[n] = 0;
  if (n && line[n - 1] == '\r') line[n - 1] = 0;
  char *hash = strchr(line, '#');
  if (hash) *hash = 0;
  char *f[MAX_FIELDS];
  int nf = split_fields(line, f);
  if (nf == 0) return 0;
  loss_record r;
  if (parse_fields(f, nf, name, ln, &r, err) != 0) return -1;
  if (out->n && r.step <= out->recs[out->n - 1].step)
    return pg_fail_line(err, name, ln, "step %llu is not greater than the previous step %llu",
                        (unsigned long long)r.step, (unsigned long long)out->recs[out->n - 1].step);
  if (out->n == LOSS_FILE_MAX_STEPS)
    return pg_fail_line(err, name, ln, "more than %zu steps", LOSS_FILE_MAX_STEPS);
  if (push(out, cap, &r) != 0) return pg_fail(err, name, -1, "out of memory");
  return 0;
}

int loss_file_parse(const char *buf, size_t len, const char *name, loss_list *out, pg_error *err) {
  out->recs = NULL;
  out->n = 0;
  if (len > LOSS_FILE_MAX_BYTES)
    return pg_fail(err, name, -1, "larger than the limit of %zu bytes", LOSS_FILE_MAX_BYTES);
  size_t cap = 0, off = 0;
  long long ln = 0;
  while (off < len) {
    ln++;
    const char *nl = memchr(buf + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
    if (parse_line(buf + off, n, name, ln, out, &cap, err) != 0) {
      loss_list_free(out);
      return -1;
    }
    off += n + (nl != NULL);
  }
  return 0;
}

int loss_file_load(const char *path, loss_list *out, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  out->recs = NULL;
  out->n = 0;
  if (file_read_all(path, LOSS_FILE_MAX_BYTES, &buf, &len, err) != 0) return -1;
  int rc = loss_file_parse((const char *)buf, len, path, out, err);
  free(buf);
  return rc;
}

void loss_list_free(loss_list *l) {
  free(l->recs);
  l->recs = NULL;
  l->n = 0;
}
