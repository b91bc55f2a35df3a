/* pgolf regress: k from the prediction bound, the golden file's strict
 * reading, and the judgement of real manifests (built and read by the
 * manifest library): a run inside the band passes, a run above it fails,
 * a run whose loss chain differs fails, and the JUnit and Markdown
 * outputs say so. */
#include "tests/test_util.h"

#include <math.h>
#include <sys/stat.h>

#include "manifests/manifest.h"
#include "verifier/regress.h"
#include "verifier/student_t.h"

#define TOKENIZER "data/tokenizers/fineweb_1024_bpe.model"

typedef struct fx {
  char *dir;
  char data[600];
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  f->dir = test_tmpdir();
  snprintf(f->data, sizeof f->data, "%s/fineweb_val_000000.bin", f->dir);
  uint8_t buf[1024 + 8] = {0};
  uint32_t hdr[3] = {20240520, 1, 4};
  for (int i = 0; i < 3; i++)
    for (int b = 0; b < 4; b++) buf[4 * i + b] = (uint8_t)(hdr[i] >> (8 * b));
  test_write_file(f->data, buf, sizeof buf);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  test_rmdir(f->dir);
  free(f);
  return 0;
}

/* A manifest of a 3-step run with this seed, last loss bits and val_bpb,
 * made and read back through the manifest library. */
static void make_run(const fx *f, uint64_t seed, uint32_t last_bits, double val_bpb,
                     manifest *m) {
  const char *data[] = {f->data};
  manifest_inputs in;
  memset(&in, 0, sizeof in);
  in.tokenizer_path = TOKENIZER;
  in.data_paths = data;
  in.n_data = 1;
  in.seed = seed;
  in.total_steps = 3;
  in.threads = 1;
  loss_record recs[3];
  memset(recs, 0, sizeof recs);
  uint32_t bits[3] = {0x40c80000u, 0x40a00000u, last_bits};
  for (int i = 0; i < 3; i++) recs[i].step = (uint64_t)i + 1, recs[i].loss_bits = bits[i];
  manifest_extras x;
  memset(&x, 0, sizeof x);
  x.config = json_pack("{s:s, s:i}", "preset", "tiny", "iterations", 3);
  x.loss_recs = recs;
  x.n_loss_recs = 3;
  x.losses_in_memory = 1;
  x.evaluation = json_pack("{s:f, s:f}", "val_loss", 2.5, "val_bpb", val_bpb);
  char *text;
  size_t len;
  pg_error e;
  if (manifest_create_ex(&in, &x, &text, &len, &e)) fail_msg("%s", e.msg);
  if (manifest_parse((const uint8_t *)text, len, "run.json", m, &e)) fail_msg("%s", e.msg);
  free(text);
  json_decref(x.config);
  json_decref(x.evaluation);
}

static void head_hex(uint64_t seed, uint32_t last, const fx *f, char out[SHA256_HEX_LEN + 1]) {
  manifest m;
  make_run(f, seed, last, 1.0, &m);
  sha256_hex(m.head, out);
  manifest_free(&m);
}

#define GOLDEN_FMT                                                                         \
  "{\"format\": \"pgolf/regress/v1\", \"configs\": {\"tiny\": {\"deterministic\": true,"  \
  " \"match\": {\"preset\": \"tiny\"},"                                                    \
  " \"val_bpb\": {\"mean\": 2.0, \"sd\": 0.01, \"n\": 3}, \"seeds\": ["                    \
  "{\"seed\": 1, \"val_bpb\": 1.99, \"loss_chain_head\": \"%s\"},"                         \
  "{\"seed\": 2, \"val_bpb\": 2.0, \"loss_chain_head\": \"%s\"},"                          \
  "{\"seed\": 3, \"val_bpb\": 2.01, \"loss_chain_head\": \"%s\"}]}}}"

#define GOOD_LAST 0x40400000u

static void load_golden(const fx *f, regress_golden *g) {
  char h1[65], h2[65], h3[65], text[2048];
  head_hex(1, GOOD_LAST, f, h1);
  head_hex(2, GOOD_LAST, f, h2);
  head_hex(3, GOOD_LAST, f, h3);
  snprintf(text, sizeof text, GOLDEN_FMT, h1, h2, h3);
  pg_error e;
  if (regress_golden_parse((const uint8_t *)text, strlen(text), "golden.json", g, &e))
    fail_msg("%s", e.msg);
}

/* k = t_{n-1}.isf(p) sqrt(1 + 1/n); for df 2 the t quantile has the
 * closed form (1 - 2p) / sqrt(2p(1 - p)). */
