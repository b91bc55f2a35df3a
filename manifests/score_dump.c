/* Score dumps: validating reader and streaming atomic writer (format in
 * score_dump.h). */
#include "manifests/score_dump.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/le.h"

/* ---- reading ---- */

uint64_t score_dump_record_offset(const score_dump *d, uint64_t i) {
  return d->header_bytes + i * SCORE_DUMP_RECORD_BYTES;
}

uint64_t score_dump_probe_offset(const score_dump *d, uint64_t j) {
  return score_dump_record_offset(d, d->n_records) + j * d->probe_bytes;
}

/* Bytes [from, to) of the header must be zero (reserved). */
static int check_reserved(const uint8_t *buf, unsigned from, unsigned to, const char *name,
                          pg_error *err) {
  for (unsigned i = from; i < to; i++)
    if (buf[i]) return pg_fail(err, name, i, "reserved header byte is %u, must be 0", buf[i]);
  return 0;
}

/* Version 2's fields after the common 32 bytes: T and the chain head. */
static int parse_v2_fields(const uint8_t *buf, const char *name, score_dump *d, pg_error *err) {
  d->seq_len = le_u32(buf + 32);
  if (d->seq_len == 0)
    return pg_fail(err, name, 32, "sequence length 0 (must be >= 1; 1 when every target is "
                   "scored)");
  if (check_reserved(buf, 36, 40, name, err)) return -1;
  memcpy(d->chain_head, buf + 40, SCORE_DUMP_CHAIN_BYTES);
  for (unsigned i = 0; i < SCORE_DUMP_CHAIN_BYTES; i++) d->has_chain |= d->chain_head[i] != 0;
  return check_reserved(buf, 40 + SCORE_DUMP_CHAIN_BYTES, SCORE_DUMP_HEADER_BYTES, name, err);
}

/* The header: magic, a known version, and that version's fields. */
static int parse_header(const uint8_t *buf, size_t len, const char *name, score_dump *d,
                        pg_error *err) {
  if (len < SCORE_DUMP_V1_HEADER_BYTES)
    return pg_fail(err, name, (long long)len, "truncated header: %zu bytes, a score dump starts "
                   "with at least %u", len, SCORE_DUMP_V1_HEADER_BYTES);
  if (memcmp(buf, SCORE_DUMP_MAGIC, 4) != 0)
    return pg_fail(err, name, 0, "bad magic: not a score dump (expected \"PGSD\")");
  d->version = le_u32(buf + 4);
  if (d->version != 1 && d->version != 2)
    return pg_fail(err, name, 4, "unsupported version %u (this pgolf reads 1 and 2)",
                   d->version);
  d->header_bytes = d->version == 1 ? SCORE_DUMP_V1_HEADER_BYTES : SCORE_DUMP_HEADER_BYTES;
  if (len < d->header_bytes)
    return pg_fail(err, name, (long long)len, "truncated header: %zu bytes, a version %u score "
                   "dump starts with %u", len, d->version, d->header_bytes);
  d->vocab_size = le_u32(buf + 8);
  if (d->vocab_size == 0 || d->vocab_size > SCORE_DUMP_MAX_VOCAB)
    return pg_fail(err, name, 8, "absurd vocab size %u (must be 1 .. %u)", d->vocab_size,
                   SCORE_DUMP_MAX_VOCAB);
  d->flags = le_u32(buf + 12);
  if (d->flags & ~SCORE_DUMP_KNOWN_FLAGS)
    return pg_fail(err, name, 12, "unknown flags 0x%08x", d->flags);
  d->n_records = le_u64(buf + 16);
  d->n_probes = le_u64(buf + 24);
  d->probe_bytes = SCORE_DUMP_PROBE_HEAD_BYTES + 8ull * d->vocab_size;
  if (d->version == 1) return check_reserved(buf, 32, SCORE_DUMP_V1_HEADER_BYTES, name, err);
  return parse_v2_fields(buf, name, d, err);
}

