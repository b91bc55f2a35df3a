#include "kernels/residual_norm.h"

#include "kernels/residual_mix.h"
#include "kernels/rmsnorm.h"
#include "kernels/scale_add.h"

void residual_norm_forward(const residual_norm_io *io, int rows, int d, int add_flags,
                           int norm_flags) {
  const float *cur = io->x;
  if (io->s) {
    scale_add_forward(io->u, cur, io->s, io->y, rows, d, add_flags);
    cur = io->u;
  }
  if (io->mix) {
    residual_mix_forward(io->v, cur, io->x0, io->mix, rows, d, add_flags);
    cur = io->v;
  }
  const int f = norm_flags & ~KERNEL_TREE;
  (norm_flags & KERNEL_TREE ? rmsnorm_forward_tree_ref : rmsnorm_forward)(io->n, io->rstd, cur,
                                                                          rows, d, f);
}
