/* SHA-256 of many files at once, with a pool of worker threads.
 *
 * One file is hashed by one thread (SHA-256 is sequential within a
 * stream), so the speed-up comes from hashing several files at the same
 * time. Results are stored by input index: the output order is the input
 * order whatever order the workers finish in. */
#ifndef PGOLF_HASH_POOL_H
#define PGOLF_HASH_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"

#define HASH_POOL_MAX_JOBS 1024

typedef struct hash_result {
  uint8_t digest[SHA256_LEN];
  uint64_t size; /* bytes hashed */
  int failed;    /* 0: digest and size are valid; 1: err says why not */
  pg_error err;
} hash_result;

/* Number of online CPUs, capped at n_files, at least 1. */
int hash_pool_default_jobs(size_t n_files);

/* Hash paths[0..n) into results[0..n) with `jobs` threads (jobs <= 0:
 * hash_pool_default_jobs; always capped at n and HASH_POOL_MAX_JOBS).
 * "-" is standard input. Returns the number of files that failed. */
size_t hash_pool_run(const char *const *paths, size_t n, int jobs, hash_result *results);

#endif
