/* Run configuration: presets hold the official defaults, JSON overrides
 * apply, every bad key or value is an error naming the key, and the
 * printed configuration reads back to the same one. */
#include "tests/test_util.h"

#include "common/json_read.h"
#include "trainer/train_config.h"

static int parse(train_config *c, const char *text, pg_error *e) {
  return train_config_parse(c, (const uint8_t *)text, strlen(text), "cfg.json", e);
}

static void baseline_is_official(void **state) {
  (void)state;
  train_config c;
  pg_error e;
  assert_int_equal(train_config_preset("baseline", &c, &e), 0);
  assert_int_equal(c.model.num_layers, 9);
  assert_int_equal(c.model.model_dim, 512);
  assert_int_equal(c.model.num_heads, 8);
  assert_int_equal(c.model.num_kv_heads, 4);
  assert_int_equal(c.model.seq_len, 1024);
  assert_int_equal(c.train_batch_tokens, 524288);
  assert_int_equal(c.grad_accum_steps, 8);
  assert_int_equal(c.opt.iterations, 20000);
  assert_int_equal(c.opt.warmdown_iters, 1200);
  assert_true(c.opt.tied_embed_lr == 0.05 && c.opt.matrix_lr == 0.04 && c.opt.scalar_lr == 0.04);
  assert_true(c.opt.muon_momentum == 0.95 && c.opt.muon_momentum_warmup_start == 0.85);
  assert_int_equal(c.opt.muon_momentum_warmup_steps, 500);
  assert_int_equal(c.opt.muon_backend_steps, 5);
  assert_true(c.opt.beta1 == 0.9 && c.opt.beta2 == 0.95 && c.opt.adam_eps == 1e-8);
  assert_true(c.opt.grad_clip_norm == 0.0);
  assert_int_equal(c.seed, 1337);
  assert_int_equal(c.val_loss_every, 1000);
  assert_int_equal(c.train_log_every, 200);
  assert_int_equal(train_config_micro_batch(&c), 64);
  assert_int_equal(train_config_check(&c, &e), 0);
}

static void tiny_preset(void **state) {
  (void)state;
  train_config c;
  pg_error e;
  assert_int_equal(train_config_preset("tiny", &c, &e), 0);
  assert_int_equal(c.model.seq_len, 128);
  assert_int_equal(c.train_batch_tokens, 8192);
  assert_int_equal(train_config_micro_batch(&c), 8);
  assert_int_equal(c.val_loss_every, 0);
  assert_int_equal(train_config_check(&c, &e), 0);
  assert_int_equal(train_config_preset("huge", &c, &e), -1);
  assert_non_null(strstr(e.msg, "huge"));
}

static void overrides_apply(void **state) {
  (void)state;
  train_config c;
  pg_error e;
  train_config_preset("baseline", &c, &e);
  /* preset applies first even when it is not the first key */
  assert_int_equal(parse(&c, "{\"iterations\": 7, \"preset\": \"tiny\", \"matrix_lr\": 0.02,"
                             " \"precision\": \"mixed\", \"seed\": 42, \"data\": \"d\"}", &e), 0);
  assert_int_equal(c.opt.iterations, 7);
  assert_int_equal(c.model.model_dim, 64);
  assert_true(c.opt.matrix_lr == 0.02);
  assert_int_equal(c.precision, TRAIN_MIXED);
  assert_int_equal(c.seed, 42);
  assert_string_equal(c.data, "d");
  assert_string_equal(c.preset, "tiny");
  /* an integer is a valid number for a real key */
  assert_int_equal(parse(&c, "{\"grad_clip_norm\": 1}", &e), 0);
  assert_true(c.opt.grad_clip_norm == 1.0);
}

