/* The official clean int8 export and its inverse (see quantize.h). */
#include "trainer/quantize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"

static uint32_t f32_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

static float f32_from_bits(uint32_t u) {
  float x;
  memcpy(&x, &u, 4);
  return x;
}

/* Round mantissa m right by `shift` bits, to nearest with ties to even. */
static uint32_t round_shift(uint32_t m, int shift) {
  uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return r + (rem > half || (rem == half && (r & 1)));
}

uint16_t quant_f16_from_float(float x) {
  uint32_t u = f32_bits(x);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7fffffff;
  if (a > 0x7f800000) return (uint16_t)(sign | 0x7e00 | ((a >> 13) & 0x3ff)); /* quiet NaN */
  if (a >= 0x47800000) return (uint16_t)(sign | 0x7c00); /* >= 65536: infinity */
  int e = (int)(a >> 23);
  uint32_t m = (a & 0x7fffff) | 0x800000;
  if (e >= 113) /* half normal; a carry may round up into the next binade or to infinity */
    return (uint16_t)(sign | ((((uint32_t)(e - 112)) << 10) + (round_shift(m, 13) - 0x400)));
  if (e < 102) return sign; /* below 2^-25: rounds to zero */
  /* subnormal half: units of 2^-24 */
  return (uint16_t)(sign | round_shift(m, 126 - e));
}

float quant_f16_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return f32_from_bits(sign | 0x7f800000 | (m << 13));
  if (e) return f32_from_bits(sign | ((e + 112) << 23) | (m << 13));
  /* subnormal (or zero): m * 2^-24, exact in float32 */
  float v = (float)m * 0x1p-24f;
  return sign ? -v : v;
}

/* torch's lerp as its CPU kernels compute it: one fused multiply-add. */
static float torch_lerp(float lo, float hi, float w) {
  float d = hi - lo;
  return fabsf(w) < 0.5f ? fmaf(w, d, lo) : fmaf(w - 1.0f, d, hi);
}

/* torch.quantile's rank: q (a float32 tensor) times n - 1 in double
 * (exact: both have at most 24 significant bits), lo = trunc, hi = ceil,
 * and the weight rank - lo cast to float32 for the lerp. Measured against
 * torch 2.15 on 3000 random rows and quantiles (a float32 rank disagrees
 * with torch on most of them). */
typedef struct quantile_rank {
  size_t lo, hi;
  float w;
} quantile_rank;

static quantile_rank rank_for(size_t n, float q) {
  double rank = (double)q * (double)(int64_t)(n - 1);
  quantile_rank r;
  r.lo = (size_t)(int64_t)rank;
  r.hi = (size_t)(int64_t)ceil(rank);
  r.w = (float)(rank - (double)(int64_t)r.lo);
  return r;
}

