/* A thread's walk over the indices i, i + step, i + 2 step, ... of a
 * grid-stride loop, with i's quotient and remainder by a divisor d kept
 * by additions: one division when the walk starts, none per element.
 *
 * Why: the GPU has no integer divider. A 64-bit division by a value known
 * only at run time is a called routine of about 70 instructions (nvcc
 * first tries a 32-bit path of about 20), and the elementwise kernels move
 * only 8 to 16 bytes an element; the walk's step is two adds, a compare
 * and a subtraction.
 *
 * Exact for every i, step and d >= 1: r < d and step % d < d, so r + step
 * % d + carry (carry 0 or 1) is below 2 d and one subtraction brings it
 * back under d. The carry chains walks: a walk over q (i / d) by d2 is
 * started at (q, step / d) and advanced with the first walk's wrap, since
 * q moves by step / d or by one more; so (i / d) % d2, (i / d) / d2 and
 * deeper splits need no division either. Shared with the CPU test
 * (tests/test_kernels_index_walk.c), which checks it against / and %. */
#ifndef PGOLF_INDEX_WALK_H
#define PGOLF_INDEX_WALK_H

#include <stddef.h>

#include "kernels/hd.h"

typedef struct {
  size_t q, r;   /* the index's quotient and remainder by d */
  size_t dq, dr; /* the step's */
  size_t d;
} index_walk;

/* The walk from index i by step, split by d (>= 1). */
PGOLF_HD index_walk index_walk_start(size_t i, size_t step, size_t d) {
  index_walk w;
  w.q = i / d, w.r = i % d, w.dq = step / d, w.dr = step % d, w.d = d;
  return w;
}

/* The next index: by the step, plus carry (0 or 1) from the walk this one
 * splits the quotient of. Returns this walk's wrap (1 when q moved by one
 * more than dq), the carry of a walk over q. */
PGOLF_HD int index_walk_next(index_walk *w, int carry) {
  w->q += w->dq;
  w->r += w->dr + (size_t)carry;
  if (w->r >= w->d) {
    w->r -= w->d;
    w->q++;
    return 1;
  }
  return 0;
}

#endif
