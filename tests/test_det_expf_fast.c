/* det_expf_fast_hd (kernels/det_expf_fast.h) against det_expf_hd on every
 * one of the 2^32 float bit patterns: the contract is equality, so the
 * proof is exhaustive (each float is one input; nothing is sampled). The
 * same sweep, which computes det_expf of every float anyway, holds
 * det_expf32_hd (kernels/det_expf32.h, the mixed-precision attention's
 * float32 exponential) to its contract: within one unit in the last
 * place of det_expf everywhere, NaN for NaN (its own bits), and its
 * vector twin det_expf32_shift_array (kernels/det_math.c) to its bits;
 * their specials and negative checks are tests/test_det_expf32.c. Also
 * that the fast path is taken (a fallback on most inputs would prove
 * nothing about the fast arithmetic) and that the fallback is exercised,
 * that det_expf_fast_try_hd, the fast half alone, is exact wherever it
 * does not ask for the fallback, and falls back outside [-87, 88],
 * and a negative check: the fast path's double made 2^-40 wrong differs
 * from det_expf_hd on some inputs, so the comparison is not blind.
 * Under make sanitize (PGOLF_TEST_SAMPLED, tests/test_util.h) the sweep
 * takes every SAMPLE_STRIDE-th chunk of 65,536 floats: eight chunks of
 * each exponent and sign, NaNs and infinities among them. */
#include "tests/test_util.h"

#include <stdint.h>

#include "kernels/det_expf32.h"
#include "kernels/det_expf_fast.h"
#include "kernels/det_math.h"

/* What a sweep over floats counts. */
struct sweep {
  unsigned long long differ, fallback, fast, perturbed_differ, out_fast;
  uint64_t max_ulps; /* the fast double's largest distance from det_exp_hd's */
  uint32_t first_bad;
  int have_bad;
  /* det_expf32_hd: floats off det_expf, the largest distance in units
   * (first where it is reached), NaNs not returned as they came; floats
   * where det_expf32_shift_array (sub 0) gives other bits */
  unsigned long long differ32, nan32, vec32;
  uint32_t max_ulps32, worst32;
};

/* Units in the last place between two non-negative floats (+0 to +inf):
 * their bit patterns are ordered as their values. */
static inline uint32_t float_ulps(float a, float b) {
  const uint32_t x = hd_float_bits(a), y = hd_float_bits(b);
  return x > y ? x - y : y - x;
}

enum { CHUNK = 1 << 16, BLOCK = 1024, SAMPLE_STRIDE = 16 };
#define N_CHUNKS ((1LL << 32) / CHUNK)

/* Read once at run time, so that x - zero is the subtraction
 * det_expf32_shift_array makes (which quiets a signaling NaN), not folded
 * away. */
static volatile float zero_sub = 0.0f;

/* Floats [c CHUNK, (c + 1) CHUNK) into s, merged into all (under the lock
 * of the caller's parallel loop). Inlined into each sweep below, so the
 * fast path's fma()s compile for that sweep's target. */
static inline __attribute__((always_inline)) void sweep_chunk(long long c, struct sweep *all) {
  struct sweep s = {0};
  const float zero = zero_sub;
  float xs[BLOCK], vs[BLOCK]; /* a block of the chunk, and its vector exponentials */
  for (long long i = c * CHUNK; i < (c + 1) * CHUNK; i++) {
    const uint32_t u = (uint32_t)i;
    const float x = hd_bits_float(u);
    const int at = (int)(i % BLOCK);
    if (at == 0) {
      for (int j = 0; j < BLOCK; j++) xs[j] = hd_bits_float((uint32_t)(i + j));
      det_expf32_shift_array(vs, xs, zero, BLOCK);
    }
    const double wantd = det_exp_hd((double)x);
    const float want = (float)wantd, got = det_expf_fast_hd(x); /* det_expf_hd's float */
    /* The fast half alone (det_expf_fast_hd's first step): where it
     * does not ask for the fallback, its value is det_expf's. */
    unsigned slow;
    const float tried = det_expf_fast_try_hd(x, &slow);
    if (hd_float_bits(got) != hd_float_bits(want) ||
        (!slow && hd_float_bits(tried) != hd_float_bits(want))) {
      if (!s.differ++) s.first_bad = u;
    }
    const float g32 = det_expf32_hd(x);
    /* x - 0 is x but for a signaling NaN, which it quiets; det_expf32
     * returns a NaN as it came */
    if (hd_float_bits(vs[at]) != hd_float_bits(x != x ? x - zero : g32)) s.vec32++;
    if (x != x) {
      if (hd_float_bits(g32) != u) s.nan32++;
    } else {
      const uint32_t d = float_ulps(g32, want);
      if (d) s.differ32++;
      if (d > s.max_ulps32) s.max_ulps32 = d, s.worst32 = u;
    }
    if (x >= DET_EXPF_FAST_LO && x <= DET_EXPF_FAST_HI) {
      if (slow)
        s.fallback++;
      else
        s.fast++;
      /* How far the fast double is from det_exp_hd's, in units of its
       * last place (both positive, so their bits are ordered): the
       * margin's premise. */
      const double core = det_exp_fast_core((double)x);
      const uint64_t a = hd_double_bits(core), b = hd_double_bits(wantd);
      if ((a > b ? a - b : b - a) > s.max_ulps) s.max_ulps = a > b ? a - b : b - a;
      /* The negative check: the fast double off by 2^-40 (relative),
       * rounded with no midpoint test. An error of that size must show. */
      if (hd_float_bits((float)(core * (1.0 + 0x1p-40))) != hd_float_bits(want))
        s.perturbed_differ++;
    } else if (!slow) {
      s.out_fast++; /* out of range (NaN included): the fast half's e^0 must not stand */
    }
  }
#pragma omp critical
  {
    if (s.differ && (!all->have_bad || s.first_bad < all->first_bad))
      all->have_bad = 1, all->first_bad = s.first_bad;
    all->differ += s.differ, all->fallback += s.fallback, all->fast += s.fast;
    all->perturbed_differ += s.perturbed_differ, all->out_fast += s.out_fast;
    if (s.max_ulps > all->max_ulps) all->max_ulps = s.max_ulps;
    all->differ32 += s.differ32, all->nan32 += s.nan32, all->vec32 += s.vec32;
    if (s.max_ulps32 > all->max_ulps32 ||
        (s.max_ulps32 == all->max_ulps32 && s.worst32 < all->worst32))
      all->max_ulps32 = s.max_ulps32, all->worst32 = s.worst32;
  }
}

