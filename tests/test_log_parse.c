/* The challenge log parser: every line shape, with its line number; code
 * lines never taken as results; bad and huge inputs. */
#include "tests/test_util.h"

#include <math.h>

#include "verifier/log_parse.h"
#include "verifier/log_parts.h"

static void parse(const char *text, pg_log *l) {
  pg_error e;
  assert_int_equal(log_parse(text, strlen(text), "t.log", l, &e), 0);
}

static void test_train_and_val_steps(void **st) {
  (void)st;
  pg_log l;
  parse("step:1/20000 train_loss:6.9357 train_time:43ms step_avg:43.00ms\n"
        "step:200/20000 val_loss:2.1143 val_bpb:1.2489 train_time:8708ms step_avg:43.54ms\n"
        "4000/20000 val_loss: 2.8722 val_bpb: 1.1119\n"
        "2/20000 train_loss: 12.3549 train_time: 8.8m tok/s: 8494942\n",
        &l);
  assert_int_equal(l.n_train, 2);
  assert_int_equal(l.train[0].line, 1);
  assert_int_equal(l.train[0].step, 1);
  assert_int_equal(l.train[0].total, 20000);
  assert_true(l.train[0].loss.v == 6.9357 && l.train[0].loss.decimals == 4);
  assert_true(l.train[0].train_ms == 43 && l.train[0].step_avg_ms == 43.0);
  assert_int_equal(l.train[1].line, 4);
  assert_true(fabs(l.train[1].train_ms - 528000) < 1e-6);
  assert_true(fabs(l.train[1].train_res_ms - 6000) < 1e-6);
  assert_true(isnan(l.train[1].step_avg_ms));
  assert_int_equal(l.n_val, 2);
  assert_int_equal(l.val[0].line, 2);
  assert_true(l.val[0].val_bpb.v == 1.2489 && l.val[0].train_ms == 8708);
  assert_int_equal(l.val[1].line, 3);
  assert_int_equal(l.val[1].step, 4000);
  assert_true(l.val[1].val_loss.v == 2.8722 && isnan(l.val[1].train_ms));
  log_free(&l);
}

static void test_stop_and_train_end(void **st) {
  (void)st;
  pg_log l;
  parse("step:13600/20000 train_loss:2.0 train_time:592172ms step_avg:43.54ms\n"
        "stopping_early: wallclock_cap train_time:600038ms step:13780/20000\n", &l);
  assert_int_equal(l.stop.line, 2);
  assert_true(l.stop.train_ms == 600038 && l.stop.step == 13780 && l.stop.total == 20000);
  double ms, res, step;
  uint32_t line;
  assert_int_equal(log_train_end(&l, &ms, &res, &line, &step), 0);
  assert_true(ms == 600038 && res == 1 && line == 2 && step == 43.54);
  log_free(&l);
  parse("stopping_early: wallclock_cap train_time: 588047ms step: 4550/20000\n", &l);
  assert_true(l.stop.train_ms == 588047 && l.stop.step == 4550);
  log_free(&l);
  parse("nothing here\n", &l);
  assert_int_equal(log_train_end(&l, &ms, &res, &line, &step), -1);
  log_free(&l);
}

static void test_sizes(void **st) {
  (void)st;
  pg_log l;
  parse("Serialized model: 67224983 bytes\n"
        "Code size: 47642 bytes\n"
        "Total submission size: 67272625 bytes\n"
        "Serialized model int8+zlib: 15815847 bytes (payload:17178912 raw_torch:1 payload_ratio:3.91x)\n"
        "Total submission size int8+zlib: 15863489 bytes\n"
        "Code size (uncompressed): 139831 bytes\n"
        "Code size (compressed): 28599 bytes\n"
        "Code size (zipped): 1 bytes\n"
        "Serialized model quantized+brotli: 15975300 bytes\n", &l);
  assert_int_equal(l.n_models, 3);
  assert_string_equal(l.models[0].label, "");
  assert_string_equal(l.models[1].label, "int8+zlib");
  assert_true(l.models[1].bytes == 15815847 && l.models[1].line == 4);
  assert_string_equal(l.models[2].label, "quantized+brotli");
  assert_int_equal(l.n_totals, 2);
  assert_string_equal(l.totals[0].label, "");
  assert_true(l.totals[1].bytes == 15863489 && l.totals[1].line == 5);
  assert_int_equal(l.n_code, 3);
  assert_true(l.code[0].kind == CODE_SIZE_PLAIN && l.code[0].bytes == 47642);
  assert_true(l.code[1].kind == CODE_SIZE_UNCOMPRESSED && l.code[1].line == 6);
  assert_true(l.code[2].kind == CODE_SIZE_COMPRESSED && l.code[2].bytes == 28599);
  log_free(&l);
}

