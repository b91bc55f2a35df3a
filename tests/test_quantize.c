/* The int8 export against the official code (golden/quant.json): q bytes,
 * scale bits, every row's clip and the dequantized bits, bit for bit; the
 * whole export of a small model in fp32 and mixed dtypes; fp16 rounding;
 * the quantile; and the inputs the export refuses. */
#include "tests/test_util.h"

#include <jansson.h>
#include <math.h>

#include "kernels/bf16.h"
#include "common/sha256.h"
#include "trainer/quantize.h"

#define GOLDEN "golden/quant.json"

static json_t *golden;

static int setup(void **state) {
  (void)state;
  json_error_t je;
  golden = json_load_file(GOLDEN, 0, &je);
  if (!golden) {
    fprintf(stderr, "%s: %s\n", GOLDEN, je.text);
    return -1;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  json_decref(golden);
  return 0;
}

/* The generator shared with golden/make_quant_golden.py. */
static void gen(uint32_t seed, size_t n, float *out) {
  for (size_t i = 0; i < n; i++) {
    uint32_t x = (uint32_t)((uint64_t)i * 2654435761u + (uint64_t)seed * 97531u + 12345u);
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    x ^= x >> 16;
    x *= 0x45d9f3bu;
    x ^= x >> 16;
    double v = ((double)(x % 4001) - 2000.0) * 0x1p-14;
    if (x % 97 == 0) v *= 37.0;
    out[i] = (float)v;
  }
}

static void tie_values(size_t n, float top, float unit, float *out) {
  for (size_t k = 0; k < n; k++) out[k] = (float)((double)((long)(k % 41) - 20) * unit + unit / 2);
  out[0] = top, out[1] = -top;
}

static void sha_hex(const void *b, size_t n, char hex[SHA256_HEX_LEN + 1]) {
  uint8_t d[SHA256_LEN];
  sha256_buf(b, n, d);
  sha256_hex(d, hex);
}

static json_t *golden_case(const char *name) {
  json_t *cases = json_object_get(golden, "cases");
  for (size_t i = 0; i < json_array_size(cases); i++) {
    json_t *c = json_array_get(cases, i);
    if (!strcmp(json_string_value(json_object_get(c, "name")), name)) return c;
  }
  fail_msg("no golden case %s", name);
  return NULL;
}

static uint32_t hex_u32(json_t *s) { return (uint32_t)strtoul(json_string_value(s), NULL, 16); }

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, 4);
  return u;
}

static void check_per_row(const char *name, const float *t, uint32_t rows, uint32_t cols) {
  json_t *c = golden_case(name);
  int8_t *q = malloc((size_t)rows * cols);
  uint16_t *s = malloc(rows * 2);
  float *deq = malloc((size_t)rows * cols * 4), *scratch = malloc(cols * 4);
  assert_true(q && s && deq && scratch);
  pg_error err;
  assert_int_equal(quant_int8_per_row(t, rows, cols, q, s, name, &err), 0);
  json_t *clips = json_object_get(c, "clip_f32"), *scales = json_object_get(c, "scales_f16");
  assert_int_equal(json_array_size(clips), rows);
  for (uint32_t r = 0; r < rows; r++) {
    float clip = quant_quantile_abs(t + (size_t)r * cols, cols, (float)QUANT_CLIP_Q_DOUBLE, scratch);
    if (bits(clip) != hex_u32(json_array_get(clips, r)))
      fail_msg("%s row %u: clip %08x, official %s", name, r, bits(clip),
               json_string_value(json_array_get(clips, r)));
    if (s[r] != hex_u32(json_array_get(scales, r)))
      fail_msg("%s row %u: scale %04x, official %s", name, r, s[r],
               json_string_value(json_array_get(scales, r)));
  }
  char hex[SHA256_HEX_LEN + 1];
  sha_hex(q, (size_t)rows * cols, hex);
  assert_string_equal(hex, json_string_value(json_object_get(c, "q_sha256")));
  for (size_t i = 0; i < (size_t)rows * cols; i++)
    deq[i] = (float)q[i] * quant_f16_to_float(s[i / cols]);
  sha_hex(deq, (size_t)rows * cols * 4, hex);
  assert_string_equal(hex, json_string_value(json_object_get(c, "dequant_sha256")));
  free(q), free(s), free(deq), free(scratch);
}

