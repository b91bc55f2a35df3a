#include "kernels/scratch.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct scratch_buf {
  float *p;
  size_t cap;
} scratch_buf;

/* The calling thread's buffers hang off a pthread key rather than a
 * _Thread_local array, so that a thread that ends (an OpenMP team that
 * shrinks) frees them through the key's destructor. */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void free_bufs(void *v) {
  scratch_buf *b = v;
  for (int i = 0; i < SCRATCH_SLOTS; i++) free(b[i].p);
  free(b);
}

static void make_key(void) {
  if (pthread_key_create(&key, free_bufs) != 0) abort();
}

float *scratch_floats(int slot, size_t n) {
  pthread_once(&key_once, make_key);
  scratch_buf *bufs = pthread_getspecific(key);
  if (!bufs) {
    bufs = calloc(SCRATCH_SLOTS, sizeof *bufs);
    if (!bufs || pthread_setspecific(key, bufs) != 0) abort();
  }
  scratch_buf *b = &bufs[slot];
  if (n == 0) n = 1;
  if (n > b->cap) {
    free(b->p);
    b->p = calloc(n, sizeof *b->p);
    if (!b->p) abort();
    b->cap = n;
  }
  return b->p;
}
