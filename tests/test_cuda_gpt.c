/* The GPT on the GPU (trainer/gpt_cuda.c) against the CPU model with the
 * GPU's reduction trees (gpt_acts_use_tree_refs): the tiny preset, the
 * official initialisation with every parameter perturbed (so no gradient
 * is trivially zero), a batch of 2 x 48 tokens, fp32 and mixed precision;
 * the loss, then every gradient after a backward with a loss scale.
 *
 * On ci/cuda-emu.sh's CPU stand-in the products are the CPU's, so the two
 * must agree bit for bit: this checks the composition (every kernel, flag,
 * rounding point and buffer of gpt_cuda.c against gpt.c). On a GPU the
 * products are cuBLASLt's, so the check is a tolerance (below), and run to
 * run the bits must repeat. Skips without a GPU. */
#include "tests/test_util.h"

#include <math.h>
#include <sys/wait.h>

#include "kernels/matmul_split.h"
#include "trainer/gpt.h"
#include "trainer/gpt_cuda.h"
#include "trainer/model_init.h"
#include "tests/cuda_check.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA

enum { B = 2, T = 48 };

/* On a GPU, cuBLASLt's order moves each product by a few float32 ulps;
 * through the bf16 roundings of the mixed model that flips some roundings
 * by one bf16 ulp. Bounds on the loss (relative) and on each gradient
 * tensor's error in L2 relative to its norm: */
#define LOSS_RTOL_FP32 1e-5
#define GRAD_RTOL_FP32 1e-3
#define LOSS_RTOL_MIXED 2e-3
#define GRAD_RTOL_MIXED 5e-2

/* On a GPU: each gradient tensor within the precision's tolerance of the
 * CPU's, in L2 relative to its norm. In mixed precision, where the CPU's
 * float32 gradients (`noise`) are given, the bound also allows the L2
 * distance between the CPU's mixed and float32 gradients: a flipped bf16
 * rounding moves a gradient by the size of its terms, not of their sum, so
 * a tensor whose terms cancel (a one-element q_gain summing thousands of
 * products to 1e-6) is held to the rounding noise its own terms carry, as
 * measured by the mixed model against the float32 one. */
static void grads_within(const gpt_layout *l, const float *got, const float *want,
                         const float *noise, gpt_precision prec, const char *what) {
  double gtol = prec == GPT_MIXED ? GRAD_RTOL_MIXED : GRAD_RTOL_FP32;
  for (int t = 0; t < l->n_tensors; t++) {
    const gpt_tensor *ts = &l->tensors[t];
    double e2 = 0, n2 = 0, r2 = 0;
    for (size_t i = ts->offset; i < ts->offset + ts->numel; i++) {
      double dlt = (double)got[i] - want[i];
      e2 += dlt * dlt;
      n2 += (double)want[i] * want[i];
      if (noise) r2 += ((double)noise[i] - want[i]) * ((double)noise[i] - want[i]);
    }
    if (!(sqrt(e2) <= gtol * sqrt(n2) + sqrt(r2) + 1e-30)) {
      fprintf(stderr, "%s %s: |gpu - cpu| %.3g, |cpu| %.3g, |cpu mixed - cpu fp32| %.3g\n",
              what, ts->name, sqrt(e2), sqrt(n2), sqrt(r2));
      fail();
    }
  }
}

/* The tiny preset (head_dim 16: in mixed precision the tensor-core
 * attention, its operands packed), or with wide_heads one head of 128 (the
 * CUDA-core attention, its operands floats). */
