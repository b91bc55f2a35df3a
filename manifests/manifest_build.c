/* Building a run manifest from the files a run used. */
#include <jansson.h>
#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/fileio.h"
#include "common/grow.h"
#include "common/version.h"
#include "common/hash_pool.h"
#include "common/json_read.h"
#include "manifests/loss_chain.h"
#include "manifests/loss_file.h"
#include "manifests/manifest.h"
#include "formats/shard.h"
#include "formats/tokenizer.h"

#define CONFIG_MAX_BYTES ((size_t)16 << 20)

/* Every file the manifest names, gathered before anything is hashed so
 * the hash pool can take them all at once. */
typedef struct file_set {
  char **shards;
  size_t n_shards, cap;
  uint64_t *tokens;
} file_set;

static void file_set_free(file_set *fs) {
  shard_paths_free(fs->shards, fs->n_shards);
  free(fs->tokens);
  memset(fs, 0, sizeof *fs);
}

static int add_shard(file_set *fs, const char *path, pg_error *err) {
  if (PG_GROW(fs->shards, fs->cap, fs->n_shards + 1, 16))
    return pg_fail(err, path, -1, "out of memory");
  if (fs->n_shards == MANIFEST_MAX_SHARDS)
    return pg_fail(err, path, -1, "more than %d shards", MANIFEST_MAX_SHARDS);
  if (!(fs->shards[fs->n_shards] = strdup(path))) return pg_fail(err, path, -1, "out of memory");
  fs->n_shards++;
  return 0;
}

/* A directory contributes its train and validation shards (either may be
 * absent, not both). */
static int add_dir(file_set *fs, const char *dir, pg_error *err) {
  static const char *prefixes[] = {"fineweb_train_", "fineweb_val_"};
  size_t found = 0;
  for (int k = 0; k < 2; k++) {
    char **paths = NULL;
    size_t n = 0;
    pg_error ignore;
    if (shard_glob(dir, prefixes[k], &paths, &n, &ignore) != 0) continue;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) rc = add_shard(fs, paths[i], err);
    shard_paths_free(paths, n);
    if (rc != 0) return -1;
    found += n;
  }
  if (!found)
    return pg_fail(err, dir, -1, "no fineweb_train_*.bin or fineweb_val_*.bin shards in this directory");
  return 0;
}

static int collect_shards(const manifest_inputs *in, file_set *fs, pg_error *err) {
  for (size_t i = 0; i < in->n_data; i++) {
    struct stat st;
    const char *p = in->data_paths[i];
    if (stat(p, &st) != 0) return pg_fail_errno(err, p, "cannot stat");
    int rc = S_ISDIR(st.st_mode) ? add_dir(fs, p, err) : add_shard(fs, p, err);
    if (rc != 0) return -1;
  }
  if (fs->n_shards == 0) return pg_fail(err, "", -1, "no data shards given");
  return 0;
}

/* Open every shard fully (header, size, token ids below vocab) so a
 * manifest never vouches for a shard the loader would refuse. */
static int validate_shards(file_set *fs, uint32_t vocab, pg_error *err) {
  fs->tokens = calloc(fs->n_shards, sizeof *fs->tokens);
  if (!fs->tokens) return pg_fail(err, "", -1, "out of memory");
  for (size_t i = 0; i < fs->n_shards; i++) {
    shard s;
    if (shard_open(fs->shards[i], vocab, &s, err) != 0) return -1;
    fs->tokens[i] = s.n_tokens;
    shard_close(&s);
  }
  return 0;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static const char *split_of(const char *name) {
  if (strncmp(name, "fineweb_train_", 14) == 0) return "train";
  if (strncmp(name, "fineweb_val_", 12) == 0) return "val";
  return "other";
}

static json_t *hex_str(const uint8_t d[SHA256_LEN]) {
  char hex[SHA256_HEX_LEN + 1];
  sha256_hex(d, hex);
  return json_string(hex);
}

static json_t *bits_str(uint32_t bits) {
  char b[16];
  snprintf(b, sizeof b, "0x%08x", bits);
  return json_string(b);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- environment ---- */

static json_t *cpu_model(void) {
  uint8_t *buf = NULL;
  size_t len = 0;
  pg_error ignore;
  if (file_read_all("/proc/cpuinfo", (size_t)16 << 20, &buf, &len, &ignore) != 0) return json_null();
  json_t *r = NULL;
  for (char *line = strtok((char *)buf, "\n"); line && !r; line = strtok(NULL, "\n")) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    r = json_string(colon); /* NULL (so null below) if not UTF-8 */
  }
  free(buf);
  return r ? r : json_null();
}

static json_t *kernel_desc(void) {
  struct utsname u;
  if (uname(&u) != 0) return json_null();
  char buf[4 * sizeof u.release + 8];
  snprintf(buf, sizeof buf, "%s %s %s %s", u.sysname, u.release, u.version, u.machine);
  json_t *s = json_string(buf);
  return s ? s : json_null();
}

static json_t *environment(unsigned threads) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  return json_pack("{s:o, s:I, s:I, s:i, s:s, s:s, s:o, s:n, s:n, s:n, s:n, s:n, s:n}",
                   "cpu_model", cpu_model(), "online_cpus", (json_int_t)cpus, "threads",
                   (json_int_t)(threads ? threads : (unsigned)cpus), "world_size", 1, "openssl",
                   OpenSSL_version(OPENSSL_VERSION), "jansson", jansson_version_str(), "kernel",
                   kernel_desc(), "gpu", "gpu_sm_count", "gpu_driver", "cuda_version", "cublaslt_version",
                   "nccl_version");
}

