/* pgolf eval on one GPU: the forward passes and the test-time training of
 * an evaluation session (trainer/eval_session.h) on the device, everything
 * else (windows, records, probes' float64 softmax, the event chain) on the
 * host as before.
 *
 * Bits: the GPU's model is trainer/gpt_cuda.h's, so with the CPU's
 * products (the stand-in of ci/cuda-emu.sh) a session on the GPU writes
 * the same dump as the CPU's with the GPU's reduction trees
 * (PGOLF_TEST_GPU_TREES=1), byte for byte, in every mode; on a GPU the
 * products are cuBLASLt's, bitwise run to run.
 *
 * Shapes: scoring always runs batches of B windows of T positions (the
 * session's larger batch, of scoring or of training, and its window
 * length): a short window sits at the start of
 * its row and a short batch is padded with token 0, so cuBLASLt keeps one
 * plan per product however the windows fall (sliding evaluation starts
 * with windows of every length). Causal attention and the row-wise
 * kernels make a position's result independent of what follows it and of
 * the other rows, and the padding's results are never read. Test-time
 * training runs the batch's true shape, since the mean loss's gradient
 * counts its rows. */
#ifndef PGOLF_EVAL_CUDA_H
#define PGOLF_EVAL_CUDA_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "trainer/gpt.h"
#include "trainer/model.h"

typedef struct eval_gpu eval_gpu;

/* The model on GPU 0 (of those visible) for batches up to B x T, its
 * parameters copied from the host's flat (l->n_params floats); with ttt,
 * also the SGD momentum (zeroed) and the clip's scratch. Fails with "no
 * CUDA device: <the runtime's reason>" where there is none, and says so
 * in a build without the CUDA path. */
int eval_gpu_open(eval_gpu **out, const gpt_layout *l, int B, int T, gpt_precision prec, int ttt,
                  const float *flat, pg_error *err);
void eval_gpu_close(eval_gpu *g);

/* Forward of x, y (B x T ids each, row after row) at the full shape; the
 * per-token losses (B*T) into nll. Waits for the device. */
int eval_gpu_score(eval_gpu *g, const uint16_t *x, const uint16_t *y, float *nll, pg_error *err);

/* Row `row` of the last forward's logits (vocab_size floats) into out. */
int eval_gpu_logits_row(eval_gpu *g, size_t row, float *out, pg_error *err);

/* One step of test-time training on b sequences of T (x, y: b x T ids):
 * the gradient of the mean loss, clipped to clip when clip > 0
 * (clip_grad_norm_tree), then SGD with momentum mu at lr
 * (sgd_momentum_elem), on the device's parameters. Waits for the device
 * only to read the norms when clipping. */
int eval_gpu_adapt(eval_gpu *g, const uint16_t *x, const uint16_t *y, int b, int T, float lr,
                   float mu, double clip, pg_error *err);

/* {"kind": "cuda", "name", "index", "sm_count", "compute_capability",
 * "memory_bytes", "pci_bus_id", "driver_version", "runtime_version",
 * "cublaslt": the plans, "attention": which kernels} as the training
 * manifest's "device". */
json_t *eval_gpu_json(const eval_gpu *g);
/* One line for the text output: device:cuda:I name:... */
void eval_gpu_describe(const eval_gpu *g, char *buf, size_t cap);

#endif
