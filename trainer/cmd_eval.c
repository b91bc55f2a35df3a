/* pgolf eval: score the validation split with an artifact's model, score
 * first (trainer/eval_session.h), writing the score dump and the event
 * log the audit reads. Exit codes: 0 ok, 2 usage or input error. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/sha256.h"
#include "formats/byte_accounting.h"
#include "trainer/eval_session.h"

static const char usage_text[] =
    "usage: pgolf eval --artifact FILE --data DIR --tokenizer MODEL --mode MODE\n"
    "                  --score-dump FILE [OPTIONS]\n"
    "\n"
    "Score every target of the validation split (DIR/fineweb_val_*.bin) exactly\n"
    "once, in order, and write one score-dump record per target.\n"
    "\n"
    "  --mode plain|sliding|ttt  plain: windows of seq_len, no overlap (the\n"
    "                          official metric); sliding: up to seq_len tokens of\n"
    "                          context, windows every --stride; ttt: chunks of\n"
    "                          --chunk positions, each scored (sliding) and only\n"
    "                          then trained on (score-first test-time training)\n"
    "  --seq-len L             window length (default: the model's)\n"
    "  --stride S              sliding/ttt window stride (default min(64, L))\n"
    "  --chunk C               ttt: positions per chunk (default 32768)\n"
    "  --epochs E              ttt: epochs per chunk (default 3)\n"
    "  --lr X                  ttt: SGD learning rate, cosine across chunks (0.002)\n"
    "  --momentum M            ttt: SGD momentum (default 0.9)\n"
    "  --clip G                ttt: gradient clip norm, 0 for none (default 1.0)\n"
    "  --ttt-batch N           ttt: sequences per SGD step (default 32)\n"
    "  --batch N               windows per forward pass (default 32)\n"
    "  --precision fp32|mixed  fp32 (reference) or the official mixed rounding\n"
    "  --threads N             OpenMP threads (the results do not depend on it)\n"
    "  --score-dump FILE       the score dump to write (required)\n"
    "  --probes N              also dump the full distribution at N positions\n"
    "                          spread over the split (default 8; 0 for none)\n"
    "  --probe-at P1,P2,...    probes at these increasing positions instead\n"
    "  --events FILE           write the SCORE/ADAPT event chain as\n"
    "                          {\"predicate\": {\"eval\": ...}} (for pgolf audit;\n"
    "                          default: the --score-dump path + .events.json)\n"
    "  --json                  print the result as JSON\n"
    "\n"
    "Exit codes: 0 ok, 2 usage or input error.\n";

typedef struct eval_args {
  const char *artifact, *data, *tokenizer, *mode, *seq_len, *stride, *chunk, *epochs, *lr;
  const char *momentum, *clip, *ttt_batch, *batch, *precision, *threads, *dump, *probes;
  const char *probe_at, *events;
  int json;
} eval_args;

static int usage_error(const char *msg, const char *what) {
  pg_die_msg("eval: %s%s (try `pgolf eval --help`)", msg, what ? what : "");
  return PG_EXIT_USAGE;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  char *end;
  if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno || v > max) return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double *out) {
  char *end;
  if (!s[0] || s[0] == ' ') return -1;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || errno || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static int parse_args(int argc, char **argv, eval_args *a) {
  const cli_value_opt opts[] = {{"--artifact", &a->artifact}, {"--data", &a->data},
              {"--tokenizer", &a->tokenizer}, {"--mode", &a->mode},
              {"--seq-len", &a->seq_len},   {"--stride", &a->stride},
              {"--chunk", &a->chunk},       {"--epochs", &a->epochs},
              {"--lr", &a->lr},             {"--momentum", &a->momentum},
              {"--clip", &a->clip},         {"--ttt-batch", &a->ttt_batch},
              {"--batch", &a->batch},       {"--precision", &a->precision},
              {"--threads", &a->threads},   {"--score-dump", &a->dump},
              {"--probes", &a->probes},     {"--probe-at", &a->probe_at},
              {"--events", &a->events}};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) {
      a->json = 1;
      continue;
    }
    const char *which = NULL;
    int r = cli_take_from_table(argc, argv, &i, opts, sizeof opts / sizeof opts[0], &which);
    if (r == CLI_NO_VALUE) return usage_error("missing value for ", which);
    if (r == CLI_TWICE) return usage_error("option given twice: ", which);
    if (r == CLI_UNKNOWN) return usage_error("unknown argument ", argv[i]);
  }
  if (!a->artifact) return usage_error("--artifact is required", NULL);
  if (!a->data) return usage_error("--data is required", NULL);
  if (!a->tokenizer) return usage_error("--tokenizer is required", NULL);
  if (!a->mode) return usage_error("--mode is required", NULL);
  if (!a->dump) return usage_error("--score-dump is required", NULL);
  return 0;
}

/* "P1,P2,..." into a fresh array. */
static int parse_positions(const char *s, uint64_t **out, size_t *n) {
  size_t cap = 1;
  for (const char *p = s; *p; p++) cap += *p == ',';
  if (cap > EVAL_MAX_PROBES) return -1;
  uint64_t *v = malloc(cap * sizeof *v);
  char *copy = strdup(s);
  if (!v || !copy) {
    free(v), free(copy);
    return -1;
  }
  size_t k = 0;
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (parse_u64(tok, UINT64_MAX, &v[k++])) {
      free(v), free(copy);
      return -1;
    }
  free(copy);
  if (k == 0) {
    free(v);
    return -1;
  }
  *out = v;
  *n = k;
  return 0;
}

