/* Causal grouped-query attention on the tensor cores, for the official
 * mixed precision (KERNEL_BF16; contract in attention.h).
 *
 * Why: every product of the mixed-precision attention has two bf16
 * factors (q, k, v, dy are bf16 tensors; the probabilities and ds are
 * rounded to bf16 before their products, attention.h), which is what an
 * mma.sync m16n8k16 bf16 instruction multiplies, with float32
 * accumulation. The CUDA-core kernels (attention.cu) spend 1,280 float32
 * flops per causal pair and cannot reach the official step time at any
 * efficiency (docs/GPU-RUNS.md); these put the products of a pair (the
 * scores, dy.v, and the output sums) on the tensor cores and keep on the
 * CUDA cores only what is per element: the exponentials (det_expf32.h,
 * float32 arithmetic, as attention.c takes them in mixed precision), the
 * roundings and the sum of exponentials. The backward evaluates the scores, dy.v
 * and the exponentials once, in the dk/dv kernel, which stores ds (bf16,
 * exact) in caller-supplied scratch; the dq kernel sums dq from it. No
 * float is added atomically.
 *
 * Same sums, same order, other adder: the kernels take every sum in the
 * CPU's order (attention_forward_simple, attention_backward_simple): a
 * dot product over d ascending, y and dq over keys ascending, dk and dv
 * over (head, query) ascending, each a chain of mma instructions 16
 * terms at a time with the running sum as the accumulator; the softmax
 * is not online (the row maxima come first, as in attention.cu). What a
 * tensor core does inside one instruction (16 exact products and the
 * accumulator added at a wider precision, one rounding) is not an fmaf
 * chain, so on a GPU the results are close to the CPU's, not equal
 * (tests/test_cuda_attention.c's tolerance), and equal run to run: the
 * instruction sequence and every tree are fixed by the shape. On
 * ci/cuda-emu.sh's stand-in an mma is an fmaf chain, k ascending
 * (ci/cuda_emu/emu.h), so there the kernels must equal the CPU bit for bit,
 * which checks every index, fragment and mask. Masked terms (a key after
 * its query, rows past T) enter the chains as exact zeros.
 *
 * The sum of exponentials l_t is float32, j ascending, as the CPU's:
 * each warp writes its tile of exponentials to shared memory and 16 of
 * its lanes add a row each.
 *
 * Tiles: a block is four warps; a warp owns 16 rows (an mma's M) of the
 * block's 64 (queries for the forward and dq, keys for dk and dv) and
 * walks the other side in tiles of 32 rows staged in shared memory as
 * bf16, row-major, each row padded by 8 bf16s so that the 8 rows a
 * fragment load touches start in different banks. Fragments come by
 * ldmatrix, four 8 x 8 matrices an instruction: A operands and B
 * operands indexed (n, k) as stored; where a B is indexed (k, n) (v in
 * the forward, k in dq, q and dy in dk and dv), the
 * same row-major tile is read transposed by ldmatrix .trans, so no tile
 * is staged twice or transposed by 16-bit stores (so is ds, stored by
 * keys, into dq's A operands of queries by keys). The walked tiles are
 * double-buffered: tile i + 1 is staged while tile i is used, packed
 * operands by cp.async straight into shared memory, so the loads' latency
 * hides behind the products (one barrier a tile).
 * head_dim is a template argument (16, 32, 48 or 64: the fragments and
 * accumulators stay in registers); wider heads run on the CUDA cores. */
#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/det_expf32.h"
#include "kernels/det_math_hd.h"
#include "kernels/flags.h"

#include <math.h>
#include <stdint.h>

enum {
  AM_WARPS = 4,
  AM_THREADS = 32 * AM_WARPS,
  AM_WR = 16,               /* rows per warp: an mma's M */
  AM_BR = AM_WR * AM_WARPS, /* rows per block */
  AM_BC = 32,               /* rows of the other side per staged tile */
  AM_PAD = 8,               /* bf16s of padding per staged row */
  AM_NT = AM_BC / 8,        /* n-tiles of 8 across a staged tile */
  AM_ES = AM_BC + 4,        /* floats per row of the forward's exponentials */
  /* The forward's blocks an SM must hold: 4 caps it at 128 registers a
   * thread (ptxas gave the packed 64-wide one 160 once it staged by
   * cp.async, which left room for 3). */
  AM_FWD_BLOCKS = 4,
  /* dkv's: 3 caps it at 168 (its 64-wide instance used 168 before its
   * exponentials ran interleaved, am_exp_tile, and it stored ds). */
  AM_DKV_BLOCKS = 3,
  /* dq's (which sums ds, no exponentials): 4; uncapped, ptxas gave it 96
   * registers and a spill. */
  AM_DQ_BLOCKS = 4,
};

/* ---- kernels ---- */

