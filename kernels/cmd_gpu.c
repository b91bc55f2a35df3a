/* pgolf gpu: the GPUs this build can use, as the run manifest will record
 * them (name, SMs, compute capability, memory, PCI bus id; driver and
 * runtime versions). The first thing to run on a GPU machine, and the
 * clean refusal everywhere else: exit 2 with "no CUDA device: <the
 * runtime's reason>" (or "built without CUDA"). Exit codes: 0 ok, 2 no
 * usable GPU or usage error. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/verbs.h"
#include "kernels/cuda_common.h"

static const char usage_text[] =
    "usage: pgolf gpu [--json]\n"
    "\n"
    "List the CUDA devices this pgolf can use, with the driver and runtime\n"
    "versions. Exits 2, naming the runtime's reason, where there is none.\n"
    "\n"
    "  --json   print one JSON object\n";

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
  if (!json)
    printf("driver %d, runtime %d, %d device%s\n", v.driver, v.runtime, n, n == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    cuda_device_info d;
    if (cuda_device_query(i, &d, err)) {
      json_decref(arr);
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
    json_t *o = json_pack("{s:i, s:i, s:o}", "driver_version", v.driver, "runtime_version",
                          v.runtime, "devices", arr);
    char *text = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;
    if (text) puts(text);
    free(text);
    json_decref(o);
  }
  return 0;
}

int cmd_gpu(int argc, char **argv) {
  int json = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      fputs(usage_text, stdout);
      return PG_EXIT_OK;
    }
    if (!strcmp(argv[i], "--json")) {
      json = 1;
      continue;
    }
    pg_die_msg("gpu: unknown argument '%s' (try `pgolf gpu --help`)", argv[i]);
    return PG_EXIT_USAGE;
  }
  pg_error err;
  if (list_devices(json, &err)) {
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  return PG_EXIT_OK;
}
