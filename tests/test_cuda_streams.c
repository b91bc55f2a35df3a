/* The stream-ordering contracts the GPU trainer (trainer/train_cuda.c)
 * relies on, with its own kernels on streams created as it creates them
 * (cudaStreamNonBlocking):
 *   - an event recorded on stream A and waited for on stream B orders B's
 *     kernel after A's (the staged/consumed events of the micro-batches);
 *   - a copy from pinned memory has its bytes once an event recorded after
 *     it completes, so the host may then refill the buffer (stage());
 *     per-token losses copied back into pinned memory are there once the
 *     event after the copy completes (sum_val());
 *   - a plain cudaMemset goes to the legacy default stream: a non-blocking
 *     stream sees its zeros only after a synchronisation, and
 *     cudaMemsetAsync on the stream itself is ordered (commit d4d5c1b);
 *   - a launch the hardware refuses (a grid of 65,536 rows of blocks) is
 *     reported by the launcher's check, not lost.
 * These are the ordered halves, true on a GPU and on ci/cuda-emu.sh's CPU
 * stand-in under every schedule; the stand-in's own test (ci/cuda_emu/
 * streams_selftest.cu) shows that it gives stale bits without them.
 * Needs a GPU: without one (or without the CUDA build) these skip and say
 * why; ci/gpu-check.sh runs them on a GPU machine and fails on any skip. */
#include "tests/test_util.h"

#include "kernels/embedding.h"
#include "kernels/vec_add.h"
#include "tests/cuda_check.h"

#ifdef PGOLF_HAVE_CUDA
enum { N = 1 << 16 };

static float *device_filled(float v) {
  float *h = malloc(N * sizeof *h);
  assert_non_null(h);
  for (size_t i = 0; i < N; i++) h[i] = v;
  float *d = to_device(h, N);
  free(h);
  return d;
}

static cudaStream_t non_blocking(void) {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

/* Stream A adds 1 to x, stream B adds x to y, four times, each B after an
 * event recorded on A: y = 1 + 2 + 3 + 4. */
static void test_event_orders_two_streams(void **state) {
  (void)state;
  NEED_GPU();
  pg_error err;
  float *x = device_filled(0.0f), *y = device_filled(0.0f), *one = device_filled(1.0f);
  CK(cudaDeviceSynchronize()); /* the copies from pageable memory have landed */
  cudaStream_t a = non_blocking(), b = non_blocking();
  cudaEvent_t added, read;
  CK(cudaEventCreateWithFlags(&added, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&read, cudaEventDisableTiming));
  for (int k = 0; k < 4; k++) {
    CK(cudaStreamWaitEvent(a, read, 0)); /* B's last read of x is done */
    assert_int_equal(vec_add_cuda(x, one, N, 0, a, &err), 0);
    CK(cudaEventRecord(added, a));
    CK(cudaStreamWaitEvent(b, added, 0));
    assert_int_equal(vec_add_cuda(y, x, N, 0, b, &err), 0);
    CK(cudaEventRecord(read, b));
  }
  CK(cudaStreamSynchronize(a));
  CK(cudaStreamSynchronize(b));
  float *want = malloc(N * sizeof *want);
  assert_non_null(want);
  for (size_t i = 0; i < N; i++) want[i] = 10.0f;
  expect_device(y, want, N, "y after four ordered additions");
  for (size_t i = 0; i < N; i++) want[i] = 4.0f;
  expect_device(x, want, N, "x");
  free(want);
  CK(cudaEventDestroy(added));
  CK(cudaEventDestroy(read));
  CK(cudaStreamDestroy(a));
  CK(cudaStreamDestroy(b));
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(one));
}

/* stage()'s pattern: fill a pinned buffer, copy it on a copy stream, and
 * refill it only after the copy's event; the device has each fill in turn.
 * sum_val()'s: a result copied back into pinned memory on the compute
 * stream is read once the event after it completes. */