/* d += a b for one m16n8k16 tile (fragments in the PTX ISA's layout). */
__device__ static __forceinline__ void am_mma(float d[4], const uint32_t a[4], const uint32_t b[2]) {
#ifdef PGOLF_CUDA_EMU
  emu_mma_bf16_m16n8k16(d, a, b);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

/* Two values as packed bf16s, the first in the low half (exact for the
 * bf16 values KERNEL_BF16 promises; rounded to nearest even otherwise). */
__device__ static __forceinline__ uint32_t am_pack(float lo, float hi) {
  return (uint32_t)bf16_from_float(lo) | (uint32_t)bf16_from_float(hi) << 16;
}

/* The same for two values that are bf16 already (kernel_round's results,
 * NaN included: their low halves are zero): the high halves, one byte
 * permute on the GPU where a rounding took about seven instructions. */
__device__ static __forceinline__ uint32_t am_pack_bf16(float lo, float hi) {
  return hd_float_bits(lo) >> 16 | (hd_float_bits(hi) & 0xffff0000u);
}

/* A lane's 16 x 32 tile of accumulators (x[n][i], n-tiles of 8) rounded
 * to bf16 as the words of mma A fragments: w[n][r] holds x[n][2 r] (low
 * half) and x[n][2 r + 1], a row's two adjacent columns (am_row, am_col).
 * These tiles (the forward's probabilities, dkv's probabilities and ds)
 * are only ever mma operands, so they take bf16_pack2_mma: on the GPU
 * one conversion a pair, a NaN there the hardware's NaN, and the GPU's
 * contract for these kernels is a tolerance (attention.h); on the
 * stand-in, as on the CPU, bf16_from_float's bits, which it must equal
 * bit for bit. */
__device__ static __forceinline__ void am_round_tile(uint32_t (*w)[2], const float (*x)[4]) {
  #pragma unroll
  for (int n = 0; n < AM_NT; n++)
    #pragma unroll
    for (int r = 0; r < 2; r++) w[n][r] = bf16_pack2_mma(x[n][2 * r], x[n][2 * r + 1]);
}

/* Four 8 x 8 matrices of a staged tile (ldmatrix): lane 8 m + i passes
 * row i of matrix m (16 bytes, 16-byte aligned); r[m] receives, in lane
 * 4 g + t, the elements (g, 2 t) and (g, 2 t + 1) of matrix m: an A
 * fragment's register, or a B fragment's for a B stored by rows of n.
 * One instruction for what took four 32-bit loads. With TRANS (ldmatrix
 * .trans) the elements (2 t, g) and (2 t + 1, g): the B fragment layout
 * of mma.m16n8k16 for a B stored by rows of k. */
template <bool TRANS>
__device__ static __forceinline__ void am_ldsm4(uint32_t r[4], const uint16_t *row) {
#ifdef PGOLF_CUDA_EMU
  if constexpr (TRANS)
    emu_ldmatrix_trans(r, 4, row);
  else
    emu_ldmatrix(r, 4, row);
#else
  const unsigned a = (unsigned)__cvta_generic_to_shared(row);
  if constexpr (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
#endif
}

/* Four consecutive float operands: a float4 load (16-byte aligned). */
__device__ static __forceinline__ float4 am_load4(const float *p) { return *(const float4 *)p; }

/* 16 bytes from global src to shared dst without passing through
 * registers (cp.async, in the group am_commit closes); bytes < 16 reads
 * that many and fills the rest with zeros. Complete once am_wait says so;
 * seen by the other threads after a barrier that follows. */
__device__ static __forceinline__ void am_cp16(uint16_t *dst, const uint16_t *src, int bytes) {
#ifdef PGOLF_CUDA_EMU
  emu_cp_async16(dst, src, bytes);
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   (unsigned)__cvta_generic_to_shared(dst)),
               "l"(src), "r"(bytes));
#endif
}

/* Closes this thread's group of copies; waits until at most N of its
 * groups are still in flight. */
