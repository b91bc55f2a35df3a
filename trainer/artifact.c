/* The model artifact container (format in artifact.h). */
#include "trainer/artifact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/le.h"
#include "common/challenge.h"
#include "common/fileio.h"
#include "common/sha256.h"

#define RECORD_FIXED_BYTES 14 /* name length, kind, dtype, ndim, reserved, rows, cols */

/* ---- little-endian writing ---- */

typedef struct wbuf {
  uint8_t *p;
  size_t len, cap;
} wbuf;

static void put_bytes(wbuf *w, const void *src, size_t n) {
  memcpy(w->p + w->len, src, n);
  w->len += n;
}
static void put_u8(wbuf *w, uint8_t v) { w->p[w->len++] = v; }
static void put_le_n(wbuf *w, uint64_t v, int n) {
  le_put(w->p + w->len, v, n);
  w->len += (size_t)n;
}
static void put_u16(wbuf *w, uint16_t v) { put_le_n(w, v, 2); }
static void put_u32(wbuf *w, uint32_t v) { put_le_n(w, v, 4); }
static void put_u64(wbuf *w, uint64_t v) { put_le_n(w, v, 8); }
static void put_f32(wbuf *w, float x) {
  le_put_f32(w->p + w->len, x);
  w->len += 4;
}

static uint64_t record_data_bytes(quant_kind k, uint64_t rows, uint64_t numel) {
  switch (k) {
    case QUANT_INT8_ROW: return 2 * rows + numel;
    case QUANT_INT8_TENSOR: return 4 + numel;
    case QUANT_F32: return 4 * numel;
    case QUANT_F16: return 2 * numel;
  }
  return 0;
}

static void put_config(wbuf *w, const gpt_config *c) {
  put_u32(w, (uint32_t)c->vocab_size);
  put_u32(w, (uint32_t)c->num_layers);
  put_u32(w, (uint32_t)c->model_dim);
  put_u32(w, (uint32_t)c->num_heads);
  put_u32(w, (uint32_t)c->num_kv_heads);
  put_u32(w, (uint32_t)c->mlp_mult);
  put_u32(w, (uint32_t)c->seq_len);
  put_f32(w, c->rope_base);
  put_f32(w, c->logit_softcap);
  put_f32(w, c->qk_gain_init);
  put_f32(w, c->tied_embed_init_std);
}

static void put_record(wbuf *w, const quant_tensor *t) {
  size_t L = strlen(t->name);
  put_u16(w, (uint16_t)L);
  put_bytes(w, t->name, L);
  put_u8(w, (uint8_t)t->kind);
  put_u8(w, (uint8_t)t->dtype);
  put_u8(w, (uint8_t)t->ndim);
  put_u8(w, 0);
  put_u32(w, t->rows);
  put_u32(w, t->cols);
  size_t n = (size_t)t->numel;
  switch (t->kind) {
    case QUANT_INT8_ROW:
      for (uint32_t r = 0; r < t->rows; r++) put_u16(w, t->scale_f16[r]);
      put_bytes(w, t->q, n);
      break;
    case QUANT_INT8_TENSOR:
      put_f32(w, t->scale_f32);
      put_bytes(w, t->q, n);
      break;
    case QUANT_F32:
      for (size_t i = 0; i < n; i++) put_f32(w, t->f32[i]);
      break;
    case QUANT_F16:
      for (size_t i = 0; i < n; i++) put_u16(w, t->f16[i]);
      break;
  }
}

int artifact_encode(const quant_model *m, uint8_t **out, size_t *len, pg_error *err) {
  uint64_t total = ARTIFACT_HEADER_BYTES;
  for (int i = 0; i < m->n_tensors; i++) {
    const quant_tensor *t = &m->tensors[i];
    size_t L = strlen(t->name);
    if (L < 1 || L > ARTIFACT_NAME_MAX)
      return pg_fail(err, t->name, -1, "tensor name length %zu outside 1..%d", L,
                     ARTIFACT_NAME_MAX);
    total += RECORD_FIXED_BYTES + L + record_data_bytes(t->kind, t->rows, t->numel);
  }
  wbuf w = {.p = malloc((size_t)total), .cap = (size_t)total};
  if (!w.p) return pg_fail(err, "", -1, "out of memory for a %llu-byte artifact",
                           (unsigned long long)total);
  put_bytes(&w, ARTIFACT_MAGIC, 8);
  put_u32(&w, ARTIFACT_VERSION);
  put_u32(&w, ARTIFACT_HEADER_BYTES);
  put_u64(&w, total);
  put_config(&w, &m->cfg);
  put_u32(&w, (uint32_t)m->n_tensors);
  for (int i = 0; i < m->n_tensors; i++) put_record(&w, &m->tensors[i]);
  *out = w.p;
  *len = w.len;
  return 0;
}