static void test_metrics(void **st) {
  (void)st;
  pg_log l;
  parse("pre-quantization post-ema val_loss:2.80873254 val_bpb:1.08734790 eval_time:7440ms\n"
        "diagnostic quantized val_loss:2.79852399 val_bpb:1.08336093 eval_time:55851ms\n"
        "final_int8_zlib_roundtrip val_loss:2.0727 val_bpb:1.2244 eval_time:1401ms\n"
        "final_int8_zlib_roundtrip_exact val_loss:2.07269931 val_bpb:1.22436570\n"
        "final_sliding_window_eval_exact stride:64 val_loss:2.02215627 val_bpb:1.19763674\n"
        "ttt_sliding:done val_loss=1.889768 val_bpb=1.119230 elapsed=409.8s\n"
        "quantized_ttt_lora val_loss:2.7 val_bpb:1.07 eval_time:500104ms\n"
        "legal_ttt val_loss:1.8898 val_bpb:1.1192 eval_time:410268ms\n"
        "legal_ttt_exact val_loss:1.88976776 val_bpb:1.11922988\n", &l);
  assert_int_equal(l.n_metrics, 9);
  assert_int_equal(l.metrics[0].kind, METRIC_PRE_QUANT);
  assert_int_equal(l.metrics[1].kind, METRIC_DIAGNOSTIC);
  assert_int_equal(l.metrics[2].kind, METRIC_FINAL);
  assert_true(l.metrics[2].eval_ms == 1401 && l.metrics[2].val_bpb.decimals == 4);
  assert_true(l.metrics[3].exact && l.metrics[3].val_bpb.decimals == 8);
  assert_string_equal(l.metrics[3].base, "final_int8_zlib_roundtrip");
  assert_string_equal(l.metrics[4].prefix, "final_sliding_window_eval_exact stride:64");
  assert_string_equal(l.metrics[4].base, "final_sliding_window_eval");
  assert_string_equal(l.metrics[5].prefix, "ttt_sliding:done");
  assert_true(l.metrics[5].val_bpb.v == 1.119230 && l.metrics[5].eval_ms == 409800);
  assert_int_equal(l.metrics[5].line, 6);
  const log_metric *f = log_final_metric(&l);
  assert_non_null(f);
  assert_int_equal(f->line, 9);
  log_free(&l);
  /* The plain line last: its exact twin (earlier) is the score. */
  parse("x_exact val_loss:1.00000001 val_bpb:1.00000002\nx val_loss:1.0 val_bpb:1.0\n", &l);
  assert_int_equal(log_final_metric(&l)->line, 1);
  log_free(&l);
  parse("pre-quant val_loss:1.0 val_bpb:1.0\n", &l);
  assert_null(log_final_metric(&l));
  log_free(&l);
}

/* Score lines that print val_bpb alone (PR 1431's `final_ttt_exact
 * val_bpb:`, PR 810's `final_sliding_window_exact val_bpb:`) are metrics
 * with a NaN val_loss, under an evaluation prefix only; a line with both
 * keys never becomes configuration. */
static void test_metrics_without_loss(void **st) {
  (void)st;
  pg_log l;
  parse(
      "final_sliding_window val_bpb:1.0902 eval_time:90000ms\n"
      "best val_bpb:1.19\n"
      "val_bpb:1.3 at:step\n"
      "final_ttt_exact val_bpb:1.12662548\n"
      "eval[64] val_loss:2.2 val_bpb:1.3 stride:64\n",
      &l);
  assert_int_equal(l.n_metrics, 2);
  assert_int_equal(l.metrics[0].line, 1);
  assert_true(isnan(l.metrics[0].val_loss.v) && l.metrics[0].eval_ms == 90000);
  assert_string_equal(l.metrics[1].base, "final_ttt");
  assert_true(l.metrics[1].exact && l.metrics[1].val_bpb.decimals == 8);
  assert_int_equal(log_final_metric(&l)->line, 4);
  assert_null(log_hparam(&l, "stride"));
  assert_null(log_hparam(&l, "val_loss"));
  log_free(&l);
}

