/* The CPU stand-in's barriers against itself (emu-only: ci/cuda-emu.sh
 * compiles it as it compiles the kernels' .cu files and runs it, under
 * each of CUDA_EMU_CONTEXT's switches, before the tests).
 * Kernels that use __syncthreads and __ballot_sync correctly must give the
 * right bits; each barrier a GPU would hang on (or run as undefined
 * behaviour) must stop the program (run in a child process) with
 * SIGABRT and ci/cuda_emu/grid.cpp's report, naming the kernel, block and
 * thread. Prints ok/FAIL lines; exits 1 on a failure.
 *   python3 ci/cuda_emu/launches.py ci/cuda_emu/grid_selftest.cu t.cpp
 *   g++ -std=c++17 -I. -I$CUDA_HOME/include -include ci/cuda_emu/emu.h \
 *     t.cpp ci/cuda_emu/emu.cpp ci/cuda_emu/grid.cpp */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

static int failed;

static void say(bool good, const char *what) {
  printf("%s %s\n", good ? "ok" : "FAIL", what);
  if (!good) failed = 1;
}

/* ---- kernels that must work ---- */

/* Each thread writes where it is: its block and thread index. */
__global__ void where_kernel(unsigned *out) {
  unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned i = b * blockDim.x + threadIdx.x;
  out[i] = (blockIdx.x << 24) | (blockIdx.y << 20) | (blockIdx.z << 16) | threadIdx.x;
}

/* A tree sum over the block in shared memory, a barrier at each level:
 * out[block] = sum of x over the block. Each thread also checks, after
 * each barrier, that every other thread's write of the level before is
 * there (a barrier that did not wait would show here). */
__global__ void __launch_bounds__(1024) tree_kernel(const unsigned *x, unsigned *out, int *bad) {
  __shared__ unsigned s[1024];
  const unsigned t = threadIdx.x, n = blockDim.x;
  s[t] = x[blockIdx.x * n + t];
  __syncthreads();
  for (unsigned i = 0; i < n; i++)
    if (s[i] != x[blockIdx.x * n + i]) *bad = 1;
  for (unsigned h = n / 2; h > 0; h /= 2) {
    __syncthreads();
    if (t < h) s[t] += s[t + h];
  }
  __syncthreads();
  if (t == 0) out[blockIdx.x] = s[0];
}

/* Each lane votes (its block + lane) % 3 == 0 or its lane is 31, twice
 * with a __syncthreads between: lane i's vote must be bit i of the mask
 * every lane gets. */
__global__ void __launch_bounds__(1024) ballot_kernel(unsigned *mask_out) {
  const unsigned t = threadIdx.x, lane = t % 32;
  unsigned m = __ballot_sync(0xffffffffu, (blockIdx.x + lane) % 3 == 0 || lane == 31);
  __syncthreads();
  unsigned m2 = __ballot_sync(0xffffffffu, lane == t / 32 % 32);
  mask_out[(blockIdx.x * blockDim.x + t) * 2] = m;
  mask_out[(blockIdx.x * blockDim.x + t) * 2 + 1] = m2;
}

/* A thread's local array across barriers: its own stack, untouched by the
 * others' (64 KiB a thread, past attention's few hundred bytes). */
__global__ void __launch_bounds__(256) stack_kernel(int *bad) {
  volatile unsigned big[16384];
  for (unsigned i = 0; i < 16384; i++) big[i] = threadIdx.x * 16384 + i;
  __syncthreads();
  __ballot_sync(0xffffffffu, 1);
  __syncthreads();
  for (unsigned i = 0; i < 16384; i++)
    if (big[i] != threadIdx.x * 16384 + i) *bad = 1;
}

/* Threads leave after the last barrier they all reach: no hang. */
__global__ void early_out_kernel(unsigned *out) {
  __shared__ unsigned s[256];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x % 2) return;
  out[blockIdx.x * 256 + threadIdx.x] = s[threadIdx.x + 1];
}

/* Each thread stores salt + t in shared memory, then (after a barrier,
 * or not) reads its neighbour's: the lower one's (t - 1, thread 0 its
 * own) or the higher one's (t + 1, the last thread its own). Block b > 0
 * also reads block b - 1's first store to global memory, made in this
 * launch (no barrier can order blocks: a GPU runs them in any order).
 * out[b * n + t] = the neighbour's value, blocks_seen[b] = the other
 * block's value or salt if b = 0. salt differs from launch to launch, so
 * shared memory's leftovers from an earlier one are not right. */
__global__ void neighbour_kernel(unsigned *out, unsigned *first, unsigned *blocks_seen,
                                 unsigned salt, int barrier, int higher) {
  __shared__ unsigned s[256];
  const unsigned t = threadIdx.x, n = blockDim.x, b = blockIdx.x;
  s[t] = salt + t;
  if (t == 0) first[b] = salt + b;
  if (barrier) __syncthreads();
  const unsigned u = higher ? (t + 1 < n ? t + 1 : t) : (t ? t - 1 : t);
  out[b * n + t] = s[u];
  if (t == 0) blocks_seen[b] = b ? first[b - 1] : salt;
}

