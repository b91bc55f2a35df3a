/* Training on the validation stream before scoring it, as the counted
 * code spells it (the reader behind VAL_TRAIN_BEFORE_SCORE).
 *
 * The challenge's README allows test-time training only "on validation
 * set tokens you've already evaluated your model on". The shape the
 * maintainers closed ("pre-quant TTT", openai/parameter-golf PR #1376 and
 * the PRs issue #677 lists) is a function that runs epochs of backward
 * passes and optimizer steps over the validation tokens and scores none
 * of them, called with the whole stream before the evaluation that
 * scores it:
 *
 *   def ttt_adapt_adamw(args, base_model, device, val_tokens, ...):
 *       for epoch in range(args.ttt_epochs):
 *           for bs in range(my_start, my_end, batch_seqs):
 *               local = val_tokens[raw_start:raw_end]...
 *               loss = base_model(x, y); loss.backward(); optimizer.step()
 *   ...
 *   ttt_adapt_adamw(args, base_model, device, val_tokens, ...)
 *
 * A trainer here is a `def` that
 *   - holds a loop with a `.backward(` and an optimizer's `.step(`;
 *   - reads a stream by subscript: a parameter (`tokens[a:b]`), or a name
 *     spelled as the validation stream (`val_tokens[...]`,
 *     `val_data.val_tokens[...]`);
 *   - scores nothing before its training is done: no statement from its
 *     start to the end of that loop opens `torch.no_grad()` or
 *     `inference_mode`, looks up a byte table (`base_bytes_lut[y]`), adds
 *     to a byte count, or calls an evaluation (`eval_val(`, `timed_eval(`)
 *     (the legal score-first form scores each chunk and then trains on
 *     it, inside the same loop);
 *   - is not decorated to run without gradients.
 * Its call counts when a parameter it subscripts receives the whole
 * validation stream (`val_tokens`, `val_data.val_tokens`, optionally
 * moved by `.to(...)`/`.cuda()`; never a slice or a list of scored
 * chunks, as the phased TTT on the leaderboard passes), or when it reads
 * the stream itself, and the call does not sit inside a loop that
 * scored before it (a score-first loop handing each scored chunk to a
 * training helper, PR #267's shape).
 *
 * What the trainer prints (the text of its log and print calls before
 * any `{`, at least VT_MARK_MIN bytes), and what the block around its
 * call prints when that block is an `if`/`with`/`try`, are its marks,
 * less any that other code prints too (one begins the other): a log line
 * that begins with one shows the function ran. */
#ifndef PGOLF_VAL_TRAIN_H
#define PGOLF_VAL_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "verifier/pysrc.h"

#define VT_MAX 8        /* trainers reported per submission */
#define VT_MAX_MARKS 8  /* marks per trainer */
#define VT_MARK_LEN 80  /* bytes of a mark kept */
#define VT_MARK_MIN 8   /* bytes of a mark at least (five of them letters) */
#define VT_STMT_LEN 120 /* bytes of a quoted statement kept */

typedef struct val_trainer {
  size_t text;            /* index of the text defining it */
  char func[96];          /* its name */
  uint32_t def_line;      /* its `def` */
  uint32_t read_line;     /* the statement reading the stream */
  char read[VT_STMT_LEN]; /* that statement, cut */
  uint32_t backward_line; /* its first `.backward(` */
  size_t call_text;       /* index of the text calling it */
  uint32_t call_line;     /* the call */
  char stream[96];        /* the stream it trains on, as named there */
  char marks[VT_MAX_MARKS][VT_MARK_LEN];
  size_t n_marks;
} val_trainer;

/* Find the trainers of srcs[0..n) (the counted texts of one submission:
 * a function may be defined in one and called in another) that are
 * called on the validation stream; at most cap into out, in text and
 * statement order. Returns how many were found (no more than cap). Never
 * fails: text it cannot read as such a trainer is no trainer. */
size_t val_train_scan(const py_src *srcs, size_t n, val_trainer *out, size_t cap);

/* Does the log line s[0..len) (after the logger's prefix) begin with one
 * of t's marks, leading blanks aside? The mark's index, or -1. */
int val_train_mark_at(const val_trainer *t, const char *s, size_t len);

#endif
