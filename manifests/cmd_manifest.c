/* pgolf manifest: create, show, verify, diff, keygen, sign.
 * This file only parses options, calls the library (manifests/manifest.h,
 * dsse.h, keys.h) and prints; exit codes: 0 ok, 1 a check failed,
 * 2 usage or input error. */
#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/fileio.h"
#include "common/verbs.h"
#include "manifests/dsse.h"
#include "common/json_read.h"
#include "manifests/keys.h"
#include "manifests/manifest.h"

static const char usage_text[] =
    "usage: pgolf manifest SUBCOMMAND [OPTIONS]\n"
    "\n"
    "  create --config CONFIG.json --tokenizer MODEL --data PATH... --seed N\n"
    "         [--losses FILE] [--artifact FILE] [--steps N] -o OUT.json\n"
    "      write a run manifest (in-toto Statement, predicate pgolf/run/v1).\n"
    "      PATH is a shard or a directory of fineweb_{train,val}_*.bin shards.\n"
    "      FILE of losses: lines `STEP LOSS [LR_MULT [WALL_MS]]`, LOSS as\n"
    "      0xXXXXXXXX (float32 bits) or decimal; '#' comments.\n"
    "  show FILE [--json]\n"
    "      summary of a manifest or of a DSSE envelope holding one.\n"
    "  verify FILE [--key PUB.pem] [--root DIR] [--json]\n"
    "      check structure, loss chain, subjects, and the digests of the\n"
    "      recorded files present under DIR (default .); an envelope needs\n"
    "      --key and its signature is checked first.\n"
    "  diff A B [--json]\n"
    "      first deterministic difference (config, data, step losses).\n"
    "  keygen -o PREFIX\n"
    "      new Ed25519 key: PREFIX.key (PKCS#8, mode 0600), PREFIX.pub; prints the keyid.\n"
    "  sign --key PRIV.pem MANIFEST -o ENVELOPE\n"
    "      DSSE envelope over the exact bytes of MANIFEST.\n"
    "\n"
    "Exit codes: 0 ok, 1 a check failed or manifests differ, 2 usage or input error.\n";

static int usage_error(const char *sub, const char *msg) {
  pg_die_msg("manifest %s: %s (try `pgolf manifest %s --help`)", sub, msg, sub);
  return PG_EXIT_USAGE;
}

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* 1: argv[*i] is option `name` (or "name=value"), value in *val and *i
 * advanced; 0: it is not; -1: it is but has no value. */
static int take(int argc, char **argv, int *i, const char *name, const char **val) {
  size_t n = strlen(name);
  const char *a = argv[*i];
  if (strncmp(a, name, n) != 0) return 0;
  if (a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if (a[n] || *i + 1 >= argc) return a[n] ? 0 : -1;
  *val = argv[++*i];
  return 1;
}

static int parse_count(const char *s, uint64_t *out) {
  char *end;
  if (!s[0] || s[0] == '-' || s[0] == '+') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno || v > (unsigned long long)INT64_MAX) return -1;
  *out = v;
  return 0;
}

static int fail_input(const pg_error *e) {
  pg_error_print(e);
  return PG_EXIT_USAGE;
}

/* ---- create ---- */

typedef struct create_opts {
  manifest_inputs in;
  const char *out;
  const char **data;
  int have_seed;
} create_opts;

static int create_opt(int argc, char **argv, int *i, create_opts *o) {
  const char *v = NULL;
  int r;
  uint64_t n;
#define OPT(name, field) \
  if ((r = take(argc, argv, i, name, &v)) != 0) return r < 0 ? -1 : (field = v, 0);
  OPT("--config", o->in.config_path);
  OPT("--tokenizer", o->in.tokenizer_path);
  OPT("--losses", o->in.losses_path);
  OPT("--artifact", o->in.artifact_path);
  OPT("--output", o->out);
  OPT("-o", o->out);
#undef OPT
  if ((r = take(argc, argv, i, "--seed", &v)) != 0) {
    if (r < 0 || parse_count(v, &n) != 0) return -1;
    o->in.seed = n, o->have_seed = 1;
    return 0;
  }
  if ((r = take(argc, argv, i, "--steps", &v)) != 0) {
    if (r < 0 || parse_count(v, &n) != 0) return -1;
    o->in.total_steps = (int64_t)n;
    return 0;
  }
  if ((r = take(argc, argv, i, "--data", &v)) != 0) {
    if (r < 0) return -1;
    o->data[o->in.n_data++] = v;
    /* --data takes every following argument up to the next option */
    while (*i + 1 < argc && argv[*i + 1][0] != '-') o->data[o->in.n_data++] = argv[++*i];
    return 0;
  }
  return -2;
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
  create_opts o;
  memset(&o, 0, sizeof o);
  o.in.total_steps = -1;
  o.data = calloc((size_t)argc, sizeof *o.data);
  if (!o.data) abort();
  o.in.data_paths = o.data;
  for (int i = 1; i < argc; i++) {
    if (is_help(argv[i])) return free(o.data), fputs(usage_text, stdout), PG_EXIT_OK;
    int r = create_opt(argc, argv, &i, &o);
    if (r != 0) {
      char msg[256];
      snprintf(msg, sizeof msg, r == -2 ? "unknown argument '%.100s'" : "bad or missing value for %.100s", argv[i]);
      free(o.data);
      return usage_error("create", msg);
    }
  }
  int rc;
  if (!o.in.config_path || !o.in.tokenizer_path || !o.in.n_data || !o.have_seed || !o.out)
    rc = usage_error("create", "--config, --tokenizer, --data, --seed and -o are required");
  else
    rc = create_run(&o);
  free(o.data);
  return rc;
}

