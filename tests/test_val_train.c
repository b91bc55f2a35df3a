/* Training on the validation stream before scoring it, as
 * verifier/val_train.c reads it: the pre-quant TTT the maintainers closed
 * (PR #1376's shape, PR #1487's call with `val_data.val_tokens`), and the
 * legal forms it must pass: score-first chunks in one function (the
 * leaderboard's TTT records), a score-first loop handing each scored
 * chunk to a helper (PR #267), phased TTT training on the scored chunks
 * alone, a nested trainer inside a score-first evaluation (PR #1734), a
 * compile warm-up after the evaluations, a slice of the training data. */
#include "tests/test_util.h"

#include "verifier/val_train.h"

/* PR #1487's trainer, cut to what the reader sees. */
static const char *prequant =
    "def prequant_ttt_adapt_adamw(\n"
    "    h: Hyperparameters, base_model: nn.Module, device: torch.device,\n"
    "    val_tokens: Tensor, rank: int = 0, world_size: int = 1,\n"
    ") -> None:\n"
    "    \"\"\"AdamW TTT: fine-tune on val data BEFORE quantization.\"\"\"\n"
    "    seq_len = h.train_seq_len\n"
    "    log(f\"prequant_ttt:params trainable={n}\")\n"
    "    optimizer = torch.optim.AdamW(ttt_params, lr=h.prequant_ttt_lr)\n"
    "    for epoch in range(h.prequant_ttt_epochs):\n"
    "        epoch_loss_sum = torch.zeros((), device=device)\n"
    "        for bs in range(my_start, my_end, batch_seqs):\n"
    "            local = val_tokens[raw_start:raw_end].to(device=device, dtype=torch.int64)\n"
    "            x = local[:-1].reshape(-1, seq_len)\n"
    "            y = local[1:].reshape(-1, seq_len)\n"
    "            loss = base_model(x, y)\n"
    "            loss.backward()\n"
    "            optimizer.step()\n"
    "            epoch_loss_sum += loss.detach()\n"
    "        log(f\"prequant_ttt:epoch {epoch+1}/{h.prequant_ttt_epochs} loss:{avg:.4f}\")\n"
    "def train_and_eval(h, device):\n"
    "    val_data = ValidationData(h, device)\n"
    "    if h.prequant_ttt_enabled:\n"
    "        log(f\"prequant_ttt:start lr={h.prequant_ttt_lr} epochs={h.prequant_ttt_epochs}\")\n"
    "        prequant_ttt_adapt_adamw(\n"
    "            h, base_model, device, val_data.val_tokens,\n"
    "            rank=h.rank, world_size=h.world_size,\n"
    "        )\n"
    "    timed_eval(\"quantized_sliding_window\", eval_val_sliding, h, device, val_data)\n";

static size_t scan_texts(const char **texts, size_t n, val_trainer *out, size_t cap) {
  py_src src[4];
  memset(src, 0, sizeof src);
  pg_error err;
  for (size_t i = 0; i < n; i++)
    OK(pysrc_parse(texts[i], strlen(texts[i]), "t.py", &src[i], &err), err);
  size_t k = val_train_scan(src, n, out, cap);
  for (size_t i = 0; i < n; i++) pysrc_free(&src[i]);
  return k;
}

static size_t scan1(const char *text, val_trainer *out) {
  return scan_texts(&text, 1, out, VT_MAX);
}

static void test_prequant(void **st) {
  (void)st;
  val_trainer t[VT_MAX];
  assert_int_equal(scan1(prequant, t), 1);
  assert_string_equal(t[0].func, "prequant_ttt_adapt_adamw");
  assert_int_equal(t[0].def_line, 1);
  assert_int_equal(t[0].read_line, 12);
  assert_int_equal(t[0].backward_line, 16);
  assert_int_equal(t[0].call_line, 24);
  assert_string_equal(t[0].stream, "val_data.val_tokens");
  assert_true(strstr(t[0].read, "local=val_tokens[raw_start:raw_end]") == t[0].read);
  /* Its own prints, then the `if` block's around the call. */
  assert_int_equal(t[0].n_marks, 3);
  assert_string_equal(t[0].marks[0], "prequant_ttt:params trainable=");
  assert_string_equal(t[0].marks[1], "prequant_ttt:epoch");
  assert_string_equal(t[0].marks[2], "prequant_ttt:start lr=");
  const char *line = "prequant_ttt:epoch 3/10 loss:2.1234";
  assert_int_equal(val_train_mark_at(&t[0], line, strlen(line)), 1);
  line = "  prequant_ttt:start lr=0.0005 epochs=10";
  assert_int_equal(val_train_mark_at(&t[0], line, strlen(line)), 2);
  line = "log(f\"prequant_ttt:epoch {epoch+1}\")"; /* the script's own copy */
  assert_int_equal(val_train_mark_at(&t[0], line, strlen(line)), -1);
  line = "prequant_ttt";
  assert_int_equal(val_train_mark_at(&t[0], line, strlen(line)), -1);
}