/* Thread t of block b reads s[t] (which the block's odd threads wrote
 * before the barrier, block b - 1's even ones after it), then writes it:
 * out = what it read. A block's shared memory starts as poison (0x7f
 * bytes in forward order, 0xff in reverse), not as the last block's. */
__global__ void fresh_kernel(unsigned *out) {
  __shared__ unsigned s[64];
  const unsigned t = threadIdx.x;
  if (t % 2) s[t] = blockIdx.x;
  __syncthreads();
  out[blockIdx.x * 64 + t] = s[t];
  __syncthreads();
  s[t] = 7;
}

/* cp.async: each thread copies 16 bytes (the odd ones 6, the rest
 * zeros) into shared memory; before the wait the bytes are not there,
 * after the wait and a barrier every thread sees everyone's. out[t] =
 * (seen before the wait) | (right after the barrier) << 1. */
__global__ void cp_async_kernel(const unsigned short *x, unsigned *out) {
  __shared__ __align__(16) unsigned short s[64 * 8];
  const unsigned t = threadIdx.x;
  for (unsigned i = 0; i < 8; i++) s[t * 8 + i] = 0xffffu;
  __syncthreads();
  emu_cp_async16(&s[t * 8], &x[t * 8], t % 2 ? 6 : 16);
  emu_cp_async_commit();
  unsigned early = s[t * 8] != 0xffffu;
  emu_cp_async_wait(0);
  __syncthreads();
  unsigned right = 1;
  for (unsigned u = 0; u < 64; u++)
    for (unsigned i = 0; i < 8; i++)
      right &= s[u * 8 + i] == (u % 2 && i >= 3 ? 0u : (unsigned)x[u * 8 + i]);
  out[t] = early | right << 1;
}

/* ldmatrix: four 8 x 8 matrices M_m (m = 0..3) with M_m(r, c) = 1000 m +
 * 10 r + c, row r of M_m named by lane 8 m + r; lane 4 g + t must
 * receive M_m(g, 2 t) and M_m(g, 2 t + 1), or with trans M_m(2 t, g) and
 * M_m(2 t + 1, g). out[lane] = 1 if so. */
__global__ void ldmatrix_kernel(unsigned *out, int trans) {
  __shared__ __align__(16) unsigned short s[4][8][8];
  const unsigned l = threadIdx.x;
  for (unsigned i = l; i < 256; i += 32)
    s[i / 64][i / 8 % 8][i % 8] = (unsigned short)(1000 * (i / 64) + 10 * (i / 8 % 8) + i % 8);
  __syncwarp();
  unsigned r[4];
  if (trans)
    emu_ldmatrix_trans(r, 4, &s[l / 8][l % 8][0]);
  else
    emu_ldmatrix(r, 4, &s[l / 8][l % 8][0]);
  const unsigned row = trans ? 2 * (l % 4) : l / 4, col = trans ? l / 4 : 2 * (l % 4);
  const unsigned drow = trans ? 10 : 0, dcol = trans ? 0 : 1; /* the high half's step */
  unsigned good = 1;
  for (unsigned m = 0; m < 4; m++)
    good &= r[m] == ((1000 * m + 10 * row + col) | (1000 * m + 10 * row + col + drow + dcol) << 16);
  out[l] = good;
}

/* Shuffles: lane l holds l + 1; down by 1, 5 and 31 gives lane l + d's
 * value below lane 32 - d and its own from there; the broadcast of lane
 * 7 gives 8 everywhere; a down-tree gives lane 0 the sum 528. out[lane]
 * = 1 if all hold. */
__global__ void shfl_kernel(unsigned *out) {
  const unsigned l = threadIdx.x;
  const float v = (float)(l + 1);
  unsigned good = 1;
  const unsigned ds[] = {1, 5, 31};
  for (unsigned d : ds)
    good &= __shfl_down_sync(0xffffffffu, v, d) == (float)(l + d < 32 ? l + d + 1 : l + 1);
  good &= __shfl_sync(0xffffffffu, v, 7) == 8.0f;
  float s = v;
  for (int off = 16; off > 0; off >>= 1) s = s + __shfl_down_sync(0xffffffffu, s, off);
  good &= __shfl_sync(0xffffffffu, s, 0) == 528.0f;
  out[l] = good;
}

/* ---- kernels a GPU hangs on (or, for ldmatrix, misreads) ---- */

/* A shuffle that names half the warp. */
__global__ void shfl_half_kernel(unsigned *out) {
  out[threadIdx.x] = (unsigned)__shfl_sync(0xffffu, 1.0f, 0);
}

