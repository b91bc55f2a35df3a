/* OUT/<folder>.html: the page of one folder.
 *
 * Rendered with the report module (verifier/report_html.h) from the
 * folder's check result, with a line back to the leaderboard above it.
 * This is the one place that makes a folder's page: when `pgolf verify`'s
 * report API lands, this function is what changes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/challenge.h"
#include "verifier/leaderboard.h"
#include "verifier/report_html.h"
#include "verifier/text_buf.h"

/* The report's HTML with a header line (back link, folder, track) after
 * its <body> tag. */
static char *with_header(char *html, const lb_entry *e) {
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
  if (e->unreadable) {
    tb_printf(&b, "<p class=\"error\">The folder could not be read: ");
    tb_xml(&b, e->error);
    tb_printf(&b, "</p>\n");
  }
  tb_printf(&b, "%s", body);
  free(html);
  return tb_finish(&b);
}

char *leaderboard_folder_html(const lb_entry *e, pg_error *err) {
  report r;
  memset(&r, 0, sizeof r);
  int rc = e->check ? report_add_check(&r, e->path, e->check, err) : 0;
  if (!rc)
    rc = report_significance_compute(&r, NULL, 0, CHALLENGE_MARGIN_NATS, 0, 0, CHALLENGE_ALPHA, err);
  char *html = rc ? NULL : report_html(&r);
  report_free(&r);
  if (rc) return NULL;
  if (!html) return pg_fail(err, e->path, -1, "out of memory"), NULL;
  html = with_header(html, e);
  if (!html) pg_fail(err, e->path, -1, "out of memory");
  return html;
}