__device__ static __forceinline__ void am_commit() {
#ifdef PGOLF_CUDA_EMU
  emu_cp_async_commit();
#else
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ static __forceinline__ void am_wait() {
#ifdef PGOLF_CUDA_EMU
  emu_cp_async_wait(N);
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

/* Rows [r0, r0 + R) of x (row stride width elements, HD columns from col)
 * into shared memory as bf16, row-major into rm (stride HD + AM_PAD).
 * Rows at or past n are zeros. x is floats, read four at a time (16-byte
 * aligned: the launchers check) and packed here, or packed bf16s (as the
 * GEMMs and qk_norm leave them), copied eight at a time by cp.async (16-
 * byte aligned: the launchers check); the staged bits are the same. The
 * packed copies complete at am_wait (the floats at once), so a tile can be
 * staged while the one before it is used. R is a template argument so
 * that a thread's copies (R * HD / 8 over the block's threads: 2 for a
 * 64-wide tile of 32 rows) unroll into straight code; with R a runtime
 * bound the compiler made each call a loop unrolled by four with a
 * remainder loop, about 100 instructions of index arithmetic for the
 * two copies. */
template <int HD, int R>
__device__ static __forceinline__ void am_stage(uint16_t *rm, const float *x, size_t width,
                                                size_t col, int r0, int n) {
  constexpr int H4 = HD / 4, N = R * H4;
  /* two copies in flight a thread: more spill the float-input 64-wide
   * forward at its 128 registers (ptxas) */
  #pragma unroll 2
  for (int c = 0; c < N; c += AM_THREADS) {
    const int i = c + threadIdx.x;
    if (N % AM_THREADS != 0 && i >= N) break;
    const int r = i / H4, d = i % H4 * 4;
    float4 v = float4{0.0f, 0.0f, 0.0f, 0.0f};
    if (r0 + r < n) v = am_load4(x + (size_t)(r0 + r) * width + col + d);
    uint32_t *w = (uint32_t *)(rm + r * (HD + AM_PAD) + d);
    w[0] = am_pack(v.x, v.y);
    w[1] = am_pack(v.z, v.w);
  }
}
template <int HD, int R>
__device__ static __forceinline__ void am_stage(uint16_t *rm, const uint16_t *x, size_t width,
                                                size_t col, int r0, int n) {
  constexpr int H8 = HD / 8, N = R * H8;
  #pragma unroll
  for (int c = 0; c < N; c += AM_THREADS) {
    const int i = c + threadIdx.x;
    if (N % AM_THREADS != 0 && i >= N) break;
    const int r = i / H8, d = i % H8 * 8, in = r0 + r < n;
    /* a row past n reads nothing: its address is row 0's, which exists */
    am_cp16(rm + r * (HD + AM_PAD) + d, x + (in ? (size_t)(r0 + r) * width : 0) + col + d,
            in ? 16 : 0);
  }
}

/* The A fragment of rows [r0, r0 + 16), columns [16 kc, 16 kc + 16) of a
 * row-major tile of row stride s (a multiple of 8): matrices (rows 0-7,
 * columns 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15) are a[0..3], by
 * one ldmatrix (LDSM) or four 32-bit loads (where ptxas spills the
 * ldmatrix form; the same bits). */
template <bool LDSM = true>
__device__ static __forceinline__ void am_load_a(uint32_t a[4], const uint16_t *tile, int s, int r0,
                                                 int kc) {
  const int lane = threadIdx.x % 32, m = lane / 8;
  if constexpr (LDSM) {
    am_ldsm4<false>(a, tile + (r0 + m % 2 * 8 + lane % 8) * s + kc * 16 + m / 2 * 8);
  } else {
    const uint16_t *p = tile + (r0 + lane / 4) * s + kc * 16 + lane % 4 * 2;
    a[0] = *(const uint32_t *)p, a[1] = *(const uint32_t *)(p + 8 * s);
    a[2] = *(const uint32_t *)(p + 8), a[3] = *(const uint32_t *)(p + 8 * s + 8);
  }
}

/* The B fragments B(k, n) = tile[8 o + n][16 kc + k] of n-tiles o and
 * o + 1 (b[0..1] and b[2..3]) of a tile of row stride s: the product with
 * a matrix stored by rows of n. */
__device__ static __forceinline__ void am_load_b2(uint32_t b[4], const uint16_t *tile, int s, int o,
                                                  int kc) {
  const int lane = threadIdx.x % 32, m = lane / 8;
  am_ldsm4<false>(b, tile + ((o + m / 2) * 8 + lane % 8) * s + kc * 16 + m % 2 * 8);
}

/* s[n] = the 16 x 32 products of the warp's A fragments (KC of them) with
 * the rows of a staged row-major tile: a dot product over d ascending.
 * The B fragments of two n-tiles come by one ldmatrix (PAIRS), or of
 * one by two 32-bit loads where ptxas spills the pairs (ci/cuda-static.sh
 * checks); the products and their order are the same. */
template <int HD, bool PAIRS = true>
__device__ static __forceinline__ void am_scores(float (*s)[4], const uint32_t (*a)[4],
                                                 const uint16_t *tile) {
  constexpr int S = HD + AM_PAD;
  const int lane = threadIdx.x % 32;
  #pragma unroll
  for (int n = 0; n < AM_NT; n += PAIRS ? 2 : 1) {
    s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
    if constexpr (PAIRS) s[n + 1][0] = s[n + 1][1] = s[n + 1][2] = s[n + 1][3] = 0.0f;
    #pragma unroll
    for (int kc = 0; kc < HD / 16; kc++) {
      uint32_t b[4];
      if constexpr (PAIRS) {
        am_load_b2(b, tile, S, n, kc);
        am_mma(s[n], a[kc], b);
        am_mma(s[n + 1], a[kc], b + 2);
      } else {
        const uint16_t *p = tile + (n * 8 + lane / 4) * S + kc * 16 + lane % 4 * 2;
        b[0] = *(const uint32_t *)p, b[1] = *(const uint32_t *)(p + 8);
        am_mma(s[n], a[kc], b);
      }
    }
  }
}

/* acc[o] += a (the A fragment of 16 rows by the 16 columns kc of a
 * 32-row tile) times rows 16 kc .. 16 kc + 15 of the staged row-major
 * tile rm (rm[j][d]): the B fragments of n-tiles o and o + 1 by one
 * ldmatrix .trans, lane 8 m + i naming row 16 kc + 8 (m % 2) + i,
 * columns from 8 (o + m / 2). */
template <int HD>
__device__ static __forceinline__ void am_accumulate_kc(float (*acc)[4], const uint32_t a[4],
                                                        const uint16_t *rm, int kc) {
  const int lane = threadIdx.x % 32, m = lane / 8;
  #pragma unroll
  for (int o = 0; o < HD / 8; o += 2) {
    uint32_t b[4];
    am_ldsm4<true>(b, rm + (kc * 16 + m % 2 * 8 + lane % 8) * (HD + AM_PAD) + (o + m / 2) * 8);
    am_mma(acc[o], a, b);
    am_mma(acc[o + 1], a, b + 2);
  }
}

/* acc[o] += x (16 x 32 bf16s as am_round_tile's words) times the staged
 * row-major tile rm (32 rows j). An accumulator's layout is the A
 * operand's: the A fragment of columns [16 kc, 16 kc + 16) is n-tiles
 * 2 kc and 2 kc + 1, rows 0-7 then 8-15 of each. */
template <int HD>
__device__ static __forceinline__ void am_accumulate(float (*acc)[4], const uint32_t (*w)[2],
                                                     const uint16_t *rm) {
  #pragma unroll
  for (int kc = 0; kc < AM_BC / 16; kc++) {
    const uint32_t a[4] = {w[2 * kc][0], w[2 * kc][1], w[2 * kc + 1][0], w[2 * kc + 1][1]};
    am_accumulate_kc<HD>(acc, a, rm, kc);
  }
}

/* Where element i of n-tile n of a lane's accumulators lies: row (of the
 * warp's 16) and column. */
__device__ static __forceinline__ int am_row(int i) { return threadIdx.x % 32 / 4 + 8 * (i / 2); }
__device__ static __forceinline__ int am_col(int n, int i) {
  return n * 8 + threadIdx.x % 4 * 2 + i % 2;
}

__device__ static __forceinline__ int am_min(int a, int b) { return a < b ? a : b; }

/* The largest of four maxima (NaN never enters: x > NaN is false, as in
 * the CPU's running maximum). */
__device__ static __forceinline__ float am_max4(const float *m) {
  float mm = -INFINITY;
  for (int i = 0; i < 4; i++)
    if (m[i] > mm) mm = m[i];
  return mm;
}

/* A lane's element i of n-tile n as a bit of a 16-bit tile mask. */
__device__ static __forceinline__ unsigned am_bit(int n, int i) { return 1u << (4 * n + i); }

/* x[n][i] = det_expf32(x[n][i]) where live has am_bit(n, i), else +0.0
 * (a masked term enters the chains as an exact zero; its x may be
 * anything, NaN included). A masked x is replaced by -inf, whose
 * exponential is +0.0, rather than its result by a select: with the
 * select, nvcc put each exponential under a branch of its lane's bit
 * (16 divergent regions a tile); this way the tile's 16 are straight
 * float32 code, interleaved as the compiler schedules them. */
__device__ static __forceinline__ void am_exp_tile(float (*x)[4], unsigned live) {
  #pragma unroll
  for (int n = 0; n < AM_NT; n++)
    #pragma unroll
    for (int i = 0; i < 4; i++) x[n][i] = det_expf32_hd(live & am_bit(n, i) ? x[n][i] : -INFINITY);
}

/* Two adjacent results (p even): two floats, or two bf16s in one word
 * (exact: under KERNEL_BF16 every result is rounded first). */
__device__ static __forceinline__ void am_put2(float *p, float a, float b) { p[0] = a, p[1] = b; }
__device__ static __forceinline__ void am_put2(uint16_t *p, float a, float b) {
  *(uint32_t *)p = am_pack_bf16(a, b);
}

/* Rows first + 0..15 of a warp's 16 x HD accumulators, each times mul and
 * rounded as the flags say, into out (row j at out + j * stride, the
 * head's first column at out; floats, or packed where the operands came
 * packed); rows at or past T are not written. */
template <int HD, typename Out>
__device__ static __forceinline__ void am_store(Out *out, size_t stride, int first, int T,
                                                const float (*acc)[4], float mul, int flags) {
  #pragma unroll
  for (int o = 0; o < HD / 8; o++)
    #pragma unroll
    for (int r = 0; r < 2; r++) {
      const int j = first + am_row(2 * r);
      if (j >= T) continue;
      am_put2(out + (size_t)j * stride + am_col(o, 0), kernel_round(acc[o][2 * r] * mul, flags),
              kernel_round(acc[o][2 * r + 1] * mul, flags));
    }
}

/* Forward of query rows [t0, t0 + 64) of head h of sequence b. */
template <int HD, typename In>
__global__ void __launch_bounds__(AM_THREADS, AM_FWD_BLOCKS)
    attention_mma_forward_kernel(float *y, uint16_t *y16, float *lse, const In *q, const In *k,
                                 const In *v, int T, int heads, int kv_heads, float scale,
                                 int flags) {
  constexpr int SQ = HD + AM_PAD, KC = HD / 16, ON = HD / 8;
  __shared__ __align__(16) uint16_t qs[AM_BR * SQ];
  __shared__ __align__(16) uint16_t ks[2][AM_BC * SQ]; /* tile i in ks[i % 2] */
  __shared__ __align__(16) uint16_t vs[2][AM_BC * SQ];
  /* es's rows are AM_ES floats: a warp's float2 stores meet 2-way bank
   * conflicts, the sums' float4 loads none (AM_BC + 1 gave the stores
   * 4-way conflicts and the sums 32 scalar loads a lane and tile). */
  __shared__ __align__(16) float es[AM_BR][AM_ES];
  __shared__ float mx[AM_BR][4], lrow[AM_BR];
  const int b = blockIdx.z, h = blockIdx.y, t0 = blockIdx.x * AM_BR;
  const int kvh = h / (heads / kv_heads), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t qw = (size_t)heads * HD, kw = (size_t)kv_heads * HD;
  const In *kb = k + (size_t)b * T * kw, *vb = v + (size_t)b * T * kw;
  const int w0 = warp * AM_WR, first = t0 + w0;        /* the warp's first query row */
  const int wlast = am_min(first + AM_WR, T) - 1;         /* and its last */
  const int last = am_min(t0 + AM_BR, T) - 1;             /* the block's last */
  /* Each pass stages key tile i + 1 while it uses tile i: the top of an
   * iteration waits for tile i's copies, and its barrier makes them
   * visible and frees the other buffer (its tile i - 1 has been used). */
  const int tiles = last / AM_BC + 1;
  am_stage<HD, AM_BR>(qs, q + (size_t)b * T * qw, qw, (size_t)h * HD, t0, T);
  am_stage<HD, AM_BC>(ks[0], kb, kw, (size_t)kvh * HD, 0, T);
  am_commit();
  am_wait<0>();
  __syncthreads();
  uint32_t qa[KC][4];
  #pragma unroll
  for (int kc = 0; kc < KC; kc++) am_load_a(qa[kc], qs, SQ, w0, kc);

  /* Pass 1: each lane's maxima of its two rows, then each row's over the
   * four lanes that hold it (a maximum is exact in any order). */
  float m[2] = {-INFINITY, -INFINITY};
  for (int i = 0; i < tiles; i++) {
    const int j0 = i * AM_BC;
    am_wait<0>();
    __syncthreads();
    if (i + 1 < tiles)
      am_stage<HD, AM_BC>(ks[(i + 1) % 2], kb, kw, (size_t)kvh * HD, j0 + AM_BC, T);
    am_commit();
    if (first >= T || j0 > wlast) continue; /* the whole warp: no key it sees */
    float s[AM_NT][4];
    am_scores<HD>(s, qa, ks[i % 2]);
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int i = 0; i < 4; i++) {
        const int t = first + am_row(i), j = j0 + am_col(n, i);
        const float x = s[n][i] * scale;
        if (t < T && j <= t && x > m[i / 2]) m[i / 2] = x;
      }
  }
  mx[w0 + am_row(0)][lane % 4] = m[0];
  mx[w0 + am_row(2)][lane % 4] = m[1];
  __syncwarp();
  const float mrow[2] = {am_max4(mx[w0 + am_row(0)]), am_max4(mx[w0 + am_row(2)])};

  /* Pass 2: e_tj = exp(s_tj - m_t), y_t += bf16(e_tj) v_j on the tensor
   * cores, and l_t = sum_j e_tj by lane t of the warp (rows 0..15). */
  float acc[ON][4];
  #pragma unroll
  for (int o = 0; o < ON; o++) acc[o][0] = acc[o][1] = acc[o][2] = acc[o][3] = 0.0f;
  float l = 0.0f;
  __syncthreads(); /* pass 1's last tile used before tile 0 is staged anew */
  am_stage<HD, AM_BC>(ks[0], kb, kw, (size_t)kvh * HD, 0, T);
  am_stage<HD, AM_BC>(vs[0], vb, kw, (size_t)kvh * HD, 0, T);
  am_commit();
  for (int i = 0; i < tiles; i++) {
    const int j0 = i * AM_BC;
    am_wait<0>();
    __syncthreads();
    if (i + 1 < tiles) {
      am_stage<HD, AM_BC>(ks[(i + 1) % 2], kb, kw, (size_t)kvh * HD, j0 + AM_BC, T);
      am_stage<HD, AM_BC>(vs[(i + 1) % 2], vb, kw, (size_t)kvh * HD, j0 + AM_BC, T);
    }
    am_commit();
    if (first >= T || j0 > wlast) continue;
    float s[AM_NT][4];
    am_scores<HD>(s, qa, ks[i % 2]);
    unsigned live = 0;
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int i = 0; i < 4; i++) {
        const int t = first + am_row(i), j = j0 + am_col(n, i);
        if (t < T && j <= t) live |= am_bit(n, i);
        s[n][i] = s[n][i] * scale - mrow[i / 2];
      }
    am_exp_tile(s, live);
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int r = 0; r < 2; r++)
        *(float2 *)&es[w0 + am_row(2 * r)][am_col(n, 0)] = float2{s[n][2 * r], s[n][2 * r + 1]};
    uint32_t sw[AM_NT][2];
    am_round_tile(sw, s);
    am_accumulate<HD>(acc, sw, vs[i % 2]);
    __syncwarp();
    /* The row's exponentials j ascending; a masked one is +0.0, which
     * leaves l's bits as they are (l starts at +0.0 and adds no negative
     * term, so it is never -0.0): the loop has no bound to test and its
     * loads go out together. */
    if (lane < AM_WR) {
      #pragma unroll
      for (int i = 0; i < AM_BC; i += 4) {
        const float4 e = *(const float4 *)&es[w0 + lane][i];
        l += e.x, l += e.y, l += e.z, l += e.w;
      }
    }
  }
  if (lane < AM_WR) lrow[w0 + lane] = l;
  __syncwarp();
  if (first >= T) return;
  #pragma unroll
  for (int o = 0; o < ON; o++)
    #pragma unroll
    for (int r = 0; r < 2; r++) {
      const int t = first + am_row(2 * r);
      if (t >= T) continue;
      const float lt = lrow[w0 + am_row(2 * r)];
      const size_t at = ((size_t)b * T + t) * qw + (size_t)h * HD + am_col(o, 0);
      const float r0 = kernel_round(acc[o][2 * r] / lt, flags);
      const float r1 = kernel_round(acc[o][2 * r + 1] / lt, flags);
      if (y) y[at] = r0, y[at + 1] = r1;
      if (y16) y16[at] = bf16_from_float(r0), y16[at + 1] = bf16_from_float(r1);
    }
  if (lane < AM_WR && first + lane < T)
    lse[((size_t)b * heads + h) * T + first + lane] =
        am_max4(mx[w0 + lane]) + det_logf_hd(l);
}