/* ---- show, verify, diff: positional files and a few options ---- */

typedef struct read_opts {
  const char *files[2];
  int n_files, json;
  const char *key, *root, *out;
} read_opts;

/* Parse argv for sub; allowed lists the options it takes. Returns -1 on
 * success, an exit code otherwise (help or usage error). */
static int parse_read_opts(int argc, char **argv, const char *sub, const char *allowed, int want_files,
                           read_opts *o) {
  memset(o, 0, sizeof *o);
  char msg[256];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int r = 0;
    if (is_help(a)) return fputs(usage_text, stdout), PG_EXIT_OK;
    if (strstr(allowed, "json") && !strcmp(a, "--json")) {
      o->json = 1;
      continue;
    }
    if ((strstr(allowed, "key") && (r = take(argc, argv, &i, "--key", &o->key)) != 0) ||
        (strstr(allowed, "root") && (r = take(argc, argv, &i, "--root", &o->root)) != 0) ||
        (strstr(allowed, "out") && ((r = take(argc, argv, &i, "--output", &o->out)) != 0 ||
                                    (r = take(argc, argv, &i, "-o", &o->out)) != 0))) {
      if (r < 0) return snprintf(msg, sizeof msg, "%.100s needs a value", a), usage_error(sub, msg);
      continue;
    }
    if (a[0] == '-' && a[1])
      return snprintf(msg, sizeof msg, "unknown option '%.100s'", a), usage_error(sub, msg);
    if (o->n_files == want_files)
      return snprintf(msg, sizeof msg, "unexpected argument '%.100s'", a), usage_error(sub, msg);
    o->files[o->n_files++] = a;
  }
  if (o->n_files != want_files) {
    snprintf(msg, sizeof msg, "expected %d file argument%s", want_files, want_files > 1 ? "s" : "");
    return usage_error(sub, msg);
  }
  return -1;
}

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
  read_opts o;
  manifest_doc d;
  int rc = parse_read_opts(argc, argv, "show", "json", 1, &o);
  if (rc >= 0 || (rc = load_doc(o.files[0], &d)) >= 0) return rc;
  rc = PG_EXIT_OK;
  if (o.json)
    rc = print_json(manifest_show_json(&d)) == 0 ? PG_EXIT_OK : PG_EXIT_USAGE;
  else
    manifest_show_text(&d, stdout);
  manifest_doc_free(&d);
  return rc;
}

static int cmd_diff(int argc, char **argv) {
  read_opts o;
  manifest_doc a, b;
  int rc = parse_read_opts(argc, argv, "diff", "json", 2, &o);
  if (rc >= 0 || (rc = load_doc(o.files[0], &a)) >= 0) return rc;
  if ((rc = load_doc(o.files[1], &b)) >= 0) {
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
  const char *path = o->files[0];
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

static int cmd_verify(int argc, char **argv) {
  read_opts o;
  manifest_doc d;
  pg_error e;
  int rc = parse_read_opts(argc, argv, "verify", "json key root", 1, &o);
  if (rc >= 0) return rc;
  if (manifest_load(o.files[0], &d, &e) != 0) return fail_input(&e);
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
  read_opts o;
  int rc = parse_read_opts(argc, argv, "keygen", "out", 0, &o);
  if (rc >= 0) return rc;
  if (!o.out) return usage_error("keygen", "-o PREFIX is required");
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
  read_opts o;
  int rc = parse_read_opts(argc, argv, "sign", "key out", 1, &o);
  if (rc >= 0) return rc;
  if (!o.key || !o.out) return usage_error("sign", "--key PRIV.pem and -o ENVELOPE are required");
  return sign_file(o.key, o.files[0], o.out);
}

int cmd_manifest(int argc, char **argv) {
  static const struct {
    const char *name;
    int (*run)(int, char **);
  } subs[] = {{"create", cmd_create}, {"show", cmd_show},     {"verify", cmd_verify},
              {"diff", cmd_diff},     {"keygen", cmd_keygen}, {"sign", cmd_sign}};
  if (argc < 2) {
    fputs(usage_text, stderr);
    return PG_EXIT_USAGE;
  }
  if (is_help(argv[1])) {
    fputs(usage_text, stdout);
    return PG_EXIT_OK;
  }
  for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
    if (!strcmp(argv[1], subs[i].name)) return subs[i].run(argc - 1, argv + 1);
  pg_die_msg("manifest: unknown subcommand '%s' (try `pgolf manifest --help`)", argv[1]);
  return PG_EXIT_USAGE;
}
