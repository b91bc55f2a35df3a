/* A growing text buffer for the report writers (regress JUnit and
 * Markdown, report HTML and Markdown), with the escapes each format
 * needs. An allocation failure is remembered and tb_finish returns NULL. */
#ifndef PGOLF_TEXT_BUF_H
#define PGOLF_TEXT_BUF_H

#include <stddef.h>

typedef struct text_buf {
  char *s;
  size_t len, cap;
  int oom;
} text_buf;

void tb_printf(text_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* XML/HTML text and attribute values: & < > " ' escaped; control
 * characters other than tab and newline (not allowed in XML 1.0) become '?'. */
void tb_xml(text_buf *b, const char *s);
/* A Markdown table cell: '|' escaped, < and > as entities (a renderer
 * would take <x> for HTML), newlines become spaces. */
void tb_md(text_buf *b, const char *s);
/* A relative link's path: every byte but letters, digits and . _ ~ -
 * percent-encoded (folder names hold spaces), so it is also safe in an
 * attribute. */
void tb_url(text_buf *b, const char *s);
/* The text (caller frees), or NULL if memory ran out. */
char *tb_finish(text_buf *b);

#endif