/* A setting in parentheses inside a score's label (PR 204's
 * `final_quant_zlib(level=9)_roundtrip_exact`, PR 807's
 * `final_int6_lzma_roundtrip(ttt_lora)` whose exact twin has no tag) is
 * part of the label; the base drops it, so the twins pair. Anything else
 * in parentheses, or a '=' outside them, is no label. */
static void test_metric_label_tags(void **st) {
  (void)st;
  pg_log l;
  parse(
      "final_quant_zlib(level=9)_roundtrip val_loss:2.0802 val_bpb:1.2320 eval_time:336698ms\n"
      "final_quant_zlib(level=9)_roundtrip_exact val_loss:2.08016806 val_bpb:1.23199932\n",
      &l);
  assert_int_equal(l.n_metrics, 2);
  assert_string_equal(l.metrics[1].prefix, "final_quant_zlib(level=9)_roundtrip_exact");
  assert_string_equal(l.metrics[1].base, "final_quant_zlib_roundtrip");
  assert_string_equal(l.metrics[0].base, l.metrics[1].base);
  assert_true(l.metrics[0].eval_ms == 336698);
  assert_int_equal(log_final_metric(&l)->line, 2);
  log_free(&l);
  parse(
      "final_int6_lzma_roundtrip(ttt_lora) val_loss:1.7015 val_bpb:1.0069 eval_time:2434047ms\n"
      "final_int6_lzma_roundtrip_exact val_loss:1.70150648 val_bpb:1.00691559\n"
      "final(a, b=2.5) val_loss:1.0 val_bpb:1.0\n",
      &l);
  assert_int_equal(l.n_metrics, 3);
  assert_string_equal(l.metrics[0].base, "final_int6_lzma_roundtrip");
  assert_true(l.metrics[1].exact);
  assert_string_equal(l.metrics[1].base, "final_int6_lzma_roundtrip");
  assert_string_equal(l.metrics[2].base, "final");
  log_free(&l);
  parse(
      "final() val_loss:1.0 val_bpb:1.0\n"
      "final(a(b)) val_loss:1.0 val_bpb:1.0\n"
      "final(a val_loss:1.0 val_bpb:1.0\n"
      "final(a;b) val_loss:1.0 val_bpb:1.0\n"
      "seed=2025 val_loss:1.0 val_bpb:1.0\n"
      "log0(f\"final({tag}) val_loss:{a:.4f} val_bpb:{b:.4f}\")\n",
      &l);
  assert_int_equal(l.n_metrics, 0);
  log_free(&l);
}

static void test_gptq_eval_seed(void **st) {
  (void)st;
  pg_log l;
  parse("gptq:reserving 12s, effective=588000ms\n"
        "GPTQ:collected 67 Hessians in 12.7s\n"
        "total_eval_time:338.2s\n"
        "seed:1337\n"
        "seed:42\n", &l);
  assert_true(l.gptq_reserve_s.line == 1 && l.gptq_reserve_s.v == 12);
  assert_true(l.gptq_hessian_s.line == 2 && l.gptq_hessian_s.v == 12.7 && l.gptq_hessians == 67);
  assert_true(l.total_eval_s.line == 3 && l.total_eval_s.v == 338.2);
  assert_true(l.seed.line == 4 && l.seed.v == 1337 && l.seed_conflict);
  log_free(&l);
}

static void test_hparams_and_config(void **st) {
  (void)st;
  pg_log l;
  parse("Hyperparameters:\n"
        "  adam_eps: 1e-08\n"
        "  seed: 42\n"
        "  train_files: ./data/fineweb_train_*.bin\n"
        "  empty:\n"
        "train_shards: 128\n"
        "train_batch_tokens:524288 train_seq_len:1024 max_wallclock_seconds:600.000\n"
        "warmup_step:1/20\n"
        "step:1/20 train_loss:1.0 train_time:1ms step_avg:1.00ms\n"
        "layer_loop:enabled step:2018 frac:0.350\n", &l);
  const log_kv *k = log_hparam(&l, "adam_eps");
  assert_non_null(k);
  assert_string_equal(k->value, "1e-08");
  assert_int_equal(k->line, 2);
  assert_string_equal(log_hparam(&l, "train_files")->value, "./data/fineweb_train_*.bin");
  assert_string_equal(log_hparam(&l, "empty")->value, "");
  assert_true(l.seed.v == 42 && l.seed.line == 3);
  assert_null(log_hparam(&l, "train_shards")); /* the block ended at the unindented line */
  k = log_hparam(&l, "max_wallclock_seconds");
  assert_non_null(k);
  assert_string_equal(k->value, "600.000");
  assert_int_equal(k->line, 7);
  assert_null(log_hparam(&l, "warmup_step"));
  assert_null(log_hparam(&l, "layer_loop")); /* after training began */
  log_free(&l);
}

