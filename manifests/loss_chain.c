#include "manifests/loss_chain.h"

#include <string.h>

void loss_chain_init(uint8_t c[SHA256_LEN]) {
  sha256_buf(LOSS_CHAIN_TAG, strlen(LOSS_CHAIN_TAG), c);
}

void loss_chain_extend(uint8_t c[SHA256_LEN], uint64_t step, uint32_t loss_bits) {
  /* Serialise explicitly: the byte order is part of the format, not of the
   * machine that computes it. */
  uint8_t buf[SHA256_LEN + 8 + 4];
  memcpy(buf, c, SHA256_LEN);
  for (int i = 0; i < 8; i++) buf[SHA256_LEN + i] = (uint8_t)(step >> (8 * i));
  for (int i = 0; i < 4; i++) buf[SHA256_LEN + 8 + i] = (uint8_t)(loss_bits >> (8 * i));
  sha256_buf(buf, sizeof buf, c);
}

void loss_chain_head(const uint64_t *steps, const uint32_t *loss_bits, size_t n,
                     uint8_t out[SHA256_LEN]) {
  loss_chain_init(out);
  for (size_t i = 0; i < n; i++) loss_chain_extend(out, steps[i], loss_bits[i]);
}
