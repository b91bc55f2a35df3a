/* The renderings of a verify result (verifier/verify_report.h): the HTML
 * page (the steps, the significance readings and the audits above the
 * report's own sections) and the capped Markdown summary. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/text_buf.h"
#include "verifier/verify_report.h"

#define MD_CELL_MAX 300     /* bytes of one step detail or message in Markdown */
#define MD_FOLDER_MAX 200
#define MD_AUDIT_ROWS 10
#define MD_TAIL_RESERVE 160 /* the "... and N more" line */

static const char *const STEP_NAMES[VERIFY_N_STEPS] = {"static check", "replay", "score-first audit",
                                                       "significance"};

static const char *status_class(verify_status s) {
  return s == VERIFY_PASS ? "pass" : s == VERIFY_FAIL ? "fail" : "not-run";
}

static int write_out(FILE *out, char *text, pg_error *err) {
  if (!text) return pg_fail(err, "", -1, "out of memory");
  size_t n = strlen(text);
  int rc = fwrite(text, 1, n, out) == n && fflush(out) == 0 ? 0
                                                            : pg_fail_errno(err, "", "write");
  free(text);
  return rc;
}

/* ---- HTML ---- */

static void html_steps(text_buf *b, const verify_result *r) {
  verify_status v = verify_verdict(r);
  tb_printf(b, "<h2>Verification: <span class=\"%s\">%s</span></h2>\n<p>Folder ",
            status_class(v), v == VERIFY_PASS ? "PASS" : "FAIL");
  tb_xml(b, r->folder);
  tb_printf(b, "</p>\n<table><tr><th>step</th><th>status</th><th>detail</th></tr>\n");
  for (int i = 0; i < VERIFY_N_STEPS; i++) {
    tb_printf(b, "<tr><td>%s</td><td class=\"%s\">%s</td><td>", STEP_NAMES[i],
              status_class(r->steps[i].status), verify_status_name(r->steps[i].status));
    tb_xml(b, r->steps[i].detail);
    tb_printf(b, "</td></tr>\n");
  }
  tb_printf(b, "</table>\n");
}

static void html_reading(text_buf *b, const char *name, const char *rule, double p,
                         const char *verdict, int good) {
  tb_printf(b, "<tr><td>%s</td><td>%s</td>", name, rule);
  if (isfinite(p)) tb_printf(b, "<td class=\"n\">%.4g</td>", p);
  else tb_printf(b, "<td class=\"n\">&ndash;</td>");
  tb_printf(b, "<td class=\"%s\">%s</td></tr>\n", good ? "pass" : "fail", verdict);
}

/* The README's rule and the maintainers' practice side by side. */
static void html_significance(text_buf *b, const verify_result *r) {
  const check_sig *c = &r->chk.sig;
  if (!r->chk.have_sig || !c->computed) return;
  const significance *s = &c->sig;
  tb_printf(b, "<h2>Significance against the record</h2>\n<p>Record ");
  tb_xml(b, c->against);
  tb_printf(b, ": mean val_bpb %.8f (n=%zu); this folder: %.8f (n=%zu). One-sided Welch test.</p>\n"
               "<table><tr><th>reading</th><th>rule</th><th>p</th><th>verdict</th></tr>\n",
            c->s_rec.mean, c->s_rec.n, c->s_new.mean, c->s_new.n);
  char rule[200];
  snprintf(rule, sizeof rule, "diff &gt; %g nats (%.6f bpb) at p &lt; %g", CHALLENGE_MARGIN_NATS,
           s->have_readme ? s->readme_margin : NAN, CHALLENGE_ALPHA);
  html_reading(b, "README rule", rule, s->have_readme ? s->readme.p_margin : NAN,
               !s->have_readme ? "unknown (no tokens per byte)"
               : s->readme_pass ? "significant" : "not significant",
               s->have_readme && s->readme_pass);
  snprintf(rule, sizeof rule, "diff &gt; 0 at p &lt; %g (progression cutoff)", CHALLENGE_PRACTICE_ALPHA);
  html_reading(b, "maintainers' practice", rule, s->practice.p_margin,
               s->practice_pass ? "accepted" : "rejected", s->practice_pass);
  snprintf(rule, sizeof rule, "diff &gt; 0 at p &le; %g (grace policy)", CHALLENGE_GRACE_P);
  html_reading(b, "grace", rule, s->practice.p_margin, s->grace_pass ? "within" : "above",
               s->grace_pass);
  tb_printf(b, "</table>\n");
}