static void test_timestamps_and_warnings(void **st) {
  (void)st;
  pg_log l;
  parse("1776142348.135 W0414 04:52:28.134000 1217 torch/distributed/run.py:803] \n"
        "[W318 14:38:11.514156940 Utils.hpp:137] Warning: deprecated\n"
        "[rank3]:[W318 14:38:18.835915381 Utils.hpp:112] Warning: deprecated\n"
        "1776143349.278 stopping_early: wallclock_cap train_time: 587091ms step: 4832/20000\r\n"
        "1776144156.999 quantized_ttt_phased val_loss:2.76951521 val_bpb:1.07216564 eval_time:500104ms\n"
        "1776144156 total_eval_time:500.1s\n", &l);
  assert_int_equal(l.torchrun_warnings, 3);
  assert_true(l.stop.line == 4 && l.stop.train_ms == 587091);
  assert_int_equal(l.n_metrics, 1);
  assert_string_equal(l.metrics[0].prefix, "quantized_ttt_phased");
  assert_true(l.total_eval_s.line == 6 && l.total_eval_s.v == 500.1);
  assert_int_equal(l.n_lines, 6);
  log_free(&l);
}

/* A launcher's or logger's prefix is not part of what the script printed:
 * each form alone and in a row, with its exact length; look-alikes are
 * left as they are. */
static void test_prefix_lengths(void **st) {
  (void)st;
  static const struct {
    const char *line;
    size_t len;
  } cases[] = {
      {"1776142348.135 step:1/2", 15},
      {"1776142348 step:1/2", 11},
      {"[default0]:step:1/2", 11},
      {"[rank3]:[W318 14:38:18.835 Utils.hpp:112] Warning", 8},
      {"[04:52:28] step:1/2", 11},
      {"[2026-03-23 04:39:13] INFO: step:1/2", 28},
      {"[2026-03-23 04:39:13,512] INFO: step:1/2", 32},
      {"2026-03-23 04:39:13,512 - INFO - step:1/2", 33},
      {"2026-04-30T12:00:00Z step:1/2", 21},
      {"2026-04-30 12:00:00+00:00 step:1/2", 26},
      {"2026-04-30 12:00:00.123-0500 step:1/2", 29},
      {"[12:00:00] [INFO] step:1/2", 18},
      {"[default0]:[2026-03-23 04:39:13] WARNING: x", 42},
      {"1776142348.135 [default0]:x", 26},
      /* not prefixes: a custom tag, a level alone, a clock without
       * seconds or blank, a date alone, too few or many digits, code */
      {"[train] step:1/2", 0},
      {"INFO: step:1/2", 0},
      {"[12:00] step:1/2", 0},
      {"12:00:00step:1/2", 0},
      {"2026-04-30 step:1/2", 0},
      {"17761423 step:1/2", 0},
      {"[default]:x", 0},
      {"[0]:x", 0},
      {"[x1] x", 0},
      {"[12:00:00]x", 0},
      {"", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    size_t got = log_prefix_len(cases[i].line, strlen(cases[i].line));
    if (got != cases[i].len) fail_msg("\"%s\": %zu, want %zu", cases[i].line, got, cases[i].len);
  }
  /* The level's "INFO:" is taken only as a level, not "INFO:root:". */
  const char *r = "[04:52:28] INFO:root:step:1/2";
  assert_int_equal(log_prefix_len(r, strlen(r)), 11);
}

/* Prefixed lines parse as the bare ones do, their script copy included. */
static void test_prefixed_lines(void **st) {
  (void)st;
  pg_log l;
  parse(
      "[default0]:import os\n"
      "[default0]:print(1)\n"
      "[default0]:"
      "====================================================================\n"
      "[default0]:Hyperparameters:\n"
      "[default0]:  seed: 42\n"
      "[default0]:step:1/20000 train_loss:6.9357 train_time:43ms step_avg:43.00ms\n"
      "[05:06:00] 4000/20000 val_loss: 2.8722 val_bpb: 1.1119\n"
      "[2026-03-23 04:40:41] INFO: stopping_early: wallclock_cap train_time:600038ms step:2/20000\n"
      "2026-04-30T12:00:00Z quantized_ttt val_loss:2.77095943 val_bpb:1.07272475 "
      "eval_time:308075ms\n",
      &l);
  assert_int_equal(l.code_end_line, 3);
  assert_true(l.seed.line == 5 && l.seed.v == 42);
  assert_true(l.n_train == 1 && l.train[0].line == 6);
  assert_true(l.n_val == 1 && l.val[0].line == 7 && l.val[0].val_bpb.v == 1.1119);
  assert_true(l.stop.line == 8 && l.stop.train_ms == 600038);
  assert_int_equal(l.n_metrics, 1);
  assert_string_equal(l.metrics[0].prefix, "quantized_ttt");
  assert_int_equal(l.figure_line, 0);
  log_free(&l);
}

/* Loss or bpb figures in shapes of their own mark a log pgolf cannot
 * read; Python, figures without a fraction and longer words do not. */
static void test_figure_line(void **st) {
  (void)st;
  pg_log l;
  parse(
      "=== GDN Hybrid ===\n"
      "loss = 0.5 * x\n"
      "lossy 1.5\n"
      "loss 5\n"
      "print(f\"loss {x:.4f}\")\n"
      "    Quantized BPB: 1.026927\n"
      "step     1/9999 | loss 6.9311 | lr_mul 0.0500\n"
      "Final BPB: 1.1070\n",
      &l);
  assert_int_equal(l.figure_line, 7);
  assert_int_equal(l.n_train + l.n_val + l.n_metrics, 0);
  log_free(&l);
  static const char *one[] = {"s:0/20000 vl:6.9279 bpb:4.1031 tt:0ms\n", "val_bpb=0.0049\n",
                              "[2026-03-26 18:55:16] [RANK 0] BPB 1.1189\n",
                              "Loss: 1.0054, Val Loss: 0.9487\n"};
  for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
    parse(one[i], &l);
    if (l.figure_line != 1) fail_msg("%s: figure_line %u", one[i], l.figure_line);
    log_free(&l);
  }
}

