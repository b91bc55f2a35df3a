/* pgolf gpu: the GPUs this build can use, as the run manifest will record
 * them (name, SMs, compute capability, memory, PCI bus id; driver and
 * runtime versions). The first thing to run on a GPU machine, and the
 * clean refusal everywhere else: exit 2 with "no CUDA device: <the
 * runtime's reason>" (or "built without CUDA"). Exit codes: 0 ok, 2 no
 * usable GPU or usage error.
 *
 * pgolf gpu attest: the hardware as NVML reports it (kernels/nvml.h), the
 * record a replay starts from, and whether it is the challenge's: exit 0
 * when it is (the expected number of H100 SXM, MIG off) and no process is
 * on a GPU; 1 when NVML is missing, the hardware differs or a GPU is busy
 * (each said on stderr); 2 on a usage error. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/error.h"
#include "common/verbs.h"
#include "common/challenge.h"
#include "kernels/cuda_common.h"
#include "kernels/nvml.h"
#include "kernels/nccl.h"

static const char USAGE[] =
    "pgolf gpu [--json]\n"
    "pgolf gpu attest [--gpus N] [--json]   (see `pgolf gpu attest --help`)";
static const char ABOUT[] =
    "List the CUDA devices this pgolf can use, with the driver and runtime\n"
    "versions. Exits 2, naming the runtime's reason, where there is none.";
static const char FOOTER[] = "Exit codes: 0 ok, 2 no usable GPU or usage error.";
static const char ATTEST_USAGE[] = "pgolf gpu attest [--gpus N] [--json]";
static const char ATTEST_ABOUT[] =
    "Read the hardware through NVML (dlopen of libnvidia-ml.so.1, or\n"
    "PGOLF_NVML_LIBRARY): every GPU's name, form factor, memory, ECC,\n"
    "persistence, clocks, power limits, NVLink and MIG state, the driver, and\n"
    "every process already on a GPU.";
static const char ATTEST_FOOTER[] =
    "Exit 0 when it is the challenge's hardware (N x H100 SXM, MIG off; N\n"
    "defaults to 8) and idle, 1 otherwise, 2 on a usage error.";

static json_t *device_json(const cuda_device_info *d, const char *cc) {
  return json_pack("{s:i, s:s, s:i, s:s, s:I, s:s}", "index", d->index, "name", d->name, "sm_count",
                   d->sm_count, "compute_capability", cc, "memory_bytes",
                   (json_int_t)d->memory_bytes, "pci_bus_id", d->pci_bus_id);
}

static int list_devices(int json, pg_error *err) {
  int n;
  cuda_versions v;
  if (cuda_device_count(&n, err) || cuda_versions_get(&v, err)) return -1;
  json_t *arr = json ? json_array() : NULL;
  json_t *nccl = nccl_describe();
  if (!json) {
    json_t *nv = json_object_get(nccl, "version");
    printf("driver %d, runtime %d, %d device%s, nccl %s\n", v.driver, v.runtime, n, n == 1 ? "" : "s",
           json_is_string(nv) ? json_string_value(nv) : "not available");
  }
  for (int i = 0; i < n; i++) {
    cuda_device_info d;
    if (cuda_device_query(i, &d, err)) {
      json_decref(arr);
      json_decref(nccl);
      return -1;
    }
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d.cc_major, d.cc_minor);
    if (json) {
      json_array_append_new(arr, device_json(&d, cc));
    } else {
      printf("gpu %d: %s, %d SMs, compute %s, %.1f GiB, pci %s\n", i, d.name, d.sm_count, cc,
             (double)d.memory_bytes / (1024.0 * 1024.0 * 1024.0), d.pci_bus_id);
    }
  }
  if (json) {
    json_t *o = json_pack("{s:i, s:i, s:o, s:O}", "driver_version", v.driver, "runtime_version",
                          v.runtime, "devices", arr, "nccl", nccl);
    char *text = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
    if (text) puts(text);
    free(text);
    json_decref(o);
  }
  json_decref(nccl);
  return 0;
}

/* Print the attestation; 0 when it matches the challenge and is idle. */
static int attest(unsigned want, int json) {
  nvml_attest *a = malloc(sizeof *a);
  if (!a) return pg_die_msg("gpu attest: out of memory"), PG_EXIT_USAGE;
  nvml_attest_take(a);
  char why[512];
  int matches = nvml_matches_challenge(a, want, why, sizeof why);
  int busy = a->attested && a->n_procs > 0;
  if (json) {
    json_t *o = nvml_attest_json(a);
    if (o) {
      json_object_set_new(o, "matches_challenge", json_boolean(matches));
      json_object_set_new(o, "busy", json_boolean(busy));
      char *text = json_dumps(o, JSON_PRESERVE_ORDER);
      if (text) puts(text);
      free(text);
      json_decref(o);
    }
  } else if (a->attested) {
    printf("driver %s, CUDA driver %d, %u GPU%s\n", a->driver_version, a->cuda_driver_version,
           a->n_gpus, a->n_gpus == 1 ? "" : "s");
    for (unsigned i = 0; i < a->n_gpus; i++) {
      const nvml_gpu *g = &a->gpus[i];
      printf("gpu %u: %s (%s), %.1f GiB, ECC %s, MIG %s, SM %u/%u MHz, power limit %u W\n", i,
             g->name, g->form_factor, (double)g->memory_total_bytes / (1u << 30),
             g->ecc == 1 ? "on" : g->ecc == 0 ? "off" : "?",
             g->mig == 1 ? "on" : g->mig == 0 ? "off" : "?", g->sm_clock_mhz,
             g->sm_clock_max_mhz, g->power_limit_mw / 1000);
    }
    for (unsigned i = 0; i < a->n_gpus; i++) {
      char thermal[128];
      nvml_thermal_names(a->gpus[i].throttle_reasons, thermal, sizeof thermal);
      if (thermal[0]) printf("gpu %u: clocks throttled now: %s\n", i, thermal);
    }
    for (size_t i = 0; i < a->n_procs; i++)
      printf("process on gpu %u: pid %u (%s), %.1f GiB\n", a->procs[i].gpu, a->procs[i].pid,
             a->procs[i].comm[0] ? a->procs[i].comm : "?",
             (double)a->procs[i].used_memory_bytes / (1u << 30));
  }
  int rc = PG_EXIT_OK;
  if (!a->attested) {
    pg_die_msg("gpu attest: not attested: %s", a->reason);
    rc = PG_EXIT_CHECK_FAILED;
  } else {
    if (!matches) pg_die_msg("gpu attest: HARDWARE_MISMATCH: %s", why), rc = PG_EXIT_CHECK_FAILED;
    if (busy)
      pg_die_msg("gpu attest: HARDWARE_BUSY: %zu process%s already on a GPU (pid %u first)",
                 a->n_procs, a->n_procs == 1 ? "" : "es", a->procs[0].pid),
          rc = PG_EXIT_CHECK_FAILED;
    /* A hot GPU is the right hardware in a bad state: a warning, since
     * the run may still be timed fairly once it cools down. */
    for (unsigned i = 0; i < a->n_gpus; i++) {
      char thermal[128];
      nvml_thermal_names(a->gpus[i].throttle_reasons, thermal, sizeof thermal);
      if (thermal[0]) {
        pg_die_msg("gpu attest: HARDWARE_THROTTLED (warning): GPU %u clocks slowed now: %s", i,
                   thermal);
        break;
      }
    }
  }
  free(a);
  return rc;
}

