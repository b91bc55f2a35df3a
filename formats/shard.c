#include "formats/shard.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/grow.h"
#include "common/le.h"

static int check_header(const uint8_t *buf, size_t len, const char *name, shard *s,
                        pg_error *err) {
  if (len < SHARD_HEADER_BYTES)
    return pg_fail(err, name, (long long)len,
                   "file of %zu bytes is shorter than the %d-byte shard header", len,
                   SHARD_HEADER_BYTES);
  int32_t magic = le_i32(buf), version = le_i32(buf + 4), count = le_i32(buf + 8);
  if (magic != SHARD_MAGIC)
    return pg_fail(err, name, 0, "bad magic %ld (expected %d): not a token shard", (long)magic,
                   SHARD_MAGIC);
  if (version != SHARD_VERSION)
    return pg_fail(err, name, 4, "unsupported shard version %ld (expected %d)", (long)version,
                   SHARD_VERSION);
  if (count < 0) return pg_fail(err, name, 8, "negative token count %ld", (long)count);
  s->magic = (uint32_t)magic;
  s->version = (uint32_t)version;
  s->n_tokens = (uint64_t)count;
  return 0;
}

/* The size must match the header exactly: a short file is a truncated
 * download, a long one a different or corrupted format. Either way the
 * token count cannot be trusted. */
static int check_size(size_t len, const char *name, uint64_t n_tokens, pg_error *err) {
  uint64_t want = SHARD_HEADER_BYTES + 2 * n_tokens; /* n_tokens < 2^31: no overflow */
  uint64_t have = (uint64_t)len;
  if (have == want) return 0;
  if (have < want)
    return pg_fail(err, name, (long long)have,
                   "size mismatch: header says %llu tokens, so %llu bytes expected, but the "
                   "file has %llu (truncated by %llu bytes)",
                   (unsigned long long)n_tokens, (unsigned long long)want,
                   (unsigned long long)have, (unsigned long long)(want - have));
  return pg_fail(err, name, (long long)want,
                 "size mismatch: header says %llu tokens, so %llu bytes expected, but the "
                 "file has %llu (%llu trailing bytes)",
                 (unsigned long long)n_tokens, (unsigned long long)want, (unsigned long long)have,
                 (unsigned long long)(have - want));
}

static int check_vocab(const uint8_t *body, uint64_t n, uint32_t vocab, const char *name,
                       pg_error *err) {
  for (uint64_t i = 0; i < n; i++) {
    uint32_t t = (uint32_t)body[2 * i] | (uint32_t)body[2 * i + 1] << 8;
    if (t >= vocab)
      return pg_fail(err, name, (long long)(SHARD_HEADER_BYTES + 2 * i),
                     "token %u at index %llu is not below the vocabulary size %u", t,
                     (unsigned long long)i, vocab);
  }
  return 0;
}

int shard_parse(const uint8_t *buf, size_t len, const char *name, uint32_t vocab_size, shard *s,
                pg_error *err) {
  memset(s, 0, sizeof *s);
  shard tmp = {0};
  if (check_header(buf, len, name, &tmp, err) != 0) return -1;
  if (check_size(len, name, tmp.n_tokens, err) != 0) return -1;
  const uint8_t *body = buf + SHARD_HEADER_BYTES;
  if (vocab_size > 0 && check_vocab(body, tmp.n_tokens, vocab_size, name, err) != 0) return -1;
  tmp.tokens = (const uint16_t *)(const void *)body;
  *s = tmp;
  return 0;
}

int shard_open(const char *path, uint32_t vocab_size, shard *s, pg_error *err) {
  mapped_file m;
  memset(s, 0, sizeof *s);
  if (file_map(path, &m, err) != 0) return -1;
  if (shard_parse(m.data, m.size, path, vocab_size, s, err) != 0) {
    file_unmap(&m);
    return -1;
  }
  s->map = m;
  return 0;
}

void shard_close(shard *s) {
  file_unmap(&s->map);
  memset(s, 0, sizeof *s);
}

/* ---- listing a split ---- */

static int name_matches(const char *name, const char *prefix) {
  size_t n = strlen(name), p = strlen(prefix);
  return n >= p + 4 && strncmp(name, prefix, p) == 0 && strcmp(name + n - 4, ".bin") == 0;
}

static char *join_path(const char *dir, const char *name) {
  size_t d = strlen(dir);
  int slash = d > 0 && dir[d - 1] == '/';
  size_t cap = d + strlen(name) + 2;
  char *p = malloc(cap);
  if (p) snprintf(p, cap, "%s%s%s", dir, slash ? "" : "/", name);
  return p;
}

/* stat (not lstat): a data directory of symlinks to shards elsewhere is
 * common, and what matters is that the target is a regular file. */
static int is_regular(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int push_path(char ***v, size_t *n, size_t *cap, char *p) {
  if (PG_GROW(*v, *cap, *n + 1, 16)) return -1;
  (*v)[(*n)++] = p;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int shard_glob(const char *dir, const char *prefix, char ***paths, size_t *n, pg_error *err) {
  *paths = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return pg_fail_errno(err, dir, "cannot open directory");
  char **v = NULL;
  size_t cnt = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!name_matches(e->d_name, prefix)) continue;
    char *p = join_path(dir, e->d_name);
    if (p && !is_regular(p)) {
      free(p);
      continue;
    }
    if (!p || push_path(&v, &cnt, &cap, p) != 0) {
      free(p);
      closedir(d);
      shard_paths_free(v, cnt);
      return pg_fail(err, dir, -1, "out of memory");
    }
  }
  closedir(d);
  if (cnt == 0) {
    free(v);
    return pg_fail(err, dir, -1, "no shards match %s*.bin in this directory", prefix);
  }
  /* Sorting the full paths equals sorting the names: they share dir. */
  qsort(v, cnt, sizeof *v, cmp_str);
  *paths = v;
  *n = cnt;
  return 0;
}

void shard_paths_free(char **paths, size_t n) {
  if (!paths) return;
  for (size_t i = 0; i < n; i++) free(paths[i]);
  free(paths);
}