/* Lines of Python never count, inside or outside a leading source block. */
static void test_code_lines_ignored(void **st) {
  (void)st;
  pg_log l;
  parse("log0(f\"step:{step}/{n} train_loss:{x:.4f} train_time:{t:.0f}ms\")\n"
        "    log0(f\"final_int8_zlib_roundtrip_exact val_loss:{a:.8f} val_bpb:{b:.8f}\")\n"
        "            f\"final_sliding_window_eval_exact stride:{s} \"\n"
        "print(\"legal_ttt val_loss:1.0 val_bpb:1.0\")\n"
        "x = 'Serialized model int8+zlib: 1 bytes'\n"
        "if seed:1\n"
        "log(f\"Code size: {n} bytes\")\n"
        "def f(): return 1\n", &l);
  assert_int_equal(l.n_train + l.n_val + l.n_metrics + l.n_models + l.n_code + l.n_hparams, 0);
  assert_int_equal(l.seed.line, 0);
  log_free(&l);
  /* A leading copy of the script ends at the first row of '='. */
  char text[4096];
  snprintf(text, sizeof text,
           "\"\"\"doc\"\"\"\nimport os\nfinal val_loss:8.0 val_bpb:8.0\nseed:9\n%s\n"
           "seed:7\nfinal val_loss:2.0 val_bpb:1.5\n",
           "===================================================================================="
           "================");
  parse(text, &l);
  assert_int_equal(l.code_end_line, 5);
  assert_int_equal(l.n_metrics, 1);
  assert_int_equal(l.metrics[0].line, 7);
  assert_true(l.seed.v == 7);
  log_free(&l);
  /* Without Python above it, a row of '=' is just a separator. */
  snprintf(text, sizeof text, "seed:3\n%s\n", "=================================================="
                                              "==================================================");
  parse(text, &l);
  assert_int_equal(l.code_end_line, 0);
  assert_int_equal(l.seed.line, 1);
  log_free(&l);
}

static void test_bad_numbers_rejected(void **st) {
  (void)st;
  pg_log l;
  parse("step:1/2 train_loss:nan train_time:1ms\n"
        "step:1/2 train_loss:inf\n"
        "final val_loss:0x1p3 val_bpb:1.0\n"
        "final val_loss:1.0 val_bpb:1.0abc\n"
        "step:99999999999999999999/2 train_loss:1.0\n"
        "Code size: -5 bytes\n"
        "Serialized model: 99999999999999999999999 bytes\n"
        "step:1/2 train_loss:1.0 train_time:5parsecs\n", &l);
  assert_int_equal(l.n_metrics + l.n_code + l.n_models, 0);
  assert_int_equal(l.n_train, 1); /* the last: a loss with an unreadable clock */
  assert_true(isnan(l.train[0].train_ms) && l.train[0].line == 8);
  log_free(&l);
}

