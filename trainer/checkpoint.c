/* The checkpoint container: named typed arrays, a digest over the file. */
#include "trainer/checkpoint.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/le.h"
#include "common/fileio.h"
#include "common/sha256.h"

size_t ckpt_type_size(ckpt_type t) {
  switch (t) {
  case CKPT_BYTES: return 1;
  case CKPT_F32:
  case CKPT_U32: return 4;
  case CKPT_U64:
  case CKPT_F64: return 8;
  }
  return 0;
}

static int name_ok(const char *s, size_t n) {
  if (n == 0 || n > CKPT_MAX_NAME) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_' || ch == '.' || ch == '-';
    if (!ok) return 0;
  }
  return 1;
}

const ckpt_entry *ckpt_find(const checkpoint *c, const char *name) {
  for (size_t i = 0; i < c->n; i++)
    if (!strcmp(c->entries[i].name, name)) return &c->entries[i];
  return NULL;
}

/* Append an entry that takes ownership of data. */
static int push(checkpoint *c, const char *name, size_t name_len, ckpt_type t, uint64_t count,
                void *data, pg_error *err) {
  if (c->n == CKPT_MAX_ENTRIES) return pg_fail(err, "", -1, "checkpoint: more than %d entries", CKPT_MAX_ENTRIES);
  if (PG_GROW(c->entries, c->cap, c->n + 1, 16)) return pg_fail(err, "", -1, "out of memory");
  ckpt_entry *e = &c->entries[c->n++];
  memset(e, 0, sizeof *e);
  memcpy(e->name, name, name_len);
  e->type = t;
  e->count = count;
  e->data = data;
  return 0;
}

int ckpt_add(checkpoint *c, const char *name, ckpt_type t, const void *data, uint64_t count,
             pg_error *err) {
  size_t n = strlen(name), es = ckpt_type_size(t);
  if (!name_ok(name, n)) return pg_fail(err, "", -1, "checkpoint: invalid entry name \"%s\"", name);
  if (ckpt_find(c, name)) return pg_fail(err, "", -1, "checkpoint: duplicate entry \"%s\"", name);
  if (!es || count > CKPT_MAX_BYTES / es) return pg_fail(err, "", -1, "checkpoint: entry \"%s\" too large", name);
  size_t bytes = (size_t)count * es;
  void *copy = malloc(bytes ? bytes : 1);
  if (!copy) return pg_fail(err, "", -1, "out of memory");
  if (bytes) memcpy(copy, data, bytes);
  if (push(c, name, n, t, count, copy, err) != 0) {
    free(copy);
    return -1;
  }
  return 0;
}

static const char *type_name(ckpt_type t) {
  static const char *names[] = {"bytes", "f32", "u32", "u64", "f64"};
  return (unsigned)t < 5 ? names[t] : "?";
}

int ckpt_get(const checkpoint *c, const char *file, const char *name, ckpt_type t, uint64_t count,
             void *out, pg_error *err) {
  const ckpt_entry *e = ckpt_find(c, name);
  if (!e) return pg_fail(err, file, -1, "checkpoint entry \"%s\" missing", name);
  if (e->type != t || e->count != count)
    return pg_fail(err, file, -1, "checkpoint entry \"%s\": %llu x %s, expected %llu x %s", name,
                   (unsigned long long)e->count, type_name(e->type), (unsigned long long)count,
                   type_name(t));
  if (count) memcpy(out, e->data, (size_t)count * ckpt_type_size(t));
  return 0;
}

void ckpt_free(checkpoint *c) {
  for (size_t i = 0; i < c->n; i++) free(c->entries[i].data);
  free(c->entries);
  memset(c, 0, sizeof *c);
}

/* ---- bytes ---- */

/* Elements as little-endian bytes whatever the host order. */
static void put_elems(uint8_t *p, const ckpt_entry *e) {
  size_t es = ckpt_type_size(e->type);
  const uint8_t *d = e->data;
  for (uint64_t i = 0; i < e->count; i++) {
    uint64_t v = 0;
    if (es == 1) v = d[i];
    else if (es == 4) { uint32_t u; memcpy(&u, d + 4 * i, 4); v = u; }
    else memcpy(&v, d + 8 * i, 8);
    le_put(p + es * i, v, (int)es);
  }
}

static void get_elems(void *out, const uint8_t *p, ckpt_type t, uint64_t count) {
  size_t es = ckpt_type_size(t);
  uint8_t *d = out;
  for (uint64_t i = 0; i < count; i++) {
    uint64_t v = le_get(p + es * i, (int)es);
    if (es == 1) d[i] = (uint8_t)v;
    else if (es == 4) { uint32_t u = (uint32_t)v; memcpy(d + 4 * i, &u, 4); }
    else memcpy(d + 8 * i, &v, 8);
  }
}

