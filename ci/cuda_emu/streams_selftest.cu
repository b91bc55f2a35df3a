/* The CPU stand-in's stream model against itself (emu-only: ci/cuda-emu.sh
 * compiles it as it compiles the kernels' .cu files and runs it before
 * the tests).
 * Each hazard is shown both ways: without the event or synchronisation the
 * lazy schedule gives the stale bits (and the race check reports it, under
 * every schedule); with it, the new bits and no report, under every
 * schedule. tests/test_cuda_streams.c holds the ordered halves to a GPU as
 * well. Prints ok/FAIL lines; exits 1 on a failure.
 *   python3 ci/cuda_emu/launches.py ci/cuda_emu/streams_selftest.cu t.cpp
 *   g++ -std=c++17 -I. -I$CUDA_HOME/include -include ci/cuda_emu/emu.h \
 *     t.cpp ci/cuda_emu/emu.cpp -lpthread */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ci/cuda_emu/arg_pointers.h"

enum { N = 64 };

__global__ void __launch_bounds__(64) set_kernel(float *y, float v, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = v;
}

__global__ void __launch_bounds__(64) copy_kernel(float *y, const float *x, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}

/* A kernel that takes its buffers in a struct, as residual_norm.cu's:
 * u = x (the pointers the race check must see are io's members). */
__global__ void __launch_bounds__(64) struct_copy_kernel(residual_norm_io io, size_t n) {
  size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) io.u[i] = io.x[i];
}

static int failed;

static void say(bool good, const char *schedule, const char *what) {
  printf("%s %s: %s\n", good ? "ok" : "FAIL", schedule, what);
  if (!good) failed = 1;
}

/* Element 0 of n device floats, once the device is idle. */
static float first(const float *d) {
  float h;
  if (cudaDeviceSynchronize() || cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost)) abort();
  return h;
}

static bool all_equal(const float *d, float v) {
  float h[N];
  if (cudaDeviceSynchronize() || cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost)) abort();
  for (int i = 0; i < N; i++)
    if (h[i] != v) return false;
  return true;
}

/* Two non-blocking streams, an event, and two device buffers of N
 * floats: what (a) and (e) race on. */
typedef struct two_streams {
  cudaStream_t a, b;
  cudaEvent_t e;
  float *buf, *out;
} two_streams;

static two_streams two_streams_open(void) {
  two_streams t;
  cudaStreamCreateWithFlags(&t.a, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&t.b, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&t.e, cudaEventDisableTiming);
  cudaMalloc((void **)&t.buf, N * sizeof *t.buf);
  cudaMalloc((void **)&t.out, N * sizeof *t.out);
  return t;
}

static void two_streams_close(two_streams *t) {
  cudaFree(t->buf);
  cudaFree(t->out);
  cudaEventDestroy(t->e);
  cudaStreamDestroy(t->a);
  cudaStreamDestroy(t->b);
}

/* (a) A kernel on stream B reads what a kernel on stream A writes. */
static void producer_consumer(const char *sch, bool lazy) {
  two_streams t = two_streams_open();
  cudaStream_t a = t.a, b = t.b;
  cudaEvent_t e = t.e;
  float *buf = t.buf, *out = t.out;
  set_kernel<<<1, N, 0, a>>>(buf, 1.0f, N);
  set_kernel<<<1, N, 0, b>>>(out, 0.0f, N);
  cudaDeviceSynchronize();
  unsigned long r0 = emu_races();
  set_kernel<<<1, N, 0, a>>>(buf, 2.0f, N);
  copy_kernel<<<1, N, 0, b>>>(out, buf, N);
  cudaStreamSynchronize(b);
  float got = first(out);
  if (lazy) say(got == 1.0f, sch, "(a) without an event, stream B's kernel reads A's old value");
  if (!strcmp(sch, "eager")) /* the stand-in's old behaviour: blind to the bug */
    say(got == 2.0f, sch, "(a) without an event, eager hides it: B's kernel reads A's new value");
  say(emu_races() > r0, sch, "(a) without an event, the race is reported");
  r0 = emu_races();
  set_kernel<<<1, N, 0, a>>>(buf, 3.0f, N);
  cudaEventRecord(e, a);
  cudaStreamWaitEvent(b, e, 0);
  copy_kernel<<<1, N, 0, b>>>(out, buf, N);
  cudaStreamSynchronize(b);
  say(all_equal(out, 3.0f), sch, "(a) with cudaStreamWaitEvent, B's kernel reads A's new value");
  say(emu_races() == r0, sch, "(a) with the event, no race is reported");
  two_streams_close(&t);
}

