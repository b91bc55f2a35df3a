/* pgolf stats: is the new submission better than the record by the margin?
 * One-sided Welch test (or one-sample test against --target) on per-seed
 * final metrics given as numbers, run manifests or submission folders
 * (verifier/stats_inputs.h); see verifier/welch.h. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "verifier/reproduction.h"
#include "verifier/significance.h"
#include "verifier/stats_inputs.h"
#include "verifier/welch.h"


#define MAX_SET_ARGS 256

typedef struct stats_opts {
  const char *new_v[MAX_SET_ARGS], *rec_v[MAX_SET_ARGS];
  cli_list new_args, rec_args;
  const char *metric, *test;
  double margin_nats, tokens_per_byte, alpha, target; /* tpb and target NaN: not given */
  int json, consistency;
  cli_args extra; /* positional arguments, all refused */
} stats_opts;

static const char USAGE[] =
    "pgolf stats --new SET (--record SET | --target X)\n"
    "            [--metric bpb|nats] [--margin-nats M] [--tokens-per-byte R]\n"
    "            [--alpha A] [--test welch|mann-whitney] [--json]";
static const char ABOUT[] =
    "One-sided test that the new runs beat the record by the margin, for a\n"
    "metric where lower is better: diff = mean(record) - mean(new) > margin.";
static const char FOOTER[] =
    "Power is at the observed effect and sds (shifted central t); seeds_needed\n"
    "is per side for 80% power. Exit 0 significant, 1 not significant, 2 bad input.";

