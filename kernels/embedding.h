/* Token embedding lookup, as nn.Embedding: y[n] = table[ids[n]], and its
 * backward, a scatter-add: dtable[v] = sum over n with ids[n] == v of
 * dy[n], each row summed in float32 in ascending n by one thread (the
 * rows are grouped by a stable counting sort first), so the sum is the
 * same bits for any thread count.
 * KERNEL_BF16 rounds each row's finished sum (the official token
 * embedding is a bf16 parameter, so its gradient is bf16).
 *
 * The CUDA twin (embedding.cu) keeps that order and uses no atomics: one
 * block owns one vocabulary row v (and 256 of its channels); it scans the
 * ids in chunks of 256 positions, compacts the positions equal to v in
 * ascending order (warp ballots, a prefix count in shared memory), and
 * each thread adds its channel of those rows of dy, chunk after chunk: one
 * float32 sum per element, from 0, in ascending n, as here. So the GPU
 * equals embedding_backward bit for bit; embedding_backward_tree_ref is
 * the same order computed by the GPU's method (a scan per row), checked
 * against embedding_backward on the CPU. The per-element arithmetic is
 * one float add and kernel_store. */
#ifndef PGOLF_EMBEDDING_H
#define PGOLF_EMBEDDING_H

#include <stdint.h>

#include "kernels/flags.h"

#ifdef __cplusplus
extern "C" {
#endif

void embedding_forward(float *y, const float *table, const uint16_t *ids, int n, int d);
/* Rows of dtable no id refers to are left unchanged under
 * KERNEL_ACCUMULATE and set to 0 otherwise. */
void embedding_backward(float *dtable, const float *dy, const uint16_t *ids, int n, int vocab,
                        int d, int flags);
/* The same by the GPU's method: for each row v, the positions with
 * ids[n] == v found by a scan in ascending n. O(vocab * n); for tests. */
void embedding_backward_tree_ref(float *dtable, const float *dy, const uint16_t *ids, int n,
                                 int vocab, int d, int flags);

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "common/error.h"

/* The CUDA twins: device pointers, launched on stream; no allocation, no
 * atomics. ids must be < vocab (the forward trusts them, as the CPU
 * kernel does; the backward ignores ids >= vocab). */
int embedding_forward_cuda(float *y, const float *table, const uint16_t *ids, int n, int d,
                           cudaStream_t stream, pg_error *err);
int embedding_backward_cuda(float *dtable, const float *dy, const uint16_t *ids, int n, int vocab,
                            int d, int flags, cudaStream_t stream, pg_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
