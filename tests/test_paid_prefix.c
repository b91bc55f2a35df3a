/* Stored validation targets in the evaluation, as verifier/paid_prefix.c
 * reads them: the paid prefix of PRs #168 and #262 (a stored slice
 * compared with the targets, the loss zeroed where they agree), the
 * forms of the zeroing, and what it must not take for one: a model's
 * predictions compared with the targets, a mask that zeroes no loss, a
 * comparison of two stored tensors. */
#include "tests/test_util.h"

#include "verifier/paid_prefix.h"

static int scan(const char *text, paid_prefix *p) {
  py_src s;
  pg_error err;
  OK(pysrc_parse(text, strlen(text), "t.py", &s, &err), err);
  memset(p, 0, sizeof *p);
  int found = paid_prefix_scan(&s, p);
  pysrc_free(&s);
  return found;
}

/* PR #262's evaluation, cut to what the reader sees. */
static void test_paid_prefix(void **st) {
  (void)st;
  paid_prefix p;
  const char *src =
      "def eval_val_sliding(args, model, val_tokens, paid_prefix_tokens=None):\n"
      "    prefix_len = paid_prefix_tokens.numel() if paid_prefix_tokens is not None else 0\n"
      "    for ws in windows:\n"
      "        scored_nll = nll[i, s:wlen].to(torch.float64)\n"
      "        if prefix_len > 0:\n"
      "            prefix_slice = paid_prefix_tokens[first_pos:first_pos + n_check].to(device)\n"
      "            tgt_slice = y_batch[i, s:s + n_check]\n"
      "            match_mask = (prefix_slice == tgt_slice)\n"
      "            scored_nll[:n_check] *= (~match_mask).to(scored_nll.dtype)\n"
      "        loss_sum += scored_nll.sum()\n";
  assert_int_equal(scan(src, &p), 1);
  assert_int_equal(p.mask_line, 8);
  assert_int_equal(p.zero_line, 9);
  assert_string_equal(p.mask, "match_mask=(prefix_slice==tgt_slice)");
  assert_string_equal(p.stem, "paid_prefix");
  const char *yes[] = {
      "paid_prefix:loaded 6,200,000 tokens from prefix_6m2.xz (4,240,472 bytes)",
      "paid_prefix_file:prefix_optimal.xz paid_prefix_tokens:12924343 paid_prefix_bytes:8750000",
      "Paid prefix blob: 4240472 bytes",
  };
  const char *no[] = {
      "Paid prefix blob: 0 bytes",
      "paid_prefix_tokens:0 paid_prefix_bytes:0",
      "loaded 6,200,000 tokens", /* no stem */
      "paid_prefix_file:/runs/2026-03-20/prefix.raw",
  };
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    if (!paid_prefix_line(p.stem, yes[i], strlen(yes[i]))) fail_msg("not read: %s", yes[i]);
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    if (paid_prefix_line(p.stem, no[i], strlen(no[i]))) fail_msg("read: %s", no[i]);
  assert_false(paid_prefix_line("", yes[0], strlen(yes[0])));
}

/* The zeroings, an attribute's stem (PR #278's `paid_prefix.tokens`). */
static void test_forms(void **st) {
  (void)st;
  paid_prefix p;
  static const char *const zero[] = {
      "nll[hit] = 0\n",
      "nll = nll.masked_fill(hit, 0.0)\n",
      "per_token_loss = torch.where(hit, torch.zeros_like(per_token_loss), per_token_loss)\n",
      "loss_tok *= ~hit\n",
  };
  for (size_t i = 0; i < sizeof zero / sizeof *zero; i++) {
    char src[512];
    snprintf(src, sizeof src,
             "def ev(stored, y, nll, per_token_loss, loss_tok):\n"
             "    ps = stored.tokens[a:b]\n"
             "    hit = ps == y[a:b]\n"
             "    %s",
             zero[i]);
    if (!scan(src, &p)) fail_msg("zeroing %zu not read", i);
    assert_string_equal(p.stem, "stored");
  }
}

static void test_not_a_prefix(void **st) {
  (void)st;
  paid_prefix p;
  static const char *const cases[] = {
      /* a model's predictions: accuracy, not a stored copy */
      "def ev(logits, tgt, nll):\n"
      "    correct = logits.argmax(-1) == tgt\n"
      "    nll *= ~correct\n",
      "def ev(pred, tgt, nll):\n"
      "    hit = (pred == tgt)\n"
      "    nll *= ~hit\n",
      /* a mask that zeroes no loss */
      "def ev(store, tgt, acc):\n"
      "    hit = store[a:b] == tgt\n"
      "    acc += hit.sum()\n",
      /* two stored tensors, neither the target */
      "def ev(a, b, nll):\n"
      "    same = a == b\n"
      "    nll *= ~same\n",
      /* the zeroing in another function */
      "def f(store, tgt):\n"
      "    hit = store == tgt\n"
      "    return hit\n"
      "def g(nll, hit):\n"
      "    nll *= ~hit\n",
      /* a comparison in a message, and an inequality */
      "def ev(store, tgt, nll):\n"
      "    hit = 'store == tgt'\n"
      "    nll *= ~hit\n",
      "def ev(store, tgt, nll):\n"
      "    hit = store != tgt\n"
      "    nll *= ~hit\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    if (scan(cases[i], &p)) fail_msg("case %zu: read at line %u", i, p.mask_line);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paid_prefix),
      cmocka_unit_test(test_forms),
      cmocka_unit_test(test_not_a_prefix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