/* Each binding form: positional, keyword, a method with self, a moved
 * stream, a stream the function reads itself, a trainer in a module. */
static void test_bindings(void **st) {
  (void)st;
  val_trainer t[VT_MAX];
  const char *kw =
      "def ttt(model, tokens, epochs):\n"
      "    for e in range(epochs):\n"
      "        x = tokens[0:100]\n"
      "        model(x).backward()\n"
      "        opt.step()\n"
      "ttt(model, epochs=3, tokens=val_tokens)\n";
  assert_int_equal(scan1(kw, t), 1);
  assert_string_equal(t[0].stream, "val_tokens");
  const char *method =
      "class A:\n"
      "    def adapt(self, toks):\n"
      "        for i in range(3):\n"
      "            loss = self.m(toks[i:i+9])\n"
      "            loss.backward()\n"
      "            self.opt.step()\n"
      "a.adapt(self.val_tokens.to(device))\n";
  assert_int_equal(scan1(method, t), 1);
  assert_string_equal(t[0].stream, "self.val_tokens");
  const char *direct =
      "def fit():\n"
      "    for i in range(5):\n"
      "        y = VAL_TOKENS[i:i+9]\n"
      "        model(y).backward()\n"
      "        opt.step()\n"
      "fit()\n";
  assert_int_equal(scan1(direct, t), 1);
  assert_string_equal(t[0].stream, "VAL_TOKENS");
  const char *texts[2] = {"from ttt import adapt\nadapt(model, val_toks)\n",
                          "def adapt(m, t):\n"
                          "    for e in range(2):\n"
                          "        m(t[e:e+5]).backward()\n"
                          "        o.step()\n"};
  assert_int_equal(scan_texts(texts, 2, t, VT_MAX), 1);
  assert_int_equal(t[0].text, 1);
  assert_int_equal(t[0].call_text, 0);
  assert_int_equal(t[0].call_line, 2);
  /* Train, then score the result inside the function (PR #525). */
  const char *then =
      "def test_time_train(args, model, val_tokens):\n"
      "    for epoch in range(args.ttt_epochs):\n"
      "        for s in range(n):\n"
      "            loss = model(val_tokens[s:s+9])\n"
      "            loss.backward()\n"
      "            opt.step()\n"
      "    return eval_val_sliding(args, model, val_tokens, base_bytes_lut)\n"
      "test_time_train(args, model, val_tokens)\n";
  assert_int_equal(scan1(then, t), 1);
}

