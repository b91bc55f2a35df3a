/* The official clean int8 export ("int8_clean_per_row_v1" in the official
 * train_gpt.py), value for value, and its inverse.
 *
 * For each tensor, in state_dict order (the layout's order):
 *   numel <= 65536            kept as float:
 *       name matches a control pattern (attn_scale, mlp_scale, resid_mix,
 *       q_gain, skip_weight(s), ...)  -> float32 (QUANT_F32);
 *       otherwise                      -> float16, round to nearest even
 *                                         (QUANT_F16);
 *   2-D, numel > 65536        per-row int8 (QUANT_INT8_ROW):
 *       clip_r  = quantile(|row r|, 0.9999984)   (torch.quantile, linear)
 *       scale_r = max(clip_r / 127, 1/127)        float32
 *       q       = clamp(round_half_even(clamp(t, -clip_r, clip_r) / scale_r),
 *                       -127, 127)
 *       scale_r is stored as float16 (q was computed with the float32 one);
 *   1-D, numel > 65536        per-tensor int8 (QUANT_INT8_TENSOR):
 *       clip = quantile(|t|, 0.9999984); scale = clip/127 (computed in
 *       double, stored float32), or 1 when clip is 0; no 1/127 floor.
 * Dequantization: q * scale in float32 (the row scale widened from fp16),
 * passthrough values widened, then rounded to the parameter's dtype (bf16
 * for the token embedding in the official mixed setup, else fp32).
 *
 * torch.quantile, linear interpolation, exactly: sort, rank = q*(n-1) in
 * double with q the float32 0.9999984, lo = trunc(rank), hi = ceil(rank),
 * w = (float)(rank - lo), and torch's lerp, which on its CPU kernels is
 * fused:
 *   w < 0.5:  fma(w, hi_v - lo_v, lo_v)    else: fma(w - 1, hi_v - lo_v, hi_v)
 * (golden/quant.json, from the official code, checks every row's clip.)
 * Non-finite values are rejected: the official code would quietly produce
 * NaN scales. */
#ifndef PGOLF_QUANTIZE_H
#define PGOLF_QUANTIZE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/model.h"

#define QUANT_KEEP_FLOAT_MAX_NUMEL 65536
/* INT8_CLIP_PERCENTILE / 100 in double, as the official constant; torch
 * turns it into a float32 tensor. */
#define QUANT_CLIP_Q_DOUBLE (99.99984 / 100.0)

typedef enum quant_kind {
  QUANT_INT8_ROW = 0,
  QUANT_INT8_TENSOR = 1,
  QUANT_F32 = 2,
  QUANT_F16 = 3,
} quant_kind;

/* The dtype a parameter has in the model (restored on dequantization). */
typedef enum quant_dtype { QUANT_DTYPE_F32 = 0, QUANT_DTYPE_BF16 = 1 } quant_dtype;

typedef struct quant_tensor {
  char name[48];
  quant_kind kind;
  quant_dtype dtype;
  int ndim;              /* 1 or 2 */
  uint32_t rows, cols;   /* ndim 1: rows = 1 */
  uint64_t numel;
  int8_t *q;             /* INT8_*: numel values */
  uint16_t *scale_f16;   /* INT8_ROW: rows fp16 bit patterns */
  float scale_f32;       /* INT8_TENSOR */
  float *f32;            /* F32: numel */
  uint16_t *f16;         /* F16: numel fp16 bit patterns */
} quant_tensor;

typedef struct quant_model {
  gpt_config cfg;
  int n_tensors;
  quant_tensor *tensors;   /* layout order */
  uint64_t payload_bytes;  /* the official stats' int8_payload_bytes */
  uint64_t baseline_bytes; /* the official stats' baseline_tensor_bytes */
} quant_model;

/* float16 <-> float32, round to nearest even (as torch's .to(float16)). */
uint16_t quant_f16_from_float(float x);
float quant_f16_to_float(uint16_t h);

/* torch.quantile(x, q) with linear interpolation over n values that are
 * already sorted ascending. */
float quant_quantile_sorted(const float *sorted, size_t n, float q);
/* torch.quantile(|x|, q) of n finite values; scratch holds n floats. */
float quant_quantile_abs(const float *x, size_t n, float q, float *scratch);

/* The official quantize_float_tensor on a 2-D [rows, cols] tensor. */
int quant_int8_per_row(const float *t, uint32_t rows, uint32_t cols, int8_t *q,
                       uint16_t *scale_f16, const char *name, pg_error *err);
/* ... and on any other shape, flattened. */
int quant_int8_per_tensor(const float *t, uint64_t n, int8_t *q, float *scale, const char *name,
                          pg_error *err);

/* Which kind the official export picks for a tensor of the layout. */
quant_kind quant_kind_for(const gpt_tensor *t);

/* Per-tensor dtypes: tok_emb.weight in bf16 when tok_emb_bf16 (the
 * official mixed setup), everything else fp32. out has l->n_tensors. */
void quant_dtypes_for(const gpt_layout *l, int tok_emb_bf16, quant_dtype *out);

/* Quantize flat parameters (l->n_params floats) with the parameters'
 * dtypes (NULL: all fp32). Values of a bf16 tensor must be bf16-exact. */
int quant_model_build(quant_model *m, const gpt_layout *l, const float *flat,
                      const quant_dtype *dtypes, pg_error *err);
/* dequantize_state_dict_int8 followed by loading into parameters of each
 * tensor's dtype: writes l->n_params floats. m must match l (names,
 * shapes), as artifact_read checks. */
int quant_model_dequantize(const quant_model *m, const gpt_layout *l, float *flat, pg_error *err);
void quant_model_free(quant_model *m);

const char *quant_kind_name(quant_kind k);

#endif
