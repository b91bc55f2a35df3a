/* pgolf train: parse options into a run configuration, run it
 * (trainer/train.h), print a summary. Exit codes: 0 ok, 2 usage or input
 * error (a bad option, a bad configuration key or value, unreadable data),
 * 1 never (training has nothing to check). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/sha256.h"
#include "trainer/train.h"

static const char usage_text[] =
    "usage: pgolf train (--preset NAME | --config FILE | --resume DIR) [OPTIONS]\n"
    "\n"
    "Train the challenge's baseline GPT deterministically on the CPU and write\n"
    "DIR/manifest.json, DIR/model.int8.ptz, DIR/checkpoint and DIR/train.log.\n"
    "\n"
    "  --preset NAME           baseline (official defaults) or tiny\n"
    "  --config FILE           JSON configuration (keys: trainer/train_config.h);\n"
    "                          a \"preset\" key is applied first, other keys override\n"
    "  --seed N                seed (default 1337)\n"
    "  --steps N               iterations (the schedule's length)\n"
    "  --budget SECONDS        plan the step count from measured step time\n"
    "                          (recorded in the manifest); not with --steps\n"
    "  --threads N             OpenMP threads (the results do not depend on it)\n"
    "  --data DIR              directory of fineweb_train_*.bin / fineweb_val_*.bin\n"
    "  --tokenizer MODEL       SentencePiece .model (its vocabulary must match)\n"
    "  --precision fp32|mixed  fp32 (reference) or the official mixed rounding\n"
    "  --out DIR               output directory (default: the --resume DIR)\n"
    "  --checkpoint-every N    write DIR/checkpoint every N steps\n"
    "  --stop-after N          stop after step N, leaving a checkpoint (as if\n"
    "                          interrupted; continue with --resume)\n"
    "  --resume DIR            continue from DIR/checkpoint with its configuration\n"
    "                          (only --threads, --out, --checkpoint-every,\n"
    "                          --stop-after may be given with it)\n"
    "  --quiet                 no log lines on stdout, no progress line\n"
    "  --json                  print the result as JSON (implies --quiet)\n"
    "\n"
    "Exit codes: 0 ok, 2 usage or input error.\n";

typedef struct train_args {
  const char *preset, *config, *seed, *steps, *budget, *threads, *data, *tokenizer, *precision;
  const char *out, *ckpt_every, *stop_after, *resume;
  int quiet, json;
} train_args;

static int usage_error(const char *msg, const char *what) {
  pg_die_msg("train: %s%s (try `pgolf train --help`)", msg, what ? what : "");
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

static int parse_args(int argc, char **argv, train_args *a) {
  const cli_value_opt opts[] = {{"--preset", &a->preset},       {"--config", &a->config},
              {"--seed", &a->seed},           {"--steps", &a->steps},
              {"--budget", &a->budget},       {"--threads", &a->threads},
              {"--data", &a->data},           {"--tokenizer", &a->tokenizer},
              {"--precision", &a->precision}, {"--out", &a->out},
              {"--checkpoint-every", &a->ckpt_every}, {"--stop-after", &a->stop_after},
              {"--resume", &a->resume}};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quiet")) { a->quiet = 1; continue; }
    if (!strcmp(argv[i], "--json")) { a->json = a->quiet = 1; continue; }
    const char *which = NULL;
    int r = cli_take_from_table(argc, argv, &i, opts, sizeof opts / sizeof opts[0], &which);
    if (r == CLI_NO_VALUE) return usage_error("missing value for ", which);
    if (r == CLI_TWICE) return usage_error("option given twice: ", which);
    if (r == CLI_UNKNOWN) return usage_error("unknown argument ", argv[i]);
  }
  return 0;
}

/* ---- the configuration ---- */

static int set_path(char *dst, const char *v, const char *opt) {
  if (!v) return 0;
  if (!v[0] || strlen(v) >= TRAIN_PATH_MAX) return usage_error("bad path for ", opt);
  memcpy(dst, v, strlen(v) + 1);
  return 0;
}

