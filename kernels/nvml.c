#include "kernels/nvml.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/challenge.h"
#include "common/grow.h"

/* ---- NVML's ABI (the parts we call) ---- */

typedef void *nvml_dev;
typedef struct { unsigned long long total, free, used; } nvml_memory;
typedef struct { unsigned gpu, memory; } nvml_util;
typedef struct {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id, compute_instance_id;
} nvml_proc_info; /* nvmlProcessInfo_v2_t, what the _v3 queries fill */

enum { NVML_OK = 0, NVML_INSUFFICIENT_SIZE = 7 };
enum { CLOCK_GRAPHICS = 0, CLOCK_SM = 1, CLOCK_MEM = 2 };
#define NVML_MAX_LINKS 18

typedef struct nvml_lib {
  void *so;
  int (*init)(void);
  int (*shutdown)(void);
  const char *(*error_string)(int);
  int (*driver_version)(char *, unsigned);
  int (*cuda_driver_version)(int *);
  int (*count)(unsigned *);
  int (*handle)(unsigned, nvml_dev *);
  int (*name)(nvml_dev, char *, unsigned);
  int (*memory)(nvml_dev, nvml_memory *);
  int (*ecc)(nvml_dev, int *, int *);
  int (*persistence)(nvml_dev, int *);
  int (*mig)(nvml_dev, unsigned *, unsigned *);
  int (*clock)(nvml_dev, int, unsigned *);
  int (*max_clock)(nvml_dev, int, unsigned *);
  int (*power_limit)(nvml_dev, unsigned *);
  int (*power_constraints)(nvml_dev, unsigned *, unsigned *);
  int (*nvlink_state)(nvml_dev, unsigned, int *);
  int (*procs)(nvml_dev, unsigned *, nvml_proc_info *);
  int (*util)(nvml_dev, nvml_util *);
  int (*power_usage)(nvml_dev, unsigned *);
  int (*throttle)(nvml_dev, unsigned long long *);
} nvml_lib;

/* dlsym into a function pointer without a pointer conversion warning. */
static void sym(void *so, const char *name, void *slot) {
  void *f = dlsym(so, name);
  memcpy(slot, &f, sizeof f);
}

/* Open and initialise NVML; 0, or -1 with why. Optional queries may be
 * NULL (older drivers); the required ones are checked here. */
static int lib_open(nvml_lib *l, char *why, size_t cap) {
  memset(l, 0, sizeof *l);
  const char *path = getenv("PGOLF_NVML_LIBRARY");
  if (!path || !*path) path = "libnvidia-ml.so.1";
  l->so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->so) {
    snprintf(why, cap, "NVML not available: %s", dlerror());
    return -1;
  }
  sym(l->so, "nvmlInit_v2", &l->init);
  sym(l->so, "nvmlShutdown", &l->shutdown);
  sym(l->so, "nvmlErrorString", &l->error_string);
  sym(l->so, "nvmlSystemGetDriverVersion", &l->driver_version);
  sym(l->so, "nvmlSystemGetCudaDriverVersion_v2", &l->cuda_driver_version);
  sym(l->so, "nvmlDeviceGetCount_v2", &l->count);
  sym(l->so, "nvmlDeviceGetHandleByIndex_v2", &l->handle);
  sym(l->so, "nvmlDeviceGetName", &l->name);
  sym(l->so, "nvmlDeviceGetMemoryInfo", &l->memory);
  sym(l->so, "nvmlDeviceGetEccMode", &l->ecc);
  sym(l->so, "nvmlDeviceGetPersistenceMode", &l->persistence);
  sym(l->so, "nvmlDeviceGetMigMode", &l->mig);
  sym(l->so, "nvmlDeviceGetClockInfo", &l->clock);
  sym(l->so, "nvmlDeviceGetMaxClockInfo", &l->max_clock);
  sym(l->so, "nvmlDeviceGetPowerManagementLimit", &l->power_limit);
  sym(l->so, "nvmlDeviceGetPowerManagementLimitConstraints", &l->power_constraints);
  sym(l->so, "nvmlDeviceGetNvLinkState", &l->nvlink_state);
  sym(l->so, "nvmlDeviceGetComputeRunningProcesses_v3", &l->procs);
  sym(l->so, "nvmlDeviceGetUtilizationRates", &l->util);
  sym(l->so, "nvmlDeviceGetPowerUsage", &l->power_usage);
  sym(l->so, "nvmlDeviceGetCurrentClocksEventReasons", &l->throttle);
  if (!l->throttle) sym(l->so, "nvmlDeviceGetCurrentClocksThrottleReasons", &l->throttle);
  if (!l->init || !l->shutdown || !l->count || !l->handle || !l->name) {
    snprintf(why, cap, "NVML at %s lacks nvmlInit_v2/nvmlDeviceGetCount_v2/...", path);
    dlclose(l->so);
    return -1;
  }
  int rc = l->init();
  if (rc != NVML_OK) {
    snprintf(why, cap, "nvmlInit_v2 failed: %s", l->error_string ? l->error_string(rc) : "?");
    dlclose(l->so);
    return -1;
  }
  return 0;
}

