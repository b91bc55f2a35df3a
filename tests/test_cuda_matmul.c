/* cuBLASLt products against the CPU's (kernels/matmul.h): within the
 * documented tolerance, bit for bit run to run, one recorded algorithm per
 * shape. Without a GPU the initialisation must refuse cleanly (asserted);
 * the GPU tests skip with the reason. */
#include "tests/test_util.h"

#include <jansson.h>

#include <math.h>

#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/matmul.h"
#include "tests/kernel_check.h"

#ifdef PGOLF_HAVE_CUDA
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>

#define CK(call) assert_int_equal((call), cudaSuccess)

static int have_gpu(char *why, size_t cap) {
  pg_error err;
  int n;
  if (cuda_device_count(&n, &err) == 0) return 1;
  snprintf(why, cap, "needs a GPU: %s", err.msg);
  return 0;
}

/* cuBLASLt is opened at first use, not linked (kernels/matmul.cu): a
 * library that is missing or is not cuBLASLt gives no version (a failed
 * open is not remembered), the real one the headers' major version. No
 * GPU needed; first in the list, before any context opens the library. */
static void test_cublaslt_opened_at_first_use(void **state) {
  (void)state;
  setenv("PGOLF_CUBLASLT_LIBRARY", "/nonexistent/libcublasLt.so", 1);
  assert_int_equal(matmul_cuda_lt_version(), 0);
  setenv("PGOLF_CUBLASLT_LIBRARY", "libz.so.1", 1);
  assert_int_equal(matmul_cuda_lt_version(), 0);
  unsetenv("PGOLF_CUBLASLT_LIBRARY");
  assert_int_equal(matmul_cuda_lt_version() / 10000, CUBLAS_VER_MAJOR);
}

/* Where there is no GPU, init fails with the runtime's reason and leaves
 * no context; where there is one it succeeds. Either way a real outcome. */
static void test_init_refuses_or_succeeds(void **state) {
  (void)state;
  char why[600];
  int gpu = have_gpu(why, sizeof why);
  matmul_cuda_ctx *c = (matmul_cuda_ctx *)1;
  pg_error err;
  int rc = matmul_cuda_init(&c, 1 << 20, &err);
  if (gpu) {
    assert_int_equal(rc, 0);
    assert_non_null(c);
    matmul_cuda_free(c);
  } else {
    assert_int_equal(rc, -1);
    assert_null(c);
    assert_non_null(strstr(err.msg, "no CUDA device"));
  }
}

/* Host float32 values (bf16-exact under KERNEL_BF16) to a device array of
 * the kernel's element type, and back. */
static void *upload(const float *h, size_t n, int bf16) {
  void *d = NULL;
  size_t es = bf16 ? 2 : 4;
  CK(cudaMalloc(&d, n * es));
  if (bf16) {
    uint16_t *t = malloc(n * 2);
    for (size_t i = 0; i < n; i++) t[i] = bf16_from_float(h[i]);
    CK(cudaMemcpy(d, t, n * 2, cudaMemcpyHostToDevice));
    free(t);
  } else {
    CK(cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice));
  }
  return d;
}

static void download(float *h, const void *d, size_t n, int bf16) {
  if (bf16) {
    uint16_t *t = malloc(n * 2);
    CK(cudaMemcpy(t, d, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++) h[i] = bf16_to_float(t[i]);
    free(t);
  } else {
    CK(cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost));
  }
}

/* |gpu - cpu| <= RTOL * k * sum|a b| per element, plus one bf16 ulp of the
 * result when both are rounded to bf16 (two float32 sums a hair apart can
 * round to neighbouring bf16 values). */
static void assert_within(const float *gpu, const float *cpu, const float *absprod, size_t n, int k,
                          int bf16, const char *what) {
  for (size_t i = 0; i < n; i++) {
    double tol = MATMUL_CUDA_RTOL * k * absprod[i] + (bf16 ? fabs(cpu[i]) * 0x1p-7 : 0.0);
    if (!(fabs((double)gpu[i] - cpu[i]) <= tol)) {
      fprintf(stderr, "%s: element %zu gpu %.9g cpu %.9g tol %.3g\n", what, i, (double)gpu[i],
              (double)cpu[i], tol);
      fail();
    }
  }
}

