/* The HTML rendering of a report (layout and colour contract:
 * report_html.h). Everything is inline: CSS in a <style>, charts as SVG;
 * no script, no external font, image or stylesheet. */
#include "common/challenge.h"
#include "verifier/report_html.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/text_buf.h"

/* Chart geometry, in CSS pixels. */
#define CH_W 1080
#define CH_H 460
#define CH_X0 80
#define CH_X1 (CH_W - 20)
#define CH_Y0 20
#define CH_Y1 (CH_H - 60)
/* Curves beyond this many points are thinned (every k-th point and the
 * last): more points than pixel columns only add bytes. */
#define CURVE_MAX_POINTS 4000

#define BAR_COL_W 300
#define BAR_ROW_H 26
#define BAR_OVER 1.25 /* the bar axis runs to 1.25 x the limit */

static const char *CSS =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".error{color:#b00}.warning{color:#a60}.pass{color:#070}.fail{color:#b00}.not-run{color:#666}"
    "svg text{font-family:sans-serif;font-size:12px;fill:#333}"
    ".swatch{display:inline-block;width:14px;height:3px;vertical-align:middle}";

static double log_step(double s) { return log10(s < 1 ? 1 : s); }

typedef struct chart_range {
  double x_lo, x_hi, y_lo, y_hi;
  int any;
} chart_range;

static chart_range curve_range(const report *r) {
  chart_range c = {INFINITY, -INFINITY, INFINITY, -INFINITY, 0};
  for (size_t i = 0; i < r->n_runs; i++)
    for (size_t k = 0; k < r->runs[i].n; k++) {
      double x = log_step(r->runs[i].steps[k]), y = r->runs[i].losses[k];
      if (!isfinite(x) || !isfinite(y)) continue;
      c.any = 1;
      if (x < c.x_lo) c.x_lo = x;
      if (x > c.x_hi) c.x_hi = x;
      if (y < c.y_lo) c.y_lo = y;
      if (y > c.y_hi) c.y_hi = y;
    }
  if (!c.any) return c;
  /* From the decade below the first step to just past the last one. */
  c.x_lo = floor(c.x_lo), c.x_hi += 0.02 * (c.x_hi - c.x_lo) + 0.01;
  if (c.x_hi < c.x_lo + 1) c.x_hi = c.x_lo + 1;
  double pad = (c.y_hi - c.y_lo) * 0.05;
  if (pad == 0) pad = fabs(c.y_hi) * 0.05 + 0.05;
  c.y_lo -= pad, c.y_hi += pad;
  return c;
}

static double px_x(const chart_range *c, double step) {
  return CH_X0 + (log_step(step) - c->x_lo) / (c->x_hi - c->x_lo) * (CH_X1 - CH_X0);
}

static double px_y(const chart_range *c, double y) {
  return CH_Y1 - (y - c->y_lo) / (c->y_hi - c->y_lo) * (CH_Y1 - CH_Y0);
}

static void chart_axes(text_buf *b, const chart_range *c) {
  /* Ticks at 1, 2 and 5 times each power of ten inside the range. */
  static const double mult[3] = {1, 2, 5};
  for (int d = (int)c->x_lo; d <= (int)ceil(c->x_hi); d++)
    for (int m = 0; m < 3; m++) {
      double v = mult[m] * pow(10, d), lx = log10(v);
      if (lx < c->x_lo || lx > c->x_hi) continue;
      double x = CH_X0 + (lx - c->x_lo) / (c->x_hi - c->x_lo) * (CH_X1 - CH_X0);
      tb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>", x, CH_Y0,
                x, CH_Y1, m ? "#f0f0f0" : "#dcdcdc");
      tb_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.0f</text>", x, CH_Y1 + 18, v);
    }
  for (int i = 0; i <= 5; i++) {
    double v = c->y_lo + (c->y_hi - c->y_lo) * i / 5, y = px_y(c, v);
    tb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e4e4e4\"/>", CH_X0, y, CH_X1, y);
    tb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>", CH_X0 - 6, y + 4, v);
  }
  tb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#555\"/>",
            CH_X0, CH_Y0, CH_X1 - CH_X0, CH_Y1 - CH_Y0);
  tb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">step (log scale)</text>",
            (CH_X0 + CH_X1) / 2, CH_Y1 + 40);
  tb_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">"
               "train loss</text>", (CH_Y0 + CH_Y1) / 2, (CH_Y0 + CH_Y1) / 2);
}

