/* pgolf eval: score the validation split with an artifact's model, score
 * first (trainer/eval_session.h), writing the score dump and the event
 * log the audit reads. Exit codes: 0 ok, 2 usage or input error. */
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
#include "kernels/cuda_common.h"
#include "trainer/eval_session.h"

static const char USAGE[] =
    "pgolf eval --artifact FILE --data DIR --tokenizer MODEL --mode MODE\n"
    "           --score-dump FILE [OPTIONS]";
static const char ABOUT[] =
    "Score every target of the validation split (DIR/fineweb_val_*.bin) exactly\n"
    "once, in order, and write one score-dump record per target.";
static const char FOOTER[] = "Exit codes: 0 ok, 2 usage or input error.";

/* Options as given. A number not given keeps a value the parser never
 * stores: epochs and probes -1, the doubles NaN, the others 0. */
typedef struct eval_args {
  const char *artifact, *data, *tokenizer, *mode, *precision, *dump, *probe_at, *events, *device;
  uint32_t seq_len, stride, chunk;
  int epochs, ttt_batch, batch, probes, threads;
  double lr, momentum, clip;
  int json;
} eval_args;

static int usage_error(const char *msg, const char *what) {
  pg_die_msg("eval: %s%s (try `pgolf eval --help`)", msg, what ? what : "");
  return PG_EXIT_USAGE;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  return cli_parse_u64(s, 0, max, out);
}

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err; also a missing
 * required option). */
static int parse_args(int argc, char **argv, eval_args *a, pg_error *err) {
  *a = (eval_args){.epochs = -1, .probes = -1, .lr = NAN, .momentum = NAN, .clip = NAN};
  const cli_option opts[] = {
      CLI_STRING("artifact", 0, &a->artifact, "FILE", "the model (model.int8.ptz of pgolf train)"),
      CLI_STRING("data", 0, &a->data, "DIR", "directory of fineweb_val_*.bin"),
      CLI_STRING("tokenizer", 0, &a->tokenizer, "MODEL", "SentencePiece .model (byte tables)"),
      CLI_STRING("mode", 0, &a->mode, "plain|sliding|ttt",
                 "plain: windows of seq_len, no overlap (the\n"
                 "official metric); sliding: up to seq_len tokens of\n"
                 "context, windows every --stride; ttt: chunks of\n"
                 "--chunk positions, each scored (sliding) and only\n"
                 "then trained on (score-first test-time training)"),
      CLI_UNSIGNED("seq-len", 0, &a->seq_len, "L", 1, UINT32_MAX,
                   "window length (default: the model's)"),
      CLI_UNSIGNED("stride", 0, &a->stride, "S", 1, UINT32_MAX,
                   "sliding/ttt window stride (default min(64, L))"),
      CLI_UNSIGNED("chunk", 0, &a->chunk, "C", 1, UINT32_MAX,
                   "ttt: positions per chunk (default 32768)"),
      CLI_INT("epochs", 0, &a->epochs, "E", 0, 1000, "ttt: epochs per chunk (default 3)"),
      CLI_DOUBLE("lr", 0, &a->lr, "X", "ttt: SGD learning rate, cosine across chunks (0.002)"),
      CLI_DOUBLE("momentum", 0, &a->momentum, "M", "ttt: SGD momentum (default 0.9)"),
      CLI_DOUBLE("clip", 0, &a->clip, "G", "ttt: gradient clip norm, 0 for none (default 1.0)"),
      CLI_UNSIGNED("ttt-batch", 0, &a->ttt_batch, "N", 1, 4096,
                   "ttt: sequences per SGD step (default 32)"),
      CLI_UNSIGNED("batch", 0, &a->batch, "N", 1, 4096, "windows per forward pass (default 32)"),
      CLI_STRING("precision", 0, &a->precision, "fp32|mixed",
                 "fp32 (reference) or the official mixed rounding"),
      CLI_STRING("device", 0, &a->device, "cpu|cuda",
                 "where the forward passes and the test-time\n"
                 "training run (default cpu); cuda: GPU 0 of those\n"
                 "visible, exit 2 where there is none"),
      CLI_UNSIGNED("threads", 0, &a->threads, "N", 1, 1024,
                   "OpenMP threads (the results do not depend on it)"),
      CLI_STRING("score-dump", 0, &a->dump, "FILE", "the score dump to write (required)"),
      CLI_INT("probes", 0, &a->probes, "N", 0, EVAL_MAX_PROBES,
              "also dump the full distribution at N positions\n"
              "spread over the split (default 8; 0 for none)"),
      CLI_STRING("probe-at", 0, &a->probe_at, "P1,P2,...",
                 "probes at these increasing positions instead"),
      CLI_STRING("events", 0, &a->events, "FILE",
                 "write the SCORE/ADAPT event chain as\n"
                 "{\"predicate\": {\"eval\": ...}} (for pgolf audit;\n"
                 "default: the --score-dump path + .events.json)"),
      CLI_FLAG("json", 0, &a->json, "print the result as JSON"),
      CLI_END};
  const cli_command cmd = {.name = "eval",
                           .usage = USAGE,
                           .about = ABOUT,
                           .options = opts,
                           .footer = FOOTER,
                           .flags = CLI_ONCE};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  const struct {
    const char *value, *what;
  } required[] = {{a->artifact, "--artifact"},
                  {a->data, "--data"},
                  {a->tokenizer, "--tokenizer"},
                  {a->mode, "--mode"},
                  {a->dump, "--score-dump"}};
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!required[i].value) return cli_fail(err, &cmd, "%s is required", required[i].what);
  return CLI_OK;
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