/* dkv's ds for the warp's keys [first, first + 16) and queries [t0, t0 +
 * 32) (am_round_tile's words) into the head's matrix (ds[j][t], row
 * stride ts), two queries a 32-bit store; keys past T are not stored,
 * nor pairs that start past T. A pair that starts at T - 1 (T odd) also
 * writes column T, a masked +0.0: ts is T rounded up to 8
 * (attention_ds_stride), so that is the row's padding, which nothing
 * reads (am_stage_ds copies columns below T only). One store, where a
 * single bf16's store for the last column made a branch of each pair. */
__device__ static __forceinline__ void am_put_ds(uint16_t *dh, size_t ts, int first, int t0, int T,
                                                 const uint32_t (*w)[2]) {
  #pragma unroll
  for (int n = 0; n < AM_NT; n++)
    #pragma unroll
    for (int r = 0; r < 2; r++) {
      const int j = first + am_row(2 * r), t = t0 + am_col(n, 0);
      if (j < T && t < T) *(uint32_t *)(dh + (size_t)j * ts + t) = w[n][r];
    }
}

/* Whether dkv wrote ds[j][tc .. tc + 7] (tc a multiple of 8): its warp
 * of keys from j / 16 * 16 visits the query tile of 32 holding tc when
 * some query of that tile is at or after its first key, and then writes
 * all of the tile (exact zeros where t < j); a tile it skips is all
 * before its keys, so every ds there is zero and is not read. */
