/* Linear-layer products on the GPU through cuBLASLt (contract in
 * matmul.h). cuBLASLt is column-major; a row-major [r, c] matrix is its
 * column-major transpose, so each of the three products is written as one
 * column-major GEMM D[m, n] = op(A)[m, k] op(B)[k, n]:
 *   forward         y^T[out, N]  = (W stored [in, out])^T  x^T[in, N]
 *   backward input  dx^T[in, N]  =  W stored [in, out]     dy^T[out, N]
 *   backward weight dw^T[in, out] = x^T[in, N]             (dy^T[out, N])^T
 * No __global__ kernel of our own: cuBLASLt's, chosen once per shape. */
#include <cublasLt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cuda_common.h"
#include "kernels/matmul.h"

/* ---- cuBLASLt, opened at first use ----
 *
 * Linked, libcublasLt (540 MB) cost every start of ./pgolf about 70 ms of
 * the dynamic loader's relocations, also for `pgolf check` and the
 * test suite's thousands of short runs, and a binary built with CUDA
 * would not start at all where the library is missing. So it is opened
 * by dlopen (libcublasLt.so.<the headers' major>, or
 * PGOLF_CUBLASLT_LIBRARY) when the first context is made, bound against
 * the headers' own prototypes, and never closed (as NCCL, nccl.c). */
#define LT_STR_(x) #x
#define LT_STR(x) LT_STR_(x)
#define LT_SONAME "libcublasLt.so." LT_STR(CUBLAS_VER_MAJOR)

// clang-format off
#define LT_FUNCS(X)                                                                           \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtGetStatusName)         \
  X(cublasLtGetStatusString) X(cublasLtMatmul) X(cublasLtMatmulAlgoGetHeuristic)              \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)  \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy)                        \
  X(cublasLtMatmulPreferenceSetAttribute) X(cublasLtMatrixLayoutCreate)                       \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute)
// clang-format on

typedef struct lt_lib {
#define LT_FIELD(f) decltype(&::f) f;
  LT_FUNCS(LT_FIELD)
#undef LT_FIELD
} lt_lib;

static pthread_mutex_t lt_lock = PTHREAD_MUTEX_INITIALIZER;
static lt_lib lt;
static int lt_ready;

/* Bind every function or fail naming the first missing one; a failed open
 * is not remembered, so a later context tries again. */
static int lt_load(pg_error *err) {
  const char *path = getenv("PGOLF_CUBLASLT_LIBRARY");
  if (!path || !*path) path = LT_SONAME;
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) return pg_fail(err, path, -1, "cuBLASLt not available: %s", dlerror());
  lt_lib l;