/* Every float, on a CPU with an FMA unit: the fast path's fma()s are then
 * one instruction each, not glibc calls (the same correctly rounded
 * operation either way), which makes the sweep about four times faster. */
__attribute__((target("fma"))) static void sweep_fma(struct sweep *all, long long stride) {
#pragma omp parallel for schedule(dynamic, 16)
  for (long long c = 0; c < N_CHUNKS; c += stride) sweep_chunk(c, all);
}

static void sweep_plain(struct sweep *all, long long stride) {
#pragma omp parallel for schedule(dynamic, 16)
  for (long long c = 0; c < N_CHUNKS; c += stride) sweep_chunk(c, all);
}

static void test_every_float(void **state) {
  (void)state;
  struct sweep all = {0};
  const long long stride = test_sampled() ? SAMPLE_STRIDE : 1;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("fma"))
    sweep_fma(&all, stride);
  else
    sweep_plain(&all, stride);
  if (stride > 1)
    fprintf(stderr, "det_expf_fast: every %lldth chunk of %d floats (PGOLF_TEST_SAMPLED)\n",
            stride, CHUNK);
  const unsigned long long differ = all.differ, fallback = all.fallback, fast = all.fast,
                           perturbed_differ = all.perturbed_differ, out_fast = all.out_fast;
  const uint32_t first_bad = all.first_bad;
  fprintf(stderr,
          "det_expf_fast: %llu fast, %llu fall back, %llu differ; off by 2^-40: %llu differ; "
          "the fast double within %llu units of det_exp_hd's\n",
          fast, fallback, differ, perturbed_differ, (unsigned long long)all.max_ulps);
  if (differ)
    fail_msg("det_expf_fast_hd(%a) = %a, det_expf_hd = %a (%llu inputs differ)",
             (double)hd_bits_float(first_bad), (double)det_expf_fast_hd(hd_bits_float(first_bad)),
             (double)det_expf_hd(hd_bits_float(first_bad)), differ);
  /* [-87, 88] holds about 2.2e9 bit patterns; the fast path takes nearly
   * all of them, and the fallback some. */
  assert_true(fast > 2000000000ull / (unsigned long long)stride);
  assert_int_equal(out_fast, 0);
  assert_true(fallback > 0 && fallback < fast / 10000);
  assert_true(perturbed_differ > 0);
  /* The margin stands well clear of the two doubles' distance (a few
   * tens of units; the fallbacks' window is 2^10). */
  assert_true(all.max_ulps > 0 && all.max_ulps * 8 <= DET_EXPF_FAST_MARGIN);

  /* det_expf32_hd: within a unit everywhere, most floats det_expf's own
   * (0.42% of the bit patterns differ, as measured). */
  const float w = hd_bits_float(all.worst32);
  fprintf(stderr,
          "det_expf32: %llu floats differ from det_expf, by at most %u unit(s) (first: e^%a = %a "
          "against %a)\n",
          all.differ32, all.max_ulps32, (double)w, (double)det_expf32_hd(w),
          (double)det_expf_hd(w));
  assert_int_equal(all.nan32, 0);
  assert_int_equal(all.vec32, 0); /* the vector twin: the scalar's bits on every float */
  assert_true(all.max_ulps32 <= 1);
  assert_true(all.differ32 > 0 && all.differ32 < (1ull << 32) / 100 / (unsigned long long)stride);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_float)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
