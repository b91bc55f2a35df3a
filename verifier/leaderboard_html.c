/* OUT/index.html: the leaderboard as one self-contained page (inline CSS
 * and SVG, no script, nothing fetched; links only to the folder pages
 * beside it). The chart: each record of the chain at its date (records of
 * one day spread over the day in chain order), its score as a square in
 * the colour of its step's verdict (LB_COLOR_*: no other element uses
 * those colours but the legend's small swatches, and squares are drawn
 * without anti-aliasing, so a screenshot shows each verdict as pixels of
 * exactly its colour), its seeds as ticks on a line from the lowest to the
 * highest, and the standing record as a dashed staircase. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/leaderboard.h"
#include "verifier/text_buf.h"

#define LB_COLOR_FIRST "#e7298a"       /* the first record: nothing to test against */
#define LB_COLOR_BOTH "#1a9850"        /* passes the README's rule (and so the practice) */
#define LB_COLOR_PRACTICE "#2b83ba"    /* passes the practice only */
#define LB_COLOR_NEITHER "#d7191c"     /* fails both */
#define LB_COLOR_UNTESTABLE "#984ea3"  /* a side with one seed */
#define LB_COLOR_NOT_BEST "#a6761d"    /* did not beat the standing record */

#define CH_W 1100
#define CH_H 520
#define CH_X0 80
#define CH_X1 (CH_W - 20)
#define CH_Y0 20
#define CH_Y1 (CH_H - 50)
#define MARK 9 /* the square's side, px */

static const char *CSS =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:12px}"
    "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".error{color:#b00}.warning{color:#a60}.pass{color:#070}.fail{color:#b00}.dim{color:#888}"
    "td.codes{max-width:240px;font-size:11px;overflow-wrap:anywhere}"
    "td.f{max-width:300px;overflow-wrap:anywhere}td.why{max-width:300px;font-size:11px}"
    "svg text{font-family:sans-serif;font-size:11px;fill:#333}"
    ".sw{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;vertical-align:middle}";

static void folder_link(text_buf *b, const lb_entry *e) {
  tb_printf(b, "<a href=\"");
  tb_url(b, e->page);
  tb_printf(b, "\">");
  tb_xml(b, e->folder);
  tb_printf(b, "</a>");
}

static void cell(text_buf *b, double v, const char *fmt) {
  if (!isfinite(v)) {
    tb_printf(b, "<td class=\"n dim\">&ndash;</td>");
    return;
  }
  tb_printf(b, "<td class=\"n\">");
  tb_printf(b, fmt, v);
  tb_printf(b, "</td>");
}

/* A value against a limit: "512.3 (85%)"; red when the folder has the
 * rule's error, amber past the limit without one (the rule's tolerance, or
 * a run the claim does not rest on). */
static void cell_limit(text_buf *b, double v, double limit, int decimals, const lb_entry *e,
                       const char *code) {
  if (!isfinite(v)) {
    tb_printf(b, "<td class=\"n dim\">&ndash;</td>");
    return;
  }
  const char *cls = lb_codes_has(e->error_codes, code) ? " fail" : v > limit ? " warning" : "";
  tb_printf(b, "<td class=\"n%s\">%.*f (%.1f%%)</td>", cls, decimals, v, 100 * v / limit);
}

static void cell_p(text_buf *b, double p, int have, int pass) {
  if (!have || !isfinite(p)) {
    tb_printf(b, "<td class=\"n dim\">&ndash;</td><td class=\"dim\">&ndash;</td>");
    return;
  }
  tb_printf(b, "<td class=\"n\">%.3g</td><td class=\"%s\">%s</td>", p, pass ? "pass" : "fail",
            pass ? "accepted" : "rejected");
}

/* ---- verdicts and colours ---- */

static const lb_step *step_of(const leaderboard *lb, size_t entry) {
  for (size_t i = 0; i < lb->n_steps; i++)
    if (lb->steps[i].rec == entry) return &lb->steps[i];
  return NULL;
}

static const char *step_color(const lb_step *st) {
  if (st->prev == LB_NONE) return LB_COLOR_FIRST;
  if (!st->displaces) return LB_COLOR_NOT_BEST;
  if (!st->testable) return LB_COLOR_UNTESTABLE;
  if (st->sig.readme_pass) return LB_COLOR_BOTH;
  return st->sig.practice_pass ? LB_COLOR_PRACTICE : LB_COLOR_NEITHER;
}

static const char *step_label(const lb_step *st) {
  if (st->prev == LB_NONE) return "first record";
  if (!st->displaces) return "did not beat the standing record";
  if (!st->testable) return "not testable";
  if (st->sig.readme_pass) return "both rules";
  return st->sig.practice_pass ? "practice only" : "neither rule";
}

/* ---- the chart ---- */

typedef struct chart {
  double y_lo, y_hi, y_step; /* y_step: between gridlines, a 1, 2 or 5 times a power of ten */
} chart;

/* x of step i: records are spaced evenly in chain order (many share a day
 * early on; a time axis would pile them up), the date ticks say when. */
static double px_x(const leaderboard *lb, size_t i) {
  return CH_X0 + ((double)i + 0.5) / (double)lb->n_steps * (CH_X1 - CH_X0);
}

static double px_y(const chart *c, double v) {
  return CH_Y1 - (v - c->y_lo) / (c->y_hi - c->y_lo) * (CH_Y1 - CH_Y0);
}

/* The y range (scores and every seed's value) widened to whole gridline
 * steps, about eight of them. */
static void chart_layout(const leaderboard *lb, chart *c) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < lb->n_steps; i++) {
    const lb_entry *e = &lb->entries[lb->steps[i].rec];
    lo = fmin(lo, fmin(e->score, e->lo));
    hi = fmax(hi, fmax(e->score, e->hi));
  }
  double raw = (hi - lo) / 8, p10 = pow(10, floor(log10(raw > 0 ? raw : 1e-4)));
  c->y_step = raw <= p10 ? p10 : raw <= 2 * p10 ? 2 * p10 : raw <= 5 * p10 ? 5 * p10 : 10 * p10;
  c->y_lo = floor(lo / c->y_step) * c->y_step;
  c->y_hi = ceil(hi / c->y_step) * c->y_step;
  if (c->y_hi - c->y_lo < c->y_step) c->y_hi = c->y_lo + c->y_step;
}

