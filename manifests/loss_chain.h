/* The loss chain: a hash chain over the per-step training losses, so one
 * 32-byte head commits to every step's loss bits in order.
 *   c0  = SHA256("pgolf-loss-chain-v1")            (19 bytes, no NUL)
 *   c_i = SHA256(c_{i-1} || u64le(step) || u32le(loss_bits))
 * Losses enter as their IEEE-754 float32 bit patterns, so two runs agree on
 * the head exactly when every step's loss is bit-for-bit equal. */
#ifndef PGOLF_LOSS_CHAIN_H
#define PGOLF_LOSS_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/sha256.h"

#define LOSS_CHAIN_TAG "pgolf-loss-chain-v1"

/* c = c0. */
void loss_chain_init(uint8_t c[SHA256_LEN]);
/* c = SHA256(c || u64le(step) || u32le(loss_bits)), in place. */
void loss_chain_extend(uint8_t c[SHA256_LEN], uint64_t step, uint32_t loss_bits);
/* Head of the chain over n (step, loss_bits) pairs; n == 0 gives c0. */
void loss_chain_head(const uint64_t *steps, const uint32_t *loss_bits, size_t n,
                     uint8_t out[SHA256_LEN]);

#endif
