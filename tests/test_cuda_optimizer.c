/* The optimizer on the GPU (trainer/optimizer_cuda.c) against
 * optimizer_step on an optimizer with the GPU's trees: the tiny preset's
 * layout, random parameters and gradients, three steps (the momentum
 * warm-up moving, the learning-rate multiplier changing, gradient clipping
 * on), fp32 and mixed precision. Compared after every step: parameters,
 * gradients (rounded and clipped in place), the clip norm, and the state
 * (Adam's moments, Muon's momentum, the step count).
 *
 * On ci/cuda-emu.sh's stand-in the products are the CPU's: everything must
 * agree bit for bit. On a GPU the Newton-Schulz products are cuBLASLt's:
 * the Adam tensors and every state but Muon's must still agree bit for
 * bit (elementwise kernels, tree norms), Muon's parameters within a
 * tolerance of their update, and a second run must repeat the bits. Skips
 * without a GPU. */
#include "tests/test_util.h"

#include <math.h>

#include "kernels/newton_schulz.h"
#include "trainer/model_init.h"
#include "trainer/optimizer.h"
#include "trainer/optimizer_cuda.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

/* Muon's parameter error relative to the CPU's update, on a GPU. */
#define MUON_RTOL_FP32 1e-3
#define MUON_RTOL_MIXED 5e-2

/* got equals want bit for bit, or (Muon tensors on a GPU) within rtol of
 * the update want - before. */
static void compare_params(const gpt_layout *l, const float *got, const float *want,
                           const float *before, int exact, double rtol) {
  for (int t = 0; t < l->n_tensors; t++) {
    const gpt_tensor *ts = &l->tensors[t];
    const float *g = got + ts->offset, *w = want + ts->offset, *b = before + ts->offset;
    if (exact || ts->group != GPT_GROUP_MATRIX) {
      assert_same_bits(g, w, ts->numel, ts->name);
      continue;
    }
    double e2 = 0, u2 = 0;
    for (size_t i = 0; i < ts->numel; i++) {
      e2 += ((double)g[i] - w[i]) * ((double)g[i] - w[i]);
      u2 += ((double)w[i] - b[i]) * ((double)w[i] - b[i]);
    }
    if (!(sqrt(e2) <= rtol * sqrt(u2))) {
      fprintf(stderr, "%s: |gpu - cpu| %.3g against an update of %.3g\n", ts->name, sqrt(e2),
              sqrt(u2));
      fail();
    }
  }
}

