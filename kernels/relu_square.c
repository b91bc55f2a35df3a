#include "kernels/relu_square.h"

#include <string.h>

/* Eight elements at a time with GCC's vector extensions, built for AVX2
 * and for the x86-64 baseline (target_clones): the operations of
 * relu_square_y / relu_square_dh and kernel_store lane by lane, each an
 * IEEE operation of the scalar code (a select for the ternaries, the
 * bit arithmetic of bf16_from_float for the rounding), so the bits are
 * the shared functions' (tested against them on NaN, signed zeros,
 * infinities and rounding ties). The tail runs the scalar code. */
typedef float v8sf __attribute__((vector_size(32)));
typedef int v8si __attribute__((vector_size(32)));
typedef unsigned v8su __attribute__((vector_size(32)));

#define CLONES __attribute__((target_clones("avx2", "default")))
#define SPLATU(a) ((v8su){(a), (a), (a), (a), (a), (a), (a), (a)})

enum { LANES = 8, BLOCK = 256 /* vectors per parallel chunk */ };

/* x where m (0 or -1 per lane), else +0. Macros and pointer arguments
 * rather than 32-byte vectors passed by value, which GCC warns about
 * outside the AVX clone (-Wpsabi). */
#define KEEP(x, m) ((v8sf)((v8si)(x) & (m)))

/* *x = bf16_round(*x) lane by lane (kernels/bf16.h). */
static inline __attribute__((always_inline)) void round_bf16(v8sf *x) {
  v8su u = (v8su)*x;
  v8si nan = (v8si)((u & SPLATU(0x7fffffffu)) > SPLATU(0x7f800000u));
  v8su r = (u + SPLATU(0x7fffu) + ((u >> 16) & SPLATU(1u))) & SPLATU(0xffff0000u);
  v8su q = (u & SPLATU(0xffff0000u)) | SPLATU(0x00400000u);
  *x = (v8sf)((q & (v8su)nan) | (r & ~(v8su)nan));
}

/* kernel_round and kernel_round_out lane by lane. */
static inline __attribute__((always_inline)) void vround(v8sf *x, int flags) {
  if (flags & KERNEL_BF16) round_bf16(x);
}
static inline __attribute__((always_inline)) void vround_out(v8sf *x, int flags) {
  if (flags & (KERNEL_BF16 | KERNEL_ROUND_OUT)) round_bf16(x);
}

CLONES static void forward_lanes(float *y, const float *h, size_t i0, size_t i1, int flags) {
  const v8sf zero = {0};
  for (size_t i = i0; i < i1; i += LANES) {
    v8sf x, r, v;
    memcpy(&x, h + i, sizeof x);
    r = KEEP(x, x > zero);
    v = r * r;
    vround_out(&v, flags);
    memcpy(y + i, &v, sizeof v);
  }
}

CLONES static void backward_lanes(float *dh, const float *dy, const float *h, size_t i0, size_t i1,
                                  int flags) {
  const v8sf zero = {0}, two = {2, 2, 2, 2, 2, 2, 2, 2};
  for (size_t i = i0; i < i1; i += LANES) {
    v8sf x, g, v;
    memcpy(&x, h + i, sizeof x);
    memcpy(&g, dy + i, sizeof g);
    v8si pos = x > zero;
    v = KEEP(g * (two * KEEP(x, pos)), pos);
    vround_out(&v, flags);
    if (flags & KERNEL_ACCUMULATE) {
      v8sf o;
      memcpy(&o, dh + i, sizeof o);
      v = o + v;
      if (!(flags & KERNEL_OUT_FP32)) vround(&v, flags);
    }
    memcpy(dh + i, &v, sizeof v);
  }
}

void relu_square_forward(float *y, const float *h, size_t n, int flags) {
  const size_t nv = n / LANES;
#pragma omp parallel for schedule(static)
  for (size_t b = 0; b < nv; b += BLOCK)
    forward_lanes(y, h, b * LANES, (b + BLOCK < nv ? b + BLOCK : nv) * LANES, flags);
  for (size_t i = nv * LANES; i < n; i++) y[i] = relu_square_y(h[i], flags);
}

void relu_square_backward(float *dh, const float *dy, const float *h, size_t n, int flags) {
  const size_t nv = n / LANES;
#pragma omp parallel for schedule(static)
  for (size_t b = 0; b < nv; b += BLOCK)
    backward_lanes(dh, dy, h, b * LANES, (b + BLOCK < nv ? b + BLOCK : nv) * LANES, flags);
  for (size_t i = nv * LANES; i < n; i++) kernel_store(&dh[i], relu_square_dh(dy[i], h[i]), flags);
}