static void test_products_within_tolerance_and_repeatable(void **state) {
  (void)state;
  char why[600];
  if (!have_gpu(why, sizeof why)) {
    fprintf(stderr, "skipped: %s\n", why);
    skip();
  }
  const int shapes[][3] = {{64, 512, 1536}, {37, 100, 77}, {1024, 512, 512}};
  kc_rng rng = {23};
  matmul_cuda_ctx *c;
  pg_error err;
  assert_int_equal(matmul_cuda_init(&c, 32u << 20, &err), 0);
  for (int s = 0; s < 3; s++) {
    int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
    for (int bf16 = 0; bf16 < 2; bf16++) {
      int flags = bf16 ? KERNEL_BF16 : 0;
      size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
      float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4), *yc = malloc(ny * 4);
      float *ax = malloc(nx * 4), *aw = malloc(nw * 4), *ay = malloc(ny * 4);
      kc_fill(&rng, x, nx, 1.0);
      kc_fill(&rng, w, nw, 0.1);
      if (bf16) bf16_round_array(x, nx), bf16_round_array(w, nw);
      for (size_t i = 0; i < nx; i++) ax[i] = fabsf(x[i]);
      for (size_t i = 0; i < nw; i++) aw[i] = fabsf(w[i]);
      void *dx = upload(x, nx, bf16), *dw = upload(w, nw, bf16), *dy = upload(y, ny, bf16);
      /* forward */
      matmul_forward_simple(yc, x, w, n, in, out, flags);
      matmul_forward_simple(ay, ax, aw, n, in, out, 0);
      assert_int_equal(matmul_forward_cuda(c, dy, dx, dw, n, in, out, flags, 0, &err), 0);
      CK(cudaDeviceSynchronize());
      download(y, dy, ny, bf16);
      assert_within(y, yc, ay, ny, in, bf16, "forward");
      float *again = malloc(ny * 4);
      assert_int_equal(matmul_forward_cuda(c, dy, dx, dw, n, in, out, flags, 0, &err), 0);
      CK(cudaDeviceSynchronize());
      download(again, dy, ny, bf16);
      assert_memory_equal(again, y, ny * 4);
      /* backward input: dx = dy W, with dy := x-shaped data reused as [n, out] */
      float *g = malloc(ny * 4), *dxc = malloc(nx * 4), *dxg = malloc(nx * 4), *ag = malloc(ny * 4);
      float *adx = malloc(nx * 4), *dwc = malloc(nw * 4), *dwg = malloc(nw * 4),
            *adw = malloc(nw * 4);
      kc_fill(&rng, g, ny, 1.0);
      if (bf16) bf16_round_array(g, ny);
      for (size_t i = 0; i < ny; i++) ag[i] = fabsf(g[i]);
      void *dg = upload(g, ny, bf16), *ddx = upload(x, nx, bf16), *ddw = upload(w, nw, bf16);
      matmul_backward_input_simple(dxc, g, w, n, in, out, flags);
      matmul_backward_input_simple(adx, ag, aw, n, in, out, 0);
      assert_int_equal(matmul_backward_input_cuda(c, ddx, dg, dw, n, in, out, flags, 0, &err), 0);
      CK(cudaDeviceSynchronize());
      download(dxg, ddx, nx, bf16);
      assert_within(dxg, dxc, adx, nx, out, bf16, "backward input");
      matmul_backward_weight_simple(dwc, g, x, n, in, out, flags);
      matmul_backward_weight_simple(adw, ag, ax, n, in, out, 0);
      assert_int_equal(matmul_backward_weight_cuda(c, ddw, dg, dx, n, in, out, flags, 0, &err), 0);
      CK(cudaDeviceSynchronize());
      download(dwg, ddw, nw, bf16);
      assert_within(dwg, dwc, adw, nw, n, bf16, "backward weight");
      cudaFree(dx), cudaFree(dw), cudaFree(dy), cudaFree(dg), cudaFree(ddx), cudaFree(ddw);
      free(x), free(w), free(y), free(yc), free(ax), free(aw), free(ay), free(again), free(g);
      free(dxc), free(dxg), free(ag), free(adx), free(dwc), free(dwg), free(adw);
    }
  }
  /* One plan per (op, shape, dtype): 3 shapes x 2 dtypes x 3 ops, each
   * with its 64 algorithm bytes. */
  json_t *j = matmul_cuda_plans_json(c);
  json_t *plans = json_object_get(j, "plans");
  assert_int_equal(json_array_size(plans), 18);
  assert_int_equal(strlen(json_string_value(json_object_get(json_array_get(plans, 0), "algo"))),
                   128);
  json_decref(j);
  /* bf16 accumulate is refused, not silently rounded once instead of twice. */
  assert_int_equal(matmul_backward_weight_cuda(c, NULL, NULL, NULL, 4, 4, 4,
                                               KERNEL_BF16 | KERNEL_ACCUMULATE, 0, &err),
                   -1);
  matmul_cuda_free(c);
}