static void one_mode(gpt_precision prec) {
  gpt_config cfg;
  gpt_layout l;
  pg_error err;
  assert_int_equal(gpt_config_preset("tiny", &cfg), 0);
  assert_int_equal(gpt_layout_init(&l, &cfg, &err), 0);
  optim_hparams hp;
  optim_hparams_default(&hp);
  hp.grad_clip_norm = 0.5;
  hp.muon_momentum_warmup_steps = 4;
  const size_t np = l.n_params;
  float *p = malloc(np * sizeof *p), *before = malloc(np * sizeof *p), *g0 = malloc(np * sizeof *p);
  float *g = malloc(np * sizeof *p), *got = malloc(np * sizeof *p);
  assert_true(p && before && g0 && g && got);
  assert_int_equal(gpt_init_params(&l, p, 7, &err), 0);
  kc_rng rng = {99};
  for (size_t i = 0; i < np; i++) p[i] += (float)(0.02 * kc_uniform(&rng));
  optimizer cpu, dev_state;
  assert_int_equal(optimizer_init(&cpu, &l, &hp, &err), 0);
  assert_int_equal(optimizer_init(&dev_state, &l, &hp, &err), 0);
  cpu.tree = 1;
  matmul_cuda_ctx *mm = NULL;
  assert_int_equal(matmul_cuda_init(&mm, 32u << 20, &err), 0);
  optimizer_cuda *o = NULL;
  assert_int_equal(optimizer_cuda_new(&o, &l, &hp, mm, 0, &err), 0);
  float *d_p = to_device(p, np), *d_g = to_device(p, np);
  const int exact = on_stand_in();
  const double rtol = prec == GPT_MIXED ? MUON_RTOL_MIXED : MUON_RTOL_FP32;
  const double lr_mult[] = {1.0, 0.7, 0.7};
  for (int step = 0; step < 3; step++) {
    kc_fill(&rng, g0, np, 0.05);
    memcpy(g, g0, np * sizeof *g);
    memcpy(before, p, np * sizeof *p);
    float want_norm = optimizer_step(&cpu, &l, p, g, step, lr_mult[step], prec);
    to_device_again(d_g, g0, np);
    float norm = -1.0f;
    assert_int_equal(optimizer_cuda_step(o, d_p, d_g, step, lr_mult[step], prec, &norm, &err), 0);
    CK(cudaDeviceSynchronize());
    assert_memory_equal(&norm, &want_norm, sizeof norm);
    from_device(got, d_g, np);
    assert_same_bits(got, g, np, "clipped gradients");
    from_device(got, d_p, np);
    compare_params(&l, got, p, before, exact, rtol);
    if (!exact) to_device_again(d_p, p, np); /* each step from the CPU's parameters */
    assert_int_equal(optimizer_cuda_state_get(o, &dev_state, &err), 0);
    assert_same_bits(dev_state.adam_m, cpu.adam_m, cpu.n_adam, "adam exp_avg");
    assert_same_bits(dev_state.adam_v, cpu.adam_v, cpu.n_adam, "adam exp_avg_sq");
    assert_memory_equal(&dev_state.adam_step, &cpu.adam_step, sizeof cpu.adam_step);
    if (exact) assert_same_bits(dev_state.muon_buf, cpu.muon_buf, cpu.n_muon, "muon momentum");
  }
  CK(cudaFree(d_p));
  CK(cudaFree(d_g));
  optimizer_cuda_free(o);
  matmul_cuda_free(mm);
  optimizer_free(&cpu);
  optimizer_free(&dev_state);
  gpt_layout_free(&l);
  free(p), free(before), free(g0), free(g), free(got);
}

static void test_optimizer_fp32(void **state) {
  (void)state;
  NEED_GPU();
  one_mode(GPT_FP32);
}

static void test_optimizer_mixed(void **state) {
  (void)state;
  NEED_GPU();
  one_mode(GPT_MIXED);
}

/* |got - want| / |want| over n floats. */
static double rel_diff(const float *got, const float *want, size_t n) {
  double e2 = 0, w2 = 0;
  for (size_t i = 0; i < n; i++) {
    e2 += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
    w2 += (double)want[i] * want[i];
  }
  return sqrt(e2 / w2);
}

/* One shape: `batch` random matrices (one: the unbatched entry point; more:
 * newton_schulz5_batch_cuda, the optimizer's groups), each against the
 * CPU's newton_schulz5 of its own matrix with the GPU's norm tree; fp32
 * and bf16; in place (out = g) and not. The work is exactly batch times
 * newton_schulz5_work_floats, with a guard after it that must stay
 * untouched. Bit for bit on the stand-in; on a GPU within the Muon
 * tolerance, and bitwise from run to run. */
