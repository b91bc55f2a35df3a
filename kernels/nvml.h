/* Hardware attestation through NVML, opened with dlopen: pgolf never links
 * libnvidia-ml, so it starts (and says "attested": false) where there is no
 * NVIDIA driver. Before a replay it records what the run will use: every
 * GPU's name, form factor, memory, ECC, persistence, clocks, power limits,
 * NVLink and MIG state, the driver and CUDA driver versions, and every
 * process already on a GPU; during the run a sampler records utilization,
 * memory, power, SM clock and throttle reasons about once a second.
 *
 * The library is libnvidia-ml.so.1, or the file named by the environment
 * variable PGOLF_NVML_LIBRARY (an unusual install; the tests' stand-in).
 * The types below are NVML's documented ABI, declared here because the
 * toolkit does not always ship nvml.h. */
#ifndef PGOLF_NVML_H
#define PGOLF_NVML_H

#include <jansson.h>
#include <stddef.h>

#include "common/error.h"

#define NVML_ATTEST_MAX_GPUS 16
#define NVML_ATTEST_MAX_PROCS 64

typedef struct nvml_gpu {
  unsigned index;
  char name[96];
  const char *form_factor; /* "SXM", "PCIe", "NVL" or "unknown" (from the name, see nvml.c) */
  unsigned long long memory_total_bytes;
  int ecc, persistence, mig;           /* 1 enabled, 0 disabled, -1 not reported */
  unsigned sm_clock_mhz, sm_clock_max_mhz, mem_clock_max_mhz; /* 0: not reported */
  unsigned power_limit_mw, power_max_mw;
  int nvlink_active;                   /* links up, -1 not reported */
  unsigned long long throttle_reasons; /* clock event reasons when attested (NVML's bits) */
} nvml_gpu;

typedef struct nvml_proc {
  unsigned gpu, pid;
  unsigned long long used_memory_bytes;
  char comm[32]; /* /proc/PID/comm, "" when unreadable */
} nvml_proc;

typedef struct nvml_attest {
  int attested;        /* 0: NVML unusable; reason says why */
  char reason[256];
  char driver_version[80];
  int cuda_driver_version; /* e.g. 13000 */
  unsigned n_gpus;
  nvml_gpu gpus[NVML_ATTEST_MAX_GPUS];
  size_t n_procs;
  int procs_truncated;
  nvml_proc procs[NVML_ATTEST_MAX_PROCS];
} nvml_attest;

/* Fill *a from NVML. Never fails: a missing library, a failed init or a
 * failed query of the device count leaves attested = 0 with the reason;
 * a field a GPU does not report is -1 / 0 as documented above. */
void nvml_attest_take(nvml_attest *a);

/* 1 when the attested hardware is the challenge's: CHALLENGE_WORLD_SIZE
 * H100 SXM GPUs, MIG off, ECC on (the cloud's H100s run with ECC; a board
 * with ECC off is not the machine the record was timed on, and its memory
 * errors go unseen). ECC not reported is no mismatch. Otherwise 0 and *why
 * (cap bytes) says what differs, naming the first GPU that differs.
 * Unattested hardware never matches. */
int nvml_matches_challenge(const nvml_attest *a, unsigned want_gpus, char *why, size_t cap);

/* {"attested", ["reason"], "driver_version", "cuda_driver_version",
 *  "gpus": [...], "processes_before": [...]} */
json_t *nvml_attest_json(const nvml_attest *a);

/* Thermal clock event reasons (NVML's nvmlClocksEventReason bits): the
 * driver slowed the clocks because the GPU was too hot. Power capping and
 * idle are not counted: they are the normal state of a busy or idle GPU. */
#define NVML_THROTTLE_HW_SLOWDOWN 0x8ull
#define NVML_THROTTLE_SW_THERMAL 0x20ull
#define NVML_THROTTLE_HW_THERMAL 0x40ull
#define NVML_THROTTLE_THERMAL \
  (NVML_THROTTLE_HW_SLOWDOWN | NVML_THROTTLE_SW_THERMAL | NVML_THROTTLE_HW_THERMAL)

/* The thermal reasons in mask, comma-separated ("SW thermal slowdown"),
 * into out (cap bytes); "" when none. */
void nvml_thermal_names(unsigned long long mask, char *out, size_t cap);

/* The GPUs whose clocks were thermally throttled in a sampler's output
 * (nvml_sampler_stop's object; NULL or no samples: 0): how many GPUs, and
 * in why (cap bytes) for the first of them, in how many of its samples,
 * from when, and for which reasons. */
unsigned nvml_samples_thermal(const json_t *samples, char *why, size_t cap);

/* ---- sampling during a run ---- */

typedef struct nvml_sample {
  double t_ms; /* since the sampler started */
  unsigned gpu;
  unsigned util_gpu, util_mem; /* percent */
  unsigned long long mem_used_bytes;
  unsigned power_mw, sm_clock_mhz;
  unsigned long long throttle_reasons; /* NVML's bit mask */
} nvml_sample;

typedef struct nvml_sampler nvml_sampler;

/* Start a thread sampling every GPU every period_ms, keeping at most
 * max_samples (older ones are kept; later ones counted as dropped). Fails
 * when NVML is unusable (err says why). */
int nvml_sampler_start(nvml_sampler **s, double period_ms, size_t max_samples, pg_error *err);
/* Stop the thread; the samples as {"period_ms", "dropped", "samples":
 * [[t_ms, gpu, util_gpu, util_mem, mem_used, power_mw, sm_mhz,
 * throttle]...]} (NULL s gives NULL). Frees s. */
json_t *nvml_sampler_stop(nvml_sampler *s);

#endif
