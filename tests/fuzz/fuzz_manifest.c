/* libFuzzer: the manifest reader and validator, then the checks that need
 * no files (chain links, head, subjects), a diff against itself, and the
 * replay's comparison of its recorded device with itself. */
#include <stddef.h>
#include <stdint.h>

#include "manifests/manifest.h"
#include "verifier/replay_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  manifest m;
  pg_error e;
  if (manifest_parse(data, size, "fuzz.json", &m, &e) != 0) return 0;
  verify_report r = {0};
  manifest_verify_chain(&m, "fuzz.json", &r);
  verify_report_free(&r);
  manifest_difference d;
  manifest_diff(&m, &m, &d);
  if (!d.equal) __builtin_trap(); /* a manifest always equals itself */
  const json_t *dev = json_object_get(m.environment, "device");
  finding_list f = {0};
  replay_compare_device(dev, dev, &f);
  findings_free(&f);
  manifest_doc doc = {0};
  doc.m = m;
  doc.payload_ok = 1;
  json_decref(manifest_show_json(&doc));
  manifest_free(&m);
  return 0;
}