static void chart_curve(text_buf *b, const chart_range *c, const report_run *x, const char *color) {
  size_t stride = x->n > CURVE_MAX_POINTS ? (x->n + CURVE_MAX_POINTS - 1) / CURVE_MAX_POINTS : 1;
  tb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" shape-rendering=\"crispEdges\" points=\"",
            color);
  for (size_t k = 0; k < x->n; k++) {
    if (k % stride && k != x->n - 1) continue;
    if (!isfinite(x->losses[k]) || !isfinite(x->steps[k])) continue;
    tb_printf(b, "%.1f,%.1f ", px_x(c, x->steps[k]), px_y(c, x->losses[k]));
  }
  tb_printf(b, "\"><title>");
  tb_xml(b, x->label);
  tb_printf(b, "</title></polyline>\n");
}

/* The i-th curve's colour: curves are numbered in input order among runs
 * that have losses. */
static const char *curve_color(const report *r, size_t run) {
  size_t k = 0;
  for (size_t i = 0; i < run; i++) k += r->runs[i].n > 0;
  return REPORT_PALETTE[k % REPORT_PALETTE_N];
}

static void section_curves(text_buf *b, const report *r) {
  tb_printf(b, "<h2>Loss per step</h2>\n");
  chart_range c = curve_range(r);
  if (!c.any) {
    tb_printf(b, "<p>No per-step losses in the inputs.</p>\n");
    return;
  }
  tb_printf(b, "<p>");
  for (size_t i = 0; i < r->n_runs; i++) {
    if (!r->runs[i].n) continue;
    tb_printf(b, "<span class=\"swatch\" style=\"background:%s\"></span> ", curve_color(r, i));
    tb_xml(b, r->runs[i].label);
    tb_printf(b, " &nbsp; ");
  }
  tb_printf(b, "</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            CH_W, CH_H, CH_W, CH_H);
  chart_axes(b, &c);
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->runs[i].n) chart_curve(b, &c, &r->runs[i], curve_color(r, i));
  tb_printf(b, "</svg>\n");
}

/* GPU utilization and power over the run, one chart per replay that has
 * NVML samples, under the loss curves: a slow step or a throttled clock
 * shows here. Utilization on the left axis (0-100 %), power on the right
 * (0 to the largest sample). */
static void hw_chart(text_buf *b, const report_run *x, const char *color) {
  double t_hi = 1, p_hi = 1;
  for (size_t k = 0; k < x->n_hw; k++) {
    if (x->hw_t[k] > t_hi) t_hi = x->hw_t[k];
    if (x->hw_power[k] > p_hi) p_hi = x->hw_power[k];
  }
  const int W = CH_W, H = 150, X0 = CH_X0, X1 = CH_X1, Y0 = 10, Y1 = 120;
  tb_printf(b, "<p>");
  tb_xml(b, x->label);
  tb_printf(b, ": %s, %zu samples (GPU utilization %%, solid; power W, dashed)</p>\n",
            x->hw_name[0] ? x->hw_name : "GPU", x->n_hw);
  tb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            W, H, W, H);
  tb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#555\"/>", X0,
            Y0, X1 - X0, Y1 - Y0);
  tb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">100%%</text>", X0 - 6, Y0 + 4);
  tb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>", X0 - 6, Y1 + 4);
  tb_printf(b, "<text x=\"%d\" y=\"%d\">%.0f W</text>", X1 + 6, Y0 + 4, p_hi);
  tb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds since the start (%.0f s)</text>",
            (X0 + X1) / 2, Y1 + 24, t_hi);
  for (int pass = 0; pass < 2; pass++) {
    tb_printf(b, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"", color,
              pass ? " stroke-dasharray=\"4 3\"" : "");
    for (size_t k = 0; k < x->n_hw; k++) {
      double v = pass ? x->hw_power[k] / p_hi : x->hw_util[k] / 100.0;
      if (!isfinite(v)) continue;
      tb_printf(b, "%.1f,%.1f ", X0 + x->hw_t[k] / t_hi * (X1 - X0), Y1 - v * (Y1 - Y0));
    }
    tb_printf(b, "\"/>\n");
  }
  tb_printf(b, "</svg>\n");
}

static void section_hardware(text_buf *b, const report *r) {
  int any = 0;
  for (size_t i = 0; i < r->n_runs; i++) any |= r->runs[i].n_hw > 0;
  if (!any) return;
  tb_printf(b, "<h2>GPUs during the replay (NVML)</h2>\n");
  for (size_t i = 0; i < r->n_runs; i++)
    if (r->runs[i].n_hw) hw_chart(b, &r->runs[i], curve_color(r, i));
}

