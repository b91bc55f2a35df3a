/* The CPU stand-in's launches and the runtime calls pgolf uses (see
 * emu.h). One pthread per thread of a block; each runs every block of the
 * grid in turn, with a barrier before and after each block. */
#include "emu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

thread_local emu_place emu_here;

enum { WARP = 32, MAX_WARPS = 32 };
static pthread_barrier_t block_barrier, warp_barrier[MAX_WARPS];
static unsigned votes[MAX_WARPS][WARP];
static dim3 launch_grid, launch_block;
static const std::function<void()> *launch_body;

void emu_syncthreads() { pthread_barrier_wait(&block_barrier); }

/* Every lane posts its vote, all read them, and none posts the next vote
 * before all have read. */
unsigned emu_ballot(int pred) {
  unsigned w = emu_here.thread.x / WARP, lane = emu_here.thread.x % WARP;
  votes[w][lane] = pred != 0;
  pthread_barrier_wait(&warp_barrier[w]);
  unsigned mask = 0;
  for (unsigned i = 0; i < WARP; i++) mask |= votes[w][i] << i;
  pthread_barrier_wait(&warp_barrier[w]);
  return mask;
}

static void *run_thread(void *arg) {
  emu_here.thread.x = (unsigned)(uintptr_t)arg;
  emu_here.thread.y = emu_here.thread.z = 0;
  emu_here.block_dim = launch_block;
  emu_here.grid_dim = launch_grid;
  for (unsigned bz = 0; bz < launch_grid.z; bz++)
    for (unsigned by = 0; by < launch_grid.y; by++)
      for (unsigned bx = 0; bx < launch_grid.x; bx++) {
        emu_here.block.x = bx, emu_here.block.y = by, emu_here.block.z = bz;
        pthread_barrier_wait(&block_barrier);
        (*launch_body)();
        pthread_barrier_wait(&block_barrier);
      }
  return NULL;
}

void emu_launch(dim3 grid, dim3 block, const std::function<void()> &body) {
  unsigned n = block.x, warps = n / WARP;
  if (block.y != 1 || block.z != 1 || n % WARP || warps > MAX_WARPS) {
    fprintf(stderr, "cuda-emu: unsupported launch shape\n");
    abort();
  }
  launch_grid = grid, launch_block = block, launch_body = &body;
  pthread_barrier_init(&block_barrier, NULL, n);
  for (unsigned w = 0; w < warps; w++) pthread_barrier_init(&warp_barrier[w], NULL, WARP);
  std::vector<pthread_t> threads(n);
  for (unsigned t = 0; t < n; t++)
    if (pthread_create(&threads[t], NULL, run_thread, (void *)(uintptr_t)t)) abort();
  for (unsigned t = 0; t < n; t++) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&block_barrier);
  for (unsigned w = 0; w < warps; w++) pthread_barrier_destroy(&warp_barrier[w]);
}

/* The runtime: host memory, synchronous. One device, or CUDA_EMU_DEVICES
 * (for the multi-GPU runs, whose processes each take one: every "device"
 * is this host). */
static int emu_devices(void) {
  const char *v = getenv("CUDA_EMU_DEVICES");
  int n = v ? atoi(v) : 1;
  return n >= 1 && n <= 64 ? n : 1;
}
static int emu_current;
extern "C" {
cudaError_t cudaGetDeviceCount(int *n) { return *n = emu_devices(), cudaSuccess; }
cudaError_t cudaSetDevice(int i) {
  if (i < 0 || i >= emu_devices()) return cudaErrorInvalidDevice;
  return emu_current = i, cudaSuccess;
}
cudaError_t cudaGetDevice(int *i) { return *i = emu_current, cudaSuccess; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaMalloc(void **p, size_t n) { return *p = malloc(n ? n : 1), cudaSuccess; }
cudaError_t cudaFree(void *p) { return free(p), cudaSuccess; }
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  (void)kind;
  memmove(dst, src, n);
  return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int v, size_t n) { return memset(p, v, n), cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
// One stream, and kernels run to completion at launch: the async calls are
// their synchronous forms.
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t s) {
  (void)s;
  return cudaMemcpy(dst, src, n, kind);
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t s) {
  (void)s;
  return cudaMemset(p, v, n);
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return (void)s, cudaSuccess; }
cudaError_t cudaStreamQuery(cudaStream_t s) { return (void)s, cudaSuccess; }
// Streams and events order nothing here: every call has finished when it
// returns. Handles are distinct non-null tokens.
static char emu_handles[64];
static int emu_next_handle;
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  (void)flags;
  *s = (cudaStream_t)(void *)&emu_handles[emu_next_handle++ % 64];
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) { return (void)s, cudaSuccess; }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags) {
  (void)flags;
  *e = (cudaEvent_t)(void *)&emu_handles[emu_next_handle++ % 64];
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) { return (void)e, cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return (void)e, (void)s, cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return (void)e, cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags) {
  return (void)s, (void)e, (void)flags, cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
const char *cudaGetErrorString(cudaError_t e) { return e ? "emulated error" : "no error"; }
const char *cudaGetErrorName(cudaError_t e) { return e ? "cudaErrorUnknown" : "cudaSuccess"; }
cudaError_t cudaRuntimeGetVersion(int *v) { return *v = CUDART_VERSION, cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { return *v = 0, cudaSuccess; }
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int i) {
  if (i < 0 || i >= emu_devices()) return cudaErrorInvalidDevice;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "cuda-emu (CPU)");
  p->pciDeviceID = i; /* tells the stand-in's devices apart in a record */
  return cudaSuccess;
}
}
