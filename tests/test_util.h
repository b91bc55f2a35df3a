/* Shared helpers for the CMocka tests. */
#ifndef PGOLF_TEST_UTIL_H
#define PGOLF_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* A call returning 0 or -1 with a pg_error: on -1 the test fails with the
 * error's message (on a machine seen only through a log, the message is
 * what tells why). */
#define OK(call, err)                                          \
  do {                                                         \
    if ((call) != 0) fail_msg("%s: %s", #call, (err).msg);     \
  } while (0)

/* A fresh directory under TMPDIR for one test; removed by test_rmdir. */
static inline char *test_tmpdir(void) {
  const char *base = getenv("TMPDIR");
  char tmpl[512];
  snprintf(tmpl, sizeof tmpl, "%s/pgolf-test.XXXXXX", base ? base : "/tmp");
  char *d = mkdtemp(tmpl);
  assert_non_null(d);
  return strdup(d);
}

static inline void test_rmdir(char *dir) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(dir);
}

static inline void test_write_file(const char *path, const void *buf, size_t len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(buf, 1, len, f), len);
  assert_int_equal(fclose(f), 0);
}

/* make sanitize sets PGOLF_TEST_SAMPLED=1. The sanitizers look for memory
 * errors and undefined behaviour, which a sample of a long sweep's cases
 * reaches through the same code as the whole sweep; so the few tests whose
 * exhaustive sweeps or repeated training steps take minutes under them
 * (each says what it samples) run a sample there, and make test, without
 * the sanitizers, runs every case. */
static inline int test_sampled(void) {
  const char *v = getenv("PGOLF_TEST_SAMPLED");
  return v && *v && strcmp(v, "0") != 0;
}

#endif
