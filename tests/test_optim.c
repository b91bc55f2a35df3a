/* Optimizers against the official code (golden/optim.json, made by
 * golden/make_optim_golden.py with torch 2.15 on CPU), the schedules, the
 * planner, thread-count invariance and the checkpointed state.
 *
 * Tolerances, and why (values measured on the golden in brackets):
 *   Newton-Schulz fp32: relative Frobenius error <= 2e-6 [1.05e-6 ..
 *     1.23e-6]: torch's sgemm sums in another order, so the results differ
 *     by float32 rounding carried through five iterations;
 *   Newton-Schulz bf16 and Muon in mixed precision: bitwise [all equal]:
 *     products of bf16 values are exact in float32 and these sums are
 *     short, so torch's other sum order never flips a bf16 rounding here.
 *     (On long sums it could, by one bf16 ulp; then this becomes a
 *     tolerance, not a weaker implementation);
 *   Muon momentum buffers: bitwise (elementwise float32, same operations);
 *   Muon fp32 parameters: relative error of each update <= 3e-6 [<= 1.33e-6];
 *   Adam (fused=True): bitwise on every element torch runs through its
 *     vector path (all but the last numel mod 16 float32 / mod 32 bf16);
 *     the scalar-loop tail within 1e-7 relative [<= 7.3e-8], as torch's own
 *     scalar loop rounds v differently from its vector path by 1 ulp;
 *   clip: total norm within 1 float32 ulp [0 and 1 ulp] (pgolf sums in
 *     float64), the clipped gradients within 1e-6 relative (bf16: 1 ulp). */
#include <jansson.h>
#include <math.h>
#include <omp.h>

#include "kernels/bf16.h"
#include "kernels/l2norm.h"
#include "kernels/newton_schulz.h"
#include "tests/test_util.h"
#include "trainer/adam.h"
#include "trainer/checkpoint.h"
#include "trainer/clip.h"
#include "trainer/muon.h"
#include "trainer/optim.h"
#include "trainer/optimizer.h"
#include "trainer/schedule.h"

#define GOLDEN "golden/optim.json"

static json_t *golden;

static int load_golden(void **state) {
  (void)state;
  json_error_t je;
  golden = json_load_file(GOLDEN, 0, &je);
  if (!golden) fprintf(stderr, "%s: %s\n", GOLDEN, je.text);
  return golden ? 0 : -1;
}

static int free_golden(void **state) {
  (void)state;
  json_decref(golden);
  return 0;
}

/* ---- reading the golden file ---- */

static json_t *get(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  if (!v) fail_msg("golden: no key %s", key);
  return v;
}

static double get_double(json_t *o, const char *key) {
  return strtod(json_string_value(get(o, key)), NULL);
}

/* A "%08x"-per-element string into a fresh float array of n elements. */
static float *hex_floats(json_t *s, size_t n) {
  const char *h = json_string_value(s);
  assert_non_null(h);
  assert_int_equal(strlen(h), 8 * n);
  float *out = malloc((n ? n : 1) * sizeof *out);
  for (size_t i = 0; i < n; i++) {
    char buf[9];
    memcpy(buf, h + 8 * i, 8);
    buf[8] = 0;
    uint32_t u = (uint32_t)strtoul(buf, NULL, 16);
    memcpy(&out[i], &u, sizeof u);
  }
  return out;
}

static uint32_t bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}

static double rel_err(const float *a, const float *b, size_t n) {
  double num = 0, den = 0;
  for (size_t i = 0; i < n; i++) {
    double d = (double)a[i] - (double)b[i];
    num += d * d;
    den += (double)b[i] * (double)b[i];
  }
  return sqrt(num / (den > 0 ? den : 1));
}

static size_t n_equal(const float *a, const float *b, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) k += bits(a[i]) == bits(b[i]);
  return k;
}

/* ---- Newton-Schulz ---- */

#define NS_STEPS 5 /* the official muon_backend_steps; the golden says the same */

static void run_ns(const float *g, float *out, int r, int c, int flags) {
  float *work = malloc(newton_schulz5_work_floats(r, c) * sizeof *work);
  newton_schulz5(out, g, r, c, NS_STEPS, flags, work);
  free(work);
}