/* Options over the mode's defaults. probe_at receives the parsed list. */
static int apply_options(const eval_args *a, const gpt_layout *l, eval_config *c,
                         uint64_t **probe_at) {
  eval_mode mode;
  if (eval_mode_parse(a->mode, &mode)) return usage_error("--mode wants plain, sliding or ttt: ", a->mode);
  uint64_t v;
  uint32_t T = (uint32_t)l->cfg.seq_len;
  if (a->seq_len) {
    if (parse_u64(a->seq_len, (uint64_t)l->cfg.seq_len, &v) || v == 0)
      return usage_error("--seq-len wants an integer in [1, the model's seq_len]: ", a->seq_len);
    T = (uint32_t)v;
  }
  eval_config_default(c, mode, T);
  struct {
    const char *val, *name;
    uint64_t lo, hi;
  } ints[] = {{a->stride, "--stride", 1, T},        {a->chunk, "--chunk", 1, UINT32_MAX},
              {a->epochs, "--epochs", 0, 1000},     {a->ttt_batch, "--ttt-batch", 1, 4096},
              {a->batch, "--batch", 1, 4096},       {a->probes, "--probes", 0, EVAL_MAX_PROBES},
              {a->threads, "--threads", 1, 1024}};
  uint64_t got[7] = {c->stride, c->chunk, (uint64_t)c->epochs, (uint64_t)c->ttt_batch_seqs,
                     (uint64_t)c->batch_seqs, c->n_probes, 0};
  for (int k = 0; k < 7; k++) {
    if (!ints[k].val) continue;
    if (parse_u64(ints[k].val, ints[k].hi, &got[k]) || got[k] < ints[k].lo) {
      char msg[96];
      snprintf(msg, sizeof msg, "%s wants an integer in [%llu, %llu]: ", ints[k].name,
               (unsigned long long)ints[k].lo, (unsigned long long)ints[k].hi);
      return usage_error(msg, ints[k].val);
    }
  }
  if (a->stride && mode == EVAL_MODE_PLAIN && got[0] != T)
    return usage_error("--stride: plain windows do not overlap; use --mode sliding", NULL);
  c->stride = (uint32_t)got[0];
  c->chunk = got[1];
  c->epochs = (int)got[2];
  c->ttt_batch_seqs = (int)got[3];
  c->batch_seqs = (int)got[4];
  c->n_probes = (uint32_t)got[5];
  if (got[6]) omp_set_num_threads((int)got[6]);
  struct {
    const char *val, *name;
    double *dst;
  } reals[] = {{a->lr, "--lr", &c->lr}, {a->momentum, "--momentum", &c->momentum},
               {a->clip, "--clip", &c->clip}};
  for (int k = 0; k < 3; k++)
    if (reals[k].val && parse_double(reals[k].val, reals[k].dst))
      return usage_error("not a finite number: ", reals[k].val);
  if (mode != EVAL_MODE_TTT && (a->chunk || a->epochs || a->lr || a->momentum || a->clip || a->ttt_batch))
    return usage_error("--chunk, --epochs, --lr, --momentum, --clip and --ttt-batch are for --mode ttt", NULL);
  if (a->precision) {
    if (!strcmp(a->precision, "fp32")) c->precision = GPT_FP32;
    else if (!strcmp(a->precision, "mixed")) c->precision = GPT_MIXED;
    else return usage_error("--precision wants fp32 or mixed: ", a->precision);
  }
  if (a->probe_at) {
    if (a->probes) return usage_error("--probes and --probe-at exclude each other", NULL);
    if (parse_positions(a->probe_at, probe_at, &c->n_probe_at))
      return usage_error("--probe-at wants increasing positions P1,P2,...: ", a->probe_at);
    c->probe_at = *probe_at;
  }
  return 0;
}

