/* The ordered gradient combination (trainer/grad_sum.h): left to right in
 * rank order (a sum that another order would round differently), each
 * shard times the scale, in place over the first shard, the same bits for
 * 1 and 2 threads, and the slices the exchange cuts for P processes cover
 * the parameters exactly, in order. */
#include "tests/test_util.h"

#include <omp.h>
#include <string.h>

#include "trainer/grad_sum.h"

/* ((1e8 + -1e8) + 1) = 1, but 1e8 + (-1e8 + 1) = 0 in float32 (-1e8 + 1
 * rounds back to -1e8): the order is visible in the bits. */
static void test_rank_order(void **state) {
  (void)state;
  float shards[3] = {1e8f, -1e8f, 1.0f}, out = -7.0f;
  grad_sum_ordered(&out, shards, 1, 3, 1, 1.0f);
  assert_true(out == 1.0f);
  float reversed[3] = {1.0f, -1e8f, 1e8f};
  grad_sum_ordered(&out, reversed, 1, 3, 1, 1.0f);
  assert_true(out == 0.0f); /* another order, other bits: the order is what fixes them */
}

/* DDP's average: each shard times 1/N before the sum; in place over shard 0. */
static void test_scale_in_place(void **state) {
  (void)state;
  enum { N = 8, LEN = 5 };
  float g[N * LEN], want[LEN];
  for (int r = 0; r < N; r++)
    for (int i = 0; i < LEN; i++) g[r * LEN + i] = (float)(r * 3 + i) - 0.25f * (float)i;
  for (int i = 0; i < LEN; i++) {
    float s = g[i] * 0.125f;
    for (int r = 1; r < N; r++) s += g[r * LEN + i] * 0.125f;
    want[i] = s;
  }
  grad_sum_ordered(g, g, LEN, N, LEN, 0.125f);
  assert_memory_equal(g, want, sizeof want);
}

/* One process: grad_combine is the ordered sum of the ranks' buffers. */
static void test_combine_one_process(void **state) {
  (void)state;
  enum { N = 4, LEN = 1000 };
  static float g[N * LEN], out1[LEN], out2[LEN];
  for (int i = 0; i < N * LEN; i++) g[i] = (float)((i * 2654435761u) % 100003) / 997.0f - 50.0f;
  comm c = {.size = 1, .rank = 0, .timeout_s = 1};
  grad_exchange x;
  pg_error err;
  assert_int_equal(grad_exchange_init(&x, &c, N, LEN, &err), 0);
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  assert_int_equal(grad_combine(&x, &c, N, g, out1, &err), 0);
  omp_set_num_threads(2);
  assert_int_equal(grad_combine(&x, &c, N, g, out2, &err), 0);
  omp_set_num_threads(saved);
  assert_memory_equal(out1, out2, sizeof out1);
  float s = g[17] * 0.25f;
  for (int r = 1; r < N; r++) s += g[r * LEN + 17] * 0.25f;
  assert_true(memcmp(&s, &out1[17], 4) == 0);
  grad_exchange_free(&x);
}

/* P processes: slice q of process q, contiguous, covering [0, n); what
 * each process sends is its ranks' share of every slice. */
static void test_slices(void **state) {
  (void)state;
  const size_t n = 1003;
  for (int P = 2; P <= 8; P++) {
    comm c = {.size = P, .rank = P - 1, .timeout_s = 1};
    grad_exchange x;
    pg_error err;
    assert_int_equal(grad_exchange_init(&x, &c, 2, n, &err), 0);
    size_t next = 0;
    for (int q = 0; q < P; q++) {
      assert_int_equal((size_t)x.displ[q], next);
      assert_true(x.count[q] >= (int)(n / (size_t)P) && x.count[q] <= (int)(n / (size_t)P) + 1);
      assert_int_equal(x.scount[q], x.count[q] * x.n_local);
      assert_int_equal(x.rcount[q], x.count[P - 1] * x.n_local);
      next += (size_t)x.count[q];
    }
    assert_int_equal(next, n);
    grad_exchange_free(&x);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_order),
      cmocka_unit_test(test_scale_in_place),
      cmocka_unit_test(test_combine_one_process),
      cmocka_unit_test(test_slices),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
