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
void rule_log_code(const submission *s, finding_list *f);     /* LOG_CODE_MISMATCH */
void rule_overlap(const submission *s, finding_list *f);      /* TRAIN_VAL_OVERLAP, VAL_SPLIT_MISMATCH */
void rule_code(const submission *s, finding_list *f);         /* CODE_UNREADABLE */

/* Does a decimal claim c (written with c_dec digits after the point)
 * agree with a printed value v (v_dec digits)? They agree when they
 * differ by less than one unit in the last digit of the less precise of
 * the two, so both rounding and truncation by the submitter are accepted. */
int claim_agrees(double c, int c_dec, double v, int v_dec);
/* Digits after the point in the shortest decimal that reads back as x. */
int decimals_of(double x);

#endif