static void chart_axes(text_buf *b, const leaderboard *lb, const chart *c) {
  double last_label = -1e9;
  for (size_t i = 0; i < lb->n_steps; i++) {
    const char *day = lb->entries[lb->steps[i].rec].date;
    if (i && !strcmp(day, lb->entries[lb->steps[i - 1].rec].date)) continue;
    double x = px_x(lb, i) - 0.5 * (CH_X1 - CH_X0) / (double)lb->n_steps;
    tb_printf(b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e8e8e8\"/>", x, CH_Y0, x,
              CH_Y1 + 4);
    if (x - last_label < 34) continue;
    tb_printf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x, CH_Y1 + 16, day + 5);
    last_label = x;
  }
  int decimals = c->y_step >= 0.01 ? 2 : c->y_step >= 0.001 ? 3 : 4;
  for (double v = c->y_lo; v <= c->y_hi + c->y_step / 2; v += c->y_step) {
    double y = px_y(c, v);
    tb_printf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e8e8e8\"/>", CH_X0, y,
              CH_X1, y);
    tb_printf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.*f</text>", CH_X0 - 6, y + 4,
              decimals, v);
  }
  tb_printf(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#555\"/>",
            CH_X0, CH_Y0, CH_X1 - CH_X0, CH_Y1 - CH_Y0);
  tb_printf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">records in date order; a gridline "
               "where the date changes (month-day)</text>", (CH_X0 + CH_X1) / 2, CH_Y1 + 36);
  tb_printf(b, "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\">"
               "val_bpb (lower is better)</text>", (CH_Y0 + CH_Y1) / 2, (CH_Y0 + CH_Y1) / 2);
}