float quant_quantile_sorted(const float *sorted, size_t n, float q) {
  if (n == 0) return 0.0f;
  quantile_rank r = rank_for(n, q);
  return torch_lerp(sorted[r.lo], sorted[r.hi], r.w);
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

/* The k largest of |x| in ascending order into top[0..k). */
static void top_k_abs(const float *x, size_t n, size_t k, float *top) {
  size_t have = 0;
  for (size_t i = 0; i < n; i++) {
    float v = fabsf(x[i]);
    size_t j;
    if (have < k) {
      j = have++;
    } else if (v > top[0]) {
      j = 0;
      while (j + 1 < k && top[j + 1] < v) top[j] = top[j + 1], j++;
      top[j] = v;
      continue;
    } else {
      continue;
    }
    while (j > 0 && top[j - 1] > v) top[j] = top[j - 1], j--;
    top[j] = v;
  }
}

/* Sorting only what the quantile reads: with q close to 1 that is the top
 * few values of each row, so selection replaces a full sort. */
float quant_quantile_abs(const float *x, size_t n, float q, float *scratch) {
  if (n == 0) return 0.0f;
  quantile_rank r = rank_for(n, q);
  size_t k = n - r.lo;
  if (k <= 32) {
    top_k_abs(x, n, k, scratch); /* scratch[j] is sorted position lo + j */
    return torch_lerp(scratch[0], scratch[r.hi - r.lo], r.w);
  }
  for (size_t i = 0; i < n; i++) scratch[i] = fabsf(x[i]);
  qsort(scratch, n, sizeof *scratch, cmp_float);
  return quant_quantile_sorted(scratch, n, q);
}

static float clip_q(void) { return (float)QUANT_CLIP_Q_DOUBLE; }

static int check_finite(const float *t, uint64_t n, const char *name, pg_error *err) {
  for (uint64_t i = 0; i < n; i++)
    if (!isfinite(t[i]))
      return pg_fail(err, name, -1, "cannot quantize: value %llu is not finite (%g)",
                     (unsigned long long)i, (double)t[i]);
  return 0;
}

static int8_t quant_value(float v, float clip, float scale) {
  /* torch.maximum(torch.minimum(t, clip), -clip) */
  v = v < clip ? v : clip;
  v = v > -clip ? v : -clip;
  float r = rintf(v / scale); /* round half to even (default rounding mode) */
  r = r < -127.0f ? -127.0f : r > 127.0f ? 127.0f : r;
  return (int8_t)r;
}

int quant_int8_per_row(const float *t, uint32_t rows, uint32_t cols, int8_t *q,
                       uint16_t *scale_f16, const char *name, pg_error *err) {
  if (check_finite(t, (uint64_t)rows * cols, name, err)) return -1;
  const float qf = clip_q(), floor_scale = (float)(1.0 / 127.0);
  int failed = 0;
#pragma omp parallel
  {
    float *scratch = malloc((size_t)cols * sizeof *scratch + 1);
    if (!scratch) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < (int64_t)rows; r++) {
      if (!scratch) continue;
      const float *row = t + (size_t)r * cols;
      float clip = quant_quantile_abs(row, cols, qf, scratch);
      float scale = clip / 127.0f;
      scale = scale < floor_scale ? floor_scale : scale;
      for (uint32_t j = 0; j < cols; j++) q[(size_t)r * cols + j] = quant_value(row[j], clip, scale);
      scale_f16[r] = quant_f16_from_float(scale);
    }
    free(scratch);
  }
  if (failed) return pg_fail(err, name, -1, "out of memory quantizing %u x %u", rows, cols);
  return 0;
}

int quant_int8_per_tensor(const float *t, uint64_t n, int8_t *q, float *scale, const char *name,
                          pg_error *err) {
  if (check_finite(t, n, name, err)) return -1;
  float *scratch = malloc((size_t)n * sizeof *scratch + 1);
  if (!scratch) return pg_fail(err, name, -1, "out of memory quantizing %llu values",
                               (unsigned long long)n);
  float clip = quant_quantile_abs(t, (size_t)n, clip_q(), scratch);
  free(scratch);
  /* clip_abs / 127.0 is Python float arithmetic (double), then float32. */
  float s = clip > 0.0f ? (float)((double)clip / 127.0) : 1.0f;
  for (uint64_t i = 0; i < n; i++) q[i] = quant_value(t[i], clip, s);
  *scale = s;
  return 0;
}

quant_kind quant_kind_for(const gpt_tensor *t) {
  if (t->numel <= QUANT_KEEP_FLOAT_MAX_NUMEL) return t->is_control ? QUANT_F32 : QUANT_F16;
  return t->ndim == 2 ? QUANT_INT8_ROW : QUANT_INT8_TENSOR;
}

void quant_dtypes_for(const gpt_layout *l, int tok_emb_bf16, quant_dtype *out) {
  for (int i = 0; i < l->n_tensors; i++)
    out[i] = tok_emb_bf16 && !strcmp(l->tensors[i].name, "tok_emb.weight") ? QUANT_DTYPE_BF16
                                                                             : QUANT_DTYPE_F32;
}

const char *quant_kind_name(quant_kind k) {
  switch (k) {
    case QUANT_INT8_ROW: return "int8_per_row";
    case QUANT_INT8_TENSOR: return "int8_per_tensor";
    case QUANT_F32: return "f32";
    case QUANT_F16: return "f16";
  }
  return "?";
}

void quant_model_free(quant_model *m) {
  for (int i = 0; m->tensors && i < m->n_tensors; i++) {
    quant_tensor *t = &m->tensors[i];
    free(t->q);
    free(t->scale_f16);
    free(t->f32);
    free(t->f16);
  }
  free(m->tensors);
  memset(m, 0, sizeof *m);
}