/* The exact size the counts imply, without overflowing. */
static int check_size(const score_dump *d, size_t len, const char *name, pg_error *err) {
  uint64_t body = len - d->header_bytes;
  if (d->n_records > body / SCORE_DUMP_RECORD_BYTES) {
    uint64_t whole = body / SCORE_DUMP_RECORD_BYTES;
    return pg_fail(err, name, (long long)score_dump_record_offset(d, whole),
                   "truncated record %llu: the header counts %llu records, the file holds %llu "
                   "bytes", (unsigned long long)whole, (unsigned long long)d->n_records,
                   (unsigned long long)len);
  }
  uint64_t after = body - d->n_records * SCORE_DUMP_RECORD_BYTES;
  if (d->n_probes > after / d->probe_bytes) {
    uint64_t whole = after / d->probe_bytes;
    return pg_fail(err, name, (long long)score_dump_probe_offset(d, whole),
                   "truncated probe %llu: the header counts %llu probes of %llu bytes",
                   (unsigned long long)whole, (unsigned long long)d->n_probes,
                   (unsigned long long)d->probe_bytes);
  }
  uint64_t extra = after - d->n_probes * d->probe_bytes;
  if (extra)
    return pg_fail(err, name, (long long)(len - extra),
                   "count mismatch: %llu bytes after %llu records and %llu probes",
                   (unsigned long long)extra, (unsigned long long)d->n_records,
                   (unsigned long long)d->n_probes);
  return 0;
}

static int check_record(const score_dump *d, uint64_t i, const char *name, pg_error *err) {
  uint64_t off = score_dump_record_offset(d, i);
  const uint8_t *p = d->data + off;
  uint32_t target = le_u32(p + 8), zero = le_u32(p + 12);
  double nll = le_f64(p + 16);
  if (target >= d->vocab_size)
    return pg_fail(err, name, (long long)(off + 8), "record %llu: target id %u >= vocab size %u",
                   (unsigned long long)i, target, d->vocab_size);
  if (zero)
    return pg_fail(err, name, (long long)(off + 12), "record %llu: reserved field is %u, must be 0",
                   (unsigned long long)i, zero);
  if (isnan(nll) || isinf(nll) || nll < 0)
    return pg_fail(err, name, (long long)(off + 16), "record %llu: nll %g is not a finite "
                   "non-negative number of nats", (unsigned long long)i, nll);
  return 0;
}

static int check_probe_head(const score_dump *d, uint64_t j, const char *name, pg_error *err) {
  uint64_t off = score_dump_probe_offset(d, j);
  const uint8_t *p = d->data + off;
  uint32_t target = le_u32(p + 8), vocab = le_u32(p + 12);
  if (target >= d->vocab_size)
    return pg_fail(err, name, (long long)(off + 8), "probe %llu: target id %u >= vocab size %u",
                   (unsigned long long)j, target, d->vocab_size);
  if (vocab != d->vocab_size)
    return pg_fail(err, name, (long long)(off + 12), "probe %llu: vocab size %u, the header says "
                   "%u", (unsigned long long)j, vocab, d->vocab_size);
  return 0;
}

int score_dump_parse(const uint8_t *buf, size_t len, const char *name, score_dump *d,
                     pg_error *err) {
  memset(d, 0, sizeof *d);
  if (parse_header(buf, len, name, d, err) || check_size(d, len, name, err)) return -1;
  d->data = buf;
  d->size = len;
  for (uint64_t i = 0; i < d->n_records; i++)
    if (check_record(d, i, name, err)) return -1;
  for (uint64_t j = 0; j < d->n_probes; j++)
    if (check_probe_head(d, j, name, err)) return -1;
  return 0;
}

int score_dump_open(const char *path, score_dump *d, pg_error *err) {
  mapped_file m;
  if (file_map(path, &m, err)) return -1;
  if (score_dump_parse(m.data, m.size, path, d, err)) {
    file_unmap(&m);
    memset(d, 0, sizeof *d);
    return -1;
  }
  d->map = m;
  return 0;
}