/* Lane 5 names a row 2 bytes past a 16-byte boundary. */
__global__ void ldmatrix_misaligned_kernel(unsigned *out) {
  __shared__ __align__(16) unsigned short s[32][16];
  const unsigned l = threadIdx.x;
  for (unsigned i = l; i < 32 * 16; i += 32) s[i / 16][i % 16] = (unsigned short)i;
  __syncwarp();
  unsigned r[4];
  emu_ldmatrix(r, 4, &s[l][l == 5 ? 1 : 0]);
  out[l] = r[0];
}

/* A copy never waited for (reported, though a GPU would not hang: the
 * bytes would land at no known time). */
__global__ void cp_async_unwaited_kernel(const unsigned short *x) {
  __shared__ __align__(16) unsigned short s[8];
  emu_cp_async16(s, x, 16);
  emu_cp_async_commit();
}

/* Two warps share an 8 x 8 tile s by cp.async and ldmatrix. mode 0: warp
 * 0 copies x into s and waits, a __syncthreads, warp 1 reads s by
 * ldmatrix (out[32 + l] = its fragment). The races, each without the
 * barrier it needs: mode 1, warp 1 reads what warp 0 copied (and
 * waited for) with no __syncthreads between; mode 2, warp 0 reads s and
 * then warp 1 copies into it with none between; mode 3, a __syncthreads
 * comes before warp 0 waits for its copy, so warp 1 reads it in flight;
 * mode 4, likewise, but warp 1 copies into it in flight. */
__global__ void share_kernel(const unsigned short *x, unsigned *out, int mode) {
  __shared__ __align__(16) unsigned short s[8][8];
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  unsigned r[1] = {0};
  if (mode == 4) { /* (a barrier does not land a copy: only its wait does) */
    if (w == 0 && l < 8) emu_cp_async16(&s[l][0], &x[l * 8], 16);
    emu_cp_async_commit();
    __syncthreads();
    if (w == 1 && l < 8) emu_cp_async16(&s[l][0], &x[l * 8], 16);
    emu_cp_async_commit();
    __syncthreads();
    emu_cp_async_wait(0);
    return;
  }
  if (mode == 2) {
    for (unsigned i = threadIdx.x; i < 64; i += 64) s[i / 8][i % 8] = 0;
    __syncthreads();
    if (w == 0) emu_ldmatrix(r, 1, &s[l % 8][0]);
    if (w == 1 && l < 8) emu_cp_async16(&s[l][0], &x[l * 8], 16);
    emu_cp_async_commit();
    emu_cp_async_wait(0);
    return;
  }
  if (w == 0 && l < 8) emu_cp_async16(&s[l][0], &x[l * 8], 16);
  emu_cp_async_commit();
  if (mode != 3) emu_cp_async_wait(0);
  if (mode != 1) __syncthreads();
  if (w == 1) emu_ldmatrix(r, 1, &s[l % 8][0]);
  if (mode == 3) __syncthreads(); /* warp 0 waits for its copy only after this */
  emu_cp_async_wait(0);
  out[threadIdx.x] = r[0];
}

/* Plain loads and stores of shared memory between threads, 64 of them
 * (two warps), for the race check: mode 1, warp 0 stores and warp 1
 * reads (no barrier); 2, both warps store the same words; 3, each lane
 * stores its word and reads the next lane's, no __syncwarp between
 * (4: with one; 5: warp 1 reads warp 0's after a __syncthreads); 6, warp
 * 1 reads by ldmatrix what warp 0 stored (no barrier); 7, thread 0 reads
 * a chunk its cp.async has not landed; 8, half a warp at __syncwarp, half
 * at a shuffle. out[t] = the word it read. */
__global__ void plain_kernel(const unsigned short *x, unsigned *out, int mode) {
  __shared__ __align__(16) unsigned s[64];
  const unsigned t = threadIdx.x, w = t / 32, l = t % 32;
  unsigned v = 0;
  if (mode == 1 || mode == 5) {
    if (w == 0) s[l] = 100 + l;
    if (mode == 5) __syncthreads();
    if (w == 1) v = s[l];
  } else if (mode == 2) {
    s[l] = t;
  } else if (mode == 3 || mode == 4) {
    s[t] = 100 + t;
    if (mode == 4) __syncwarp();
    v = s[w * 32 + (l + 1) % 32];
  } else if (mode == 6) {
    unsigned r[1];
    if (w == 0) s[t] = 100 + t;
    if (w == 1) emu_ldmatrix(r, 1, (const unsigned short *)s + l % 8 * 8);
  } else if (mode == 7) {
    if (t == 0) {
      emu_cp_async16(s, x, 16);
      emu_cp_async_commit();
      v = s[1];
    }
    emu_cp_async_wait(0);
  } else if (mode == 8) {
    if (w == 0 && l < 16) __syncwarp();
    if (w == 0 && l >= 16) v = (unsigned)__shfl_sync(0xffffffffu, 1.0f, 0);
  }
  out[t] = v;
}