__device__ static __forceinline__ int am_ds_written(int j, int tc) {
  return tc / AM_BC * AM_BC + AM_BC > j / AM_WR * AM_WR;
}

/* Keys [j0, j0 + 32) of ds (the head's rows, stride ts) for queries [t0,
 * t0 + 64) into tile (row stride AM_BR + AM_PAD), 8 queries a cp.async;
 * what dkv did not write, keys past T and queries past T are zeros,
 * copied from nowhere (cp.async reading 0 bytes). A thread's two copies
 * unroll into straight code, as am_stage's. */
__device__ static __forceinline__ void am_stage_ds(uint16_t *tile, const uint16_t *ds, size_t ts,
                                                   int j0, int t0, int T) {
  constexpr int C8 = AM_BR / 8;
  static_assert(AM_BC * C8 % AM_THREADS == 0, "whole copies a thread: straight code");
  #pragma unroll
  for (int c = 0; c < AM_BC * C8; c += AM_THREADS) {
    const int i = c + threadIdx.x;
    const int r = i / C8, tc = t0 + i % C8 * 8, j = j0 + r;
    const int in = j < T && tc < T && am_ds_written(j, tc);
    const int bytes = in ? 2 * am_min(8, T - tc) : 0;
    am_cp16(tile + r * (AM_BR + AM_PAD) + i % C8 * 8, ds + (in ? (size_t)j * ts + tc : 0), bytes);
  }
}

