/* Helpers of the GPU tests (tests/test_cuda_*.c): whether a GPU is usable
 * (and why not), device copies, and the bit-for-bit comparison that every
 * CUDA kernel must pass against its CPU twin. Only with the CUDA build. */
#ifndef PGOLF_TEST_CUDA_CHECK_H
#define PGOLF_TEST_CUDA_CHECK_H

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "kernels/bf16.h"
#include "kernels/cuda_common.h"
#include "tests/kernel_check.h"

static char g_why[PG_ERR_MSG + 64];

/* 0 when a GPU is usable; otherwise the reason is in g_why. */
static inline int gpu_ready(void) {
  pg_error err;
  int n;
  if (cuda_device_count(&n, &err)) {
    snprintf(g_why, sizeof g_why, "needs a GPU: %s", err.msg);
    return -1;
  }
  return 0;
}

#define NEED_GPU()                             \
  do {                                         \
    if (gpu_ready()) {                         \
      fprintf(stderr, "skipped: %s\n", g_why); \
      skip();                                  \
    }                                          \
  } while (0)

#define CK(call) assert_int_equal((call), cudaSuccess)

/* 1 on ci/cuda-emu.sh's CPU stand-in (whose products are the CPU's, so a
 * composed result must equal the CPU's bit for bit), 0 on a GPU. */
static inline int on_stand_in(void) {
  cuda_device_info info;
  pg_error err;
  return cuda_device_query(0, &info, &err) == 0 && strstr(info.name, "cuda-emu") != NULL;
}

/* 1 where a tensor-core product is the CPU's fmaf chain: the stand-in,
 * unless told to add another way (CUDA_EMU_MMA=wide, ci/cuda_emu/emu.h);
 * 0 on a GPU. */
static inline int mma_is_cpu_chain(void) {
  const char *m = getenv("CUDA_EMU_MMA");
  return on_stand_in() && !(m && !strcmp(m, "wide"));
}

/* n new host floats from rng, uniform in [-scale, scale), rounded to
 * bf16 when bf16 (the inputs of a bf16 kernel are bf16 values). */
static inline float *kc_filled(kc_rng *rng, size_t n, double scale, int bf16) {
  float *x = malloc((n > 0 ? n : 1) * sizeof *x);
  assert_non_null(x);
  kc_fill(rng, x, n, scale);
  if (bf16) bf16_round_array(x, n);
  return x;
}

/* A device copy of n bytes of host memory. */
static inline void *dev_bytes(const void *h, size_t bytes) {
  void *d = NULL;
  CK(cudaMalloc(&d, bytes > 0 ? bytes : 1));
  if (bytes) CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

static inline float *to_device(const float *h, size_t n) {
  return (float *)dev_bytes(h, n * sizeof *h);
}

static inline void to_device_again(float *d, const float *h, size_t n) {
  CK(cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice));
}

static inline void from_device(float *h, const float *d, size_t n) {
  CK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
}

static inline void assert_same_bits(const float *a, const float *b, size_t n, const char *what) {
  if (memcmp(a, b, n * sizeof *a) == 0) return;
  for (size_t i = 0; i < n; i++)
    if (memcmp(&a[i], &b[i], sizeof *a)) {
      fprintf(stderr, "%s: element %zu: gpu %.9g, cpu %.9g\n", what, i, (double)a[i], (double)b[i]);
      break;
    }
  fail();
}

/* Wait for the device, then its n floats at dev must be want's bits. */
static inline void expect_device(const float *dev, const float *want, size_t n, const char *what) {
  CK(cudaDeviceSynchronize());
  float *got = malloc((n > 0 ? n : 1) * sizeof *got);
  assert_non_null(got);
  from_device(got, dev, n);
  assert_same_bits(got, want, n, what);
  free(got);
}

/* The packed bf16 bits of n host floats, on the device (the floats must
 * be bf16 already for the bits to be them: the callers round first). */
static inline uint16_t *packed_device(const float *x, size_t n) {
  uint16_t *h = malloc((n > 0 ? n : 1) * sizeof *h);
  assert_non_null(h);
  bf16_pack(h, x, n);
  uint16_t *d = (uint16_t *)dev_bytes(h, n * sizeof *h);
  free(h);
  return d;
}

/* A device array of n bf16s, every one 0xffff (a NaN): an element a
 * kernel forgets to write shows. */
static inline uint16_t *packed_nans(size_t n) {
  uint16_t *d = NULL;
  CK(cudaMalloc((void **)&d, (n > 0 ? n : 1) * sizeof *d));
  CK(cudaMemset(d, 0xff, n * sizeof *d));
  return d;
}

/* Wait for the device, then the packed copy dev16 must hold exactly the n
 * floats at dev: each a bf16 value, its bits there. */
static inline void expect_packed(const uint16_t *dev16, const float *dev, size_t n,
                                 const char *what) {
  CK(cudaDeviceSynchronize());
  uint16_t *h16 = malloc((n > 0 ? n : 1) * sizeof *h16);
  float *f = malloc((n > 0 ? n : 1) * sizeof *f);
  assert_non_null(h16);
  assert_non_null(f);
  CK(cudaMemcpy(h16, dev16, n * sizeof *h16, cudaMemcpyDeviceToHost));
  from_device(f, dev, n);
  for (size_t i = 0; i < n; i++) {
    float w = bf16_to_float(h16[i]);
    if (memcmp(&w, &f[i], sizeof w))
      fail_msg("%s: packed element %zu: bits 0x%04x, the float stored is %.9g", what, i,
               (unsigned)h16[i], (double)f[i]);
  }
  free(h16), free(f);
}
#endif

#endif