static void cell_num(text_buf *b, double v, const char *fmt) {
  if (!isfinite(v)) {
    tb_printf(b, "<td class=\"n\">&ndash;</td>");
    return;
  }
  tb_printf(b, "<td class=\"n\">");
  tb_printf(b, fmt, v);
  tb_printf(b, "</td>");
}

static const char *kind_name(report_kind k) {
  return k == REPORT_RUN ? "run" : k == REPORT_REPLAY ? "replay" : "check log";
}

static void section_metrics(text_buf *b, const report *r) {
  tb_printf(b, "<h2>Final metrics</h2>\n<table><tr><th>run</th><th>kind</th><th>seed</th>"
               "<th>val_bpb</th><th>val_loss</th><th>train s</th><th>eval s</th>"
               "<th>artifact bytes</th><th>verdict</th><th>source</th></tr>\n");
  for (size_t i = 0; i < r->n_runs; i++) {
    const report_run *x = &r->runs[i];
    tb_printf(b, "<tr><td>");
    tb_xml(b, x->label);
    tb_printf(b, "</td><td>%s</td>", kind_name(x->kind));
    if (x->seed >= 0) tb_printf(b, "<td class=\"n\">%lld</td>", (long long)x->seed);
    else tb_printf(b, "<td class=\"n\">&ndash;</td>");
    cell_num(b, x->val_bpb, "%.8f");
    cell_num(b, x->val_loss, "%.8f");
    cell_num(b, x->train_s, "%.1f");
    cell_num(b, x->eval_s, "%.1f");
    cell_num(b, x->artifact_bytes, "%.0f");
    tb_printf(b, "<td class=\"%s\">", x->verdict);
    tb_xml(b, x->verdict);
    tb_printf(b, "</td><td>");
    tb_xml(b, x->source);
    tb_printf(b, "</td></tr>\n");
  }
  tb_printf(b, "</table>\n");
}

/* One bar: value against limit in a column starting at x. */
static void bar(text_buf *b, int x, int y, double value, double limit, const char *unit) {
  int w = BAR_COL_W - 20;
  double lim_x = x + w / BAR_OVER;
  if (isfinite(value)) {
    double frac = value / (limit * BAR_OVER);
    if (frac > 1) frac = 1;
    if (frac < 0) frac = 0;
    tb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\"/>", x, y,
              frac * w, value > limit ? "#e57373" : "#9fb3c8");
    tb_printf(b, "<text x=\"%d\" y=\"%d\">%.*f %s (%.1f%%)</text>", x + 4, y + 11,
              !strcmp(unit, "s") ? 1 : 0, value, unit, 100 * value / limit);
  } else {
    tb_printf(b, "<text x=\"%d\" y=\"%d\">n/a</text>", x + 4, y + 11);
  }
  tb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#000\" stroke-dasharray=\"3,2\"/>",
            lim_x, y - 3, lim_x, y + 17);
}

static void section_bars(text_buf *b, const report *r) {
  tb_printf(b, "<h2>Budgets</h2>\n<p>Train and eval time against %.0f s each, artifact bytes "
               "(code + compressed model) against " CHALLENGE_SIZE_LIMIT_TEXT "; the dashed line is the limit.</p>\n",
            CHALLENGE_TRAIN_LIMIT_S);
  int label_w = 170, h = 30 + BAR_ROW_H * (int)r->n_runs;
  tb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n",
            label_w + 3 * BAR_COL_W, h);
  const char *heads[3] = {"train time", "eval time", "artifact bytes"};
  for (int c = 0; c < 3; c++)
    tb_printf(b, "<text x=\"%d\" y=\"16\">%s</text>", label_w + c * BAR_COL_W, heads[c]);
  for (size_t i = 0; i < r->n_runs; i++) {
    const report_run *x = &r->runs[i];
    int y = 26 + BAR_ROW_H * (int)i;
    tb_printf(b, "<text x=\"0\" y=\"%d\">", y + 11);
    tb_xml(b, x->label);
    tb_printf(b, "</text>");
    bar(b, label_w, y, x->train_s, CHALLENGE_TRAIN_LIMIT_S, "s");
    bar(b, label_w + BAR_COL_W, y, x->eval_s, CHALLENGE_TRAIN_LIMIT_S, "s");
    bar(b, label_w + 2 * BAR_COL_W, y, x->artifact_bytes, (double)CHALLENGE_SIZE_LIMIT_BYTES, "B");
    tb_printf(b, "\n");
  }
  tb_printf(b, "</svg>\n");
}

static void sig_row(text_buf *b, const char *name, const char *fmt, double v) {
  tb_printf(b, "<tr><th>%s</th>", name);
  cell_num(b, v, fmt);
  tb_printf(b, "</tr>\n");
}

