/* pgolf manifest: create, show, verify, diff, keygen, sign.
 * This file only parses options, calls the library (manifests/manifest.h,
 * dsse.h, keys.h) and prints; exit codes: 0 ok, 1 a check failed,
 * 2 usage or input error. */
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "manifests/dsse.h"
#include "common/json_read.h"
#include "manifests/keys.h"
#include "manifests/manifest.h"

static const char FOOTER[] =
    "Exit codes: 0 ok, 1 a check failed or manifests differ, 2 usage or input error.";

static const char CREATE_USAGE[] =
    "pgolf manifest create --config CONFIG.json --tokenizer MODEL --data PATH... --seed N\n"
    "                      [--losses FILE] [--artifact FILE] [--steps N] -o OUT.json";
static const char CREATE_ABOUT[] =
    "Write a run manifest (in-toto Statement, predicate pgolf/run/v1).";
static const char SHOW_USAGE[] = "pgolf manifest show FILE [--json]";
static const char SHOW_ABOUT[] = "Summary of a manifest or of a DSSE envelope holding one.";
static const char VERIFY_USAGE[] =
    "pgolf manifest verify FILE [--key PUB.pem] [--root DIR] [--json]";
static const char VERIFY_ABOUT[] =
    "Check structure, loss chain, subjects, and the digests of the\n"
    "recorded files present under DIR (default .); an envelope needs\n"
    "--key and its signature is checked first.";
static const char DIFF_USAGE[] = "pgolf manifest diff A B [--json]";
static const char DIFF_ABOUT[] = "First deterministic difference (config, data, step losses).";
static const char KEYGEN_USAGE[] = "pgolf manifest keygen -o PREFIX";
static const char KEYGEN_ABOUT[] =
    "New Ed25519 key: PREFIX.key (PKCS#8, mode 0600), PREFIX.pub; prints the keyid.";
static const char SIGN_USAGE[] = "pgolf manifest sign --key PRIV.pem MANIFEST -o ENVELOPE";
static const char SIGN_ABOUT[] = "DSSE envelope over the exact bytes of MANIFEST.";

static int usage_error(const char *sub, const char *msg) {
  pg_die_msg("manifest %s: %s (try `pgolf manifest %s --help`)", sub, msg, sub);
  return PG_EXIT_USAGE;
}

static int fail_input(const pg_error *e) {
  pg_error_print(e);
  return PG_EXIT_USAGE;
}

/* ---- create ---- */

typedef struct create_opts {
  manifest_inputs in;
  const char *out;
  const char **data;    /* room for every argument */
  uint64_t seed, steps; /* UINT64_MAX: not given */
} create_opts;

/* --data PATH...: its value, then every following argument up to the
 * next option. */
static int take_data(cli_parser *p, const cli_option *opt, const char *inline_value) {
  create_opts *o = opt->dest;
  const char *v = cli_value(p, inline_value), *next;
  if (!v) return -1;
  o->data[o->in.n_data++] = v;
  while ((next = cli_peek(p)) && next[0] != '-') o->data[o->in.n_data++] = cli_next(p);
  return 0;
}