static void test_ns_fp32_matches_official(void **state) {
  (void)state;
  json_t *cases = get(golden, "ns");
  for (size_t k = 0; k < json_array_size(cases); k++) {
    json_t *cs = json_array_get(cases, k);
    int r = (int)json_integer_value(get(cs, "rows")), c = (int)json_integer_value(get(cs, "cols"));
    size_t n = (size_t)r * c;
    assert_int_equal(json_integer_value(get(cs, "steps")), NS_STEPS);
    float *g = hex_floats(get(cs, "g"), n), *want = hex_floats(get(cs, "fp32"), n);
    float *got = malloc(n * sizeof *got);
    run_ns(g, got, r, c, 0);
    double e = rel_err(got, want, n);
    print_message("  ns fp32 %s: relative error %.3g\n", json_string_value(get(cs, "name")), e);
    assert_true(e <= 2e-6);
    free(g), free(want), free(got);
  }
}

static void test_ns_bf16_matches_official(void **state) {
  (void)state;
  json_t *cases = get(golden, "ns");
  for (size_t k = 0; k < json_array_size(cases); k++) {
    json_t *cs = json_array_get(cases, k);
    int r = (int)json_integer_value(get(cs, "rows")), c = (int)json_integer_value(get(cs, "cols"));
    size_t n = (size_t)r * c;
    float *g = hex_floats(get(cs, "g"), n), *want = hex_floats(get(cs, "bf16"), n);
    float *got = malloc(n * sizeof *got);
    run_ns(g, got, r, c, KERNEL_BF16);
    for (size_t i = 0; i < n; i++) assert_true(bf16_is_exact(got[i]));
    size_t eq = n_equal(got, want, n);
    print_message("  ns bf16 %s: %zu/%zu equal\n", json_string_value(get(cs, "name")), eq, n);
    assert_int_equal(eq, n);
    /* The fp32 result is not the bf16 one: the rounding steps matter. */
    float *f32 = hex_floats(get(cs, "fp32"), n);
    assert_true(rel_err(f32, want, n) > 1e-3);
    free(g), free(want), free(got), free(f32);
  }
}

/* A wrong coefficient is caught: scale the input so the normalisation
 * differs (eps no longer negligible) and check the tolerance fails. */
static void test_ns_tolerance_catches_errors(void **state) {
  (void)state;
  json_t *cs = json_array_get(get(golden, "ns"), 0);
  int r = (int)json_integer_value(get(cs, "rows")), c = (int)json_integer_value(get(cs, "cols"));
  size_t n = (size_t)r * c;
  float *g = hex_floats(get(cs, "g"), n), *want = hex_floats(get(cs, "fp32"), n);
  float *got = malloc(n * sizeof *got);
  float *work = malloc(newton_schulz5_work_floats(r, c) * sizeof *work);
  newton_schulz5(got, g, r, c, NS_STEPS - 1, 0, work); /* one step short */
  assert_true(rel_err(got, want, n) > 1e-2);
  newton_schulz5(got, g, c, r, NS_STEPS, 0, work); /* wrong orientation */
  assert_true(rel_err(got, want, n) > 1e-2);
  free(g), free(want), free(got), free(work);
}

/* ---- Muon ---- */

static void run_muon_case(const char *mode, int flags, double tol) {
  json_t *mu = get(golden, "muon");
  json_t *shapes = get(mu, "shapes");
  int nt = (int)json_array_size(shapes);
  double lr = get_double(mu, "matrix_lr");
  double start = get_double(mu, "momentum_warmup_start"), mom = get_double(mu, "momentum");
  int wsteps = (int)json_integer_value(get(mu, "momentum_warmup_steps"));
  int backend = (int)json_integer_value(get(mu, "backend_steps"));
  json_t *steps = get(get(mu, mode), "steps");
  for (int t = 0; t < nt; t++) {
    int r = (int)json_integer_value(json_array_get(json_array_get(shapes, t), 0));
    int c = (int)json_integer_value(json_array_get(json_array_get(shapes, t), 1));
    size_t n = (size_t)r * c;
    float *p = hex_floats(json_array_get(get(mu, "params0"), t), n);
    float *p_prev = malloc(n * sizeof *p_prev);
    float *buf = calloc(n, sizeof *buf);
    float *work = malloc(muon_work_floats(r, c) * sizeof *work);
    for (size_t s = 0; s < json_array_size(steps); s++) {
      double m = schedule_muon_momentum((int64_t)s, start, mom, wsteps);
      assert_true(m == strtod(json_string_value(json_array_get(get(mu, "momentum_per_step"), s)),
                              NULL));
      double mul = strtod(json_string_value(json_array_get(get(mu, "lr_muls"), s)), NULL);
      float *g = hex_floats(json_array_get(json_array_get(get(mu, "grads"), s), t), n);
      memcpy(p_prev, p, n * sizeof *p);
      muon_update(p, g, buf, r, c, m, lr * mul, backend, flags, work);
      json_t *st = json_array_get(steps, s);
      float *want_p = hex_floats(json_array_get(get(st, "params"), t), n);
      float *want_b = hex_floats(json_array_get(get(st, "momentum_buffers"), t), n);
      assert_int_equal(n_equal(buf, want_b, n), n);
      /* Compare the updates (p - p_prev), which is what the tolerance is about. */
      float *du = malloc(n * sizeof *du), *dw = malloc(n * sizeof *dw);
      for (size_t i = 0; i < n; i++) du[i] = p[i] - p_prev[i], dw[i] = want_p[i] - p_prev[i];
      double e = rel_err(du, dw, n);
      print_message("  muon %s tensor %d step %zu: update relative error %.3g\n", mode, t, s, e);
      assert_true(e <= tol);
      memcpy(p, want_p, n * sizeof *p); /* continue from torch's parameter */
      free(g), free(want_p), free(want_b), free(du), free(dw);
    }
    free(p), free(p_prev), free(buf), free(work);
  }
}

