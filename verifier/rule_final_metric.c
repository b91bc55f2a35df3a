/* NO_FINAL_METRIC. A train log must end in the score it claims: the
 * challenge scores "val_bpb" of the exported artifact (the baseline prints
 * `final_int8_zlib_roundtrip val_loss:X val_bpb:Y`). A log without such a
 * line shows a run that crashed or was cut before evaluation. */
#include "verifier/rules.h"

void rule_final_metric(const submission *s, finding_list *f) {
  for (size_t i = 0; i < s->n_logs; i++) {
    const pg_log *l = &s->logs[i].log;
    if (log_final_metric(l)) continue;
    size_t pre = 0;
    for (size_t k = 0; k < l->n_metrics; k++) pre += l->metrics[k].kind != METRIC_FINAL;
    findings_add(f, "NO_FINAL_METRIC", SEV_ERROR, s->logs[i].rel, l->n_lines,
                 "no final metric line (PREFIX val_loss:X val_bpb:Y of the exported model)%s",
                 pre ? "; only pre-quantization or diagnostic metrics" : "");
  }
}
