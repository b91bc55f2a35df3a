/* replay_compare_device (verifier/replay_device.c): what a replay ran on
 * against what the run recorded. The same GPU and algorithms give no
 * finding; each difference gives its REPLAY_ENVIRONMENT warning naming it
 * (device kind, GPU, cuBLASLt version, a product's algorithm, a product
 * never recorded), never an error. */
#include "tests/test_util.h"

#include "verifier/replay_run.h"

static const char *H100 =
    "{\"kind\": \"cuda\", \"name\": \"NVIDIA H100 80GB HBM3\", \"sm_count\": 132,"
    " \"compute_capability\": \"9.0\", \"driver_version\": 13000, \"runtime_version\": 13000,"
    " \"cublaslt\": {\"cublaslt_version\": 130001, \"workspace_bytes\": 33554432, \"plans\": ["
    "  {\"op\": \"forward\", \"n\": 65536, \"in\": 512, \"out\": 512, \"dtype\": \"bf16\","
    "   \"accumulate\": false, \"align_bytes\": [16, 256, 256], \"algo\": \"%s\"},"
    "  {\"op\": \"backward_weight\", \"n\": 65536, \"in\": 512, \"out\": 512, \"dtype\": \"bf16\","
    "   \"accumulate\": false, \"align_bytes\": [256, 256, 256], \"algo\": \"%s\"}]}}";

static json_t *device(const char *fmt, const char *algo1, const char *algo2) {
  char text[2048];
  snprintf(text, sizeof text, fmt, algo1, algo2);
  json_error_t e;
  json_t *j = json_loads(text, 0, &e);
  if (!j) fail_msg("fixture: %s", e.text);
  return j;
}

/* Every finding is a warning with the code, and one message contains want. */
static void expect(const finding_list *f, size_t n, const char *want) {
  assert_int_equal(f->n, n);
  int seen = want == NULL;
  for (size_t i = 0; i < f->n; i++) {
    assert_string_equal(f->v[i].code, "REPLAY_ENVIRONMENT");
    assert_int_equal(f->v[i].sev, SEV_WARNING);
    if (want && strstr(f->v[i].message, want)) seen = 1;
  }
  if (!seen) fail_msg("no finding says '%s' (first: %s)", want, f->n ? f->v[0].message : "none");
}

static void test_same_environment_is_silent(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "0c0d");
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 0);
  assert_int_equal(replay_compare_device(NULL, NULL, &f), 0); /* two CPU runs */
  expect(&f, 0, NULL);
  json_decref(a), json_decref(b);
}

static void test_another_device_kind(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d");
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, NULL, &f), 1);
  expect(&f, 1, "recorded on cuda (NVIDIA H100 80GB HBM3), replayed on cpu");
  findings_free(&f);
  memset(&f, 0, sizeof f);
  assert_int_equal(replay_compare_device(NULL, a, &f), 1);
  expect(&f, 1, "recorded on cpu, replayed on cuda (NVIDIA H100 80GB HBM3)");
  findings_free(&f);
  json_decref(a);
}

static void test_another_algorithm_names_the_product(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "ffff");
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 1);
  expect(&f, 1,
         "cuBLASLt plan backward_weight n=65536 in=512 out=512 bf16 aligned 256/256/256: "
         "recorded algorithm 0c0d..., replay ffff...");
  findings_free(&f);
  json_decref(a), json_decref(b);
}

static void test_gpu_and_library_versions(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "0c0d");
  json_object_set_new(b, "name", json_string("NVIDIA H200"));
  json_object_set_new(json_object_get(b, "cublaslt"), "cublaslt_version", json_integer(130100));
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 2);
  expect(&f, 2, "GPU: recorded NVIDIA H100 80GB HBM3, replay NVIDIA H200");
  expect(&f, 2, "cuBLASLt version: recorded 130001, replay 130100");
  findings_free(&f);
  json_decref(a), json_decref(b);
}

/* Tensor-core attention recorded, CUDA-core attention replayed (or an
 * older record without the field): different bits, said so. */
static void test_attention_kernels(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "0c0d");
  json_object_set_new(a, "attention", json_string("tensor_cores"));
  json_object_set_new(b, "attention", json_string("cuda_cores"));
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 1);
  expect(&f, 1, "attention kernels: recorded tensor_cores, replay cuda_cores");
  findings_free(&f);
  json_object_del(b, "attention");
  assert_int_equal(replay_compare_device(a, b, &f), 1);
  expect(&f, 1, "attention kernels: recorded tensor_cores, replay (none)");
  findings_free(&f);
  json_object_set_new(b, "attention", json_string("tensor_cores"));
  assert_int_equal(replay_compare_device(a, b, &f), 0);
  findings_free(&f);
  json_decref(a), json_decref(b);
}

/* The same shape at another alignment is another plan, one the run never
 * chose an algorithm for. */
static void test_unrecorded_plan(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "0c0d");
  json_t *p = json_array_get(json_object_get(json_object_get(b, "cublaslt"), "plans"), 0);
  json_array_set_new(json_object_get(p, "align_bytes"), 0, json_integer(8));
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 1);
  expect(&f, 1, "cuBLASLt plan forward n=65536 in=512 out=512 bf16 aligned 8/256/256: the run "
                "recorded no algorithm for it");
  findings_free(&f);
  json_decref(a), json_decref(b);
}

/* A batch of products of a shape is another plan than one product of it,
 * and says so in its key. */
static void test_batched_plan(void **state) {
  (void)state;
  json_t *a = device(H100, "0a0b", "0c0d"), *b = device(H100, "0a0b", "0c0d");
  json_t *p = json_array_get(json_object_get(json_object_get(b, "cublaslt"), "plans"), 0);
  json_object_set_new(p, "batch", json_integer(18));
  finding_list f = {0};
  assert_int_equal(replay_compare_device(a, b, &f), 1);
  expect(&f, 1,
         "cuBLASLt plan forward n=65536 in=512 out=512 x18 bf16 aligned 16/256/256: the "
         "run recorded no algorithm for it");
  findings_free(&f);
  json_object_set_new(p, "batch", json_integer(1)); /* one product: the unbatched plan's key */
  assert_int_equal(replay_compare_device(a, b, &f), 0);
  findings_free(&f);
  json_decref(a), json_decref(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_environment_is_silent),
      cmocka_unit_test(test_another_device_kind),
      cmocka_unit_test(test_another_algorithm_names_the_product),
      cmocka_unit_test(test_gpu_and_library_versions),
      cmocka_unit_test(test_batched_plan),
      cmocka_unit_test(test_unrecorded_plan),
      cmocka_unit_test(test_attention_kernels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