/* dq of query rows [t0, t0 + 64) of head h of sequence b:
 * dq_t = scale * sum_{j <= t} ds_tj k_j, j ascending, from the ds that
 * dkv stored (its bf16 values, which are the ones this sum takes: the
 * same products, the same roundings), so the scores, dy.v and the
 * exponentials are not computed a second time. ds is the head's matrix
 * by rows of keys (ds[j][t], row stride ts); its tiles are read
 * transposed (ldmatrix .trans) into the A fragments of queries by keys. */
template <int HD, typename In>
__global__ void __launch_bounds__(AM_THREADS, AM_DQ_BLOCKS)
    attention_mma_dq_kernel(In *dq, const uint16_t *ds, size_t ts, const In *k, int T, int heads,
                            int kv_heads, float scale, int flags) {
  constexpr int SD = AM_BR + AM_PAD, ON = HD / 8;
  __shared__ __align__(16) uint16_t dt[2][AM_BC * SD]; /* ds tile i in dt[i % 2] */
  __shared__ __align__(16) uint16_t ks[2][AM_BC * (HD + AM_PAD)];
  const int b = blockIdx.z, h = blockIdx.y, t0 = blockIdx.x * AM_BR;
  const int kvh = h / (heads / kv_heads), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const size_t qw = (size_t)heads * HD, kw = (size_t)kv_heads * HD;
  const In *kb = k + (size_t)b * T * kw;
  const uint16_t *dh = ds + ((size_t)b * heads + h) * T * ts;
  const int w0 = warp * AM_WR, first = t0 + w0;
  const int wlast = am_min(first + AM_WR, T) - 1, last = am_min(t0 + AM_BR, T) - 1;
  float acc[ON][4];
  #pragma unroll
  for (int o = 0; o < ON; o++) acc[o][0] = acc[o][1] = acc[o][2] = acc[o][3] = 0.0f;
  /* Key tile i + 1 staged while tile i is used (as in the forward). */
  const int tiles = last / AM_BC + 1;
  am_stage_ds(dt[0], dh, ts, 0, t0, T);
  am_stage<HD, AM_BC>(ks[0], kb, kw, (size_t)kvh * HD, 0, T);
  am_commit();
  for (int i = 0; i < tiles; i++) {
    const int j0 = i * AM_BC;
    am_wait<0>();
    __syncthreads();
    if (i + 1 < tiles) {
      am_stage_ds(dt[(i + 1) % 2], dh, ts, j0 + AM_BC, t0, T);
      am_stage<HD, AM_BC>(ks[(i + 1) % 2], kb, kw, (size_t)kvh * HD, j0 + AM_BC, T);
    }
    am_commit();
    if (first >= T || j0 > wlast) continue;
    #pragma unroll
    for (int kc = 0; kc < AM_BC / 16; kc++) {
      /* The A fragment (queries w0.., keys 16 kc..) of the tile stored by
       * keys: matrix m holds keys 8 (m / 2) + 0..7 by queries 8 (m % 2) +
       * 0..7, lane 8 m + r naming its key row r. */
      const int m = lane / 8;
      uint32_t a[4];
      am_ldsm4<true>(a, dt[i % 2] + (kc * 16 + m / 2 * 8 + lane % 8) * SD + w0 + m % 2 * 8);
      am_accumulate_kc<HD>(acc, a, ks[i % 2], kc);
    }
  }
  if (first >= T) return;
  am_store<HD>(dq + (size_t)b * T * qw + (size_t)h * HD, qw, first, T, acc, scale, flags);
}

/* dk and dv's query tile: rows [t0, t0 + 32) of head h's q and dy into
 * qs and gs, and those rows' lse and D (0 past T) into ls and ds. */
template <int HD, typename In>
__device__ static void am_dkv_stage(uint16_t *qs, uint16_t *gs, float *ls, float *ds, const In *qb,
                                    const In *gb, const float *lse, const float *D, size_t qw,
                                    int b, int h, int t0, int T, int heads) {
  am_stage<HD, AM_BC>(qs, qb, qw, (size_t)h * HD, t0, T);
  am_stage<HD, AM_BC>(gs, gb, qw, (size_t)h * HD, t0, T);
  if ((int)threadIdx.x < AM_BC) {
    const size_t row0 = ((size_t)b * heads + h) * T;
    const int t = t0 + threadIdx.x;
    ls[threadIdx.x] = t < T ? lse[row0 + t] : 0.0f;
    ds[threadIdx.x] = t < T ? D[row0 + t] : 0.0f;
  }
}

/* dk, dv of key rows [j0, j0 + 64) of KV head kvh of sequence b, over the
 * group's query heads h ascending and their rows t >= j ascending:
 * dk_j = scale * sum ds_tj q_t, dv_j = sum bf16(p_tj) dy_t. The warp
 * computes the transposed scores (keys as rows), whose accumulators are
 * the A operands of both sums, and stores its ds into head h's matrix of
 * dsm (rows of keys, stride ts) for the dq kernel. */