typedef struct eval_outcome {
  uint64_t tokens, bytes, adapt_steps;
  double nats, val_loss, val_bpb, seconds;
  char chain[SHA256_HEX_LEN + 1], dump_sha256[SHA256_HEX_LEN + 1];
  size_t events;
  char *event_log; /* where the log went (malloc'd) */
} eval_outcome;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The log: --events FILE, else beside the dump (DUMP.events.json), where
 * `pgolf audit DUMP` finds it without being told. It carries the dump's
 * digest and the val_bpb as printed (the audit's default claim). */
static int write_log(const eval_args *a, eval_session *s, eval_outcome *o, pg_error *err) {
  o->event_log = a->events ? strdup(a->events) : eval_events_default_path(a->dump);
  if (!o->event_log) return pg_fail(err, a->dump, -1, "out of memory");
  char claim[sizeof s->events.val_bpb];
  int n = snprintf(claim, sizeof claim, "%.8f", o->val_bpb);
  if (n > 0 && (size_t)n < sizeof claim && eval_claim_is_decimal(claim))
    memcpy(s->events.val_bpb, claim, sizeof claim);
  return eval_events_write(o->event_log, &s->events, err);
}

/* Evaluate, finish the dump, hash it into the log, write the log. */
static int run(const eval_args *a, const eval_config *c, const val_data *v, const byte_luts *luts,
               const gpt_layout *l, const float *flat, eval_outcome *o, pg_error *err) {
  eval_session s;
  if (val_data_bytes(v, luts, &o->bytes, err)) return -1;
  if (eval_session_open(&s, c, v, luts, l, flat, a->dump, err)) return -1;
  double t0 = now_seconds();
  int rc = eval_run_mode(&s, err);
  o->seconds = now_seconds() - t0;
  if (!rc) rc = eval_session_finish(&s, err);
  uint8_t d[SHA256_LEN];
  if (!rc) rc = sha256_file(a->dump, d, NULL, err);
  if (!rc) {
    memcpy(s.events.dump_sha256, d, SHA256_LEN);
    s.events.has_dump_sha256 = 1;
    sha256_hex(d, o->dump_sha256);
    sha256_hex(s.events.head, o->chain);
    o->events = s.events.n;
    o->tokens = s.tokens;
    o->nats = s.nats;
    o->adapt_steps = s.adapt_steps;
    o->val_loss = s.tokens ? s.nats / (double)s.tokens : 0.0;
    o->val_bpb = bpb_from_nats(s.nats, o->bytes);
    rc = write_log(a, &s, o, err);
  }
  eval_session_close(&s);
  return rc;
}

static void print_result(const eval_args *a, const eval_config *c, const eval_outcome *o) {
  uint64_t bits;
  memcpy(&bits, &o->nats, sizeof bits);
  if (!a->json) {
    printf("eval mode:%s seq_len:%u stride:%u tokens:%llu bytes:%llu val_loss:%.8f "
           "val_bpb:%.8f time:%.1fs\n",
           eval_mode_name(c->mode), c->seq_len, c->stride, (unsigned long long)o->tokens,
           (unsigned long long)o->bytes, o->val_loss, o->val_bpb, o->seconds);
    if (c->mode == EVAL_MODE_TTT)
      printf("ttt chunk:%llu epochs:%d lr:%g momentum:%g clip:%g steps:%llu\n",
             (unsigned long long)c->chunk, c->epochs, c->lr, c->momentum, c->clip,
             (unsigned long long)o->adapt_steps);
    printf("score_dump %s sha256:%s events:%zu chain:%s\n", a->dump, o->dump_sha256, o->events,
           o->chain);
    printf("event_log %s\n", o->event_log);
    return;
  }
  char hexbits[19];
  snprintf(hexbits, sizeof hexbits, "0x%016llx", (unsigned long long)bits);
  json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:s, s:f, s:f, s:f, s:s, s:s, s:s, s:I}",
                        "mode", eval_mode_name(c->mode), "seq_len", (json_int_t)c->seq_len,
                        "stride", (json_int_t)c->stride, "tokens", (json_int_t)o->tokens,
                        "bytes", (json_int_t)o->bytes, "nll_sum", o->nats, "nll_sum_bits",
                        hexbits, "val_loss", o->val_loss, "val_bpb", o->val_bpb, "seconds",
                        o->seconds, "score_dump", a->dump, "score_dump_sha256", o->dump_sha256,
                        "chain", o->chain, "events", (json_int_t)o->events);
  if (j) json_object_set_new(j, "event_log", json_string(o->event_log));
  if (j && c->mode == EVAL_MODE_TTT)
    json_object_set_new(j, "ttt",
                        json_pack("{s:I, s:i, s:f, s:f, s:f, s:i, s:I}", "chunk",
                                  (json_int_t)c->chunk, "epochs", c->epochs, "lr", c->lr,
                                  "momentum", c->momentum, "clip", c->clip, "batch_seqs",
                                  c->ttt_batch_seqs, "steps", (json_int_t)o->adapt_steps));
  char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
  if (text) puts(text);
  free(text);
  json_decref(j);
}

