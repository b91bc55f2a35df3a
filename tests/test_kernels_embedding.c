/* embedding: the gather, and the scatter-add backward in ascending
 * position order for any thread count, accumulate and bf16 semantics. */
#include "tests/test_util.h"

#include <omp.h>

#include "kernels/embedding.h"
#include "tests/kernel_check.h"

enum { V = 9, D = 4, N = 12 };
static const uint16_t IDS[N] = {3, 0, 3, 8, 3, 1, 0, 8, 8, 3, 5, 3};

static void test_gather(void **state) {
  (void)state;
  float tab[V * D], y[N * D];
  for (int i = 0; i < V * D; i++) tab[i] = (float)i;
  embedding_forward(y, tab, IDS, N, D);
  for (int r = 0; r < N; r++) assert_memory_equal(y + r * D, tab + IDS[r] * D, D * 4);
}

static void test_scatter_order_and_threads(void **state) {
  (void)state;
  kc_rng rng = {41};
  float dy[N * D], ref[V * D];
  kc_fill(&rng, dy, N * D, 1.0);
  /* Ascending-position float32 sums, written out independently. */
  for (int v = 0; v < V; v++)
    for (int j = 0; j < D; j++) {
      float s = 0.0f;
      for (int r = 0; r < N; r++)
        if (IDS[r] == v) s += dy[r * D + j];
      ref[v * D + j] = s;
    }
  for (int th = 1; th <= 3; th++) {
    omp_set_num_threads(th);
    float out[V * D];
    for (int i = 0; i < V * D; i++) out[i] = 99.0f;
    embedding_backward(out, dy, IDS, N, V, D, 0);
    assert_memory_equal(out, ref, sizeof ref);
    /* accumulate: rows without ids keep their values */
    for (int i = 0; i < V * D; i++) out[i] = 1.0f;
    embedding_backward(out, dy, IDS, N, V, D, KERNEL_ACCUMULATE);
    for (int i = 0; i < V * D; i++) assert_true(out[i] == 1.0f + ref[i]);
    assert_true(out[2 * D] == 1.0f);
  }
  /* bf16: each row sum rounded once */
  float ob[V * D];
  embedding_backward(ob, dy, IDS, N, V, D, KERNEL_BF16);
  for (int i = 0; i < V * D; i++) assert_true(ob[i] == bf16_round(ref[i]));
  omp_set_num_threads(2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_gather),
      cmocka_unit_test(test_scatter_order_and_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