static void default_k(void **state) {
  (void)state;
  double p = 1e-3, t2 = (1 - 2 * p) / sqrt(2 * p * (1 - p));
  double k3 = regress_default_k(3, p);
  assert_true(fabs(k3 - t2 * sqrt(4.0 / 3.0)) <= 1e-12 * k3);
  assert_true(fabs(k3 - 25.781) < 1e-3);
  /* the probability a correct run lands above the band is p */
  double back = student_t_sf(k3 / sqrt(4.0 / 3.0), 2);
  assert_true(fabs(back - p) <= 1e-12);
  assert_true(regress_default_k(10, p) < 4.6 && regress_default_k(10, p) > 4.4);
  assert_true(isnan(regress_default_k(1, p)));
}

static void passing_run(void **state) {
  fx *f = *state;
  regress_golden g;
  load_golden(f, &g);
  assert_int_equal(g.n_configs, 1);
  manifest m;
  make_run(f, 2, GOOD_LAST, 2.05, &m); /* above the mean, inside mean + 25.78 sd */
  regress_result r;
  pg_error e;
  assert_int_equal(regress_judge(&g.configs[0], &m, "run2.json", &r, &e), 0);
  assert_int_equal(r.chain, CHAIN_SAME);
  assert_false(r.band_failed);
  assert_false(regress_failed(&r));
  assert_true(fabs(r.limit - (2.0 + regress_default_k(3, 1e-3) * 0.01)) < 1e-15);
  manifest_free(&m);
  regress_golden_free(&g);
}

static void band_fails(void **state) {
  fx *f = *state;
  regress_golden g;
  load_golden(f, &g);
  manifest m;
  /* same losses (chain equal), val_bpb pushed just above the band */
  double limit = 2.0 + regress_default_k(3, 1e-3) * 0.01;
  make_run(f, 1, GOOD_LAST, limit + 1e-9, &m);
  regress_result r;
  pg_error e;
  assert_int_equal(regress_judge(&g.configs[0], &m, "run1.json", &r, &e), 0);
  assert_int_equal(r.chain, CHAIN_SAME);
  assert_true(r.band_failed);
  assert_true(regress_failed(&r));
  manifest_free(&m);
  /* exactly at the limit passes: the rule is val_bpb > limit */
  make_run(f, 1, GOOD_LAST, limit, &m);
  assert_int_equal(regress_judge(&g.configs[0], &m, "run1.json", &r, &e), 0);
  assert_false(r.band_failed);
  manifest_free(&m);
  regress_golden_free(&g);
}

static void chain_differs(void **state) {
  fx *f = *state;
  regress_golden g;
  load_golden(f, &g);
  manifest m;
  make_run(f, 3, GOOD_LAST + 1, 2.0, &m); /* one ulp off in the last step's loss */
  regress_result r;
  pg_error e;
  assert_int_equal(regress_judge(&g.configs[0], &m, "run3.json", &r, &e), 0);
  assert_int_equal(r.chain, CHAIN_DIFFERS);
  assert_false(r.band_failed);
  assert_true(regress_failed(&r));
  manifest_free(&m);
  /* a seed the golden does not hold: chain not checked, band still is */
  make_run(f, 9, GOOD_LAST + 1, 2.0, &m);
  assert_int_equal(regress_judge(&g.configs[0], &m, "run9.json", &r, &e), 0);
  assert_int_equal(r.chain, CHAIN_NOT_CHECKED);
  assert_false(regress_failed(&r));
  manifest_free(&m);
  regress_golden_free(&g);
}

static void outputs(void **state) {
  fx *f = *state;
  regress_golden g;
  load_golden(f, &g);
  regress_result r[3];
  manifest m;
  pg_error e;
  make_run(f, 1, GOOD_LAST, 2.0, &m);
  assert_int_equal(regress_judge(&g.configs[0], &m, "a<&>.json", &r[0], &e), 0);
  manifest_free(&m);
  make_run(f, 2, GOOD_LAST, 3.0, &m);
  assert_int_equal(regress_judge(&g.configs[0], &m, "b|c.json", &r[1], &e), 0);
  manifest_free(&m);
  make_run(f, 3, 0x3f800000u, 2.0, &m);
  assert_int_equal(regress_judge(&g.configs[0], &m, "c.json", &r[2], &e), 0);
  manifest_free(&m);
  char *x = regress_junit(r, 3);
  assert_non_null(strstr(x, "tests=\"6\" failures=\"2\""));
  assert_non_null(strstr(x, "a&lt;&amp;&gt;.json"));
  assert_null(strstr(x, "a<&>"));
  assert_non_null(strstr(x, "type=\"val_bpb_above_band\" message=\"val_bpb 3.00000000 &gt; limit"));
  assert_non_null(strstr(x, "type=\"loss_chain_differs\""));
  free(x);
  char *md = regress_markdown(r, 3);
  assert_non_null(strstr(md, "### pgolf regress: FAIL (2 of 3 runs regressed)"));
  assert_non_null(strstr(md, "| a&lt;&&gt;.json | tiny | 1 | 2.00000000 | 2.25781"));
  assert_non_null(strstr(md, "| same | pass |"));
  assert_non_null(strstr(md, "| b\\|c.json | tiny | 2 | 3.00000000 |"));
  assert_non_null(strstr(md, "| DIFFERS | **FAIL** |"));
  free(md);
  regress_golden_free(&g);
}

