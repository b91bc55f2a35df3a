/* Causal grouped-query attention on the GPU (contract in attention.h):
 * the sums of attention_forward_simple and attention_backward_simple, in
 * their order, so the results equal the CPU's bit for bit.
 *
 * Tiled, flash style: a block owns ATT_QT query rows (forward, dq) or
 * ATT_KT key rows (dk, dv) of one head and walks the other side in tiles
 * staged in shared memory; scores are recomputed per tile and never
 * stored whole. Unlike flash attention the softmax is not online:
 * rescaling a running sum by exp(m_old - m_new) would change its bits.
 * The forward takes the row maxima in a first pass over the key tiles (a
 * maximum is exact in any order), then the exponentials, their sum l_t
 * and y_t in a second; in fp32 mode y_t takes a third, since its
 * probabilities divide by the finished l_t before the products. Every sum
 * is owned by one thread and taken in ascending j (or (h, t)) order, each
 * product term by one fmaf, so the tiling changes no bit. The backward
 * writes dq per query tile and dk, dv per key tile (over the group's query
 * heads), and adds no float atomically. Scores, exponentials and roundings
 * are the PGOLF_HD functions the CPU uses (det_math_hd.h, bf16.h,
 * flags.h; the exponential through det_expf_fast.h, proved to give
 * det_expf's bits, or under KERNEL_BF16 det_expf32.h's, as attention.c);
 * the scale 1/sqrt(head_dim) is computed on the host as attention.c
 * computes it. In mixed precision with head_dim up to 64 the entry points
 * run attention_mma.cu's tensor-core kernels instead.
 *
 * Shapes: head_dim a multiple of ATT_HD_STEP up to ATT_HD_MAX (tiles are
 * staged at full head width and read a float4 at a time; each thread owns
 * groups of 4 consecutive outputs); heads a multiple of kv_heads; the
 * staged operands (q, k, v, dy) 16-byte aligned. */
#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "kernels/det_expf32.h"
#include "kernels/det_expf_fast.h"
#include "kernels/det_math_hd.h"
#include "kernels/flags.h"

#include <math.h>
#include <stdint.h>

enum {
  ATT_QT = 16,       /* query rows per tile */
  ATT_KT = 16,       /* key rows per tile */
  ATT_THREADS = 256, /* one thread per (query, key) pair of a tile */
  ATT_HD_MAX = 128,
  ATT_HD_STEP = ATT_THREADS / ATT_QT, /* head_dim granularity */
  /* Outputs are owned in groups of 4 consecutive columns (a float4), at
   * most ATT_G groups per thread. */
  ATT_G = ATT_QT * ATT_HD_MAX / 4 / ATT_THREADS,
  /* A staged row's stride in floats. The loops read shared memory a
   * float4 at a time (4 fmaf per load instead of 1; each sum keeps its
   * order), so a row starts on 16 bytes. The score loops read row c of a
   * key tile in the threads c of a half-warp at once: with a stride of 128
   * floats (a multiple of the 32 banks) every row starts in the same bank
   * and the reads were serialised 16 ways; at 132 successive rows start 4
   * banks apart, so the 8 threads of each quarter-warp (one 128-byte
   * transaction of float4 loads) read 8 different 16-byte bank groups.
   * (ncu on an H200, 2026-11-27: the three attention kernels were 84% of
   * a baseline step's GPU time at the stride of 128.) */
  ATT_ROW = ATT_HD_MAX + 4,
};
static_assert(ATT_ROW % 4 == 0 && ATT_ROW / 4 % 8 == 1,
              "staged rows start on 16 bytes, successive rows in successive 16-byte bank groups");
static_assert(ATT_HD_STEP % 4 == 0, "head widths are whole float4s");

/* ---- kernels ---- */

/* attention.c's dot (d ascending, one fmaf per term) of two staged rows
 * (16-byte aligned, n a multiple of 4), read a float4 at a time. (Unrolled
 * twice: left to itself nvcc 13 unrolled it further and spilled in the dq
 * kernel.) */
