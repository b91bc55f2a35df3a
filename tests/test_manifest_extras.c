/* manifest_create_ex: a trainer's in-memory configuration, loss records,
 * init record, schedule plan, evaluation and code+model accounting land
 * where manifest.h says, the chain over in-memory records equals the
 * chain over the same records from a file, and the reader checks
 * predicate.init when present. */
#include "tests/test_util.h"

#include <sys/stat.h>

#include "common/fileio.h"
#include "common/json_read.h"
#include "manifests/loss_chain.h"
#include "manifests/manifest.h"

#define TOKENIZER "data/tokenizers/fineweb_1024_bpe.model"

typedef struct fx {
  char *dir;
  char data[600], art[600], cfg[600], losses[600];
} fx;

static void write_shard(const char *path, uint32_t n) {
  uint8_t *buf = calloc(1, 1024 + 2 * (size_t)n);
  uint32_t hdr[3] = {20240520, 1, n};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 4; b++) buf[4 * i + b] = (uint8_t)(hdr[i] >> (8 * b));
  for (uint32_t i = 0; i < n; i++) buf[1024 + 2 * i] = (uint8_t)(i % 7);
  test_write_file(path, buf, 1024 + 2 * (size_t)n);
  free(buf);
}

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  f->dir = test_tmpdir();
  char p[700];
  snprintf(f->data, sizeof f->data, "%s/data", f->dir);
  assert_int_equal(mkdir(f->data, 0755), 0);
  snprintf(p, sizeof p, "%s/fineweb_train_000000.bin", f->data);
  write_shard(p, 10);
  snprintf(p, sizeof p, "%s/fineweb_val_000000.bin", f->data);
  write_shard(p, 5);
  snprintf(f->art, sizeof f->art, "%s/model.int8.ptz", f->dir);
  test_write_file(f->art, "0123456789", 10);
  snprintf(f->cfg, sizeof f->cfg, "%s/config.json", f->dir);
  test_write_file(f->cfg, "{\"lr\": 0.5}", 11);
  snprintf(f->losses, sizeof f->losses, "%s/losses.txt", f->dir);
  const char *l = "1 0x40c80000 0x3f800000 5\n2 0x40a00000 0x3f000000 9\n";
  test_write_file(f->losses, l, strlen(l));
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  test_rmdir(f->dir);
  free(f);
  return 0;
}

static loss_record rec(uint64_t step, uint32_t bits, uint32_t lr, double ms) {
  loss_record r;
  memset(&r, 0, sizeof r);
  r.step = step;
  r.loss_bits = bits;
  r.lr_mult_bits = lr;
  r.wall_ms = ms;
  r.has_lr_mult = r.has_wall_ms = 1;
  return r;
}