int artifact_compress(const uint8_t *buf, size_t len, uint8_t **out, size_t *out_len,
                      pg_error *err) {
  uLongf cap = compressBound((uLong)len);
  uint8_t *z = malloc(cap);
  if (!z) return pg_fail(err, "", -1, "out of memory compressing %zu bytes", len);
  /* compress2 = deflateInit(level): window 15, memLevel 8, default strategy,
   * the parameters of Python's zlib.compress(b, 9). */
  int rc = compress2(z, &cap, buf, (uLong)len, 9);
  if (rc != Z_OK) {
    free(z);
    return pg_fail(err, "", -1, "zlib compress failed (%d)", rc);
  }
  *out = z;
  *out_len = cap;
  return 0;
}

uint64_t artifact_payload_bound(const gpt_layout *l) {
  uint64_t b = ARTIFACT_HEADER_BYTES;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    uint64_t worst = record_data_bytes(QUANT_F32, (uint64_t)t->rows, t->numel);
    uint64_t rowq = record_data_bytes(QUANT_INT8_ROW, (uint64_t)t->rows, t->numel);
    b += RECORD_FIXED_BYTES + ARTIFACT_NAME_MAX + (rowq > worst ? rowq : worst);
  }
  return b;
}

/* ---- bounded decompression ---- */

static const char *zmsg(const z_stream *s, int rc) {
  return s->msg ? s->msg : rc == Z_BUF_ERROR ? "unexpected end" : "error";
}


/* Inflate until out is full or the stream ends. Returns the inflate code
 * (Z_OK: out full, Z_STREAM_END: done) or -1 with err set. */
static int inflate_into(z_stream *s, uint8_t *out, size_t cap, const char *name, pg_error *err) {
  s->next_out = out;
  s->avail_out = (uInt)cap;
  while (s->avail_out > 0) {
    int rc = inflate(s, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) return Z_STREAM_END;
    if (rc == Z_BUF_ERROR && s->avail_in == 0)
      return pg_fail(err, name, (long long)s->total_in,
                     "truncated zlib stream: input ends after %lu decompressed bytes",
                     s->total_out);
    if (rc != Z_OK)
      return pg_fail(err, name, (long long)s->total_in, "corrupt zlib stream: %s", zmsg(s, rc));
  }
  return Z_OK;
}

static int check_header(const uint8_t *h, const gpt_layout *l, const char *name,
                        uint64_t *payload, pg_error *err);

/* The whole decompressed payload, refusing any byte beyond its promise. */
static int inflate_payload(const uint8_t *buf, size_t len, const char *name, const gpt_layout *l,
                           uint8_t **out, uint64_t *out_len, pg_error *err) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit(&s) != Z_OK) return pg_fail(err, name, -1, "zlib inflateInit failed");
  s.next_in = (Bytef *)(uintptr_t)buf;
  s.avail_in = (uInt)len;
  uint8_t head[ARTIFACT_HEADER_BYTES];
  uint8_t *p = NULL;
  uint64_t promised = 0;
  int rc = inflate_into(&s, head, sizeof head, name, err);
  if (rc == Z_STREAM_END)
    rc = pg_fail(err, name, (long long)s.total_in,
                 "zlib stream ends after %lu bytes, inside the %d-byte header", s.total_out,
                 ARTIFACT_HEADER_BYTES);
  if (rc < 0 || check_header(head, l, name, &promised, err)) goto fail;
  /* one byte of margin: a stream that fills it says more than it promised */
  p = malloc((size_t)promised + 1);
  if (!p) {
    pg_fail(err, name, -1, "out of memory for a %llu-byte payload", (unsigned long long)promised);
    goto fail;
  }
  memcpy(p, head, sizeof head);
  rc = inflate_into(&s, p + sizeof head, (size_t)(promised - sizeof head) + 1, name, err);
  if (rc < 0) goto fail;
  if (rc != Z_STREAM_END || s.total_out != promised) {
    if (s.total_out > promised)
      pg_fail(err, name, (long long)s.total_in,
              "zlib stream yields more than the %llu bytes the header promises",
              (unsigned long long)promised);
    else
      pg_fail(err, name, (long long)s.total_in,
              "zlib stream ends after %lu bytes; the header promises %llu", s.total_out,
              (unsigned long long)promised);
    goto fail;
  }
  if (s.total_in != len) {
    pg_fail(err, name, (long long)s.total_in, "%llu trailing bytes after the zlib stream",
            (unsigned long long)(len - s.total_in));
    goto fail;
  }
  inflateEnd(&s);
  *out = p;
  *out_len = promised;
  return 0;
