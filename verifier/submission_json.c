/* submission*.json: the claims of a submission, strictly typed. This file
 * is the JSON_INVALID and JSON_FIELD rules: the challenge README asks for
 * "a submission.json file ... that includes your name, GitHub ID, val_bpb,
 * and related metadata"; the records add the fields read here. Unknown
 * fields are allowed (records carry many), known ones must have the type
 * the records use.
 *
 * JSON_FIELD is a warning: accepted records lack author, github_id, name,
 * date or val_bpb, or write "seeds" as an object keyed by seed. A missing
 * or mistyped field changes nothing a verdict rests on: the numbers that
 * are there are checked against the logs (CLAIM_MISMATCH) and the sizes
 * against the limit (SIZE_OVER_LIMIT). A file that is not JSON at all
 * (JSON_INVALID) stays an error: no claim of it can be read. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/submission.h"

/* The line where "key" first appears, for pointing at a bad field. */
static uint32_t key_line(const char *text, size_t len, const char *key) {
  char pat[80];
  int k = snprintf(pat, sizeof pat, "\"%s\"", key);
  if (k <= 0 || (size_t)k >= sizeof pat) return 0;
  const char *hit = memmem(text, len, pat, (size_t)k);
  if (!hit) return 0;
  uint32_t line = 1;
  for (const char *p = text; p < hit; p++) line += *p == '\n';
  return line;
}

/* Digits after the point of a number as written in the JSON text at path
 * (keys from the top; NULL matches any array element), so "1.06400" is a
 * claim to 5 decimals although it reads back as 1.064. The text has parsed
 * already; -1 if the path is not a number. */
#define PATH_MAX_DEPTH 8
static int written_decimals(const char *t, size_t len, const char *const *path, size_t depth) {
  const char *key[PATH_MAX_DEPTH + 1] = {0};
  size_t key_len[PATH_MAX_DEPTH + 1] = {0};
  int is_obj[PATH_MAX_DEPTH + 1] = {0};
  size_t d = 0; /* nesting depth: containers open */
  const char *pending = NULL;
  size_t pending_len = 0;
  for (size_t i = 0; i < len; i++) {
    char c = t[i];
    if (c == '"') {
      size_t j = i + 1;
      while (j < len && t[j] != '"') j += t[j] == '\\' ? 2 : 1;
      if (d && is_obj[d] && !pending) pending = t + i + 1, pending_len = j - i - 1;
      else pending = NULL;
      i = j;
    } else if (c == ':') {
      key[d] = pending, key_len[d] = pending_len;
      pending = NULL;
    } else if (c == '{' || c == '[') {
      if (++d > PATH_MAX_DEPTH) return -1; /* deeper than any claim lives */
      is_obj[d] = c == '{';
      key[d] = NULL;
    } else if (c == '}' || c == ']') {
      if (d) d--;
      pending = NULL;
    } else if (c == ',') {
      pending = NULL;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t j = i, dec = 0;
      int point = 0;
      while (j < len && strchr("+-0123456789.eE", t[j])) {
        if (t[j] == '.') point = 1;
        else if (point && t[j] >= '0' && t[j] <= '9') dec++;
        else if (t[j] == 'e' || t[j] == 'E') point = 0;
        j++;
      }
      int match = d == depth;
      for (size_t k = 0; match && k < depth; k++) {
        const char *want = path[k];
        const char *have = key[k + 1];
        match = !want ? !is_obj[k + 1]
                      : is_obj[k + 1] && have && strlen(want) == key_len[k + 1] &&
                            !memcmp(want, have, key_len[k + 1]);
      }
      if (match) return (int)dec;
      i = j - 1;
    }
  }
  return -1;
}

/* The written decimals of a claim, else those of its shortest form. */
static int claim_decimals(const char *t, size_t len, const char *const *path, size_t depth,
                          double v) {
  int d = written_decimals(t, len, path, depth);
  return d >= 0 ? d : decimals_of(v);
}

typedef struct ctx {
  const char *text;
  size_t len;
  const char *rel;
  finding_list *f;
} ctx;

static void bad(const ctx *c, const char *key, const char *fmt, const char *detail) {
  char msg[256];
  snprintf(msg, sizeof msg, fmt, key, detail);
  findings_add(c->f, "JSON_FIELD", SEV_WARNING, c->rel, key_line(c->text, c->len, key), "%s", msg);
}

static int require_string(const ctx *c, json_t *root, const char *key) {
  json_t *v = json_object_get(root, key);
  if (!v) return bad(c, key, "required field \"%s\" is missing%s", ""), -1;
  if (!json_is_string(v)) return bad(c, key, "field \"%s\" must be a string%s", ""), -1;
  if (!json_string_length(v)) return bad(c, key, "field \"%s\" is empty%s", ""), -1;
  return 0;
}

/* YYYY-MM-DD, optionally followed by a time ("T..." or " ..."). */
static int valid_date(const char *s) {
  for (int i = 0; i < 10; i++) {
    if (i == 4 || i == 7) {
      if (s[i] != '-') return 0;
    } else if (!isdigit((unsigned char)s[i])) {
      return 0;
    }
  }
  int m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
  if (m < 1 || m > 12 || d < 1 || d > 31) return 0;
  return s[10] == 0 || s[10] == 'T' || s[10] == ' ';
}

