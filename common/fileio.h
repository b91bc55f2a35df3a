/* Reading and writing whole files safely.
 *
 * Reads are bounded: every caller states the largest file it accepts, so a
 * hostile or corrupt input cannot make pgolf allocate without limit.
 * Writes are atomic: data goes to a temporary file in the same directory,
 * is fsync'd, renamed over the target, and the directory is fsync'd, so a
 * killed run leaves either the old file or the new one, never half of one. */
#ifndef PGOLF_FILEIO_H
#define PGOLF_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Read all of path into a fresh malloc'd buffer (NUL-terminated one past
 * *len, so text parsers may treat it as a C string). Fails if the file is
 * larger than max_bytes. "-" reads standard input. */
int file_read_all(const char *path, size_t max_bytes, uint8_t **out, size_t *len, pg_error *err);

/* Atomically replace path with buf[0..len). mode is the new file's mode. */
int file_write_atomic(const char *path, const void *buf, size_t len, unsigned mode, pg_error *err);

/* A read-only memory mapping of a whole file (an empty file maps to
 * data == NULL, size == 0). */
typedef struct mapped_file {
  const uint8_t *data;
  size_t size;
} mapped_file;

int file_map(const char *path, mapped_file *m, pg_error *err);
void file_unmap(mapped_file *m);

#endif
