/* Per-thread scratch memory for the CPU kernels: a few buffers per
 * thread, each kept between calls and grown when a call needs more.
 *
 * The products and attention need megabytes of workspace per call and run
 * dozens of times a step with the same shapes. Allocating it per call
 * gave the memory back to the kernel and took it again every time: page
 * faults on each first touch and, when it was unmapped, a TLB shootdown
 * on every core (5% of a baseline step). A buffer here is the calling
 * thread's alone, so concurrent callers never share one; a slot is used
 * by one function at a time (the slots below name their owner). Contents
 * are unspecified between calls but always defined floats: a new or grown
 * buffer is zeroed, a reused one holds what its last user left. A
 * thread's buffers are freed when the thread ends. */
#ifndef PGOLF_SCRATCH_H
#define PGOLF_SCRATCH_H

#include <stddef.h>

enum {
  SCRATCH_GEMM_A, /* kernels/matmul.c: packed A panels */
  SCRATCH_GEMM_B, /* kernels/matmul.c: packed B panels */
  SCRATCH_GEMM_C, /* kernels/matmul.c: sums between passes over K */
  SCRATCH_ATT_S,  /* kernels/attention.c: a block's scores */
  SCRATCH_ATT_G,  /* ... their gradients */
  SCRATCH_ATT_DK, /* ... the running dk sums of a (sequence, kv head) */
  SCRATCH_ATT_DV, /* ... and dv */
  SCRATCH_ATT_K,  /* ... the packed keys (B(n = j, k = d)) */
  SCRATCH_ATT_V,  /* ... the packed values, either orientation */
  SCRATCH_ATT_KT, /* ... the packed keys (B(n = d, k = j)) */
  SCRATCH_SLOTS
};

/* At least n floats of this thread's buffer `slot`; aborts when memory
 * runs out (as the kernels' allocations always have: a kernel returns no
 * errors). */
float *scratch_floats(int slot, size_t n);

#endif