/* Each bad input fails and the message names the key. */
static void bad_keys_named(void **state) {
  (void)state;
  static const struct {
    const char *json, *key;
  } cases[] = {
      {"{\"learning_rate\": 0.1}", "learning_rate"},
      {"{\"iterations\": -1}", "iterations"},
      {"{\"iterations\": 1000001}", "iterations"},
      {"{\"iterations\": 1.5}", "iterations"},
      {"{\"iterations\": \"10\"}", "iterations"},
      {"{\"matrix_lr\": -0.1}", "matrix_lr"},
      {"{\"matrix_lr\": \"x\"}", "matrix_lr"},
      {"{\"adam_eps\": 0}", "adam_eps"},
      {"{\"rope_base\": 2e-101}", "rope_base"}, /* above 0, but 0 as a float */
      {"{\"logit_softcap\": 1e-46}", "logit_softcap"},
      {"{\"beta2\": 1.5}", "beta2"},
      {"{\"precision\": \"bf16\"}", "precision"},
      {"{\"num_layers\": 0}", "num_layers"},
      {"{\"seed\": -3}", "seed"},
      {"{\"threads\": 100000}", "threads"},
      {"{\"preset\": \"huge\"}", "preset"},
      {"{\"preset\": 3}", "preset"},
      {"{\"data\": \"\"}", "data"},
      {"{\"warmup_steps\": 20}", "warmup_steps"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    train_config c;
    pg_error e;
    train_config_preset("tiny", &c, &e);
    assert_int_equal(parse(&c, cases[i].json, &e), -1);
    char want[96];
    snprintf(want, sizeof want, "\"%s\"", cases[i].key);
    if (!strstr(e.msg, want)) fail_msg("%s: message does not name the key: %s", cases[i].json, e.msg);
    assert_string_equal(e.file, "cfg.json");
  }
}

static void structural_errors(void **state) {
  (void)state;
  train_config c;
  pg_error e;
  train_config_preset("tiny", &c, &e);
  assert_int_equal(parse(&c, "[1]", &e), -1);
  assert_int_equal(parse(&c, "{\"seed\": 1, \"seed\": 2}", &e), -1); /* duplicate */
  assert_int_equal(parse(&c, "{\"seed\": ", &e), -1);
  assert_int_equal(e.pos_is_line, 1);
}

static void cross_key_checks(void **state) {
  (void)state;
  train_config c;
  pg_error e;
  train_config_preset("tiny", &c, &e);
  c.train_batch_tokens = 8192 + 128; /* not a multiple of 8 x 128 */
  assert_int_equal(train_config_check(&c, &e), -1);
  assert_non_null(strstr(e.msg, "train_batch_tokens"));
  train_config_preset("tiny", &c, &e);
  c.model.num_heads = 3; /* 64 % 3 != 0 */
  assert_int_equal(train_config_check(&c, &e), -1);
  train_config_preset("tiny", &c, &e);
  c.val_batch_size = 64;
  assert_int_equal(train_config_check(&c, &e), -1);
  assert_non_null(strstr(e.msg, "val_batch_size"));
}

/* Printing and reading back gives the same bytes of configuration. */
static void print_read_roundtrip(void **state) {
  (void)state;
  train_config a, b;
  pg_error e;
  train_config_preset("tiny", &a, &e);
  a.opt.matrix_lr = 0.1 + 0.2; /* not a short decimal */
  a.model.tied_embed_init_std = 0.007f;
  a.seed = 9223372036854775807ull;
  snprintf(a.tokenizer, sizeof a.tokenizer, "tok.model");
  json_t *j = train_config_to_json(&a);
  assert_non_null(j);
  char *text = json_dumps(j, JSON_PRESERVE_ORDER);
  train_config_preset("baseline", &b, &e);
  assert_int_equal(parse(&b, text, &e), 0);
  assert_memory_equal(&a, &b, sizeof a);
  /* every key appears */
  assert_non_null(json_object_get(j, "muon_backend_steps"));
  assert_true(json_is_null(json_object_get(j, "data")));
  free(text);
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(baseline_is_official), cmocka_unit_test(tiny_preset),
      cmocka_unit_test(overrides_apply),      cmocka_unit_test(bad_keys_named),
      cmocka_unit_test(structural_errors),    cmocka_unit_test(cross_key_checks),
      cmocka_unit_test(print_read_roundtrip),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
