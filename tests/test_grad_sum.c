/* The ordered gradient combination (trainer/grad_sum.h): left to right in
 * rank order (a sum that another order would round differently), each
 * shard times the scale, in place over the first shard, the same bits for
 * 1 and 2 threads, and the slices the exchange cuts for P processes cover
 * the parameters exactly, in order. */
#include "tests/test_util.h"

#include <omp.h>
#include <string.h>

#include "kernels/ordered_sum.h"
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

/* Gradients of n ranks whose sums round differently in another order:
 * magnitudes from 1e-3 to 1e5, both signs. */
static void fill_ranks(float *g, size_t count) {
  uint32_t x = 12345;
  for (size_t i = 0; i < count; i++) {
    x = x * 1664525u + 1013904223u;
    float mant = (float)(x >> 8) / 16777216.0f - 0.5f;
    float mag = 1e-3f;
    for (uint32_t e = (x >> 2) % 9; e > 0; e--) mag *= 10.0f;
    g[i] = mant * mag;
  }
}

/* The shared per-element expression equals grad_sum_ordered and a plain
 * loop written out here, for every world size and both scales. */
static void test_elem_equals_grad_sum(void **state) {
  (void)state;
  enum { R = 8, LEN = 1001 };
  static float g[R * LEN], a[LEN], b[LEN], c[LEN];
  fill_ranks(g, R * LEN);
  for (int n = 1; n <= R; n *= 2) {
    const float scales[2] = {1.0f, 1.0f / (float)n};
    for (int k = 0; k < 2; k++) {
      float sc = scales[k];
      grad_sum_ordered(a, g, LEN, n, LEN, sc);
      for (size_t i = 0; i < LEN; i++) b[i] = ordered_sum_elem(g, LEN, n, i, sc);
      for (size_t i = 0; i < LEN; i++) {
        float s = sc == 1.0f ? g[i] : g[i] * sc;
        for (int r = 1; r < n; r++)
          s += sc == 1.0f ? g[(size_t)r * LEN + i] : g[(size_t)r * LEN + i] * sc;
        c[i] = s;
      }
      assert_memory_equal(a, b, sizeof a);
      assert_memory_equal(a, c, sizeof a);
    }
  }
}

/* The GPU world's layout (trainer/train_cuda.c): P slices of m = ceil(len
 * / P) floats, each process's buffer holding every rank's shard of its
 * slice in rank order with stride m; the slices summed apart and put side
 * by side are grad_sum_ordered's result. */
static void test_padded_slices(void **state) {
  (void)state;
  enum { R = 8, LEN = 1001 };
  static float g[R * LEN], want[LEN], got[LEN], recv[R * LEN];
  fill_ranks(g, R * LEN);
  grad_sum_ordered(want, g, LEN, R, LEN, 0.125f);
  for (int P = 1; P <= R; P *= 2) {
    size_t m = (LEN + (size_t)P - 1) / (size_t)P;
    for (int q = 0; q < P; q++) {
      size_t lo = (size_t)q * m, len = lo < LEN ? (LEN - lo < m ? LEN - lo : m) : 0;
      for (int r = 0; r < R; r++)
        memcpy(recv + (size_t)r * m, g + (size_t)r * LEN + lo, len * sizeof(float));
      for (size_t i = 0; i < len; i++) got[lo + i] = ordered_sum_elem(recv, m, R, i, 0.125f);
    }
    assert_memory_equal(got, want, sizeof want);
  }
}

/* Negative: the same shards in another order (ranks 1 and 2 swapped, or
 * the order reversed) give other bits somewhere. (Swapping ranks 0 and 1
 * would not: the first addition commutes.) */
static void test_perturbed_order_differs(void **state) {
  (void)state;
  enum { R = 8, LEN = 1001 };
  static float g[R * LEN], h[R * LEN], a[LEN], b[LEN];
  fill_ranks(g, R * LEN);
  grad_sum_ordered(a, g, LEN, R, LEN, 0.125f);
  memcpy(h, g, sizeof g);
  memcpy(h + LEN, g + 2 * LEN, LEN * sizeof(float));
  memcpy(h + 2 * LEN, g + LEN, LEN * sizeof(float));
  for (size_t i = 0; i < LEN; i++) b[i] = ordered_sum_elem(h, LEN, R, i, 0.125f);
  assert_true(memcmp(a, b, sizeof a) != 0);
  for (int r = 0; r < R; r++)
    memcpy(h + (size_t)r * LEN, g + (size_t)(R - 1 - r) * LEN, LEN * sizeof(float));
  for (size_t i = 0; i < LEN; i++) b[i] = ordered_sum_elem(h, LEN, R, i, 0.125f);
  assert_true(memcmp(a, b, sizeof a) != 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rank_order),
      cmocka_unit_test(test_scale_in_place),
      cmocka_unit_test(test_combine_one_process),
      cmocka_unit_test(test_slices),
      cmocka_unit_test(test_elem_equals_grad_sum),
      cmocka_unit_test(test_padded_slices),
      cmocka_unit_test(test_perturbed_order_differs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