/* The legal forms, and calls that do not bind the stream. */
static void test_not_trainers(void **st) {
  (void)st;
  val_trainer t[VT_MAX];
  static const char *const cases[] = {
      /* score-first chunks in one function */
      "def eval_val_ttt(model, val_tokens, base_bytes_lut):\n"
      "    for ci in range(num_chunks):\n"
      "        with torch.no_grad():\n"
      "            nll = model(val_tokens[a:b])\n"
      "        for ep in range(3):\n"
      "            model(val_tokens[a:b]).backward()\n"
      "            opt.step()\n"
      "eval_val_ttt(model, val_tokens, base_bytes_lut)\n",
      /* scored in the same forward, bytes counted before the update */
      "def sliding_ttt(model, val_tokens, base_bytes_lut):\n"
      "    for ws in windows:\n"
      "        nll = model(val_tokens[ws:ws+9])\n"
      "        tb = base_bytes_lut[tgt]\n"
      "        nll.mean().backward()\n"
      "        opt.step()\n"
      "sliding_ttt(model, val_tokens, base_bytes_lut)\n",
      /* a score-first loop handing each scored chunk to a helper (PR #267) */
      "def train_chunk(model, val_tokens, a, b):\n"
      "    for e in range(2):\n"
      "        model(val_tokens[a:b]).backward()\n"
      "        opt.step()\n"
      "def eval_causal(model, val_tokens):\n"
      "    for ci in range(n):\n"
      "        with torch.inference_mode():\n"
      "            s = model(val_tokens[a:b])\n"
      "        train_chunk(model, val_tokens, a, b)\n"
      "eval_causal(model, val_tokens)\n",
      /* phased TTT: only the scored chunks */
      "def global_sgd(h, model, val_tokens):\n"
      "    for ci in range(n):\n"
      "        model(val_tokens[a:b]).backward()\n"
      "        opt.step()\n"
      "global_sgd(h, model, global_ttt_tokens)\n"
      "global_sgd(h, model, val_tokens[:prefix])\n",
      /* a slice of the training data (PR #1554) */
      "def prequant_ttt(h, model, val_tokens):\n"
      "    for e in range(3):\n"
      "        model(val_tokens[a:b]).backward()\n"
      "        opt.step()\n"
      "prequant_ttt(h, model, train_slice)\n",
      /* a nested trainer inside a score-first evaluation (PR #1734) */
      "def eval_val_ttt_gdn(model, val_tokens):\n"
      "    def _run_macro_phase(a, b):\n"
      "        for ep in range(3):\n"
      "            model(val_tokens[a:b]).backward()\n"
      "            opt.step()\n"
      "    for ci in range(n):\n"
      "        with torch.inference_mode():\n"
      "            s = model(val_tokens[a:b])\n"
      "        _run_macro_phase(0, ci)\n"
      "eval_val_ttt_gdn(model, val_tokens)\n",
      /* a compile warm-up after the evaluations (the VarLen records) */
      "def train_and_eval(h):\n"
      "    timed_eval('diagnostic', eval_val, h, val_data)\n"
      "    for bsz in sizes:\n"
      "        row = val_tokens_idx[idx]\n"
      "        fwd(row).sum().backward()\n"
      "        wo.step()\n"
      "train_and_eval(h)\n",
      /* without gradients, or never called, or called through *args */
      "@torch.no_grad()\n"
      "def f(m, val_tokens):\n"
      "    for i in range(3):\n"
      "        m(val_tokens[i]).backward()\n"
      "        o.step()\n"
      "f(m, val_tokens)\n",
      "def g(m, val_tokens):\n"
      "    for i in range(3):\n"
      "        m(val_tokens[i]).backward()\n"
      "        o.step()\n",
      "def g(m, val_tokens):\n"
      "    for i in range(3):\n"
      "        m(val_tokens[i]).backward()\n"
      "        o.step()\n"
      "g(*args)\n",
      /* no optimizer step, or no loop */
      "def g(m, val_tokens):\n"
      "    for i in range(3):\n"
      "        m(val_tokens[i]).backward()\n"
      "g(m, val_tokens)\n",
      "def g(m, val_tokens):\n"
      "    m(val_tokens[0:9]).backward()\n"
      "    o.step()\n"
      "g(m, val_tokens)\n",
      /* a name in a message is no code */
      "def g(m, toks):\n"
      "    for i in range(3):\n"
      "        m(toks[i]).backward()\n"
      "        o.step()\n"
      "g(m, 'val_tokens')\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t k = scan1(cases[i], t);
    if (k) fail_msg("case %zu: found %s at line %u", i, t[0].func, t[0].def_line);
  }
}

/* What a mark is: a literal opening a log or print call's first
 * argument, up to an f-string's first `{`; at least eight characters and
 * five letters; printed by no other code. */
static void test_marks(void **st) {
  (void)st;
  val_trainer t[VT_MAX];
  const char *src =
      "def ttt(m, toks):\n"
      "    print('ttt: start now')\n"
      "    log0(f'{name}: epoch')\n"
      "    logger.info(\"adapt finished\")\n"
      "    log_fn(f\"ttt_epoch:{e} loss:{l}\")\n"
      "    log0('step ok')\n"
      "    log0(f'12345678:{x}')\n"
      "    log0(f'shared:x {x}')\n"
      "    print(msg)\n"
      "    for i in range(3):\n"
      "        m(toks[i]).backward()\n"
      "        o.step()\n"
      "for seed in seeds:\n"
      "    print('seed loop')\n"
      "    ttt(m, val_tokens)\n"
      "def other():\n"
      "    log0(f'shared:x and more {y}')\n";
  assert_int_equal(scan1(src, t), 1);
  /* Nothing from a loop around the call, nor what other code prints. */
  assert_int_equal(t[0].n_marks, 3);
  assert_string_equal(t[0].marks[0], "ttt: start now");
  assert_string_equal(t[0].marks[1], "adapt finished");
  assert_string_equal(t[0].marks[2], "ttt_epoch:");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prequant),
      cmocka_unit_test(test_bindings),
      cmocka_unit_test(test_not_trainers),
      cmocka_unit_test(test_marks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
