#include "common/hash_pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct pool {
  const char *const *paths;
  size_t n;
  hash_result *results;
  atomic_size_t next;   /* next unclaimed index: each file is hashed exactly once */
  atomic_size_t failed; /* count of failures, summed at the end */
} pool;

int hash_pool_default_jobs(size_t n_files) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1) cpus = 1;
  if (cpus > HASH_POOL_MAX_JOBS) cpus = HASH_POOL_MAX_JOBS;
  if ((size_t)cpus > n_files) cpus = n_files ? (long)n_files : 1;
  return (int)cpus;
}

static void hash_one(const char *path, hash_result *r) {
  memset(r, 0, sizeof *r);
  if (sha256_file(path, r->digest, &r->size, &r->err) != 0) {
    r->failed = 1;
    memset(r->digest, 0, sizeof r->digest);
    r->size = 0;
  }
}

/* Workers claim indexes from a shared counter rather than fixed slices, so
 * one large file does not leave the other workers idle behind it. */
static void *worker(void *arg) {
  pool *p = arg;
  for (;;) {
    size_t i = atomic_fetch_add(&p->next, 1);
    if (i >= p->n) break;
    hash_one(p->paths[i], &p->results[i]);
    if (p->results[i].failed) atomic_fetch_add(&p->failed, 1);
  }
  return NULL;
}

size_t hash_pool_run(const char *const *paths, size_t n, int jobs, hash_result *results) {
  if (n == 0) return 0;
  if (jobs <= 0) jobs = hash_pool_default_jobs(n);
  if (jobs > HASH_POOL_MAX_JOBS) jobs = HASH_POOL_MAX_JOBS;
  if ((size_t)jobs > n) jobs = (int)n;
  pool p = {.paths = paths, .n = n, .results = results};
  atomic_init(&p.next, 0);
  atomic_init(&p.failed, 0);
  /* The calling thread is worker 0. If a thread cannot be created the
   * others simply take its share: fewer threads is slower, not wrong. */
  pthread_t *tids = calloc((size_t)jobs, sizeof *tids);
  int started = 0;
  for (int j = 1; tids && j < jobs; j++) {
    if (pthread_create(&tids[started], NULL, worker, &p) != 0) break;
    started++;
  }
  worker(&p);
  for (int j = 0; j < started; j++) pthread_join(tids[j], NULL);
  free(tids);
  return atomic_load(&p.failed);
}