/* Operands that are views one element past a 256-byte boundary, as the
 * weights inside the flat parameter buffer are (the tiny preset's bf16
 * copies are 8-byte aligned): cuBLASLt assumes 256 bytes unless told, and
 * may then fault ("misaligned address") or refuse. The plans record the
 * alignments they were chosen for; the products stay within tolerance and
 * repeat bit for bit, and an aligned call of the same shape is its own plan. */
static void test_views_at_any_alignment(void **state) {
  (void)state;
  char why[600];
  if (!have_gpu(why, sizeof why)) {
    fprintf(stderr, "skipped: %s\n", why);
    skip();
  }
  const int n = 96, in = 256, out = 320;
  kc_rng rng = {29};
  pg_error err;
  for (int bf16 = 0; bf16 < 2; bf16++) {
    matmul_cuda_ctx *c;
    assert_int_equal(matmul_cuda_init(&c, 32u << 20, &err), 0);
    const int flags = bf16 ? KERNEL_BF16 : 0;
    const size_t es = bf16 ? 2 : 4, nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
    float *x = malloc((nx + 1) * 4), *w = malloc((nw + 1) * 4), *y = malloc((ny + 1) * 4);
    float *yc = malloc(ny * 4), *ax = malloc(nx * 4), *aw = malloc(nw * 4), *ay = malloc(ny * 4);
    float *again = malloc(ny * 4);
    kc_fill(&rng, x, nx + 1, 1.0);
    kc_fill(&rng, w, nw + 1, 0.1);
    if (bf16) bf16_round_array(x, nx + 1), bf16_round_array(w, nw + 1);
    for (size_t i = 0; i < nx; i++) ax[i] = fabsf(x[i + 1]);
    for (size_t i = 0; i < nw; i++) aw[i] = fabsf(w[i + 1]);
    /* Device copies of n + 1 elements; the operands start at element 1. */
    char *dx = upload(x, nx + 1, bf16), *dw = upload(w, nw + 1, bf16);
    memset(y, 0, (ny + 1) * 4);
    char *dy = upload(y, ny + 1, bf16);
    matmul_forward_simple(yc, x + 1, w + 1, n, in, out, flags);
    matmul_forward_simple(ay, ax, aw, n, in, out, 0);
    for (int r = 0; r < 2; r++) {
      assert_int_equal(matmul_forward_cuda(c, dy + es, dx + es, dw + es, n, in, out, flags, 0, &err),
                       0);
      CK(cudaDeviceSynchronize());
      download(y, dy, ny + 1, bf16);
      if (r == 0) assert_within(y + 1, yc, ay, ny, in, bf16, "forward, unaligned views");
      else assert_memory_equal(y + 1, again, ny * 4);
      memcpy(again, y + 1, ny * 4);
      assert_true(y[0] == 0.0f); /* the element before the view is untouched */
    }
    /* The same shape on aligned operands: a plan of its own. */
    assert_int_equal(matmul_forward_cuda(c, dy, dx, dw, n, in, out, flags, 0, &err), 0);
    CK(cudaDeviceSynchronize());
    json_t *j = matmul_cuda_plans_json(c);
    json_t *plans = json_object_get(j, "plans");
    assert_int_equal(json_array_size(plans), 2);
    json_t *al = json_object_get(json_array_get(plans, 0), "align_bytes");
    json_t *al2 = json_object_get(json_array_get(plans, 1), "align_bytes");
    for (size_t k = 0; k < 3; k++) {
      assert_int_equal(json_integer_value(json_array_get(al, k)), (json_int_t)es);
      assert_int_equal(json_integer_value(json_array_get(al2, k)), 256);
    }
    json_decref(j);
    cudaFree(dx), cudaFree(dw), cudaFree(dy);
    free(x), free(w), free(y), free(yc), free(ax), free(aw), free(ay), free(again);
    matmul_cuda_free(c);
  }
}

/* A strided batch (kernels/matmul.h's *_batch_cuda; Newton-Schulz's
 * groups): every member within the tolerance of the CPU's product of its
 * own matrices, bit for bit run to run, one plan recorded with its batch
 * count, apart from the unbatched plan of the same shape. Odd sizes make
 * the members' starts less aligned than the base (2-byte steps in bf16). */