static void html_audits(text_buf *b, const verify_result *r) {
  if (!r->n_audits) return;
  tb_printf(b, "<h2>Score-first audits</h2>\n<table><tr><th>dump</th><th>verdict</th>");
  for (int k = 0; k < AUDIT_N_CONDITIONS; k++) tb_printf(b, "<th>%s</th>", r->audits[0].out[k].code ? r->audits[0].out[k].code : "");
  tb_printf(b, "<th>note</th></tr>\n");
  for (size_t i = 0; i < r->n_audits; i++) {
    const verify_audit *a = &r->audits[i];
    tb_printf(b, "<tr><td>");
    tb_xml(b, a->path);
    tb_printf(b, "</td><td class=\"%s\">%s</td>", status_class(a->status),
              verify_status_name(a->status));
    for (int k = 0; k < AUDIT_N_CONDITIONS; k++) {
      if (a->status == VERIFY_NOT_RUN) tb_printf(b, "<td>&ndash;</td>");
      else tb_printf(b, "<td class=\"%s\">%s</td>", a->out[k].status == AUDIT_FAIL ? "fail" : a->out[k].status == AUDIT_PASS ? "pass" : "not-run", audit_status_name(a->out[k].status));
    }
    tb_printf(b, "<td>");
    tb_xml(b, a->reason);
    tb_printf(b, "</td></tr>\n");
  }
  tb_printf(b, "</table>\n");
  if (r->audits_left_out) tb_printf(b, "<p>%zu more dumps not audited.</p>\n", r->audits_left_out);
}

int verify_write_html(FILE *out, const verify_result *r, pg_error *err) {
  text_buf b = {0};
  html_steps(&b, r);
  html_significance(&b, r);
  html_audits(&b, r);
  char *extra = tb_finish(&b);
  if (!extra) return pg_fail(err, "", -1, "out of memory");
  char title[PG_ERR_PATH + 32];
  snprintf(title, sizeof title, "pgolf verify: %s", r->folder);
  char *page = report_html_page(&r->rep, title, extra);
  free(extra);
  return write_out(out, page, err);
}

/* ---- Markdown ---- */

/* s as Markdown table text, cut to at most max bytes (at a character
 * boundary, marked with an ellipsis). */
static void md_text(text_buf *b, const char *s, size_t max) {
  if (!s) return;
  size_t n = strlen(s);
  if (n <= max) {
    tb_md(b, s);
    return;
  }
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
  char *cut = strndup(s, max);
  if (!cut) return;
  tb_md(b, cut);
  tb_printf(b, "…");
  free(cut);
}

static void md_head(text_buf *b, const verify_result *r) {
  verify_status v = verify_verdict(r);
  tb_printf(b, "### pgolf verify: `");
  md_text(b, r->folder, MD_FOLDER_MAX);
  tb_printf(b, "` **%s**\n\n| step | status | detail |\n|---|---|---|\n",
            v == VERIFY_PASS ? "PASS" : "FAIL");
  for (int i = 0; i < VERIFY_N_STEPS; i++) {
    tb_printf(b, "| %s | %s | ", STEP_NAMES[i], verify_status_name(r->steps[i].status));
    md_text(b, r->steps[i].detail, MD_CELL_MAX);
    tb_printf(b, " |\n");
  }
}

static void md_significance(text_buf *b, const verify_result *r) {
  const check_sig *c = &r->chk.sig;
  if (!r->chk.have_sig || !c->computed) return;
  const significance *s = &c->sig;
  tb_printf(b, "\n**Significance** against `");
  md_text(b, c->against, MD_FOLDER_MAX);
  tb_printf(b, "` (mean %.8f, n=%zu; this folder %.8f, n=%zu):\n", c->s_rec.mean, c->s_rec.n,
            c->s_new.mean, c->s_new.n);
  if (s->have_readme)
    tb_printf(b, "- README rule, diff > %g nats (%.6f bpb) at p < %g: p = %.4g, **%s**\n",
              CHALLENGE_MARGIN_NATS, s->readme_margin, CHALLENGE_ALPHA, s->readme.p_margin,
              s->readme_pass ? "significant" : "not significant");
  else
    tb_printf(b, "- README rule, diff > %g nats at p < %g: unknown (no tokens per byte)\n",
              CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA);
  tb_printf(b, "- maintainers' practice, diff > 0 at p < %g: p = %.4g, **%s** (grace p <= %g: %s)\n",
            CHALLENGE_PRACTICE_ALPHA, s->practice.p_margin,
            s->practice_pass ? "accepted" : "rejected", CHALLENGE_GRACE_P,
            s->grace_pass ? "within" : "above");
}

