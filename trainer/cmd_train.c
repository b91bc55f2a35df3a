/* pgolf train: parse options into a run configuration, run it
 * (trainer/train.h), print a summary. Exit codes: 0 ok, 2 usage or input
 * error (a bad option, a bad configuration key or value, unreadable data),
 * 1 never (training has nothing to check). */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/sha256.h"
#include "common/version.h"
#include "kernels/cuda_common.h"
#include "trainer/train.h"

static const char USAGE[] = "pgolf train (--preset NAME | --config FILE | --resume DIR) [OPTIONS]";
static const char ABOUT[] =
    "Train the challenge's baseline GPT deterministically on the CPU (or on\n"
    "GPUs, --device cuda) and write DIR/manifest.json, DIR/model.int8.ptz,\n"
    "DIR/checkpoint and DIR/train.log.";
static const char FOOTER[] = "Exit codes: 0 ok, 2 usage or input error.";

/* Options as given. A number not given keeps a value the parser never
 * stores: seed UINT64_MAX, budget NaN, the others 0. */
typedef struct train_args {
  const char *preset, *config, *data, *tokenizer, *precision, *out, *resume, *device;
  uint64_t seed;
  int64_t steps, ckpt_every, stop_after;
  int threads, world, gpus;
  double budget, comm_timeout;
  int quiet, json;
} train_args;

static int usage_error(const char *msg, const char *what) {
  pg_die_msg("train: %s%s (try `pgolf train --help`)", msg, what ? what : "");
  return PG_EXIT_USAGE;
}

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_args(int argc, char **argv, train_args *a, pg_error *err) {
  *a = (train_args){.seed = UINT64_MAX, .budget = NAN, .comm_timeout = COMM_DEFAULT_TIMEOUT_S};
  const cli_option opts[] = {
      CLI_STRING("preset", 0, &a->preset, "NAME", "baseline (official defaults) or tiny"),
      CLI_STRING("config", 0, &a->config, "FILE",
                 "JSON configuration (keys: trainer/train_config.h);\n"
                 "a \"preset\" key is applied first, other keys override"),
      CLI_UNSIGNED("seed", 0, &a->seed, "N", 0, INT64_MAX, "seed (default 1337)"),
      CLI_UNSIGNED("steps", 0, &a->steps, "N", 1, TRAIN_MAX_ITERATIONS,
                   "iterations (the schedule's length)"),
      CLI_DOUBLE("budget", 0, &a->budget, "SECONDS",
                 "plan the step count from measured step time\n"
                 "(recorded in the manifest); not with --steps"),
      CLI_UNSIGNED("threads", 0, &a->threads, "N", 1, 1024,
                   "OpenMP threads (the results do not depend on it)"),
      CLI_UNSIGNED("world", 0, &a->world, "N", 1, TRAIN_MAX_WORLD,
                   "the official world size (1, 2, 4, 8): its data\n"
                   "partition, grad_accum_steps = 8 / N and the gradient\n"
                   "average; run by this process, or split over the\n"
                   "processes of `mpirun -np P` (P divides N)"),
      CLI_STRING("device", 0, &a->device, "cpu|cuda",
                 "cpu (default); cuda: the steps on the GPU, one per\n"
                 "process (under mpirun: the process's place on its\n"
                 "node; exit 2, naming why, where none is usable)"),
      CLI_UNSIGNED("gpus", 0, &a->gpus, "N", 1, TRAIN_MAX_WORLD,
                   "with --device cuda: GPUs of this node to train on,\n"
                   "one process each, started under Open MPI's mpirun\n"
                   "(N > 1); the world size is N unless --world is given"),
      CLI_DOUBLE("comm-timeout", 0, &a->comm_timeout, "SECONDS",
                 "under mpirun: a process waiting this long for\n"
                 "another names it and stops the run (default 60)"),
      CLI_STRING("data", 0, &a->data, "DIR",
                 "directory of fineweb_train_*.bin / fineweb_val_*.bin"),
      CLI_STRING("tokenizer", 0, &a->tokenizer, "MODEL",
                 "SentencePiece .model (its vocabulary must match)"),
      CLI_STRING("precision", 0, &a->precision, "fp32|mixed",
                 "fp32 (reference) or the official mixed rounding"),
      CLI_STRING("out", 0, &a->out, "DIR", "output directory (default: the --resume DIR)"),
      CLI_UNSIGNED("checkpoint-every", 0, &a->ckpt_every, "N", 1, TRAIN_MAX_ITERATIONS,
                   "write DIR/checkpoint every N steps"),
      CLI_UNSIGNED("stop-after", 0, &a->stop_after, "N", 1, TRAIN_MAX_ITERATIONS,
                   "stop after step N, leaving a checkpoint (as if\n"
                   "interrupted; continue with --resume)"),
      CLI_STRING("resume", 0, &a->resume, "DIR",
                 "continue from DIR/checkpoint with its configuration\n"
                 "(only --threads, --out, --checkpoint-every,\n"
                 "--stop-after, --comm-timeout may be given with it;\n"
                 "under mpirun any process count dividing its world)"),
      CLI_FLAG("quiet", 0, &a->quiet, "no log lines on stdout, no progress line"),
      CLI_FLAG("json", 0, &a->json, "print the result as JSON (implies --quiet)"),
      CLI_END};
  const cli_command cmd = {.name = "train",
                           .usage = USAGE,
                           .about = ABOUT,
                           .options = opts,
                           .footer = FOOTER,
                           .flags = CLI_ONCE};
  int r = cli_parse(&cmd, argc, argv, err);
  if (a->json) a->quiet = 1;
  return r;
}