/* (b) Host writes to the source of a queued copy: pinned memory is read
 * when the copy runs, pageable memory when it is queued. */
static void pinned_source(const char *sch, bool lazy) {
  cudaStream_t s;
  float *pinned, pageable[N], *d;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMallocHost((void **)&pinned, N * sizeof *pinned);
  cudaMalloc((void **)&d, N * sizeof *d);
  for (int i = 0; i < N; i++) pinned[i] = 1.0f;
  cudaMemcpyAsync(d, pinned, N * sizeof *d, cudaMemcpyHostToDevice, s);
  for (int i = 0; i < N; i++) pinned[i] = 2.0f; /* before the copy has run */
  cudaStreamSynchronize(s);
  if (lazy)
    say(all_equal(d, 2.0f), sch,
        "(b) a pinned buffer written before the sync: the device gets the later write");
  cudaEvent_t copied;
  cudaEventCreateWithFlags(&copied, cudaEventDisableTiming);
  for (int i = 0; i < N; i++) pinned[i] = 3.0f;
  cudaMemcpyAsync(d, pinned, N * sizeof *d, cudaMemcpyHostToDevice, s);
  cudaEventRecord(copied, s);
  cudaEventSynchronize(copied);
  for (int i = 0; i < N; i++) pinned[i] = 4.0f; /* after: the copy has its bytes */
  cudaStreamSynchronize(s);
  say(all_equal(d, 3.0f), sch,
      "(b) a pinned buffer written after cudaEventSynchronize: the device has the first bytes");
  for (int i = 0; i < N; i++) pageable[i] = 5.0f;
  cudaMemcpyAsync(d, pageable, N * sizeof *d, cudaMemcpyHostToDevice, s);
  for (int i = 0; i < N; i++) pageable[i] = 6.0f; /* staged already */
  cudaStreamSynchronize(s);
  say(all_equal(d, 5.0f), sch, "(b) a pageable source is staged when the copy is queued");
  cudaEventDestroy(copied);
  cudaFreeHost(pinned);
  cudaFree(d);
  cudaStreamDestroy(s);
}

/* (c) cudaMemset is queued on the legacy stream, which a non-blocking
 * stream does not wait for (a blocking one does). */
static void legacy_memset(const char *sch, bool lazy) {
  cudaStream_t nb, bl;
  float *buf, *out;
  cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&bl, cudaStreamDefault);
  cudaMalloc((void **)&buf, N * sizeof *buf);
  cudaMalloc((void **)&out, N * sizeof *out);
  set_kernel<<<1, N, 0, nb>>>(buf, 7.0f, N);
  cudaStreamSynchronize(nb);
  unsigned long r0 = emu_races();
  cudaMemset(buf, 0, N * sizeof *buf);
  copy_kernel<<<1, N, 0, nb>>>(out, buf, N);
  cudaStreamSynchronize(nb);
  float got;
  cudaMemcpyAsync(&got, out, sizeof got, cudaMemcpyDeviceToHost, nb);
  cudaStreamSynchronize(nb);
  if (lazy)
    say(got == 7.0f, sch,
        "(c) a non-blocking stream's kernel after cudaMemset reads the old bytes");
  say(emu_races() > r0, sch, "(c) cudaMemset then a non-blocking stream: the race is reported");
  cudaDeviceSynchronize();
  r0 = emu_races();
  set_kernel<<<1, N, 0, nb>>>(buf, 7.0f, N);
  cudaStreamSynchronize(nb);
  cudaMemset(buf, 0, N * sizeof *buf);
  copy_kernel<<<1, N, 0, bl>>>(out, buf, N);
  cudaStreamSynchronize(bl);
  say(all_equal(out, 0.0f), sch, "(c) a blocking stream's kernel after cudaMemset reads zeros");
  set_kernel<<<1, N, 0, nb>>>(buf, 7.0f, N);
  cudaStreamSynchronize(nb);
  cudaMemsetAsync(buf, 0, N * sizeof *buf, nb);
  copy_kernel<<<1, N, 0, nb>>>(out, buf, N);
  cudaStreamSynchronize(nb);
  say(all_equal(out, 0.0f), sch, "(c) cudaMemsetAsync on the stream that reads: zeros");
  say(emu_races() == r0, sch, "(c) ordered, no race is reported");
  cudaFree(buf);
  cudaFree(out);
  cudaStreamDestroy(nb);
  cudaStreamDestroy(bl);
}

/* (d) Shapes the hardware refuses fail the launch, run nothing, and the
 * error is cleared once read. */
