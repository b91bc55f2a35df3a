/* A supervised replay of a submission from start to verdict: the NVML
 * attestation and sampling around the run, the run and its judgement
 * (replay_external.h), the hardware findings, the manifest written, the
 * findings printed; and --fresh-seeds, K such replays and the
 * reproduction test. Shared by `pgolf replay` and `pgolf verify`. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "common/verbs.h"
#include "kernels/nvml.h"
#include "verifier/replay_external.h"
#include "verifier/reproduction.h"
#include "verifier/stats_inputs.h"

void replay_request_defaults(replay_request *q) {
  memset(q, 0, sizeof *q);
  q->o.budget_train_s = CHALLENGE_TRAIN_LIMIT_S;
  q->o.budget_eval_s = CHALLENGE_EVAL_LIMIT_S;
  q->o.grace_s = REPLAY_DEFAULT_GRACE_S;
  q->o.tolerance_bpb = REPLAY_DEFAULT_TOLERANCE_BPB;
}

int replay_take_seed(cli_parser *p, const cli_option *opt, const char *inline_value) {
  replay_request *q = opt->dest;
  const char *v = cli_value(p, inline_value);
  if (!v) return -1;
  if (cli_parse_u64(v, 0, UINT64_MAX, &q->o.seed))
    return cli_error(p, "%s: '%s' is not a seed", cli_option_name(p), v);
  q->seed_given = 1;
  return 0;
}

static void print_findings(const replay_ext_opts *o, finding_list *f, const char *path) {
  char title[4200];
  snprintf(title, sizeof title, "replay of %s, seed %llu", o->record_dir, (unsigned long long)o->seed);
  findings_sort(f);
  findings_print_table(stdout, title, f);
  printf("manifest: %s\n", path);
}

static int write_manifest(json_t *m, const char *path, int to_stdout, pg_error *err) {
  char *text;
  size_t len;
  if (json_write_pretty(m, &text, &len, err)) return -1;
  int rc = file_write_atomic(path, text, len, 0644, err);
  if (!rc && to_stdout && fwrite(text, 1, len, stdout) != len) rc = pg_fail_errno(err, "stdout", "write");
  free(text);
  return rc;
}

/* Other hardware than the challenge's: its timings do not decide, so the
 * budget findings become warnings that say why. */
static void timings_not_deciding(finding_list *f, const char *why) {
  static const char *const timing[] = {"TRAIN_OVER_BUDGET", "EVAL_OVER_BUDGET", "KILLED_AT_LIMIT"};
  for (size_t i = 0; i < f->n; i++)
    for (size_t k = 0; k < sizeof timing / sizeof timing[0]; k++)
      if (f->v[i].sev == SEV_ERROR && !strcmp(f->v[i].code, timing[k])) f->v[i].sev = SEV_WARNING;
  findings_add(f, "HARDWARE_MISMATCH", SEV_WARNING, NULL, 0,
               "%s: the run is judged, but its timings do not decide a 10-minute-track verdict",
               why);
}

/* "hardware": the attestation, whether it is the challenge's, the samples. */
static json_t *hardware_json(const nvml_attest *a, int matches, json_t *samples) {
  json_t *h = nvml_attest_json(a);
  if (!h) return NULL;
  json_object_set_new(h, "matches_challenge", json_boolean(matches));
  json_object_set_new(h, "samples", samples ? samples : json_null());
  return h;
}

