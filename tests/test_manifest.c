/* Run manifests: create -> verify roundtrip in a temp dir, each kind of
 * tampering found with its own message, structural errors naming the
 * JSON path, and diff. */
#include "tests/test_util.h"

#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/loss_chain.h"
#include "manifests/manifest.h"

#define TOKENIZER "data/tokenizers/fineweb_1024_bpe.model"

typedef struct fixture {
  char *dir;
  char data[600], cfg[600], losses[600], tok[600], art[600];
} fixture;

static void write_shard(const char *path, const uint16_t *toks, uint32_t n) {
  uint8_t *buf = calloc(1, 1024 + 2 * (size_t)n);
  assert_non_null(buf);
  uint32_t hdr[3] = {20240520, 1, n};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 4; b++) buf[4 * i + b] = (uint8_t)(hdr[i] >> (8 * b));
  for (uint32_t i = 0; i < n; i++) buf[1024 + 2 * i] = (uint8_t)toks[i], buf[1025 + 2 * i] = (uint8_t)(toks[i] >> 8);
  test_write_file(path, buf, 1024 + 2 * (size_t)n);
  free(buf);
}

static void copy_file(const char *from, const char *to) {
  uint8_t *buf = NULL;
  size_t n = 0;
  pg_error e;
  assert_int_equal(file_read_all(from, 1 << 26, &buf, &n, &e), 0);
  test_write_file(to, buf, n);
  free(buf);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->dir = test_tmpdir();
  char p[700];
  snprintf(f->data, sizeof f->data, "%s/data", f->dir);
  assert_int_equal(mkdir(f->data, 0755), 0);
  uint16_t a[] = {1, 2, 3, 1023}, b[] = {5, 6};
  snprintf(p, sizeof p, "%s/fineweb_train_000000.bin", f->data);
  write_shard(p, a, 4);
  snprintf(p, sizeof p, "%s/fineweb_val_000000.bin", f->data);
  write_shard(p, b, 2);
  snprintf(f->cfg, sizeof f->cfg, "%s/config.json", f->dir);
  test_write_file(f->cfg, "{\"lr\": 0.04, \"layers\": 9}", 25);
  snprintf(f->losses, sizeof f->losses, "%s/losses.txt", f->dir);
  const char *l = "0 6.9375\n1 0x40c80000 1.0 5\n2 5.5\n";
  test_write_file(f->losses, l, strlen(l));
  snprintf(f->tok, sizeof f->tok, "%s/tok.model", f->dir);
  copy_file(TOKENIZER, f->tok);
  snprintf(f->art, sizeof f->art, "%s/model.bin", f->dir);
  test_write_file(f->art, "weights", 7);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  test_rmdir(f->dir);
  free(f);
  return 0;
}

static void create(fixture *f, const char *losses, manifest *m) {
  const char *data[] = {f->data};
  manifest_inputs in = {f->cfg, f->tok, data, 1, 42, losses, f->art, -1, 1};
  char *text = NULL;
  size_t len = 0;
  pg_error e;
  if (manifest_create(&in, &text, &len, &e) != 0) fail_msg("create: %s: %s", e.file, e.msg);
  assert_int_equal(manifest_parse((const uint8_t *)text, len, "run.json", m, &e), 0);
  free(text);
}

/* Verify m fully; returns the report (caller frees). */
static verify_report verify(const manifest *m) {
  verify_report r;
  memset(&r, 0, sizeof r);
  manifest_verify_chain(m, "run.json", &r);
  manifest_verify_files(m, ".", &r);
  return r;
}

/* Exactly one failure, containing each of the needles. */
static void expect_one_failure(const manifest *m, const char *needle, const char *needle2) {
  verify_report r = verify(m);
  if (r.n_failed != 1) {
    for (size_t i = 0; i < r.n; i++) fprintf(stderr, "  %d %s\n", r.items[i].failed, r.items[i].e.msg);
    fail_msg("%zu failures, wanted 1 (%s)", r.n_failed, needle);
  }
  for (size_t i = 0; i < r.n; i++)
    if (r.items[i].failed) {
      if (!strstr(r.items[i].e.msg, needle)) fail_msg("'%s' lacks '%s'", r.items[i].e.msg, needle);
      if (needle2 && !strstr(r.items[i].e.msg, needle2))
        fail_msg("'%s' lacks '%s'", r.items[i].e.msg, needle2);
    }
  verify_report_free(&r);
}