static void one_mode(gpt_precision prec, int wide_heads) {
  gpt_config cfg;
  assert_int_equal(gpt_config_preset("tiny", &cfg), 0);
  if (wide_heads) cfg.model_dim = 128, cfg.num_heads = 1, cfg.num_kv_heads = 1;
  gpt_layout l;
  pg_error err;
  assert_int_equal(gpt_layout_init(&l, &cfg, &err), 0);
  const size_t np = l.n_params, N = (size_t)B * T;
  float *params = malloc(np * sizeof *params), *grads = calloc(np, sizeof *grads);
  float *got = malloc(np * sizeof *got);
  uint16_t *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  assert_true(params && grads && got && x && y);
  assert_int_equal(gpt_init_params(&l, params, 1337, &err), 0);
  kc_rng rng = {4242};
  for (size_t i = 0; i < np; i++) params[i] += (float)(0.02 * kc_uniform(&rng));
  for (size_t i = 0; i < N; i++) {
    x[i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
    y[i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
  }
  /* The CPU with the GPU's trees. */
  gpt_acts *a = gpt_acts_new(&l, B, T, &err);
  assert_non_null(a);
  gpt_acts_use_tree_refs(a);
  gpt_params p, g;
  gpt_params_bind(&p, &l, params);
  gpt_params_bind(&g, &l, grads);
  float want = gpt_forward(&l, &p, a, x, y, B, T, prec, NULL);
  gpt_backward(&l, &p, &g, a, x, y, B, T, prec, 0.5f);
  /* In mixed precision, the CPU's float32 gradients: the rounding noise
   * grads_within allows. */
  float *ref32 = NULL;
  if (prec == GPT_MIXED) {
    gpt_params g32;
    assert_non_null(ref32 = calloc(np, sizeof *ref32));
    gpt_params_bind(&g32, &l, ref32);
    gpt_forward(&l, &p, a, x, y, B, T, GPT_FP32, NULL);
    gpt_backward(&l, &p, &g32, a, x, y, B, T, GPT_FP32, 0.5f);
    gpt_params_free(&g32);
  }
  /* The GPU, twice from the same state. */
  gpt_cuda *gc = NULL;
  assert_int_equal(gpt_cuda_new(&gc, &l, B, T, prec, 0, &err), 0);
  int exact = on_stand_in();
  float first = NAN;
  for (int rep = 0; rep < 2; rep++) {
    CK(cudaMemcpy(gpt_cuda_params(gc), params, np * sizeof *params, cudaMemcpyHostToDevice));
    CK(cudaMemset(gpt_cuda_grads(gc), 0, np * sizeof *got));
    float loss = NAN;
    assert_int_equal(gpt_cuda_forward(gc, x, y, &loss, &err), 0);
    assert_int_equal(gpt_cuda_backward(gc, 0.5f, &err), 0);
    CK(cudaDeviceSynchronize());
    from_device(got, gpt_cuda_grads(gc), np);
    if (rep == 1) assert_memory_equal(&loss, &first, sizeof loss); /* run to run: bitwise */
    first = loss;
    if (exact) {
      assert_memory_equal(&loss, &want, sizeof loss);
      assert_same_bits(got, grads, np, prec == GPT_MIXED ? "gpt grads (mixed)" : "gpt grads");
      continue;
    }
    double ltol = prec == GPT_MIXED ? LOSS_RTOL_MIXED : LOSS_RTOL_FP32;
    if (!(fabs((double)loss - want) <= ltol * fabs((double)want))) {
      fprintf(stderr, "gpt loss: gpu %.9g cpu %.9g\n", (double)loss, (double)want);
      fail();
    }
    grads_within(&l, got, grads, ref32, prec, "gpt grad");
  }
  gpt_cuda_free(gc);
  gpt_acts_free(a);
  gpt_params_free(&p);
  gpt_params_free(&g);
  gpt_layout_free(&l);
  free(params), free(grads), free(got), free(x), free(y), free(ref32);
}

static void test_gpt_fp32(void **state) {
  (void)state;
  NEED_GPU();
  one_mode(GPT_FP32, 0);
}

static void test_gpt_mixed(void **state) {
  (void)state;
  NEED_GPU();
  one_mode(GPT_MIXED, 0);
}

static void test_gpt_mixed_wide_heads(void **state) {
  (void)state;
  NEED_GPU();
  one_mode(GPT_MIXED, 1);
}

/* pgolf eval's padding (trainer/eval_cuda.h): at one shape, a position's
 * loss does not depend on the tokens after it in its row nor on the other
 * rows, bit for bit, on a GPU as on the stand-in; and the shape can shrink
 * within gpt_cuda_new's, never grow past it. */
static void test_gpt_padding(void **state) {
  (void)state;
  NEED_GPU();
  gpt_config cfg;
  assert_int_equal(gpt_config_preset("tiny", &cfg), 0);
  gpt_layout l;
  pg_error err;
  assert_int_equal(gpt_layout_init(&l, &cfg, &err), 0);
  enum { KEEP = 20 }; /* positions of row 0 kept; everything after them changes */
  const size_t np = l.n_params, N = (size_t)B * T;
  float *params = malloc(np * sizeof *params), nll[2][B * T], loss;
  uint16_t x[2][B * T], y[2][B * T];
  assert_non_null(params);
  assert_int_equal(gpt_init_params(&l, params, 1337, &err), 0);
  kc_rng rng = {77};
  for (size_t i = 0; i < N; i++) {
    x[0][i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
    y[0][i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
    x[1][i] = i < KEEP ? x[0][i] : (uint16_t)((x[0][i] + 1 + i) % cfg.vocab_size);
    y[1][i] = i < KEEP ? y[0][i] : 0;
  }
  gpt_cuda *gc = NULL;
  assert_int_equal(gpt_cuda_new(&gc, &l, B, T, GPT_MIXED, 0, &err), 0);
  CK(cudaMemcpy(gpt_cuda_params(gc), params, np * sizeof *params, cudaMemcpyHostToDevice));
  for (int k = 0; k < 2; k++) {
    assert_int_equal(gpt_cuda_forward(gc, x[k], y[k], &loss, &err), 0);
    from_device(nll[k], gpt_cuda_token_losses(gc), N);
  }
  assert_memory_equal(nll[0], nll[1], KEEP * sizeof(float));
  assert_int_equal(gpt_cuda_set_shape(gc, B + 1, T, &err), -1);
  assert_non_null(strstr(err.msg, "outside the device's"));
  assert_int_equal(gpt_cuda_set_shape(gc, B, T + 1, &err), -1);
  assert_int_equal(gpt_cuda_set_shape(gc, 1, KEEP, &err), 0);
  assert_int_equal(gpt_cuda_forward(gc, x[0], y[0], &loss, &err), 0);
  gpt_cuda_free(gc);
  gpt_layout_free(&l);
  free(params);
}

/* A batch of more than MATMUL_SPLIT_ROWS tokens, where the weight
 * gradients are split into chunks (kernels/matmul_split.h) on the GPU and,
 * with the GPU's trees, on the CPU: a small model (so the batch is cheap
 * on the stand-in), fp32 and mixed, every gradient compared as in
 * one_mode. The CPU's split must also differ from its unsplit sums
 * somewhere, or this test would not be testing the split. */
static void split_mode(gpt_precision prec) {
  const gpt_config cfg = {.vocab_size = 96, .num_layers = 2, .model_dim = 32, .num_heads = 2,
                          .num_kv_heads = 1, .mlp_mult = 2, .seq_len = 32, .rope_base = 10000.0f,
                          .logit_softcap = 30.0f, .qk_gain_init = 1.5f,
                          .tied_embed_init_std = 0.005f};
  enum { SB = MATMUL_SPLIT_ROWS / 32 + 1, ST = 32 }; /* 8,224 tokens: two chunks */
  gpt_layout l;
  pg_error err;
  assert_int_equal(gpt_layout_init(&l, &cfg, &err), 0);
  const size_t np = l.n_params, N = (size_t)SB * ST;
  float *params = malloc(np * sizeof *params), *want = calloc(np, sizeof *want);
  float *plain = calloc(np, sizeof *plain), *got = malloc(np * sizeof *got);
  uint16_t *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  assert_true(params && want && plain && got && x && y);
  assert_int_equal(gpt_init_params(&l, params, 7, &err), 0);
  kc_rng rng = {99};
  for (size_t i = 0; i < np; i++) params[i] += (float)(0.02 * kc_uniform(&rng));
  for (size_t i = 0; i < N; i++) {
    x[i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
    y[i] = (uint16_t)((kc_uniform(&rng) + 1.0) * 0.5 * cfg.vocab_size) % cfg.vocab_size;
  }
  gpt_params p, g, gp;
  gpt_params_bind(&p, &l, params);
  gpt_params_bind(&g, &l, want);
  gpt_params_bind(&gp, &l, plain);
  gpt_acts *a = gpt_acts_new(&l, SB, ST, &err);
  assert_non_null(a);
  gpt_forward(&l, &p, a, x, y, SB, ST, prec, NULL);
  gpt_backward(&l, &p, &gp, a, x, y, SB, ST, prec, 1.0f);
  gpt_acts_use_tree_refs(a);
  float loss_want = gpt_forward(&l, &p, a, x, y, SB, ST, prec, NULL);
  gpt_backward(&l, &p, &g, a, x, y, SB, ST, prec, 1.0f);
  assert_true(memcmp(want, plain, np * sizeof *want) != 0);
  gpt_cuda *gc = NULL;
  float loss = NAN;
  assert_int_equal(gpt_cuda_new(&gc, &l, SB, ST, prec, 0, &err), 0);
  CK(cudaMemcpy(gpt_cuda_params(gc), params, np * sizeof *params, cudaMemcpyHostToDevice));
  OK(gpt_cuda_forward(gc, x, y, &loss, &err), err);
  OK(gpt_cuda_backward(gc, 1.0f, &err), err);
  CK(cudaDeviceSynchronize());
  from_device(got, gpt_cuda_grads(gc), np);
  if (on_stand_in()) {
    assert_memory_equal(&loss, &loss_want, sizeof loss);
    assert_same_bits(got, want, np, "split gradients");
  } else {
    grads_within(&l, got, want, NULL, prec, "split grad");
  }
  gpt_cuda_free(gc);
  gpt_acts_free(a);
  gpt_params_free(&p), gpt_params_free(&g), gpt_params_free(&gp);
  gpt_layout_free(&l);
  free(params), free(want), free(plain), free(got), free(x), free(y);
}

static void test_gpt_split_fp32(void **state) {
  (void)state;
  NEED_GPU();
  split_mode(GPT_FP32);
}

static void test_gpt_split_mixed(void **state) {
  (void)state;
  NEED_GPU();
  split_mode(GPT_MIXED);
}

/* Without a GPU the model refuses with the runtime's reason. */
static int refuses_without_device(void) {
  gpt_config cfg;
  gpt_layout l;
  pg_error err;
  if (gpt_config_preset("tiny", &cfg) || gpt_layout_init(&l, &cfg, &err)) return 2;
  gpt_cuda *gc = (gpt_cuda *)&l;
  int refused = gpt_cuda_new(&gc, &l, 1, 8, GPT_FP32, 0, &err) == -1 && !gc &&
                strstr(err.msg, "no CUDA device") != NULL;
  if (refused) fprintf(stderr, "refused as: %s\n", err.msg);
  gpt_layout_free(&l);
  return refused ? 0 : 1;
}

/* With a GPU present the refusal is checked in a fresh process of this
 * test that sees none (CUDA_VISIBLE_DEVICES empty, read when the runtime
 * starts), so a GPU machine runs it too instead of skipping it. */
static void test_gpt_no_device(void **state) {
  (void)state;
  if (gpu_ready()) {
    assert_int_equal(refuses_without_device(), 0);
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    execl("/proc/self/exe", "test_cuda_gpt", "--refuses-without-device", (char *)NULL);
    _exit(127);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

#else

static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_gpt_fp32 no_cuda
#define test_gpt_mixed no_cuda
#define test_gpt_mixed_wide_heads no_cuda
#define test_gpt_no_device no_cuda
#define test_gpt_padding no_cuda
#define test_gpt_split_fp32 no_cuda
#define test_gpt_split_mixed no_cuda

#endif

int main(int argc, char **argv) {
#ifdef PGOLF_HAVE_CUDA
  if (argc == 2 && strcmp(argv[1], "--refuses-without-device") == 0) return refuses_without_device();
#else
  (void)argc, (void)argv;
#endif
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gpt_no_device),
      cmocka_unit_test(test_gpt_fp32),
      cmocka_unit_test(test_gpt_mixed),
      cmocka_unit_test(test_gpt_mixed_wide_heads),
      cmocka_unit_test(test_gpt_padding),
      cmocka_unit_test(test_gpt_split_fp32),
      cmocka_unit_test(test_gpt_split_mixed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