int replay_supervised(const replay_request *c, uint64_t seed, double *bpb) {
  pg_error err;
  *bpb = NAN;
  char bwrap[4096];
  if (sandbox_find_bwrap(bwrap, sizeof bwrap, &err) || sandbox_probe(bwrap, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  replay_ext_opts o = c->o;
  o.seed = seed;
  o.progress = isatty(2);
  nvml_attest *hw = malloc(sizeof *hw);
  if (!hw) return pg_die_msg("replay: out of memory"), PG_EXIT_USAGE;
  nvml_attest_take(hw);
  char why[512];
  unsigned want = o.gpus > 0 ? (unsigned)o.gpus : CHALLENGE_WORLD_SIZE;
  int matches = nvml_matches_challenge(hw, want, why, sizeof why);
  finding_list f = {0};
  if (hw->attested && hw->n_procs > 0 && !o.allow_busy) {
    findings_add(&f, "HARDWARE_BUSY", SEV_ERROR, NULL, 0,
                 "%zu process%s already on a GPU (pid %u, %s): a stale process distorts the "
                 "timing; stop it or pass --allow-busy",
                 hw->n_procs, hw->n_procs == 1 ? "" : "es", hw->procs[0].pid,
                 hw->procs[0].comm[0] ? hw->procs[0].comm : "?");
    if (!c->json) print_findings(&o, &f, "(none: the replay did not run)");
    findings_free(&f);
    free(hw);
    return PG_EXIT_CHECK_FAILED;
  }
  nvml_sampler *sampler = NULL;
  if (hw->attested && nvml_sampler_start(&sampler, 1000.0, 1u << 20, &err)) sampler = NULL;
  replay_run r;
  replay_timings t;
  replay_verdict_in v;
  int rc = replay_external_run(&o, bwrap, &r, &err);
  json_t *samples = nvml_sampler_stop(sampler);
  if (!rc) rc = replay_judge(&o, &r, &t, &v, &f, &err);
  char hot[256];
  unsigned n_hot = rc ? 0 : nvml_samples_thermal(samples, hot, sizeof hot);
  if (n_hot)
    findings_add(&f, "HARDWARE_THROTTLED", SEV_WARNING, NULL, 0,
                 "thermal throttling during the run on %u GPU%s, %s: the timings are slower "
                 "than the hardware's; a budget overrun may be the cooling's, not the code's",
                 n_hot, n_hot == 1 ? "" : "s", hot);
  if (!rc && v.final) *bpb = v.final->val_bpb.v;
  if (!rc && hw->attested && !matches) timings_not_deciding(&f, why);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-seed%llu.json", o.out_dir, (unsigned long long)o.seed);
  if (!rc) {
    json_t *m = replay_manifest_json(&o, bwrap, &r, &t, &v, &f);
    json_t *h = hardware_json(hw, matches, samples);
    samples = NULL;
    if (m && h) json_object_set_new(m, "hardware", h);
    else json_decref(h);
    rc = m ? write_manifest(m, path, c->json, &err) : pg_fail(&err, path, -1, "out of memory");
    json_decref(m);
  }
  json_decref(samples);
  free(hw);
  int code = PG_EXIT_USAGE;
  if (rc) pg_error_print(&err);
  else {
    if (!c->json) print_findings(&o, &f, path);
    code = findings_count(&f, SEV_ERROR) ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
  }
  findings_free(&f);
  replay_run_free(&r);
  return code;
}

/* The summary of a fresh-seed replay: seeds, salt, digest, each seed's
 * replayed val_bpb and exit, the claimed per-seed results, the test. */
static json_t *fresh_json(const replay_request *c, const char *digest, const uint32_t *seeds,
                          const double *bpb, const int *codes, const stats_set *claimed,
                          const repro_result *r, int tested) {
  json_t *runs = json_array(), *cl = json_array();
  for (int i = 0; i < c->fresh_seeds; i++)
    json_array_append_new(runs, json_pack("{s:I, s:o, s:i}", "seed", (json_int_t)seeds[i],
                                          "val_bpb", isnan(bpb[i]) ? json_null() : json_real(bpb[i]),
                                          "exit", codes[i]));
  for (size_t i = 0; i < claimed->n; i++) json_array_append_new(cl, json_real(claimed->v[i]));
  json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o}", "record", c->o.record_dir, "salt", c->salt,
                        "folder_digest", digest, "runs", runs, "claimed_val_bpb", cl);
  if (!o) return NULL;
  if (tested) {
    const char *verdict = !r->testable ? "untestable"
                          : r->gap_significant ? "REPRODUCTION_GAP" : "consistent";
    json_object_set_new(o, "reproduction",
                        json_pack("{s:s, s:f, s:f, s:f, s:o, s:o, s:s}", "test", r->test,
                                  "claimed_mean", r->claimed_mean, "replayed_mean",
                                  r->replayed_mean, "gap", r->gap,
                                  "p", r->testable ? json_real(r->p) : json_null(), "df",
                                  r->testable ? json_real(r->df) : json_null(), "verdict",
                                  verdict));
  }
  return o;
}

int replay_fresh(const replay_request *c) {
  pg_error err;
  uint32_t seeds[FRESH_SEEDS_MAX];
  char digest[SHA256_HEX_LEN + 1];
  if (fresh_seeds(c->o.record_dir, c->salt, c->fresh_seeds, seeds, digest, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  stats_set claimed = {0};
  if (stats_set_add(&claimed, c->o.record_dir, "--record", 0, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  double bpb[FRESH_SEEDS_MAX], got[FRESH_SEEDS_MAX];
  int codes[FRESH_SEEDS_MAX], worst = PG_EXIT_OK;
  size_t n_got = 0;
  for (int i = 0; i < c->fresh_seeds; i++) {
    if (!c->json) printf("== fresh seed %d of %d: %u\n", i + 1, c->fresh_seeds, seeds[i]);
    codes[i] = replay_supervised(c, seeds[i], &bpb[i]);
    if (codes[i] == PG_EXIT_USAGE) {
      stats_set_free(&claimed);
      return PG_EXIT_USAGE;
    }
    if (codes[i] > worst) worst = codes[i];
    if (!isnan(bpb[i])) got[n_got++] = bpb[i];
  }
  repro_result r;
  int tested = n_got > 0 && claimed.n > 0 &&
               reproduction_test(claimed.v, claimed.n, got, n_got, CHALLENGE_ALPHA, &r, &err) == 0;
  json_t *sum = fresh_json(c, digest, seeds, bpb, codes, &claimed, &r, tested);
  char path[4096];
  snprintf(path, sizeof path, "%s/replay-fresh.json", c->o.out_dir);
  int rc = sum ? write_manifest(sum, path, 0, &err) : pg_fail(&err, path, -1, "out of memory");
  json_decref(sum);
  stats_set_free(&claimed);
  if (rc) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  if (!c->json) {
    if (tested)
      printf("\nclaimed mean %.8f (n=%zu), replayed mean %.8f (n=%zu), gap %.8f: %s%s\n",
             r.claimed_mean, r.n_claimed, r.replayed_mean, r.n_replayed, r.gap,
             !r.testable ? "untestable" : r.gap_significant ? "REPRODUCTION_GAP" : "consistent",
             r.testable ? "" : " (one run on each side)");
    else
      printf("\nno reproduction test: %s\n", n_got ? "the folder claims no per-seed result"
                                                     : "no replay printed a final val_bpb");
    printf("summary: %s\n", path);
  }
  if (tested && r.gap_significant) return PG_EXIT_CHECK_FAILED;
  return worst;
}

