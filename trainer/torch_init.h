/* PyTorch's CPU float32 `uniform_` and `normal_`, bit for bit, and the two
 * nn.init routines the official model uses.
 *
 * Which PyTorch computation this reproduces (torch 2.15.0, read from its
 * source and its compiled kernels, checked against its output):
 *
 *  - uniform_(from, to): one 32-bit draw per element, in memory order;
 *    x = (draw & 0xffffff) * 2^-24; value = fma(x, to - from, from) with
 *    from and to rounded to float first; a value equal to `to` becomes
 *    `from`. The fused multiply-add is what the AVX2 and AVX512 builds of
 *    the kernel execute (the compiler contracts the multiply and the add);
 *    the DEFAULT (no-AVX) build rounds twice and differs in the last bit
 *    of some values.
 *
 *  - normal_(mean, std), contiguous with >= 16 elements: first one 32-bit
 *    uniform in [0, 1) per element, then Box-Muller on each block of 16
 *    (elements j and j+8 of a block pair up), and when the size is not a
 *    multiple of 16, 16 fresh uniforms overwrite the last 16 elements and
 *    are transformed again. On any CPU whose PyTorch capability is AVX2 or
 *    AVX512 (the normal kernel is never dispatched to AVX512: PyTorch runs
 *    its AVX2 build there) the transform is the AVX2 one: Cephes-style
 *    float32 polynomials for log, sin and cos (ATen's avx_mathfun.h) in the
 *    exact operation order the compiled kernel uses, including the fused
 *    multiply-adds the compiler formed. This file redoes those operations
 *    one lane at a time with IEEE float32 arithmetic and C99 fmaf, so the
 *    result is the same on every x86-64 (and any IEEE-754 machine),
 *    whatever its vector units. Only a PyTorch forced to
 *    ATEN_CPU_CAPABILITY=default (or a pre-AVX2 CPU) computes differently
 *    (libm logf/cosf/sinf); that case is not reproduced.
 *
 *  - normal_ with fewer than 16 elements: the double-precision Box-Muller
 *    of at::normal_distribution<double> (53-bit uniforms, libm log1p, sin,
 *    cos, the second sample cached in the generator), fma(z, std, mean),
 *    rounded to float. This path calls the C library's double log1p, sin
 *    and cos as PyTorch does, so it is exact where the C library agrees
 *    with the one PyTorch ran on (glibc here). The model initialisation
 *    never takes it unless vocab_size * model_dim < 16.
 */
#ifndef PGOLF_TORCH_INIT_H
#define PGOLF_TORCH_INIT_H

#include <stddef.h>

#include "trainer/torch_rng.h"

/* tensor.uniform_(from, to) on n contiguous float32 values. */
void torch_uniform_f32(torch_rng *g, float *x, size_t n, double from, double to);

/* tensor.normal_(mean, std) on n contiguous float32 values. */
void torch_normal_f32(torch_rng *g, float *x, size_t n, double mean, double std);

/* nn.init.kaiming_uniform_(w, a=sqrt(5)) on a [rows, cols] weight, i.e. the
 * default nn.Linear weight init: bound = sqrt(3) * gain / sqrt(cols) with
 * gain = sqrt(2 / (1 + a^2)), computed in double as Python does, then
 * uniform_(-bound, bound). Returns the bound (for tests and logs). A tensor
 * with no elements draws nothing, as PyTorch's early return. */
double torch_kaiming_uniform_linear(torch_rng *g, float *w, int rows, int cols);

/* The Box-Muller transform of one block of 16 uniforms, in place (exposed
 * for tests). */
void torch_normal_fill16(float *data, float mean, float std);

#endif