static void test_long_lines_and_nul(void **st) {
  (void)st;
  size_t big = LOG_MAX_LINE + 10;
  char *t = malloc(big + 200);
  assert_non_null(t);
  memcpy(t, "seed:5", 6);
  memset(t + 6, '7', big - 6);
  size_t n = big;
  const char tail[] = "\nseed:\0" "6\nseed:8\n";
  memcpy(t + n, tail, sizeof tail - 1);
  n += sizeof tail - 1;
  pg_log l;
  pg_error e;
  assert_int_equal(log_parse(t, n, "big.log", &l, &e), 0);
  assert_int_equal(l.long_lines, 2);
  assert_true(l.seed.line == 3 && l.seed.v == 8);
  assert_int_equal(l.n_lines, 3);
  log_free(&l);
  free(t);
  /* Over the size limit: refused without reading. */
  assert_int_equal(log_parse("", (size_t)LOG_MAX_BYTES + 1, "huge.log", &l, &e), -1);
  assert_non_null(strstr(e.msg, "over the limit"));
  assert_string_equal(e.file, "huge.log");
}

static void test_empty_and_file(void **st) {
  (void)st;
  pg_log l;
  pg_error e;
  assert_int_equal(log_parse("", 0, "e.log", &l, &e), 0);
  assert_int_equal(l.n_lines, 0);
  log_free(&l);
  char *dir = test_tmpdir();
  char path[600];
  snprintf(path, sizeof path, "%s/a.log", dir);
  const char *text = "seed:11\nfinal_x val_loss:1.5 val_bpb:0.75";
  test_write_file(path, text, strlen(text));
  assert_int_equal(log_parse_file(path, &l, &e), 0);
  assert_true(l.seed.v == 11 && l.n_metrics == 1 && l.metrics[0].line == 2);
  log_free(&l);
  snprintf(path, sizeof path, "%s/missing.log", dir);
  assert_int_equal(log_parse_file(path, &l, &e), -1);
  test_rmdir(dir);
}

/* Several runs in one file: a step count that starts again, another seed,
 * or a configuration printed after scores starts a new segment, and each
 * metric knows its segment. */
static void test_segments(void **st) {
  (void)st;
  pg_log l;
  parse("step:1/20000 train_loss:6.9 train_time:40ms step_avg:40.00ms\n"
        "step:500/20000 train_loss:2.1 train_time:20000ms step_avg:40.00ms\n"
        "final_sliding_window_eval_exact stride:64 val_loss:2.02 val_bpb:1.19763674\n"
        "step:1/20000 train_loss:6.9 train_time:25ms step_avg:25.00ms\n"
        "final_sliding_window_eval_exact stride:64 val_loss:1.96 val_bpb:1.16301431\n",
        &l);
  assert_int_equal(l.n_segs, 2);
  assert_int_equal(l.metrics[0].segment, 0);
  assert_int_equal(l.metrics[1].segment, 1);
  log_free(&l);
  /* Validation at step 0, then steps: one run. */
  parse("step:0/20000 val_loss:6.9 val_bpb:4.1 train_time:0ms step_avg:0.01ms\n"
        "step:1/20000 train_loss:6.9 train_time:40ms step_avg:40.00ms\n"
        "step:2/20000 train_loss:6.8 train_time:80ms step_avg:40.00ms\n",
        &l);
  assert_int_equal(l.n_segs, 1);
  log_free(&l);
  /* An evaluation log with two seeds' scores, and one whose second
   * session prints its configuration again. */
  parse("seed:1337\nquantized_ttt_phased val_loss:2.32 val_bpb:1.0613\n"
        "seed:42\nquantized_ttt_phased val_loss:2.33 val_bpb:1.0640\n",
        &l);
  assert_int_equal(l.n_segs, 2);
  assert_int_equal(l.metrics[1].segment, 1);
  assert_true(l.seed.v == 1337 && l.seed_conflict);
  log_free(&l);
  parse("Hyperparameters:\n  ttt_lr: 0.005\nfinal_int6_sliding_window val_loss:2.81 val_bpb:1.0886\n"
        "Hyperparameters:\n  ttt_lr: 0.005\nfinal_int6_sliding_window val_loss:2.80 val_bpb:1.0842\n",
        &l);
  assert_int_equal(l.n_segs, 2);
  assert_int_equal(l.metrics[0].segment, 0);
  assert_int_equal(l.metrics[1].segment, 1);
  log_free(&l);
}