static void md_audits(text_buf *b, const verify_result *r) {
  if (!r->n_audits) return;
  tb_printf(b, "\n**Audits:**\n\n| dump | verdict | C4 coverage | bytes | C2 normalization | C3 order |\n"
               "|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < r->n_audits && i < MD_AUDIT_ROWS; i++) {
    const verify_audit *a = &r->audits[i];
    tb_printf(b, "| `");
    md_text(b, a->path, MD_FOLDER_MAX);
    tb_printf(b, "` | %s", verify_status_name(a->status));
    if (a->status == VERIFY_NOT_RUN) {
      tb_printf(b, ": ");
      md_text(b, a->reason, MD_CELL_MAX);
      tb_printf(b, " | – | – | – | – |\n");
      continue;
    }
    for (int k = 0; k < AUDIT_N_CONDITIONS; k++)
      tb_printf(b, " | %s", audit_status_name(a->out[k].status));
    tb_printf(b, " |\n");
  }
  size_t more = (r->n_audits > MD_AUDIT_ROWS ? r->n_audits - MD_AUDIT_ROWS : 0) + r->audits_left_out;
  if (more) tb_printf(b, "\n… and %zu more dumps (see the HTML report).\n", more);
}

static int is_sev(const report_finding *f, const char *sev) {
  return f->severity && !strcmp(f->severity, sev);
}

/* One finding as a list item, into a scratch buffer (to measure it). */
static char *md_finding(const report_finding *f) {
  text_buf b = {0};
  tb_printf(&b, "- **%s** `", f->severity ? f->severity : "?");
  md_text(&b, f->code, 64);
  tb_printf(&b, "` ");
  md_text(&b, f->message, MD_CELL_MAX);
  /* A grouped finding's message already names its files and lines. */
  if (f->file && (!f->message || !strstr(f->message, f->file))) {
    tb_printf(&b, " (");
    md_text(&b, f->file, MD_FOLDER_MAX);
    if (f->line) tb_printf(&b, ":%lld", (long long)f->line);
    tb_printf(&b, ")");
  }
  tb_printf(&b, "\n");
  return tb_finish(&b);
}

/* The findings, errors first, while they fit under max bytes in all. */
static void md_findings(text_buf *b, const verify_result *r, size_t max) {
  const report *rep = &r->rep;
  size_t errors = 0, warnings = 0, shown = 0;
  for (size_t i = 0; i < rep->n_findings; i++)
    errors += is_sev(&rep->findings[i], "error"), warnings += is_sev(&rep->findings[i], "warning");
  tb_printf(b, "\n**Findings:** %zu error%s, %zu warning%s.\n\n", errors, errors == 1 ? "" : "s",
            warnings, warnings == 1 ? "" : "s");
  int full = 0;
  for (int pass = 0; pass < 2 && !full; pass++)
    for (size_t i = 0; i < rep->n_findings && !full; i++) {
      const report_finding *f = &rep->findings[i];
      if (is_sev(f, "error") != (pass == 0)) continue;
      char *item = md_finding(f);
      if (!item) return;
      size_t n = strlen(item);
      if (b->len + n + MD_TAIL_RESERVE > max) full = 1;
      else tb_printf(b, "%s", item), shown++;
      free(item);
    }
  if (shown < rep->n_findings)
    tb_printf(b, "\n… and %zu more findings (the summary is capped at %zu bytes; see the HTML "
                 "report).\n",
              rep->n_findings - shown, max);
}

/* The last guard of the cap: escaping can make the head itself longer than
 * a small cap (an audit table of paths full of '<'), so the text is cut at
 * the last line that fits, with a note. Frees text on failure (NULL). */
static char *md_cap(char *text, size_t max) {
  static const char NOTE[] = "\n… (cut to fit the cap; see the HTML report)\n";
  if (!text || strlen(text) <= max) return text;
  size_t keep = max - sizeof NOTE;
  while (keep > 0 && text[keep - 1] != '\n') keep--;
  memcpy(text + keep, NOTE, sizeof NOTE);
  return text;
}

int verify_write_markdown(FILE *out, const verify_result *r, size_t max_bytes, pg_error *err) {
  if (max_bytes < VERIFY_MARKDOWN_MIN)
    return pg_fail(err, "", -1, "a Markdown cap of %zu bytes is below the minimum %d", max_bytes,
                   VERIFY_MARKDOWN_MIN);
  text_buf b = {0};
  md_head(&b, r);
  md_significance(&b, r);
  md_audits(&b, r);
  md_findings(&b, r, max_bytes);
  return write_out(out, md_cap(tb_finish(&b), max_bytes), err);
}