__device__ static float att_dot4(const float *a, const float *b, int n) {
  float s = 0.0f;
  #pragma unroll 2
  for (int i = 0; i < n; i += 4) {
    const float4 x = *(const float4 *)(a + i), y = *(const float4 *)(b + i);
    s = fmaf(x.x, y.x, s);
    s = fmaf(x.y, y.y, s);
    s = fmaf(x.z, y.z, s);
    s = fmaf(x.w, y.w, s);
  }
  return s;
}

/* The exponential, as attention.c's: det_expf's bits (by the fast path)
 * in float32, det_expf32's under KERNEL_BF16. */
__device__ static __forceinline__ float att_exp(float x, int flags) {
  return (flags & KERNEL_BF16) ? det_expf32_hd(x) : det_expf_fast_hd(x);
}

/* acc + w * the float4 at x, component by component (one fmaf each). */
__device__ static float4 att_axpy4(float4 acc, float w, const float *x) {
  const float4 v = *(const float4 *)x;
  return float4{fmaf(w, v.x, acc.x), fmaf(w, v.y, acc.y), fmaf(w, v.z, acc.z), fmaf(w, v.w, acc.w)};
}

/* a * s and a / d, component by component (one rounding each). */
__device__ static float4 att_mul4(float4 a, float s) {
  return float4{a.x * s, a.y * s, a.z * s, a.w * s};
}
__device__ static float4 att_div4(float4 a, float d) {
  return float4{a.x / d, a.y / d, a.z / d, a.w / d};
}

/* out[0..4) = v rounded as the flags say (out need not be 16-byte
 * aligned), and their bits into out16[0..4) unless it is NULL. */
__device__ static void att_store4(float *out, uint16_t *out16, float4 v, int flags) {
  const float r[4] = {kernel_round(v.x, flags), kernel_round(v.y, flags), kernel_round(v.z, flags),
                      kernel_round(v.w, flags)};
  for (int i = 0; i < 4; i++) {
    out[i] = r[i];
    if (out16) out16[i] = bf16_from_float(r[i]);
  }
}

/* Rows [r0, r0 + R) of x (row stride width floats, head_dim columns from
 * col) into tile, a float4 at a time (x 16-byte aligned, which the
 * launchers check; width, col and hd are multiples of 4): one division
 * per four floats, where a float at a time took a division and a
 * remainder per float. Rows at or past n are zero (staged, never used). */
__device__ static void att_stage(float (*tile)[ATT_ROW], const float *x, size_t width,
                                 size_t col, int r0, int R, int n, int hd) {
  const int h4 = hd / 4;
  /* Not unrolled: once or twice round (ATT_QT rows of at most 32
   * float4s), and unrolled nvcc 13 spilled in the dq kernel. */
  #pragma unroll 1
  for (int i = threadIdx.x; i < R * h4; i += ATT_THREADS) {
    const int r = i / h4, d = (i - r * h4) * 4;
    float4 v = float4{0.0f, 0.0f, 0.0f, 0.0f};
    if (r0 + r < n) v = *(const float4 *)(x + (size_t)(r0 + r) * width + col + d);
    *(float4 *)&tile[r][d] = v;
  }
}

/* Per-row values (lse, D) of rows [r0, r0 + R) from row-major x[T]. */
__device__ static void att_stage_rows(float *dst, const float *x, int r0, int R, int n) {
  if ((int)threadIdx.x < R) dst[threadIdx.x] = r0 + (int)threadIdx.x < n ? x[r0 + threadIdx.x] : 0.0f;
}