/* CLI_OK, CLI_HELP or CLI_ERROR (in err; also a missing option). */
static int parse_create(int argc, char **argv, create_opts *o, pg_error *err) {
  const cli_option opts[] = {
      CLI_STRING("config", 0, &o->in.config_path, "CONFIG.json", "the run's configuration"),
      CLI_STRING("tokenizer", 0, &o->in.tokenizer_path, "MODEL",
                 "the SentencePiece model the run read"),
      CLI_CALLBACK("data", 0, o, "PATH...", take_data,
                   "shards, or directories of fineweb_{train,val}_*.bin\n"
                   "shards (every argument up to the next option)"),
      CLI_UNSIGNED("seed", 0, &o->seed, "N", 0, INT64_MAX, "the run's seed"),
      CLI_STRING("losses", 0, &o->in.losses_path, "FILE",
                 "lines `STEP LOSS [LR_MULT [WALL_MS]]`, LOSS as\n"
                 "0xXXXXXXXX (float32 bits) or decimal; '#' comments"),
      CLI_STRING("artifact", 0, &o->in.artifact_path, "FILE", "the artifact the run wrote"),
      CLI_UNSIGNED("steps", 0, &o->steps, "N", 0, INT64_MAX,
                   "the schedule's length (default: the loss file's)"),
      CLI_STRING("output", 'o', &o->out, "OUT.json", "the manifest to write"),
      CLI_END};
  const cli_command cmd = {.name = "manifest create",
                           .usage = CREATE_USAGE,
                           .about = CREATE_ABOUT,
                           .options = opts,
                           .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (!o->in.config_path || !o->in.tokenizer_path || !o->in.n_data || o->seed == UINT64_MAX ||
      !o->out)
    return cli_fail(err, &cmd, "--config, --tokenizer, --data, --seed and -o are required");
  o->in.seed = o->seed;
  o->in.total_steps = o->steps == UINT64_MAX ? -1 : (int64_t)o->steps;
  return CLI_OK;
}

static int create_run(create_opts *o) {
  char *text = NULL;
  size_t len = 0;
  pg_error e;
  if (manifest_create(&o->in, &text, &len, &e) != 0) return fail_input(&e);
  int rc = file_write_atomic(o->out, text, len, 0644, &e);
  manifest m;
  if (rc == 0 && manifest_parse((const uint8_t *)text, len, o->out, &m, &e) == 0) {
    char h[SHA256_HEX_LEN + 1];
    sha256_hex(m.head, h);
    printf("wrote %s: %zu shards, %zu steps, loss chain %s\n", o->out, m.n_shards, m.n_steps, h);
    manifest_free(&m);
  } else {
    rc = -1;
  }
  free(text);
  return rc == 0 ? PG_EXIT_OK : fail_input(&e);
}

static int cmd_create(int argc, char **argv) {
  create_opts o = {.seed = UINT64_MAX, .steps = UINT64_MAX};
  o.data = calloc((size_t)argc, sizeof *o.data);
  if (!o.data) abort();
  o.in.data_paths = o.data;
  pg_error err;
  int r = parse_create(argc, argv, &o, &err);
  int rc = r == CLI_OK ? create_run(&o) : cli_status(r, &err);
  free(o.data);
  return rc;
}

/* ---- show, verify, diff: positional files and a few options ---- */

typedef struct read_opts {
  cli_args files;
  int json;
  const char *key, *root, *out;
} read_opts;

/* Parse a sub-verb that takes want_files files. Returns -1 to go on,
 * else the exit code (after --help or a usage error). */
static int parse_read(const cli_command *c, int argc, char **argv, int want_files,
                      const read_opts *o) {
  pg_error err;
  int r = cli_parse(c, argc, argv, &err);
  if (r != CLI_OK) return cli_status(r, &err);
  if (o->files.n > want_files)
    return cli_usage_error(c, "unexpected argument '%.100s'", o->files.v[want_files]);
  if (o->files.n < want_files)
    return cli_usage_error(c, "expected %d file argument%s", want_files, want_files > 1 ? "s" : "");
  return -1;
}

#define JSON_OPT(o) CLI_FLAG("json", 0, &(o).json, "print JSON")

static int print_json(json_t *j) {
  char *s = NULL;
  size_t n = 0;
  pg_error e;
  if (!j || json_write_pretty(j, &s, &n, &e) != 0) {
    json_decref(j);
    pg_die_msg("cannot format JSON output");
    return -1;
  }
  fwrite(s, 1, n, stdout);
  free(s);
  json_decref(j);
  return 0;
}

/* Load FILE as a manifest or envelope whose payload must be a manifest. */
static int load_doc(const char *path, manifest_doc *d) {
  pg_error e;
  if (manifest_load(path, d, &e) != 0) return fail_input(&e);
  if (!d->payload_ok) {
    pg_error_print(&d->payload_err);
    manifest_doc_free(d);
    return PG_EXIT_USAGE;
  }
  return -1;
}

static int cmd_show(int argc, char **argv) {
  read_opts o = {0};
  const cli_option opts[] = {JSON_OPT(o), CLI_ARGS(&o.files, "FILE", NULL), CLI_END};
  const cli_command c = {.name = "manifest show",
                         .usage = SHOW_USAGE,
                         .about = SHOW_ABOUT,
                         .options = opts,
                         .footer = FOOTER};
  manifest_doc d;
  int rc = parse_read(&c, argc, argv, 1, &o);
  if (rc >= 0 || (rc = load_doc(o.files.v[0], &d)) >= 0) return rc;
  rc = PG_EXIT_OK;
  if (o.json)
    rc = print_json(manifest_show_json(&d)) == 0 ? PG_EXIT_OK : PG_EXIT_USAGE;
  else
    manifest_show_text(&d, stdout);
  manifest_doc_free(&d);
  return rc;
}

static int cmd_diff(int argc, char **argv) {
  read_opts o = {0};
  const cli_option opts[] = {JSON_OPT(o), CLI_ARGS(&o.files, "A B", NULL), CLI_END};
  const cli_command c = {.name = "manifest diff",
                         .usage = DIFF_USAGE,
                         .about = DIFF_ABOUT,
                         .options = opts,
                         .footer = FOOTER};
  manifest_doc a, b;
  int rc = parse_read(&c, argc, argv, 2, &o);
  if (rc >= 0 || (rc = load_doc(o.files.v[0], &a)) >= 0) return rc;
  if ((rc = load_doc(o.files.v[1], &b)) >= 0) {
    manifest_doc_free(&a);
    return rc;
  }
  manifest_difference d;
  manifest_diff(&a.m, &b.m, &d);
  rc = d.equal ? PG_EXIT_OK : PG_EXIT_CHECK_FAILED;
  if (o.json) {
    if (print_json(manifest_diff_json(&d)) != 0) rc = PG_EXIT_USAGE;
  } else {
    manifest_diff_text(&d, stdout);
  }
  manifest_doc_free(&a);
  manifest_doc_free(&b);
  return rc;
}

/* ---- verify ---- */

/* 0 signature verifies, else the exit code. */
static int check_signature(const manifest_doc *d, const char *path, const char *keyfile,
                           char keyid[SHA256_HEX_LEN + 1]) {
  pg_error e;
  EVP_PKEY *pub = NULL;
  if (key_load_public(keyfile, &pub, &e) != 0 || key_id(pub, keyid, &e) != 0) {
    EVP_PKEY_free(pub);
    return fail_input(&e);
  }
  int r = dsse_verify(&d->env, pub, path, &e);
  EVP_PKEY_free(pub);
  if (r == 0) return 0;
  pg_error_print(&e);
  return r > 0 ? PG_EXIT_CHECK_FAILED : PG_EXIT_USAGE;
}

static json_t *report_json(const char *path, const verify_report *r, const char *keyid) {
  json_t *fails = json_array(), *notes = json_array();
  for (size_t i = 0; i < r->n; i++) {
    char buf[PG_ERR_PATH + PG_ERR_MSG + 64];
    pg_error_format(&r->items[i].e, buf, sizeof buf);
    json_array_append_new(r->items[i].failed ? fails : notes, json_string(buf));
  }
  return json_pack("{s:s, s:b, s:s?, s:I, s:I, s:o, s:o}", "file", path, "ok", r->n_failed == 0,
                   "signed_by", keyid[0] ? keyid : NULL, "checked", (json_int_t)r->n_checked,
                   "skipped", (json_int_t)r->n_skipped, "failures", fails, "notes", notes);
}

static void report_text(const char *path, const verify_report *r, const char *keyid) {
  if (keyid[0]) printf("%s: signature by key %s verifies\n", path, keyid);
  for (size_t i = 0; i < r->n; i++) {
    if (r->items[i].failed) {
      pg_error_print(&r->items[i].e);
    } else {
      char buf[PG_ERR_PATH + PG_ERR_MSG + 64];
      pg_error_format(&r->items[i].e, buf, sizeof buf);
      printf("%s\n", buf);
    }
  }
  if (r->n_failed)
    printf("%s: verification FAILED: %zu problem%s\n", path, r->n_failed, r->n_failed > 1 ? "s" : "");
  else
    printf("%s: verified (%zu checks passed, %zu files absent and skipped)\n", path, r->n_checked,
           r->n_skipped);
}

static int verify_doc(const read_opts *o, manifest_doc *d) {
  char keyid[SHA256_HEX_LEN + 1] = "";
  const char *path = o->files.v[0];
  if (d->is_envelope && !o->key)
    return usage_error("verify", "the file is a DSSE envelope: --key PUB.pem is required");
  if (!d->is_envelope && o->key) {
    pg_error e;
    pg_fail(&e, path, -1, "not a DSSE envelope: there is no signature to check against --key");
    pg_error_print(&e);
    return PG_EXIT_CHECK_FAILED;
  }
  int rc;
  if (d->is_envelope && (rc = check_signature(d, path, o->key, keyid)) != 0) return rc;
  if (!d->payload_ok) return fail_input(&d->payload_err);
  verify_report r;
  memset(&r, 0, sizeof r);
  manifest_verify_chain(&d->m, d->name, &r);
  manifest_verify_files(&d->m, o->root ? o->root : ".", &r);
  rc = r.n_failed ? PG_EXIT_CHECK_FAILED : PG_EXIT_OK;
  if (o->json) {
    if (print_json(report_json(path, &r, keyid)) != 0) rc = PG_EXIT_USAGE;
    for (size_t i = 0; i < r.n; i++) /* keep the failures on stderr too */
      if (r.items[i].failed) pg_error_print(&r.items[i].e);
  } else {
    report_text(path, &r, keyid);
  }
  verify_report_free(&r);
  return rc;
}

static int cmd_manifest_verify(int argc, char **argv) {
  read_opts o = {0};
  const cli_option opts[] = {
      CLI_STRING("key", 0, &o.key, "PUB.pem", "the signer's public key (for an envelope)"),
      CLI_STRING("root", 0, &o.root, "DIR", "where the recorded files are (default .)"),
      JSON_OPT(o), CLI_ARGS(&o.files, "FILE", NULL), CLI_END};
  const cli_command c = {.name = "manifest verify",
                         .usage = VERIFY_USAGE,
                         .about = VERIFY_ABOUT,
                         .options = opts,
                         .footer = FOOTER};
  manifest_doc d;
  pg_error e;
  int rc = parse_read(&c, argc, argv, 1, &o);
  if (rc >= 0) return rc;
  if (manifest_load(o.files.v[0], &d, &e) != 0) return fail_input(&e);
  rc = verify_doc(&o, &d);
  manifest_doc_free(&d);
  return rc;
}

/* ---- keygen, sign ---- */

static int write_keys(const char *prefix, EVP_PKEY *k, pg_error *e) {
  char kp[PG_ERR_PATH], pp[PG_ERR_PATH];
  char *priv = NULL, *pub = NULL;
  size_t pl = 0, ul = 0;
  struct stat st;
  snprintf(kp, sizeof kp, "%s.key", prefix);
  snprintf(pp, sizeof pp, "%s.pub", prefix);
  if (stat(kp, &st) == 0) return pg_fail(e, kp, -1, "already exists; refusing to replace a key");
  int rc = key_private_pem(k, &priv, &pl, e);
  if (rc == 0) rc = key_public_pem(k, &pub, &ul, e);
  if (rc == 0) rc = file_write_atomic(kp, priv, pl, 0600, e);
  if (rc == 0) rc = file_write_atomic(pp, pub, ul, 0644, e);
  if (priv) OPENSSL_cleanse(priv, pl);
  free(priv);
  free(pub);
  return rc;
}

static int cmd_keygen(int argc, char **argv) {
  read_opts o = {0};
  const cli_option opts[] = {
      CLI_STRING("output", 'o', &o.out, "PREFIX", "write PREFIX.key and PREFIX.pub"),
      CLI_ARGS(&o.files, "", NULL), CLI_END};
  const cli_command c = {.name = "manifest keygen",
                         .usage = KEYGEN_USAGE,
                         .about = KEYGEN_ABOUT,
                         .options = opts,
                         .footer = FOOTER};
  int rc = parse_read(&c, argc, argv, 0, &o);
  if (rc >= 0) return rc;
  if (!o.out) return cli_usage_error(&c, "-o PREFIX is required");
  pg_error e;
  EVP_PKEY *k = NULL;
  char keyid[SHA256_HEX_LEN + 1];
  if (key_generate(&k, &e) != 0 || write_keys(o.out, k, &e) != 0 || key_id(k, keyid, &e) != 0) {
    EVP_PKEY_free(k);
    return fail_input(&e);
  }
  EVP_PKEY_free(k);
  printf("%s\n", keyid);
  return PG_EXIT_OK;
}

static int sign_file(const char *keyfile, const char *in, const char *out) {
  pg_error e;
  EVP_PKEY *k = NULL;
  uint8_t *buf = NULL;
  char *env = NULL, keyid[SHA256_HEX_LEN + 1];
  size_t len = 0, elen = 0;
  manifest m;
  int rc = key_load_private(keyfile, &k, &e);
  if (rc == 0) rc = file_read_all(in, MANIFEST_MAX_BYTES, &buf, &len, &e);
  /* Only a valid manifest is worth a signature. */
  if (rc == 0 && (rc = manifest_parse(buf, len, in, &m, &e)) == 0) manifest_free(&m);
  if (rc == 0) rc = dsse_sign(buf, len, k, &env, &elen, &e);
  if (rc == 0) rc = file_write_atomic(out, env, elen, 0644, &e);
  if (rc == 0) rc = key_id(k, keyid, &e);
  if (rc == 0) printf("signed %s with key %s: %s\n", in, keyid, out);
  EVP_PKEY_free(k);
  free(buf);
  free(env);
  return rc == 0 ? PG_EXIT_OK : fail_input(&e);
}

static int cmd_sign(int argc, char **argv) {
  read_opts o = {0};
  const cli_option opts[] = {CLI_STRING("key", 0, &o.key, "PRIV.pem", "the signing key"),
                             CLI_STRING("output", 'o', &o.out, "ENVELOPE", "the envelope to write"),
                             CLI_ARGS(&o.files, "MANIFEST", NULL), CLI_END};
  const cli_command c = {.name = "manifest sign",
                         .usage = SIGN_USAGE,
                         .about = SIGN_ABOUT,
                         .options = opts,
                         .footer = FOOTER};
  int rc = parse_read(&c, argc, argv, 1, &o);
  if (rc >= 0) return rc;
  if (!o.key || !o.out) return cli_usage_error(&c, "--key PRIV.pem and -o ENVELOPE are required");
  return sign_file(o.key, o.files.v[0], o.out);
}

int cmd_manifest(int argc, char **argv) {
  static const cli_sub subs[] = {{"create", cmd_create, CREATE_USAGE, CREATE_ABOUT},
                                 {"show", cmd_show, SHOW_USAGE, SHOW_ABOUT},
                                 {"verify", cmd_manifest_verify, VERIFY_USAGE, VERIFY_ABOUT},
                                 {"diff", cmd_diff, DIFF_USAGE, DIFF_ABOUT},
                                 {"keygen", cmd_keygen, KEYGEN_USAGE, KEYGEN_ABOUT},
                                 {"sign", cmd_sign, SIGN_USAGE, SIGN_ABOUT}};
  static const cli_group g = {.name = "manifest",
                              .usage = "pgolf manifest SUBCOMMAND [OPTIONS]",
                              .about = "Create, show, verify, diff and sign run manifests.",
                              .subs = subs,
                              .n_subs = sizeof subs / sizeof subs[0],
                              .footer = FOOTER};
  return cli_dispatch(&g, argc, argv);
}