static json_t *code_identity(const hash_result *bin) {
  return json_pack("{s:s, s:s, s:s, s:b, s:o}", "pgolf_version", PGOLF_VERSION, "source_digest",
                   pgolf_source_digest(), "compiler", pgolf_compiler(), "cuda", pgolf_has_cuda(),
                   "binary_sha256", bin->failed ? json_null() : hex_str(bin->digest));
}

/* ---- data, losses, artifact ---- */

static json_t *data_json(const manifest_inputs *in, const manifest_extras *x, uint32_t vocab, const file_set *fs,
                         const hash_result *h) {
  json_t *shards = json_array();
  for (size_t i = 0; shards && i < fs->n_shards; i++) {
    const char *name = base_name(fs->shards[i]);
    json_array_append_new(shards, json_pack("{s:s, s:s, s:s, s:I, s:o}", "name", name, "path",
                                            fs->shards[i], "split", split_of(name), "tokens",
                                            (json_int_t)fs->tokens[i], "sha256",
                                            hex_str(h[1 + i].digest)));
  }
  return json_pack("{s:{s:s, s:o, s:I}, s:o, s:o}", "tokenizer", "path", in->tokenizer_path,
                   "sha256", hex_str(h[0].digest), "vocab_size", (json_int_t)vocab, "shards",
                   shards, "tokens_consumed",
                   x->tokens_consumed > 0 ? json_integer((json_int_t)x->tokens_consumed) : json_null());
}

/* Steps with their chain links; *head is the last link (c0 if none). */
static json_t *losses_json(const loss_list *l, uint8_t head[SHA256_LEN]) {
  json_t *steps = json_array();
  loss_chain_init(head);
  for (size_t i = 0; steps && i < l->n; i++) {
    const loss_record *r = &l->recs[i];
    loss_chain_extend(head, r->step, r->loss_bits);
    json_t *o = json_object();
    json_object_set_new(o, "step", json_integer((json_int_t)r->step));
    json_object_set_new(o, "loss_bits", bits_str(r->loss_bits));
    if (r->has_lr_mult) json_object_set_new(o, "lr_mult_bits", bits_str(r->lr_mult_bits));
    if (r->has_wall_ms) json_object_set_new(o, "wall_ms", json_real(r->wall_ms));
    json_object_set_new(o, "chain", hex_str(head));
    json_array_append_new(steps, o);
  }
  return json_pack("{s:o, s:o}", "chain", hex_str(head), "steps", steps);
}

/* obj with every key of extra added (extra borrowed; NULL adds nothing). */
static json_t *merged(json_t *obj, json_t *extra) {
  if (obj && extra) json_object_update(obj, extra);
  return obj;
}

/* With code_bytes, the challenge's accounting: code + compressed model
 * bytes against the decimal limit, and how code was counted. */
