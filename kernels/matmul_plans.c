/* The cuBLASLt plans as a manifest records them (contract in matmul.h):
 * JSON here, in C, so that matmul.cu holds cuBLASLt alone and compiles
 * without jansson's headers. */
#include "kernels/matmul.h"

#ifdef PGOLF_HAVE_CUDA
#include <jansson.h>
#include <stdio.h>

static json_t *plan_json(const matmul_plan_info *p) {
  char hex[2 * sizeof p->algo + 1];
  for (size_t k = 0; k < sizeof p->algo; k++) snprintf(hex + 2 * k, 3, "%02x", p->algo[k]);
  return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:b, s:[i, i, i], s:s, s:I}", "op", p->op, "n",
                   p->n, "in", p->in, "out", p->out, "batch", p->batch, "dtype", p->dtype,
                   "accumulate", p->accumulate, "align_bytes", (int)p->align_bytes[0],
                   (int)p->align_bytes[1], (int)p->align_bytes[2], "algo", hex,
                   "algo_workspace_bytes", (json_int_t)p->algo_workspace_bytes);
}

json_t *matmul_cuda_plans_json(const matmul_cuda_ctx *c) {
  json_t *plans = json_array();
  for (int i = 0; plans && i < matmul_cuda_plan_count(c); i++) {
    matmul_plan_info p;
    matmul_cuda_plan_info(c, i, &p);
    if (json_array_append_new(plans, plan_json(&p))) {
      json_decref(plans);
      return NULL;
    }
  }
  return json_pack("{s:I, s:I, s:o}", "cublaslt_version", (json_int_t)matmul_cuda_lt_version(),
                   "workspace_bytes", (json_int_t)matmul_cuda_workspace_bytes(c), "plans", plans);
}
#endif