#define LT_BIND(f)                                                                        \
  {                                                                                       \
    void *sym_ = dlsym(so, #f);                                                           \
    if (!sym_) {                                                                          \
      dlclose(so);                                                                        \
      return pg_fail(err, path, -1, "not cuBLASLt " LT_STR(CUBLAS_VER_MAJOR) ": no " #f); \
    }                                                                                     \
    memcpy(&l.f, &sym_, sizeof sym_);                                                     \
  }
  LT_FUNCS(LT_BIND)
#undef LT_BIND
  lt = l;
  return 0;
}

static int lt_open(pg_error *err) {
  pthread_mutex_lock(&lt_lock);
  int rc = lt_ready ? 0 : lt_load(err);
  if (rc == 0) lt_ready = 1;
  pthread_mutex_unlock(&lt_lock);
  return rc;
}

/* ---- plans: one per shape, chosen at first use and then reused ---- */

enum { OP_FWD, OP_BWD_INPUT, OP_BWD_WEIGHT };
static const char *const OP_NAME[] = {"forward", "backward_input", "backward_weight"};
#define MAX_PLANS 128

/* A plan is keyed by the operands' alignments too: cuBLASLt's heuristic
 * assumes 256-byte aligned A, B, C and D unless told otherwise
 * (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES) and may pick a kernel that
 * faults or is refused on less. cudaMalloc gives 256, but a weight is a
 * view into the flat parameter buffer: the baseline's start 32 bytes
 * (float32) or 16 bytes (bf16) past a 256-byte boundary, the tiny
 * preset's 16 or 8. The same shape at another alignment is another plan,
 * as deterministic as the first (the offsets never change in a run). */
typedef struct plan {
  int op, n, in, out, bf16, accumulate, partial; /* partial: a float32 result (KERNEL_PARTIAL) */
  int batch; /* products of one shape, each operand's matrices stored one after another */
  unsigned align_a, align_b, align_d;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t a, b, c;
  cublasLtMatmulAlgo_t algo;
  size_t algo_ws;
} plan;

struct matmul_cuda_ctx {
  cublasLtHandle_t handle;
  void *workspace;
  size_t workspace_bytes;
  plan plans[MAX_PLANS];
  int n_plans;
};

static int lt_fail(pg_error *err, cublasStatus_t st, const char *what) {
  return pg_fail(err, "", -1, "%s: cuBLASLt %s (%s)", what, lt.cublasLtGetStatusName(st),
                 lt.cublasLtGetStatusString(st));
}

#define LT_TRY(err, call)                                                      \
  do {                                                                         \
    cublasStatus_t lt_st_ = (call);                                            \
    if (lt_st_ != CUBLAS_STATUS_SUCCESS) return lt_fail((err), lt_st_, #call); \
  } while (0)

extern "C" int matmul_cuda_init(matmul_cuda_ctx **out, size_t workspace_bytes, pg_error *err) {
  int n;
  *out = NULL;
  if (cuda_device_count(&n, err)) return -1;
  if (lt_open(err)) return -1;
  matmul_cuda_ctx *c = (matmul_cuda_ctx *)calloc(1, sizeof *c);
  if (!c) return pg_fail(err, "", -1, "out of memory");
  cublasStatus_t st = lt.cublasLtCreate(&c->handle);
  if (st != CUBLAS_STATUS_SUCCESS) {
    free(c);
    return lt_fail(err, st, "cublasLtCreate");
  }
  cudaError_t rc = cudaMalloc(&c->workspace, workspace_bytes ? workspace_bytes : 1);
  if (rc != cudaSuccess) {
    lt.cublasLtDestroy(c->handle);
    free(c);
    return cuda_fail(err, rc, "cudaMalloc(matmul workspace)");
  }
  c->workspace_bytes = workspace_bytes;
  *out = c;
  return 0;
}

extern "C" void matmul_cuda_free(matmul_cuda_ctx *c) {
  if (!c) return;
  for (int i = 0; i < c->n_plans; i++) {
    lt.cublasLtMatrixLayoutDestroy(c->plans[i].a);
    lt.cublasLtMatrixLayoutDestroy(c->plans[i].b);
    lt.cublasLtMatrixLayoutDestroy(c->plans[i].c);
    lt.cublasLtMatmulDescDestroy(c->plans[i].desc);
  }
  cudaFree(c->workspace);
  lt.cublasLtDestroy(c->handle);
  free(c);
}

/* The GEMM of plan p: m, n, k, the stored shapes and transposes of A, B. */
typedef struct gemm_shape {
  cublasOperation_t ta, tb;
  uint64_t a_rows, a_cols, b_rows, b_cols, m, n;
} gemm_shape;

static gemm_shape shape_of(const plan *p) {
  gemm_shape s;
  uint64_t N = (uint64_t)p->n, in = (uint64_t)p->in, out = (uint64_t)p->out;
  switch (p->op) {
  case OP_FWD: s = (gemm_shape){CUBLAS_OP_T, CUBLAS_OP_N, in, out, in, N, out, N}; break;
  case OP_BWD_INPUT: s = (gemm_shape){CUBLAS_OP_N, CUBLAS_OP_N, in, out, out, N, in, N}; break;
  default: s = (gemm_shape){CUBLAS_OP_N, CUBLAS_OP_T, in, N, out, N, in, out}; break;
  }
  return s;
}

/* Descriptors and the one algorithm for p (key fields already set). */
static int plan_build(matmul_cuda_ctx *c, plan *p, pg_error *err) {
  gemm_shape s = shape_of(p);
  cudaDataType_t t = p->bf16 ? CUDA_R_16BF : CUDA_R_32F, td = p->partial ? CUDA_R_32F : t;
  LT_TRY(err, lt.cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  LT_TRY(err, lt.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &s.ta,
                                                sizeof s.ta));
  LT_TRY(err, lt.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &s.tb,
                                                sizeof s.tb));
  LT_TRY(err, lt.cublasLtMatrixLayoutCreate(&p->a, t, s.a_rows, s.a_cols, (int64_t)s.a_rows));
  LT_TRY(err, lt.cublasLtMatrixLayoutCreate(&p->b, t, s.b_rows, s.b_cols, (int64_t)s.b_rows));
  LT_TRY(err, lt.cublasLtMatrixLayoutCreate(&p->c, td, s.m, s.n, (int64_t)s.m));
  if (p->batch > 1) { /* strided batches: each operand's matrices back to back */
    const int32_t count = p->batch;
    const int64_t stride[3] = {(int64_t)(s.a_rows * s.a_cols), (int64_t)(s.b_rows * s.b_cols),
                               (int64_t)(s.m * s.n)};
    cublasLtMatrixLayout_t lay[3] = {p->a, p->b, p->c};
    for (int i = 0; i < 3; i++) {
      LT_TRY(err, lt.cublasLtMatrixLayoutSetAttribute(lay[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                      &count, sizeof count));
      LT_TRY(err, lt.cublasLtMatrixLayoutSetAttribute(lay[i],
                                                      CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                      &stride[i], sizeof stride[i]));
    }
  }
  cublasLtMatmulPreference_t pref;
  LT_TRY(err, lt.cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws = c->workspace_bytes;
  uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE; /* no split-K partial sums */
  /* C is D (beta 1 reads it back): one alignment for both. */
  const struct {
    cublasLtMatmulPreferenceAttributes_t attr;
    uint32_t bytes;
  } align[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p->align_a},
               {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p->align_b},
               {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p->align_d},
               {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p->align_d}};
  cublasLtMatmulHeuristicResult_t r;
  int found = 0;
  cublasStatus_t st = lt.cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = lt.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                 &scheme, sizeof scheme);
  for (size_t i = 0; st == CUBLAS_STATUS_SUCCESS && i < sizeof align / sizeof *align; i++)
    st = lt.cublasLtMatmulPreferenceSetAttribute(pref, align[i].attr, &align[i].bytes,
                                                 sizeof align[i].bytes);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = lt.cublasLtMatmulAlgoGetHeuristic(c->handle, p->desc, p->a, p->b, p->c, p->c, pref, 1, &r,
                                           &found);
  lt.cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS) return lt_fail(err, st, "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1 || r.state != CUBLAS_STATUS_SUCCESS)
    return pg_fail(err, "", -1,
                   "cuBLASLt has no algorithm without split-K for %s %dx%dx%d x %d (%s, "
                   "operands aligned to %u, %u, %u bytes)",
                   OP_NAME[p->op], p->n, p->in, p->out, p->batch, p->bf16 ? "bf16" : "fp32",
                   p->align_a, p->align_b, p->align_d);
  p->algo = r.algo;
  p->algo_ws = r.workspaceSize;
  return 0;
}

/* The plan for this key (the shape, the flags, the alignments of A, B and
 * D): found, or built and remembered. */
static int plan_get(matmul_cuda_ctx *c, int op, int n, int in, int out, int batch, int flags,
                    const unsigned align[3], plan **res, pg_error *err) {
  int bf16 = (flags & KERNEL_BF16) != 0, acc = (flags & KERNEL_ACCUMULATE) != 0;
  int partial = (flags & KERNEL_PARTIAL) != 0;
  for (int i = 0; i < c->n_plans; i++) {
    plan *p = &c->plans[i];
    if (p->op == op && p->n == n && p->in == in && p->out == out && p->batch == batch &&
        p->bf16 == bf16 && p->accumulate == acc && p->partial == partial &&
        p->align_a == align[0] && p->align_b == align[1] && p->align_d == align[2]) {
      *res = p;
      return 0;
    }
  }
  if (c->n_plans == MAX_PLANS)
    return pg_fail(err, "", -1, "matmul: more than %d distinct GEMM shapes", MAX_PLANS);
  plan *p = &c->plans[c->n_plans];
  memset(p, 0, sizeof *p);
  p->op = op, p->n = n, p->in = in, p->out = out, p->batch = batch, p->bf16 = bf16;
  p->accumulate = acc;
  p->partial = partial;
  p->align_a = align[0], p->align_b = align[1], p->align_d = align[2];
  if (plan_build(c, p, err)) return -1; /* partly built descriptors leak once, on a failed start */
  c->n_plans++;
  *res = p;
  return 0;
}

/* What cuBLASLt may assume of the addresses base, base + stride, ... of
 * a batch's matrices (stride in bytes; 0 for one matrix). */
static unsigned batch_alignment(const void *base, size_t stride) {
  return matmul_cuda_alignment((const void *)((uintptr_t)base | (uintptr_t)stride));
}

static int run(matmul_cuda_ctx *c, int op, void *d, const void *a, const void *b, int n, int in,
               int out, int batch, int flags, cudaStream_t stream, pg_error *err) {
  if (n < 0 || in < 1 || out < 1 || batch < 1)
    return pg_fail(err, "", -1, "matmul: bad shape n=%d in=%d out=%d batch=%d", n, in, out, batch);
  if ((flags & KERNEL_BF16) && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1,
                   "matmul: accumulate is float32 only (round a bf16 product "
                   "into scratch, then add it with the elementwise kernels)");
  if ((flags & KERNEL_PARTIAL) && (flags & KERNEL_ACCUMULATE))
    return pg_fail(err, "", -1, "matmul: a partial product is stored, never accumulated");
  if (n == 0) return 0;
  plan *p = NULL;
  /* Each operand's matrix bytes (the batch's stride), by the op's roles:
   * a is W or x, b is x or dy, d the result (shape_of). */
  const size_t e = (flags & KERNEL_BF16) ? 2 : 4, ed = (flags & KERNEL_PARTIAL) ? 4 : e;
  const size_t N = (size_t)n, I = (size_t)in, O = (size_t)out;
  size_t sa = 0, sb = 0, sd = 0;
  if (batch > 1) {
    sa = e * (op == OP_BWD_WEIGHT ? N * I : I * O);
    sb = e * (op == OP_FWD ? N * I : N * O);
    sd = ed * (op == OP_FWD ? N * O : op == OP_BWD_INPUT ? N * I : I * O);
  }
  const unsigned align[3] = {batch_alignment(a, sa), batch_alignment(b, sb),
                             batch_alignment(d, sd)};
  if (plan_get(c, op, n, in, out, batch, flags, align, &p, err)) return -1;
  float alpha = 1.0f, beta = p->accumulate ? 1.0f : 0.0f;
  LT_TRY(err, lt.cublasLtMatmul(c->handle, p->desc, &alpha, a, p->a, b, p->b, &beta, d, p->c, d,
                                p->c, &p->algo, c->workspace, c->workspace_bytes, stream));
  return 0;
}

/* ---- launchers ---- */

extern "C" int matmul_forward_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w, int n,
                                   int in, int out, int flags, cudaStream_t stream, pg_error *err) {
  return run(c, OP_FWD, y, w, x, n, in, out, 1, flags, stream, err);
}