static void test_muon_fp32_matches_official(void **state) {
  (void)state;
  run_muon_case("fp32", 0, 3e-6);
}

static void test_muon_mixed_matches_official(void **state) {
  (void)state;
  run_muon_case("mixed", KERNEL_BF16, 0.0);
}

/* ---- Adam ---- */

static void test_adam_matches_official(void **state) {
  (void)state;
  json_t *cases = get(golden, "adam");
  for (size_t k = 0; k < json_array_size(cases); k++) {
    json_t *cs = json_array_get(cases, k);
    const char *name = json_string_value(get(cs, "name"));
    int bf16 = !strcmp(json_string_value(get(cs, "dtype")), "bf16");
    size_t n = (size_t)json_integer_value(get(cs, "numel"));
    /* torch's vector width is 16 floats / 32 bf16 (AVX-512); the rest is
     * its scalar loop. */
    size_t vec = bf16 ? 32 : 16, aligned = n - n % vec;
    float *p = hex_floats(get(cs, "param0"), n);
    float *m = calloc(n, sizeof *m), *v = calloc(n, sizeof *v);
    json_t *steps = get(cs, "fused");
    for (size_t s = 0; s < json_array_size(steps); s++) {
      json_t *st = json_array_get(steps, s);
      double mul = strtod(json_string_value(json_array_get(get(cs, "lr_muls"), s)), NULL);
      adam_coeffs c;
      adam_coeffs_init(&c, get_double(cs, "lr") * mul, get_double(cs, "beta1"),
                       get_double(cs, "beta2"), get_double(cs, "eps"), (float)(s + 1));
      assert_true(json_real_value(get(st, "step")) == (double)(s + 1));
      float *g = hex_floats(json_array_get(get(cs, "grads"), s), n);
      adam_update(p, g, m, v, n, &c, bf16 ? KERNEL_BF16 : 0);
      const char *keys[3] = {"param", "exp_avg", "exp_avg_sq"};
      float *got[3] = {p, m, v};
      for (int q = 0; q < 3; q++) {
        float *want = hex_floats(get(st, keys[q]), n);
        size_t eq_prefix = n_equal(got[q], want, aligned), eq = n_equal(got[q], want, n);
        double e = rel_err(got[q], want, n);
        print_message("  adam %s step %zu %s: %zu/%zu equal, relative error %.3g\n", name, s,
                      keys[q], eq, n, e);
        assert_int_equal(eq_prefix, aligned);
        assert_true(e <= 1e-7);
        memcpy(got[q], want, n * sizeof *want); /* continue from torch's state */
        free(want);
      }
      free(g);
    }
    free(p), free(m), free(v);
  }
}

/* fused=False (torch's _single_tensor_adam) divides before multiplying:
 * within rounding of fused, but not bitwise the same, so the bitwise
 * comparison above does tell the two formulas apart. */