/* Re-read m after edit() changed its JSON. */
static void reparse(manifest *m) {
  json_t *root = json_incref(m->root);
  manifest_free(m);
  pg_error e;
  if (manifest_from_json(root, "run.json", m, &e) != 0) fail_msg("reparse: %s", e.msg);
  json_decref(root);
}

static json_t *step_json(manifest *m, size_t i) {
  return json_array_get(json_object_get(json_object_get(json_object_get(m->root, "predicate"), "losses"), "steps"), i);
}

static void roundtrip(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, f->losses, &m);
  assert_int_equal(m.seed, 42);
  assert_int_equal(m.n_shards, 2);
  assert_int_equal(m.shards[0].tokens, 4);
  assert_string_equal(m.shards[1].split, "val");
  assert_int_equal(m.vocab_size, 1024);
  assert_int_equal(m.n_steps, 3);
  assert_int_equal(m.steps[0].loss_bits, 0x40de0000u);
  assert_int_equal(m.total_steps, 3);
  assert_true(m.has_artifact);
  assert_int_equal(m.artifact.bytes, 7);
  uint64_t steps[] = {0, 1, 2};
  uint32_t bits[] = {0x40de0000u, 0x40c80000u, 0x40b00000u};
  uint8_t head[SHA256_LEN];
  loss_chain_head(steps, bits, 3, head);
  assert_memory_equal(m.head, head, SHA256_LEN);
  verify_report r = verify(&m);
  assert_int_equal(r.n_failed, 0);
  assert_int_equal(r.n_checked, 5); /* chain, tokenizer, 2 shards, artifact */
  assert_int_equal(r.n_skipped, 0);
  verify_report_free(&r);
  manifest_free(&m);
}

static void no_losses_is_empty_chain(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, NULL, &m);
  uint8_t c0[SHA256_LEN];
  loss_chain_init(c0);
  assert_int_equal(m.n_steps, 0);
  assert_int_equal(m.total_steps, -1);
  assert_memory_equal(m.head, c0, SHA256_LEN);
  verify_report r = verify(&m);
  assert_int_equal(r.n_failed, 0);
  verify_report_free(&r);
  manifest_free(&m);
}

static void tamper_loss_bit(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, f->losses, &m);
  json_object_set_new(step_json(&m, 1), "loss_bits", json_string("0x40c80001"));
  reparse(&m);
  expect_one_failure(&m, "step 1: loss_bits 0x40c80001 do not match the recorded chain link", NULL);
  manifest_free(&m);
}

static void tamper_head_and_subject(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, f->losses, &m);
  json_t *subj = json_array_get(json_object_get(m.root, "subject"), 1);
  json_object_set_new(json_object_get(subj, "digest"), "sha256",
                      json_string("1111111111111111111111111111111111111111111111111111111111111111"));
  reparse(&m);
  expect_one_failure(&m, "'loss-chain': digest 1111", "disagrees with the loss chain head");
  manifest_free(&m);

  create(f, f->losses, &m);
  json_t *losses = json_object_get(json_object_get(m.root, "predicate"), "losses");
  json_t *chain = json_object_get(json_array_get(json_object_get(m.root, "subject"), 1), "digest");
  json_object_set_new(losses, "chain",
                      json_string("2222222222222222222222222222222222222222222222222222222222222222"));
  json_object_set_new(chain, "sha256",
                      json_string("2222222222222222222222222222222222222222222222222222222222222222"));
  reparse(&m); /* head and subject agree, but not with the steps */
  expect_one_failure(&m, "wrong chain head 2222", NULL);
  manifest_free(&m);
}