/* The standing record over time: a dashed staircase. */
static void chart_frontier(text_buf *b, const leaderboard *lb, const chart *c) {
  double x;
  tb_printf(b, "<polyline fill=\"none\" stroke=\"#9a9a9a\" stroke-dasharray=\"4 3\" points=\"");
  double best = NAN;
  for (size_t i = 0; i < lb->n_steps; i++) {
    const lb_step *st = &lb->steps[i];
    if (st->prev != LB_NONE && !st->displaces) continue;
    double s = lb->entries[st->rec].score;
    x = px_x(lb, i);
    if (isfinite(best)) tb_printf(b, "%.1f,%.1f ", x, px_y(c, best));
    tb_printf(b, "%.1f,%.1f ", x, px_y(c, s));
    best = s;
  }
  if (isfinite(best)) tb_printf(b, "%d,%.1f", CH_X1, px_y(c, best));
  tb_printf(b, "\"/>\n");
}

static void chart_point(text_buf *b, const leaderboard *lb, const chart *c, size_t i) {
  const lb_step *st = &lb->steps[i];
  const lb_entry *e = &lb->entries[st->rec];
  double x = px_x(lb, i);
  if (e->n_values > 1)
    tb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666666\"/>", x,
              px_y(c, e->lo), x, px_y(c, e->hi));
  for (size_t k = 0; k < e->n_values; k++)
    tb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666666\"/>",
              x - 3, px_y(c, e->values[k].val_bpb), x + 3, px_y(c, e->values[k].val_bpb));
  /* A claim outside its seeds' range: dotted to the nearest seed. */
  double near = e->score < e->lo ? e->lo : e->score > e->hi ? e->hi : e->score;
  if (near != e->score)
    tb_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#666666\" "
                 "stroke-dasharray=\"1 2\"/>", x, px_y(c, e->score), x, px_y(c, near));
  tb_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"%s\" "
               "shape-rendering=\"crispEdges\"><title>",
            floor(x - MARK / 2.0), floor(px_y(c, e->score) - MARK / 2.0), MARK, MARK, step_color(st));
  tb_xml(b, e->folder);
  tb_printf(b, " (%s): %.5f, %zu seed%s; %s</title></rect>", e->date, e->score, e->n_values,
            e->n_values == 1 ? "" : "s", step_label(st));
  tb_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\">%zu</text>\n", x,
            px_y(c, e->hi > e->score ? e->hi : e->score) - 7, i + 1);
}

static void legend(text_buf *b) {
  static const char *const colors[] = {LB_COLOR_BOTH, LB_COLOR_PRACTICE, LB_COLOR_NEITHER,
                                       LB_COLOR_UNTESTABLE, LB_COLOR_NOT_BEST, LB_COLOR_FIRST};
  static const char *const names[] = {
      "passes the README's rule (0.005 nats, p &lt; 0.01)", "passes the practice only (p &lt; 0.25)",
      "passes neither", "not testable (one seed)", "did not beat the standing record",
      "first record"};
  tb_printf(b, "<p style=\"font-size:12px\">");
  for (int i = 0; i < 6; i++)
    tb_printf(b, "<span class=\"sw\" style=\"background:%s\"></span>%s", colors[i], names[i]);
  tb_printf(b, "<br>Squares: each record's score (its claim, else its seeds' mean); grey ticks: "
               "its seeds, joined from lowest to highest, dotted to a claim outside them; dashed: "
               "the standing record. Numbers are the rows of the chain below.</p>\n");
}

static void section_chart(text_buf *b, const leaderboard *lb) {
  tb_printf(b, "<h2>val_bpb over time (record track)</h2>\n");
  if (!lb->n_steps) {
    tb_printf(b, "<p>No record with a date and a score.</p>\n");
    return;
  }
  chart c;
  chart_layout(lb, &c);
  legend(b);
  tb_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n", CH_W, CH_H, CH_W, CH_H);
  chart_axes(b, lb, &c);
  chart_frontier(b, lb, &c);
  for (size_t i = 0; i < lb->n_steps; i++) chart_point(b, lb, &c, i);
  tb_printf(b, "</svg>\n");
}

/* ---- the tables ---- */

