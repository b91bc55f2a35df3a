/* Score-first test-time training, the records' legal recipe: the stream
 * is cut into chunks of C positions; chunk c is first scored (sliding
 * windows, parameters untouched), and only then are the parameters
 * trained on that already-scored chunk with the learning rate of the
 * cosine schedule across chunks. The last chunk is scored and not
 * trained on (nothing is left to score). So the parameters that score
 * chunk c have only seen positions of chunks < c: the event log reads
 * SCORE(0) ADAPT(0) SCORE(1) ADAPT(1) ... SCORE(K-1). */
#include "trainer/eval_session.h"

#include <math.h>

#include "kernels/det_math.h"

uint64_t eval_ttt_chunks(uint64_t n_tokens, uint64_t chunk) {
  uint64_t targets = n_tokens - 1;
  return (targets + chunk - 1) / chunk;
}

/* The cosine comes from kernels/det_math (float), not libm, so the
 * schedule, and with it every adapted weight, has the same bits on any
 * machine; the records' lr is a float32 scalar in the update anyway. */
double eval_ttt_lr(double lr, uint64_t c, uint64_t n_chunks) {
  float span = n_chunks > 1 ? (float)(n_chunks - 1) : 1.0f;
  float s, co;
  det_sincosf((float)M_PI * ((float)c / span), &s, &co);
  return lr * 0.5 * (1.0 + (double)co);
}

int eval_ttt(eval_session *s, pg_error *err) {
  const uint64_t C = s->cfg.chunk, last = s->v->n_tokens - 1;
  const uint64_t K = eval_ttt_chunks(s->v->n_tokens, C);
  for (uint64_t c = 0; c < K; c++) {
    uint64_t a = 1 + c * C, b = last - a + 1 > C ? a + C - 1 : last;
    if (eval_score_range(s, c, a, b, err)) return -1;
    if (c + 1 < K && eval_adapt_range(s, c, a, b, eval_ttt_lr(s->cfg.lr, c, K), err)) return -1;
  }
  return 0;
}