static void section_significance(text_buf *b, const report *r) {
  const report_significance *s = &r->sig;
  tb_printf(b, "<h2>Significance</h2>\n");
  if (!s->have_new) {
    tb_printf(b, "<p>Not computed: ");
    tb_xml(b, s->note);
    tb_printf(b, ".</p>\n");
    return;
  }
  tb_printf(b, "<table>\n");
  sig_row(b, "n (runs)", "%.0f", (double)s->new_s.n);
  sig_row(b, "mean val_bpb (runs)", "%.8f", s->new_s.mean);
  sig_row(b, "sd val_bpb (runs)", "%.8f", s->new_s.sd);
  if (s->have_record) {
    sig_row(b, "n (record)", "%.0f", (double)s->rec_s.n);
    sig_row(b, "mean val_bpb (record)", "%.8f", s->rec_s.mean);
    sig_row(b, "sd val_bpb (record)", "%.8f", s->rec_s.sd);
  }
  sig_row(b, "tokens per byte", "%.6f", s->have_tpb ? s->tokens_per_byte : NAN);
  if (s->have_test) {
    sig_row(b, "diff (record &minus; runs), bpb", "%.8f", s->t.diff);
    sig_row(b, "margin, bpb", "%.8f", s->t.margin);
    sig_row(b, "t", "%.4f", s->t.t);
    sig_row(b, "df (Welch&ndash;Satterthwaite)", "%.4f", s->t.df);
    sig_row(b, "p (diff &gt; margin)", "%.4g", s->t.p_margin);
    sig_row(b, "p (diff &gt; 0)", "%.4g", s->t.p_zero_margin);
    sig_row(b, "lower bound on diff", "%.8f", s->t.lower_bound);
    sig_row(b, "power at observed effect", "%.3f", s->t.power);
    sig_row(b, "seeds for 80% power (per side)", "%.0f",
            s->t.seeds_needed > 0 ? (double)s->t.seeds_needed : NAN);
    tb_printf(b, "<tr><th>verdict (alpha %g, margin %g nats)</th><td class=\"%s\">%s</td></tr>\n",
              s->alpha, s->margin_nats, s->t.significant ? "pass" : "fail",
              s->t.significant ? "significant" : "not significant");
  }
  tb_printf(b, "</table>\n");
  if (s->note[0]) {
    tb_printf(b, "<p>");
    tb_xml(b, s->note);
    tb_printf(b, "</p>\n");
  }
}

static void section_findings(text_buf *b, const report *r) {
  tb_printf(b, "<h2>Findings</h2>\n");
  if (!r->n_findings) {
    tb_printf(b, "<p>No findings in the inputs.</p>\n");
    return;
  }
  tb_printf(b, "<table><tr><th>severity</th><th>code</th><th>where</th><th>message</th><th>from</th></tr>\n");
  for (size_t i = 0; i < r->n_findings; i++) {
    const report_finding *f = &r->findings[i];
    tb_printf(b, "<tr><td class=\"");
    tb_xml(b, f->severity);
    tb_printf(b, "\">");
    tb_xml(b, f->severity);
    tb_printf(b, "</td><td>");
    tb_xml(b, f->code);
    tb_printf(b, "</td><td>");
    tb_xml(b, f->file);
    if (f->line) tb_printf(b, ":%lld", (long long)f->line);
    tb_printf(b, "</td><td>");
    tb_xml(b, f->message);
    tb_printf(b, "</td><td>");
    tb_xml(b, f->source);
    tb_printf(b, "</td></tr>\n");
  }
  tb_printf(b, "</table>\n");
}

char *report_html(const report *r) { return report_html_page(r, "pgolf report", NULL); }

char *report_html_page(const report *r, const char *title, const char *extra_html) {
  text_buf b = {0};
  tb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
  tb_xml(&b, title);
  tb_printf(&b, "</title><style>%s</style></head><body>\n<h1>", CSS);
  tb_xml(&b, title);
  size_t n_err = 0;
  for (size_t i = 0; i < r->n_findings; i++)
    n_err += r->findings[i].severity && !strcmp(r->findings[i].severity, "error");
  tb_printf(&b, "</h1>\n<p>%zu runs, %zu findings (%zu errors).</p>\n", r->n_runs, r->n_findings,
            n_err);
  if (extra_html) tb_printf(&b, "%s", extra_html);
  section_curves(&b, r);
  section_hardware(&b, r);
  section_metrics(&b, r);
  section_bars(&b, r);
  section_findings(&b, r);
  section_significance(&b, r);
  tb_printf(&b, "</body></html>\n");
  return tb_finish(&b);
}
