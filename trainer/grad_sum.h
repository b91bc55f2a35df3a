/* The gradient of a step from its ranks' gradients, as DDP forms it
 * (every rank's gradient times 1/world, summed), in one fixed order:
 *
 *     g[i] = (((g_0[i]*s + g_1[i]*s) + g_2[i]*s) + ...) + g_{N-1}[i]*s,   s = 1/N
 *
 * in float32, rank 0 first, whatever the number of processes and threads.
 * pgolf adds; MPI only moves the shards (trainer/comm.h). With P processes
 * the parameters are cut into P contiguous slices: an all-to-all gives
 * process q every rank's shard of slice q, q sums them in rank order, an
 * all-gather gives everyone every summed slice. Each element is still the
 * same expression over the same N floats, so the bits do not depend on P
 * (docs/DESIGN.md, "The ordered combination"). */
#ifndef PGOLF_GRAD_SUM_H
#define PGOLF_GRAD_SUM_H

#include <stddef.h>

#include "common/error.h"
#include "trainer/comm.h"

/* out[i] = the ordered sum above over shards[0..n) (stride between the
 * shards' elements: `stride` floats), each times scale (1: no multiply).
 * out must not overlap shards[1..n). Parallel over i; each element summed by one thread
 * in shard order. */
void grad_sum_ordered(float *out, const float *shards, size_t stride, int n, size_t len, float scale);

/* Buffers for combining n_local ranks' gradients of n floats across c. */
typedef struct grad_exchange {
  size_t n;
  int n_local, procs;
  float *send, *recv, *part;
  int *scount, *sdispl, *rcount, *rdispl, *count, *displ; /* per process */
} grad_exchange;

int grad_exchange_init(grad_exchange *x, const comm *c, int n_local, size_t n, pg_error *err);
void grad_exchange_free(grad_exchange *x);

/* out = the ordered sum of the world's gradients (world = n_local x
 * processes), this process holding ranks [rank*n_local, +n_local), rank
 * first+l at local + l*n. out must not overlap local. */
int grad_combine(grad_exchange *x, comm *c, int world, const float *local, float *out, pg_error *err);

#endif
