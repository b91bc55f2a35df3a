/* A stand-in for libnvidia-ml.so.1, loaded by pgolf through
 * PGOLF_NVML_LIBRARY in the tests: it answers the NVML queries pgolf makes
 * with a machine described by environment variables, so the attestation's
 * logic (what matches the challenge, what is busy, what is recorded) is
 * tested where there is no GPU. Not a model of NVML beyond those calls.
 *   FAKE_NVML_INIT_FAIL=1          nvmlInit_v2 fails
 *   FAKE_NVML_GPUS=N               device count (default 8)
 *   FAKE_NVML_NAME=S               every device's name ("NVIDIA H100 80GB HBM3")
 *   FAKE_NVML_POWER_MAX_MW=N       maximum power limit (700000)
 *   FAKE_NVML_MIG=1                MIG enabled on every device
 *   FAKE_NVML_BUSY_PID=N           one compute process with this pid on GPU 0
 *   FAKE_NVML_ECC_OFF_GPU=N        ECC disabled on GPU N (on everywhere else)
 *   FAKE_NVML_THROTTLE=MASK        clock event reasons (NVML's bits, decimal or
 *                                  0x hex) GPU FAKE_NVML_THROTTLE_GPU (default 0)
 *                                  reports, e.g. 0x20 software thermal slowdown */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { unsigned gpu, memory; } util_t;
typedef struct {
  unsigned pid;
  unsigned long long used;
  unsigned gi, ci;
} proc_t;

static unsigned env_u(const char *k, unsigned dflt) {
  const char *v = getenv(k);
  return v && *v ? (unsigned)strtoul(v, NULL, 10) : dflt;
}
/* The index of a handle (handles are index + 1); -1 for an unset variable. */
static long gpu_of(void *d) { return (long)(unsigned long)d - 1; }
static long env_l(const char *k) {
  const char *v = getenv(k);
  return v && *v ? strtol(v, NULL, 0) : -1;
}
static int dev_ok(void *d) { return (unsigned long)d >= 1 && (unsigned long)d <= env_u("FAKE_NVML_GPUS", 8); }

int nvmlInit_v2(void) { return env_u("FAKE_NVML_INIT_FAIL", 0) ? 9 /* DRIVER_NOT_LOADED */ : 0; }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int rc) { return rc == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int nvmlSystemGetDriverVersion(char *v, unsigned n) { snprintf(v, n, "580.65.06"); return 0; }
int nvmlSystemGetCudaDriverVersion_v2(int *v) { *v = 13000; return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = env_u("FAKE_NVML_GPUS", 8); return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) {
  if (i >= env_u("FAKE_NVML_GPUS", 8)) return 2;
  *d = (void *)(unsigned long)(i + 1);
  return 0;
}
int nvmlDeviceGetName(void *d, char *s, unsigned n) {
  const char *name = getenv("FAKE_NVML_NAME");
  if (!dev_ok(d)) return 2;
  snprintf(s, n, "%s", name && *name ? name : "NVIDIA H100 80GB HBM3");
  return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, mem_t *m) {
  m->total = 85520809984ull, m->used = (unsigned long)d == 1 && env_u("FAKE_NVML_BUSY_PID", 0) ? 1ull << 30 : 0;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetEccMode(void *d, int *cur, int *pend) {
  *cur = *pend = gpu_of(d) != env_l("FAKE_NVML_ECC_OFF_GPU");
  return 0;
}
int nvmlDeviceGetPersistenceMode(void *d, int *v) { (void)d; *v = 1; return 0; }
int nvmlDeviceGetMigMode(void *d, unsigned *c, unsigned *p) { (void)d; *c = *p = env_u("FAKE_NVML_MIG", 0); return 0; }
int nvmlDeviceGetClockInfo(void *d, int t, unsigned *v) { (void)d; *v = t == 1 ? 1980 : 2619; return 0; }
int nvmlDeviceGetMaxClockInfo(void *d, int t, unsigned *v) { (void)d; *v = t == 1 ? 1980 : 2619; return 0; }
int nvmlDeviceGetPowerManagementLimit(void *d, unsigned *v) { (void)d; *v = env_u("FAKE_NVML_POWER_MAX_MW", 700000); return 0; }
int nvmlDeviceGetPowerManagementLimitConstraints(void *d, unsigned *lo, unsigned *hi) {
  (void)d;
  *lo = 200000, *hi = env_u("FAKE_NVML_POWER_MAX_MW", 700000);
  return 0;
}
int nvmlDeviceGetNvLinkState(void *d, unsigned link, int *st) { (void)d; *st = 1; return link < 18 ? 0 : 2; }
int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, proc_t *p) {
  unsigned pid = env_u("FAKE_NVML_BUSY_PID", 0);
  if ((unsigned long)d != 1 || !pid) return *n = 0, 0;
  if (*n < 1) return *n = 1, 7;
  p[0] = (proc_t){pid, 1ull << 30, 0, 0};
  *n = 1;
  return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, util_t *u) { (void)d; u->gpu = 97, u->memory = 41; return 0; }
int nvmlDeviceGetPowerUsage(void *d, unsigned *mw) { (void)d; *mw = 612000; return 0; }
int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *r) {
  const char *mask = getenv("FAKE_NVML_THROTTLE");
  long gpu = env_l("FAKE_NVML_THROTTLE_GPU");
  *r = mask && *mask && gpu_of(d) == (gpu < 0 ? 0 : gpu) ? strtoull(mask, NULL, 0) : 0;
  return 0;
}