static void mismatch_and_missing(void **state) {
  fx *f = *state;
  regress_golden g;
  load_golden(f, &g);
  regress_config c = g.configs[0];
  c.match = json_pack("{s:s}", "preset", "baseline");
  manifest m;
  make_run(f, 1, GOOD_LAST, 2.0, &m);
  regress_result r;
  pg_error e;
  assert_int_equal(regress_judge(&c, &m, "x.json", &r, &e), -1);
  assert_non_null(strstr(e.msg, "predicate.config.preset"));
  json_decref(c.match);
  json_object_del(m.evaluation, "val_bpb");
  assert_int_equal(regress_judge(&g.configs[0], &m, "x.json", &r, &e), -1);
  assert_non_null(strstr(e.msg, "evaluation.val_bpb"));
  manifest_free(&m);
  regress_golden_free(&g);
}

static void expect_bad(const char *text, const char *want) {
  regress_golden g;
  pg_error e;
  assert_int_equal(regress_golden_parse((const uint8_t *)text, strlen(text), "g.json", &g, &e), -1);
  if (!strstr(e.msg, want)) fail_msg("wanted '%s' in '%s'", want, e.msg);
}

#define CFG(body) "{\"format\": \"pgolf/regress/v1\", \"configs\": {\"c\": " body "}}"
#define S3 "\"seeds\": [{\"seed\": 1, \"val_bpb\": 1}, {\"seed\": 2, \"val_bpb\": 2}, {\"seed\": 3, \"val_bpb\": 3}]"

static void golden_errors(void **state) {
  (void)state;
  expect_bad("{\"format\": \"x\"}", "format");
  expect_bad("{\"format\": \"pgolf/regress/v1\", \"configs\": {}}", "configs");
  expect_bad(CFG("{\"deterministic\": 1}"), "deterministic");
  expect_bad(CFG("{\"deterministic\": false, \"val_bpb\": {\"mean\": 2, \"sd\": 1, \"n\": 2},"
                 " \"seeds\": [{\"seed\": 1, \"val_bpb\": 1}, {\"seed\": 2, \"val_bpb\": 3}]}"),
             "at least 3");
  /* mean and sd must be what the seeds give */
  expect_bad(CFG("{\"deterministic\": false, \"val_bpb\": {\"mean\": 2, \"sd\": 0.5, \"n\": 3}, " S3 "}"),
             "disagree");
  expect_bad(CFG("{\"deterministic\": false, \"val_bpb\": {\"mean\": 2, \"sd\": 1, \"n\": 4}, " S3 "}"),
             "n: missing or not");
  expect_bad(CFG("{\"deterministic\": true, \"val_bpb\": {\"mean\": 2, \"sd\": 1, \"n\": 3},"
                 " \"seeds\": [{\"seed\": 1, \"val_bpb\": 1, \"loss_chain_head\": \"abc\"},"
                 " {\"seed\": 2, \"val_bpb\": 2}, {\"seed\": 3, \"val_bpb\": 3}]}"),
             "64 lowercase hex");
  expect_bad(CFG("{\"deterministic\": true, \"val_bpb\": {\"mean\": 2, \"sd\": 1, \"n\": 3},"
                 " \"seeds\": [{\"seed\": 1, \"val_bpb\": 1}, {\"seed\": 1, \"val_bpb\": 2},"
                 " {\"seed\": 3, \"val_bpb\": 3}]}"),
             "appears twice");
  expect_bad("{\"format\": \"pgolf/regress/v1\", \"format\": \"pgolf/regress/v1\"}", "");
  /* a valid one, with k given */
  regress_golden g;
  pg_error e;
  const char *ok = CFG("{\"deterministic\": false, \"k\": 3, \"val_bpb\": {\"mean\": 2, \"sd\": 1, \"n\": 3}, " S3 "}");
  assert_int_equal(regress_golden_parse((const uint8_t *)ok, strlen(ok), "g.json", &g, &e), 0);
  assert_true(g.configs[0].k == 3);
  regress_golden_free(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(default_k),
      cmocka_unit_test_setup_teardown(passing_run, setup, teardown),
      cmocka_unit_test_setup_teardown(band_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(chain_differs, setup, teardown),
      cmocka_unit_test_setup_teardown(outputs, setup, teardown),
      cmocka_unit_test_setup_teardown(mismatch_and_missing, setup, teardown),
      cmocka_unit_test(golden_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