static void test_pinned_buffers_and_events(void **state) {
  (void)state;
  NEED_GPU();
  pg_error err;
  float *pinned, *back, *d = device_filled(0.0f), *acc = device_filled(0.0f);
  CK(cudaDeviceSynchronize());
  CK(cudaMallocHost((void **)&pinned, N * sizeof *pinned));
  CK(cudaMallocHost((void **)&back, N * sizeof *back));
  cudaStream_t copy = non_blocking(), compute = non_blocking();
  cudaEvent_t staged, consumed, scored;
  CK(cudaEventCreateWithFlags(&staged, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&consumed, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&scored, cudaEventDisableTiming));
  for (int k = 1; k <= 3; k++) {
    CK(cudaEventSynchronize(staged)); /* the last copy out of pinned has its bytes */
    for (size_t i = 0; i < N; i++) pinned[i] = (float)k;
    CK(cudaStreamWaitEvent(copy, consumed, 0)); /* the last read of d is done */
    CK(cudaMemcpyAsync(d, pinned, N * sizeof *d, cudaMemcpyHostToDevice, copy));
    CK(cudaEventRecord(staged, copy));
    CK(cudaStreamWaitEvent(compute, staged, 0));
    assert_int_equal(vec_add_cuda(acc, d, N, 0, compute, &err), 0);
    CK(cudaEventRecord(consumed, compute));
    CK(cudaMemcpyAsync(back, acc, N * sizeof *back, cudaMemcpyDeviceToHost, compute));
    CK(cudaEventRecord(scored, compute));
    CK(cudaEventSynchronize(scored));
    float want = (float)(k * (k + 1) / 2); /* 1, 1 + 2, 1 + 2 + 3 */
    for (size_t i = 0; i < N; i++)
      if (back[i] != want) {
        fprintf(stderr, "fill %d: element %zu is %g, want %g\n", k, i, (double)back[i],
                (double)want);
        fail();
      }
  }
  CK(cudaStreamSynchronize(copy));
  CK(cudaStreamSynchronize(compute));
  CK(cudaEventDestroy(staged));
  CK(cudaEventDestroy(consumed));
  CK(cudaEventDestroy(scored));
  CK(cudaStreamDestroy(copy));
  CK(cudaStreamDestroy(compute));
  CK(cudaFreeHost(pinned));
  CK(cudaFreeHost(back));
  CK(cudaFree(d));
  CK(cudaFree(acc));
}

/* Zeros that a non-blocking stream reads: a plain cudaMemset followed by a
 * synchronisation, or cudaMemsetAsync on the stream itself. */
static void test_memset_then_non_blocking_stream(void **state) {
  (void)state;
  NEED_GPU();
  pg_error err;
  float *z = device_filled(5.0f), *y = device_filled(1.0f);
  float *want = malloc(N * sizeof *want);
  assert_non_null(want);
  for (size_t i = 0; i < N; i++) want[i] = 1.0f;
  cudaStream_t s = non_blocking();
  CK(cudaMemset(z, 0, N * sizeof *z)); /* the legacy stream: s does not wait for it */
  CK(cudaDeviceSynchronize());
  assert_int_equal(vec_add_cuda(y, z, N, 0, s, &err), 0);
  CK(cudaStreamSynchronize(s));
  expect_device(y, want, N, "y + (cudaMemset's zeros, synchronised)");
  assert_int_equal(vec_add_cuda(z, y, N, 0, s, &err), 0); /* z = 1 */
  CK(cudaMemsetAsync(z, 0, N * sizeof *z, s));
  assert_int_equal(vec_add_cuda(y, z, N, 0, s, &err), 0);
  CK(cudaStreamSynchronize(s));
  expect_device(y, want, N, "y + (cudaMemsetAsync's zeros on the same stream)");
  free(want);
  CK(cudaStreamDestroy(s));
  CK(cudaFree(z));
  CK(cudaFree(y));
}

/* The embedding backward's grid has a row of blocks per EMB_THREADS (256)
 * channels: 65,536 rows is past the hardware's 65,535, and the launch
 * check (kernels/cuda_common.h) must report it. */
static void test_refused_launch_is_reported(void **state) {
  (void)state;
  NEED_GPU();
  pg_error err;
  const int d = 65536 * 256;
  float *table, *dy;
  uint16_t *ids;
  CK(cudaMalloc((void **)&table, (size_t)d * sizeof *table));
  CK(cudaMalloc((void **)&dy, (size_t)d * sizeof *dy));
  CK(cudaMalloc((void **)&ids, sizeof *ids));
  CK(cudaMemset(ids, 0, sizeof *ids));
  CK(cudaDeviceSynchronize());
  assert_int_equal(embedding_backward_cuda(table, dy, ids, 1, 1, d, 0, 0, &err), -1);
  fprintf(stderr, "refused as: %s\n", err.msg);
  assert_non_null(strstr(err.msg, "embedding_backward_kernel"));
  /* The CUDA 13 runtime's answer on an H200 (2026-11-27). */
  assert_non_null(strstr(err.msg, "(cudaErrorInvalidValue)"));
  CK(cudaGetLastError()); /* cleared: the next launch is not blamed */
  CK(cudaFree(table));
  CK(cudaFree(dy));
  CK(cudaFree(ids));
}
#else
static void no_cuda(void **state) {
  (void)state;
  fprintf(stderr, "skipped: needs a GPU: this pgolf was built without CUDA (no nvcc)\n");
  skip();
}
#define test_event_orders_two_streams no_cuda
#define test_pinned_buffers_and_events no_cuda
#define test_memset_then_non_blocking_stream no_cuda
#define test_refused_launch_is_reported no_cuda
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_event_orders_two_streams),
      cmocka_unit_test(test_pinned_buffers_and_events),
      cmocka_unit_test(test_memset_then_non_blocking_stream),
      cmocka_unit_test(test_refused_launch_is_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