template <int HD, typename In>
__global__ void __launch_bounds__(AM_THREADS, AM_DKV_BLOCKS)
    attention_mma_dkv_kernel(In *dk, In *dv, uint16_t *dsm, size_t ts, const In *dy, const float *D,
                             const float *lse, const In *q, const In *k, const In *v, int T,
                             int heads, int kv_heads, float scale, int flags) {
  constexpr int SQ = HD + AM_PAD, KC = HD / 16, ON = HD / 8;
  /* Fragments by ldmatrix, but for the 48-wide instance, which ptxas
   * spills with them (ci/cuda-static.sh checks) */
  constexpr bool LDSM = HD != 48;
  __shared__ __align__(16) uint16_t ks[AM_BR * SQ], vs[AM_BR * SQ];
  __shared__ __align__(16) uint16_t qs[2][AM_BC * SQ], gs[2][AM_BC * SQ]; /* tile i in [i % 2] */
  __shared__ float ls[2][AM_BC], ds_[2][AM_BC];
  const int b = blockIdx.z, kvh = blockIdx.y, j0 = blockIdx.x * AM_BR;
  const int group = heads / kv_heads, warp = threadIdx.x / 32;
  const size_t qw = (size_t)heads * HD, kw = (size_t)kv_heads * HD;
  const int w0 = warp * AM_WR, first = j0 + w0; /* the warp's first key */
  const In *qb = q + (size_t)b * T * qw, *gb = dy + (size_t)b * T * qw;
  /* The query tiles, head after head (h ascending, then t0): nt a head,
   * from the tile that holds key j0 on. */
  const int tstart = j0 / AM_BC * AM_BC, nt = (T - tstart + AM_BC - 1) / AM_BC;
  const int tiles = group * nt;
  /* k and v stay staged: their fragments are loaded where used (held in
   * registers all along, the 64-wide kernel spilled). */
  am_stage<HD, AM_BR>(ks, k + (size_t)b * T * kw, kw, (size_t)kvh * HD, j0, T);
  am_stage<HD, AM_BR>(vs, v + (size_t)b * T * kw, kw, (size_t)kvh * HD, j0, T);
  am_dkv_stage<HD>(qs[0], gs[0], ls[0], ds_[0], qb, gb, lse, D, qw, b, kvh * group, tstart, T,
                   heads);
  am_commit();
  float ak[ON][4], av[ON][4];
  #pragma unroll
  for (int o = 0; o < ON; o++)
    #pragma unroll
    for (int i = 0; i < 4; i++) ak[o][i] = av[o][i] = 0.0f;
  /* Query tile i + 1 staged while tile i is used (as in the forward).
   * Tile i is (head hn, tile tn) of i = hn nt + tn before the top of
   * iteration i advances them to tile i + 1's: counted, not divided (an
   * integer division by nt was about 20 instructions). */
  int hn = 0, tn = 0;
  for (int i = 0; i < tiles; i++) {
    const int h = kvh * group + hn, t0 = tstart + tn * AM_BC, x = i % 2;
    if (++tn == nt) tn = 0, hn++;
    am_wait<0>();
    __syncthreads();
    if (i + 1 < tiles)
      am_dkv_stage<HD>(qs[1 - x], gs[1 - x], ls[1 - x], ds_[1 - x], qb, gb, lse, D, qw, b,
                       kvh * group + hn, tstart + tn * AM_BC, T, heads);
    am_commit();
    if (first >= T || t0 + AM_BC <= first) continue; /* every query before the warp's keys */
    float p[AM_NT][4], ds[AM_NT][4];
    uint32_t a[KC][4];
    #pragma unroll
    for (int kc = 0; kc < KC; kc++) am_load_a<LDSM>(a[kc], ks, SQ, w0, kc);
    am_scores<HD, LDSM>(p, a, qs[x]);
    #pragma unroll
    for (int kc = 0; kc < KC; kc++) am_load_a<LDSM>(a[kc], vs, SQ, w0, kc);
    am_scores<HD, LDSM>(ds, a, gs[x]);
    unsigned live = 0;
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int e = 0; e < 4; e++) {
        const int j = first + am_row(e), c = am_col(n, e), t = t0 + c;
        if (t < T && t >= j) live |= am_bit(n, e); /* so j < T */
        p[n][e] = p[n][e] * scale - ls[x][c];
      }
    am_exp_tile(p, live);
    /* D of the lane's 8 columns, loaded before the masks' selects (with
     * the loads under them nvcc branched around each of the 32 terms) */
    float dc[AM_NT][2];
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int e = 0; e < 2; e++) dc[n][e] = ds_[x][am_col(n, e)];
    #pragma unroll
    for (int n = 0; n < AM_NT; n++)
      #pragma unroll
      for (int e = 0; e < 4; e++) {
        const float g = p[n][e] * (ds[n][e] - dc[n][e % 2]);
        ds[n][e] = live & am_bit(n, e) ? g : 0.0f;
      }
    /* Rounded to bf16 by the packing (these kernels run only under
     * KERNEL_BF16, am_refuse). A masked p is +0.0 already (am_exp_tile),
     * which the rounding keeps, so it needs no select of its own. */
    uint32_t pw[AM_NT][2], dw[AM_NT][2];
    am_round_tile(dw, ds);
    am_round_tile(pw, p);
    am_accumulate<HD>(ak, dw, qs[x]);
    am_put_ds(dsm + ((size_t)b * heads + h) * T * ts, ts, first, t0, T, dw);
    am_accumulate<HD>(av, pw, gs[x]);
  }
  if (first >= T) return;
  const size_t head = (size_t)b * T * kw + (size_t)kvh * HD;
  am_store<HD>(dk + head, kw, first, T, ak, scale, flags);
  am_store<HD>(dv + head, kw, first, T, av, 1.0f, flags); /* x * 1 is x: no rounding */
}

/* ---- launchers ---- */

int attention_mma_supported(int head_dim, int flags) {
  return (flags & KERNEL_BF16) && !(flags & KERNEL_CUDA_CORES) && head_dim % 16 == 0 &&
         head_dim >= 16 && head_dim <= ATTENTION_MMA_HD_MAX;
}

/* One launch of each kernel's instance for head_dim HD and operand type In. */
template <int HD, typename In>
static void am_forward(dim3 grid, cudaStream_t stream, float *y, uint16_t *y16, float *lse,
                       const In *q, const In *k, const In *v, int T, int heads, int kv_heads,
                       float scale, int flags) {
  attention_mma_forward_kernel<HD, In><<<grid, AM_THREADS, 0, stream>>>(y, y16, lse, q, k, v, T,
                                                                        heads, kv_heads, scale,
                                                                        flags);
}

template <int HD, typename In>
static void am_dq(dim3 grid, cudaStream_t stream, In *dq, const uint16_t *dsm, size_t ts,
                  const In *k, int T, int heads, int kv_heads, float scale, int flags) {
  attention_mma_dq_kernel<HD, In>
      <<<grid, AM_THREADS, 0, stream>>>(dq, dsm, ts, k, T, heads, kv_heads, scale, flags);
}