static void ns_case(matmul_cuda_ctx *mm, kc_rng *rng, int r, int c, int batch, float *d_norm,
                    double *d_sumsq) {
  const size_t guard = 64, n = (size_t)r * c, nb = n * batch;
  const size_t nw = newton_schulz5_work_floats(r, c) * batch;
  float *g = malloc(nb * sizeof *g), *want = malloc(nb * sizeof *g), *got = malloc(nb * sizeof *g);
  float *again = malloc(nb * sizeof *g), *work = malloc((nw + guard) * sizeof *work);
  assert_true(g && want && got && again && work);
  kc_fill(rng, g, nb, 0.3);
  for (size_t i = 0; i < nw + guard; i++) work[i] = -7.0f;
  float *d_work = to_device(work, nw + guard);
  pg_error err;
  for (int mode = 0; mode < 4; mode++) {
    const int flags = (mode & 1) ? KERNEL_BF16 : 0, in_place = mode >> 1;
    for (int b = 0; b < batch; b++)
      newton_schulz5(want + b * n, g + b * n, r, c, 5, flags | KERNEL_TREE, work);
    for (int run = 0; run < 2; run++) {
      float *d_g = to_device(g, nb), *d_out = in_place ? d_g : to_device(g, nb);
      int rc = batch == 1 ? newton_schulz5_cuda(mm, d_out, d_g, r, c, 5, flags, d_work, d_norm,
                                                d_sumsq, 0, &err)
                          : newton_schulz5_batch_cuda(mm, d_out, d_g, batch, r, c, 5, flags, d_work,
                                                      d_norm, d_sumsq, 0, &err);
      assert_int_equal(rc, 0);
      CK(cudaDeviceSynchronize());
      from_device(run ? again : got, d_out, nb);
      if (!in_place) CK(cudaFree(d_out));
      CK(cudaFree(d_g));
    }
    char what[96];
    snprintf(what, sizeof what, "newton_schulz %d of %dx%d flags=%d%s", batch, r, c, flags,
             in_place ? " in place" : "");
    assert_same_bits(again, got, nb, what); /* run to run */
    if (on_stand_in()) {
      assert_same_bits(got, want, nb, what);
    } else {
      for (int b = 0; b < batch; b++) {
        double e = rel_diff(got + b * n, want + b * n, n);
        print_message("  %s, matrix %d: relative difference %.3g\n", what, b, e);
        assert_true(e <= (flags ? MUON_RTOL_MIXED : MUON_RTOL_FP32));
      }
    }
    if (flags)
      for (size_t i = 0; i < nb; i++) assert_true(bf16_is_exact(got[i]));
  }
  float *tail = malloc(guard * sizeof *tail);
  assert_non_null(tail);
  from_device(tail, d_work + nw, guard);
  for (size_t i = 0; i < guard; i++) assert_true(tail[i] == -7.0f); /* work's bound kept */
  CK(cudaFree(d_work));
  free(g), free(want), free(got), free(again), free(work), free(tail);
}

/* Newton-Schulz alone, on shapes the model does not have: wide, tall
 * (turned in and out), square, one row, odd sizes; one matrix and a
 * batch of three. */
static void test_newton_schulz_shapes(void **state) {
  (void)state;
  NEED_GPU();
  static const int shapes[][2] = {{7, 19}, {19, 7}, {16, 16}, {1, 9}, {40, 24}};
  enum { MAX_BATCH = 3 };
  matmul_cuda_ctx *mm = NULL;
  pg_error err;
  assert_int_equal(matmul_cuda_init(&mm, 32u << 20, &err), 0);
  kc_rng rng = {5};
  float *d_norm = NULL;
  double *d_sumsq = NULL;
  CK(cudaMalloc((void **)&d_norm, MAX_BATCH * sizeof *d_norm));
  CK(cudaMalloc((void **)&d_sumsq, MAX_BATCH * sizeof *d_sumsq));
  for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
    for (int batch = 1; batch <= MAX_BATCH; batch += MAX_BATCH - 1)
      ns_case(mm, &rng, shapes[k][0], shapes[k][1], batch, d_norm, d_sumsq);
  CK(cudaFree(d_norm));
  CK(cudaFree(d_sumsq));
  matmul_cuda_free(mm);
}

/* The Newton-Schulz launcher refuses a bad shape before touching the
 * device. No GPU needed. */
static void test_newton_schulz_bad_shape(void **state) {
  (void)state;
  pg_error err;
  assert_int_equal(newton_schulz5_cuda(NULL, NULL, NULL, 0, 4, 5, 0, NULL, NULL, NULL, 0, &err),
                   -1);
  assert_non_null(strstr(err.msg, "newton_schulz: bad shape"));
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_optimizer_fp32 no_cuda
#define test_optimizer_mixed no_cuda
#define test_newton_schulz_bad_shape no_cuda
#define test_newton_schulz_shapes no_cuda

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_newton_schulz_bad_shape),
      cmocka_unit_test(test_newton_schulz_shapes),
      cmocka_unit_test(test_optimizer_fp32),
      cmocka_unit_test(test_optimizer_mixed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