static void check_per_tensor(const char *name, const float *t, size_t n) {
  json_t *c = golden_case(name);
  int8_t *q = malloc(n);
  float *deq = malloc(n * 4), scale;
  assert_true(q && deq);
  pg_error err;
  assert_int_equal(quant_int8_per_tensor(t, n, q, &scale, name, &err), 0);
  assert_int_equal(bits(scale), hex_u32(json_object_get(c, "scale_f32")));
  char hex[SHA256_HEX_LEN + 1];
  sha_hex(q, n, hex);
  assert_string_equal(hex, json_string_value(json_object_get(c, "q_sha256")));
  for (size_t i = 0; i < n; i++) deq[i] = (float)q[i] * scale;
  sha_hex(deq, n * 4, hex);
  assert_string_equal(hex, json_string_value(json_object_get(c, "dequant_sha256")));
  json_t *first = json_object_get(c, "q_first");
  for (size_t i = 0; i < json_array_size(first); i++)
    assert_int_equal(q[i], json_integer_value(json_array_get(first, i)));
  free(q), free(deq);
}

static void test_per_row_300x70(void **state) {
  (void)state;
  enum { R = 300, C = 70 };
  float *m = malloc(R * C * 4);
  assert_non_null(m);
  gen(1, R * C, m);
  memset(m + 5 * C, 0, C * 4);
  tie_values(C, 127.0f, 1.0f, m + 7 * C);
  gen(5, C, m + 9 * C);
  for (int j = 0; j < C; j++) m[9 * C + j] *= 0x1p-6f;
  tie_values(C, 63.5f, 0.5f, m + 11 * C);
  check_per_row("mat300x70", m, R, C);
  /* the special rows, checked by value too */
  int8_t q[R * C];
  uint16_t s[R];
  assert_int_equal(quant_int8_per_row(m, R, C, q, s, "m", NULL), 0);
  for (int j = 0; j < C; j++) assert_int_equal(q[5 * C + j], 0);
  assert_int_equal(s[5], quant_f16_from_float((float)(1.0 / 127.0)));
  assert_int_equal(s[7], 0x3c00); /* scale 1 */
  assert_int_equal(s[9], quant_f16_from_float((float)(1.0 / 127.0)));
  assert_int_equal(s[11], 0x3800); /* scale 0.5 */
  /* row 7 element 2: -17.5 -> -18 and element 3: -16.5 -> -16 (ties to even) */
  assert_int_equal(q[7 * C + 2], -18);
  assert_int_equal(q[7 * C + 3], -16);
  free(m);
}

static void test_per_row_64x512(void **state) {
  (void)state;
  float *m = malloc(64 * 512 * 4);
  assert_non_null(m);
  gen(3, 64 * 512, m);
  check_per_row("mat64x512", m, 64, 512);
  free(m);
}

static void test_per_tensor_cases(void **state) {
  (void)state;
  float *v = malloc(70000 * 4);
  assert_non_null(v);
  gen(2, 70000, v);
  check_per_tensor("vec70000", v, 70000);
  memset(v, 0, 100 * 4);
  check_per_tensor("vec_zero", v, 100);
  tie_values(70000, 127.0f, 1.0f, v);
  v[2] = 127.0f, v[3] = -127.0f;
  check_per_tensor("vec_ties", v, 70000);
  free(v);
}

