/* NCCL opened at run time (kernels/nccl.h): its description names a
 * missing library and why; it records every NCCL_* variable, sorted, and
 * nothing else; with the library present its version reads
 * MAJOR.MINOR.PATCH; on a GPU a one-rank communicator's all-gather and
 * all-to-all return the sent floats bit for bit, also when bootstrapped
 * through the process group (trainer/comm.h) as a run does. Without the
 * library or a GPU those parts skip and say why (ci/gpu-check.sh runs this
 * file and fails on a skip; ci/cuda-emu.sh runs it on the stand-ins). */
#include "tests/test_util.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/nccl.h"
#include "tests/cuda_check.h"
#include "trainer/comm.h"

/* First of the file's tests: pgolf opens NCCL once per process and keeps
 * it (kernels/nccl.c), so a missing library shows only before any other
 * test has opened the real one. */
static void test_missing_library(void **state) {
  (void)state;
  /* The library the other tests use (ci/cuda-emu.sh names its stand-in). */
  const char *was = getenv("PGOLF_NCCL_LIBRARY");
  char *saved = was ? strdup(was) : NULL;
  setenv("PGOLF_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  json_t *d = nccl_describe();
  assert_non_null(d);
  assert_true(json_is_null(json_object_get(d, "version")));
  assert_non_null(strstr(json_string_value(json_object_get(d, "why")), "NCCL not available"));
  assert_string_equal(json_string_value(json_object_get(d, "library")), "/nonexistent/libnccl.so.2");
  char v[32];
  pg_error err;
  assert_int_equal(nccl_version(v, sizeof v, &err), -1);
  if (saved) setenv("PGOLF_NCCL_LIBRARY", saved, 1);
  if (!saved) unsetenv("PGOLF_NCCL_LIBRARY");
  free(saved);
  json_decref(d);
}

static void test_env_recorded(void **state) {
  (void)state;
  setenv("NCCL_PROTO", "Simple", 1);
  setenv("NCCL_ALGO", "Ring", 1);
  setenv("PGOLF_NOT_NCCL", "x", 1);
  json_t *d = nccl_describe();
  json_t *env = json_object_get(d, "env");
  assert_string_equal(json_string_value(json_object_get(env, "NCCL_ALGO")), "Ring");
  assert_string_equal(json_string_value(json_object_get(env, "NCCL_PROTO")), "Simple");
  assert_null(json_object_get(env, "PGOLF_NOT_NCCL"));
  const char *first = NULL, *key;
  json_t *v;
  json_object_foreach(env, key, v) {
    if (first) assert_true(strcmp(first, key) < 0); /* sorted */
    first = key;
  }
  unsetenv("NCCL_ALGO");
  unsetenv("NCCL_PROTO");
  json_decref(d);
  d = nccl_describe();
  assert_null(json_object_get(json_object_get(d, "env"), "NCCL_ALGO"));
  json_decref(d);
}

static void test_version(void **state) {
  (void)state;
  char v[32];
  pg_error err;
  if (nccl_version(v, sizeof v, &err) != 0) {
    fprintf(stderr, "skipped: needs libnccl.so.2: %s\n", err.msg);
    skip();
  }
  regex_t re;
  assert_int_equal(regcomp(&re, "^[0-9]+\\.[0-9]+\\.[0-9]+$", REG_EXTENDED), 0);
  assert_int_equal(regexec(&re, v, 0, NULL, 0), 0);
  regfree(&re);
}

#ifdef PGOLF_HAVE_CUDA
/* One rank: the all-gather and the all-to-all are copies, bit for bit (NaN payloads and -0
 * included: NCCL moves bytes, it does not add). */
static void test_allgather_one_rank(void **state) {
  (void)state;
  NEED_GPU();
  enum { N = 4099 };
  static float h[N], got[N];
  for (int i = 0; i < N; i++) h[i] = (float)i * 0.37f - 700.0f;
  uint32_t nan = 0x7fc01234u, negzero = 0x80000000u;
  memcpy(&h[5], &nan, 4);
  memcpy(&h[6], &negzero, 4);
  unsigned char id[NCCL_ID_BYTES];
  pg_error err;
  nccl_comm *c;
  OK(nccl_unique_id(id, &err), err);
  OK(nccl_comm_init(&c, id, 1, 0, &err), err);
  float *d_send = to_device(h, N), *d_recv = to_device(h, N);
  CK(cudaMemset(d_recv, 0xff, N * sizeof(float)));
  OK(nccl_allgather_f32(c, d_send, d_recv, N, NULL, &err), err);
  OK(nccl_wait(c, NULL, 60.0, "the all-gather", &err), err);
  from_device(got, d_recv, N);
  assert_memory_equal(got, h, sizeof h);
  CK(cudaMemset(d_recv, 0xff, N * sizeof(float)));
  OK(nccl_alltoall_f32(c, d_send, d_recv, N, NULL, &err), err);
  OK(nccl_wait(c, NULL, 60.0, "the all-to-all", &err), err);
  from_device(got, d_recv, N);
  assert_memory_equal(got, h, sizeof h);
  CK(cudaFree(d_send));
  CK(cudaFree(d_recv));
  nccl_comm_free(c);
}

/* Bootstrapped the way a run does (comm_nccl_open: process 0's id over
 * the process group), here a group of one. */
static void test_bootstrap_over_comm(void **state) {
  (void)state;
  NEED_GPU();
  comm g;
  pg_error err;
  OK(comm_init(&g, 5.0, &err), err);
  nccl_comm *c;
  OK(comm_nccl_open(&g, &c, &err), err);
  float h[3] = {1.0f, -0.0f, 3.5f}, got[3];
  float *d = to_device(h, 3), *r = to_device(h, 3);
  OK(nccl_allgather_f32(c, d, r, 3, NULL, &err), err);
  OK(nccl_wait(c, NULL, 60.0, "the all-gather", &err), err);
  from_device(got, r, 3);
  assert_memory_equal(got, h, sizeof h);
  CK(cudaFree(d));
  CK(cudaFree(r));
  nccl_comm_free(c);
  comm_finalize(&g);
}
#else
static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_allgather_one_rank no_cuda
#define test_bootstrap_over_comm no_cuda
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_missing_library),
      cmocka_unit_test(test_env_recorded),
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_allgather_one_rank),
      cmocka_unit_test(test_bootstrap_over_comm),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