static void launch_limits(const char *sch) {
  float *buf;
  cudaMalloc((void **)&buf, N * sizeof *buf);
  set_kernel<<<1, N>>>(buf, 1.0f, N);
  cudaGetLastError();
  set_kernel<<<dim3(1, 65536), 32>>>(buf, 2.0f, N);
  say(cudaGetLastError() == cudaErrorInvalidValue, sch,
      "(d) grid.y = 65536 is refused (cudaErrorInvalidValue, as on an H200)");
  say(cudaGetLastError() == cudaSuccess, sch, "(d) the error is cleared once read");
  set_kernel<<<dim3(1, 1, 65536), 32>>>(buf, 2.0f, N);
  say(cudaGetLastError() == cudaErrorInvalidValue, sch, "(d) grid.z = 65536 is refused");
  set_kernel<<<0, 32>>>(buf, 2.0f, N);
  say(cudaGetLastError() == cudaErrorInvalidConfiguration, sch, "(d) an empty grid is refused");
  copy_kernel<<<1, 2048>>>(buf, buf, N);
  say(cudaGetLastError() == cudaErrorInvalidConfiguration, sch,
      "(d) a block of 2048 threads is refused");
  set_kernel<<<1, 128>>>(buf, 2.0f, N);
  say(cudaGetLastError() == cudaErrorLaunchOutOfResources, sch,
      "(d) a block of 128 past __launch_bounds__(64) is refused");
  say(all_equal(buf, 1.0f), sch, "(d) no refused launch ran");
  cudaFree(buf);
}

/* (e) As (a), with stream B's kernel reading and writing through a
 * struct passed by value (arg_pointers.h lists its pointers). */
static void struct_arguments(const char *sch) {
  two_streams t = two_streams_open();
  cudaStream_t a = t.a, b = t.b;
  cudaEvent_t e = t.e;
  float *buf = t.buf, *out = t.out;
  residual_norm_io io;
  memset(&io, 0, sizeof io);
  io.x = buf, io.u = out;
  cudaDeviceSynchronize();
  unsigned long r0 = emu_races();
  set_kernel<<<1, N, 0, a>>>(buf, 2.0f, N);
  struct_copy_kernel<<<1, N, 0, b>>>(io, N);
  cudaDeviceSynchronize();
  say(emu_races() > r0, sch, "(e) a struct's member read on stream B without an event: reported");
  r0 = emu_races();
  set_kernel<<<1, N, 0, a>>>(out, 4.0f, N); /* buf is ordered: only u = out races */
  struct_copy_kernel<<<1, N, 0, b>>>(io, N);
  cudaDeviceSynchronize();
  say(emu_races() > r0, sch,
      "(e) a struct's member written on B after A's write, no event: reported");
  r0 = emu_races();
  set_kernel<<<1, N, 0, a>>>(buf, 3.0f, N);
  cudaEventRecord(e, a);
  cudaStreamWaitEvent(b, e, 0);
  struct_copy_kernel<<<1, N, 0, b>>>(io, N);
  cudaStreamSynchronize(b);
  say(all_equal(out, 3.0f), sch, "(e) with the event, the struct's reader sees A's new value");
  say(emu_races() == r0, sch, "(e) with the event, no race is reported");
  two_streams_close(&t);
}

/* The arguments are the values at the launch, not when the grid runs. */
static void arguments_copied(const char *sch) {
  cudaStream_t s;
  float *buf;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaMalloc((void **)&buf, N * sizeof *buf);
  struct {
    float v;
    float *p;
  } args = {8.0f, buf};
  set_kernel<<<1, N, 0, s>>>(args.p, args.v, N);
  args.v = 9.0f, args.p = NULL;
  cudaStreamSynchronize(s);
  say(all_equal(buf, 8.0f), sch, "a launch's arguments are copied when it is queued");
  cudaFree(buf);
  cudaStreamDestroy(s);
}

int main(void) {
  const char *schedules[] = {"lazy", "eager", "random:1", "random:2", "random:3"};
  emu_set_races("warn");
  for (const char *sch : schedules) {
    emu_set_schedule(sch);
    bool lazy = !strcmp(sch, "lazy");
    producer_consumer(sch, lazy);
    pinned_source(sch, lazy);
    legacy_memset(sch, lazy);
    launch_limits(sch);
    arguments_copied(sch);
    struct_arguments(sch);
  }
  /* Under eager the unordered read happens to see the new value: only the
   * race check catches it there (shown by the lines above). */
  return failed;
}