static json_t *artifact_json(const manifest_inputs *in, const manifest_extras *x, const hash_result *h) {
  if (!in->artifact_path) return json_null();
  json_t *a = json_pack("{s:s, s:s, s:I, s:o}", "name", base_name(in->artifact_path), "path",
                        in->artifact_path, "bytes", (json_int_t)h->size, "sha256", hex_str(h->digest));
  if (a && x->code_bytes > 0) {
    json_object_set_new(a, "code_bytes", json_integer((json_int_t)x->code_bytes));
    json_object_set_new(a, "model_bytes", json_integer((json_int_t)h->size));
    json_object_set_new(a, "total_bytes", json_integer((json_int_t)(h->size + (uint64_t)x->code_bytes)));
    json_object_set_new(a, "limit_bytes", json_integer(CHALLENGE_SIZE_LIMIT_BYTES));
    json_object_set_new(a, "code_rule", x->code_rule ? json_string(x->code_rule) : json_null());
  }
  return merged(a, x->artifact_extra);
}


static json_t *subjects_json(const char *artifact, const hash_result *h, const uint8_t head[SHA256_LEN]) {
  json_t *a = json_array();
  if (artifact)
    json_array_append_new(a, json_pack("{s:s, s:{s:o}}", "name", base_name(artifact), "digest",
                                       "sha256", hex_str(h->digest)));
  json_array_append_new(a, json_pack("{s:s, s:{s:o}}", "name", MANIFEST_CHAIN_SUBJECT, "digest",
                                     "sha256", hex_str(head)));
  return a;
}

static json_t *timing_json(const manifest_extras *x, double t0, double hash_ms) {
  char utc[32] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm)) strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return merged(json_pack("{s:s, s:f, s:f}", "created_utc", utc, "hash_ms", hash_ms, "create_ms",
                          now_ms() - t0),
                x->timing);
}

/* ---- assembling ---- */

/* Everything read from the inputs before the JSON is put together. */
typedef struct gathered {
  json_t *config;
  uint32_t vocab;
  file_set fs;
  loss_list losses;
  hash_result *h; /* tokenizer, shards..., [artifact], binary */
  size_t n_h;
  double hash_ms;
} gathered;

static void gathered_free(gathered *g) {
  json_decref(g->config);
  file_set_free(&g->fs);
  loss_list_free(&g->losses);
  free(g->h);
}

static int read_config(const char *path, json_t **out, pg_error *err) {
  if (json_read_file(path, CONFIG_MAX_BYTES, out, err) != 0) return -1;
  if (json_is_object(*out)) return 0;
  json_decref(*out);
  *out = NULL;
  return pg_fail(err, path, -1, "configuration: expected a JSON object");
}

static int read_vocab(const char *path, uint32_t *vocab, pg_error *err) {
  sp_model sp;
  if (sp_model_load(path, &sp, err) != 0) return -1;
  *vocab = sp.n_pieces;
  sp_model_free(&sp);
  return 0;
}

static int hash_all(const manifest_inputs *in, gathered *g, pg_error *err) {
  size_t n = 1 + g->fs.n_shards + (in->artifact_path != NULL) + 1;
  const char **paths = calloc(n, sizeof *paths);
  g->h = calloc(n, sizeof *g->h);
  if (!paths || !g->h) {
    free(paths);
    return pg_fail(err, "", -1, "out of memory");
  }
  size_t k = 0;
  paths[k++] = in->tokenizer_path;
  for (size_t i = 0; i < g->fs.n_shards; i++) paths[k++] = g->fs.shards[i];
  if (in->artifact_path) paths[k++] = in->artifact_path;
  paths[k++] = "/proc/self/exe";
  double t = now_ms();
  hash_pool_run(paths, n, 0, g->h);
  g->hash_ms = now_ms() - t;
  free(paths);
  g->n_h = n;
  for (size_t i = 0; i + 1 < n; i++) /* the binary's own digest is best effort */
    if (g->h[i].failed) {
      *err = g->h[i].err;
      return -1;
    }
  return 0;
}

/* A copy of the caller's records, checked as the loss file parser checks
 * a file (steps strictly increase). */
static int copy_losses(const manifest_extras *x, loss_list *l, pg_error *err) {
  if (x->n_loss_recs > MANIFEST_MAX_STEPS) return pg_fail(err, "", -1, "more than %zu steps", MANIFEST_MAX_STEPS);
  l->recs = malloc((x->n_loss_recs ? x->n_loss_recs : 1) * sizeof *l->recs);
  if (!l->recs) return pg_fail(err, "", -1, "out of memory");
  for (size_t i = 0; i < x->n_loss_recs; i++) {
    if (i && x->loss_recs[i].step <= x->loss_recs[i - 1].step)
      return pg_fail(err, "", -1, "loss record %zu: step %llu not greater than the previous", i,
                     (unsigned long long)x->loss_recs[i].step);
    l->recs[i] = x->loss_recs[i];
  }
  l->n = x->n_loss_recs;
  return 0;
}