/* The layout of the golden export: 2 layers, width 256, vocab 1024. */
static void mini_layout(gpt_layout *l) {
  gpt_config c;
  assert_int_equal(gpt_config_preset("baseline", &c), 0);
  c.num_layers = 2, c.model_dim = 256, c.num_heads = 4, c.num_kv_heads = 2;
  pg_error err;
  if (gpt_layout_init(l, &c, &err)) fail_msg("%s", err.msg);
}

static float *mini_params(const gpt_layout *l, int mixed) {
  float *flat = malloc(l->n_params * 4);
  assert_non_null(flat);
  for (int i = 0; i < l->n_tensors; i++) {
    const gpt_tensor *t = &l->tensors[i];
    gen(100 + (uint32_t)i, t->numel, flat + t->offset);
    if (mixed && !strcmp(t->name, "tok_emb.weight")) bf16_round_array(flat + t->offset, t->numel);
  }
  return flat;
}

static void check_export(json_t *ex) {
  int mixed = json_is_true(json_object_get(ex, "mixed"));
  gpt_layout l;
  mini_layout(&l);
  float *flat = mini_params(&l, mixed);
  quant_dtype *dt = malloc(l.n_tensors * sizeof *dt);
  quant_dtypes_for(&l, mixed, dt);
  quant_model m;
  pg_error err;
  if (quant_model_build(&m, &l, flat, dt, &err)) fail_msg("%s", err.msg);
  json_t *stats = json_object_get(ex, "stats");
  assert_int_equal(m.payload_bytes, json_integer_value(json_object_get(stats, "int8_payload_bytes")));
  assert_int_equal(m.baseline_bytes,
                   json_integer_value(json_object_get(stats, "baseline_tensor_bytes")));
  float *back = malloc(l.n_params * 4);
  assert_non_null(back);
  assert_int_equal(quant_model_dequantize(&m, &l, back, &err), 0);
  json_t *ts = json_object_get(ex, "tensors");
  assert_int_equal(json_array_size(ts), l.n_tensors);
  for (int i = 0; i < l.n_tensors; i++) {
    json_t *g = json_array_get(ts, i);
    const quant_tensor *t = &m.tensors[i];
    assert_string_equal(t->name, json_string_value(json_object_get(g, "name")));
    assert_string_equal(quant_kind_name(t->kind), json_string_value(json_object_get(g, "kind")));
    char hex[SHA256_HEX_LEN + 1];
    size_t n = (size_t)t->numel;
    if (t->kind == QUANT_F32) sha_hex(t->f32, n * 4, hex);
    else if (t->kind == QUANT_F16) sha_hex(t->f16, n * 2, hex);
    else sha_hex(t->q, n, hex);
    if (strcmp(hex, json_string_value(json_object_get(g, "data_sha256"))))
      fail_msg("%s (%s): data differs from the official export", t->name, mixed ? "mixed" : "fp32");
    if (t->kind == QUANT_INT8_ROW) {
      sha_hex(t->scale_f16, t->rows * 2, hex);
      assert_string_equal(hex, json_string_value(json_object_get(g, "scales_sha256")));
    }
    sha_hex(back + l.tensors[i].offset, n * 4, hex);
    if (strcmp(hex, json_string_value(json_object_get(g, "dequant_sha256"))))
      fail_msg("%s (%s): dequantized values differ from the official", t->name,
               mixed ? "mixed" : "fp32");
  }
  quant_model_free(&m);
  free(back), free(flat), free(dt);
  gpt_layout_free(&l);
}

static void test_export_matches_official(void **state) {
  (void)state;
  json_t *exs = json_object_get(golden, "exports");
  assert_int_equal(json_array_size(exs), 2);
  for (size_t i = 0; i < 2; i++) check_export(json_array_get(exs, i));
}

/* Every finite half survives a round trip; the midpoint between two
 * neighbours rounds to the even one, and a float ulp either side of it
 * rounds to the nearer. */