/* A number (integer or real, finite) in (lo, hi). */
static int get_number(const ctx *c, json_t *obj, const char *key, const char *where, double lo,
                      double hi, double *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) return 0;
  char name[96];
  snprintf(name, sizeof name, "%s%s", where, key);
  if (!json_is_number(v)) return bad(c, name, "field \"%s\" must be a number%s", ""), -1;
  double x = json_number_value(v);
  if (!isfinite(x) || x <= lo || x >= hi) {
    char d[64];
    snprintf(d, sizeof d, " (got %g)", x);
    return bad(c, name, "field \"%s\" is out of range%s", d), -1;
  }
  *out = x;
  return 1;
}

/* A non-negative integer: a real such as 15863489.0 is refused, byte
 * counts are whole. */
static int get_count(const ctx *c, json_t *obj, const char *key, const char *where, int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!v) return 0;
  char name[96];
  snprintf(name, sizeof name, "%s%s", where, key);
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    return bad(c, name, "field \"%s\" must be a non-negative integer%s", ""), -1;
  *out = json_integer_value(v);
  return 1;
}

static int parse_seed_key(const char *k, int64_t *seed) {
  if (!*k || strlen(k) > 18) return -1;
  for (const char *p = k; *p; p++)
    if (!isdigit((unsigned char)*p)) return -1;
  *seed = strtoll(k, NULL, 10);
  return 0;
}

static void read_seed_results(const ctx *c, json_t *root, const char *key, sub_json *j);

/* "seeds": [42, 1337], or an object keyed by seed like "seed_results". */
static void read_seeds(const ctx *c, json_t *root, sub_json *j) {
  json_t *v = json_object_get(root, "seeds");
  if (!v) return;
  int objects = json_is_object(v) ||
                (json_is_array(v) && json_array_size(v) && json_is_object(json_array_get(v, 0)));
  if (objects) {
    if (!json_object_get(root, "seed_results")) read_seed_results(c, root, "seeds", j);
    return;
  }
  if (!json_is_array(v)) {
    bad(c, "seeds", "field \"%s\" must be an array of integers%s", "");
    return;
  }
  j->seeds = calloc(json_array_size(v) + 1, sizeof *j->seeds);
  if (!j->seeds) return;
  size_t i;
  json_t *x;
  json_array_foreach(v, i, x) {
    if (!json_is_integer(x) || json_integer_value(x) < 0) {
      bad(c, "seeds", "field \"%s\" must be an array of non-negative integers%s", "");
      j->n_seeds = 0;
      return;
    }
    j->seeds[j->n_seeds++] = json_integer_value(x);
  }
}

/* One seed's claim from object r (val_bpb, val_loss, artifact_bytes or
 * bytes_total), or from a bare number (its val_bpb: {"42": 1.0695}).
 * path names r's place for the written decimals (NULL: an array's). */
static int read_one_claim(const ctx *c, json_t *r, const char *const *path, const char *where,
                          sub_seed_claim *cl) {
  int listed = path[1] != NULL;
  if (json_is_number(r)) {
    double x = json_number_value(r);
    if (!isfinite(x) || x <= 0 || x >= 20) return -1;
    cl->has_bpb = 1, cl->val_bpb = x;
    cl->bpb_dec = listed ? claim_decimals(c->text, c->len, path, 2, x) : decimals_of(x);
    return 0;
  }
  if (!json_is_object(r)) return -1;
  cl->has_bpb = get_number(c, r, "val_bpb", where, 0, 20, &cl->val_bpb) == 1;
  cl->has_loss = get_number(c, r, "val_loss", where, 0, 100, &cl->val_loss) == 1;
  const char *pb[] = {path[0], path[1], "val_bpb"}, *pl[] = {path[0], path[1], "val_loss"};
  if (cl->has_bpb)
    cl->bpb_dec =
        listed ? claim_decimals(c->text, c->len, pb, 3, cl->val_bpb) : decimals_of(cl->val_bpb);
  if (cl->has_loss)
    cl->loss_dec =
        listed ? claim_decimals(c->text, c->len, pl, 3, cl->val_loss) : decimals_of(cl->val_loss);
  cl->has_bytes = get_count(c, r, "artifact_bytes", where, &cl->artifact_bytes) == 1;
  if (!cl->has_bytes)
    cl->has_bytes = get_count(c, r, "bytes_total", where, &cl->artifact_bytes) == 1;
  return 0;
}

/* Per-seed claims under key: an object keyed by seed ("42")
 * whose values are objects or numbers, or an array of objects that each
 * name their "seed" ([{"seed": 42, "val_bpb": ...}], as many folders
 * write them). */
