#include "formats/byte_accounting.h"

#include <math.h>

uint32_t target_bytes(const byte_luts *l, uint16_t prev, uint16_t target) {
  return (uint32_t)l->base_bytes[target] +
         (uint32_t)(l->has_leading_space[target] && !l->is_boundary[prev]);
}

static int check_id(const byte_luts *l, uint16_t id, size_t index, const char *name,
                    pg_error *err) {
  if (id < l->vocab_size) return 0;
  return pg_fail(err, name, -1, "token %zu is id %u, outside the tokenizer's %u ids", index,
                 (unsigned)id, (unsigned)l->vocab_size);
}

int stream_target_bytes(const byte_luts *l, const uint16_t *t, size_t n, uint32_t *out,
                        const char *name, pg_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (check_id(l, t[i], i, name, err)) return -1;
    if (i) out[i - 1] = target_bytes(l, t[i - 1], t[i]);
  }
  return 0;
}

int stream_total_bytes(const byte_luts *l, const uint16_t *t, size_t n, uint64_t *total,
                       const char *name, pg_error *err) {
  byte_counter c;
  byte_counter_init(&c, UINT64_MAX);
  if (byte_counter_add(&c, l, t, n, name, err)) return -1;
  *total = c.bytes;
  return 0;
}

void byte_counter_init(byte_counter *c, uint64_t target_limit) {
  *c = (byte_counter){.target_limit = target_limit};
}

int byte_counter_add(byte_counter *c, const byte_luts *l, const uint16_t *t, size_t n,
                     const char *name, pg_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (check_id(l, t[i], i, name, err)) return -1;
    if (c->have_prev && c->targets < c->target_limit) {
      c->bytes += target_bytes(l, c->prev, t[i]);
      c->targets++;
    }
    c->prev = t[i];
    c->have_prev = 1;
  }
  c->tokens += n;
  return 0;
}

uint64_t scored_targets(uint64_t n_tokens, uint32_t seq_len) {
  if (n_tokens < 2) return 0;
  uint64_t targets = n_tokens - 1;
  return seq_len ? targets / seq_len * seq_len : targets;
}

double bpb_from_nats(double nats, uint64_t bytes) {
  return bytes ? nats / log(2.0) / (double)bytes : NAN;
}

/* val_bpb = val_loss / ln 2 * tokens / bytes: bits per byte over bits per
 * token. */
double tokens_per_byte_from_loss(double val_loss_nats, double val_bpb) {
  return val_bpb * log(2.0) / val_loss_nats;
}