/* Where each segment begins: after the last result of the one before, so
 * the configuration a run prints before its first step is its own; a
 * Hyperparameters block and the seed in it begin one segment. */
static void test_segment_lines(void **st) {
  (void)st;
  pg_log l;
  parse(
      "Hyperparameters:\n  seed: 42\n"                                      /* 1-2 */
      "step:500/20000 train_loss:2.1 train_time:20000ms step_avg:40.00ms\n" /* 3 */
      "final_int8_zlib_roundtrip_exact val_loss:2.0 val_bpb:1.20000000\n"   /* 4 */
      "peak memory allocated: 2595 MiB\n"                                   /* 5 */
      "train_batch_tokens:786432 max_wallclock_seconds:600.000\n"           /* 6 */
      "seed:42\n"                                                           /* 7 */
      "step:1/20000 train_loss:6.9 train_time:25ms step_avg:25.00ms\n"      /* 8 */
      "final_int8_zlib_roundtrip_exact val_loss:2.0 val_bpb:1.10000000\n"   /* 9 */
      "Hyperparameters:\n  seed: 314\n"                                     /* 10-11 */
      "final_int8_zlib_roundtrip_exact val_loss:2.0 val_bpb:1.30000000\n",  /* 12 */
      &l);
  assert_int_equal(l.n_segs, 3);
  assert_int_equal(l.seg_first[0], 1);
  assert_int_equal(l.seg_first[1], 5);
  assert_int_equal(l.seg_first[2], 10);
  assert_int_equal(l.metrics[2].segment, 2);
  log_free(&l);
  /* A seed line after the last result begins the new run there. */
  parse(
      "seed:7\nstep:9/9 train_loss:2.1 train_time:900ms step_avg:100.00ms\n"
      "seed:8\nstep:1/9 train_loss:6.9 train_time:100ms step_avg:100.00ms\n",
      &l);
  assert_int_equal(l.n_segs, 2);
  assert_int_equal(l.seg_first[1], 3);
  log_free(&l);
}

/* Another process's line inside rank 0's Hyperparameters block (torchrun's
 * interleaved output) does not end it; a line of its own process does. */
static void test_hparams_other_process(void **st) {
  (void)st;
  pg_log l;
  parse(
      "[default0]:Hyperparameters:\n"
      "[default0]:  adam_eps: 1e-08\n"
      "[default7]:job-0:254:619 [7] NCCL INFO Channel 00/0 : 7[7] -> 0[0]\n"
      "[default0]:  seed: 1337\n"
      "[default0]:model_params:35944536\n"
      "[default0]:  train_seq_len: 2048\n",
      &l);
  assert_true(l.seed.line == 4 && l.seed.v == 1337);
  assert_non_null(log_hparam(&l, "adam_eps"));
  assert_null(log_hparam(&l, "train_seq_len"));
  log_free(&l);
  /* A seed is a whole number an int64 holds exactly: 1e37 and 0.5 are
   * none (the fuzzer's folder with `seed: 1e37` made a float-to-integer
   * conversion out of range). */
  parse("Hyperparameters:\n  seed: 1e37\n  seed: 0.5\nseed:9223372036854775807\n", &l);
  assert_int_equal(l.seed.line, 0);
  log_free(&l);
  parse("Hyperparameters:\n  seed: 1e37\n  seed: 42.0\n", &l);
  assert_true(l.seed.line == 3 && l.seed.v == 42);
  log_free(&l);
  /* Untagged, such a line ends the block as before. */
  parse("Hyperparameters:\n  adam_eps: 1e-08\nNCCL INFO Channel\n  seed: 1337\n", &l);
  assert_int_equal(l.seed.line, 0);
  log_free(&l);
}

/* A part of a file is parsed with the file's line numbers, its leading
 * script copy looked for at its start. */
