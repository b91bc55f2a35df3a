/* What `pgolf regress` prints: a terminal table, JSON, JUnit XML (for CI
 * systems that show test results) and a Markdown summary (for a pull
 * request comment). All four say the same thing per run. */
#include <stdlib.h>
#include <string.h>

#include "verifier/regress.h"
#include "verifier/text_buf.h"

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

static void junit_case_open(text_buf *b, const regress_result *r, const char *what) {
  tb_printf(b, "    <testcase classname=\"pgolf.regress.");
  tb_xml(b, r->config);
  tb_printf(b, "\" name=\"seed %llu %s (", (unsigned long long)r->seed, what);
  tb_xml(b, r->run);
  tb_printf(b, ")\">\n");
}

static void junit_band(text_buf *b, const regress_result *r) {
  junit_case_open(b, r, "val_bpb");
  if (r->band_failed)
    tb_printf(b,
              "      <failure type=\"val_bpb_above_band\" message=\"val_bpb %.8f &gt; limit "
              "%.8f\"/>\n",
              r->val_bpb, r->limit);
  tb_printf(b, "    </testcase>\n");
}

static void junit_chain(text_buf *b, const regress_result *r) {
  junit_case_open(b, r, "loss_chain");
  if (r->chain != CHAIN_SAME) {
    tb_printf(b, "      <%s %smessage=\"", r->chain == CHAIN_DIFFERS ? "failure" : "skipped",
              r->chain == CHAIN_DIFFERS ? "type=\"loss_chain_differs\" " : "");
    tb_xml(b, r->chain_note);
    tb_printf(b, "\"/>\n");
  }
  tb_printf(b, "    </testcase>\n");
}

char *regress_junit(const regress_result *r, size_t n) {
  text_buf b = {0};
  size_t failures = 0, skipped = 0;
  for (size_t i = 0; i < n; i++) {
    failures += (size_t)r[i].band_failed + (r[i].chain == CHAIN_DIFFERS);
    skipped += r[i].chain == CHAIN_NOT_CHECKED;
  }
  tb_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  tb_printf(&b, "<testsuites name=\"pgolf regress\" tests=\"%zu\" failures=\"%zu\">\n", 2 * n,
            failures);
  tb_printf(&b,
            "  <testsuite name=\"pgolf regress\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\">\n",
            2 * n, failures, skipped);
  for (size_t i = 0; i < n; i++) {
    junit_band(&b, &r[i]);
    junit_chain(&b, &r[i]);
  }
  tb_printf(&b, "  </testsuite>\n</testsuites>\n");
  return tb_finish(&b);
}

char *regress_markdown(const regress_result *r, size_t n) {
  text_buf b = {0};
  size_t f = count_failed(r, n);
  tb_printf(&b, "### pgolf regress: %s (%zu of %zu runs regressed)\n\n", f ? "FAIL" : "pass", f,
            n);
  tb_printf(&b, "| run | config | seed | val_bpb | limit | loss chain | result |\n");
  tb_printf(&b, "|---|---|---:|---:|---:|---|---|\n");
  for (size_t i = 0; i < n; i++) {
    tb_printf(&b, "| ");
    tb_md(&b, r[i].run);
    tb_printf(&b, " | ");
    tb_md(&b, r[i].config);
    tb_printf(&b, " | %llu | %.8f | %.8f | %s | %s |\n", (unsigned long long)r[i].seed,
              r[i].val_bpb, r[i].limit, chain_word(r[i].chain),
              regress_failed(&r[i]) ? "**FAIL**" : "pass");
  }
  return tb_finish(&b);
}