/* Command-line values over the configuration, each range-checked as the
 * configuration key it sets. */
static int apply_overrides(const train_args *a, train_config *c) {
  uint64_t v;
  if (a->seed) {
    if (parse_u64(a->seed, INT64_MAX, &v)) return usage_error("--seed wants an integer in [0, 2^63): ", a->seed);
    c->seed = v;
  }
  if (a->steps) {
    if (parse_u64(a->steps, TRAIN_MAX_ITERATIONS, &v) || v == 0) return usage_error("--steps wants an integer in [1, 1000000]: ", a->steps);
    c->opt.iterations = (int64_t)v;
  }
  if (a->budget) {
    char *end;
    double b = strtod(a->budget, &end);
    if (*end || !a->budget[0] || !isfinite(b) || b <= 0 || b > 1e7)
      return usage_error("--budget wants seconds in (0, 1e7]: ", a->budget);
    c->budget_seconds = b;
  }
  if (a->threads) {
    if (parse_u64(a->threads, 1024, &v) || v == 0) return usage_error("--threads wants an integer in [1, 1024]: ", a->threads);
    c->threads = (int)v;
  }
  if (a->precision) {
    if (!strcmp(a->precision, "fp32")) c->precision = TRAIN_FP32;
    else if (!strcmp(a->precision, "mixed")) c->precision = TRAIN_MIXED;
    else return usage_error("--precision wants fp32 or mixed: ", a->precision);
  }
  if (set_path(c->data, a->data, "--data") || set_path(c->tokenizer, a->tokenizer, "--tokenizer")) return -1;
  return 0;
}

static int fresh_config(const train_args *a, train_config *c) {
  pg_error e;
  if (!a->preset && !a->config) return usage_error("give --preset NAME, --config FILE or --resume DIR", NULL);
  if (a->steps && a->budget) return usage_error("--steps and --budget exclude each other", NULL);
  if (!a->out) return usage_error("--out DIR is required", NULL);
  if (train_config_preset(a->preset ? a->preset : "baseline", c, &e) != 0) {
    pg_error_print(&e);
    return -1;
  }
  if (a->config && train_config_load(c, a->config, &e) != 0) {
    pg_error_print(&e);
    return -1;
  }
  if (apply_overrides(a, c) != 0) return -1;
  if (c->budget_seconds > 0 && a->steps) return usage_error("--steps and a budget exclude each other", NULL);
  if (train_config_check(c, &e) != 0) {
    pg_error_print(&e);
    return -1;
  }
  if (!c->data[0]) return usage_error("no data directory: give --data DIR (or \"data\" in the config)", NULL);
  if (!c->tokenizer[0]) return usage_error("no tokenizer: give --tokenizer MODEL (or \"tokenizer\" in the config)", NULL);
  return 0;
}

static int resume_config(const train_args *a, checkpoint *ck, char *path, size_t cap, train_config *c) {
  pg_error e;
  if (a->preset || a->config || a->seed || a->steps || a->budget || a->data || a->tokenizer || a->precision)
    return usage_error("--resume takes the configuration from the checkpoint; only --threads, --out, "
                       "--checkpoint-every and --stop-after may be given with it", NULL);
  if ((size_t)snprintf(path, cap, "%s/%s", a->resume, TRAIN_CHECKPOINT_NAME) >= cap)
    return usage_error("path too long: ", a->resume);
  if (ckpt_read(path, ck, &e) != 0 || train_checkpoint_config(ck, path, c, &e) != 0) {
    pg_error_print(&e);
    return -1;
  }
  c->threads = 0;
  return apply_overrides(a, c);
}

/* An optional positive step count (NULL leaves *out at 0). */
static int parse_positive(const char *s, const char *opt, int64_t *out) {
  uint64_t v;
  if (!s) return 0;
  if (parse_u64(s, TRAIN_MAX_ITERATIONS, &v) || v == 0) {
    pg_die_msg("train: %s wants an integer in [1, 1000000]: %s (try `pgolf train --help`)", opt, s);
    return -1;
  }
  *out = (int64_t)v;
  return 0;
}

