/* index_walk.h, the GPU's grid-stride walks with their quotients and
 * remainders kept by additions: every walk against / and %, alone and
 * chained two and three deep as the kernels chain them (q_gain's head,
 * rope's (row, head, pair), Newton-Schulz's (matrix, row, column)), over
 * divisors and steps on both sides of each other, and near 2^64, where a
 * walk that wrapped its sum would go wrong. */
#include "tests/test_util.h"

#include <stdint.h>

#include "kernels/index_walk.h"

/* Walk `count` indices from i by step, split by d, then its quotient by
 * d2 and that quotient by d3 (the kernels' chains); each against the
 * divisions. Returns the first index that disagrees, or SIZE_MAX. */
static size_t walk_check(size_t i, size_t step, size_t d, size_t d2, size_t d3, int count) {
  index_walk a = index_walk_start(i, step, d);
  index_walk b = index_walk_start(a.q, a.dq, d2);
  index_walk c = index_walk_start(b.q, b.dq, d3);
  for (int k = 0; k < count; k++, i += step) {
    const size_t q = i / d, q2 = q / d2;
    if (a.q != q || a.r != i % d || b.q != q2 || b.r != q % d2 || c.q != q2 / d3 || c.r != q2 % d3)
      return i;
    index_walk_next(&c, index_walk_next(&b, index_walk_next(&a, 0)));
  }
  return SIZE_MAX;
}

static void test_walks_equal_division(void **state) {
  (void)state;
  /* The kernels' divisors (channels, heads, head_dim / 2, T, vocabulary,
   * matrix sides) and awkward ones; steps below, at and above them,
   * including the grid's 4096 x 256 and the stand-in's 3 x 256. */
  static const size_t divisors[] = {1, 2, 3, 7, 8, 32, 64, 255, 256, 257, 512, 1000, 1024, 1536};
  static const size_t steps[] = {1, 2, 5, 255, 256, 768, 1000, 1023, 1024, 1025, 4096, 1048576};
  const int nd = (int)(sizeof divisors / sizeof *divisors);
  const int ns = (int)(sizeof steps / sizeof *steps);
  long walks = 0;
  for (int x = 0; x < nd; x++)
    for (int y = 0; y < nd; y += 3)
      for (int z = 0; z < nd; z += 5)
        for (int s = 0; s < ns; s++)
          for (size_t start = 0; start < 3 * divisors[x] + 2; start += divisors[x] / 2 + 1) {
            const size_t bad =
                walk_check(start, steps[s], divisors[x], divisors[y], divisors[z], 300);
            if (bad != SIZE_MAX)
              fail_msg("walk from %zu by %zu over %zu, %zu, %zu: wrong at %zu", start, steps[s],
                       divisors[x], divisors[y], divisors[z], bad);
            walks++;
          }
  assert_true(walks > 10000);
}

/* The carries at their edge: the first walk's remainder and its step's
 * both d - 1 (their sum 2 d - 2, the largest), the second walk's
 * remainder d2 - 1 taking that wrap. */
static void test_largest_remainders(void **state) {
  (void)state;
  for (size_t d = 1; d < 300; d++)
    for (size_t d2 = 1; d2 < 40; d2 += 3) {
      const size_t step = d * (2 * d2 + 1) + d - 1; /* step % d = d - 1, step / d = 2 d2 + 1 */
      const size_t bad = walk_check(d * d2 - 1, step, d, d2, 3, 50);
      if (bad != SIZE_MAX) fail_msg("largest remainders, d %zu, d2 %zu: wrong at %zu", d, d2, bad);
    }
}

/* Near the top of size_t: r + step % d must not overflow for divisors up
 * to the int range the kernels pass. */
static void test_near_size_max(void **state) {
  (void)state;
  static const size_t divisors[] = {3, 1000, 65535, 2147483647};
  for (int x = 0; x < 4; x++) {
    const size_t d = divisors[x], step = 1048576 + 7, count = 200;
    const size_t start = SIZE_MAX - step * count - d;
    const size_t bad = walk_check(start, step, d, 5, 7, (int)count);
    if (bad != SIZE_MAX) fail_msg("near SIZE_MAX, d %zu: wrong at %zu", d, bad);
  }
}

/* Worked by hand: a wrap, and a chained walk moved by its carry alone. */
static void test_hand_worked_carries(void **state) {
  (void)state;
  index_walk a = index_walk_start(5, 3, 4); /* 5 = 1 * 4 + 1; step 3 = 0 * 4 + 3 */
  index_walk_next(&a, 0);                   /* 8 = 2 * 4 + 0: a wrap */
  assert_int_equal(a.q, 2);
  assert_int_equal(a.r, 0);
  index_walk b = index_walk_start(1, 0, 3); /* a chained walk whose own step is 0 */
  assert_int_equal(index_walk_next(&b, 1), 0);
  assert_int_equal(b.q, 0);
  assert_int_equal(b.r, 2);
  assert_int_equal(index_walk_next(&b, 1), 1); /* the carry in wraps it */
  assert_int_equal(b.q, 1);
  assert_int_equal(b.r, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_walks_equal_division),
      cmocka_unit_test(test_largest_remainders),
      cmocka_unit_test(test_near_size_max),
      cmocka_unit_test(test_hand_worked_carries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