static void codes_cell(text_buf *b, const lb_entry *e) {
  tb_printf(b, "<td class=\"codes\">");
  if (e->unreadable) {
    tb_printf(b, "<span class=\"error\">unreadable: ");
    tb_xml(b, e->error);
    tb_printf(b, "</span>");
  }
  if (e->error_codes && *e->error_codes) {
    tb_printf(b, "<span class=\"error\">");
    tb_xml(b, e->error_codes);
    tb_printf(b, "</span> ");
  }
  if (e->warning_codes && *e->warning_codes) {
    tb_printf(b, "<span class=\"warning\">");
    tb_xml(b, e->warning_codes);
    tb_printf(b, "</span>");
  }
  tb_printf(b, "</td>");
}

static void seeds_cell(text_buf *b, const lb_entry *e) {
  tb_printf(b, "<td class=\"n\" title=\"");
  for (size_t k = 0; k < e->n_values; k++) {
    if (e->values[k].seed >= 0) tb_printf(b, "%sseed %lld: ", k ? "; " : "", (long long)e->values[k].seed);
    else tb_printf(b, "%s", k ? "; " : "");
    tb_printf(b, "%.8f (", e->values[k].val_bpb);
    tb_xml(b, e->values[k].file);
    tb_printf(b, ")");
  }
  tb_printf(b, "\">%zu%s", e->n_values, !strcmp(e->sample_from ? e->sample_from : "", "runs") ? "*" : "");
  if (e->n_runs > e->n_values) tb_printf(b, "<br><span class=\"dim\">of %zu runs</span>", e->n_runs);
  if (e->n_reruns)
    tb_printf(b, "<br><span class=\"dim\">%zu rerun%s</span>", e->n_reruns, e->n_reruns == 1 ? "" : "s");
  tb_printf(b, "</td>");
}

static void entry_row(text_buf *b, const lb_entry *e, int timed, const char *num) {
  tb_printf(b, "<tr><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"f\">", num,
            e->date[0] ? e->date : "&ndash;");
  folder_link(b, e);
  if (e->name && strcmp(e->name, e->folder)) {
    tb_printf(b, "<br><span class=\"dim\">");
    tb_xml(b, e->name);
    tb_printf(b, "</span>");
  }
  tb_printf(b, "</td>");
  cell(b, e->has_claim ? e->claim : NAN, "%.5f");
  seeds_cell(b, e);
  cell(b, e->mean, "%.5f");
  double gap = e->has_claim ? e->claim - e->mean : NAN;
  cell(b, fabs(gap) < 5e-6 ? 0 * gap : gap, fabs(gap) < 5e-6 ? "%.5f" : "%+.5f");
  cell_limit(b, e->bytes, (double)CHALLENGE_SIZE_LIMIT_BYTES, 0, e, "SIZE_OVER_LIMIT");
  if (timed) {
    cell_limit(b, e->train_s, CHALLENGE_TRAIN_LIMIT_S, 1, e, "TRAIN_OVER_BUDGET");
    cell_limit(b, e->eval_s, CHALLENGE_EVAL_LIMIT_S, 1, e, "EVAL_OVER_BUDGET");
  }
  const char *v = e->unreadable ? "unreadable" : e->n_errors ? "fail" : "pass";
  tb_printf(b, "<td class=\"%s\">%s</td>", e->unreadable || e->n_errors ? "fail" : "pass", v);
  codes_cell(b, e);
  tb_printf(b, "</tr>\n");
}

static void table_head(text_buf *b, int timed) {
  tb_printf(b, "<table><tr><th>#</th><th>date</th><th>folder</th><th>claimed val_bpb</th>"
               "<th>seeds</th><th>mean of the backing runs</th><th>claim &minus; mean</th>"
               "<th>bytes of " CHALLENGE_SIZE_LIMIT_TEXT "</th>");
  if (timed)
    tb_printf(b, "<th>train s of %.0f</th><th>eval s of %.0f</th>", CHALLENGE_TRAIN_LIMIT_S,
              CHALLENGE_EVAL_LIMIT_S);
  tb_printf(b, "<th>verdict</th><th>errors, warnings</th></tr>\n");
}