/* ---- output ---- */

static void print_summary(const train_options *o, const train_result *r) {
  char head[SHA256_HEX_LEN + 1];
  sha256_hex(r->chain, head);
  if (!r->finished) {
    printf("train: stopped after step %lld; checkpoint %s/%s (continue with --resume %s)\n",
           (long long)r->steps, o->out_dir, TRAIN_CHECKPOINT_NAME, o->out_dir);
    printf("train: loss chain so far %s\n", head);
    return;
  }
  printf("train: %lld steps in %.1f s; final (int8+zlib round trip) val_loss %.6f val_bpb %.6f\n",
         (long long)r->steps, r->train_ms / 1e3, r->val_loss, r->val_bpb);
  printf("train: artifact %s/%s %llu bytes + code %llu bytes = %llu bytes (limit %lld)\n", o->out_dir,
         TRAIN_ARTIFACT_NAME, (unsigned long long)r->model_bytes, (unsigned long long)r->code_bytes,
         (unsigned long long)(r->model_bytes + r->code_bytes), CHALLENGE_SIZE_LIMIT_BYTES);
  printf("train: loss chain %s\ntrain: manifest %s/%s\n", head, o->out_dir, TRAIN_MANIFEST_NAME);
}

static void print_json(const train_options *o, const train_result *r) {
  char head[SHA256_HEX_LEN + 1], bits[16];
  sha256_hex(r->chain, head);
  snprintf(bits, sizeof bits, "0x%08x", r->last_loss_bits);
  json_t *j = json_pack("{s:b, s:I, s:s, s:s, s:f, s:s}", "finished", r->finished, "steps",
                        (json_int_t)r->steps, "chain", head, "last_loss_bits", bits, "train_ms",
                        r->train_ms, "out", o->out_dir);
  if (j && r->finished) {
    json_object_set_new(j, "val_loss", json_real(r->val_loss));
    json_object_set_new(j, "val_bpb", json_real(r->val_bpb));
    json_object_set_new(j, "model_bytes", json_integer((json_int_t)r->model_bytes));
    json_object_set_new(j, "code_bytes", json_integer((json_int_t)r->code_bytes));
  }
  char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
  if (text) printf("%s\n", text);
  free(text);
  json_decref(j);
}

int cmd_train(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return PG_EXIT_OK;
    }
  train_args a;
  memset(&a, 0, sizeof a);
  if (parse_args(argc, argv, &a) != 0) return PG_EXIT_USAGE;
  train_options o;
  memset(&o, 0, sizeof o);
  checkpoint ck = {0};
  char ckpath[TRAIN_PATH_MAX + 32];
  int rc = a.resume ? resume_config(&a, &ck, ckpath, sizeof ckpath, &o.cfg) : fresh_config(&a, &o.cfg);
  if (rc == 0) rc = parse_positive(a.ckpt_every, "--checkpoint-every", &o.checkpoint_every);
  if (rc == 0) rc = parse_positive(a.stop_after, "--stop-after", &o.stop_after);
  if (rc != 0) {
    ckpt_free(&ck);
    return PG_EXIT_USAGE;
  }
  o.out_dir = a.out ? a.out : a.resume;
  o.resume = a.resume ? &ck : NULL;
  o.resume_name = a.resume ? ckpath : NULL;
  o.echo = a.quiet ? NULL : stdout;
  o.quiet = a.quiet;
  train_result r;
  pg_error e;
  rc = train_run(&o, &r, &e);
  ckpt_free(&ck);
  if (rc != 0) {
    pg_error_print(&e);
    return PG_EXIT_USAGE;
  }
  if (a.json) print_json(&o, &r);
  else print_summary(&o, &r);
  return PG_EXIT_OK;
}
