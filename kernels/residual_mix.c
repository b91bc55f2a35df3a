#include "kernels/residual_mix.h"

#include <stddef.h>
#include <stdlib.h>

#include "kernels/col_dot.h"

void residual_mix_forward(float *out, const float *x, const float *x0, const float *mix, int rows,
                          int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      out[i] = residual_mix_out(x[i], x0[i], mix[c], mix[d + c], flags);
    }
}

/* dx and dx0 for every element (both backwards); after the sums, which
 * read dout that dx may overwrite. */
static void backward_inputs(float *dx, float *dx0, const float *dout, const float *mix, int rows,
                            int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      residual_mix_grads(&dx[i], &dx0[i], dout[i], mix[c], mix[d + c], flags);
    }
}

void residual_mix_backward(float *dx, float *dx0, float *dmix, const float *dout, const float *x,
                           const float *x0, const float *mix, int rows, int d, int flags) {
  double *sums = malloc((size_t)(d > 0 ? 2 * d : 1) * sizeof *sums);
  if (!sums) abort(); /* a kernel returns no errors */
  col_dot_sums(sums, dout, x, rows, d, flags);
  col_dot_sums(sums + d, dout, x0, rows, d, flags);
  for (int c = 0; c < 2 * d; c++) col_dot_finish(&dmix[c], sums[c], flags);
  free(sums);
  backward_inputs(dx, dx0, dout, mix, rows, d, flags);
}

void residual_mix_backward_tree_ref(float *dx, float *dx0, float *dmix, const float *dout,
                                    const float *x, const float *x0, const float *mix, int rows,
                                    int d, int flags) {
  col_dot_tree_ref(dmix, dout, x, rows, d, flags);
  col_dot_tree_ref(dmix + d, dout, x0, rows, d, flags);
  backward_inputs(dx, dx0, dout, mix, rows, d, flags);
}