static void section_entries(text_buf *b, const leaderboard *lb, lb_kind kind, const char *title,
                            const char *note) {
  size_t n = 0;
  for (size_t i = 0; i < lb->n_entries; i++) n += lb->entries[i].kind == kind;
  if (!n && kind != LB_RECORD) return;
  tb_printf(b, "<h2>%s (%zu)</h2>\n<p style=\"font-size:12px\">%s</p>\n", title, n, note);
  table_head(b, kind == LB_RECORD);
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    if (e->kind != kind) continue;
    char num[32] = "";
    const lb_step *st = kind == LB_RECORD ? step_of(lb, i) : NULL;
    if (st) snprintf(num, sizeof num, "%zu", (size_t)(st - lb->steps) + 1);
    entry_row(b, e, kind == LB_RECORD, num);
  }
  tb_printf(b, "</table>\n");
}

static void chain_row(text_buf *b, const leaderboard *lb, const lb_step *st) {
  const lb_entry *e = &lb->entries[st->rec];
  tb_printf(b, "<tr><td class=\"n\">%zu</td><td class=\"n\">%s</td><td class=\"f\">",
            (size_t)(st - lb->steps) + 1, e->date);
  folder_link(b, e);
  tb_printf(b, "</td><td><span class=\"sw\" style=\"margin:0 4px 0 0;background:%s\"></span>%s</td>",
            step_color(st), step_label(st));
  if (st->prev == LB_NONE) {
    tb_printf(b, "<td colspan=\"10\" class=\"dim\">the first record: nothing to test against</td></tr>\n");
    return;
  }
  const lb_entry *p = &lb->entries[st->prev];
  tb_printf(b, "<td class=\"f\">");
  folder_link(b, p);
  tb_printf(b, "</td><td class=\"n\">%zu / %zu</td>", e->n_values, p->n_values);
  cell(b, st->diff, "%+.5f");
  tb_printf(b, "<td class=\"n\">");
  if (isfinite(st->margin_bpb)) tb_printf(b, "%.5f<br><span class=\"dim\">%.4f tok/B</span>", st->margin_bpb, st->tpb);
  else tb_printf(b, "&ndash;");
  tb_printf(b, "</td>");
  const significance *s = &st->sig;
  cell_p(b, s->readme.p_margin, st->testable && s->have_readme, s->readme_pass);
  cell_p(b, s->practice.p_margin, st->testable, s->practice_pass);
  tb_printf(b, "<td class=\"why\">");
  if (st->testable) {
    if (s->have_readme && s->readme.seeds_needed > 0)
      tb_printf(b, "README rule: %ld per side for 80%% power", s->readme.seeds_needed);
    else if (s->have_readme && !s->readme_pass)
      tb_printf(b, "README rule: none suffice (the difference is not above the margin)");
  } else {
    tb_xml(b, st->why);
    if (isfinite(st->spread)) {
      tb_printf(b, "; at sd %.5f (%s): README rule ", st->spread, st->spread_from);
      if (st->seeds_readme > 0) tb_printf(b, "%ld", st->seeds_readme);
      else tb_printf(b, "none suffice");
      tb_printf(b, ", practice ");
      if (st->seeds_practice > 0) tb_printf(b, "%ld", st->seeds_practice);
      else tb_printf(b, "none suffice");
      tb_printf(b, " seeds per side");
    }
  }
  tb_printf(b, "</td></tr>\n");
}

static void section_chain(text_buf *b, const leaderboard *lb) {
  tb_printf(b, "<h2>Significance chain</h2>\n<p style=\"font-size:12px\">Each record against the "
               "standing record it displaced (records of a day ordered worst first). One-sided "
               "Welch test on the backing runs' final val_bpb, as <code>pgolf stats</code>: the "
               "README's rule with the %g-nat margin converted at the record's own tokens per "
               "byte, accepted at p &lt; %g; the maintainers' practice at zero margin, accepted at "
               "p &lt; %g.</p>\n",
            CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA, CHALLENGE_PRACTICE_ALPHA);
  tb_printf(b, "<table><tr><th>#</th><th>date</th><th>record</th><th>step</th><th>standing record</th>"
               "<th>seeds new / old</th><th>diff (old &minus; new) bpb</th><th>margin bpb</th>"
               "<th>README p</th><th>README</th><th>practice p</th><th>practice</th>"
               "<th>seeds needed</th></tr>\n");
  for (size_t i = 0; i < lb->n_steps; i++) chain_row(b, lb, &lb->steps[i]);
  tb_printf(b, "</table>\n");
}

