/* The CUDA runtime seen from pgolf: its errors turned into pg_error values
 * (no exit(), no printing: the verb at the edge reports), the device query
 * every GPU verb starts with, and launch checking for the kernels'
 * launchers. Only compiled where nvcc is present (PGOLF_HAVE_CUDA). */
#ifndef PGOLF_CUDA_COMMON_H
#define PGOLF_CUDA_COMMON_H

#include <stddef.h>

#include "common/error.h"

#ifdef PGOLF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* jansson's object, declared rather than included: every .cu file
 * includes this header, and compiles where jansson's headers may be absent
 * (the GPU machine's static checks); the .c callers include <jansson.h>. */
struct json_t;

/* What pgolf records of one GPU (the manifest's "device"). */
typedef struct cuda_device_info {
  int index;
  char name[256];
  int sm_count;
  int cc_major, cc_minor;
  unsigned long long memory_bytes;
  char pci_bus_id[32];
} cuda_device_info;

typedef struct cuda_versions {
  int driver;  /* cudaDriverGetVersion, e.g. 13000; 0 without a driver */
  int runtime; /* cudaRuntimeGetVersion */
} cuda_versions;

/* What a manifest records of one GPU: {"kind": "cuda", "name", "index",
 * "sm_count", "compute_capability", "memory_bytes", "pci_bus_id",
 * "driver_version", "runtime_version"} (train's and eval's "device"; the
 * caller adds what it has beside, cuBLASLt's plans first). NULL when out of
 * memory. */
struct json_t *cuda_device_json(const cuda_device_info *d, const cuda_versions *v);

/* The same as one log line: "device:cuda:I name:N sm_count:S
 * compute_capability:M.m driver:D runtime:R". */
void cuda_device_line(char *buf, size_t cap, const cuda_device_info *d, const cuda_versions *v);

/* 1 when this pgolf was built with the CUDA path. */
int cuda_built(void);

/* The number of usable GPUs into *n. Fails (err, -1) with the runtime's
 * reason when there is none: "no CUDA device: <reason>". Without the CUDA
 * build it fails with "this pgolf was built without CUDA". */
int cuda_device_count(int *n, pg_error *err);

/* Properties of GPU i (0 <= i < count). */
int cuda_device_query(int i, cuda_device_info *out, pg_error *err);

/* Driver and runtime versions (driver 0 when no driver is loaded). */
int cuda_versions_get(cuda_versions *v, pg_error *err);

#ifdef PGOLF_HAVE_CUDA
/* Fill err from a failed runtime call and return -1; `what` names the call. */
int cuda_fail(pg_error *err, cudaError_t rc, const char *what);

/* After a kernel launch: the launch's own error (bad configuration, no
 * device) as err. Does not synchronize. */
int cuda_check_launch(pg_error *err, const char *kernel);

/* A launcher's check of its packed copy y16 (kernels/flags.h): given one,
 * every value the kernel stores must be bf16 (kernel_packed_ok), or the
 * copy would not be the value. -1 with err naming op otherwise. */
int cuda_packed_check(pg_error *err, const char *op, const void *y16, int flags);

/* An input given as floats (x) or packed (x16): exactly one of the two,
 * else -1 with err naming op and the input. */
int cuda_input_check(pg_error *err, const char *op, const char *name, const void *x,
                     const void *x16);

/* A forward whose float32 result y may be left unwritten (NULL) where
 * only the GEMMs read it, through its packed copy: one of the two must be
 * given. -1 with err naming op otherwise. */
int cuda_output_check(pg_error *err, const char *op, const void *y, const void *y16);

/* The launch shape of the elementwise kernels: blocks of CUDA_EW_THREADS
 * threads walking n elements in a grid-stride loop, at most
 * CUDA_EW_MAX_BLOCKS blocks. Each element's result depends on its own
 * inputs alone, so the shape changes no bits. The CPU stand-in
 * (ci/cuda-emu.sh) builds the kernels with 3 blocks at most: its tests'
 * small shapes then make every thread walk many elements, by a stride of
 * 768, through the carries of index_walk.h (the tests' shapes have
 * divisors that 768 is no multiple of). */
#define CUDA_EW_THREADS 256
#ifndef CUDA_EW_MAX_BLOCKS
#define CUDA_EW_MAX_BLOCKS 4096
#endif
static inline unsigned cuda_ew_blocks(size_t n) {
  size_t b = (n + CUDA_EW_THREADS - 1) / CUDA_EW_THREADS;
  return (unsigned)(b < CUDA_EW_MAX_BLOCKS ? (b > 0 ? b : 1) : CUDA_EW_MAX_BLOCKS);
}

/* Evaluate a runtime call; on failure fill err and return -1 from the
 * enclosing function. */
#define PG_CUDA_TRY(err, call)                                                   \
  do {                                                                           \
    cudaError_t pg_cuda_rc_ = (call);                                            \
    if (pg_cuda_rc_ != cudaSuccess) return cuda_fail((err), pg_cuda_rc_, #call); \
  } while (0)
#endif

#ifdef __cplusplus
}
#endif

#endif