static void test_adam_close_to_unfused(void **state) {
  (void)state;
  json_t *cs = json_array_get(get(golden, "adam"), 0);
  size_t n = (size_t)json_integer_value(get(cs, "numel"));
  json_t *f = json_array_get(get(cs, "fused"), 2), *u = json_array_get(get(cs, "unfused"), 2);
  float *a = hex_floats(get(f, "param"), n), *b = hex_floats(get(u, "param"), n);
  assert_true(rel_err(a, b, n) <= 1e-6);
  assert_true(n_equal(a, b, n) < n);
  free(a), free(b);
}

/* ---- clip ---- */

/* A layout over given shapes (only the fields clip reads). */
static gpt_layout fake_layout(json_t *cs) {
  json_t *shapes = get(cs, "shapes"), *bf = get(cs, "bf16");
  gpt_layout l;
  memset(&l, 0, sizeof l);
  l.n_tensors = (int)json_array_size(shapes);
  l.tensors = calloc((size_t)l.n_tensors, sizeof *l.tensors);
  for (int i = 0; i < l.n_tensors; i++) {
    json_t *s = json_array_get(shapes, i);
    size_t numel = 1;
    for (size_t d = 0; d < json_array_size(s); d++)
      numel *= (size_t)json_integer_value(json_array_get(s, d));
    gpt_tensor *t = &l.tensors[i];
    snprintf(t->name, sizeof t->name, "t%d", i);
    t->ndim = 1, t->rows = 1, t->cols = (int)numel, t->numel = numel, t->offset = l.n_params;
    t->group = json_is_true(json_array_get(bf, i)) ? GPT_GROUP_EMBED : GPT_GROUP_SCALAR;
    l.n_params += numel;
  }
  return l;
}

static void test_clip_matches_official(void **state) {
  (void)state;
  json_t *cases = get(golden, "clip");
  for (size_t k = 0; k < json_array_size(cases); k++) {
    json_t *cs = json_array_get(cases, k);
    gpt_layout l = fake_layout(cs);
    gpt_precision prec = json_is_true(get(cs, "mixed")) ? GPT_MIXED : GPT_FP32;
    float *g = malloc(l.n_params * sizeof *g);
    for (int i = 0; i < l.n_tensors; i++) {
      float *t = hex_floats(json_array_get(get(cs, "grads"), i), l.tensors[i].numel);
      memcpy(g + l.tensors[i].offset, t, l.tensors[i].numel * sizeof *t);
      free(t);
    }
    float *want_total = hex_floats(get(cs, "total_norm"), 1);
    float total = clip_grad_norm(g, &l, get_double(cs, "max_norm"), prec);
    int64_t ulps = (int64_t)bits(total) - (int64_t)bits(*want_total);
    print_message("  clip case %zu: total %.9g vs %.9g (%lld ulp)\n", k, total, *want_total,
                  (long long)ulps);
    assert_true(ulps >= -1 && ulps <= 1);
    for (int i = 0; i < l.n_tensors; i++) {
      const gpt_tensor *t = &l.tensors[i];
      float *want = hex_floats(json_array_get(get(cs, "clipped"), i), t->numel);
      float *got = g + t->offset;
      int is_bf = clip_tensor_is_bf16(t, prec);
      for (size_t j = 0; j < t->numel; j++) {
        double tol = is_bf ? ldexp(fabs(want[j]), -7) : 1e-6 * fabs(want[j]);
        assert_true(fabs((double)got[j] - want[j]) <= tol);
        if (is_bf) assert_true(bf16_is_exact(got[j]));
      }
      free(want);
    }
    free(want_total), free(g), free(l.tensors);
  }
}

/* ---- schedules ---- */

static void test_lr_mult_boundaries(void **state) {
  (void)state;
  const int64_t it = 20000, wd = 1200;
  assert_true(schedule_lr_mult(0, it, wd) == 1.0);
  assert_true(schedule_lr_mult(it - wd - 1, it, wd) == 1.0);
  assert_true(schedule_lr_mult(it - wd, it, wd) == 1.0); /* 1200 / 1200 */
  assert_true(schedule_lr_mult(it - wd + 1, it, wd) == 1199.0 / 1200.0);
  assert_true(schedule_lr_mult(it - 1, it, wd) == 1.0 / 1200.0);
  assert_true(schedule_lr_mult(it, it, wd) == 1.0); /* past the end: outside the window */
  /* Python's (20000 - 19000) / 1200 */
  assert_true(schedule_lr_mult(19000, it, wd) == 0.8333333333333334);
  /* no warm-down, and a warm-down longer than the run (starts at 0) */
  assert_true(schedule_lr_mult(19999, it, 0) == 1.0);
  assert_true(schedule_lr_mult(0, 10, 20) == 0.5);
  assert_true(schedule_lr_mult(9, 10, 20) == 1.0 / 20.0);
}