template <int HD, typename In>
static void am_dkv(dim3 grid, cudaStream_t stream, In *dk, In *dv, uint16_t *dsm, size_t ts,
                   const In *dy, const float *D, const float *lse, const In *q, const In *k,
                   const In *v, int T, int heads, int kv_heads, float scale, int flags) {
  attention_mma_dkv_kernel<HD, In><<<grid, AM_THREADS, 0, stream>>>(
      dk, dv, dsm, ts, dy, D, lse, q, k, v, T, heads, kv_heads, scale, flags);
}

static int am_refuse(int hd, int flags, pg_error *err) {
  if (attention_mma_supported(hd, flags)) return 0;
  return pg_fail(err, "", -1,
                 "attention: the tensor-core kernels take KERNEL_BF16 and a head_dim of 16, 32, "
                 "48 or 64 (got head_dim %d, flags %d)",
                 hd, flags);
}

/* The entry points' bodies, for floats and for packed operands. */
template <typename In>
static int am_forward_all(float *y, uint16_t *y16, float *lse, const In *q, const In *k,
                          const In *v, int B, int T, int heads, int kv_heads, int head_dim,
                          int flags, cudaStream_t stream, pg_error *err) {
  if (am_refuse(head_dim, flags, err)) return -1;
  if (B == 0 || T == 0) return 0;
  dim3 grid((unsigned)((T + AM_BR - 1) / AM_BR), (unsigned)heads, (unsigned)B);
  const float scale = attention_scale(head_dim);
  switch (head_dim) {
#define AM_ARGS y, y16, lse, q, k, v, T, heads, kv_heads, scale, flags
    case 16: am_forward<16, In>(grid, stream, AM_ARGS); break;
    case 32: am_forward<32, In>(grid, stream, AM_ARGS); break;
    case 48: am_forward<48, In>(grid, stream, AM_ARGS); break;
    default: am_forward<64, In>(grid, stream, AM_ARGS); break;
#undef AM_ARGS
  }
  return cuda_check_launch(err, "attention_mma_forward_kernel");
}

/* dk and dv first, which store ds; then dq from it (the same stream). */
template <typename In>
static int am_backward_all(In *dq, In *dk, In *dv, uint16_t *dsm, const In *dy, const float *D,
                           const float *lse, const In *q, const In *k, const In *v, int B, int T,
                           int heads, int kv_heads, int head_dim, int flags, cudaStream_t stream,
                           pg_error *err) {
  if (am_refuse(head_dim, flags, err)) return -1;
  if (B == 0 || T == 0) return 0;
  if ((uintptr_t)dsm % 16)
    return pg_fail(err, "", -1, "attention: the ds scratch at %p is not 16-byte aligned",
                   (const void *)dsm);
  const float scale = attention_scale(head_dim);
  const size_t ts = attention_ds_stride(T);
  dim3 gk((unsigned)((T + AM_BR - 1) / AM_BR), (unsigned)kv_heads, (unsigned)B);
#define AM_ARGS dk, dv, dsm, ts, dy, D, lse, q, k, v, T, heads, kv_heads, scale, flags
  switch (head_dim) {
    case 16: am_dkv<16, In>(gk, stream, AM_ARGS); break;
    case 32: am_dkv<32, In>(gk, stream, AM_ARGS); break;
    case 48: am_dkv<48, In>(gk, stream, AM_ARGS); break;
    default: am_dkv<64, In>(gk, stream, AM_ARGS); break;
  }
#undef AM_ARGS
  if (cuda_check_launch(err, "attention_mma_dkv_kernel")) return -1;
  dim3 gq((unsigned)((T + AM_BR - 1) / AM_BR), (unsigned)heads, (unsigned)B);
#define AM_ARGS dq, dsm, ts, k, T, heads, kv_heads, scale, flags
  switch (head_dim) {
    case 16: am_dq<16, In>(gq, stream, AM_ARGS); break;
    case 32: am_dq<32, In>(gq, stream, AM_ARGS); break;
    case 48: am_dq<48, In>(gq, stream, AM_ARGS); break;
    default: am_dq<64, In>(gq, stream, AM_ARGS); break;
  }
#undef AM_ARGS
  return cuda_check_launch(err, "attention_mma_dq_kernel");
}

extern "C" int attention_mma_forward_cuda(float *y, uint16_t *y16, float *lse, const float *q,
                                          const float *k, const float *v, int B, int T, int heads,
                                          int kv_heads, int head_dim, int flags,
                                          cudaStream_t stream, pg_error *err) {
  return am_forward_all(y, y16, lse, q, k, v, B, T, heads, kv_heads, head_dim, flags, stream, err);
}

extern "C" int attention_mma_forward16_cuda(float *y, uint16_t *y16, float *lse,
                                            const uint16_t *q, const uint16_t *k,
                                            const uint16_t *v, int B, int T, int heads,
                                            int kv_heads, int head_dim, int flags,
                                            cudaStream_t stream, pg_error *err) {
  return am_forward_all(y, y16, lse, q, k, v, B, T, heads, kv_heads, head_dim, flags, stream, err);
}

extern "C" int attention_mma_backward_cuda(float *dq, float *dk, float *dv, uint16_t *ds,
                                           const float *dy, const float *D, const float *lse,
                                           const float *q, const float *k, const float *v, int B,
                                           int T, int heads, int kv_heads, int head_dim, int flags,
                                           cudaStream_t stream, pg_error *err) {
  return am_backward_all(dq, dk, dv, ds, dy, D, lse, q, k, v, B, T, heads, kv_heads, head_dim,
                         flags, stream, err);
}

extern "C" int attention_mma_backward16_cuda(uint16_t *dq, uint16_t *dk, uint16_t *dv, uint16_t *ds,
                                             const uint16_t *dy, const float *D, const float *lse,
                                             const uint16_t *q, const uint16_t *k,
                                             const uint16_t *v, int B, int T, int heads,
                                             int kv_heads, int head_dim, int flags,
                                             cudaStream_t stream, pg_error *err) {
  return am_backward_all(dq, dk, dv, ds, dy, D, lse, q, k, v, B, T, heads, kv_heads, head_dim,
                         flags, stream, err);
}
