/* OUT/<folder>.html: the page of one folder, the one `pgolf verify`
 * writes (verify_write_html), with a line back to the leaderboard and the
 * folder's place in the chain above it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verifier/leaderboard.h"
#include "verifier/text_buf.h"
#include "verifier/verify_report.h"

/* Where the folder stands on the leaderboard: its step of the chain. */
static void standing(text_buf *b, const leaderboard *lb, size_t i) {
  const lb_step *st = NULL;
  for (size_t k = 0; k < lb->n_steps && !st; k++)
    if (lb->steps[k].rec == i) st = &lb->steps[k];
  if (!st) return;
  tb_printf(b, "<p>Record %zu of the chain", (size_t)(st - lb->steps) + 1);
  if (st->prev == LB_NONE) {
    tb_printf(b, ", the first.</p>\n");
    return;
  }
  const lb_entry *e = &lb->entries[i], *p = &lb->entries[st->prev];
  tb_printf(b, ": %.5f (n=%zu) against the standing record <a href=\"", e->score, e->n_values);
  tb_url(b, p->page);
  tb_printf(b, "\">");
  tb_xml(b, p->folder);
  tb_printf(b, "</a>, %.5f (n=%zu). ", p->score, p->n_values);
  const significance *s = &st->sig;
  if (!st->displaces)
    tb_printf(b, "It did not beat it.");
  else if (!st->testable) {
    tb_printf(b, "Not testable: ");
    tb_xml(b, st->why);
    tb_printf(b, ".");
  } else {
    if (s->have_readme)
      tb_printf(b, "README rule: p = %.3g for diff &gt; %.5f bpb, %s. ", s->readme.p_margin,
                s->readme_margin, s->readme_pass ? "accepted" : "rejected");
    tb_printf(b, "Practice: p = %.3g for diff &gt; 0, %s.", s->practice.p_margin,
              s->practice_pass ? "accepted" : "rejected");
  }
  tb_printf(b, "</p>\n");
}

/* The report's HTML with a header (back link, folder, track, its place
 * in the chain) after its <body> tag. */
static char *with_header(char *html, const leaderboard *lb, size_t i) {
  const lb_entry *e = &lb->entries[i];
  const char *body = html ? strstr(html, "<body>") : NULL;
  if (!body) return html;
  body += strlen("<body>");
  text_buf b = {0};
  tb_printf(&b, "%.*s\n<p><a href=\"index.html\">&larr; leaderboard</a> &middot; ", (int)(body - html),
            html);
  tb_xml(&b, e->track_dir);
  tb_printf(&b, " / <b>");
  tb_xml(&b, e->folder);
  tb_printf(&b, "</b></p>\n");
  standing(&b, lb, i);
  if (e->unreadable) {
    tb_printf(&b, "<p class=\"error\">The folder could not be read: ");
    tb_xml(&b, e->error);
    tb_printf(&b, "</p>\n");
  }
  tb_printf(&b, "%s", body);
  free(html);
  return tb_finish(&b);
}

/* verify's page of e as a string; for a folder that could not be read, a
 * page that says so. NULL (err) when memory runs out. */
static char *verify_page(const lb_entry *e, pg_error *err) {
  if (!e->verify) {
    text_buf b = {0};
    tb_printf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>");
    tb_xml(&b, e->folder);
    tb_printf(&b, "</title><style>body{font-family:sans-serif;margin:24px}.error{color:#b00}"
                  "</style></head><body>\n</body></html>\n");
    char *html = tb_finish(&b);
    if (!html) pg_fail(err, e->path, -1, "out of memory");
    return html;
  }
  char *html = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&html, &len);
  if (!f) return pg_fail(err, e->path, -1, "out of memory"), NULL;
  int rc = verify_write_html(f, e->verify, err);
  if (fclose(f) && !rc) rc = pg_fail(err, e->path, -1, "out of memory");
  if (rc) {
    free(html);
    return NULL;
  }
  return html;
}

char *leaderboard_folder_html(const leaderboard *lb, size_t i, pg_error *err) {
  char *html = verify_page(&lb->entries[i], err);
  if (!html) return NULL;
  html = with_header(html, lb, i);
  if (!html) pg_fail(err, lb->entries[i].path, -1, "out of memory");
  return html;
}