static void lib_close(nvml_lib *l) {
  if (!l->so) return;
  l->shutdown();
  dlclose(l->so);
  l->so = NULL;
}

/* ---- attestation ---- */

/* The challenge's hardware is the H100 SXM: NVML names it "NVIDIA H100
 * 80GB HBM3" (no "SXM" in the name), the PCIe card "NVIDIA H100 PCIe" and
 * the NVL card "NVIDIA H100 NVL". A name that says neither falls back on
 * the board's maximum power limit: SXM boards allow 700 W, the PCIe and
 * NVL cards 350-400 W. */
static const char *form_factor(const char *name, unsigned power_max_mw) {
  if (strstr(name, "PCIe")) return "PCIe";
  if (strstr(name, "NVL")) return "NVL";
  if (strstr(name, "SXM") || strstr(name, "HBM3")) return "SXM";
  if (power_max_mw >= 600000) return "SXM";
  return "unknown";
}

static int enabled(int (*f)(nvml_dev, int *), nvml_dev d) {
  int v;
  return f && f(d, &v) == NVML_OK ? (v != 0) : -1;
}

static void take_gpu(const nvml_lib *l, unsigned i, nvml_dev d, nvml_gpu *g) {
  memset(g, 0, sizeof *g);
  g->index = i;
  if (l->name(d, g->name, sizeof g->name) != NVML_OK) snprintf(g->name, sizeof g->name, "?");
  nvml_memory m;
  if (l->memory && l->memory(d, &m) == NVML_OK) g->memory_total_bytes = m.total;
  int cur, pend;
  g->ecc = l->ecc && l->ecc(d, &cur, &pend) == NVML_OK ? cur != 0 : -1;
  g->persistence = enabled(l->persistence, d);
  unsigned mc, mp;
  g->mig = l->mig && l->mig(d, &mc, &mp) == NVML_OK ? mc != 0 : -1;
  if (l->clock) l->clock(d, CLOCK_SM, &g->sm_clock_mhz);
  if (l->max_clock) l->max_clock(d, CLOCK_SM, &g->sm_clock_max_mhz);
  if (l->max_clock) l->max_clock(d, CLOCK_MEM, &g->mem_clock_max_mhz);
  if (l->power_limit) l->power_limit(d, &g->power_limit_mw);
  unsigned lo;
  if (l->power_constraints) l->power_constraints(d, &lo, &g->power_max_mw);
  g->nvlink_active = -1;
  if (l->nvlink_state) {
    int up = 0, any = 0;
    for (unsigned k = 0; k < NVML_MAX_LINKS; k++) {
      int st;
      if (l->nvlink_state(d, k, &st) != NVML_OK) continue;
      any = 1;
      up += st != 0;
    }
    if (any) g->nvlink_active = up;
  }
  if (l->throttle) l->throttle(d, &g->throttle_reasons);
  g->form_factor = form_factor(g->name, g->power_max_mw);
}

static void comm_of(unsigned pid, char *out, size_t cap) {
  char p[64];
  snprintf(p, sizeof p, "/proc/%u/comm", pid);
  out[0] = 0;
  FILE *f = fopen(p, "r");
  if (!f) return;
  if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = 0;
  fclose(f);
}