static int build_tensor(quant_tensor *qt, const gpt_tensor *t, const float *v, quant_dtype dt,
                        pg_error *err) {
  memcpy(qt->name, t->name, sizeof qt->name);
  qt->kind = quant_kind_for(t);
  qt->dtype = dt;
  qt->ndim = t->ndim;
  qt->rows = (uint32_t)t->rows;
  qt->cols = (uint32_t)t->cols;
  qt->numel = t->numel;
  size_t n = (size_t)t->numel;
  if (dt == QUANT_DTYPE_BF16)
    for (size_t i = 0; i < n; i++)
      if (!bf16_is_exact(v[i]))
        return pg_fail(err, t->name, -1, "value %zu (%g) of a bf16 tensor is not bf16-exact", i,
                       (double)v[i]);
  switch (qt->kind) {
    case QUANT_F32:
      if (!(qt->f32 = malloc(n * 4 + 1))) break;
      memcpy(qt->f32, v, n * 4);
      return 0;
    case QUANT_F16:
      if (!(qt->f16 = malloc(n * 2 + 1))) break;
      for (size_t i = 0; i < n; i++) qt->f16[i] = quant_f16_from_float(v[i]);
      return 0;
    case QUANT_INT8_ROW:
      qt->q = malloc(n + 1);
      qt->scale_f16 = malloc((size_t)qt->rows * 2 + 1);
      if (!qt->q || !qt->scale_f16) break;
      return quant_int8_per_row(v, qt->rows, qt->cols, qt->q, qt->scale_f16, t->name, err);
    case QUANT_INT8_TENSOR:
      if (!(qt->q = malloc(n + 1))) break;
      return quant_int8_per_tensor(v, n, qt->q, &qt->scale_f32, t->name, err);
  }
  return pg_fail(err, t->name, -1, "out of memory quantizing %zu values", n);
}

static uint64_t payload_bytes_of(const quant_tensor *t) {
  switch (t->kind) {
    case QUANT_F32: return 4 * t->numel;
    case QUANT_F16: return 2 * t->numel;
    case QUANT_INT8_ROW: return t->numel + 2ull * t->rows;
    case QUANT_INT8_TENSOR: return t->numel + 4;
  }
  return 0;
}

int quant_model_build(quant_model *m, const gpt_layout *l, const float *flat,
                      const quant_dtype *dtypes, pg_error *err) {
  memset(m, 0, sizeof *m);
  m->cfg = l->cfg;
  m->tensors = calloc((size_t)l->n_tensors, sizeof *m->tensors);
  if (!m->tensors) return pg_fail(err, "", -1, "out of memory");
  m->n_tensors = l->n_tensors;
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    quant_dtype dt = dtypes ? dtypes[i] : QUANT_DTYPE_F32;
    if (build_tensor(&m->tensors[i], t, flat + t->offset, dt, err)) {
      quant_model_free(m);
      return -1;
    }
    m->payload_bytes += payload_bytes_of(&m->tensors[i]);
    m->baseline_bytes += t->numel * (dt == QUANT_DTYPE_BF16 ? 2 : 4);
  }
  return 0;
}

/* Value of element i as dequantize_state_dict_int8 returns it, before the
 * cast to the parameter's dtype. */
static float dequant_value(const quant_tensor *t, size_t i) {
  switch (t->kind) {
    case QUANT_F32: return t->f32[i];
    case QUANT_F16: return quant_f16_to_float(t->f16[i]);
    case QUANT_INT8_ROW: return (float)t->q[i] * quant_f16_to_float(t->scale_f16[i / t->cols]);
    case QUANT_INT8_TENSOR: return (float)t->q[i] * t->scale_f32;
  }
  return 0.0f;
}

int quant_model_dequantize(const quant_model *m, const gpt_layout *l, float *flat, pg_error *err) {
  if (m->n_tensors != l->n_tensors)
    return pg_fail(err, "", -1, "quantized model has %d tensors, the layout %d", m->n_tensors,
                   l->n_tensors);
  for (int k = 0; k < m->n_tensors; k++) {
    const quant_tensor *t = &m->tensors[k];
    const gpt_tensor *g = &l->tensors[k];
    if (strcmp(t->name, g->name) || t->numel != g->numel || t->rows != (uint32_t)g->rows ||
        t->cols != (uint32_t)g->cols)
      return pg_fail(err, t->name, -1, "quantized tensor %d does not match the layout's %s", k,
                     g->name);
    float *out = flat + g->offset;
    for (size_t i = 0; i < (size_t)t->numel; i++) {
      float v = dequant_value(t, i);
      out[i] = t->dtype == QUANT_DTYPE_BF16 ? bf16_round(v) : v;
    }
  }
  return 0;
}