extern "C" int matmul_backward_input_cuda(matmul_cuda_ctx *c, void *dx, const void *dy,
                                          const void *w, int n, int in, int out, int flags,
                                          cudaStream_t stream, pg_error *err) {
  return run(c, OP_BWD_INPUT, dx, w, dy, n, in, out, 1, flags, stream, err);
}

extern "C" int matmul_forward_batch_cuda(matmul_cuda_ctx *c, void *y, const void *x, const void *w,
                                         int n, int in, int out, int batch, int flags,
                                         cudaStream_t stream, pg_error *err) {
  return run(c, OP_FWD, y, w, x, n, in, out, batch, flags, stream, err);
}

extern "C" int matmul_backward_input_batch_cuda(matmul_cuda_ctx *c, void *dx, const void *dy,
                                                const void *w, int n, int in, int out, int batch,
                                                int flags, cudaStream_t stream, pg_error *err) {
  return run(c, OP_BWD_INPUT, dx, w, dy, n, in, out, batch, flags, stream, err);
}

extern "C" int matmul_backward_weight_cuda(matmul_cuda_ctx *c, void *dw, const void *dy,
                                           const void *x, int n, int in, int out, int flags,
                                           cudaStream_t stream, pg_error *err) {
  return run(c, OP_BWD_WEIGHT, dw, x, dy, n, in, out, 1, flags, stream, err);
}