static void test_momentum_warmup(void **state) {
  (void)state;
  optim_hparams h;
  optim_hparams_default(&h);
  double s = h.muon_momentum_warmup_start, m = h.muon_momentum;
  int w = h.muon_momentum_warmup_steps;
  assert_true(schedule_muon_momentum(0, s, m, w) == 0.85);
  /* Python: (1 - 0.5) * 0.85 + 0.5 * 0.95 */
  assert_true(schedule_muon_momentum(250, s, m, w) == 0.5 * 0.85 + 0.5 * 0.95);
  assert_true(schedule_muon_momentum(250, s, m, w) == 0.8999999999999999);
  assert_true(schedule_muon_momentum(500, s, m, w) == 0.95);
  assert_true(schedule_muon_momentum(600, s, m, w) == 0.95);
  assert_true(schedule_muon_momentum(0, s, m, 0) == 0.95);
}

static void test_official_defaults(void **state) {
  (void)state;
  optim_hparams h;
  optim_hparams_default(&h);
  assert_true(h.embed_lr == 0.6 && h.head_lr == 0.008 && h.tied_embed_lr == 0.05);
  assert_true(h.matrix_lr == 0.04 && h.scalar_lr == 0.04);
  assert_true(h.beta1 == 0.9 && h.beta2 == 0.95 && h.adam_eps == 1e-8);
  assert_true(h.muon_momentum == 0.95 && h.muon_backend_steps == 5);
  assert_true(h.muon_momentum_warmup_start == 0.85 && h.muon_momentum_warmup_steps == 500);
  assert_true(h.grad_clip_norm == 0.0 && h.iterations == 20000 && h.warmdown_iters == 1200);
  pg_error err;
  assert_int_equal(optim_hparams_check(&h, &err), 0);
  h.beta2 = 1.0;
  assert_int_equal(optim_hparams_check(&h, &err), -1);
  assert_non_null(strstr(err.msg, "beta2"));
  optim_hparams_default(&h);
  h.matrix_lr = NAN;
  assert_int_equal(optim_hparams_check(&h, &err), -1);
  assert_non_null(strstr(err.msg, "matrix_lr"));
}

static void test_planner(void **state) {
  (void)state;
  schedule_plan p;
  pg_error err;
  const double ms[4] = {500.0, 100.0, 102.0, 98.0}; /* first dropped; median 100 */
  assert_int_equal(schedule_plan_steps(600.0, ms, 4, 20000, &p, &err), 0);
  assert_true(p.measured_step_ms == 100.0);
  assert_int_equal(p.planned_steps, 5700); /* floor(600000 * 0.95 / 100) */
  assert_int_equal(p.measured_samples, 4);
  assert_true(p.safety == SCHEDULE_SAFETY);
  assert_int_equal(schedule_plan_steps(600.0, ms, 4, 1000, &p, &err), 0);
  assert_int_equal(p.planned_steps, 1000); /* capped by the configured iterations */
  const double even[3] = {1.0, 30.0, 10.0}; /* median of {30, 10} = 20 */
  assert_int_equal(schedule_plan_steps(1.0, even, 3, 100000, &p, &err), 0);
  assert_true(p.measured_step_ms == 20.0);
  assert_int_equal(p.planned_steps, 47); /* floor(950 / 20) */
  const double one = 7.0;
  assert_int_equal(schedule_plan_steps(1.0, &one, 1, 100000, &p, &err), 0);
  assert_int_equal(p.planned_steps, 135); /* floor(950 / 7) */
  json_t *j = schedule_plan_to_json(&p);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "planned_steps")), 135);
  json_decref(j);
  /* errors */
  assert_int_equal(schedule_plan_steps(0.0, ms, 4, 100, &p, &err), -1);
  assert_int_equal(schedule_plan_steps(NAN, ms, 4, 100, &p, &err), -1);
  const double bad[2] = {1.0, -3.0};
  assert_int_equal(schedule_plan_steps(600.0, bad, 2, 100, &p, &err), -1);
  assert_non_null(strstr(err.msg, "timing 1"));
  assert_int_equal(schedule_plan_steps(600.0, ms, 0, 100, &p, &err), -1);
  const double slow[2] = {1e6, 1e6};
  assert_int_equal(schedule_plan_steps(600.0, slow, 2, 100, &p, &err), -1);
  assert_non_null(strstr(err.msg, "too small"));
}

