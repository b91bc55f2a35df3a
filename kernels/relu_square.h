/* The MLP activation relu(h)^2, as torch.relu(h).square().
 * Backward as PyTorch's pow backward then relu's threshold backward:
 *   dh = (h > 0) ? dy * (2 * relu(h)) : 0.
 * KERNEL_BF16: y = bf16(r * r) and dh = bf16(dy * (2 r)) (2r is exact). */
#ifndef PGOLF_RELU_SQUARE_H
#define PGOLF_RELU_SQUARE_H

#include <stddef.h>

#include "kernels/flags.h"

void relu_square_forward(float *y, const float *h, size_t n, int flags);
void relu_square_backward(float *dh, const float *dy, const float *h, size_t n, int flags);

#endif
