/* bf16 rounding on the GPU (kernels/bf16.h's bf16_from_float, which there
 * is the conversion instruction for every input but NaN) against the
 * CPU's integer rounding, on every float. Its own binary, not a row of
 * test_cuda_ops: the full sweep packs 2^32 values, which under
 * compute-sanitizer (ci/gpu-check.sh's sanitizer rows run the kernel
 * tests) would take minutes; bf16_pack_kernel's memory accesses are
 * checked there through the ops that pack.
 *
 * Needs a GPU: without one (or without the CUDA build) it skips and says
 * why; ci/gpu-check.sh runs it on a GPU machine and fails on any skip
 * there. */
#include "tests/test_util.h"

#include "kernels/bf16.h"
#include "tests/cuda_check.h"

#ifdef PGOLF_HAVE_CUDA
/* bf16_pack_cuda (the device's bf16_from_float, the conversion
 * instruction where the input is not NaN) against the CPU's integer
 * rounding, bit for bit, NaN included, and bf16_pack2_mma_cuda (the pair
 * conversion) against the same bits but for NaN, which must give a NaN:
 * on a GPU every one of the 2^32
 * float bit patterns, in chunks; on the stand-in, whose device code is
 * the CPU's, the bit patterns whose low 16 bits lie at or next to a
 * rounding's edges (0x0000, 0x7fff, 0x8000, 0x8001, 0xffff) under every
 * high half, and every 65,521st pattern. */
static void test_bf16_every_float(void **state) {
  (void)state;
  NEED_GPU();
  const int full = !on_stand_in();
  const size_t chunk = full ? (size_t)1 << 26 : (size_t)5 * 65536 + 65536;
  float *h = malloc(chunk * sizeof *h), *d = NULL;
  uint16_t *want = malloc(chunk * sizeof *want), *got = malloc(chunk * sizeof *got), *d16 = NULL;
  assert_true(h && want && got);
  uint32_t *pairs = malloc(chunk / 2 * sizeof *pairs), *d32 = NULL;
  assert_true(pairs && chunk % 2 == 0);
  CK(cudaMalloc((void **)&d, chunk * sizeof *d));
  CK(cudaMalloc((void **)&d16, chunk * sizeof *d16));
  CK(cudaMalloc((void **)&d32, chunk / 2 * sizeof *d32));
  const uint32_t edges[] = {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu};
  unsigned long long seen = 0;
  for (uint64_t base = 0; base < (full ? 0x100000000ull : 1); base += chunk) {
    size_t n = 0;
    if (full) {
      for (; n < chunk; n++) h[n] = hd_bits_float((uint32_t)(base + n));
    } else {
      for (uint32_t hi = 0; hi < 65536; hi++)
        for (int e = 0; e < 5; e++) h[n++] = hd_bits_float(hi << 16 | edges[e]);
      for (uint64_t u = 0; u < 0x100000000ull && n < chunk; u += 65521)
        h[n++] = hd_bits_float((uint32_t)u);
    }
    CK(cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice));
    pg_error err;
    assert_int_equal(bf16_pack_cuda(d16, d, n, 0, &err), 0);
    CK(cudaMemcpy(got, d16, n * sizeof *got, cudaMemcpyDeviceToHost));
    bf16_pack(want, h, n);
    if (memcmp(got, want, n * sizeof *got)) {
      size_t j = 0;
      while (got[j] == want[j]) j++;
      fail_msg("bf16_from_float(%a, bits 0x%08x): gpu 0x%04x, cpu 0x%04x", (double)h[j],
               (unsigned)hd_float_bits(h[j]), (unsigned)got[j], (unsigned)want[j]);
    }
    /* bf16_pack2_mma (one conversion a pair on the GPU) against the same
     * bits, each half; where the input is NaN, a NaN is all it promises */
    assert_true(n % 2 == 0);
    assert_int_equal(bf16_pack2_mma_cuda(d32, d, n / 2, 0, &err), 0);
    CK(cudaMemcpy(pairs, d32, n / 2 * sizeof *pairs, cudaMemcpyDeviceToHost));
    for (size_t j = 0; j < n; j++) {
      const uint16_t g = (uint16_t)(pairs[j / 2] >> (j % 2 * 16));
      const int nan_in = (hd_float_bits(h[j]) & 0x7fffffffu) > 0x7f800000u;
      if (nan_in ? (g & 0x7fffu) <= 0x7f80u : g != want[j])
        fail_msg("bf16_pack2_mma(%a, bits 0x%08x), %s half: gpu 0x%04x, cpu 0x%04x", (double)h[j],
                 (unsigned)hd_float_bits(h[j]), j % 2 ? "high" : "low", (unsigned)g,
                 (unsigned)want[j]);
    }
    seen += n;
  }
  /* every pattern, or the edges' 327,680 and the sample */
  assert_true(full ? seen == 0x100000000ull : seen > 5 * 65536);
  CK(cudaFree(d)), CK(cudaFree(d16)), CK(cudaFree(d32));
  free(h), free(want), free(got), free(pairs);
}

#else
static void test_bf16_every_float(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bf16_every_float)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