static void read_seed_results(const ctx *c, json_t *root, const char *key, sub_json *j) {
  json_t *v = json_object_get(root, key);
  if (!v) return;
  if (!json_is_object(v) && !json_is_array(v)) {
    bad(c, key, "field \"%s\" must be an object keyed by seed or an array%s", "");
    return;
  }
  size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
  j->claims = calloc(n + 1, sizeof *j->claims);
  if (!j->claims) return;
  if (json_is_array(v)) {
    size_t i;
    json_t *r;
    json_array_foreach(v, i, r) {
      sub_seed_claim cl = {0};
      json_t *sd = json_is_object(r) ? json_object_get(r, "seed") : NULL;
      char where[64];
      snprintf(where, sizeof where, "%s[%zu].", key, i);
      const char *path[] = {key, NULL};
      if (!sd || !json_is_integer(sd) || json_integer_value(sd) < 0 ||
          read_one_claim(c, r, path, where, &cl)) {
        bad(c, key, "field \"%s\" holds an entry that is not an object with an integer \"seed\"%s",
            "");
        continue;
      }
      cl.seed = json_integer_value(sd);
      j->claims[j->n_claims++] = cl;
    }
    return;
  }
  const char *k;
  json_t *r;
  json_object_foreach(v, k, r) {
    sub_seed_claim cl = {0};
    char where[64];
    snprintf(where, sizeof where, "%s.%.40s.", key, k);
    if (parse_seed_key(k, &cl.seed)) {
      bad(c, key, "field \"%s\" has a key that is not a seed number%s", "");
      continue;
    }
    const char *path[] = {key, k};
    if (read_one_claim(c, r, path, where, &cl)) {
      bad(c, key, "field \"%s\" holds a value that is neither an object nor a val_bpb%s", "");
      continue;
    }
    j->claims[j->n_claims++] = cl;
  }
}

void submission_json_parse(const char *text, size_t len, const char *rel, sub_json *j,
                           finding_list *f) {
  memset(j, 0, sizeof *j);
  j->rel = strdup(rel);
  ctx c = {text, len, rel, f};
  if (len > SUB_MAX_JSON_BYTES) {
    findings_add(f, "JSON_INVALID", SEV_ERROR, rel, 0, "file of %zu bytes is over the limit of %u",
                 len, SUB_MAX_JSON_BYTES);
    return;
  }
  /* A UTF-8 byte order mark, which Windows editors write and RFC 8259
   * (section 8.1) lets a parser ignore: a formality. */
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
    findings_add(f, "JSON_FIELD", SEV_WARNING, rel, 1,
                 "the file starts with a UTF-8 byte order mark (read past it; some JSON readers "
                 "refuse it)");
    text += 3, len -= 3;
    c.text = text, c.len = len;
  }
  json_error_t e;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
  if (!root) {
    findings_add(f, "JSON_INVALID", SEV_ERROR, rel, e.line > 0 ? (uint32_t)e.line : 0,
                 "not valid JSON: %s (column %d)", e.text, e.column);
    return;
  }
  if (!json_is_object(root)) {
    findings_add(f, "JSON_INVALID", SEV_ERROR, rel, 1, "the top level is not a JSON object");
    json_decref(root);
    return;
  }
  j->root = root;
  require_string(&c, root, "author");
  require_string(&c, root, "github_id");
  require_string(&c, root, "name");
  if (require_string(&c, root, "date") == 0 &&
      !valid_date(json_string_value(json_object_get(root, "date"))))
    bad(&c, "date", "field \"%s\" is not a date (YYYY-MM-DD, optionally with a time)%s", "");
  int r = get_number(&c, root, "val_bpb", "", 0, 20, &j->val_bpb);
  j->val_bpb_key = "val_bpb";
  if (r == 0 && get_number(&c, root, "mean_val_bpb", "", 0, 20, &j->val_bpb) == 1) {
    bad(&c, "val_bpb", "required field \"%s\" is missing%s", "; mean_val_bpb is read in its place");
    j->val_bpb_key = "mean_val_bpb";
    r = 1;
  } else if (r == 0) {
    bad(&c, "val_bpb", "required field \"%s\" is missing%s", "");
  }
  j->has_val_bpb = r == 1;
  j->has_val_loss = get_number(&c, root, "val_loss", "", 0, 100, &j->val_loss) == 1;
  const char *pb[] = {j->val_bpb_key}, *pl[] = {"val_loss"};
  if (j->has_val_bpb) j->val_bpb_dec = claim_decimals(text, len, pb, 1, j->val_bpb);
  if (j->has_val_loss) j->val_loss_dec = claim_decimals(text, len, pl, 1, j->val_loss);
  j->has_bytes_total = get_count(&c, root, "bytes_total", "", &j->bytes_total) == 1;
  j->has_bytes_code = get_count(&c, root, "bytes_code", "", &j->bytes_code) == 1;
  json_t *t = json_object_get(root, "track");
  if (t && !json_is_string(t)) {
    bad(&c, "track", "field \"%s\" must be a string%s", "");
  } else if (t) {
    j->has_track = 1;
    snprintf(j->track, sizeof j->track, "%s", json_string_value(t));
  }
  read_seeds(&c, root, j);
  read_seed_results(&c, root, "seed_results", j);
}

void sub_json_free(sub_json *j) {
  free(j->rel);
  json_decref(j->root);
  free(j->seeds);
  free(j->claims);
  memset(j, 0, sizeof *j);
}
