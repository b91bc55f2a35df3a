/* Sliding-window evaluation: every position once, with up to T tokens of
 * context (at least T - S + 1 after the first window), one pass, no
 * update: a single score range over the whole stream, one SCORE event. */
#include "trainer/eval_session.h"

int eval_sliding(eval_session *s, pg_error *err) {
  return eval_score_range(s, 0, 1, s->v->n_tokens - 1, err);
}