fail:
  inflateEnd(&s);
  free(p);
  return -1;
}

/* ---- payload validation ---- */

static int cfg_field_i(int got, int want, const char *field, const char *name, long long off,
                       pg_error *err) {
  if (got == want) return 0;
  return pg_fail(err, name, -1, "at decompressed byte %lld: %s is %d, the model's is %d", off,
                 field, got, want);
}

static int cfg_field_f(float got, float want, const char *field, const char *name, long long off,
                       pg_error *err) {
  if (memcmp(&got, &want, 4) == 0) return 0;
  return pg_fail(err, name, -1, "at decompressed byte %lld: %s is %g, the model's is %g", off,
                 field, (double)got, (double)want);
}

static int check_header(const uint8_t *h, const gpt_layout *l, const char *name,
                        uint64_t *payload, pg_error *err) {
  if (memcmp(h, ARTIFACT_MAGIC, 8))
    return pg_fail(err, name, -1, "at decompressed byte 0: not a pgolf int8 artifact (bad magic)");
  uint32_t version = le_u32(h + 8), hsize = le_u32(h + 12);
  if (version != ARTIFACT_VERSION)
    return pg_fail(err, name, -1, "at decompressed byte 8: format version %u, this pgolf reads %d",
                   version, ARTIFACT_VERSION);
  if (hsize != ARTIFACT_HEADER_BYTES)
    return pg_fail(err, name, -1, "at decompressed byte 12: header size %u, expected %d", hsize,
                   ARTIFACT_HEADER_BYTES);
  uint64_t promised = le_u64(h + 16), bound = artifact_payload_bound(l);
  if (promised < ARTIFACT_HEADER_BYTES || promised > bound)
    return pg_fail(err, name, -1,
                   "at decompressed byte 16: payload size %llu is outside [%d, %llu] for this "
                   "model",
                   (unsigned long long)promised, ARTIFACT_HEADER_BYTES,
                   (unsigned long long)bound);
  const gpt_config *c = &l->cfg;
  const int ints[7] = {c->vocab_size, c->num_layers, c->model_dim, c->num_heads,
                       c->num_kv_heads, c->mlp_mult, c->seq_len};
  static const char *int_names[7] = {"vocab_size", "num_layers", "model_dim", "num_heads",
                                     "num_kv_heads", "mlp_mult", "seq_len"};
  for (int i = 0; i < 7; i++)
    if (cfg_field_i((int)le_u32(h + 24 + 4 * i), ints[i], int_names[i], name, 24 + 4 * i, err))
      return -1;
  const float fl[4] = {c->rope_base, c->logit_softcap, c->qk_gain_init, c->tied_embed_init_std};
  static const char *fl_names[4] = {"rope_base", "logit_softcap", "qk_gain_init",
                                    "tied_embed_init_std"};
  for (int i = 0; i < 4; i++)
    if (cfg_field_f(le_f32(h + 52 + 4 * i), fl[i], fl_names[i], name, 52 + 4 * i, err)) return -1;
  uint32_t n = le_u32(h + 68);
  if (n != (uint32_t)l->n_tensors)
    return pg_fail(err, name, -1, "at decompressed byte 68: %u tensors, the model has %d", n,
                   l->n_tensors);
  *payload = promised;
  return 0;
}

typedef struct rcur {
  const uint8_t *p;
  uint64_t len, off;
  const char *name;
  pg_error *err;
} rcur;

static int need(rcur *c, uint64_t n, const char *what) {
  if (n <= c->len - c->off) return 0;
  return pg_fail(c->err, c->name, -1,
                 "at decompressed byte %llu: %s needs %llu bytes, %llu are left",
                 (unsigned long long)c->off, what, (unsigned long long)n,
                 (unsigned long long)(c->len - c->off));
}

static int bad(rcur *c, uint64_t off, const char *tensor, const char *fmt, const char *detail) {
  return pg_fail(c->err, c->name, -1, "at decompressed byte %llu: tensor %s: %s%s",
                 (unsigned long long)off, tensor, fmt, detail);
}