/* Global memory between blocks and threads, for the race check (two
 * blocks of 64 threads, x of 256 words): mode 1, both blocks store x[t];
 * 2, block 0 stores x[t] and block 1 reads it; 3, block 0 reads x[t] and
 * block 1 stores it; 4, block 0's threads store x[t] and read x[t ^ 32]
 * with no barrier between (5: with a __syncthreads, each block in its own
 * words). */
__global__ void plain_global_kernel(unsigned *x, int mode) {
  const unsigned t = threadIdx.x, b = blockIdx.x;
  if (mode == 1) {
    x[t] = b;
  } else if (mode == 2) {
    if (b == 0) x[t] = 1;
    if (b == 1) x[128 + t] = x[t];
  } else if (mode == 3) {
    if (b == 0) x[128 + t] = x[t];
    if (b == 1) x[t] = 2;
  } else if (b == 0 || mode == 5) {
    x[b * 64 + t] = 100 + t;
    if (mode == 5) __syncthreads();
    x[128 + b * 64 + t] = x[b * 64 + (t ^ 32)];
  }
}

/* Thread 3 copies to a shared address 8 bytes past a 16-byte boundary. */
__global__ void cp_async_misaligned_kernel(const unsigned short *x) {
  __shared__ __align__(16) unsigned short s[32 * 16];
  emu_cp_async16(&s[threadIdx.x * 16 + (threadIdx.x == 3 ? 4 : 0)], x, 16);
  emu_cp_async_commit();
  emu_cp_async_wait(0);
}

/* Thread 0 of block 1 returns before the barrier the others wait at. */
__global__ void early_return_kernel(float *y) {
  if (blockIdx.x == 1 && threadIdx.x == 0) return;
  __syncthreads();
  y[threadIdx.x] = 1.0f;
}

/* Half the block waits at a __syncthreads the other half skips. */
__global__ void half_sync_kernel(float *y) {
  if (threadIdx.x < 64) __syncthreads();
  y[threadIdx.x] = 1.0f;
}

/* Lane 5 of warp 1 waits at __syncthreads while its warp waits at
 * __ballot_sync (the others reach __syncthreads after their ballot). */
