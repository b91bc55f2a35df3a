/* The NVML sampler against NVML's stand-in (tests/fake_nvml.c, found
 * beside this test binary): samples every GPU about every period, stops
 * promptly, caps what it keeps and counts the rest as dropped; without
 * NVML it refuses with the reason. */
#include "tests/test_util.h"

#include <libgen.h>
#include <time.h>

#include "kernels/nvml.h"

static void use_fake(void) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  assert_true(n > 0);
  exe[n] = 0;
  char lib[4200];
  snprintf(lib, sizeof lib, "%s/libfake_nvml.so", dirname(exe));
  assert_int_equal(access(lib, R_OK), 0);
  setenv("PGOLF_NVML_LIBRARY", lib, 1);
  setenv("FAKE_NVML_GPUS", "2", 1);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void test_samples_every_gpu(void **state) {
  (void)state;
  use_fake();
  nvml_sampler *s;
  pg_error err;
  assert_int_equal(nvml_sampler_start(&s, 50.0, 10000, &err), 0);
  sleep_ms(400);
  json_t *j = nvml_sampler_stop(s);
  assert_non_null(j);
  json_t *rows = json_object_get(j, "samples");
  size_t n = json_array_size(rows);
  /* 2 GPUs, about 8 rounds in 400 ms at 50 ms (a loaded machine may run
   * fewer, never none). */
  assert_true(n >= 4 && n % 2 == 0);
  json_t *r0 = json_array_get(rows, 0), *r1 = json_array_get(rows, 1);
  assert_int_equal(json_integer_value(json_array_get(r0, 1)), 0); /* gpu */
  assert_int_equal(json_integer_value(json_array_get(r1, 1)), 1);
  assert_int_equal(json_integer_value(json_array_get(r0, 2)), 97);     /* util_gpu */
  assert_int_equal(json_integer_value(json_array_get(r0, 5)), 612000); /* power_mw */
  assert_int_equal(json_array_size(json_object_get(j, "columns")), 8);
  assert_int_equal(json_integer_value(json_object_get(j, "dropped")), 0);
  json_decref(j);
}

static void test_cap_counts_dropped(void **state) {
  (void)state;
  use_fake();
  nvml_sampler *s;
  pg_error err;
  assert_int_equal(nvml_sampler_start(&s, 20.0, 3, &err), 0);
  sleep_ms(200);
  json_t *j = nvml_sampler_stop(s);
  assert_int_equal(json_array_size(json_object_get(j, "samples")), 3);
  assert_true(json_integer_value(json_object_get(j, "dropped")) > 0);
  json_decref(j);
}

static void test_without_nvml_refuses(void **state) {
  (void)state;
  setenv("PGOLF_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  nvml_sampler *s = (nvml_sampler *)1;
  pg_error err;
  assert_int_equal(nvml_sampler_start(&s, 50.0, 10, &err), -1);
  assert_null(s);
  assert_non_null(strstr(err.msg, "NVML not available"));
  assert_null(nvml_sampler_stop(NULL));
  nvml_attest a;
  nvml_attest_take(&a);
  assert_int_equal(a.attested, 0);
  char why[300];
  assert_int_equal(nvml_matches_challenge(&a, 8, why, sizeof why), 0);
  assert_non_null(strstr(why, "not attested"));
}

/* Thermal reasons only (power capping is not), counted per GPU, the first
 * throttled GPU described; no samples, or none hot, is 0. */
static void test_samples_thermal(void **state) {
  (void)state;
  json_t *j = json_loads("{\"samples\": [[0, 0, 90, 1, 1, 600000, 1980, 4],"
                         " [0, 1, 90, 1, 1, 600000, 1980, 0],"
                         " [1000, 0, 90, 1, 1, 600000, 1980, 0],"
                         " [1000, 1, 90, 1, 1, 600000, 1500, 32],"
                         " [2000, 0, 90, 1, 1, 600000, 1400, 72],"
                         " [2000, 1, 90, 1, 1, 600000, 1500, 32]]}", 0, NULL);
  assert_non_null(j);
  char why[256];
  assert_int_equal(nvml_samples_thermal(j, why, sizeof why), 2);
  assert_string_equal(why, "GPU 0: 1 of 3 samples from 2.0 s (HW slowdown, HW thermal slowdown)");
  json_decref(j);
  j = json_loads("{\"samples\": [[0, 0, 90, 1, 1, 600000, 1980, 4]]}", 0, NULL);
  assert_int_equal(nvml_samples_thermal(j, why, sizeof why), 0);
  assert_string_equal(why, "");
  json_decref(j);
  assert_int_equal(nvml_samples_thermal(NULL, why, sizeof why), 0);
  nvml_thermal_names(NVML_THROTTLE_SW_THERMAL | 0x4, why, sizeof why);
  assert_string_equal(why, "SW thermal slowdown");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_samples_every_gpu),
      cmocka_unit_test(test_cap_counts_dropped),
      cmocka_unit_test(test_without_nvml_refuses),
      cmocka_unit_test(test_samples_thermal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