static int read_values(rcur *c, quant_tensor *t) {
  size_t n = (size_t)t->numel;
  const uint8_t *p = c->p + c->off;
  char detail[96];
  if (t->kind == QUANT_INT8_ROW) {
    t->scale_f16 = malloc((size_t)t->rows * 2 + 1);
    t->q = malloc(n + 1);
    if (!t->scale_f16 || !t->q) return pg_fail(c->err, c->name, -1, "out of memory");
    for (uint32_t r = 0; r < t->rows; r++) {
      t->scale_f16[r] = le_u16(p + 2 * r);
      float s = quant_f16_to_float(t->scale_f16[r]);
      if (!isfinite(s)) {
        snprintf(detail, sizeof detail, " (row %u)", r);
        return bad(c, c->off + 2 * r, t->name, "scale is not finite", detail);
      }
    }
    memcpy(t->q, p + 2 * (size_t)t->rows, n);
  } else if (t->kind == QUANT_INT8_TENSOR) {
    t->q = malloc(n + 1);
    if (!t->q) return pg_fail(c->err, c->name, -1, "out of memory");
    t->scale_f32 = le_f32(p);
    if (!isfinite(t->scale_f32)) return bad(c, c->off, t->name, "scale is not finite", "");
    memcpy(t->q, p + 4, n);
  } else if (t->kind == QUANT_F32) {
    t->f32 = malloc(4 * n + 1);
    if (!t->f32) return pg_fail(c->err, c->name, -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
      t->f32[i] = le_f32(p + 4 * i);
      if (!isfinite(t->f32[i])) {
        snprintf(detail, sizeof detail, " (value %zu)", i);
        return bad(c, c->off + 4 * i, t->name, "value is not finite", detail);
      }
    }
  } else {
    t->f16 = malloc(2 * n + 1);
    if (!t->f16) return pg_fail(c->err, c->name, -1, "out of memory");
    for (size_t i = 0; i < n; i++) {
      t->f16[i] = le_u16(p + 2 * i);
      if ((t->f16[i] & 0x7c00) == 0x7c00) {
        snprintf(detail, sizeof detail, " (value %zu)", i);
        return bad(c, c->off + 2 * i, t->name, "value is not finite", detail);
      }
    }
  }
  c->off += record_data_bytes(t->kind, t->rows, t->numel);
  return 0;
}