/* ---- the configuration ---- */

static int set_path(char *dst, const char *v, const char *opt) {
  if (!v) return 0;
  if (!v[0] || strlen(v) >= TRAIN_PATH_MAX) return usage_error("bad path for ", opt);
  memcpy(dst, v, strlen(v) + 1);
  return 0;
}

/* Command-line values over the configuration (the parser has checked
 * their ranges, those of the configuration keys they set). */
static int apply_overrides(const train_args *a, train_config *c) {
  if (a->seed != UINT64_MAX) c->seed = a->seed;
  if (a->steps) c->opt.iterations = a->steps;
  if (!isnan(a->budget)) {
    if (!(a->budget > 0 && a->budget <= 1e7)) {
      char v[32];
      snprintf(v, sizeof v, "%g", a->budget);
      return usage_error("--budget wants seconds in (0, 1e7]: ", v);
    }
    c->budget_seconds = a->budget;
  }
  if (a->threads) c->threads = a->threads;
  /* --gpus N is world N unless --world says otherwise (a resumed run
   * keeps its checkpoint's). */
  int world = a->world;
  if (!world && a->gpus > 1 && !a->resume) world = a->gpus;
  if (world) {
    if (TRAIN_MAX_WORLD % world != 0) {
      char v[16];
      snprintf(v, sizeof v, "%d", world);
      return usage_error(a->world ? "--world wants 1, 2, 4 or 8: "
                                  : "--gpus (the world size) wants 1, 2, 4 or 8: ",
                         v);
    }
    c->world_size = world;
    c->grad_accum_steps = TRAIN_MAX_WORLD / world; /* the official 8 // world_size */
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
  if (a->steps && !isnan(a->budget))
    return usage_error("--steps and --budget exclude each other", NULL);
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
  if (a->preset || a->config || a->seed != UINT64_MAX || a->steps || !isnan(a->budget) || a->data ||
      a->tokenizer || a->precision || a->world)
    return usage_error("--resume takes the configuration from the checkpoint; only --threads, --out, "
                       "--checkpoint-every, --stop-after and --comm-timeout may be given with it", NULL);
  if ((size_t)snprintf(path, cap, "%s/%s", a->resume, TRAIN_CHECKPOINT_NAME) >= cap)
    return usage_error("path too long: ", a->resume);
  if (ckpt_read(path, ck, &e) != 0 || train_checkpoint_config(ck, path, c, &e) != 0) {
    pg_error_print(&e);
    return -1;
  }
  c->threads = 0;
  return apply_overrides(a, c);
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

static void print_json(const train_options *o, const train_result *r, const comm *c) {
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
  if (j) {
    json_object_set_new(j, "world_size", json_integer(o->cfg.world_size));
    json_object_set_new(j, "processes", json_integer(c->size));
    json_object_set_new(j, "exchange_ms", json_real(r->comm_ms));
  }
  char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
  if (text) printf("%s\n", text);
  free(text);
  json_decref(j);
}

/* --device: cpu, or cuda where a GPU is usable (exit 2 with the runtime's
 * reason where none is); --gpus N needs N of them on this node. */
static int check_device(const train_args *a) {
  if (!a->device || !strcmp(a->device, "cpu")) {
    if (a->gpus) return usage_error("--gpus needs --device cuda", NULL);
    return 0;
  }
  if (strcmp(a->device, "cuda") != 0) return usage_error("--device wants cpu or cuda: ", a->device);
  int n = 0;
  pg_error e;
  if (cuda_device_count(&n, &e) != 0) {
    pg_die_msg("train: --device cuda: %s", e.msg);
    return -1;
  }
  if (a->gpus > n) {
    pg_die_msg("train: --gpus %d, but %d CUDA device%s usable", a->gpus, n, n == 1 ? " is" : "s are");
    return -1;
  }
  return 0;
}

/* The full path of the first executable NAME on PATH into buf; -1 if none. */
static int find_on_path(const char *name, char *buf, size_t cap) {
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t len = strcspn(path, ":");
    if (len > 0 && (size_t)snprintf(buf, cap, "%.*s/%s", (int)len, path, name) < cap &&
        access(buf, X_OK) == 0)
      return 0;
    path += len + (path[len] == ':');
  }
  return -1;
}

/* The configuration as each process will read it, checked once before
 * they start (so a bad one is reported once), and the world it names
 * split over --gpus processes. 0, or the usage error printed. */
static int check_config(const train_args *a) {
  train_config c;
  checkpoint ck = {0};
  char path[TRAIN_PATH_MAX + 32];
  int rc = a->resume ? resume_config(a, &ck, path, sizeof path, &c) : fresh_config(a, &c);
  ckpt_free(&ck);
  if (rc != 0) return -1;
  if (c.world_size % a->gpus != 0) {
    pg_die_msg("train: --gpus %d does not divide the world size %d (each GPU runs W / gpus ranks)",
               a->gpus, c.world_size);
    return -1;
  }
  return 0;
}

/* --gpus N above 1 outside mpirun: this pgolf, with the same arguments,
 * as N processes under Open MPI's mpirun (each takes the GPU of its place
 * on the node), which this process becomes, so its exit status is the
 * run's. Binding is off (the CPU side, validation and export, wants every
 * core), and as root mpirun is told it may run. Returns only when it
 * cannot start: exit 2, naming why. */
static int start_processes(const train_args *a, int argc, char **argv) {
  char mpirun[PATH_MAX], exe[PATH_MAX], np[16];
  if (check_config(a) != 0) return PG_EXIT_USAGE;
  if (!pgolf_has_mpi()) {
    pg_die_msg(
        "train: --gpus %d runs one process per GPU over MPI, but this pgolf was built without it "
        "(install libopenmpi-dev and rebuild)",
        a->gpus);
    return PG_EXIT_USAGE;
  }
  if (find_on_path("mpirun", mpirun, sizeof mpirun) != 0) {
    pg_die_msg(
        "train: --gpus %d starts its processes with Open MPI's mpirun, which is not on PATH "
        "(Debian: openmpi-bin)",
        a->gpus);
    return PG_EXIT_USAGE;
  }
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) {
    pg_die_msg("train: --gpus %d: cannot find this pgolf's own path (/proc/self/exe)", a->gpus);
    return PG_EXIT_USAGE;
  }
  exe[len] = 0;
  snprintf(np, sizeof np, "%d", a->gpus);
  char **args = calloc((size_t)argc + 9, sizeof *args);
  if (!args) return PG_EXIT_USAGE;
  int k = 0;
  args[k++] = mpirun, args[k++] = "-np", args[k++] = np, args[k++] = "--bind-to",
  args[k++] = "none";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  args[k++] = exe;
  for (int i = 0; i < argc; i++) args[k++] = argv[i]; /* "train" and the options */
  fflush(stdout);
  fflush(stderr);
  execv(mpirun, args);
  pg_die_msg("train: --gpus %d: cannot start %s: %s", a->gpus, mpirun, strerror(errno));
  free(args);
  return PG_EXIT_USAGE;
}

