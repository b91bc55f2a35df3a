/* pgolf regress: CI's gate on val_bpb and, for deterministic
 * configurations, on the loss chain (verifier/regress.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "verifier/regress.h"

typedef struct regress_opts {
  const char *golden, *junit, *markdown, *config;
  double k; /* NaN: not given */
  int json;
  cli_args runs;
} regress_opts;

static const char USAGE[] =
    "pgolf regress --golden FILE [--config NAME] [--k K] [--junit FILE]\n"
    "              [--markdown FILE] [--json] [NAME=]RUN_MANIFEST...";
static const char ABOUT[] =
    "Judge training runs (their manifests, as pgolf train writes them) against\n"
    "the golden file's reference runs of their configuration. A run fails when\n"
    "  - the configuration is deterministic and its loss chain head differs from\n"
    "    the golden head of the same seed, or\n"
    "  - its val_bpb > mean + k * sd of the golden seeds.\n"
    "k defaults to t_{n-1}.isf(p) * sqrt(1 + 1/n) for n golden seeds and the\n"
    "golden's false_failure_probability p (default 1e-3): a correct run then fails\n"
    "with probability p (a prediction bound; the sd is estimated from n seeds).";
static const char FOOTER[] =
    "Exit codes: 0 every run passed, 1 a run regressed, 2 usage or input error.";

/* CLI_OK, CLI_HELP (printed) or CLI_ERROR (in err). */
static int parse_opts(int argc, char **argv, regress_opts *o, pg_error *err) {
  *o = (regress_opts){.k = NAN};
  const cli_option opts[] = {
      CLI_STRING("golden", 0, &o->golden, "FILE", "reference values (format pgolf/regress/v1)"),
      CLI_STRING("config", 0, &o->config, "NAME",
                 "configuration for runs given without NAME= (needed when\n"
                 "the golden holds more than one)"),
      CLI_DOUBLE_RANGE("k", 0, &o->k, "K", 0, INFINITY, "override k for every configuration"),
      CLI_STRING("junit", 0, &o->junit, "FILE",
                 "write JUnit XML (two test cases per run: band, chain)"),
      CLI_STRING("markdown", 0, &o->markdown, "FILE", "write a Markdown summary"),
      CLI_FLAG("json", 0, &o->json, "print JSON instead of the table"),
      CLI_ARGS(&o->runs, "[NAME=]RUN_MANIFEST...", NULL),
      CLI_END};
  const cli_command cmd = {
      .name = "regress", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (!o->golden) return cli_fail(err, &cmd, "--golden is required");
  if (!o->runs.n) return cli_fail(err, &cmd, "no runs given");
  return CLI_OK;
}

/* Split [NAME=]PATH; the configuration is NAME, else --config, else the
 * golden's only one. */
static const regress_config *run_config(const regress_opts *o, const regress_golden *g,
                                        const char *arg, const char **path, pg_error *err) {
  const char *eq = strchr(arg, '=');
  char name[256];
  *path = arg;
  if (eq && (size_t)(eq - arg) < sizeof name) {
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = 0;
    if (regress_find_config(g, name)) {
      *path = eq + 1;
      return regress_find_config(g, name);
    }
  }
  if (o->config) {
    const regress_config *c = regress_find_config(g, o->config);
    if (!c) pg_fail(err, o->golden, -1, "no configuration '%s'", o->config);
    return c;
  }
  if (g->n_configs == 1) return &g->configs[0];
  pg_fail(err, arg, -1, "which configuration? the golden holds %zu: give NAME=PATH or --config",
          g->n_configs);
  return NULL;
}

static int judge_run(const regress_opts *o, const regress_golden *g, const char *arg,
                     regress_result *r, pg_error *err) {
  const char *path;
  const regress_config *c = run_config(o, g, arg, &path, err);
  if (!c) return -1;
  regress_config cc = *c;
  if (!isnan(o->k)) cc.k = o->k;
  manifest_doc d;
  if (manifest_load(path, &d, err)) return -1;
  int rc;
  if (d.is_envelope && !d.payload_ok) {
    *err = d.payload_err;
    rc = -1;
  } else {
    rc = regress_judge(&cc, &d.m, path, r, err);
  }
  manifest_doc_free(&d);
  return rc;
}

static int write_text(const char *path, char *text, pg_error *err) {
  if (!text) return pg_fail(err, path, -1, "out of memory");
  int rc = file_write_atomic(path, text, strlen(text), 0644, err);
  free(text);
  return rc;
}

static int emit(const regress_opts *o, const regress_result *r, size_t n, pg_error *err) {
  if (o->junit && write_text(o->junit, regress_junit(r, n), err)) return -1;
  if (o->markdown && write_text(o->markdown, regress_markdown(r, n), err)) return -1;
  if (o->json) {
    json_t *j = regress_json(r, n);
    char *s = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
    if (s) puts(s);
    free(s);
    json_decref(j);
  } else {
    regress_print_table(stdout, r, n);
  }
  return 0;
}

int cmd_regress(int argc, char **argv) {
  regress_opts o;
  regress_golden g = {0};
  regress_result *res = NULL;
  pg_error err = {0};
  int rc = PG_EXIT_USAGE, failed = 0;
  int pr = parse_opts(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (regress_golden_load(o.golden, &g, &err)) goto out;
  res = calloc((size_t)o.runs.n, sizeof *res);
  if (!res) {
    pg_fail(&err, "", -1, "out of memory");
    goto out;
  }
  for (int i = 0; i < o.runs.n; i++) {
    if (judge_run(&o, &g, o.runs.v[i], &res[i], &err)) goto out;
    failed |= regress_failed(&res[i]);
  }
  if (emit(&o, res, (size_t)o.runs.n, &err)) goto out;
  rc = failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
out:
  if (rc == PG_EXIT_USAGE) pg_error_print(&err);
  free(res);
  regress_golden_free(&g);
  return rc;
}