/* ---- the whole optimizer on the tiny model ---- */

static void fill(float *x, size_t n, uint32_t seed, float scale) {
  uint32_t s = seed;
  for (size_t i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = scale * ((float)(s >> 8) / 16777216.0f - 0.5f);
  }
}

typedef struct run {
  gpt_layout l;
  optimizer o;
  float *p, *g;
} run;

static void run_init(run *r, gpt_precision prec, double clip) {
  gpt_config cfg;
  assert_int_equal(gpt_config_preset("tiny", &cfg), 0);
  cfg.num_layers = 2;
  cfg.vocab_size = 64;
  pg_error err;
  assert_int_equal(gpt_layout_init(&r->l, &cfg, &err), 0);
  optim_hparams h;
  optim_hparams_default(&h);
  h.grad_clip_norm = clip;
  assert_int_equal(optimizer_init(&r->o, &r->l, &h, &err), 0);
  r->p = malloc(r->l.n_params * sizeof *r->p);
  r->g = malloc(r->l.n_params * sizeof *r->g);
  fill(r->p, r->l.n_params, 7, 0.1f);
  if (prec == GPT_MIXED) {
    const gpt_tensor *t = gpt_layout_find(&r->l, "tok_emb.weight");
    bf16_round_array(r->p + t->offset, t->numel);
  }
}

static void run_steps(run *r, int64_t from, int64_t to, gpt_precision prec) {
  for (int64_t s = from; s < to; s++) {
    fill(r->g, r->l.n_params, 100 + (uint32_t)s, 0.02f);
    optimizer_step(&r->o, &r->l, r->p, r->g, s, schedule_lr_mult(s, 4, 2), prec);
  }
}

static void run_free(run *r) {
  optimizer_free(&r->o);
  gpt_layout_free(&r->l);
  free(r->p), free(r->g);
}

static void assert_same_run(run *a, run *b) {
  assert_memory_equal(a->p, b->p, a->l.n_params * sizeof *a->p);
  optimizer_state_array sa[OPTIMIZER_N_STATE], sb[OPTIMIZER_N_STATE];
  int n = optimizer_state(&a->o, sa);
  assert_int_equal(optimizer_state(&b->o, sb), n);
  for (int i = 0; i < n; i++) {
    assert_string_equal(sa[i].name, sb[i].name);
    assert_int_equal(sa[i].n, sb[i].n);
    assert_memory_equal(sa[i].data, sb[i].data, sa[i].n * sizeof(float));
  }
}

static void test_threads_bit_identical(void **state) {
  (void)state;
  for (int prec = GPT_FP32; prec <= GPT_MIXED; prec++) {
    run a, b;
    omp_set_num_threads(1);
    run_init(&a, (gpt_precision)prec, 0.5);
    run_steps(&a, 0, 4, (gpt_precision)prec);
    omp_set_num_threads(2);
    run_init(&b, (gpt_precision)prec, 0.5);
    run_steps(&b, 0, 4, (gpt_precision)prec);
    assert_same_run(&a, &b);
    run_free(&a), run_free(&b);
  }
  omp_set_num_threads(2);
}

static void test_checkpoint_round_trip(void **state) {
  (void)state;
  for (int prec = GPT_FP32; prec <= GPT_MIXED; prec++) {
    run a, b;
    run_init(&a, (gpt_precision)prec, 0.0);
    run_init(&b, (gpt_precision)prec, 0.0);
    run_steps(&a, 0, 2, (gpt_precision)prec);
    /* Save a's state and parameters, reload them into b, go on with both. */
    checkpoint c = {0};
    pg_error err;
    assert_int_equal(optimizer_save(&a.o, &c, &err), 0);
    uint8_t *buf;
    size_t len;
    assert_int_equal(ckpt_serialize(&c, &buf, &len, &err), 0);
    checkpoint c2 = {0};
    assert_int_equal(ckpt_parse(buf, len, "mem", &c2, &err), 0);
    assert_int_equal(optimizer_load(&b.o, &c2, "mem", &err), 0);
    memcpy(b.p, a.p, a.l.n_params * sizeof *a.p);
    assert_true(b.o.adam_step == 2.0f);
    run_steps(&a, 2, 4, (gpt_precision)prec);
    run_steps(&b, 2, 4, (gpt_precision)prec);
    assert_same_run(&a, &b);
    /* A checkpoint of another model is refused, naming the array. */
    run other;
    run_init(&other, (gpt_precision)prec, 0.0);
    optimizer_free(&other.o);
    optim_hparams h;
    optim_hparams_default(&h);
    gpt_layout_free(&other.l);
    gpt_config cfg;
    gpt_config_preset("tiny", &cfg);
    assert_int_equal(gpt_layout_init(&other.l, &cfg, &err), 0);
    assert_int_equal(optimizer_init(&other.o, &other.l, &h, &err), 0);
    assert_int_equal(optimizer_load(&other.o, &c2, "mem", &err), -1);
    assert_non_null(strstr(err.msg, "optim.adam.exp_avg"));
    run_free(&other);
    free(buf);
    ckpt_free(&c), ckpt_free(&c2);
    run_free(&a), run_free(&b);
  }
}

