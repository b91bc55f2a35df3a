/* Forward + backward throughput of pgolf's GPT for ci/bench-train.sh
 * (built there with cc against build/release/libpgolf.a; not part of the
 * library).
 *
 *   bench_train PRESET B T THREADS REPS [fp32|mixed]
 *
 * Initialises the preset's parameters (seed 1), draws fixed pseudo-random
 * tokens, runs one untimed warm-up step and then REPS timed steps of
 * gpt_forward + gpt_backward, then REPS timed optimizer steps (the
 * official Muon + Adam with its default hyperparameters, on the last
 * gradient), and prints one line:
 *   tokens=N best_s=S median_s=S best_tok_s=X median_tok_s=Y loss=L gemm=NAME
 *   opt_best_s=S
 * (a training step of the official 524,288 tokens runs the optimizer once
 * per 524,288 / N forward + backward passes of this size). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/gemm.h"
#include "trainer/gpt.h"
#include "trainer/model.h"
#include "trainer/model_init.h"
#include "trainer/optimizer.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: bench_train PRESET B T THREADS REPS [fp32|mixed]\n");
    return 2;
  }
  gpt_config cfg;
  if (gpt_config_preset(argv[1], &cfg)) {
    fprintf(stderr, "bench_train: unknown preset %s\n", argv[1]);
    return 2;
  }
  int B = atoi(argv[2]), T = atoi(argv[3]), threads = atoi(argv[4]), reps = atoi(argv[5]);
  gpt_precision prec = argc > 6 && !strcmp(argv[6], "mixed") ? GPT_MIXED : GPT_FP32;
  if (B < 1 || T < 1 || threads < 1 || reps < 1 || reps > 1000) {
    fprintf(stderr, "bench_train: bad numbers\n");
    return 2;
  }
  omp_set_num_threads(threads);
  /* PGOLF_BENCH_GEMM=avx2|avx512|fmaf: the micro-kernel a narrower CPU
   * would run (the bits are the same on every path). */
  const char *isa = getenv("PGOLF_BENCH_GEMM");
  if (isa && *isa) {
    if (!strcmp(isa, "avx2")) gemm_select_kernel(GEMM_AVX2);
    else if (!strcmp(isa, "avx512")) gemm_select_kernel(GEMM_AVX512);
    else if (!strcmp(isa, "fmaf")) gemm_select_kernel(GEMM_FMAF);
    else {
      fprintf(stderr, "bench_train: PGOLF_BENCH_GEMM=%s: not avx2, avx512 or fmaf\n", isa);
      return 2;
    }
  }
  pg_error err = {0};
  gpt_layout l;
  if (gpt_layout_init(&l, &cfg, &err)) {
    pg_error_print(&err);
    return 2;
  }
  float *flat = calloc(l.n_params, sizeof *flat), *gflat = calloc(l.n_params, sizeof *gflat);
  uint16_t *x = malloc((size_t)B * T * sizeof *x), *y = malloc((size_t)B * T * sizeof *y);
  gpt_acts *a = gpt_acts_new(&l, B, T, &err);
  if (!flat || !gflat || !x || !y || !a || gpt_init_params(&l, flat, 1, &err)) {
    pg_error_print(&err);
    return 2;
  }
  uint32_t s = 12345u;
  for (int i = 0; i < B * T; i++) {
    s = s * 1664525u + 1013904223u;
    x[i] = (uint16_t)((s >> 8) % (uint32_t)cfg.vocab_size);
    s = s * 1664525u + 1013904223u;
    y[i] = (uint16_t)((s >> 8) % (uint32_t)cfg.vocab_size);
  }
  gpt_params p, g;
  gpt_params_bind(&p, &l, flat);
  gpt_params_bind(&g, &l, gflat);
  double *t = malloc((size_t)(reps + 1) * sizeof *t);
  float loss = 0.0f;
  for (int r = 0; r <= reps; r++) { /* r = 0 warms up */
    double t0 = now();
    loss = gpt_forward(&l, &p, a, x, y, B, T, prec, NULL);
    gpt_backward(&l, &p, &g, a, x, y, B, T, prec, 1.0f);
    t[r] = now() - t0;
  }
  optim_hparams hp;
  optim_hparams_default(&hp);
  optimizer opt;
  if (optimizer_init(&opt, &l, &hp, &err)) {
    pg_error_print(&err);
    return 2;
  }
  double opt_best = 1e30;
  for (int r = 0; r <= reps; r++) { /* r = 0 warms up */
    double t0 = now();
    optimizer_step(&opt, &l, flat, gflat, r, 1.0, prec);
    double dt = now() - t0;
    if (r > 0 && dt < opt_best) opt_best = dt;
  }
  optimizer_free(&opt);
  qsort(t + 1, (size_t)reps, sizeof *t, cmp_double);
  double best = t[1], median = t[1 + reps / 2], tokens = (double)B * T;
  printf("tokens=%d best_s=%.6f median_s=%.6f best_tok_s=%.1f median_tok_s=%.1f loss=%.6f "
         "gemm=%s opt_best_s=%.6f\n",
         B * T, best, median, tokens / best, tokens / median, loss, gemm_kernel_name(), opt_best);
  free(t);
  gpt_params_free(&p);
  gpt_params_free(&g);
  gpt_acts_free(a);
  free(flat);
  free(gflat);
  free(x);
  free(y);
  gpt_layout_free(&l);
  return 0;
}
