#include "common/error.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void set_file(pg_error *err, const char *file) {
  snprintf(err->file, sizeof err->file, "%s", file ? file : "");
}

int pg_fail(pg_error *err, const char *file, long long pos, const char *fmt, ...) {
  if (!err) return -1;
  set_file(err, file);
  err->pos = pos;
  err->pos_is_line = 0;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int pg_fail_line(pg_error *err, const char *file, long long line, const char *fmt, ...) {
  if (!err) return -1;
  set_file(err, file);
  err->pos = line;
  err->pos_is_line = 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

int pg_fail_errno(pg_error *err, const char *file, const char *fmt, ...) {
  int saved = errno;
  if (!err) return -1;
  set_file(err, file);
  err->pos = -1;
  err->pos_is_line = 0;
  char head[PG_ERR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  snprintf(err->msg, sizeof err->msg, "%.400s: %s", head, strerror(saved));
  return -1;
}

void pg_error_format(const pg_error *err, char *buf, unsigned long cap) {
  if (!err->file[0])
    snprintf(buf, cap, "%s", err->msg);
  else if (err->pos < 0)
    snprintf(buf, cap, "%s: %s", err->file, err->msg);
  else if (err->pos_is_line)
    snprintf(buf, cap, "%s:%lld: %s", err->file, err->pos, err->msg);
  else
    snprintf(buf, cap, "%s:offset %lld: %s", err->file, err->pos, err->msg);
}

void pg_error_print(const pg_error *err) {
  char buf[PG_ERR_PATH + PG_ERR_MSG + 64];
  pg_error_format(err, buf, sizeof buf);
  fprintf(stderr, "pgolf: %s\n", buf);
}

void pg_die_msg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("pgolf: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}