/* The split: each group moves only with its own learning rate, and the
 * bf16 embedding stays bf16 in GPT_MIXED. */
static void test_groups_and_precision(void **state) {
  (void)state;
  run a;
  run_init(&a, GPT_MIXED, 0.0);
  float *p0 = malloc(a.l.n_params * sizeof *p0);
  memcpy(p0, a.p, a.l.n_params * sizeof *p0);
  a.o.hp.matrix_lr = 0.0;
  a.o.hp.scalar_lr = 0.0;
  run_steps(&a, 0, 1, GPT_MIXED);
  for (int i = 0; i < a.l.n_tensors; i++) {
    const gpt_tensor *t = &a.l.tensors[i];
    int changed = memcmp(a.p + t->offset, p0 + t->offset, t->numel * sizeof *p0) != 0;
    assert_int_equal(changed, t->group == GPT_GROUP_EMBED);
    if (t->group == GPT_GROUP_EMBED) {
      for (size_t j = 0; j < t->numel; j++) {
        assert_true(bf16_is_exact(a.p[t->offset + j]));
        assert_true(bf16_is_exact(a.o.adam_m[a.o.state_off[i] + j]));
        assert_true(bf16_is_exact(a.o.adam_v[a.o.state_off[i] + j]));
      }
    }
  }
  /* Now only Muon moves: its buffers fill, Adam's state of the scalars
   * still changes (lr 0 updates the moments, not the parameters). */
  memcpy(p0, a.p, a.l.n_params * sizeof *p0);
  a.o.hp.matrix_lr = 0.04;
  a.o.hp.tied_embed_lr = 0.0;
  run_steps(&a, 1, 2, GPT_MIXED);
  for (int i = 0; i < a.l.n_tensors; i++) {
    const gpt_tensor *t = &a.l.tensors[i];
    int changed = memcmp(a.p + t->offset, p0 + t->offset, t->numel * sizeof *p0) != 0;
    assert_int_equal(changed, t->group == GPT_GROUP_MATRIX);
  }
  free(p0);
  run_free(&a);
}

/* Clipping on: the gradient norm after is max_norm; off: grads untouched. */
static void test_clip_in_step(void **state) {
  (void)state;
  run a;
  run_init(&a, GPT_FP32, 0.01);
  fill(a.g, a.l.n_params, 5, 1.0f);
  float *g0 = malloc(a.l.n_params * sizeof *g0);
  memcpy(g0, a.g, a.l.n_params * sizeof *g0);
  float before = clip_total_norm(a.g, &a.l, GPT_FP32);
  float norm = optimizer_step(&a.o, &a.l, a.p, a.g, 0, 1.0, GPT_FP32);
  assert_true(norm == before);
  float after = clip_total_norm(a.g, &a.l, GPT_FP32);
  assert_true(fabsf(after - 0.01f) <= 1e-6f);
  a.o.hp.grad_clip_norm = 0.0;
  memcpy(a.g, g0, a.l.n_params * sizeof *g0);
  assert_true(optimizer_step(&a.o, &a.l, a.p, a.g, 1, 1.0, GPT_FP32) == 0.0f);
  assert_memory_equal(a.g, g0, a.l.n_params * sizeof *g0);
  free(g0);
  run_free(&a);
}

/* The sharded step (the official distributed Muon): a process owning rank
 * 1 of 2 computes every other matrix's update, the gather brings the rest
 * (here from a process that owns every rank), and the result is
 * optimizer_step's bits; a gather that brings nothing does not give them. */