void score_dump_close(score_dump *d) {
  if (d->map.data) file_unmap(&d->map);
  memset(d, 0, sizeof *d);
}

score_record score_dump_record(const score_dump *d, uint64_t i) {
  const uint8_t *p = d->data + score_dump_record_offset(d, i);
  score_record r = {le_u64(p), le_u32(p + 8), le_f64(p + 16)};
  return r;
}

score_probe score_dump_probe(const score_dump *d, uint64_t j) {
  const uint8_t *p = d->data + score_dump_probe_offset(d, j);
  score_probe r = {le_u64(p), le_u32(p + 8), le_u32(p + 12), p + SCORE_DUMP_PROBE_HEAD_BYTES};
  return r;
}

double score_probe_prob(const score_probe *p, uint32_t id) { return le_f64(p->probs + 8ull * id); }

/* ---- writing ---- */

struct score_dump_writer {
  char *path, *tmp;
  FILE *f;       /* the dump's temporary file: header, then records */
  FILE *probes;  /* probes kept aside until close (anonymous temp file) */
  uint32_t vocab_size, seq_len;
  uint64_t n_records, n_probes;
  uint8_t *probe_buf; /* 16 + 8V bytes */
};

void score_dump_writer_abort(score_dump_writer *w) {
  if (!w) return;
  if (w->f) fclose(w->f);
  if (w->probes) fclose(w->probes);
  if (w->tmp) unlink(w->tmp);
  free(w->path);
  free(w->tmp);
  free(w->probe_buf);
  free(w);
}

/* The version 2 header with the writer's counts so far and chain (NULL:
 * 32 zero bytes, no event log). */
static int write_header(const score_dump_writer *w, const uint8_t *chain) {
  uint8_t h[SCORE_DUMP_HEADER_BYTES] = {0};
  memcpy(h, SCORE_DUMP_MAGIC, 4);
  le_put_u32(h + 4, SCORE_DUMP_VERSION);
  le_put_u32(h + 8, w->vocab_size);
  le_put_u32(h + 12, 0);
  le_put_u64(h + 16, w->n_records);
  le_put_u64(h + 24, w->n_probes);
  le_put_u32(h + 32, w->seq_len);
  if (chain) memcpy(h + 40, chain, SCORE_DUMP_CHAIN_BYTES);
  return fwrite(h, 1, sizeof h, w->f) == sizeof h ? 0 : -1;
}

