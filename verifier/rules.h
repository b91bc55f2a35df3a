/* The challenge's rules as checks on a submission folder, one file each
 * (verifier/rule_<name>.c), each adding findings with its own codes.
 * SUBMISSION.md ("Finding codes") quotes the rule behind every code. */
#ifndef PGOLF_RULES_H
#define PGOLF_RULES_H

#include "verifier/findings.h"
#include "verifier/submission.h"

void rule_files(const submission *s, finding_list *f);        /* MISSING_FILE */
void rule_final_metric(const submission *s, finding_list *f); /* NO_FINAL_METRIC */
void rule_claims(const submission *s, finding_list *f);       /* CLAIM_MISMATCH */
void rule_size(const submission *s, finding_list *f);         /* SIZE_OVER_LIMIT */
void rule_train_budget(const submission *s, finding_list *f); /* TRAIN_OVER_BUDGET */
void rule_eval_budget(const submission *s, finding_list *f);  /* EVAL_OVER_BUDGET */
void rule_seeds(const submission *s, finding_list *f);        /* TOO_FEW_SEEDS, SEED_DUPLICATE */
void rule_config(const submission *s, finding_list *f);       /* CONFIG_MISMATCH */
void rule_tokenizer(const submission *s, finding_list *f);    /* TOKENIZER_ACCOUNTING */
void rule_eval_selection(const submission *s, finding_list *f); /* EVAL_SELECTION */
void rule_log_code(const submission *s, finding_list *f);     /* LOG_CODE_MISMATCH */
void rule_overlap(const submission *s, finding_list *f);      /* TRAIN_VAL_OVERLAP, VAL_SPLIT_MISMATCH,
                                                                 VAL_BYTES_MISMATCH */
void rule_code(const submission *s, finding_list *f);         /* CODE_UNREADABLE */
void rule_byte_count(const submission *s, finding_list *f);   /* VAL_BYTES_CODE */
void rule_ngram_key(const submission *s, finding_list *f);    /* NGRAM_TARGET_KEY */
void rule_val_train(const submission *s, finding_list *f);    /* VAL_TRAIN_BEFORE_SCORE */
void rule_paid_prefix(const submission *s, finding_list *f);  /* VAL_PAID_PREFIX */

/* The GPUs a log's run used as a share of the challenge's 8, from the
 * world_size it prints (world_size:1 -> 0.125); 1 when it prints none or
 * 8 or more. A clock on fewer GPUs is no 8xH100 clock: at perfect scaling
 * 8 GPUs would take share x that time, and never less. */
double gpu_share(const pg_log *l);

/* Does a difference of hyperparameter key (value a in a log of seed
 * seed_a, b in one of seed_b) say nothing about training or evaluation: a
 * path, an id, a date, free text, a duration the run measured, or the
 * seed itself? (rule_config.c) */
int hparam_incidental(const char *key, const char *a, const char *b, int64_t seed_a,
                      int64_t seed_b);

#endif