static void take_procs(const nvml_lib *l, unsigned gpu, nvml_dev d, nvml_attest *a) {
  if (!l->procs) return;
  nvml_proc_info info[NVML_ATTEST_MAX_PROCS];
  unsigned n = NVML_ATTEST_MAX_PROCS;
  int rc = l->procs(d, &n, info);
  if (rc == NVML_INSUFFICIENT_SIZE) a->procs_truncated = 1, n = NVML_ATTEST_MAX_PROCS;
  else if (rc != NVML_OK) return;
  for (unsigned k = 0; k < n && k < NVML_ATTEST_MAX_PROCS; k++) {
    if (a->n_procs == NVML_ATTEST_MAX_PROCS) {
      a->procs_truncated = 1;
      return;
    }
    nvml_proc *p = &a->procs[a->n_procs++];
    p->gpu = gpu, p->pid = info[k].pid, p->used_memory_bytes = info[k].used_gpu_memory;
    comm_of(p->pid, p->comm, sizeof p->comm);
  }
}

void nvml_attest_take(nvml_attest *a) {
  memset(a, 0, sizeof *a);
  nvml_lib l;
  if (lib_open(&l, a->reason, sizeof a->reason)) return;
  unsigned n = 0;
  int rc = l.count(&n);
  if (rc != NVML_OK) {
    snprintf(a->reason, sizeof a->reason, "nvmlDeviceGetCount_v2 failed: %s",
             l.error_string ? l.error_string(rc) : "?");
    lib_close(&l);
    return;
  }
  if (l.driver_version) l.driver_version(a->driver_version, sizeof a->driver_version);
  if (l.cuda_driver_version) l.cuda_driver_version(&a->cuda_driver_version);
  a->n_gpus = n < NVML_ATTEST_MAX_GPUS ? n : NVML_ATTEST_MAX_GPUS;
  for (unsigned i = 0; i < a->n_gpus; i++) {
    nvml_dev d;
    if (l.handle(i, &d) != NVML_OK) {
      memset(&a->gpus[i], 0, sizeof a->gpus[i]);
      a->gpus[i].index = i, a->gpus[i].form_factor = "unknown";
      snprintf(a->gpus[i].name, sizeof a->gpus[i].name, "?");
      continue;
    }
    take_gpu(&l, i, d, &a->gpus[i]);
    take_procs(&l, i, d, a);
  }
  a->attested = 1;
  lib_close(&l);
}

int nvml_matches_challenge(const nvml_attest *a, unsigned want, char *why, size_t cap) {
  if (!a->attested) return snprintf(why, cap, "not attested: %s", a->reason), 0;
  if (a->n_gpus != want)
    return snprintf(why, cap, "%u GPUs, the challenge runs on %u", a->n_gpus, want), 0;
  for (unsigned i = 0; i < a->n_gpus; i++) {
    const nvml_gpu *g = &a->gpus[i];
    if (!strstr(g->name, "H100") || strcmp(g->form_factor, "SXM"))
      return snprintf(why, cap, "GPU %u is %s (%s), the challenge's is the H100 SXM", i, g->name,
                      g->form_factor), 0;
    if (g->mig == 1) return snprintf(why, cap, "GPU %u has MIG enabled", i), 0;
    if (g->ecc == 0) return snprintf(why, cap, "GPU %u has ECC off", i), 0;
  }
  snprintf(why, cap, "%u x H100 SXM", want);
  return 1;
}

static json_t *tri(int v) { return v < 0 ? json_null() : json_boolean(v); }
static json_t *opt_u(unsigned v) { return v ? json_integer(v) : json_null(); }

static json_t *gpu_json(const nvml_gpu *g) {
  json_t *o = json_pack("{s:i, s:s, s:s, s:I}", "index", (int)g->index, "name", g->name,
                        "form_factor", g->form_factor, "memory_total_bytes",
                        (json_int_t)g->memory_total_bytes);
  if (!o) return NULL;
  json_object_set_new(o, "ecc", tri(g->ecc));
  json_object_set_new(o, "persistence_mode", tri(g->persistence));
  json_object_set_new(o, "mig", tri(g->mig));
  json_object_set_new(o, "sm_clock_mhz", opt_u(g->sm_clock_mhz));
  json_object_set_new(o, "sm_clock_max_mhz", opt_u(g->sm_clock_max_mhz));
  json_object_set_new(o, "mem_clock_max_mhz", opt_u(g->mem_clock_max_mhz));
  json_object_set_new(o, "power_limit_mw", opt_u(g->power_limit_mw));
  json_object_set_new(o, "power_max_mw", opt_u(g->power_max_mw));
  json_object_set_new(o, "nvlink_active", g->nvlink_active < 0 ? json_null()
                                                                : json_integer(g->nvlink_active));
  json_object_set_new(o, "throttle_reasons", json_integer((json_int_t)g->throttle_reasons));
  char thermal[128];
  nvml_thermal_names(g->throttle_reasons, thermal, sizeof thermal);
  json_object_set_new(o, "thermal_throttle", thermal[0] ? json_string(thermal) : json_null());
  return o;
}