/* `pgolf gpu attest [--gpus N] [--json]`; argv[0] is "attest". Its
 * messages say "gpu:" as the verb's always have. */
static int cmd_attest(int argc, char **argv) {
  int json = 0;
  unsigned want = CHALLENGE_WORLD_SIZE;
  const cli_option opts[] = {CLI_UNSIGNED("gpus", 0, &want, "N", 1, NVML_ATTEST_MAX_GPUS,
                                          "the number of GPUs the run will use (default 8)"),
                             CLI_FLAG("json", 0, &json, "print one JSON object"), CLI_END};
  const cli_command cmd = {.name = "gpu",
                           .usage = ATTEST_USAGE,
                           .about = ATTEST_ABOUT,
                           .options = opts,
                           .footer = ATTEST_FOOTER};
  pg_error err;
  int pr = cli_parse(&cmd, argc, argv, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  return attest(want, json);
}

int cmd_gpu(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "attest")) return cmd_attest(argc - 1, argv + 1);
  int json = 0;
  const cli_option opts[] = {CLI_FLAG("json", 0, &json, "print one JSON object"), CLI_END};
  const cli_command cmd = {
      .name = "gpu", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  pg_error err;
  int pr = cli_parse(&cmd, argc, argv, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  if (list_devices(json, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  return PG_EXIT_OK;
}