static void test_batched_products(void **state) {
  (void)state;
  char why[600];
  if (!have_gpu(why, sizeof why)) {
    fprintf(stderr, "skipped: %s\n", why);
    skip();
  }
  enum { B = 3 };
  const int shapes[][3] = {{512, 512, 512}, {7, 19, 7}, {37, 100, 77}};
  kc_rng rng = {29};
  matmul_cuda_ctx *c;
  pg_error err;
  assert_int_equal(matmul_cuda_init(&c, 32u << 20, &err), 0);
  for (int s = 0; s < 3; s++) {
    const int n = shapes[s][0], in = shapes[s][1], out = shapes[s][2];
    for (int bf16 = 0; bf16 < 2; bf16++) {
      const int flags = bf16 ? KERNEL_BF16 : 0;
      const size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
      float *x = malloc(B * nx * 4), *w = malloc(B * nw * 4), *g = malloc(B * ny * 4);
      float *got = malloc(B * (nx > ny ? nx : ny) * 4),
            *again = malloc(B * (nx > ny ? nx : ny) * 4);
      float *want = malloc((nx > ny ? nx : ny) * 4), *aprod = malloc((nx > ny ? nx : ny) * 4);
      float *ax = malloc(nx * 4), *aw = malloc(nw * 4), *ag = malloc(ny * 4);
      kc_fill(&rng, x, B * nx, 1.0), kc_fill(&rng, w, B * nw, 0.1), kc_fill(&rng, g, B * ny, 1.0);
      if (bf16)
        bf16_round_array(x, B * nx), bf16_round_array(w, B * nw), bf16_round_array(g, B * ny);
      void *dx = upload(x, B * nx, bf16), *dw = upload(w, B * nw, bf16),
           *dg = upload(g, B * ny, bf16);
      void *dy = upload(g, B * ny, bf16), *ddx = upload(x, B * nx, bf16);
      for (int op = 0; op < 2; op++) {
        const size_t nr = op ? nx : ny;
        for (int rep = 0; rep < 2; rep++) {
          if (op == 0)
            assert_int_equal(
                matmul_forward_batch_cuda(c, dy, dx, dw, n, in, out, B, flags, 0, &err), 0);
          else
            assert_int_equal(
                matmul_backward_input_batch_cuda(c, ddx, dg, dw, n, in, out, B, flags, 0, &err), 0);
          CK(cudaDeviceSynchronize());
          download(rep ? again : got, op ? ddx : dy, B * nr, bf16);
        }
        assert_memory_equal(again, got, B * nr * 4);
        for (int b = 0; b < B; b++) {
          const float *xb = x + b * nx, *wb = w + b * nw, *gb = g + b * ny;
          for (size_t i = 0; i < nw; i++) aw[i] = fabsf(wb[i]);
          if (op == 0) {
            for (size_t i = 0; i < nx; i++) ax[i] = fabsf(xb[i]);
            matmul_forward_simple(want, xb, wb, n, in, out, flags);
            matmul_forward_simple(aprod, ax, aw, n, in, out, 0);
            assert_within(got + b * nr, want, aprod, nr, in, bf16, "batched forward");
          } else {
            for (size_t i = 0; i < ny; i++) ag[i] = fabsf(gb[i]);
            matmul_backward_input_simple(want, gb, wb, n, in, out, flags);
            matmul_backward_input_simple(aprod, ag, aw, n, in, out, 0);
            assert_within(got + b * nr, want, aprod, nr, out, bf16, "batched backward input");
          }
        }
      }
      cudaFree(dx), cudaFree(dw), cudaFree(dg), cudaFree(dy), cudaFree(ddx);
      free(x), free(w), free(g), free(got), free(again), free(want), free(aprod), free(ax);
      free(aw), free(ag);
    }
  }
  /* one plan per (op, shape, dtype), each batch 3 */
  json_t *j = matmul_cuda_plans_json(c);
  json_t *plans = json_object_get(j, "plans");
  assert_int_equal(json_array_size(plans), 12);
  for (size_t i = 0; i < json_array_size(plans); i++)
    assert_int_equal(json_integer_value(json_object_get(json_array_get(plans, i), "batch")), B);
  json_decref(j);
  assert_int_equal(matmul_forward_batch_cuda(c, NULL, NULL, NULL, 4, 4, 4, 0, 0, 0, &err), -1);
  assert_non_null(strstr(err.msg, "batch=0"));
  matmul_cuda_free(c);
}

#else

static void test_cublaslt_opened_at_first_use(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs the CUDA build (no nvcc at build time)\n");
  skip();
}
static void test_init_refuses_or_succeeds(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs the CUDA build (no nvcc at build time)\n");
  skip();
}
static void test_products_within_tolerance_and_repeatable(void **state) {
  test_init_refuses_or_succeeds(state);
}
static void test_views_at_any_alignment(void **state) { test_init_refuses_or_succeeds(state); }
static void test_batched_products(void **state) { test_init_refuses_or_succeeds(state); }

#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cublaslt_opened_at_first_use),
      cmocka_unit_test(test_init_refuses_or_succeeds),
      cmocka_unit_test(test_products_within_tolerance_and_repeatable),
      cmocka_unit_test(test_views_at_any_alignment),
      cmocka_unit_test(test_batched_products),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