json_t *nvml_attest_json(const nvml_attest *a) {
  json_t *o = json_object();
  if (!o) return NULL;
  json_object_set_new(o, "attested", json_boolean(a->attested));
  if (!a->attested) {
    json_object_set_new(o, "reason", json_string(a->reason));
    return o;
  }
  json_object_set_new(o, "driver_version", json_string(a->driver_version));
  json_object_set_new(o, "cuda_driver_version", json_integer(a->cuda_driver_version));
  json_t *gpus = json_array(), *procs = json_array();
  for (unsigned i = 0; i < a->n_gpus; i++) json_array_append_new(gpus, gpu_json(&a->gpus[i]));
  for (size_t i = 0; i < a->n_procs; i++) {
    const nvml_proc *p = &a->procs[i];
    json_array_append_new(procs, json_pack("{s:i, s:i, s:I, s:s}", "gpu", (int)p->gpu, "pid",
                                           (int)p->pid, "used_memory_bytes",
                                           (json_int_t)p->used_memory_bytes, "comm", p->comm));
  }
  json_object_set_new(o, "gpus", gpus);
  json_object_set_new(o, "processes_before", procs);
  if (a->procs_truncated) json_object_set_new(o, "processes_truncated", json_true());
  return o;
}

/* ---- thermal throttling ---- */

void nvml_thermal_names(unsigned long long mask, char *out, size_t cap) {
  static const struct { unsigned long long bit; const char *name; } names[] = {
      {NVML_THROTTLE_HW_SLOWDOWN, "HW slowdown"},
      {NVML_THROTTLE_SW_THERMAL, "SW thermal slowdown"},
      {NVML_THROTTLE_HW_THERMAL, "HW thermal slowdown"}};
  size_t at = 0;
  out[0] = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if ((mask & names[i].bit) && at < cap) {
      int n = snprintf(out + at, cap - at, "%s%s", at ? ", " : "", names[i].name);
      at += n > 0 ? (size_t)n : 0;
    }
}

unsigned nvml_samples_thermal(const json_t *samples, char *why, size_t cap) {
  unsigned long long seen[NVML_ATTEST_MAX_GPUS] = {0};
  size_t hot[NVML_ATTEST_MAX_GPUS] = {0}, all[NVML_ATTEST_MAX_GPUS] = {0};
  double first_ms[NVML_ATTEST_MAX_GPUS];
  const json_t *rows = json_object_get(samples, "samples"), *row;
  size_t i;
  why[0] = 0;
  json_array_foreach(rows, i, row) {
    json_int_t gpu = json_integer_value(json_array_get(row, 1));
    unsigned long long mask = (unsigned long long)json_integer_value(json_array_get(row, 7));
    if (gpu < 0 || gpu >= NVML_ATTEST_MAX_GPUS) continue;
    all[gpu]++;
    if (!(mask & NVML_THROTTLE_THERMAL)) continue;
    if (!hot[gpu]++) first_ms[gpu] = json_number_value(json_array_get(row, 0));
    seen[gpu] |= mask & NVML_THROTTLE_THERMAL;
  }
  unsigned n = 0;
  for (unsigned g = 0; g < NVML_ATTEST_MAX_GPUS; g++) {
    if (!hot[g] || n++) continue;
    char names[128];
    nvml_thermal_names(seen[g], names, sizeof names);
    snprintf(why, cap, "GPU %u: %zu of %zu samples from %.1f s (%s)", g, hot[g], all[g],
             first_ms[g] / 1e3, names);
  }
  return n;
}

/* ---- the sampler ---- */

