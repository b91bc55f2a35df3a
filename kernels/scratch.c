#include "kernels/scratch.h"

#include <stdlib.h>

typedef struct scratch_buf {
  float *p;
  size_t cap;
} scratch_buf;

static _Thread_local scratch_buf bufs[SCRATCH_SLOTS];

float *scratch_floats(int slot, size_t n) {
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
