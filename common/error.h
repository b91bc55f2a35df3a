/* Errors are values: a library function that fails fills a pg_error and
 * returns -1; only the verb at the edge prints it, as
 *   pgolf: FILE[:POS]: message
 * so every message names the input and, where it has one, the position. */
#ifndef PGOLF_ERROR_H
#define PGOLF_ERROR_H

#include <stdarg.h>

#ifdef __cplusplus /* the CUDA launchers (kernels/<op>.cu, C++) report through these */
extern "C" {
#endif

#define PG_ERR_PATH 512
#define PG_ERR_MSG 512

/* Exit codes shared by every verb. */
enum { PG_EXIT_OK = 0, PG_EXIT_CHECK_FAILED = 1, PG_EXIT_USAGE = 2 };

typedef struct pg_error {
  char file[PG_ERR_PATH]; /* input the error is about, "" if none */
  long long pos;          /* byte offset (or line, see pos_is_line), -1 if none */
  int pos_is_line;        /* 1: pos is a 1-based line number */
  char msg[PG_ERR_MSG];
} pg_error;

/* Fill err (which may be NULL) and return -1, so callers can write
 * `return pg_fail(err, path, off, "bad magic %u", m);` */
int pg_fail(pg_error *err, const char *file, long long pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int pg_fail_line(pg_error *err, const char *file, long long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Same, with errno's text appended as ": strerror(errno)". */
int pg_fail_errno(pg_error *err, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Format "FILE[:POS]: msg" (without the "pgolf: " prefix) into buf. */
void pg_error_format(const pg_error *err, char *buf, unsigned long cap);
/* Print "pgolf: FILE[:POS]: msg" to stderr. */
void pg_error_print(const pg_error *err);
/* Print "pgolf: msg" to stderr (usage errors with no file). */
void pg_die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif
