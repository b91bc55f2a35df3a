#include "kernels/cuda_common.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "kernels/flags.h"

json_t *cuda_device_json(const cuda_device_info *d, const cuda_versions *v) {
  char cc[16];
  snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
  return json_pack("{s:s, s:s, s:i, s:i, s:s, s:I, s:s, s:i, s:i}", "kind", "cuda", "name", d->name,
                   "index", d->index, "sm_count", d->sm_count, "compute_capability", cc,
                   "memory_bytes", (json_int_t)d->memory_bytes, "pci_bus_id", d->pci_bus_id,
                   "driver_version", v->driver, "runtime_version", v->runtime);
}

void cuda_device_line(char *buf, size_t cap, const cuda_device_info *d, const cuda_versions *v) {
  snprintf(buf, cap, "device:cuda:%d name:%s sm_count:%d compute_capability:%d.%d driver:%d runtime:%d",
           d->index, d->name, d->sm_count, d->cc_major, d->cc_minor, v->driver, v->runtime);
}

#ifdef PGOLF_HAVE_CUDA

int cuda_built(void) { return 1; }

int cuda_fail(pg_error *err, cudaError_t rc, const char *what) {
  return pg_fail(err, "", -1, "%s: %s (%s)", what, cudaGetErrorString(rc), cudaGetErrorName(rc));
}

int cuda_check_launch(pg_error *err, const char *kernel) {
  cudaError_t rc = cudaGetLastError();
  return rc == cudaSuccess ? 0 : cuda_fail(err, rc, kernel);
}

int cuda_packed_check(pg_error *err, const char *op, const void *y16, int flags) {
  if (!y16 || kernel_packed_ok(flags)) return 0;
  return pg_fail(err, "", -1, "%s: a packed copy needs bf16 results (flags %d)", op, flags);
}

int cuda_input_check(pg_error *err, const char *op, const char *name, const void *x,
                     const void *x16) {
  if ((x != NULL) != (x16 != NULL)) return 0;
  return pg_fail(err, "", -1, "%s: %s must come as floats or packed, exactly one (got %s)", op,
                 name, x ? "both" : "neither");
}

int cuda_output_check(pg_error *err, const char *op, const void *y, const void *y16) {
  if (y || y16) return 0;
  return pg_fail(err, "", -1, "%s: no output (neither y nor its packed copy)", op);
}

int cuda_device_count(int *n, pg_error *err) {
  int count = 0;
  cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess)
    return pg_fail(err, "", -1, "no CUDA device: %s (%s)", cudaGetErrorString(rc),
                   cudaGetErrorName(rc));
  if (count < 1) return pg_fail(err, "", -1, "no CUDA device: the runtime found none");
  *n = count;
  return 0;
}

int cuda_device_query(int i, cuda_device_info *out, pg_error *err) {
  struct cudaDeviceProp p;
  cudaError_t rc = cudaGetDeviceProperties(&p, i);
  if (rc != cudaSuccess) return cuda_fail(err, rc, "cudaGetDeviceProperties");
  memset(out, 0, sizeof *out);
  out->index = i;
  snprintf(out->name, sizeof out->name, "%s", p.name);
  out->sm_count = p.multiProcessorCount;
  out->cc_major = p.major;
  out->cc_minor = p.minor;
  out->memory_bytes = (unsigned long long)p.totalGlobalMem;
  snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "%04x:%02x:%02x.0", (unsigned)p.pciDomainID,
           (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
  return 0;
}

int cuda_versions_get(cuda_versions *v, pg_error *err) {
  memset(v, 0, sizeof *v);
  cudaError_t rc = cudaRuntimeGetVersion(&v->runtime);
  if (rc != cudaSuccess) return cuda_fail(err, rc, "cudaRuntimeGetVersion");
  /* Without a driver this reports 0 and succeeds: not an error here. */
  if (cudaDriverGetVersion(&v->driver) != cudaSuccess) v->driver = 0;
  return 0;
}

#else /* built without nvcc: every entry point refuses the same way */

static int not_built(pg_error *err) {
  return pg_fail(err, "", -1, "this pgolf was built without CUDA (no nvcc at build time)");
}

int cuda_built(void) { return 0; }
int cuda_device_count(int *n, pg_error *err) {
  *n = 0;
  return not_built(err);
}
int cuda_device_query(int i, cuda_device_info *out, pg_error *err) {
  (void)i;
  memset(out, 0, sizeof *out);
  return not_built(err);
}
int cuda_versions_get(cuda_versions *v, pg_error *err) {
  memset(v, 0, sizeof *v);
  return not_built(err);
}

#endif
