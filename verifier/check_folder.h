/* The static check of one submission folder, in process: what `pgolf
 * check DIR [--against RECORD]` computes, for the verbs that build on it
 * (`pgolf check`, `pgolf verify`, `pgolf leaderboard`). */
#ifndef PGOLF_CHECK_FOLDER_H
#define PGOLF_CHECK_FOLDER_H

#include <jansson.h>

#include "common/error.h"
#include "verifier/check_significance.h"
#include "verifier/code_count.h"
#include "verifier/findings.h"
#include "verifier/shipped_text.h"
#include "verifier/submission.h"

typedef struct check_result {
  submission s;
  code_count cc;     /* s.counted points here */
  shipped_texts texts; /* s.texts points here when they loaded */
  finding_list f;    /* every rule's findings (and SIGNIFICANCE), sorted */
  check_sig sig;     /* with against only */
  int have_sig;
} check_result;

/* Load dir, count its code, run every rule and, when against is not NULL,
 * the significance test against that record. track < 0: inferred (see
 * SUBMISSION.md). -1 with err only when the folder or the record cannot
 * be read (exit 2 for the verbs); the folder's problems are findings.
 * On success the caller frees r with check_result_free; on failure
 * nothing is left to free. */
int check_folder(const char *dir, int track, const char *against, check_result *r,
                 pg_error *err);

/* `pgolf check --json`'s "summary": track, counts, claims, logs, runs,
 * counted code, and "significance" when it was tested. */
json_t *check_result_summary(const check_result *r);

void check_result_free(check_result *r);

/* --track's value: TRACK_RECORD for 10min (record, 10min_16mb),
 * TRACK_NONRECORD for nonrecord (non-record, non_record, non_record_16mb),
 * -1 for anything else. */
int check_parse_track(const char *name);

#endif