static int gather(const manifest_inputs *in, const manifest_extras *x, gathered *g, pg_error *err) {
  if (x->config) {
    if (!json_is_object(x->config)) return pg_fail(err, "", -1, "configuration: expected a JSON object");
    g->config = json_incref(x->config);
  } else if (read_config(in->config_path, &g->config, err) != 0) {
    return -1;
  }
  if (read_vocab(in->tokenizer_path, &g->vocab, err) != 0) return -1;
  if (collect_shards(in, &g->fs, err) != 0 || validate_shards(&g->fs, g->vocab, err) != 0) return -1;
  if (x->losses_in_memory) {
    if (copy_losses(x, &g->losses, err) != 0) return -1;
  } else if (in->losses_path && loss_file_load(in->losses_path, &g->losses, err) != 0) {
    return -1;
  }
  return hash_all(in, g, err);
}

static json_t *schedule_json(const manifest_extras *x, int64_t total) {
  json_t *s = json_pack("{s:o, s:o}", "total_steps", total >= 0 ? json_integer(total) : json_null(),
                        "wall_clock_budget_s",
                        x->wall_clock_budget_s > 0 ? json_real(x->wall_clock_budget_s) : json_null());
  return merged(s, x->schedule);
}

static json_t *predicate(const manifest_inputs *in, const manifest_extras *x, gathered *g,
                         uint8_t head[SHA256_LEN], double t0) {
  json_t *losses = losses_json(&g->losses, head);
  int have_losses = x->losses_in_memory || in->losses_path;
  int64_t total = in->total_steps >= 0 ? in->total_steps : have_losses ? (int64_t)g->losses.n : -1;
  const hash_result *art = in->artifact_path ? &g->h[1 + g->fs.n_shards] : NULL;
  json_t *p = json_pack("{s:I, s:o, s:O, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "seed",
                        (json_int_t)in->seed, "derived_seeds",
                        x->derived_seeds ? json_deep_copy(x->derived_seeds) : json_object(), "config",
                        g->config, "code", code_identity(&g->h[g->n_h - 1]), "data",
                        data_json(in, x, g->vocab, &g->fs, g->h), "environment", merged(environment(in->threads), x->environment),
                        "schedule", schedule_json(x, total), "losses", losses, "evaluation",
                        x->evaluation ? json_deep_copy(x->evaluation) : json_null(), "artifact",
                        artifact_json(in, x, art), "timing", timing_json(x, t0, g->hash_ms));
  if (p && x->init) json_object_set_new(p, "init", json_deep_copy(x->init));
  return p;
}

int manifest_create_ex(const manifest_inputs *in, const manifest_extras *x, char **out,
                       size_t *out_len, pg_error *err) {
  static const manifest_extras none;
  if (!x) x = &none;
  double t0 = now_ms();
  gathered g;
  memset(&g, 0, sizeof g);
  if (in->seed > INT64_MAX) return pg_fail(err, "", -1, "seed must be below 2^63");
  if (gather(in, x, &g, err) != 0) {
    gathered_free(&g);
    return -1;
  }
  uint8_t head[SHA256_LEN];
  json_t *pred = predicate(in, x, &g, head, t0);
  const hash_result *art = in->artifact_path ? &g.h[1 + g.fs.n_shards] : NULL;
  json_t *root = pred ? json_pack("{s:s, s:o, s:s, s:o}", "_type", MANIFEST_STATEMENT_TYPE, "subject",
                                  subjects_json(in->artifact_path, art, head), "predicateType",
                                  MANIFEST_PREDICATE_TYPE, "predicate", pred)
                      : NULL;
  gathered_free(&g);
  if (!root) return pg_fail(err, "", -1, "cannot build the manifest JSON (out of memory?)");
  int rc = json_write_pretty(root, out, out_len, err);
  json_decref(root);
  return rc;
}

int manifest_create(const manifest_inputs *in, char **out, size_t *out_len, pg_error *err) {
  return manifest_create_ex(in, NULL, out, out_len, err);
}