/* Options over the mode's defaults; the parser has checked the ranges
 * that do not depend on the model. probe_at receives the parsed list. */
static int apply_options(const eval_args *a, const gpt_layout *l, eval_config *c,
                         uint64_t **probe_at) {
  eval_mode mode;
  if (eval_mode_parse(a->mode, &mode))
    return usage_error("--mode wants plain, sliding or ttt: ", a->mode);
  uint32_t T = (uint32_t)l->cfg.seq_len;
  char v[32];
  if (a->seq_len) {
    snprintf(v, sizeof v, "%u", a->seq_len);
    if (a->seq_len > T)
      return usage_error("--seq-len wants an integer in [1, the model's seq_len]: ", v);
    T = a->seq_len;
  }
  eval_config_default(c, mode, T);
  if (a->stride) {
    char msg[64];
    snprintf(v, sizeof v, "%u", a->stride);
    snprintf(msg, sizeof msg, "--stride wants an integer in [1, %u]: ", T);
    if (a->stride > T) return usage_error(msg, v);
    if (mode == EVAL_MODE_PLAIN && a->stride != T)
      return usage_error("--stride: plain windows do not overlap; use --mode sliding", NULL);
    c->stride = a->stride;
  }
  if (a->chunk) c->chunk = a->chunk;
  if (a->epochs >= 0) c->epochs = a->epochs;
  if (a->ttt_batch) c->ttt_batch_seqs = a->ttt_batch;
  if (a->batch) c->batch_seqs = a->batch;
  if (a->probes >= 0) c->n_probes = (uint32_t)a->probes; /* else the default, 8 */
  if (a->threads) omp_set_num_threads(a->threads);
  if (!isnan(a->lr)) c->lr = a->lr;
  if (!isnan(a->momentum)) c->momentum = a->momentum;
  if (!isnan(a->clip)) c->clip = a->clip;
  int ttt_only = a->chunk || a->epochs >= 0 || !isnan(a->lr) || !isnan(a->momentum) ||
                 !isnan(a->clip) || a->ttt_batch;
  if (mode != EVAL_MODE_TTT && ttt_only)
    return usage_error("--chunk, --epochs, --lr, --momentum, --clip and --ttt-batch are for --mode ttt", NULL);
  if (a->precision) {
    if (!strcmp(a->precision, "fp32")) c->precision = GPT_FP32;
    else if (!strcmp(a->precision, "mixed")) c->precision = GPT_MIXED;
    else return usage_error("--precision wants fp32 or mixed: ", a->precision);
  }
  c->device_cuda = a->device && !strcmp(a->device, "cuda"); /* checked by check_device */
  /* Test-only (README): the CPU sums by the GPU's trees, so a CUDA
   * evaluation's dump can be required to equal this one where the
   * products agree (as pgolf train reads it). */
  const char *trees = getenv("PGOLF_TEST_GPU_TREES");
  c->gpu_trees = !c->device_cuda && trees && !strcmp(trees, "1");
  if (a->probe_at) {
    if (a->probes >= 0) return usage_error("--probes and --probe-at exclude each other", NULL);
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
  json_t *device;  /* on the GPU: eval_gpu_json; else NULL */
  char device_line[512];
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
    if (s.gpu) {
      o->device = eval_gpu_json(s.gpu);
      eval_gpu_describe(s.gpu, o->device_line, sizeof o->device_line);
    }
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
    if (o->device) printf("%s\n", o->device_line);
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
  if (j) json_object_set_new(j, "device", o->device ? json_incref(o->device) : json_string("cpu"));
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

/* --device: cpu, or cuda where a GPU is usable (exit 2 with the runtime's
 * reason, or the build's, where none is), before anything is read. */
static int check_device(const eval_args *a) {
  if (!a->device || !strcmp(a->device, "cpu")) return 0;
  if (strcmp(a->device, "cuda") != 0) return usage_error("--device wants cpu or cuda: ", a->device);
  int n;
  pg_error e;
  if (cuda_device_count(&n, &e) != 0) {
    pg_die_msg("eval: --device cuda: %s", e.msg);
    return PG_EXIT_USAGE;
  }
  return 0;
}

int cmd_eval(int argc, char **argv) {
  eval_args a;
  pg_error err;
  int pr = parse_args(argc, argv, &a, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (check_device(&a)) return PG_EXIT_USAGE;
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
    json_decref(o.device);
    goto fail;
  }
  print_result(&a, &c, &o);
  free(o.event_log);
  json_decref(o.device);
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
