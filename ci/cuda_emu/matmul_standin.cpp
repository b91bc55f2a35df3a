// The CPU stand-in's matmul: kernels/matmul.h's CUDA entry points computed
// by the CPU kernels (host memory is the stand-in's device memory), with
// the CUDA twins' operand formats (bf16 arrays under KERNEL_BF16) and
// refusals. cuBLASLt has no stand-in, and its summation order is its own:
// these products have the CPU's bits, so a model composed of CUDA kernels
// can be required to equal the CPU model bit for bit on the stand-in (the
// composition's logic), while on a GPU it is compared within the
// tolerance of kernels/matmul.h. Not used to test matmul itself. Each
// product is queued on its stream like a kernel (ci/cuda_emu/emu.h), so it
// reads its operands when the stream gets there, not when it is called.
#include <stdlib.h>
#include <string.h>

#include "kernels/bf16.h"
#include "kernels/flags.h"
#include "kernels/matmul.h"
#include "ci/cuda_emu/emu.h"

struct matmul_cuda_ctx {
  int unused;
};

extern "C" {

int matmul_cuda_init(matmul_cuda_ctx **ctx, size_t workspace_bytes, pg_error *err) {
  (void)workspace_bytes;
  *ctx = (matmul_cuda_ctx *)calloc(1, sizeof **ctx);
  return *ctx ? 0 : pg_fail(err, "", -1, "matmul stand-in: out of memory");
}

void matmul_cuda_free(matmul_cuda_ctx *ctx) { free(ctx); }

// No cuBLASLt, so no plans and no version (kernels/matmul_plans.c writes
// the manifest's record of that).
int matmul_cuda_plan_count(const matmul_cuda_ctx *c) {
  (void)c;
  return 0;
}

void matmul_cuda_plan_info(const matmul_cuda_ctx *c, int i, matmul_plan_info *out) {
  (void)c, (void)i;
  memset(out, 0, sizeof *out);
}

size_t matmul_cuda_workspace_bytes(const matmul_cuda_ctx *c) {
  (void)c;
  return 0;
}

size_t matmul_cuda_lt_version(void) { return 0; }

}  // extern "C"

// A float copy of n elements of a (bf16 bits when bf16, else floats).
static float *as_float(const void *a, size_t n, int bf16) {
  float *f = (float *)malloc((n ? n : 1) * sizeof *f);
  if (!f) abort();
  if (bf16) bf16_unpack(f, (const uint16_t *)a, n, 0);
  else memcpy(f, a, n * sizeof *f);
  return f;
}

typedef void (*cpu_op)(float *, const float *, const float *, int, int, int, int);

// d (d_n elements) = op(a, b) queued on stream s, batch times over
// matrices stored back to back (a_n, b_n, d_n elements each): the shape
// refused now, as the CUDA entry points refuse it; later the CPU kernel on
// float copies of each, d written back in its format. One queued
// operation, as one cuBLASLt call.
static int run(cpu_op op, const char *name, cudaStream_t s, void *d, size_t d_n, const void *a,
               size_t a_n, const void *b, size_t b_n, int n, int in, int out, int batch, int flags,
               pg_error *err) {
  if (n < 0 || in < 1 || out < 1 || batch < 1)
    return pg_fail(err, "", -1, "matmul: bad shape n=%d in=%d out=%d batch=%d", n, in, out, batch);
  if ((flags & KERNEL_BF16) && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "matmul: accumulate is float32 only");
  if ((flags & KERNEL_PARTIAL) && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "matmul: a partial product is stored, never accumulated");
  if (n == 0) return 0;
  emu_enqueue(s, name, {{a, false}, {b, false}, {d, true}}, [=]() {
    // KERNEL_PARTIAL: bf16 operands (under KERNEL_BF16), a float32 result
    // the CPU kernel leaves unrounded.
    int bf = (flags & KERNEL_BF16) != 0, partial = (flags & KERNEL_PARTIAL) != 0;
    int bf_out = bf && !partial;
    const size_t e = bf ? 2 : 4, ed = bf_out ? 2 : 4;
    for (int i = 0; i < batch; i++) {
      const char *ai = (const char *)a + i * e * a_n, *bi = (const char *)b + i * e * b_n;
      char *di = (char *)d + i * ed * d_n;
      float *fa = as_float(ai, a_n, bf), *fb = as_float(bi, b_n, bf);
      float *fd = bf_out ? (float *)malloc(d_n * sizeof *fd) : (float *)di;
      if (!fd) abort();
      op(fd, fa, fb, n, in, out, partial ? 0 : flags);
      if (bf_out) {
        bf16_pack((uint16_t *)di, fd, d_n);
        free(fd);
      }
      free(fa);
      free(fb);
    }
  });
  return 0;
}

extern "C" {

int matmul_forward_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w, int n, int in,
                        int out, int flags, cudaStream_t stream, pg_error *err) {
  (void)c;
  return run(matmul_forward, "matmul_forward_cuda", stream, y, (size_t)n * out, x, (size_t)n * in,
             w, (size_t)out * in, n, in, out, 1, flags, err);
}

int matmul_backward_input_cuda(matmul_cuda_ctx *c, void *dx, const void *dy, const void *w, int n,
                               int in, int out, int flags, cudaStream_t stream, pg_error *err) {
  (void)c;
  return run(matmul_backward_input, "matmul_backward_input_cuda", stream, dx, (size_t)n * in, dy,
             (size_t)n * out, w, (size_t)out * in, n, in, out, 1, flags, err);
}

int matmul_forward_batch_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w, int n,
                              int in, int out, int batch, int flags, cudaStream_t stream,
                              pg_error *err) {
  (void)c;
  return run(matmul_forward, "matmul_forward_batch_cuda", stream, y, (size_t)n * out, x,
             (size_t)n * in, w, (size_t)out * in, n, in, out, batch, flags, err);
}

int matmul_backward_input_batch_cuda(matmul_cuda_ctx *c, void *dx, const void *dy, const void *w,
                                     int n, int in, int out, int batch, int flags,
                                     cudaStream_t stream, pg_error *err) {
  (void)c;
  return run(matmul_backward_input, "matmul_backward_input_batch_cuda", stream, dx, (size_t)n * in,
             dy, (size_t)n * out, w, (size_t)out * in, n, in, out, batch, flags, err);
}

int matmul_backward_weight_cuda(matmul_cuda_ctx *c, void *dw, const void *dy, const void *x, int n,
                                int in, int out, int flags, cudaStream_t stream, pg_error *err) {
  (void)c;
  return run(matmul_backward_weight, "matmul_backward_weight_cuda", stream, dw, (size_t)out * in,
             dy, (size_t)n * out, x, (size_t)n * in, n, in, out, 1, flags, err);
}

int matmul_backward_weight_batch_cuda(matmul_cuda_ctx *c, void *dw, const void *dy, const void *x,
                                      int n, int in, int out, int batch, int flags,
                                      cudaStream_t stream, pg_error *err) {
  (void)c;
  return run(matmul_backward_weight, "matmul_backward_weight_batch_cuda", stream, dw,
             (size_t)out * in, dy, (size_t)n * out, x, (size_t)n * in, n, in, out, batch, flags,
             err);
}

}  // extern "C"
