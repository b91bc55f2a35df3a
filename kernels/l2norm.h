/* The L2 norm of a float32 vector, in a fixed order.
 *
 * The sum of squares is taken in float64 over fixed blocks of
 * L2NORM_BLOCK elements (each block summed in index order by one thread),
 * and the block sums are added in block order, so the result is the same
 * bits for any thread count. The float64 sum is more accurate than
 * PyTorch's float32 reduction; the two differ by rounding only (about one
 * float32 ulp of the norm). The result is narrowed to float32 once, after
 * the square root, as PyTorch returns a float32 norm. */
#ifndef PGOLF_L2NORM_H
#define PGOLF_L2NORM_H

#include <stddef.h>

#define L2NORM_BLOCK 4096

/* Sum of x[i]^2 in float64, fixed order as above. */
double l2norm_sumsq(const float *x, size_t n);

/* sqrt(l2norm_sumsq(x, n)) narrowed to float32. */
float l2norm(const float *x, size_t n);

#endif