static void extras_land(void **state) {
  fx *f = *state;
  const char *data[] = {f->data};
  manifest_inputs in;
  memset(&in, 0, sizeof in);
  in.tokenizer_path = TOKENIZER;
  in.data_paths = data;
  in.n_data = 1;
  in.seed = 7;
  in.artifact_path = f->art;
  in.total_steps = 2;
  in.threads = 2;
  loss_record recs[2] = {rec(1, 0x40c80000u, 0x3f800000u, 5), rec(2, 0x40a00000u, 0x3f000000u, 9)};
  manifest_extras x;
  memset(&x, 0, sizeof x);
  x.config = json_pack("{s:f}", "lr", 0.5);
  x.loss_recs = recs;
  x.n_loss_recs = 2;
  x.losses_in_memory = 1;
  x.init = json_pack("{s:s, s:[]}", "sha256", "ab" "00000000000000000000000000000000000000000000000000000000000000", "tensors");
  x.wall_clock_budget_s = 60;
  x.schedule = json_pack("{s:{s:i}}", "plan", "planned_steps", 2);
  x.evaluation = json_pack("{s:s, s:f}", "mode", "int8_zlib_roundtrip", "val_bpb", 1.25);
  x.code_bytes = 1000;
  x.code_rule = "the rule";
  x.tokens_consumed = 64;
  x.timing = json_pack("{s:f}", "train_ms", 12.0);
  char *text;
  size_t len;
  pg_error e;
  if (manifest_create_ex(&in, &x, &text, &len, &e) != 0) fail_msg("%s", e.msg);
  manifest m;
  assert_int_equal(manifest_parse((const uint8_t *)text, len, "m.json", &m, &e), 0);
  /* the head is the chain over the records */
  uint64_t steps[2] = {1, 2};
  uint32_t bits[2] = {0x40c80000u, 0x40a00000u};
  uint8_t head[SHA256_LEN];
  loss_chain_head(steps, bits, 2, head);
  assert_memory_equal(m.head, head, SHA256_LEN);
  assert_int_equal(m.n_steps, 2);
  assert_int_equal(m.steps[1].lr_mult_bits, 0x3f000000u);
  assert_int_equal(m.has_init, 1);
  assert_int_equal(m.init_sha256[0], 0xab);
  json_t *p = json_object_get(m.root, "predicate");
  json_t *a = json_object_get(p, "artifact");
  assert_int_equal(json_integer_value(json_object_get(a, "code_bytes")), 1000);
  assert_int_equal(json_integer_value(json_object_get(a, "model_bytes")), 10);
  assert_int_equal(json_integer_value(json_object_get(a, "total_bytes")), 1010);
  assert_int_equal(json_integer_value(json_object_get(a, "limit_bytes")), 16000000);
  assert_string_equal(json_string_value(json_object_get(a, "code_rule")), "the rule");
  json_t *s = json_object_get(p, "schedule");
  assert_true(json_real_value(json_object_get(s, "wall_clock_budget_s")) == 60.0);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(s, "plan"), "planned_steps")), 2);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "data"), "tokens_consumed")), 64);
  assert_string_equal(json_string_value(json_object_get(m.evaluation, "mode")), "int8_zlib_roundtrip");
  assert_true(json_real_value(json_object_get(m.timing, "train_ms")) == 12.0);
  assert_true(json_real_value(json_object_get(m.config, "lr")) == 0.5);

  /* the same records from a file give the same head */
  manifest_inputs in2 = in;
  in2.config_path = f->cfg;
  in2.losses_path = f->losses;
  char *text2;
  size_t len2;
  assert_int_equal(manifest_create(&in2, &text2, &len2, &e), 0);
  manifest m2;
  assert_int_equal(manifest_parse((const uint8_t *)text2, len2, "m2.json", &m2, &e), 0);
  assert_memory_equal(m2.head, m.head, SHA256_LEN);
  assert_int_equal(m2.has_init, 0);

  /* steps out of order are refused */
  recs[1].step = 1;
  assert_int_equal(manifest_create_ex(&in, &x, &text2, &len2, &e), -1);
  assert_non_null(strstr(e.msg, "step"));

  manifest_free(&m);
  manifest_free(&m2);
  free(text);
  free(text2);
  json_decref(x.config);
  json_decref(x.init);
  json_decref(x.schedule);
  json_decref(x.evaluation);
  json_decref(x.timing);
}

/* A malformed predicate.init is named by its path. */
static void init_checked(void **state) {
  fx *f = *state;
  const char *data[] = {f->data};
  manifest_inputs in;
  memset(&in, 0, sizeof in);
  in.tokenizer_path = TOKENIZER;
  in.data_paths = data;
  in.n_data = 1;
  in.config_path = f->cfg;
  in.total_steps = -1;
  manifest_extras x;
  memset(&x, 0, sizeof x);
  x.init = json_pack("{s:s, s:[]}", "sha256", "not-hex", "tensors");
  char *text;
  size_t len;
  pg_error e;
  assert_int_equal(manifest_create_ex(&in, &x, &text, &len, &e), 0);
  manifest m;
  assert_int_equal(manifest_parse((const uint8_t *)text, len, "m.json", &m, &e), -1);
  assert_non_null(strstr(e.msg, "predicate.init.sha256"));
  free(text);
  json_decref(x.init);
  x.init = json_pack("{s:s}", "sha256", "00000000000000000000000000000000000000000000000000000000000000ab");
  assert_int_equal(manifest_create_ex(&in, &x, &text, &len, &e), 0);
  assert_int_equal(manifest_parse((const uint8_t *)text, len, "m.json", &m, &e), -1);
  assert_non_null(strstr(e.msg, "predicate.init.tensors"));
  free(text);
  json_decref(x.init);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(extras_land, setup, teardown),
      cmocka_unit_test_setup_teardown(init_checked, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