static void test_f16_rounding(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if ((h & 0x7c00) == 0x7c00) continue;
    float f = quant_f16_to_float((uint16_t)h);
    assert_int_equal(quant_f16_from_float(f), h);
    if ((h & 0x7fff) == 0x7bff) continue;
    float g = quant_f16_to_float((uint16_t)(h + 1));
    if ((h & 0x8000) != ((h + 1) & 0x8000)) continue;
    float mid = (f + g) / 2; /* exact: 12 significant bits */
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    assert_int_equal(quant_f16_from_float(mid), even);
    float below = nextafterf(mid, f), above = nextafterf(mid, g);
    assert_int_equal(quant_f16_from_float(below), h);
    assert_int_equal(quant_f16_from_float(above), h + 1);
  }
  assert_int_equal(quant_f16_from_float(65504.0f), 0x7bff);
  assert_int_equal(quant_f16_from_float(65519.99f), 0x7bff);
  assert_int_equal(quant_f16_from_float(65520.0f), 0x7c00);
  assert_int_equal(quant_f16_from_float(-1e9f), 0xfc00);
  assert_int_equal(quant_f16_from_float(0x1p-25f), 0x0000);             /* tie to even 0 */
  assert_int_equal(quant_f16_from_float(nextafterf(0x1p-25f, 1)), 0x0001);
  assert_int_equal(quant_f16_from_float(0x1.8p-24f), 0x0002);           /* 1.5 units: even */
  assert_int_equal(quant_f16_from_float(-0.0f), 0x8000);
  assert_int_equal(quant_f16_from_float(1.0f / 127.0f), 0x2008);
  assert_true(isnan(quant_f16_to_float(quant_f16_from_float(NAN))));
  assert_true(isinf(quant_f16_to_float(0x7c00)));
}

static void test_quantile(void **state) {
  (void)state;
  const float s[5] = {1, 2, 3, 4, 5};
  assert_true(quant_quantile_sorted(s, 5, 0.5f) == 3.0f);
  assert_true(quant_quantile_sorted(s, 5, 1.0f) == 5.0f);
  assert_true(quant_quantile_sorted(s, 5, 0.0f) == 1.0f);
  /* rank 0.25*4 = 1 exactly: no interpolation */
  assert_true(quant_quantile_sorted(s, 5, 0.25f) == 2.0f);
  /* rank (double)0.3f*4 = 1.2000000477: w < 0.5, lo + w*(hi-lo) fused */
  float w = (float)((double)0.3f * 4.0 - 1.0);
  assert_true(quant_quantile_sorted(s, 5, 0.3f) == fmaf(w, 1.0f, 2.0f));
  /* rank (double)0.9f*4 = 3.6000001: w >= 0.5, hi - (1-w)*(hi-lo) fused */
  w = (float)((double)0.9f * 4.0 - 3.0);
  assert_true(quant_quantile_sorted(s, 5, 0.9f) == fmaf(w - 1.0f, 1.0f, 5.0f));
  const float one[1] = {7};
  assert_true(quant_quantile_sorted(one, 1, 0.9999984f) == 7.0f);
  /* the selection path equals a full sort, rows of many lengths */
  float x[2000], sorted[2000], scratch[2000];
  for (size_t n = 1; n <= 2000; n = n * 3 + 1) {
    gen((uint32_t)n, n, x);
    for (size_t i = 0; i < n; i++) sorted[i] = fabsf(x[i]);
    for (size_t i = 1; i < n; i++)
      for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
        float t = sorted[j];
        sorted[j] = sorted[j - 1], sorted[j - 1] = t;
      }
    const float qs[3] = {(float)QUANT_CLIP_Q_DOUBLE, 0.99f, 0.5f};
    for (int k = 0; k < 3; k++)
      assert_int_equal(bits(quant_quantile_abs(x, n, qs[k], scratch)),
                       bits(quant_quantile_sorted(sorted, n, qs[k])));
  }
}