__global__ void split_warp_kernel(unsigned *y) {
  if (threadIdx.x == 37) {
    __syncthreads();
  } else {
    y[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
    __syncthreads();
  }
}

/* Lane 31 of warp 0 leaves while its warp waits at __ballot_sync. */
__global__ void ballot_exit_kernel(unsigned *y) {
  if (threadIdx.x == 31) return;
  y[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
}

static void *dev(size_t bytes) {
  void *p;
  if (cudaMalloc(&p, bytes)) abort();
  return p;
}

static void copy_kernels(void) {
  /* two warps sharing a tile by cp.async, a barrier and ldmatrix */
  {
    unsigned short hx[64];
    for (unsigned i = 0; i < 64; i++) hx[i] = (unsigned short)(i * 11 + 3);
    unsigned short *x = (unsigned short *)dev(sizeof hx);
    unsigned *d = (unsigned *)dev(64 * 4), h[64];
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    share_kernel<<<1, 64>>>(x, d, 0);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool good = true;
    for (unsigned l = 0; l < 32; l++)
      good &= h[32 + l] ==
              ((unsigned)hx[l / 4 * 8 + l % 4 * 2] | (unsigned)hx[l / 4 * 8 + l % 4 * 2 + 1] << 16);
    say(good,
        "a tile one warp copies by cp.async and another reads by ldmatrix after a __syncthreads: "
        "no report, its bits");
    cudaFree(x), cudaFree(d);
  }
  {
    unsigned short hx[64 * 8];
    for (unsigned i = 0; i < 64 * 8; i++) hx[i] = (unsigned short)(i * 37 + 1);
    unsigned short *x = (unsigned short *)dev(sizeof hx);
    unsigned *d = (unsigned *)dev(64 * 4), h[64];
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    emu_set_plain_races(0); /* its read before the wait would be reported */
    cp_async_kernel<<<1, 64>>>(x, d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); /* (runs the queued launch) */
    emu_set_plain_races(1);
    bool good = true;
    for (unsigned t = 0; t < 64; t++) good &= h[t] == 2;
    say(good, "cp.async lands at its wait_group, not before; a short copy fills zeros");
    cudaFree(x), cudaFree(d);
  }
  {
    unsigned *d = (unsigned *)dev(32 * 4), h[32];
    ldmatrix_kernel<<<1, 32>>>(d, 1);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool good = true;
    for (unsigned t = 0; t < 32; t++) good &= h[t] == 1;
    say(good, "ldmatrix .x4 .trans gives lane 4g+t elements (2t, g) and (2t+1, g) of each matrix");
    ldmatrix_kernel<<<1, 32>>>(d, 0);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    good = true;
    for (unsigned t = 0; t < 32; t++) good &= h[t] == 1;
    say(good, "ldmatrix .x4 gives lane 4g+t elements (g, 2t) and (g, 2t+1) of each matrix");
    shfl_kernel<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    good = true;
    for (unsigned t = 0; t < 32; t++) good &= h[t] == 1;
    say(good, "__shfl_down_sync and __shfl_sync read the named lane (down: its own past lane 31)");
    cudaFree(d);
  }
}

/* A missing barrier shows in one order or the other: a thread reading its
 * lower neighbour's store sees it in forward order and not in reverse,
 * the higher neighbour's the other way round; with the barrier both
 * orders are right. A block reading another block's store likewise. */
static void order_kernels(void) {
  const unsigned n = 64, blocks = 3;
  unsigned *out = (unsigned *)dev(blocks * n * 4), *first = (unsigned *)dev(blocks * 4);
  unsigned *seen = (unsigned *)dev(blocks * 4), h[blocks * n], hs[blocks], salt = 1000;
  /* Launched in `order`: whether every thread read its neighbour's store
   * and every block its neighbour's. */
  auto run = [&](const char *order, int barrier, int higher, bool *threads_right,
                 bool *blocks_right) {
    emu_set_order(order);
    salt += 1000;
    neighbour_kernel<<<blocks, n>>>(out, first, seen, salt, barrier, higher);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, seen, sizeof hs, cudaMemcpyDeviceToHost);
    *threads_right = *blocks_right = true;
    for (unsigned b = 0; b < blocks; b++) {
      for (unsigned t = 0; t < n; t++) {
        const unsigned u = higher ? (t + 1 < n ? t + 1 : t) : (t ? t - 1 : t);
        *threads_right &= h[b * n + t] == salt + u;
      }
      *blocks_right &= hs[b] == salt + (b ? b - 1 : 0);
    }
  };
  bool fwd_lo, rev_lo, fwd_hi, rev_hi, blk_f, blk_r, ignore;
  /* The orders alone, as in the ASan build, which has no check of plain
   * accesses (that check reports these races: plain_kernels; and the
   * blocks' reads of each other's stores even with the barrier). */
  emu_set_plain_races(0);
  run("forward", 0, 0, &fwd_lo, &blk_f);
  run("reverse", 0, 0, &rev_lo, &blk_r);
  run("forward", 0, 1, &fwd_hi, &ignore);
  run("reverse", 0, 1, &rev_hi, &ignore);
  say(fwd_lo && !rev_lo && !fwd_hi && rev_hi,
      "without a barrier, a read of another thread's store is wrong in one order "
      "(CUDA_EMU_ORDER): the lower neighbour's in reverse, the higher's forward");
  say(blk_f && !blk_r,
      "a block's read of a lower block's store in the same launch is wrong in reverse");
  bool a, b, c, d;
  run("forward", 1, 0, &a, &ignore);
  run("reverse", 1, 0, &b, &ignore);
  run("forward", 1, 1, &c, &ignore);
  run("reverse", 1, 1, &d, &ignore);
  say(a && b && c && d, "with the barrier, both neighbours' stores are read in both orders");
  emu_set_order("forward");
  emu_set_plain_races(1);
  cudaFree(out), cudaFree(first), cudaFree(seen);
}

static void good_kernels(void) {
  /* where: a 3x2x2 grid of 64 */
  {
    const unsigned n = 3 * 2 * 2 * 64;
    unsigned *d = (unsigned *)dev(n * 4), h[n];
    where_kernel<<<dim3(3, 2, 2), 64>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)) abort();
    bool good = true;
    for (unsigned z = 0; z < 2; z++)
      for (unsigned y = 0; y < 2; y++)
        for (unsigned x = 0; x < 3; x++)
          for (unsigned t = 0; t < 64; t++)
            good &= h[((z * 2 + y) * 3 + x) * 64 + t] == ((x << 24) | (y << 20) | (z << 16) | t);
    say(good, "every thread of a 3x2x2 grid of 64 sees its blockIdx and threadIdx");
    cudaFree(d);
  }
  /* tree sums: blocks of 32, 256 and 1024 */
  for (unsigned n : {32u, 256u, 1024u}) {
    const unsigned blocks = 3;
    std::vector<unsigned> hx(blocks * n), hout(blocks);
    for (unsigned i = 0; i < blocks * n; i++) hx[i] = i * 7 + 1;
    unsigned *x = (unsigned *)dev(hx.size() * 4), *out = (unsigned *)dev(blocks * 4);
    int *bad = (int *)dev(sizeof(int)), hbad = 0;
    cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(bad, &hbad, sizeof hbad, cudaMemcpyHostToDevice);
    tree_kernel<<<blocks, n>>>(x, out, bad);
    cudaMemcpy(hout.data(), out, blocks * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost);
    bool good = !hbad;
    for (unsigned b = 0; b < blocks; b++) {
      unsigned want = 0;
      for (unsigned i = 0; i < n; i++) want += hx[b * n + i];
      good &= hout[b] == want;
    }
    char what[128];
    snprintf(what, sizeof what,
             "__syncthreads over blocks of %u: every write before it seen after it, the sums right",
             n);
    say(good, what);
    cudaFree(x), cudaFree(out), cudaFree(bad);
  }
  /* ballots: 2 blocks of 1024 (32 warps) */
  {
    const unsigned blocks = 2, n = 1024;
    std::vector<unsigned> h(blocks * n * 2);
    unsigned *d = (unsigned *)dev(h.size() * 4);
    ballot_kernel<<<blocks, n>>>(d);
    cudaMemcpy(h.data(), d, h.size() * 4, cudaMemcpyDeviceToHost);
    bool good = true;
    for (unsigned b = 0; b < blocks; b++) {
      unsigned want = 0;
      for (unsigned lane = 0; lane < 32; lane++)
        want |= (unsigned)((b + lane) % 3 == 0 || lane == 31) << lane;
      for (unsigned t = 0; t < n; t++) {
        good &= h[(b * n + t) * 2] == want;
        good &= h[(b * n + t) * 2 + 1] == 1u << (t / 32 % 32);
      }
    }
    say(good, "__ballot_sync gives every lane its warp's votes, lane i's in bit i (32 warps)");
    cudaFree(d);
  }
  /* stacks */
  {
    int *bad = (int *)dev(sizeof(int)), hbad = 0;
    cudaMemcpy(bad, &hbad, sizeof hbad, cudaMemcpyHostToDevice);
    stack_kernel<<<2, 256>>>(bad);
    cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost);
    say(!hbad, "each thread's 64 KiB local array is its own across barriers");
    cudaFree(bad);
  }
  /* fresh shared memory, in both orders */
  {
    unsigned *d = (unsigned *)dev(3 * 64 * 4), h[3 * 64];
    bool good = true;
    for (const char *order : {"forward", "reverse"}) {
      const unsigned poison = strcmp(order, "reverse") ? 0x7f7f7f7fu : 0xffffffffu;
      emu_set_order(order);
      fresh_kernel<<<3, 64>>>(d);
      cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
      for (unsigned i = 0; i < 3 * 64; i++) good &= h[i] == (i % 2 ? i / 64 : poison);
    }
    emu_set_order("forward");
    say(good,
        "a block's __shared__ array starts as poison (0x7f bytes, reversed 0xff), not as the last "
        "block's");
    cudaFree(d);
  }
  /* early out */
  {
    unsigned *d = (unsigned *)dev(2 * 256 * 4), h[2 * 256];
    cudaMemset(d, 0, sizeof h);
    early_out_kernel<<<2, 256>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool good = true;
    for (unsigned t = 0; t < 2 * 256; t++) good &= h[t] == (t % 2 ? 0 : t % 256 + 1);
    say(good, "threads that return after the last barrier do not hang the block");
    cudaFree(d);
  }
}

