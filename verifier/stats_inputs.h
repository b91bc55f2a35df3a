/* The per-seed values of `pgolf stats`, from whatever the user has:
 *   - a comma-separated list of numbers ("1.0808,1.0810,1.0812");
 *   - a run manifest (pgolf train; a DSSE envelope is read too): one seed,
 *     predicate.evaluation.val_bpb or val_loss;
 *   - a submission folder: one value per training log with a final metric
 *     (verifier/log_parse.h's log_final_metric), two logs of one seed
 *     refused (a seed counted twice would overstate n).
 * An argument naming an existing file or folder is read as one; anything
 * else must be a list of numbers.
 *
 * Tokens per byte. Each value read from a manifest or log carries
 * val_loss and val_bpb, hence tokens per byte = val_bpb ln 2 / val_loss;
 * a set's tokens per byte is their mean, known only when every value of
 * the set carried one (numbers from the command line carry none). */
#ifndef PGOLF_STATS_INPUTS_H
#define PGOLF_STATS_INPUTS_H

#include <stddef.h>

#include "common/error.h"

typedef struct stats_set {
  double *v;
  size_t n, cap;
  double tpb_sum;
  size_t n_tpb;
} stats_set;

/* Append what arg holds. nats: take val_loss (nats per token) instead of
 * val_bpb. option names the set in errors ("--new", "--record"). */
int stats_set_add(stats_set *s, const char *arg, const char *option, int nats, pg_error *err);
/* The set's tokens per byte, or NAN unless every value carried one. */
double stats_set_tpb(const stats_set *s);
void stats_set_free(stats_set *s);

#endif