int cmd_eval(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return PG_EXIT_OK;
    }
  eval_args a = {0};
  if (parse_args(argc, argv, &a)) return PG_EXIT_USAGE;
  pg_error err;
  gpt_layout l;
  float *flat;
  if (eval_model_load(a.artifact, &l, &flat, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  int rc = PG_EXIT_USAGE;
  uint64_t *probe_at = NULL;
  eval_config c;
  sp_model m;
  byte_luts luts = {0};
  val_data v = {0};
  int have_luts = 0, have_val = 0;
  if (apply_options(&a, &l, &c, &probe_at)) goto done;
  if (sp_model_load(a.tokenizer, &m, &err)) goto fail;
  int lrc = luts_from_model(&m, (uint32_t)l.cfg.vocab_size, &luts, &err);
  sp_model_free(&m);
  if (lrc) goto fail;
  have_luts = 1;
  if (val_data_open(&v, a.data, "fineweb_val_", c.seq_len, (uint32_t)l.cfg.vocab_size, &err))
    goto fail;
  have_val = 1;
  eval_outcome o;
  memset(&o, 0, sizeof o);
  if (run(&a, &c, &v, &luts, &l, flat, &o, &err)) {
    free(o.event_log);
    goto fail;
  }
  print_result(&a, &c, &o);
  free(o.event_log);
  rc = PG_EXIT_OK;
  goto done;
fail:
  pg_error_print(&err);
done:
  if (have_val) val_data_close(&v);
  if (have_luts) luts_free(&luts);
  free(probe_at);
  free(flat);
  gpt_layout_free(&l);
  return rc;
}