/* In a child: run launch, which must abort with a report that contains
 * want (and want2, if given). */
static void must_hang(void (*launch)(void), const char *want, const char *what,
                      const char *want2 = nullptr) {
  int fd[2];
  fflush(stdout);
  if (pipe(fd)) abort();
  pid_t pid = fork();
  if (pid < 0) abort();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    launch();
    cudaDeviceSynchronize();
    _exit(0);
  }
  close(fd[1]);
  std::string err;
  char buf[512];
  ssize_t k;
  while ((k = read(fd[0], buf, sizeof buf)) > 0) err.append(buf, (size_t)k);
  close(fd[0]);
  int st;
  if (waitpid(pid, &st, 0) != pid) abort();
  bool good = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && err.find(want) != std::string::npos &&
              (!want2 || err.find(want2) != std::string::npos);
  say(good, what);
  if (!good)
    printf("  wanted SIGABRT and \"%s\"; got %s %d and: %s\n", want,
           WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
           err.c_str());
  else
    printf("  %s", err.c_str());
}

static void launch_early_return(void) { early_return_kernel<<<2, 128>>>((float *)dev(128 * 4)); }
static void launch_half_sync(void) { half_sync_kernel<<<1, 128>>>((float *)dev(128 * 4)); }
static void launch_split_warp(void) { split_warp_kernel<<<1, 64>>>((unsigned *)dev(64 * 4)); }
static void launch_ballot_exit(void) { ballot_exit_kernel<<<1, 32>>>((unsigned *)dev(32 * 4)); }
static void launch_ldmatrix_misaligned(void) {
  ldmatrix_misaligned_kernel<<<1, 32>>>((unsigned *)dev(32 * 4));
}
static void launch_shfl_half(void) { shfl_half_kernel<<<1, 32>>>((unsigned *)dev(32 * 4)); }
static void launch_cp_unwaited(void) {
  cp_async_unwaited_kernel<<<1, 32>>>((const unsigned short *)dev(16));
}
static void launch_cp_misaligned(void) {
  cp_async_misaligned_kernel<<<1, 32>>>((const unsigned short *)dev(16));
}
static void launch_share(int mode) {
  share_kernel<<<1, 64>>>((const unsigned short *)dev(128), (unsigned *)dev(64 * 4), mode);
}
static void launch_plain(int mode) {
  plain_kernel<<<1, 64>>>((const unsigned short *)dev(16), (unsigned *)dev(64 * 4), mode);
}
[[maybe_unused]] static void launch_plain_raw(void) { launch_plain(1); }
[[maybe_unused]] static void launch_plain_ww(void) { launch_plain(2); }
[[maybe_unused]] static void launch_plain_lanes(void) { launch_plain(3); }
[[maybe_unused]] static void launch_plain_ldmatrix(void) { launch_plain(6); }
[[maybe_unused]] static void launch_plain_inflight(void) { launch_plain(7); }
[[maybe_unused]] static void launch_plain_mixed(void) { launch_plain(8); }
static void launch_plain_global(int mode) {
  plain_global_kernel<<<2, 64>>>((unsigned *)dev(256 * 4), mode);
}
[[maybe_unused]] static void launch_global_ww(void) { launch_plain_global(1); }
[[maybe_unused]] static void launch_global_raw(void) { launch_plain_global(2); }
[[maybe_unused]] static void launch_global_war(void) { launch_plain_global(3); }
[[maybe_unused]] static void launch_global_threads(void) { launch_plain_global(4); }

