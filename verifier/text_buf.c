/* Growing text buffers with XML and Markdown escapes (text_buf.h). */
#include "verifier/text_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/grow.h"

void tb_printf(text_buf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int need = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (need < 0) return;
  if (PG_GROW(b->s, b->cap, b->len + (size_t)need + 1, 4096)) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)need;
}

void tb_xml(text_buf *b, const char *s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '&') tb_printf(b, "&amp;");
    else if (c == '<') tb_printf(b, "&lt;");
    else if (c == '>') tb_printf(b, "&gt;");
    else if (c == '"') tb_printf(b, "&quot;");
    else if (c == '\'') tb_printf(b, "&#39;");
    else if (c < 0x20 && c != '\t' && c != '\n') tb_printf(b, "?");
    else tb_printf(b, "%c", c);
  }
}

void tb_md(text_buf *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '|') tb_printf(b, "\\|");
    else if (*s == '<') tb_printf(b, "&lt;"); /* GitHub would take <x> for a tag and hide it */
    else if (*s == '>') tb_printf(b, "&gt;");
    else if (*s == '\n' || *s == '\r') tb_printf(b, " ");
    else tb_printf(b, "%c", *s);
  }
}

void tb_url(text_buf *b, const char *s) {
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        *p == '.' || *p == '_' || *p == '~' || *p == '-')
      tb_printf(b, "%c", *p);
    else
      tb_printf(b, "%%%02X", *p);
  }
}

char *tb_finish(text_buf *b) {
  if (b->oom || !b->s) {
    free(b->s);
    b->s = NULL;
    return b->oom ? NULL : calloc(1, 1);
  }
  return b->s;
}