static void tamper_files(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, f->losses, &m);
  char p[700];
  snprintf(p, sizeof p, "%s/fineweb_val_000000.bin", f->data);
  uint16_t c[] = {5, 7};
  write_shard(p, c, 2);
  expect_one_failure(&m, "shard fineweb_val_000000.bin changed: recorded sha256", "actual");
  uint16_t b[] = {5, 6};
  write_shard(p, b, 2);
  test_write_file(f->tok, "not a model", 11);
  expect_one_failure(&m, "tokenizer", "changed: recorded sha256");
  copy_file(TOKENIZER, f->tok);
  test_write_file(f->art, "weightz", 7);
  expect_one_failure(&m, "artifact model.bin changed", NULL);
  test_write_file(f->art, "weights", 7);
  unlink(p);
  verify_report r = verify(&m);
  assert_int_equal(r.n_failed, 0);
  assert_int_equal(r.n_skipped, 1);
  verify_report_free(&r);
  manifest_free(&m);
}

static void expect_bad_json(const char *text, const char *what) {
  manifest m;
  pg_error e;
  memset(&e, 0, sizeof e);
  assert_int_equal(manifest_parse((const uint8_t *)text, strlen(text), "run.json", &m, &e), -1);
  if (!strstr(e.msg, what)) fail_msg("'%s' lacks '%s'", e.msg, what);
}

static void structural_errors(void **state) {
  fixture *f = *state;
  manifest m;
  create(f, f->losses, &m);
  json_object_set_new(step_json(&m, 1), "loss_bits", json_string("0x40C80000")); /* uppercase */
  char *s = json_dumps(m.root, 0);
  expect_bad_json(s, "predicate.losses.steps[1].loss_bits: expected \"0x\" and 8 hex digits");
  free(s);
  json_object_set_new(step_json(&m, 1), "loss_bits", json_string("0x40c80000"));
  json_object_set_new(step_json(&m, 2), "step", json_integer(1));
  s = json_dumps(m.root, 0);
  expect_bad_json(s, "predicate.losses.steps[2].step: not greater than the previous step");
  free(s);
  json_object_set_new(step_json(&m, 2), "step", json_integer(-5));
  s = json_dumps(m.root, 0);
  expect_bad_json(s, "predicate.losses.steps[2].step: -5 is outside");
  free(s);
  json_object_del(json_object_get(m.root, "predicate"), "data");
  s = json_dumps(m.root, 0);
  expect_bad_json(s, "predicate.data: missing");
  free(s);
  manifest_free(&m);
  expect_bad_json("{\"_type\": \"https://in-toto.io/Statement/v1\",\n \"_type\": 1}", "duplicate");
  expect_bad_json("{\"_type\": \"x\"}", "_type: expected \"https://in-toto.io/Statement/v1\"");
  pg_error e;
  assert_int_equal(manifest_parse((const uint8_t *)"{\n\n  nope", 10, "run.json", &m, &e), -1);
  assert_true(e.pos_is_line);
  assert_int_equal(e.pos, 3);
}

static void diff(void **state) {
  fixture *f = *state;
  manifest a, b;
  manifest_difference d;
  create(f, f->losses, &a);
  create(f, f->losses, &b);
  manifest_diff(&a, &b, &d);
  assert_true(d.equal);
  assert_non_null(strstr(d.info, "timing"));
  const char *l = "0 6.9375\n1 0x40c80000 1.0 5\n2 5.25\n";
  test_write_file(f->losses, l, strlen(l));
  manifest_free(&b);
  create(f, f->losses, &b);
  manifest_diff(&a, &b, &d);
  assert_false(d.equal);
  assert_true(d.is_step);
  assert_int_equal(d.step, 2);
  assert_int_equal(d.a_bits, 0x40b00000u);
  assert_int_equal(d.b_bits, 0x40a80000u);
  json_object_set_new(json_object_get(json_object_get(b.root, "predicate"), "config"), "lr", json_real(0.05));
  manifest_diff(&a, &b, &d);
  assert_string_equal(d.field, "predicate.config.lr"); /* config comes first */
  manifest_free(&a);
  manifest_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(roundtrip, setup, teardown),
      cmocka_unit_test_setup_teardown(no_losses_is_empty_chain, setup, teardown),
      cmocka_unit_test_setup_teardown(tamper_loss_bit, setup, teardown),
      cmocka_unit_test_setup_teardown(tamper_head_and_subject, setup, teardown),
      cmocka_unit_test_setup_teardown(tamper_files, setup, teardown),
      cmocka_unit_test_setup_teardown(structural_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(diff, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