/* Train with the processes in c; process 0 alone prints. */
static int run(const train_args *a, comm *c) {
  train_options o;
  memset(&o, 0, sizeof o);
  checkpoint ck = {0};
  char ckpath[TRAIN_PATH_MAX + 32];
  int rc = a->resume ? resume_config(a, &ck, ckpath, sizeof ckpath, &o.cfg) : fresh_config(a, &o.cfg);
  o.checkpoint_every = a->ckpt_every;
  o.stop_after = a->stop_after;
  if (rc != 0) {
    ckpt_free(&ck);
    return PG_EXIT_USAGE;
  }
  int root = c->rank == 0;
  o.out_dir = a->out ? a->out : a->resume;
  o.resume = a->resume ? &ck : NULL;
  o.resume_name = a->resume ? ckpath : NULL;
  o.echo = a->quiet || !root ? NULL : stdout;
  o.quiet = a->quiet || !root;
  o.comm = c;
  o.device_cuda = a->device && !strcmp(a->device, "cuda");
  train_result r;
  pg_error e;
  rc = train_run(&o, &r, &e);
  ckpt_free(&ck);
  if (rc != 0) {
    pg_error_print(&e);
    return PG_EXIT_USAGE;
  }
  if (!root) return PG_EXIT_OK;
  if (a->json) print_json(&o, &r, c);
  else print_summary(&o, &r);
  return PG_EXIT_OK;
}

int cmd_train(int argc, char **argv) {
  train_args a;
  pg_error err;
  int pr = parse_args(argc, argv, &a, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (!(a.comm_timeout > 0 && a.comm_timeout <= 86400)) {
    char v[32];
    snprintf(v, sizeof v, "%g", a.comm_timeout);
    return usage_error("--comm-timeout wants seconds in (0, 86400]: ", v);
  }
  if (check_device(&a) != 0) return PG_EXIT_USAGE;
  if (a.gpus > 1 && !getenv("OMPI_COMM_WORLD_SIZE")) return start_processes(&a, argc, argv);
  comm c;
  if (comm_init(&c, a.comm_timeout, &err) != 0) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (a.gpus && a.gpus != c.size) {
    /* Every process says so; none waits for another. */
    pg_die_msg("train: --gpus %d, but %d process%s started (under mpirun, --gpus must equal -np)",
               a.gpus, c.size, c.size == 1 ? " was" : "es were");
    comm_finalize(&c);
    return PG_EXIT_USAGE;
  }
  int rc = run(&a, &c);
  /* A failed process stops the others at once rather than letting them
   * wait out the timeout. */
  if (rc != PG_EXIT_OK && c.size > 1) comm_abort(&c, rc);
  comm_finalize(&c);
  return rc;
}