static int read_record(rcur *c, const gpt_tensor *g, quant_tensor *t) {
  uint64_t start = c->off;
  if (need(c, 2, "a tensor name length")) return -1;
  uint16_t L = le_u16(c->p + c->off);
  if (L < 1 || L > ARTIFACT_NAME_MAX)
    return pg_fail(c->err, c->name, -1,
                   "at decompressed byte %llu: tensor name length %u outside 1..%d (expected %s)",
                   (unsigned long long)start, L, ARTIFACT_NAME_MAX, g->name);
  c->off += 2;
  if (need(c, (uint64_t)L + 12, "a tensor record")) return -1;
  memcpy(t->name, c->p + c->off, L);
  t->name[L] = 0;
  if (strlen(t->name) != L || strcmp(t->name, g->name)) {
    char shown[ARTIFACT_NAME_MAX + 1];
    for (int i = 0; i < L; i++) {
      unsigned char ch = (unsigned char)c->p[c->off + (size_t)i];
      shown[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    shown[L] = 0;
    return pg_fail(c->err, c->name, -1,
                   "at decompressed byte %llu: tensor '%s' where the model has '%s'",
                   (unsigned long long)c->off, shown, g->name);
  }
  c->off += L;
  const uint8_t *f = c->p + c->off;
  uint8_t kind = f[0], dtype = f[1], ndim = f[2], reserved = f[3];
  uint32_t rows = le_u32(f + 4), cols = le_u32(f + 8);
  char detail[96];
  if (kind > QUANT_F16) {
    snprintf(detail, sizeof detail, " %u", kind);
    return bad(c, c->off, g->name, "unknown kind", detail);
  }
  if (dtype > QUANT_DTYPE_BF16) {
    snprintf(detail, sizeof detail, " %u", dtype);
    return bad(c, c->off + 1, g->name, "unknown dtype", detail);
  }
  if (reserved) return bad(c, c->off + 3, g->name, "reserved byte is not 0", "");
  if (ndim != g->ndim || rows != (uint32_t)g->rows || cols != (uint32_t)g->cols) {
    snprintf(detail, sizeof detail, " %u-D [%u, %u], the model's is %d-D [%d, %d]", ndim, rows,
             cols, g->ndim, g->rows, g->cols);
    return bad(c, c->off + 2, g->name, "shape", detail);
  }
  if (kind == QUANT_INT8_ROW && ndim != 2)
    return bad(c, c->off, g->name, "per-row int8 needs a 2-D tensor", "");
  c->off += 12;
  t->kind = (quant_kind)kind;
  t->dtype = (quant_dtype)dtype;
  t->ndim = ndim;
  t->rows = rows;
  t->cols = cols;
  t->numel = (uint64_t)rows * cols;
  if (need(c, record_data_bytes(t->kind, rows, t->numel), "the tensor's values")) return -1;
  return read_values(c, t);
}

static uint64_t payload_bytes_of(const quant_tensor *t) {
  return record_data_bytes(t->kind, t->rows, t->numel);
}

int artifact_parse(const uint8_t *buf, size_t len, const char *name, const gpt_layout *l,
                   quant_model *m, pg_error *err) {
  memset(m, 0, sizeof *m);
  uint8_t *p = NULL;
  uint64_t plen = 0;
  if (inflate_payload(buf, len, name, l, &p, &plen, err)) return -1;
  m->cfg = l->cfg;
  m->tensors = calloc((size_t)l->n_tensors, sizeof *m->tensors);
  if (!m->tensors) {
    free(p);
    return pg_fail(err, name, -1, "out of memory");
  }
  m->n_tensors = l->n_tensors;
  rcur c = {.p = p, .len = plen, .off = ARTIFACT_HEADER_BYTES, .name = name, .err = err};
  for (int i = 0; i < l->n_tensors; i++) {
    if (read_record(&c, &l->tensors[i], &m->tensors[i])) goto fail;
    const quant_tensor *t = &m->tensors[i];
    m->payload_bytes += payload_bytes_of(t);
    m->baseline_bytes += t->numel * (t->dtype == QUANT_DTYPE_BF16 ? 2 : 4);
  }
  if (c.off != plen) {
    pg_fail(err, name, -1, "at decompressed byte %llu: %llu bytes after the last tensor",
            (unsigned long long)c.off, (unsigned long long)(plen - c.off));
    goto fail;
  }
  free(p);
  return 0;
fail:
  free(p);
  quant_model_free(m);
  return -1;
}

int artifact_read(const char *path, const gpt_layout *l, quant_model *m, pg_error *err) {
  uint8_t *buf;
  size_t len;
  if (file_read_all(path, ARTIFACT_MAX_FILE_BYTES, &buf, &len, err)) return -1;
  int rc = artifact_parse(buf, len, path, l, m, err);
  free(buf);
  return rc;
}

void artifact_account(uint64_t code_bytes, uint64_t model_bytes, artifact_accounting *a) {
  a->code_bytes = code_bytes;
  a->model_bytes = model_bytes;
  a->total_bytes = code_bytes + model_bytes;
  a->limit = (uint64_t)CHALLENGE_SIZE_LIMIT_BYTES;
  a->fits = a->total_bytes <= a->limit;
}

int artifact_export(const char *path, const gpt_layout *l, const float *flat,
                    const quant_dtype *dtypes, uint64_t code_bytes, artifact_info *info,
                    pg_error *err) {
  quant_model m;
  uint8_t *raw = NULL, *z = NULL;
  size_t raw_len = 0, z_len = 0;
  memset(info, 0, sizeof *info);
  if (quant_model_build(&m, l, flat, dtypes, err)) return -1;
  int rc = -1;
  if (artifact_encode(&m, &raw, &raw_len, err) || artifact_compress(raw, raw_len, &z, &z_len, err))
    goto done;
  if (file_write_atomic(path, z, z_len, 0644, err)) goto done;
  uint8_t d[SHA256_LEN];
  sha256_buf(z, z_len, d);
  sha256_hex(d, info->sha256);
  info->payload_bytes = m.payload_bytes;
  info->baseline_bytes = m.baseline_bytes;
  info->raw_bytes = raw_len;
  artifact_account(code_bytes, z_len, &info->acct);
  rc = 0;
done:
  free(raw);
  free(z);
  quant_model_free(&m);
  return rc;
}

int artifact_load(const char *path, const gpt_layout *l, float *flat, pg_error *err) {
  quant_model m;
  if (artifact_read(path, l, &m, err)) return -1;
  int rc = quant_model_dequantize(&m, l, flat, err);
  quant_model_free(&m);
  return rc;
}

void artifact_log_serialized(const artifact_info *info, char *buf, size_t cap) {
  double ratio = (double)info->baseline_bytes /
                 (double)(info->payload_bytes ? info->payload_bytes : 1);
  snprintf(buf, cap, "Serialized model int8+zlib: %llu bytes (payload:%llu raw:%llu payload_ratio:%.2fx)",
           (unsigned long long)info->acct.model_bytes, (unsigned long long)info->payload_bytes,
           (unsigned long long)info->raw_bytes, ratio);
}

void artifact_log_total(const artifact_info *info, char *buf, size_t cap) {
  snprintf(buf, cap, "Total submission size int8+zlib: %llu bytes",
           (unsigned long long)info->acct.total_bytes);
}
