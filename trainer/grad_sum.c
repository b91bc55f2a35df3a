/* The ordered gradient combination (see grad_sum.h). */
#include "trainer/grad_sum.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ordered_sum.h"

/* Each element by the expression the GPU's kernel also evaluates
 * (kernels/ordered_sum.h), so a GPU run's combination has these bits. */
void grad_sum_ordered(float *out, const float *shards, size_t stride, int n, size_t len, float scale) {
  ptrdiff_t m = (ptrdiff_t)len;
#pragma omp parallel for schedule(static)
  for (ptrdiff_t i = 0; i < m; i++) out[i] = ordered_sum_elem(shards, stride, n, (size_t)i, scale);
}

/* Slice q of n elements over P processes: [n*q/P, n*(q+1)/P). */
static size_t slice_lo(size_t n, int q, int P) { return n / (size_t)P * (size_t)q + n % (size_t)P * (size_t)q / (size_t)P; }

int grad_exchange_init(grad_exchange *x, const comm *c, int n_local, size_t n, pg_error *err) {
  memset(x, 0, sizeof *x);
  x->n = n;
  x->n_local = n_local;
  x->procs = c->size;
  int P = c->size;
  if (P == 1) return 0; /* the ranks' gradients are summed in place of the exchange */
  if ((double)n * (double)n_local > (double)INT_MAX)
    return pg_fail(err, "", -1, "%zu parameters x %d ranks per process is too many for one exchange", n, n_local);
  size_t mine = slice_lo(n, c->rank + 1, P) - slice_lo(n, c->rank, P);
  x->send = malloc((n * (size_t)n_local + 1) * sizeof(float));
  x->recv = malloc((mine * (size_t)n_local * (size_t)P + 1) * sizeof(float));
  x->part = malloc((mine + 1) * sizeof(float));
  int *all = calloc((size_t)P * 6, sizeof(int));
  if (!x->send || !x->recv || !x->part || !all) {
    free(all);
    grad_exchange_free(x);
    return pg_fail(err, "", -1, "out of memory for the gradient exchange");
  }
  x->scount = all, x->sdispl = all + P, x->rcount = all + 2 * P, x->rdispl = all + 3 * P;
  x->count = all + 4 * P, x->displ = all + 5 * P;
  for (int q = 0; q < P; q++) {
    size_t lo = slice_lo(n, q, P), len = slice_lo(n, q + 1, P) - lo;
    x->count[q] = (int)len;
    x->displ[q] = (int)lo;
    x->scount[q] = (int)(len * (size_t)n_local);
    x->sdispl[q] = (int)(lo * (size_t)n_local);
    x->rcount[q] = (int)(mine * (size_t)n_local);
    x->rdispl[q] = (int)(mine * (size_t)n_local * (size_t)q);
  }
  return 0;
}

void grad_exchange_free(grad_exchange *x) {
  free(x->send);
  free(x->recv);
  free(x->part);
  free(x->scount);
  memset(x, 0, sizeof *x);
}

/* Process p's shards of slice q, rank by rank, at send + sdispl[q]; what
 * process q receives from p is then ranks p*L .. p*L+L-1 in order, so its
 * receive buffer holds the world's shards of its slice in rank order. */
static void pack(grad_exchange *x, const float *local) {
  for (int q = 0; q < x->procs; q++) {
    size_t len = (size_t)x->count[q];
    for (int l = 0; l < x->n_local; l++)
      memcpy(x->send + x->sdispl[q] + (size_t)l * len, local + (size_t)l * x->n + (size_t)x->displ[q],
             len * sizeof(float));
  }
}

int grad_combine(grad_exchange *x, comm *c, int world, const float *local, float *out, pg_error *err) {
  float scale = 1.0f / (float)world; /* exact: world divides 8 */
  if (c->size == 1) {
    grad_sum_ordered(out, local, x->n, world, x->n, scale);
    return 0;
  }
  pack(x, local);
  if (comm_alltoallv_f32(c, x->send, x->scount, x->sdispl, x->recv, x->rcount, x->rdispl, err) != 0) return -1;
  size_t mine = (size_t)x->count[c->rank];
  grad_sum_ordered(x->part, x->recv, mine, world, mine, scale);
  return comm_allgatherv_f32(c, x->part, out, x->count, x->displ, err);
}