int ckpt_serialize(const checkpoint *c, uint8_t **out, size_t *len, pg_error *err) {
  size_t total = 16 + SHA256_LEN;
  for (size_t i = 0; i < c->n; i++)
    total += 2 + strlen(c->entries[i].name) + 10 + (size_t)c->entries[i].count * ckpt_type_size(c->entries[i].type);
  uint8_t *b = malloc(total), *p = b;
  if (!b) return pg_fail(err, "", -1, "out of memory for a %zu-byte checkpoint", total);
  memcpy(p, CKPT_MAGIC, 8);
  le_put(p + 8, CKPT_VERSION, 4);
  le_put(p + 12, c->n, 4);
  p += 16;
  for (size_t i = 0; i < c->n; i++) {
    const ckpt_entry *e = &c->entries[i];
    size_t nl = strlen(e->name);
    le_put(p, nl, 2);
    memcpy(p + 2, e->name, nl);
    p += 2 + nl;
    p[0] = (uint8_t)e->type;
    p[1] = 0;
    le_put(p + 2, e->count, 8);
    p += 10;
    put_elems(p, e);
    p += (size_t)e->count * ckpt_type_size(e->type);
  }
  sha256_buf(b, (size_t)(p - b), p);
  *out = b;
  *len = total;
  return 0;
}

/* One entry at *off; every length is checked against what is left. */
static int parse_entry(const uint8_t *buf, size_t end, size_t *off, const char *name, checkpoint *c,
                       pg_error *err) {
  size_t o = *off;
  if (end - o < 2) return pg_fail(err, name, (long long)o, "checkpoint: truncated entry header");
  size_t nl = (size_t)le_get(buf + o, 2);
  if (!name_ok((const char *)buf + o + 2, nl > end - o - 2 ? 0 : nl))
    return pg_fail(err, name, (long long)o, "checkpoint: invalid entry name");
  char ename[CKPT_MAX_NAME + 1];
  memcpy(ename, buf + o + 2, nl);
  ename[nl] = 0;
  o += 2 + nl;
  if (end - o < 10) return pg_fail(err, name, (long long)o, "checkpoint: truncated entry header");
  ckpt_type t = (ckpt_type)buf[o];
  size_t es = buf[o] <= CKPT_F64 ? ckpt_type_size(t) : 0;
  if (!es || buf[o + 1] != 0) return pg_fail(err, name, (long long)o, "checkpoint: entry \"%s\": unknown type %u", ename, buf[o]);
  uint64_t count = le_get(buf + o + 2, 8);
  o += 10;
  if (count > (end - o) / es) return pg_fail(err, name, (long long)o, "checkpoint: entry \"%s\" runs past the end", ename);
  if (ckpt_find(c, ename)) return pg_fail(err, name, (long long)*off, "checkpoint: duplicate entry \"%s\"", ename);
  size_t bytes = (size_t)count * es;
  void *data = malloc(bytes ? bytes : 1);
  if (!data) return pg_fail(err, name, (long long)o, "out of memory");
  get_elems(data, buf + o, t, count);
  if (push(c, ename, nl, t, count, data, err) != 0) {
    free(data);
    return -1;
  }
  *off = o + bytes;
  return 0;
}

int ckpt_parse(const uint8_t *buf, size_t len, const char *name, checkpoint *c, pg_error *err) {
  memset(c, 0, sizeof *c);
  if (len < 16 + SHA256_LEN || memcmp(buf, CKPT_MAGIC, 8) != 0)
    return pg_fail(err, name, 0, "not a pgolf checkpoint (bad magic or too short)");
  uint8_t d[SHA256_LEN];
  size_t end = len - SHA256_LEN;
  sha256_buf(buf, end, d);
  if (memcmp(d, buf + end, SHA256_LEN) != 0)
    return pg_fail(err, name, (long long)end, "checkpoint digest mismatch: the file is corrupt");
  uint32_t version = (uint32_t)le_get(buf + 8, 4), n = (uint32_t)le_get(buf + 12, 4);
  if (version != CKPT_VERSION) return pg_fail(err, name, 8, "checkpoint version %u, expected %d", version, CKPT_VERSION);
  if (n > CKPT_MAX_ENTRIES) return pg_fail(err, name, 12, "checkpoint: %u entries, at most %d", n, CKPT_MAX_ENTRIES);
  size_t off = 16;
  for (uint32_t i = 0; i < n; i++)
    if (parse_entry(buf, end, &off, name, c, err) != 0) {
      ckpt_free(c);
      return -1;
    }
  if (off != end) {
    ckpt_free(c);
    return pg_fail(err, name, (long long)off, "checkpoint: %zu unexpected bytes after the last entry", end - off);
  }
  return 0;
}

int ckpt_write(const checkpoint *c, const char *path, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  if (ckpt_serialize(c, &buf, &len, err) != 0) return -1;
  int rc = file_write_atomic(path, buf, len, 0644, err);
  free(buf);
  return rc;
}

int ckpt_read(const char *path, checkpoint *c, pg_error *err) {
  uint8_t *buf = NULL;
  size_t len = 0;
  memset(c, 0, sizeof *c);
  if (file_read_all(path, CKPT_MAX_BYTES, &buf, &len, err) != 0) return -1;
  int rc = ckpt_parse(buf, len, path, c, err);
  free(buf);
  return rc;
}
