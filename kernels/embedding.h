/* Token embedding lookup, as nn.Embedding: y[n] = table[ids[n]], and its
 * backward, a scatter-add: dtable[v] = sum over n with ids[n] == v of
 * dy[n], each row summed in float32 in ascending n by one thread (the
 * rows are grouped by a stable counting sort first), so the sum is the
 * same bits for any thread count.
 * KERNEL_BF16 rounds each row's finished sum (the official token
 * embedding is a bf16 parameter, so its gradient is bf16). */
#ifndef PGOLF_EMBEDDING_H
#define PGOLF_EMBEDDING_H

#include <stdint.h>

#include "kernels/flags.h"

void embedding_forward(float *y, const float *table, const uint16_t *ids, int n, int d);
/* Rows of dtable no id refers to are left unchanged under
 * KERNEL_ACCUMULATE and set to 0 otherwise. */
void embedding_backward(float *dtable, const float *dy, const uint16_t *ids, int n, int vocab,
                        int d, int flags);

#endif