int score_dump_writer_open(score_dump_writer **out, const char *path, uint32_t vocab_size,
                           uint32_t seq_len, pg_error *err) {
  *out = NULL;
  if (vocab_size == 0 || vocab_size > SCORE_DUMP_MAX_VOCAB)
    return pg_fail(err, path, -1, "vocab size %u out of range 1 .. %u", vocab_size,
                   SCORE_DUMP_MAX_VOCAB);
  if (seq_len == 0)
    return pg_fail(err, path, -1, "sequence length 0 (must be >= 1; 1 when every target is "
                   "scored)");
  score_dump_writer *w = calloc(1, sizeof *w);
  if (!w) return pg_fail(err, path, -1, "out of memory");
  w->vocab_size = vocab_size;
  w->seq_len = seq_len;
  w->path = strdup(path);
  w->probe_buf = malloc(SCORE_DUMP_PROBE_HEAD_BYTES + 8ull * vocab_size);
  if (w->path) w->tmp = malloc(strlen(path) + 16);
  if (!w->path || !w->tmp || !w->probe_buf) {
    score_dump_writer_abort(w);
    return pg_fail(err, path, -1, "out of memory");
  }
  sprintf(w->tmp, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(w->tmp);
  if (fd < 0) {
    pg_fail_errno(err, path, "cannot create a temporary file");
    free(w->tmp);
    w->tmp = NULL;
    score_dump_writer_abort(w);
    return -1;
  }
  (void)fchmod(fd, 0644); /* mkstemp makes 0600; a dump is meant to be shared */
  w->f = fdopen(fd, "w+b");
  if (!w->f) close(fd);
  w->probes = tmpfile();
  if (!w->f || !w->probes || write_header(w, NULL)) {
    pg_fail_errno(err, path, "cannot start the score dump");
    score_dump_writer_abort(w);
    return -1;
  }
  *out = w;
  return 0;
}

int score_dump_writer_add(score_dump_writer *w, uint64_t position, uint32_t target, double nll,
                          pg_error *err) {
  if (target >= w->vocab_size)
    return pg_fail(err, w->path, -1, "record at position %llu: target id %u >= vocab size %u",
                   (unsigned long long)position, target, w->vocab_size);
  if (isnan(nll) || isinf(nll) || nll < 0)
    return pg_fail(err, w->path, -1, "record at position %llu: nll %g is not a finite "
                   "non-negative number of nats", (unsigned long long)position, nll);
  uint8_t r[SCORE_DUMP_RECORD_BYTES];
  le_put_u64(r, position);
  le_put_u32(r + 8, target);
  le_put_u32(r + 12, 0);
  le_put_f64(r + 16, nll);
  if (fwrite(r, 1, sizeof r, w->f) != sizeof r)
    return pg_fail_errno(err, w->path, "cannot write record %llu",
                         (unsigned long long)w->n_records);
  w->n_records++;
  return 0;
}

int score_dump_writer_add_probe(score_dump_writer *w, uint64_t position, uint32_t target,
                                const double *probs, pg_error *err) {
  if (target >= w->vocab_size)
    return pg_fail(err, w->path, -1, "probe at position %llu: target id %u >= vocab size %u",
                   (unsigned long long)position, target, w->vocab_size);
  uint8_t *b = w->probe_buf;
  le_put_u64(b, position);
  le_put_u32(b + 8, target);
  le_put_u32(b + 12, w->vocab_size);
  for (uint32_t i = 0; i < w->vocab_size; i++) le_put_f64(b + 16 + 8ull * i, probs[i]);
  size_t n = SCORE_DUMP_PROBE_HEAD_BYTES + 8ull * w->vocab_size;
  if (fwrite(b, 1, n, w->probes) != n)
    return pg_fail_errno(err, w->path, "cannot keep probe %llu", (unsigned long long)w->n_probes);
  w->n_probes++;
  return 0;
}

uint64_t score_dump_writer_records(const score_dump_writer *w) { return w->n_records; }

/* Append the kept probes after the records. */
static int copy_probes(score_dump_writer *w) {
  if (fflush(w->probes) || fseek(w->probes, 0, SEEK_SET)) return -1;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, w->probes)) > 0)
    if (fwrite(buf, 1, n, w->f) != n) return -1;
  return ferror(w->probes) ? -1 : 0;
}

static int sync_dir_of(const char *path) {
  char *copy = strdup(path);
  if (!copy) return -1;
  int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
  free(copy);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  close(fd);
  return rc;
}

int score_dump_writer_close(score_dump_writer *w, const uint8_t *chain_head, pg_error *err) {
  int rc = -1;
  if (copy_probes(w) || fseek(w->f, 0, SEEK_SET) || write_header(w, chain_head) || fflush(w->f) ||
      fsync(fileno(w->f))) {
    pg_fail_errno(err, w->path, "cannot finish the score dump");
    goto done;
  }
  if (fclose(w->f)) {
    w->f = NULL;
    pg_fail_errno(err, w->path, "cannot close the score dump");
    goto done;
  }
  w->f = NULL;
  if (rename(w->tmp, w->path)) {
    pg_fail_errno(err, w->path, "cannot rename %s into place", w->tmp);
    goto done;
  }
  free(w->tmp);
  w->tmp = NULL; /* renamed: nothing to remove */
  if (sync_dir_of(w->path)) {
    pg_fail_errno(err, w->path, "cannot sync the directory");
    goto done;
  }
  rc = 0;
done:
  score_dump_writer_abort(w);
  return rc;
}
