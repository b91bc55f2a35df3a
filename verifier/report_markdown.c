/* The Markdown rendering of a report, for a pull-request comment: the
 * final metrics, the findings by severity, and the significance line. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "verifier/report_html.h"
#include "verifier/text_buf.h"

static void md_num(text_buf *b, double v, const char *fmt) {
  if (!isfinite(v)) {
    tb_printf(b, " – |");
    return;
  }
  tb_printf(b, " ");
  tb_printf(b, fmt, v);
  tb_printf(b, " |");
}

static void md_runs(text_buf *b, const report *r) {
  tb_printf(b, "| run | seed | val_bpb | val_loss | train s | eval s | artifact bytes | verdict |\n"
               "|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < r->n_runs; i++) {
    const report_run *x = &r->runs[i];
    tb_printf(b, "| ");
    tb_md(b, x->label);
    if (x->seed >= 0) tb_printf(b, " | %lld |", (long long)x->seed);
    else tb_printf(b, " | – |");
    md_num(b, x->val_bpb, "%.8f");
    md_num(b, x->val_loss, "%.8f");
    md_num(b, x->train_s, "%.1f");
    md_num(b, x->eval_s, "%.1f");
    md_num(b, x->artifact_bytes, "%.0f");
    tb_printf(b, " ");
    tb_md(b, x->verdict);
    tb_printf(b, " |\n");
  }
}

static void md_findings(text_buf *b, const report *r) {
  size_t err = 0, warn = 0;
  for (size_t i = 0; i < r->n_findings; i++) {
    const char *s = r->findings[i].severity ? r->findings[i].severity : "";
    err += !strcmp(s, "error");
    warn += !strcmp(s, "warning");
  }
  tb_printf(b, "\n**Findings:** %zu error%s, %zu warning%s.\n", err, err == 1 ? "" : "s", warn,
            warn == 1 ? "" : "s");
  for (size_t i = 0; i < r->n_findings; i++) {
    const report_finding *f = &r->findings[i];
    if (!f->severity || strcmp(f->severity, "error")) continue;
    tb_printf(b, "- `");
    tb_md(b, f->code);
    tb_printf(b, "` ");
    tb_md(b, f->message);
    tb_printf(b, "\n");
  }
}

static void md_significance(text_buf *b, const report *r) {
  const report_significance *s = &r->sig;
  tb_printf(b, "\n**Significance:** ");
  if (!s->have_new) {
    tb_printf(b, "not computed (%s).\n", s->note);
    return;
  }
  tb_printf(b, "runs: n=%zu, mean val_bpb %.8f, sd %.8f", s->new_s.n, s->new_s.mean, s->new_s.sd);
  if (s->have_test)
    tb_printf(b,
              "; record: n=%zu, mean %.8f. diff %.8f bpb, margin %.8f bpb (%g nats), "
              "p = %.4g (zero margin: %.4g), %s at alpha %g.\n",
              s->rec_s.n, s->rec_s.mean, s->t.diff, s->t.margin, s->margin_nats, s->t.p_margin,
              s->t.p_zero_margin, s->t.significant ? "**significant**" : "**not significant**",
              s->alpha);
  else
    tb_printf(b, "; %s.\n", s->note);
}

char *report_markdown(const report *r) {
  text_buf b = {0};
  tb_printf(&b, "### pgolf report\n\n");
  md_runs(&b, r);
  md_findings(&b, r);
  md_significance(&b, r);
  return tb_finish(&b);
}
