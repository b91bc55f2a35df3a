#include "kernels/scale_add.h"

#include <stddef.h>
#include <stdlib.h>

#include "kernels/col_dot.h"

void scale_add_forward(float *out, const float *x, const float *s, const float *y, int rows, int d,
                       int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      out[i] = scale_add_out(x[i], s[c], y[i], flags);
    }
}

/* dy = dout * s for every element (both backwards). */
static void backward_dy(float *dy, const float *dout, const float *s, int rows, int d, int flags) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < d; c++) {
      size_t i = (size_t)r * d + c;
      kernel_store(&dy[i], scale_add_dy(dout[i], s[c], flags), flags);
    }
}

void scale_add_backward(float *dy, float *ds, const float *dout, const float *s, const float *y,
                        int rows, int d, int flags) {
  double *sums = malloc((size_t)(d > 0 ? d : 1) * sizeof *sums);
  if (!sums) abort(); /* a kernel returns no errors */
  col_dot_sums(sums, dout, y, rows, d, flags);
  for (int c = 0; c < d; c++) col_dot_finish(&ds[c], sums[c], flags);
  free(sums);
  backward_dy(dy, dout, s, rows, d, flags);
}

void scale_add_backward_tree_ref(float *dy, float *ds, const float *dout, const float *s,
                                 const float *y, int rows, int d, int flags) {
  col_dot_tree_ref(ds, dout, y, rows, d, flags);
  backward_dy(dy, dout, s, rows, d, flags);
}