static void section_replays(text_buf *b, const leaderboard *lb) {
  int any = 0;
  for (size_t i = 0; i < lb->n_entries; i++) any |= lb->entries[i].n_replays > 0;
  if (!any) return;
  tb_printf(b, "<h2>Replays</h2>\n<table><tr><th>folder</th><th>seed</th><th>replayed val_bpb</th>"
               "<th>claimed val_bpb</th><th>replayed &minus; claimed</th><th>replay verdict</th>"
               "<th>reproduction</th></tr>\n");
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    for (size_t k = 0; k < e->n_replays; k++) {
      const lb_replay *r = &e->replays[k];
      tb_printf(b, "<tr><td>");
      folder_link(b, e);
      tb_printf(b, "</td><td class=\"n\">%lld</td>", (long long)r->seed);
      cell(b, r->val_bpb, "%.5f");
      cell(b, r->claimed, "%.5f");
      cell(b, r->val_bpb - r->claimed, "%+.5f");
      tb_printf(b, "<td class=\"%s\">", strcmp(r->verdict, "pass") ? "fail" : "pass");
      tb_xml(b, r->verdict);
      if (*r->codes) {
        tb_printf(b, " ");
        tb_xml(b, r->codes);
      }
      tb_printf(b, "</td>");
      if (k == 0 && e->repro_tested) {
        const repro_result *x = &e->repro;
        const char *v = !x->testable ? "untestable" : x->gap_significant ? "REPRODUCTION_GAP" : "consistent";
        tb_printf(b, "<td rowspan=\"%zu\" class=\"%s\">%s: replayed mean %.5f (n=%zu) vs claimed %.5f "
                     "(n=%zu), gap %+.5f", e->n_replays, x->gap_significant ? "fail" : "pass", v,
                  x->replayed_mean, x->n_replayed, x->claimed_mean, x->n_claimed, x->gap);
        if (x->testable) tb_printf(b, ", %s p = %.3g", x->test, x->p);
        tb_printf(b, "</td>");
      } else if (k == 0) {
        tb_printf(b, "<td rowspan=\"%zu\" class=\"dim\">no test (no replayed result or no "
                     "claimed value)</td>", e->n_replays);
      }
      tb_printf(b, "</tr>\n");
    }
  }
  tb_printf(b, "</table>\n");
}

static void summary(text_buf *b, const leaderboard *lb) {
  lb_counts c = leaderboard_counts(lb);
  tb_printf(b, "<p>%zu folders under <code>", lb->n_entries);
  tb_xml(b, lb->root);
  tb_printf(b, "</code>, %zu on the record track. Of <b>%zu</b> record-to-record steps, "
               "<b>%zu</b> pass the README's rule and <b>%zu</b> the maintainers' practice; %zu "
               "pass neither and %zu cannot be tested (a side with one seed); %zu did not "
               "beat the standing record. <b>%zu</b> folders have errors.</p>\n",
            c.records, c.steps, c.readme_pass, c.practice_pass, c.neither, c.untestable,
            c.not_displacing, c.folders_with_errors);
}

char *leaderboard_html(const leaderboard *lb) {
  text_buf b = {0};
  tb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<title>pgolf leaderboard</title><style>%s</style></head><body>\n", CSS);
  tb_printf(&b, "<h1>pgolf leaderboard</h1>\n");
  summary(&b, lb);
  section_chart(&b, lb);
  section_chain(&b, lb);
  section_entries(&b, lb, LB_RECORD, "Record track",
                  "Seeds: the runs behind the claim (* when the claim is not a mean over runs: "
                  "every run with a final metric); hover for each seed's value and log. Bytes: the "
                  "largest artifact of those runs (the log's total, else its model plus the "
                  "counted code); times: the longest. Verdict and codes as <code>pgolf check</code>.");
  section_entries(&b, lb, LB_NONRECORD, "Non-record track",
                  "Not ranked and without time budget; checked as <code>pgolf check --track "
                  "nonrecord</code>.");
  section_entries(&b, lb, LB_OTHER, "Other folders", "Folders outside the two tracks.");
  section_replays(&b, lb);
  tb_printf(&b, "</body></html>\n");
  return tb_finish(&b);
}