/* The orderings the plain race check accepts, with the bits read. */
[[maybe_unused]] static void plain_kernels(void) {
  unsigned *d = (unsigned *)dev(64 * 4), h[64];
  bool good = true;
  for (const char *order : {"forward", "reverse"}) {
    emu_set_order(order);
    plain_kernel<<<1, 64>>>((const unsigned short *)dev(16), d, 4);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned t = 0; t < 64; t++) good &= h[t] == 100 + t / 32 * 32 + (t % 32 + 1) % 32;
    plain_kernel<<<1, 64>>>((const unsigned short *)dev(16), d, 5);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (unsigned t = 32; t < 64; t++) good &= h[t] == 100 + t % 32;
  }
  emu_set_order("forward");
  say(good,
      "lanes reading each other's stores after __syncwarp, warps after __syncthreads: no "
      "report, in both orders, the bits stored");
  cudaFree(d);
  unsigned *x = (unsigned *)dev(256 * 4), hx[256];
  good = true;
  for (const char *order : {"forward", "reverse"}) {
    emu_set_order(order);
    plain_global_kernel<<<2, 64>>>(x, 5);
    cudaMemcpy(hx, x, sizeof hx, cudaMemcpyDeviceToHost);
    for (unsigned i = 128; i < 256; i++) good &= hx[i] == 100 + (i % 64 ^ 32);
  }
  emu_set_order("forward");
  say(good,
      "each block in its own global words, its threads' after a __syncthreads: no report, "
      "in both orders, the bits stored");
  cudaFree(x);
}

static void launch_share_raw(void) { launch_share(1); }
static void launch_share_war(void) { launch_share(2); }
static void launch_share_inflight(void) { launch_share(3); }
static void launch_share_ww(void) { launch_share(4); }