static const float *g_full_updates;
static int gather_from_full(void *ctx, float *u, pg_error *err) {
  (void)err;
  const run *r = ctx;
  for (int i = 0, j = 0; i < r->l.n_tensors; i++) {
    const gpt_tensor *t = &r->l.tensors[i];
    if (t->group != GPT_GROUP_MATRIX) continue;
    if (j++ % 2 != 1) memcpy(u + r->o.state_off[i], g_full_updates + r->o.state_off[i], t->numel * sizeof *u);
  }
  return 0;
}
static int gather_nothing(void *ctx, float *u, pg_error *err) {
  (void)ctx, (void)u, (void)err;
  return 0;
}

static void test_sharded_step(void **state) {
  (void)state;
  run ref, full, half, bad;
  run *runs[4] = {&ref, &full, &half, &bad};
  for (int k = 0; k < 4; k++) {
    run_init(runs[k], GPT_FP32, 0.0);
    fill(runs[k]->p, runs[k]->l.n_params, 7, 0.5f);
    fill(runs[k]->g, runs[k]->l.n_params, 8, 0.1f);
  }
  pg_error err;
  float norm;
  optimizer_step(&ref.o, &ref.l, ref.p, ref.g, 3, 0.75, GPT_FP32);
  optimizer_shard all = {1, 0, 1, gather_nothing, &full};
  assert_int_equal(optimizer_step_sharded(&full.o, &full.l, full.p, full.g, 3, 0.75, GPT_FP32, &all, &norm, &err), 0);
  assert_same_run(&ref, &full);
  g_full_updates = full.o.muon_u;
  optimizer_shard second = {2, 1, 1, gather_from_full, &half};
  assert_int_equal(optimizer_step_sharded(&half.o, &half.l, half.p, half.g, 3, 0.75, GPT_FP32, &second, &norm, &err), 0);
  assert_same_run(&ref, &half);
  optimizer_shard alone = {2, 1, 1, gather_nothing, &bad};
  bad.o.muon_u = calloc(bad.o.n_muon + 1, sizeof(float));
  assert_int_equal(optimizer_step_sharded(&bad.o, &bad.l, bad.p, bad.g, 3, 0.75, GPT_FP32, &alone, &norm, &err), 0);
  assert_true(memcmp(bad.p, ref.p, ref.l.n_params * sizeof *ref.p) != 0);
  assert_memory_equal(bad.o.muon_buf, ref.o.muon_buf, ref.o.n_muon * sizeof(float)); /* every buffer moves */
  for (int k = 0; k < 4; k++) run_free(runs[k]);
}

static void test_l2norm_blocks(void **state) {
  (void)state;
  size_t n = 3 * L2NORM_BLOCK + 17;
  float *x = malloc(n * sizeof *x);
  fill(x, n, 3, 2.0f);
  double ref = 0;
  for (size_t b = 0; b < n; b += L2NORM_BLOCK) {
    double s = 0;
    for (size_t i = b; i < n && i < b + L2NORM_BLOCK; i++) s += (double)x[i] * x[i];
    ref += s;
  }
  omp_set_num_threads(1);
  double s1 = l2norm_sumsq(x, n);
  omp_set_num_threads(2);
  double s2 = l2norm_sumsq(x, n);
  assert_true(s1 == ref && s2 == ref);
  free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ns_fp32_matches_official),
      cmocka_unit_test(test_ns_bf16_matches_official),
      cmocka_unit_test(test_ns_tolerance_catches_errors),
      cmocka_unit_test(test_muon_fp32_matches_official),
      cmocka_unit_test(test_muon_mixed_matches_official),
      cmocka_unit_test(test_adam_matches_official),
      cmocka_unit_test(test_adam_close_to_unfused),
      cmocka_unit_test(test_clip_matches_official),
      cmocka_unit_test(test_lr_mult_boundaries),
      cmocka_unit_test(test_momentum_warmup),
      cmocka_unit_test(test_sharded_step),
      cmocka_unit_test(test_official_defaults),
      cmocka_unit_test(test_planner),
      cmocka_unit_test(test_threads_bit_identical),
      cmocka_unit_test(test_checkpoint_round_trip),
      cmocka_unit_test(test_groups_and_precision),
      cmocka_unit_test(test_clip_in_step),
      cmocka_unit_test(test_l2norm_blocks),
  };
  return cmocka_run_group_tests(tests, load_golden, free_golden);
}