static void test_parse_part(void **st) {
  (void)st;
  pg_log l;
  pg_error e;
  const char *t =
      "import os\nprint(1)\n"
      "============================================================================================"
      "========\n"
      "seed:5\nfinal_int8_zlib_roundtrip_exact val_loss:2.0 val_bpb:1.20000000\n";
  assert_int_equal(log_parse_part(t, strlen(t), 100, "t.log", &l, &e), 0);
  assert_int_equal(l.first_line, 100);
  assert_int_equal(l.code_end_line, 102);
  assert_int_equal(l.seed.line, 103);
  assert_int_equal(l.metrics[0].line, 104);
  assert_int_equal(l.n_lines, 104);
  assert_int_equal(l.seg_first[0], 100);
  log_free(&l);
}

/* Which files are several runs, where each begins, and the seeds a file
 * name lists. */
static void test_log_parts(void **st) {
  (void)st;
  int64_t v[8];
  assert_int_equal(log_name_seeds("eval_seeds42_314.log", v, 8), 2);
  assert_true(v[0] == 42 && v[1] == 314);
  assert_int_equal(log_name_seeds("train_seeds_42_999_slot_v2.log", v, 8), 2);
  assert_true(v[0] == 42 && v[1] == 999);
  assert_int_equal(log_name_seeds("train_seed1337.log", v, 8), 1);
  assert_int_equal(log_name_seeds("train_seed42_2048ctx.log", v, 8), 1);
  assert_int_equal(log_name_seeds("train_v3.log", v, 8), 0);
  assert_int_equal(log_name_seeds("SEED-7.txt", v, 8), 1);
  assert_int_equal(v[0], 7);

  pg_log l;
  log_part p[LOG_MAX_PARTS];
  /* Three seeds' runs. */
  parse(
      "seed:42\nstep:9/9 train_loss:2.1 train_time:900ms step_avg:100.00ms\n"
      "final_x_exact val_loss:2.0 val_bpb:1.20000000\n"
      "seed:314\nstep:9/9 train_loss:2.1 train_time:900ms step_avg:100.00ms\n"
      "final_x_exact val_loss:2.0 val_bpb:1.30000000\n"
      "seed:999\nfinal_x_exact val_loss:2.0 val_bpb:1.40000000\n",
      &l);
  assert_int_equal(log_parts(&l, "train_v3_3seeds.log", p), 3);
  assert_true(p[0].first_line == 1 && p[1].first_line == 4 && p[2].first_line == 7);
  assert_true(p[0].name_seed == -1 && p[2].name_seed == -1);
  /* The name lists as many seeds: each part takes its own; one: all take it. */
  assert_int_equal(log_parts(&l, "seeds_1_2_3.log", p), 3);
  assert_true(p[0].name_seed == 1 && p[1].name_seed == 2 && p[2].name_seed == 3);
  assert_int_equal(log_parts(&l, "seed5.log", p), 3);
  assert_true(p[0].name_seed == 5 && p[2].name_seed == 5);
  log_free(&l);
  /* A segment with no result stays in the part before it: one part. */
  parse("seed:42\nfinal_x_exact val_loss:2.0 val_bpb:1.20000000\nseed:7\nnothing\n", &l);
  assert_int_equal(l.n_segs, 2);
  assert_int_equal(log_parts(&l, "t.log", p), 1);
  assert_true(p[0].first_line == 1 && p[0].name_seed == -1);
  log_free(&l);
  /* One run. */
  parse("seed:42\nstep:1/9 train_loss:2.1 train_time:90ms step_avg:90.00ms\n", &l);
  assert_int_equal(log_parts(&l, "seeds_1_2.log", p), 1);
  log_free(&l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_train_and_val_steps),
      cmocka_unit_test(test_stop_and_train_end),
      cmocka_unit_test(test_sizes),
      cmocka_unit_test(test_metrics),
      cmocka_unit_test(test_metrics_without_loss),
      cmocka_unit_test(test_metric_label_tags),
      cmocka_unit_test(test_gptq_eval_seed),
      cmocka_unit_test(test_hparams_and_config),
      cmocka_unit_test(test_timestamps_and_warnings),
      cmocka_unit_test(test_code_lines_ignored),
      cmocka_unit_test(test_bad_numbers_rejected),
      cmocka_unit_test(test_long_lines_and_nul),
      cmocka_unit_test(test_empty_and_file),
      cmocka_unit_test(test_segments),
      cmocka_unit_test(test_prefix_lengths),
      cmocka_unit_test(test_prefixed_lines),
      cmocka_unit_test(test_figure_line),
      cmocka_unit_test(test_segment_lines),
      cmocka_unit_test(test_hparams_other_process),
      cmocka_unit_test(test_parse_part),
      cmocka_unit_test(test_log_parts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
