/* The token embedding on the GPU (contract and the backward's order in
 * embedding.h): the gather elementwise; the scatter-add with one block per
 * (vocabulary row, 256 channels), summing the row's occurrences in
 * ascending position, so both equal the CPU kernels bit for bit. No
 * atomics. */
#include "kernels/cuda_common.h"
#include "kernels/embedding.h"
#include "kernels/index_walk.h"

#define EMB_THREADS 256 /* positions per scan chunk, channels per block */
#define EMB_WARPS (EMB_THREADS / 32)

/* ---- kernels ---- */

/* Element i is (position, channel) = (i / d, i % d), kept by the walk
 * (index_walk.h). */
__global__ void __launch_bounds__(CUDA_EW_THREADS)
    embedding_forward_kernel(float *y, const float *table, const uint16_t *ids, size_t total,
                             int d) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  for (index_walk p = index_walk_start(i, stride, (size_t)d); i < total;
       i += stride, index_walk_next(&p, 0))
    y[i] = table[(size_t)ids[p.q] * d + p.r];
}

/* Block (v, tile): thread t owns channel j = tile * 256 + t of row v. Per
 * chunk of 256 positions: each thread tests one position, the hits are
 * compacted into list[] in ascending position (a warp's ballot gives the
 * rank within the warp, the counts of the warps before it the offset),
 * then every thread adds dy[list[q], j] for q in order. */
__global__ void __launch_bounds__(EMB_THREADS)
    embedding_backward_kernel(float *dtable, const float *dy, const uint16_t *ids, int n, int d,
                              int flags) {
  __shared__ int list[EMB_THREADS];
  __shared__ int warp_hits[EMB_WARPS];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int v = blockIdx.x, j = blockIdx.y * EMB_THREADS + t;
  float acc = 0.0f;
  int found = 0; /* the same in every thread of the block */
  for (int base = 0; base < n; base += EMB_THREADS) {
    int r = base + t;
    int hit = r < n && ids[r] == v;
    unsigned mask = __ballot_sync(0xffffffffu, hit);
    if (lane == 0) warp_hits[warp] = __popc(mask);
    __syncthreads();
    int before = 0, hits = 0;
    for (int w = 0; w < EMB_WARPS; w++) {
      before += w < warp ? warp_hits[w] : 0;
      hits += warp_hits[w];
    }
    if (hit) list[before + __popc(mask & ((1u << lane) - 1u))] = r;
    __syncthreads();
    if (j < d)
      for (int q = 0; q < hits; q++) acc = acc + dy[(size_t)list[q] * d + j];
    found += hits;
    __syncthreads(); /* list and warp_hits are rewritten by the next chunk */
  }
  if (j >= d) return;
  float *out = &dtable[(size_t)v * d + j];
  if (found)
    kernel_store(out, acc, flags);
  else if (!(flags & KERNEL_ACCUMULATE))
    *out = 0.0f;
}

/* ---- launchers ---- */

extern "C" int embedding_forward_cuda(float *y, const float *table, const uint16_t *ids, int n,
                                      int d, cudaStream_t stream, pg_error *err) {
  if (n < 0 || d < 1) return pg_fail(err, "", -1, "embedding: bad shape %d x %d", n, d);
  size_t total = (size_t)n * d;
  if (total == 0) return 0;
  embedding_forward_kernel<<<cuda_ew_blocks(total), CUDA_EW_THREADS, 0, stream>>>(y, table, ids,
                                                                                  total, d);
  return cuda_check_launch(err, "embedding_forward_kernel");
}

extern "C" int embedding_backward_cuda(float *dtable, const float *dy, const uint16_t *ids, int n,
                                       int vocab, int d, int flags, cudaStream_t stream,
                                       pg_error *err) {
  if (n < 0 || vocab < 0 || vocab > 65536 || d < 1)
    return pg_fail(err, "", -1, "embedding: bad shape n %d, vocab %d, d %d", n, vocab, d);
  if (vocab == 0) return 0;
  dim3 grid((unsigned)vocab, (unsigned)((d + EMB_THREADS - 1) / EMB_THREADS));
  embedding_backward_kernel<<<grid, EMB_THREADS, 0, stream>>>(dtable, dy, ids, n, d, flags);
  return cuda_check_launch(err, "embedding_backward_kernel");
}