int main(void) {
  /* The reports below name the thread that gets there first: forward. */
  emu_set_order("forward");
  good_kernels();
  order_kernels();
  copy_kernels();
#if defined(__SANITIZE_THREAD__) /* the instrumentation the check needs (not with ASan) */
  plain_kernels();
  must_hang(launch_plain_raw,
            "plain_kernel, block (0,0,0), thread 32: reads shared memory (s + 0 bytes) that thread "
            "0 (warp 0) stored to, with no __syncthreads between (at plain_kernel(",
            "a plain read of another warp's store, with no barrier between, is reported");
  must_hang(launch_plain_ww,
            "plain_kernel, block (0,0,0), thread 32: stores to shared memory (s + 0 bytes) that "
            "thread 0 (warp 0) stored to, with no __syncthreads between",
            "two warps' plain stores to one word, with no barrier between, are reported");
  must_hang(launch_plain_lanes,
            "plain_kernel, block (0,0,0), thread 1: stores to shared memory (s + 4 bytes) that "
            "thread 0 (warp 0) read, with no __syncwarp or __syncthreads between",
            "a lane's store over what another lane read, with no __syncwarp between, is reported");
  must_hang(
      launch_plain_ldmatrix,
      "plain_kernel, block (0,0,0), thread 32: ldmatrix reads shared memory (s + 0 bytes) that "
      "thread 0 (warp 0) stored to, with no __syncthreads between",
      "an ldmatrix of another warp's plain stores, with no barrier between, is reported");
  must_hang(launch_plain_inflight,
            "plain_kernel, block (0,0,0), thread 0: reads shared memory (s + 4 bytes) while a "
            "cp.async of thread 0 (warp 0) to it is in flight",
            "a plain read of a chunk whose cp.async is in flight is reported");
  must_hang(launch_global_ww,
            "plain_global_kernel, block (1,0,0), thread 0: stores to global memory (0 bytes into a "
            "device allocation of 1024 at ",
            "two blocks' stores to one global word in a launch are reported",
            "that block (0,0,0) stored to in the same launch (nothing orders two blocks");
  must_hang(launch_global_raw,
            "plain_global_kernel, block (1,0,0), thread 0: reads global memory (0 bytes into a "
            "device allocation of 1024 at ",
            "a block's read of another block's global store in the same launch is reported",
            "that block (0,0,0) stored to in the same launch");
  must_hang(launch_global_war,
            "plain_global_kernel, block (1,0,0), thread 0: stores to global memory (0 bytes into a "
            "device allocation of 1024 at ",
            "a block's store over what another block read in the same launch is reported",
            "that block (0,0,0) read in the same launch");
  must_hang(
      launch_global_threads,
      "plain_global_kernel, block (0,0,0), thread 32: stores to global memory (128 bytes into "
      "a device allocation of 1024 at ",
      "a thread's global store over what another warp of its block read, with no barrier "
      "between, is reported",
      "that thread 0 (warp 0) read, with no __syncthreads between");
  must_hang(launch_plain_mixed,
            "plain_kernel, block (0,0,0), thread 31: 16 lanes of its warp meet at __syncwarp, the "
            "others at another warp instruction",
            "half a warp at __syncwarp and half at a shuffle is reported");
#else
  printf(
      "skip: the race check of plain shared-memory accesses (this build has no "
      "-fsanitize=thread instrumentation, ci/cuda_emu/build.sh)\n");
#endif
  must_hang(
      launch_share_raw,
      "share_kernel, block (0,0,0), thread 32: ldmatrix reads shared memory (s + 0 bytes) that "
      "thread 0 (warp 0) stored to, with no __syncthreads between",
      "an ldmatrix of what another warp's cp.async wrote, with no barrier between, is reported");
  must_hang(
      launch_share_war,
      "share_kernel, block (0,0,0), thread 32: cp.async writes shared memory (s + 0 bytes) that "
      "thread 0 (warp 0) read, with no __syncthreads between",
      "a cp.async over what another warp read by ldmatrix, with no barrier between, is reported");
  must_hang(
      launch_share_inflight,
      "share_kernel, block (0,0,0), thread 32: ldmatrix reads shared memory (s + 0 bytes) while a "
      "cp.async of thread 0 (warp 0) to it is in flight",
      "an ldmatrix of a chunk whose cp.async is in flight is reported");
  must_hang(
      launch_share_ww,
      "share_kernel, block (0,0,0), thread 32: cp.async writes shared memory (s + 0 bytes) while a "
      "cp.async of thread 0 (warp 0) to it is in flight",
      "a cp.async over a chunk another warp's cp.async has in flight is reported");
  must_hang(launch_cp_misaligned,
            "cp_async_misaligned_kernel, block (0,0,0), thread 3: cp.async of 16 bytes from",
            "a cp.async to an address that is not 16-byte aligned is reported");
  must_hang(launch_cp_unwaited,
            "cp_async_unwaited_kernel, block (0,0,0), thread 0: has finished with 1 cp.async "
            "copies never waited for",
            "a cp.async copy never waited for is reported");
  must_hang(launch_ldmatrix_misaligned,
            "ldmatrix_misaligned_kernel, block (0,0,0), thread 5: passes ldmatrix a row address",
            "an ldmatrix row address that is not 16-byte aligned is reported");
  must_hang(launch_shfl_half,
            "shfl_half_kernel, block (0,0,0), thread 0: shuffles with mask 0xffff",
            "a shuffle that does not name the whole warp is reported");
  must_hang(launch_early_return,
            "early_return_kernel, block (1,0,0), thread 1: waits at __syncthreads, but thread 0 "
            "of the block has finished",
            "a thread that returns before a __syncthreads is reported (kernel, block, thread)");
  must_hang(launch_half_sync,
            "half_sync_kernel, block (0,0,0), thread 64: has finished, but thread 0 of the "
            "block waits at __syncthreads",
            "a __syncthreads that half the block skips is reported");
  must_hang(launch_split_warp,
            "split_warp_kernel, block (0,0,0), thread 37: waits at __syncthreads, but thread 32 "
            "of its warp waits at __ballot_sync",
            "a warp split between __ballot_sync and __syncthreads is reported");
  must_hang(launch_ballot_exit,
            "ballot_exit_kernel, block (0,0,0), thread 31: has finished, but thread 0 of its "
            "warp waits at __ballot_sync",
            "a lane that returns while its warp waits at __ballot_sync is reported");
  return failed;
}
