/* Growing a heap array by doubling: one helper instead of a realloc loop
 * at every call site. */
#ifndef PGOLF_GROW_H
#define PGOLF_GROW_H

#include <stddef.h>

/* Make room for at least `need` elements of `elem` bytes in the array whose
 * pointer is at *arrp (a T **) with capacity *cap: doubles from `first`
 * (or from *cap) until need fits, then reallocs. Returns 0, or -1 when out
 * of memory or when the byte count would overflow; on failure the array
 * and *cap are unchanged (the caller still owns and frees it). */
int pg_grow(void *arrp, size_t elem, size_t *cap, size_t need, size_t first);

/* PG_GROW(arr, cap, need, first): pg_grow for an lvalue `T *arr`. */
#define PG_GROW(arr, cap, need, first) pg_grow(&(arr), sizeof *(arr), &(cap), (need), (first))

#endif
