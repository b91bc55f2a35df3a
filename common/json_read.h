/* Reading the JSON that manifests and envelopes are made of, strictly:
 * duplicate keys are rejected, sizes are bounded by the caller, and
 * jansson's error position becomes FILE:LINE in the pg_error. */
#ifndef PGOLF_JSON_READ_H
#define PGOLF_JSON_READ_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Parse buf[0..len) into a new reference (*out). */
int json_read_buf(const uint8_t *buf, size_t len, const char *name, json_t **out, pg_error *err);
/* Read path (at most max_bytes) and parse it. */
int json_read_file(const char *path, size_t max_bytes, json_t **out, pg_error *err);

/* Serialise with 2-space indentation, keys in insertion order, and a
 * final newline, into a fresh malloc'd buffer. */
int json_write_pretty(const json_t *j, char **out, size_t *len, pg_error *err);

#endif
