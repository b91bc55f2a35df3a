/* What `pgolf regress` prints: a terminal table, JSON, JUnit XML (for CI
 * systems that show test results) and a Markdown summary (for a pull
 * request comment). All four say the same thing per run. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/regress.h"

static const char *chain_word(chain_state c) {
  return c == CHAIN_SAME ? "same" : c == CHAIN_DIFFERS ? "DIFFERS" : "not checked";
}

static size_t count_failed(const regress_result *r, size_t n) {
  size_t f = 0;
  for (size_t i = 0; i < n; i++) f += regress_failed(&r[i]) ? 1 : 0;
  return f;
}

void regress_print_table(FILE *out, const regress_result *r, size_t n) {
  fprintf(out, "%-12s %8s %12s %12s %-12s %-6s  %s\n", "config", "seed", "val_bpb", "limit",
          "chain", "result", "run");
  for (size_t i = 0; i < n; i++)
    fprintf(out, "%-12s %8llu %12.8f %12.8f %-12s %-6s  %s\n", r[i].config,
            (unsigned long long)r[i].seed, r[i].val_bpb, r[i].limit, chain_word(r[i].chain),
            regress_failed(&r[i]) ? "FAIL" : "pass", r[i].run);
  size_t f = count_failed(r, n);
  fprintf(out, "\nregress: %s (%zu of %zu runs regressed)\n", f ? "FAIL" : "pass", f, n);
}

json_t *regress_json(const regress_result *r, size_t n) {
  json_t *runs = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(
        runs, json_pack("{s:s, s:s, s:I, s:f, s:f, s:b, s:s, s:s, s:s}", "run", r[i].run,
                        "config", r[i].config, "seed", (json_int_t)r[i].seed, "val_bpb",
                        r[i].val_bpb, "limit", r[i].limit, "band_failed", r[i].band_failed,
                        "chain", r[i].chain == CHAIN_SAME      ? "same"
                                 : r[i].chain == CHAIN_DIFFERS ? "differs"
                                                               : "not_checked",
                        "chain_note", r[i].chain_note, "result",
                        regress_failed(&r[i]) ? "fail" : "pass"));
  size_t f = count_failed(r, n);
  return json_pack("{s:s, s:I, s:I, s:o}", "verdict", f ? "fail" : "pass", "failed",
                   (json_int_t)f, "runs", (json_int_t)n, "results", runs);
}

/* ---- a growing string ---- */

typedef struct sbuf {
  char *s;
  size_t len, cap;
  int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (b->len + (size_t)need + 1 > b->cap) {
    size_t cap = (b->cap ? 2 * b->cap : 1024) + (size_t)need;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    b->s = s, b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)need;
}

static char *sb_finish(sbuf *b) {
  if (b->oom) {
    free(b->s);
    return NULL;
  }
  return b->s;
}

/* XML text and attribute values: the five specials escaped, and control
 * characters (not allowed in XML 1.0) replaced by '?'. */
static void sb_xml(sbuf *b, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '&') sb_printf(b, "&amp;");
    else if (c == '<') sb_printf(b, "&lt;");
    else if (c == '>') sb_printf(b, "&gt;");
    else if (c == '"') sb_printf(b, "&quot;");
    else if (c == '\'') sb_printf(b, "&apos;");
    else if (c < 0x20 && c != '\t' && c != '\n') sb_printf(b, "?");
    else sb_printf(b, "%c", c);
  }
}

/* Markdown table cells: a '|' would end the cell, a newline the row. */
static void sb_md(sbuf *b, const char *s) {
  for (; *s; s++) {
    if (*s == '|') sb_printf(b, "\\|");
    else if (*s == '\n' || *s == '\r') sb_printf(b, " ");
    else sb_printf(b, "%c", *s);
  }
}

static void junit_case_open(sbuf *b, const regress_result *r, const char *what) {
  sb_printf(b, "    <testcase classname=\"pgolf.regress.");
  sb_xml(b, r->config);
  sb_printf(b, "\" name=\"seed %llu %s (", (unsigned long long)r->seed, what);
  sb_xml(b, r->run);
  sb_printf(b, ")\">\n");
}

static void junit_band(sbuf *b, const regress_result *r) {
  junit_case_open(b, r, "val_bpb");
  if (r->band_failed)
    sb_printf(b,
              "      <failure type=\"val_bpb_above_band\" message=\"val_bpb %.8f &gt; limit "
              "%.8f\"/>\n",
              r->val_bpb, r->limit);
  sb_printf(b, "    </testcase>\n");
}

static void junit_chain(sbuf *b, const regress_result *r) {
  junit_case_open(b, r, "loss_chain");
  if (r->chain != CHAIN_SAME) {
    sb_printf(b, "      <%s %smessage=\"", r->chain == CHAIN_DIFFERS ? "failure" : "skipped",
              r->chain == CHAIN_DIFFERS ? "type=\"loss_chain_differs\" " : "");
    sb_xml(b, r->chain_note);
    sb_printf(b, "\"/>\n");
  }
  sb_printf(b, "    </testcase>\n");
}

char *regress_junit(const regress_result *r, size_t n) {
  sbuf b = {0};
  size_t failures = 0, skipped = 0;
  for (size_t i = 0; i < n; i++) {
    failures += (size_t)r[i].band_failed + (r[i].chain == CHAIN_DIFFERS);
    skipped += r[i].chain == CHAIN_NOT_CHECKED;
  }
  sb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  sb_printf(&b, "<testsuites name=\"pgolf regress\" tests=\"%zu\" failures=\"%zu\">\n", 2 * n,
            failures);
  sb_printf(&b,
            "  <testsuite name=\"pgolf regress\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\">\n",
            2 * n, failures, skipped);
  for (size_t i = 0; i < n; i++) {
    junit_band(&b, &r[i]);
    junit_chain(&b, &r[i]);
  }
  sb_printf(&b, "  </testsuite>\n</testsuites>\n");
  return sb_finish(&b);
}

char *regress_markdown(const regress_result *r, size_t n) {
  sbuf b = {0};
  size_t f = count_failed(r, n);
  sb_printf(&b, "### pgolf regress: %s (%zu of %zu runs regressed)\n\n", f ? "FAIL" : "pass", f,
            n);
  sb_printf(&b, "| run | config | seed | val_bpb | limit | loss chain | result |\n");
  sb_printf(&b, "|---|---|---:|---:|---:|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    sb_printf(&b, "| ");
    sb_md(&b, r[i].run);
    sb_printf(&b, " | ");
    sb_md(&b, r[i].config);
    sb_printf(&b, " | %llu | %.8f | %.8f | %s | %s |\n", (unsigned long long)r[i].seed,
              r[i].val_bpb, r[i].limit, chain_word(r[i].chain),
              regress_failed(&r[i]) ? "**FAIL**" : "pass");
  }
  return sb_finish(&b);
}