struct nvml_sampler {
  nvml_lib lib;
  pthread_t thread;
  pthread_mutex_t mu;
  int stop;
  double period_ms, t0_ms;
  nvml_sample *v;
  size_t n, cap, max, dropped;
};

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sample_all(nvml_sampler *s) {
  unsigned n = 0;
  if (s->lib.count(&n) != NVML_OK) return;
  double t = now_ms() - s->t0_ms;
  for (unsigned i = 0; i < n && i < NVML_ATTEST_MAX_GPUS; i++) {
    nvml_dev d;
    if (s->lib.handle(i, &d) != NVML_OK) continue;
    nvml_sample x = {.t_ms = t, .gpu = i};
    nvml_util u;
    nvml_memory m;
    if (s->lib.util && s->lib.util(d, &u) == NVML_OK) x.util_gpu = u.gpu, x.util_mem = u.memory;
    if (s->lib.memory && s->lib.memory(d, &m) == NVML_OK) x.mem_used_bytes = m.used;
    if (s->lib.power_usage) s->lib.power_usage(d, &x.power_mw);
    if (s->lib.clock) s->lib.clock(d, CLOCK_SM, &x.sm_clock_mhz);
    if (s->lib.throttle) s->lib.throttle(d, &x.throttle_reasons);
    if (s->n == s->max || PG_GROW(s->v, s->cap, s->n + 1, 256)) {
      s->dropped++;
      continue;
    }
    s->v[s->n++] = x;
  }
}

static void *sampler_main(void *arg) {
  nvml_sampler *s = arg;
  for (;;) {
    pthread_mutex_lock(&s->mu);
    int stop = s->stop;
    if (!stop) sample_all(s);
    pthread_mutex_unlock(&s->mu);
    if (stop) return NULL;
    /* Sleep in short slices so stop is prompt. */
    double until = now_ms() + s->period_ms;
    while (now_ms() < until) {
      pthread_mutex_lock(&s->mu);
      stop = s->stop;
      pthread_mutex_unlock(&s->mu);
      if (stop) return NULL;
      struct timespec ts = {0, 20 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
}

int nvml_sampler_start(nvml_sampler **out, double period_ms, size_t max_samples, pg_error *err) {
  *out = NULL;
  nvml_sampler *s = calloc(1, sizeof *s);
  if (!s) return pg_fail(err, "", -1, "out of memory");
  char why[256];
  if (lib_open(&s->lib, why, sizeof why)) {
    free(s);
    return pg_fail(err, "", -1, "%s", why);
  }
  s->period_ms = period_ms > 1.0 ? period_ms : 1.0;
  s->max = max_samples;
  s->t0_ms = now_ms();
  pthread_mutex_init(&s->mu, NULL);
  if (pthread_create(&s->thread, NULL, sampler_main, s) != 0) {
    lib_close(&s->lib);
    pthread_mutex_destroy(&s->mu);
    free(s);
    return pg_fail(err, "", -1, "cannot start the NVML sampling thread");
  }
  *out = s;
  return 0;
}

json_t *nvml_sampler_stop(nvml_sampler *s) {
  if (!s) return NULL;
  pthread_mutex_lock(&s->mu);
  s->stop = 1;
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  json_t *rows = json_array();
  for (size_t i = 0; rows && i < s->n; i++) {
    const nvml_sample *x = &s->v[i];
    json_array_append_new(rows, json_pack("[f, i, i, i, I, i, i, I]", x->t_ms, (int)x->gpu,
                                          (int)x->util_gpu, (int)x->util_mem,
                                          (json_int_t)x->mem_used_bytes, (int)x->power_mw,
                                          (int)x->sm_clock_mhz,
                                          (json_int_t)x->throttle_reasons));
  }
  json_t *o = json_pack("{s:f, s:I, s:[s,s,s,s,s,s,s,s], s:o}", "period_ms", s->period_ms,
                        "dropped", (json_int_t)s->dropped, "columns", "t_ms", "gpu", "util_gpu",
                        "util_mem", "mem_used_bytes", "power_mw", "sm_clock_mhz",
                        "throttle_reasons", "samples", rows);
  lib_close(&s->lib);
  pthread_mutex_destroy(&s->mu);
  free(s->v);
  free(s);
  return o;
}
