/* The official metric: non-overlapping windows of T tokens, no context
 * carried between them (trainer/eval.h). As a score range with stride T
 * from position 1 it is exactly that: windows end at T, 2T, ..., n-1
 * (n - 1 is a multiple of T), each scoring its T targets. */
#include "trainer/eval_session.h"

int eval_plain(eval_session *s, pg_error *err) {
  if (s->cfg.stride != s->cfg.seq_len)
    return pg_fail(err, "", -1, "plain evaluation needs stride = seq_len");
  return eval_score_range(s, 0, 1, s->v->n_tokens - 1, err);
}