/* Forward of query rows [t0, t0 + ATT_QT) of head h of sequence b. */
__global__ void __launch_bounds__(ATT_THREADS)
    attention_forward_kernel(float *y, uint16_t *y16, float *lse, const float *q, const float *k,
                             const float *v, int T, int heads, int kv_heads, int hd, float scale,
                             int flags) {
  __shared__ __align__(16) float qs[ATT_QT][ATT_ROW];
  __shared__ __align__(16) float ks[ATT_KT][ATT_ROW];
  __shared__ __align__(16) float vs[ATT_KT][ATT_ROW];
  __shared__ float es[ATT_QT][ATT_KT + 1], mrow[ATT_QT], lrow[ATT_QT]; /* +1: rows in different banks */
  const int b = blockIdx.z, h = blockIdx.y, t0 = blockIdx.x * ATT_QT;
  const int kvh = h / (heads / kv_heads), bf = flags & KERNEL_BF16;
  const size_t qw = (size_t)heads * hd, kw = (size_t)kv_heads * hd;
  const float *kb = k + (size_t)b * T * kw, *vb = v + (size_t)b * T * kw;
  const int r = threadIdx.x / ATT_KT, c = threadIdx.x % ATT_KT, t = t0 + r;
  const int last = (t0 + ATT_QT < T ? t0 + ATT_QT : T) - 1; /* the last key any row of the tile sees */
  att_stage(qs, q + (size_t)b * T * qw, qw, (size_t)h * hd, t0, ATT_QT, T, hd);

  /* Pass 1: each thread's maximum over its column of the key tiles, then
   * each row's over its threads. */
  float m = -INFINITY;
  for (int j0 = 0; j0 <= last; j0 += ATT_KT) {
    __syncthreads();
    att_stage(ks, kb, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
    __syncthreads();
    if (t < T && j0 + c <= t) {
      float s = att_dot4(qs[r], ks[c], hd) * scale;
      if (s > m) m = s;
    }
  }
  es[r][c] = m;
  __syncthreads();
  if (threadIdx.x < ATT_QT) {
    float mm = -INFINITY;
    for (int i = 0; i < ATT_KT; i++)
      if (es[threadIdx.x][i] > mm) mm = es[threadIdx.x][i];
    mrow[threadIdx.x] = mm;
  }

  /* Pass 2: e_tj and l_t = sum_j e_tj (j ascending, by the row's thread
   * threadIdx.x == r); under KERNEL_BF16 also y_t = sum_j bf16(e_tj) v_j.
   * Pass 3 (fp32 only): y_t = sum_j (e_tj / l_t) v_j. */
  const int h4 = hd / 4, n_grp = ATT_QT * h4; /* output groups: row g / h4, columns 4 (g % h4) on */
  float4 acc[ATT_G];
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) acc[o] = float4{0.0f, 0.0f, 0.0f, 0.0f};
  float l = 0.0f;
  for (int pass = 2; pass <= (bf ? 2 : 3); pass++) {
    for (int j0 = 0; j0 <= last; j0 += ATT_KT) {
      __syncthreads();
      att_stage(ks, kb, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
      att_stage(vs, vb, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
      __syncthreads();
      float e = 0.0f;
      if (t < T && j0 + c <= t) {
        e = att_exp(att_dot4(qs[r], ks[c], hd) * scale - mrow[r], flags);
        if (pass == 3) e = e / lrow[r];
      }
      es[r][c] = e;
      __syncthreads();
      if (pass == 2 && threadIdx.x < ATT_QT) {
        int tt = t0 + threadIdx.x;
        for (int i = 0; i < ATT_KT && j0 + i <= tt && tt < T; i++) l += es[threadIdx.x][i];
      }
      if (pass == 2 && !bf) continue;
      #pragma unroll
      for (int o = 0; o < ATT_G; o++) {
        const int g = threadIdx.x + o * ATT_THREADS, rr = g / h4, d = g % h4 * 4;
        if (g >= n_grp) break;
        for (int i = 0; i < ATT_KT && j0 + i <= t0 + rr; i++)
          acc[o] = att_axpy4(acc[o], bf ? bf16_round(es[rr][i]) : es[rr][i], &vs[i][d]);
      }
    }
    __syncthreads();
    if (pass == 2 && threadIdx.x < ATT_QT) lrow[threadIdx.x] = l;
  }
  __syncthreads();
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) {
    const int g = threadIdx.x + o * ATT_THREADS, rr = g / h4, d = g % h4 * 4, tt = t0 + rr;
    if (g >= n_grp) break;
    if (tt >= T) continue;
    const size_t at = ((size_t)b * T + tt) * qw + (size_t)h * hd + d;
    att_store4(y + at, y16 ? y16 + at : NULL, bf ? att_div4(acc[o], lrow[rr]) : acc[o], flags);
  }
  if (threadIdx.x < ATT_QT && t0 + (int)threadIdx.x < T)
    lse[((size_t)b * heads + h) * T + t0 + threadIdx.x] =
        mrow[threadIdx.x] + det_logf_hd(lrow[threadIdx.x]);
}

/* D[b, h, t] = dot(dy_t, y_t): one thread per query row, attention.c's
 * dot (one fmaf per term, d ascending); dy and y each floats or packed (kernel_load: a bf16's
 * float is exact, so the same terms). */
__global__ void attention_row_dots_kernel(float *D, const float *dy, const uint16_t *dy16,
                                          const float *y, const uint16_t *y16, int T, int heads,
                                          int hd, size_t rows) {
  size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  size_t t = row % T, h = row / T % heads, b = row / T / heads;
  size_t off = (b * T + t) * (size_t)heads * hd + h * hd;
  float s = 0.0f;
  for (int i = 0; i < hd; i++)
    s = fmaf(kernel_load(dy, dy16, off + i), kernel_load(y, y16, off + i), s);
  D[row] = s;
}

/* dq of query rows [t0, t0 + ATT_QT) of head h of sequence b:
 * dq_t = scale * sum_{j <= t} ds_tj k_j, j ascending. */
__global__ void __launch_bounds__(ATT_THREADS)
    attention_dq_kernel(float *dq, const float *dy, const float *D, const float *lse, const float *q,
                        const float *k, const float *v, int T, int heads, int kv_heads, int hd,
                        float scale, int flags) {
  __shared__ __align__(16) float qs[ATT_QT][ATT_ROW];
  __shared__ __align__(16) float gs[ATT_QT][ATT_ROW];
  __shared__ __align__(16) float ks[ATT_KT][ATT_ROW];
  __shared__ __align__(16) float vs[ATT_KT][ATT_ROW];
  __shared__ float dss[ATT_QT][ATT_KT], lrow[ATT_QT], drow[ATT_QT];
  const int b = blockIdx.z, h = blockIdx.y, t0 = blockIdx.x * ATT_QT;
  const int kvh = h / (heads / kv_heads);
  const size_t qw = (size_t)heads * hd, kw = (size_t)kv_heads * hd;
  const float *kb = k + (size_t)b * T * kw, *vb = v + (size_t)b * T * kw;
  const size_t row0 = ((size_t)b * heads + h) * T;
  const int r = threadIdx.x / ATT_KT, c = threadIdx.x % ATT_KT, t = t0 + r;
  const int last = (t0 + ATT_QT < T ? t0 + ATT_QT : T) - 1;
  att_stage(qs, q + (size_t)b * T * qw, qw, (size_t)h * hd, t0, ATT_QT, T, hd);
  att_stage(gs, dy + (size_t)b * T * qw, qw, (size_t)h * hd, t0, ATT_QT, T, hd);
  att_stage_rows(lrow, lse + row0, t0, ATT_QT, T);
  att_stage_rows(drow, D + row0, t0, ATT_QT, T);
  const int h4 = hd / 4, n_grp = ATT_QT * h4;
  float4 acc[ATT_G];
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) acc[o] = float4{0.0f, 0.0f, 0.0f, 0.0f};
  for (int j0 = 0; j0 <= last; j0 += ATT_KT) {
    __syncthreads();
    att_stage(ks, kb, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
    att_stage(vs, vb, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
    __syncthreads();
    float ds = 0.0f;
    if (t < T && j0 + c <= t) {
      float p = att_exp(att_dot4(qs[r], ks[c], hd) * scale - lrow[r], flags);
      ds = kernel_round(p * (att_dot4(gs[r], vs[c], hd) - drow[r]), flags);
    }
    dss[r][c] = ds;
    __syncthreads();
    #pragma unroll
    for (int o = 0; o < ATT_G; o++) {
      const int g = threadIdx.x + o * ATT_THREADS, rr = g / h4, d = g % h4 * 4;
      if (g >= n_grp) break;
      for (int i = 0; i < ATT_KT && j0 + i <= t0 + rr; i++)
        acc[o] = att_axpy4(acc[o], dss[rr][i], &ks[i][d]);
    }
  }
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) {
    const int g = threadIdx.x + o * ATT_THREADS, rr = g / h4, d = g % h4 * 4, tt = t0 + rr;
    if (g >= n_grp) break;
    if (tt >= T) continue;
    att_store4(dq + ((size_t)b * T + tt) * qw + (size_t)h * hd + d, NULL, att_mul4(acc[o], scale),
               flags);
  }
}

/* dk, dv of key rows [j0, j0 + ATT_KT) of KV head kvh of sequence b, over
 * the group's query heads h ascending and their rows t >= j ascending:
 * dk_j = scale * sum ds_tj q_t, dv_j = sum p_tj dy_t. */
/* Two blocks per SM bound the registers at 128: without the bound ptxas
 * squeezed the 16 accumulators into 48 registers and spilled. */
__global__ void __launch_bounds__(ATT_THREADS, 2)
    attention_dkv_kernel(float *dk, float *dv, const float *dy, const float *D, const float *lse,
                         const float *q, const float *k, const float *v, int T, int heads,
                         int kv_heads, int hd, float scale, int flags) {
  __shared__ __align__(16) float qs[ATT_QT][ATT_ROW];
  __shared__ __align__(16) float gs[ATT_QT][ATT_ROW];
  __shared__ __align__(16) float ks[ATT_KT][ATT_ROW];
  __shared__ __align__(16) float vs[ATT_KT][ATT_ROW];
  __shared__ float ps[ATT_QT][ATT_KT], dss[ATT_QT][ATT_KT], lrow[ATT_QT], drow[ATT_QT];
  const int b = blockIdx.z, kvh = blockIdx.y, j0 = blockIdx.x * ATT_KT;
  const int group = heads / kv_heads;
  const size_t qw = (size_t)heads * hd, kw = (size_t)kv_heads * hd;
  const int r = threadIdx.x / ATT_KT, c = threadIdx.x % ATT_KT, j = j0 + c;
  att_stage(ks, k + (size_t)b * T * kw, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
  att_stage(vs, v + (size_t)b * T * kw, kw, (size_t)kvh * hd, j0, ATT_KT, T, hd);
  const int h4 = hd / 4, n_grp = ATT_KT * h4;
  float4 ak[ATT_G], av[ATT_G];
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) ak[o] = av[o] = float4{0.0f, 0.0f, 0.0f, 0.0f};
  for (int h = kvh * group; h < (kvh + 1) * group; h++) {
    const size_t row0 = ((size_t)b * heads + h) * T;
    for (int t0 = j0 / ATT_QT * ATT_QT; t0 < T; t0 += ATT_QT) {
      __syncthreads();
      att_stage(qs, q + (size_t)b * T * qw, qw, (size_t)h * hd, t0, ATT_QT, T, hd);
      att_stage(gs, dy + (size_t)b * T * qw, qw, (size_t)h * hd, t0, ATT_QT, T, hd);
      att_stage_rows(lrow, lse + row0, t0, ATT_QT, T);
      att_stage_rows(drow, D + row0, t0, ATT_QT, T);
      __syncthreads();
      int t = t0 + r;
      float p = 0.0f, ds = 0.0f;
      if (t < T && j < T && t >= j) {
        p = att_exp(att_dot4(qs[r], ks[c], hd) * scale - lrow[r], flags);
        ds = kernel_round(p * (att_dot4(gs[r], vs[c], hd) - drow[r]), flags);
        p = kernel_round(p, flags);
      }
      ps[r][c] = p;
      dss[r][c] = ds;
      __syncthreads();
      #pragma unroll
      for (int o = 0; o < ATT_G; o++) {
        const int g = threadIdx.x + o * ATT_THREADS, cc = g / h4, d = g % h4 * 4;
        if (g >= n_grp) break;
        for (int i = 0; i < ATT_QT && t0 + i < T; i++) {
          if (t0 + i < j0 + cc) continue;
          ak[o] = att_axpy4(ak[o], dss[i][cc], &qs[i][d]);
          av[o] = att_axpy4(av[o], ps[i][cc], &gs[i][d]);
        }
      }
    }
  }
  #pragma unroll
  for (int o = 0; o < ATT_G; o++) {
    const int g = threadIdx.x + o * ATT_THREADS, cc = g / h4, d = g % h4 * 4, jj = j0 + cc;
    if (g >= n_grp) break;
    if (jj >= T) continue;
    const size_t off = ((size_t)b * T + jj) * kw + (size_t)kvh * hd + d;
    att_store4(dk + off, NULL, att_mul4(ak[o], scale), flags);
    att_store4(dv + off, NULL, av[o], flags);
  }
}

/* ---- launchers ---- */

static int check_shape(int B, int T, int heads, int kv_heads, int hd, pg_error *err) {
  if (B < 0 || T < 0 || heads < 1 || kv_heads < 1 || heads % kv_heads)
    return pg_fail(err, "", -1, "attention: bad shape B %d T %d heads %d kv_heads %d", B, T, heads,
                   kv_heads);
  if (hd < ATT_HD_STEP || hd > ATT_HD_MAX || hd % ATT_HD_STEP)
    return pg_fail(err, "", -1,
                   "attention: head_dim %d not supported on the GPU (a multiple of %d up to %d)",
                   hd, ATT_HD_STEP, ATT_HD_MAX);
  if ((long long)B * heads > 65535 * 65535LL || heads > 65535 || B > 65535)
    return pg_fail(err, "", -1, "attention: B %d x heads %d exceeds the launch grid", B, heads);
  return 0;
}

/* The staged operands are read a float4 at a time (att_stage). */
static int check_aligned(const float *const *p, int n, pg_error *err) {
  for (int i = 0; i < n; i++)
    if ((uintptr_t)p[i] % 16)
      return pg_fail(err, "", -1, "attention: operand %d at %p is not 16-byte aligned", i,
                     (const void *)p[i]);
  return 0;
}

extern "C" int attention_forward_cuda(float *y, uint16_t *y16, float *lse, const float *q,
                                      const float *k, const float *v, int B, int T, int heads,
                                      int kv_heads, int head_dim, int flags, cudaStream_t stream,
                                      pg_error *err) {
  const float *staged[] = {q, k, v};
  if (check_shape(B, T, heads, kv_heads, head_dim, err) || check_aligned(staged, 3, err) ||
      cuda_packed_check(err, "attention", y16, flags & KERNEL_BF16)) /* the output's rounding */
    return -1;
  if (B == 0 || T == 0) return 0;
  if (attention_mma_supported(head_dim, flags))
    return attention_mma_forward_cuda(y, y16, lse, q, k, v, B, T, heads, kv_heads, head_dim, flags,
                                      stream, err);
  dim3 grid((unsigned)((T + ATT_QT - 1) / ATT_QT), (unsigned)heads, (unsigned)B);
  attention_forward_kernel<<<grid, ATT_THREADS, 0, stream>>>(
      y, y16, lse, q, k, v, T, heads, kv_heads, head_dim, attention_scale(head_dim), flags);
  return cuda_check_launch(err, "attention_forward_kernel");
}

/* The backward's row dots D into scratch (B * heads * T floats). */
static int row_dots(float *scratch, const float *dy, const uint16_t *dy16, const float *y,
                    const uint16_t *y16, int B, int T, int heads, int hd, cudaStream_t stream,
                    pg_error *err) {
  size_t rows = (size_t)B * heads * T;
  attention_row_dots_kernel<<<(unsigned)((rows + 255) / 256), 256, 0, stream>>>(
      scratch, dy, dy16, y, y16, T, heads, hd, rows);
  return cuda_check_launch(err, "attention_row_dots_kernel");
}

/* Packed operands: only the tensor-core kernels take them. The staged
 * inputs (q, k, v, dy) are copied 16 bytes at a time (cp.async), the
 * results stored and y read 4 bf16s (8 bytes) at a time: align bytes. */
static int check_packed(const uint16_t *const *p, int n, int align, int hd, int flags,
                        pg_error *err) {
  if (!attention_mma_supported(hd, flags))
    return pg_fail(err, "", -1,
                   "attention: packed operands need the tensor-core kernels (KERNEL_BF16, "
                   "head_dim 16, 32, 48 or 64; got head_dim %d, flags %d)",
                   hd, flags);
  for (int i = 0; i < n; i++)
    if ((uintptr_t)p[i] % (uintptr_t)align)
      return pg_fail(err, "", -1, "attention: packed operand %d at %p is not %d-byte aligned", i,
                     (const void *)p[i], align);
  return 0;
}

extern "C" int attention_forward_packed_cuda(float *y, uint16_t *y16, float *lse,
                                             const uint16_t *q, const uint16_t *k,
                                             const uint16_t *v, int B, int T, int heads,
                                             int kv_heads, int head_dim, int flags,
                                             cudaStream_t stream, pg_error *err) {
  const uint16_t *staged[] = {q, k, v};
  if (check_shape(B, T, heads, kv_heads, head_dim, err) ||
      check_packed(staged, 3, 16, head_dim, flags, err) ||
      cuda_packed_check(err, "attention", y16, flags & KERNEL_BF16) ||
      cuda_output_check(err, "attention", y, y16))
    return -1;
  return attention_mma_forward16_cuda(y, y16, lse, q, k, v, B, T, heads, kv_heads, head_dim, flags,
                                      stream, err);
}

extern "C" int attention_backward_packed_cuda(uint16_t *dq, uint16_t *dk, uint16_t *dv,
                                              const uint16_t *dy, const uint16_t *y,
                                              const float *lse, const uint16_t *q,
                                              const uint16_t *k, const uint16_t *v, float *scratch,
                                              int B, int T, int heads, int kv_heads, int head_dim,
                                              int flags, cudaStream_t stream, pg_error *err) {
  const uint16_t *staged[] = {dy, q, k, v}, *paired[] = {y, dq, dk, dv};
  flags &= ~KERNEL_ACCUMULATE; /* as attention_backward: the gradients are overwritten */
  if (check_shape(B, T, heads, kv_heads, head_dim, err) ||
      check_packed(staged, 4, 16, head_dim, flags, err) ||
      check_packed(paired, 4, 8, head_dim, flags, err))
    return -1;
  if (B == 0 || T == 0) return 0;
  if (row_dots(scratch, NULL, dy, NULL, y, B, T, heads, head_dim, stream, err)) return -1;
  return attention_mma_backward16_cuda(dq, dk, dv, attention_ds_scratch(scratch, B, T, heads), dy,
                                       scratch, lse, q, k, v, B, T, heads, kv_heads, head_dim,
                                       flags, stream, err);
}

extern "C" int attention_backward_cuda(float *dq, float *dk, float *dv, const float *dy,
                                       const float *y, const float *lse, const float *q,
                                       const float *k, const float *v, float *scratch, int B,
                                       int T, int heads, int kv_heads, int head_dim, int flags,
                                       cudaStream_t stream, pg_error *err) {
  const float *staged[] = {dy, q, k, v};
  if (check_shape(B, T, heads, kv_heads, head_dim, err) || check_aligned(staged, 4, err)) return -1;
  if (B == 0 || T == 0) return 0;
  flags &= ~KERNEL_ACCUMULATE; /* as attention_backward: the gradients are overwritten */
  const float scale = attention_scale(head_dim);
  if (row_dots(scratch, dy, NULL, y, NULL, B, T, heads, head_dim, stream, err)) return -1;
  if (attention_mma_supported(head_dim, flags))
    return attention_mma_backward_cuda(dq, dk, dv, attention_ds_scratch(scratch, B, T, heads), dy,
                                       scratch, lse, q, k, v, B, T, heads, kv_heads, head_dim,
                                       flags, stream, err);
  dim3 gq((unsigned)((T + ATT_QT - 1) / ATT_QT), (unsigned)heads, (unsigned)B);
  attention_dq_kernel<<<gq, ATT_THREADS, 0, stream>>>(dq, dy, scratch, lse, q, k, v, T, heads,
                                                      kv_heads, head_dim, scale, flags);
  if (cuda_check_launch(err, "attention_dq_kernel")) return -1;
  dim3 gk((unsigned)((T + ATT_KT - 1) / ATT_KT), (unsigned)kv_heads, (unsigned)B);
  attention_dkv_kernel<<<gk, ATT_THREADS, 0, stream>>>(dk, dv, dy, scratch, lse, q, k, v, T, heads,
                                                       kv_heads, head_dim, scale, flags);
  return cuda_check_launch(err, "attention_dkv_kernel");
}