/* Cross-option rules, after every option has been read. */
static int check_opts(const stats_opts *o, const cli_command *c, pg_error *err) {
  if (o->extra.n)
    return cli_fail(err, c,
                    "unexpected argument '%s' (give manifests and folders with --new or "
                    "--record)",
                    o->extra.v[0]);
  if (!o->new_args.n) return cli_fail(err, c, "--new is required");
  if (o->consistency && (!o->rec_args.n || !isnan(o->target)))
    return cli_fail(err, c, "--consistency compares --new (claimed) with --record (replayed)");
  if ((o->rec_args.n == 0) == (isnan(o->target) != 0))
    return cli_fail(err, c, "--record/--target: give exactly one of them");
  if (strcmp(o->metric, "bpb") && strcmp(o->metric, "nats"))
    return cli_fail(err, c, "--metric must be bpb or nats, got '%s'", o->metric);
  if (strcmp(o->test, "welch") && strcmp(o->test, "mann-whitney"))
    return cli_fail(err, c, "--test must be welch or mann-whitney, got '%s'", o->test);
  if (!(o->alpha > 0 && o->alpha < 1))
    return cli_fail(err, c, "--alpha must be strictly between 0 and 1, got %g", o->alpha);
  if (o->margin_nats < 0)
    return cli_fail(err, c, "--margin-nats must not be negative, got %g", o->margin_nats);
  if (!isnan(o->tokens_per_byte) && !(o->tokens_per_byte > 0))
    return cli_fail(err, c, "--tokens-per-byte must be positive, got %g", o->tokens_per_byte);
  return 0;
}

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_opts(int argc, char **argv, stats_opts *o, pg_error *err) {
  *o = (stats_opts){.metric = "bpb",
                    .test = "welch",
                    .margin_nats = CHALLENGE_MARGIN_NATS,
                    .alpha = CHALLENGE_ALPHA,
                    .tokens_per_byte = NAN,
                    .target = NAN};
  o->new_args = (cli_list){o->new_v, 0, MAX_SET_ARGS};
  o->rec_args = (cli_list){o->rec_v, 0, MAX_SET_ARGS};
  const cli_option opts[] = {
      CLI_LIST("new", 0, &o->new_args, "SET",
               "per-seed final values (val_bpb or val_loss) of the new\n"
               "runs; SET is a comma-separated list of numbers, a run\n"
               "manifest (one seed), or a submission folder (one value\n"
               "per training log with a final metric); repeat the option\n"
               "to join several"),
      CLI_LIST("record", 0, &o->rec_args, "SET", "the record's values, as --new"),
      CLI_DOUBLE("target", 0, &o->target, "X",
                 "one-sample test against a fixed value instead of --record"),
      CLI_STRING("metric", 0, &o->metric, "bpb|nats", "bpb (default) or nats (per token)"),
      CLI_DOUBLE("margin-nats", 0, &o->margin_nats, "M",
                 "margin in nats per token (default 0.005); for bpb it is\n"
                 "converted as M * R / ln 2 with R from --tokens-per-byte,\n"
                 "else the new set's own val_loss / (val_bpb ln 2) (the\n"
                 "record's when the new values are plain numbers)"),
      CLI_DOUBLE("tokens-per-byte", 0, &o->tokens_per_byte, "R",
                 "tokens per byte R for the margin's conversion"),
      CLI_DOUBLE("alpha", 0, &o->alpha, "A", "significance level, 0 < A < 1 (default 0.01)"),
      CLI_STRING("test", 0, &o->test, "welch|mann-whitney",
                 "welch (default); mann-whitney is only checked for\n"
                 "whether its smallest p can reach alpha, and refused"),
      CLI_FLAG("consistency", 0, &o->consistency,
               "do replays reproduce the claims? --new is the claimed\n"
               "per-seed results, --record the replayed ones: one-sided,\n"
               "no margin (REPRODUCTION_GAP when the claims are better\n"
               "than the replays beyond the seeds' noise at --alpha)"),
      CLI_FLAG("json", 0, &o->json, "machine-readable output"),
      CLI_ARGS(&o->extra, "", NULL),
      CLI_END};
  const cli_command cmd = {
      .name = "stats", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  return check_opts(o, &cmd, err) ? CLI_ERROR : CLI_OK;
}

/* Margin in the metric's unit: bpb = nats per token / ln 2 * tokens per byte. */
static double metric_margin(const stats_opts *o, double tpb) {
  if (!strcmp(o->metric, "nats") || o->margin_nats == 0) return o->margin_nats;
  return o->margin_nats * tpb / M_LN2;
}

/* A rank test's one-sided p is at least 1 / C(n1+n2, n1) (the most extreme
 * of the equally likely orderings); below alpha it can never reject. */
static int check_rank_test(size_t n1, size_t n2, double alpha, pg_error *err) {
  double log_orderings = lgamma((double)(n1 + n2 + 1)) - lgamma((double)(n1 + 1)) -
                         lgamma((double)(n2 + 1));
  double p_min = exp(-log_orderings);
  if (p_min >= alpha)
    return pg_fail(err, "--test mann-whitney", -1,
                   "with %zu vs %zu values the smallest possible one-sided p is 1/%.0f = %.3g, "
                   "not below alpha %g, so it can never be significant; use the Welch test "
                   "or more seeds",
                   n1, n2, exp(log_orderings), p_min, alpha);
  return pg_fail(err, "--test mann-whitney", -1,
                 "is not implemented beyond this check (%zu vs %zu values could reach p = %.3g); "
                 "use --test welch",
                 n1, n2, p_min);
}

typedef struct stats_input {
  stats_set new_set, rec_set;
  sample_summary s_new, s_rec;
  double tpb; /* tokens per byte used for the margin; NAN if none */
  const char *tpb_source;
} stats_input;

static int read_set(const char *const *args, size_t n, const char *option, int nats,
                    stats_set *set, sample_summary *sum, pg_error *err) {
  for (size_t i = 0; i < n; i++)
    if (stats_set_add(set, args[i], option, nats, err)) return -1;
  return summarize_sample(set->v, set->n, option, sum, err);
}

/* --tokens-per-byte, else the new set's own, else the record's. */
static int resolve_tpb(const stats_opts *o, stats_input *in, pg_error *err) {
  double own_new = stats_set_tpb(&in->new_set), own_rec = stats_set_tpb(&in->rec_set);
  in->tpb = !isnan(o->tokens_per_byte) ? o->tokens_per_byte : isfinite(own_new) ? own_new : own_rec;
  in->tpb_source = !isnan(o->tokens_per_byte) ? "option" : isfinite(own_new) ? "new" : "record";
  if (isfinite(in->tpb) || strcmp(o->metric, "bpb") || o->margin_nats == 0) return 0;
  return pg_fail(err, "--tokens-per-byte", -1,
                 "is required with --metric bpb and a nonzero --margin-nats: values given "
                 "on the command line carry no val_loss to derive it from (give manifests "
                 "or submission folders, or pass --margin-nats 0, or --metric nats)");
}

static int read_inputs(const stats_opts *o, stats_input *in, pg_error *err) {
  int nats = !strcmp(o->metric, "nats");
  if (read_set(o->new_v, o->new_args.n, "--new", nats, &in->new_set, &in->s_new, err)) return -1;
  if (o->rec_args.n &&
      read_set(o->rec_v, o->rec_args.n, "--record", nats, &in->rec_set, &in->s_rec, err))
    return -1;
  return resolve_tpb(o, in, err);
}

static json_t *real_or_null(double v, int present) { return present ? json_real(v) : json_null(); }

static void print_json(const stats_opts *o, const stats_input *in, const margin_test *r,
                       const significance *sg) {
  int two = o->rec_args.n != 0;
  json_t *j = json_object();
  json_object_set_new(j, "test", json_string(two ? "welch" : "one_sample"));
  json_object_set_new(j, "metric", json_string(o->metric));
  json_object_set_new(j, "alpha", json_real(o->alpha));
  json_object_set_new(j, "margin_nats", json_real(o->margin_nats));
  if (isfinite(in->tpb)) {
    json_object_set_new(j, "tokens_per_byte", json_real(in->tpb));
    json_object_set_new(j, "tokens_per_byte_from", json_string(in->tpb_source));
  }
  if (!two) json_object_set_new(j, "target", json_real(o->target));
  json_object_set_new(j, "n_new", json_integer((json_int_t)in->s_new.n));
  json_object_set_new(j, "n_record", two ? json_integer((json_int_t)in->s_rec.n) : json_null());
  json_object_set_new(j, "mean_new", json_real(in->s_new.mean));
  json_object_set_new(j, "mean_record", json_real(two ? in->s_rec.mean : o->target));
  json_object_set_new(j, "sd_new", json_real(in->s_new.sd));
  json_object_set_new(j, "sd_record", real_or_null(in->s_rec.sd, two));
  json_object_set_new(j, "diff", json_real(r->diff));
  json_object_set_new(j, "margin", json_real(r->margin));
  json_object_set_new(j, "t", json_real(r->t));
  json_object_set_new(j, "df", json_real(r->df));
  json_object_set_new(j, "p_margin", json_real(r->p_margin));
  json_object_set_new(j, "p_zero_margin", json_real(r->p_zero_margin));
  json_object_set_new(j, "lower_bound", json_real(r->lower_bound));
  json_object_set_new(j, "power", json_real(r->power));
  json_object_set_new(j, "seeds_needed",
                      r->seeds_needed > 0 ? json_integer(r->seeds_needed) : json_null());
  json_object_set_new(j, "verdict", json_string(r->significant ? "significant" : "not_significant"));
  json_object_set_new(j, "readings", significance_json(sg));
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  if (s) puts(s);
  free(s);
  json_decref(j);
}

static void print_text(const stats_opts *o, const stats_input *in, const margin_test *r,
                       const significance *sg) {
  int two = o->rec_args.n != 0;
  const char *u = o->metric;
  printf("%s test, one-sided, metric %s (lower is better), alpha %g\n\n",
         two ? "Welch" : "One-sample t", u, o->alpha);
  printf("  %-8s %5s %14s %12s\n", "", "n", "mean", "sd");
  printf("  %-8s %5zu %14.8f %12.8f\n", "new", in->s_new.n, in->s_new.mean, in->s_new.sd);
  if (two)
    printf("  %-8s %5zu %14.8f %12.8f\n\n", "record", in->s_rec.n, in->s_rec.mean, in->s_rec.sd);
  else
    printf("  %-8s %5s %14.8f %12s\n\n", "target", "-", o->target, "-");
  printf("  %-36s %.8f %s\n", two ? "diff (record - new)" : "diff (target - new)", r->diff, u);
  printf("  %-36s %.8f %s (%g nats/token)\n", "margin", r->margin, u, o->margin_nats);
  if (isfinite(in->tpb) && !strcmp(u, "bpb"))
    printf("  %-36s %.6f (%s)\n", "tokens per byte", in->tpb,
           !strcmp(in->tpb_source, "option") ? "--tokens-per-byte"
                                            : !strcmp(in->tpb_source, "new") ? "the new runs' own"
                                                                             : "the record's own");
  printf("  %-36s %.4f\n", "t", r->t);
  printf("  %-36s %.4f\n", two ? "df (Welch-Satterthwaite)" : "df", r->df);
  printf("  %-36s %.4g\n", "p (diff > margin)", r->p_margin);
  printf("  %-36s %.4g\n", "p (diff > 0)", r->p_zero_margin);
  char label[64];
  snprintf(label, sizeof label, "lower bound on diff (%g%%, 1-sided)", 100 * (1 - o->alpha));
  printf("  %-36s %.8f %s\n", label, r->lower_bound, u);
  printf("  %-36s %.3f\n", "power at observed effect", r->power);
  if (r->seeds_needed > 0)
    printf("  %-36s %ld%s\n", "seeds for 80% power", r->seeds_needed, two ? " per side" : "");
  else
    printf("  %-36s none (effect does not exceed the margin)\n", "seeds for 80% power");
  printf("\nverdict: %s at alpha %g with the margin\n",
         r->significant ? "significant" : "not significant", o->alpha);
  printf("\nthe README's rule and the maintainers' practice, each with its verdict:\n");
  significance_print(stdout, sg, u, "  ");
}

static int run_stats(const stats_opts *o, stats_input *in, pg_error *err) {
  if (read_inputs(o, in, err)) return -1;
  if (!strcmp(o->test, "mann-whitney"))
    return check_rank_test(in->s_new.n, o->rec_args.n ? in->s_rec.n : 0, o->alpha, err);
  margin_test r;
  double margin = metric_margin(o, in->tpb);
  int rc = o->rec_args.n ? welch_margin_test(in->s_new, in->s_rec, margin, o->alpha, &r, err)
                         : one_sample_margin_test(in->s_new, o->target, margin, o->alpha, &r, err);
  if (rc) return -1;
  /* The challenge's readings, whatever --alpha and --margin-nats say. */
  int nats = !strcmp(o->metric, "nats");
  double readme_margin = nats ? CHALLENGE_MARGIN_NATS
                              : isfinite(in->tpb) ? CHALLENGE_MARGIN_NATS * in->tpb / M_LN2 : NAN;
  sample_summary target = {2, o->target, 0};
  significance sg;
  if (significance_compute(in->s_new, o->rec_args.n ? in->s_rec : target, !o->rec_args.n,
                           readme_margin, &sg, err))
    return -1;
  if (o->json)
    print_json(o, in, &r, &sg);
  else
    print_text(o, in, &r, &sg);
  return r.significant ? 1 : 0;
}

/* --consistency: the claimed (--new) against the replayed (--record)
 * per-seed values, verifier/reproduction.h. 0 no gap, 1 a gap, -1 error. */
static int run_consistency(const stats_opts *o, stats_input *in, pg_error *err) {
  int nats = !strcmp(o->metric, "nats");
  for (size_t i = 0; i < o->new_args.n; i++)
    if (stats_set_add(&in->new_set, o->new_v[i], "--new", nats, err)) return -1;
  for (size_t i = 0; i < o->rec_args.n; i++)
    if (stats_set_add(&in->rec_set, o->rec_v[i], "--record", nats, err)) return -1;
  repro_result r;
  if (reproduction_test(in->new_set.v, in->new_set.n, in->rec_set.v, in->rec_set.n, o->alpha, &r,
                        err))
    return -1;
  const char *verdict = !r.testable ? "untestable" : r.gap_significant ? "REPRODUCTION_GAP"
                                                                         : "consistent";
  if (o->json) {
    json_t *j = json_pack("{s:s, s:s, s:f, s:I, s:I, s:f, s:f, s:f, s:s}", "mode", "consistency",
                          "metric", o->metric, "alpha", o->alpha, "n_claimed",
                          (json_int_t)r.n_claimed, "n_replayed", (json_int_t)r.n_replayed,
                          "claimed_mean", r.claimed_mean, "replayed_mean", r.replayed_mean, "gap",
                          r.gap, "test", r.test);
    if (j) {
      json_object_set_new(j, "t", r.testable ? json_real(r.t) : json_null());
      json_object_set_new(j, "df", r.testable ? json_real(r.df) : json_null());
      json_object_set_new(j, "p", r.testable ? json_real(r.p) : json_null());
      json_object_set_new(j, "verdict", json_string(verdict));
      char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
      if (text) puts(text);
      free(text);
      json_decref(j);
    }
  } else {
    printf("claimed  n=%zu mean %.8f %s\nreplayed n=%zu mean %.8f %s\n", r.n_claimed,
           r.claimed_mean, o->metric, r.n_replayed, r.replayed_mean, o->metric);
    printf("gap (replayed - claimed) %.8f %s\n", r.gap, o->metric);
    if (r.testable)
      printf("%s test, one-sided, no margin: t %.4f, df %.2f, p %.4g (alpha %g)\n", r.test, r.t,
             r.df, r.p, o->alpha);
    else
      printf("no test: one run on each side, or no spread on the side that sets it\n");
    printf("verdict: %s\n", verdict);
  }
  return r.gap_significant ? 1 : 0;
}

int cmd_stats(int argc, char **argv) {
  stats_opts o;
  stats_input in = {0};
  pg_error err = {0};
  int pr = parse_opts(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (o.consistency) {
    int crc = run_consistency(&o, &in, &err);
    stats_set_free(&in.new_set);
    stats_set_free(&in.rec_set);
    if (crc < 0) {
      pg_error_print(&err);
      return PG_EXIT_USAGE;
    }
    return crc ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
  }
  int rc = run_stats(&o, &in, &err);
  stats_set_free(&in.new_set);
  stats_set_free(&in.rec_set);
  if (rc < 0) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  return rc == 1 ? PG_EXIT_OK : PG_EXIT_CHECK_FAILED;
}