extern "C" int matmul_backward_weight_batch_cuda(matmul_cuda_ctx *c, void *dw, const void *dy,
                                                 const void *x, int n, int in, int out, int batch,
                                                 int flags, cudaStream_t stream, pg_error *err) {
  return run(c, OP_BWD_WEIGHT, dw, x, dy, n, in, out, batch, flags, stream, err);
}

extern "C" int matmul_cuda_plan_count(const matmul_cuda_ctx *c) { return c->n_plans; }

static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(((matmul_plan_info *)0)->algo),
              "cuBLASLt's algorithm no longer fits the manifest's 64 bytes");

extern "C" void matmul_cuda_plan_info(const matmul_cuda_ctx *c, int i, matmul_plan_info *out) {
  const plan *p = &c->plans[i];
  out->op = OP_NAME[p->op];
  out->n = p->n, out->in = p->in, out->out = p->out, out->batch = p->batch;
  out->dtype =
      p->partial ? (p->bf16 ? "bf16, fp32 partial" : "fp32, partial") : (p->bf16 ? "bf16" : "fp32");
  out->accumulate = p->accumulate;
  out->align_bytes[0] = p->align_a, out->align_bytes[1] = p->align_b;
  out->align_bytes[2] = p->align_d;
  memcpy(out->algo, &p->algo, sizeof out->algo);
  out->algo_workspace_bytes = p->algo_ws;
}

extern "C" size_t matmul_cuda_workspace_bytes(const matmul_cuda_ctx *c) {
  return c->workspace_bytes;
}

extern "C" size_t matmul_cuda_lt_version(void) {
  pg_error err;
  return lt_open(&err) ? 0 : lt.cublasLtGetVersion();
}