/* torch.quantile itself on 1500 rows (golden "quantiles"): the double
 * rank, float32 weight and fused lerp are the only combination of the
 * plausible ones that matches all of them. */
static void test_quantile_matches_torch(void **state) {
  (void)state;
  json_t *vals = json_object_get(json_object_get(golden, "quantiles"), "value_f32");
  assert_true(json_array_size(vals) >= 1000);
  float *x = malloc(3002 * 4), *scratch = malloc(3002 * 4);
  assert_true(x && scratch);
  for (size_t k = 0; k < json_array_size(vals); k++) {
    uint32_t seed = 1000 + (uint32_t)k;
    size_t n = 2 + (k * 7919) % 3000;
    double qd = k % 3 == 0 ? 0.9999984 : (double)((k * 104729) % 1000003) / 1000003.0;
    gen(seed, n, x);
    for (size_t i = 0; i < n; i++) x[i] = fabsf(x[i]) * 0.7310586f;
    float v = quant_quantile_abs(x, n, (float)qd, scratch);
    if (bits(v) != hex_u32(json_array_get(vals, k)))
      fail_msg("case %zu (n %zu, q %.9g): %08x, torch %s", k, n, qd, bits(v),
               json_string_value(json_array_get(vals, k)));
  }
  free(x), free(scratch);
}

static void test_kinds_for_layout(void **state) {
  (void)state;
  gpt_config c;
  gpt_layout l;
  assert_int_equal(gpt_config_preset("baseline", &c), 0);
  assert_int_equal(gpt_layout_init(&l, &c, NULL), 0);
  for (int i = 0; i < l.n_tensors; i++) {
    const gpt_tensor *t = &l.tensors[i];
    quant_kind k = quant_kind_for(t);
    if (t->is_control) assert_int_equal(k, QUANT_F32);
    else assert_int_equal(k, QUANT_INT8_ROW); /* tok_emb and every block matrix */
  }
  gpt_layout_free(&l);
}

static void test_refuses_bad_values(void **state) {
  (void)state;
  float t[4 * 3] = {0};
  int8_t q[12];
  uint16_t s[4];
  float sc;
  pg_error err;
  t[7] = NAN;
  assert_int_equal(quant_int8_per_row(t, 4, 3, q, s, "blocks.0.x", &err), -1);
  assert_string_equal(err.file, "blocks.0.x");
  assert_non_null(strstr(err.msg, "value 7 is not finite"));
  t[7] = INFINITY;
  assert_int_equal(quant_int8_per_tensor(t, 12, q, &sc, "v", &err), -1);
  assert_non_null(strstr(err.msg, "value 7 is not finite"));
  /* a bf16 tensor must hold bf16 values */
  gpt_layout l;
  mini_layout(&l);
  float *flat = mini_params(&l, 1);
  const gpt_tensor *te = gpt_layout_find(&l, "tok_emb.weight");
  flat[te->offset + 5] = 1.0f + 0x1p-20f;
  quant_dtype *dt = malloc(l.n_tensors * sizeof *dt);
  quant_dtypes_for(&l, 1, dt);
  quant_model m;
  assert_int_equal(quant_model_build(&m, &l, flat, dt, &err), -1);
  assert_non_null(strstr(err.msg, "value 5"));
  assert_non_null(strstr(err.msg, "not bf16-exact"));
  free(dt), free(flat);
  gpt_layout_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_per_row_300x70),
      cmocka_unit_test(test_per_row_64x512),
      cmocka_unit_test(test_per_tensor_cases),
      cmocka_unit_test(test_export_matches_official),
      cmocka_unit_test(test_f16_rounding),
      cmocka_unit_test(test_quantile),
      cmocka_unit_test(test_quantile_matches_torch),
      cmocka_unit_test(test_kinds_for_layout),
      cmocka_unit_test(test_refuses_bad_values),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
