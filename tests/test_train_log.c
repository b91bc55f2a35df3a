/* The training log: each line exactly as the official f-strings print the
 * same numbers, the hyperparameter dump in Python's repr forms, a prior
 * log carried into a resumed one, and the file equal to the memory copy. */
#include "tests/test_util.h"

#include <jansson.h>

#include "common/fileio.h"
#include "trainer/train_log.h"

static void official_lines(void **state) {
  (void)state;
  train_log L;
  pg_error e;
  assert_int_equal(train_log_open(&L, NULL, NULL, 0, NULL, &e), 0);
  /* f"{6.93095:.4f}" == "6.9310" (the float32 nearest 6.93095 is above it);
   * f"{1234.5:.0f}" == "1234" (half to even); 1234.5 / 3 = 411.5 */
  train_log_train_step(&L, 3, 200, 6.93095f, 1234.5);
  train_log_val_step(&L, 0, 200, 6.9375, 3.25, 0.4);
  train_log_sizes(&L, 1000, 1500, 1600, 3000, 250);
  train_log_final(&L, 4.123456789, 2.5, 99.6);
  train_log_printf(&L, "seed:%d", 1337);
  const char *want =
      "step:3/200 train_loss:6.9310 train_time:1234ms step_avg:411.50ms\n"
      "step:0/200 val_loss:6.9375 val_bpb:3.2500 train_time:0ms step_avg:0.40ms\n"
      "Serialized model int8+zlib: 1000 bytes (payload:1500 raw:1600 payload_ratio:2.00x)\n"
      "Code size: 250 bytes\n"
      "Total submission size int8+zlib: 1250 bytes\n"
      "final_int8_zlib_roundtrip val_loss:4.1235 val_bpb:2.5000 eval_time:100ms\n"
      "final_int8_zlib_roundtrip_exact val_loss:4.12345679 val_bpb:2.50000000\n"
      "seed:1337\n";
  assert_string_equal(L.text, want);
  assert_int_equal(train_log_close(&L, &e), 0);
}

static void hparams_as_python(void **state) {
  (void)state;
  train_log L;
  pg_error e;
  json_t *cfg = json_pack("{s:f, s:f, s:f, s:i, s:s, s:n, s:f}", "beta2", 0.95, "adam_eps", 1e-8,
                          "rope_base", 10000.0, "iterations", 20000, "precision", "fp32", "data",
                          "tied_embed_init_std", (double)0.005f);
  assert_int_equal(train_log_open(&L, NULL, NULL, 0, NULL, &e), 0);
  train_log_hparams(&L, cfg);
  assert_string_equal(L.text, "Hyperparameters:\n  beta2: 0.95\n  adam_eps: 1e-08\n  rope_base: 10000.0\n"
                              "  iterations: 20000\n  precision: fp32\n  data: None\n"
                              "  tied_embed_init_std: 0.004999999888241291\n");
  json_decref(cfg);
  train_log_close(&L, &e);
}

static void prior_and_file(void **state) {
  (void)state;
  char *dir = test_tmpdir(), path[600];
  snprintf(path, sizeof path, "%s/train.log", dir);
  train_log L;
  pg_error e;
  const char *prior = "seed:1\nstep:1/2 train_loss:1.0000 train_time:1ms step_avg:1.00ms\n";
  assert_int_equal(train_log_open(&L, path, prior, strlen(prior), NULL, &e), 0);
  train_log_printf(&L, "next");
  uint8_t *buf;
  size_t len;
  assert_int_equal(file_read_all(path, 1 << 20, &buf, &len, &e), 0);
  assert_int_equal(len, L.len);
  assert_memory_equal(buf, L.text, len);
  assert_non_null(strstr((char *)buf, "train_time:1ms step_avg:1.00ms\nnext\n"));
  free(buf);
  assert_int_equal(train_log_close(&L, &e), 0);
  /* an unwritable path is an error naming it */
  snprintf(path, sizeof path, "%s/no/such/dir/train.log", dir);
  assert_int_equal(train_log_open(&L, path, NULL, 0, NULL, &e), -1);
  assert_non_null(strstr(e.file, "train.log"));
  test_rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(official_lines),
      cmocka_unit_test(hparams_as_python),
      cmocka_unit_test(prior_and_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
