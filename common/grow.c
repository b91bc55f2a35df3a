#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pg_grow(void *arrp, size_t elem, size_t *cap, size_t need, size_t first) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : (first ? first : 1);
  while (c < need) {
    if (c > SIZE_MAX / 2) return -1;
    c *= 2;
  }
  if (elem && c > SIZE_MAX / elem) return -1;
  /* The array pointer travels through memcpy: arrp is a T **, and every
   * object pointer has void *'s representation on the platforms we build for
   * (POSIX requires it). */
  void *old;
  memcpy(&old, arrp, sizeof old);
  void *nv = realloc(old, c * elem);
  if (!nv) return -1;
  memcpy(arrp, &nv, sizeof nv);
  *cap = c;
  return 0;
}
