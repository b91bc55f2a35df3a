/* pgolf leaderboard: every submission folder of a records/ tree (the
 * challenge repository's layout, records/<track>/<date>_<name>/), checked
 * in process as `pgolf check` checks one, and the record track's records
 * in date order, each tested against the record it displaced.
 *
 * Folders are checked by `pgolf verify`'s API (verifier/verify_report.h),
 * whose page of each folder is the leaderboard's OUT/<folder>.html.
 *
 * Folders. A folder of records/track_10min_16mb is on the record track, of
 * records/track_non_record_16mb on the non-record track (listed apart, no
 * time budget); a folder of any other subfolder is listed apart as
 * "other", checked with the track its submission.json or path gives. The
 * track of the first two is the one their place says, whatever
 * submission.json writes: the leaderboard judges a folder where it stands.
 *
 * Date. The submission.json "date" (its YYYY-MM-DD part), else the
 * folder name's YYYY-MM-DD prefix: the folder name is often the day work
 * began (2026-03-17_LoRA_TTT was submitted on 2026-03-19, as its
 * submission.json and the challenge's README say).
 *
 * The sample. A record's per-seed values are the final metrics of the runs
 * behind its claim (verifier/submission.h): the runs the claimed mean
 * averages, or the linked per-seed claims; when the claim is one run's
 * number, unsupported or absent, every run with a final metric (the
 * claim's line for its run, else the run's last final metric in file
 * order). One value per run: reruns and re-evaluations of a seed never
 * count twice. Tokens per byte come from the same lines
 * (val_bpb ln 2 / val_loss), as `pgolf stats` reads them.
 *
 * The chain. The record track's folders that have a date and a score (the
 * claimed val_bpb, else the sample's mean), ordered by date and, within a
 * day, by score from worst to best (a record beats those it displaced).
 * Each is compared with the standing record before it (the best score so
 * far): if its score is below, it displaced that record, and the step is
 * tested as `pgolf stats --new RECORD --record STANDING` tests it
 * (verifier/significance.h): Welch one-sided with the 0.005-nat margin
 * converted at the new record's own tokens per byte (the standing one's
 * when the new one's are unknown), and at zero margin; the README's rule
 * accepts at p < 0.01 with the margin, the maintainers' practice at
 * p < 0.25 without. A side with one seed cannot be tested; the step then
 * gives the seeds per side that 80% power would need at the observed
 * spread (the other side's sd, else the median sd of the track's records
 * that have two or more seeds). */
#ifndef PGOLF_LEADERBOARD_H
#define PGOLF_LEADERBOARD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "verifier/findings.h"
#include "verifier/reproduction.h"
#include "verifier/significance.h"

#define LB_TRACK_RECORD_DIR "track_10min_16mb"
#define LB_TRACK_NONRECORD_DIR "track_non_record_16mb"
#define LB_MAX_FOLDERS 4096

typedef enum lb_kind { LB_RECORD, LB_NONRECORD, LB_OTHER } lb_kind;

/* One value of a record's sample: a run's final metric. */
typedef struct lb_value {
  int64_t seed; /* -1 unknown */
  double val_bpb, val_loss;
  char *file; /* the log that prints it, relative to the folder */
  uint32_t line;
} lb_value;

/* A replay of a folder (a pgolf/replay/v1 manifest from --replays). */
typedef struct lb_replay {
  char *path;     /* the manifest */
  int64_t seed;   /* -1 unknown */
  double val_bpb; /* NAN: the replay printed no final metric */
  double claimed; /* the folder's sample value of this seed, NAN if none */
  char verdict[16];
  char *codes; /* error codes of the replay, comma-separated, "" if none */
} lb_replay;

typedef struct lb_entry {
  char *path;   /* RECORDS_DIR/<track>/<folder> */
  char *folder; /* the folder's name */
  char *track_dir;
  char *page;   /* its page under OUT: "<folder>.html", made unique */
  lb_kind kind;
  int unreadable; /* the folder could not be read at all: error holds why */
  char error[PG_ERR_MSG];

  char date[11]; /* YYYY-MM-DD, "" if none */
  const char *date_source; /* "submission.json", "folder name", "none" */
  char *name;    /* submission.json "name", else the folder name */
  int has_claim;
  double claim;
  const char *claim_key; /* "val_bpb" or the field read in its place */

  lb_value *values;
  size_t n_values;
  const char *sample_from; /* "claim" (the runs the claim rests on) or "runs" (every run) */
  size_t n_runs;   /* runs with a final metric, in the sample or not */
  size_t n_reruns; /* runs trained more than once (a seed rerun, several in one log) */
  double mean, sd, lo, hi; /* of the values; sd NAN below 2 values, all NAN for none */
  double tpb;             /* tokens per byte, NAN unless every value carries one */
  double score;           /* the claim, else the mean; NAN: not placed in the chain */

  double bytes; /* the largest artifact of the sample's runs, NAN if no log says */
  const char *bytes_from; /* "logged total", "model + counted code", "claimed bytes_total" */
  double train_s, eval_s; /* the longest of the sample's runs, NAN if no log says */

  int n_errors, n_warnings;
  char *error_codes, *warning_codes; /* distinct codes, comma-separated, "" if none */
  /* What `pgolf verify` finds (verifier/verify_report.h): the check the
   * fields above come from, the replays added by --replays, and the
   * folder's page; NULL if unreadable. */
  struct verify_result *verify;

  lb_replay *replays;
  size_t n_replays;
  int repro_tested;
  repro_result repro;
} lb_entry;

/* A record against the standing record before it. */
typedef struct lb_step {
  size_t rec;  /* index into leaderboard.entries */
  size_t prev; /* the standing record; LB_NONE for the first record */
  int displaces; /* rec's score is below prev's */
  int testable;  /* both sides have two or more values and a spread */
  char why[160]; /* why not testable ("" if it is) */
  double diff;   /* prev mean - rec mean (bpb) */
  double tpb, margin_bpb; /* margin_bpb NAN when tokens per byte are unknown */
  const char *tpb_from;   /* "new", "record" or "none" */
  significance sig;       /* testable */
  /* Untestable: seeds per side for 80% power at spread (-1: no number of
   * seeds, the difference is not above the margin). */
  double spread;
  const char *spread_from; /* "new", "record", "median of the track" */
  long seeds_readme, seeds_practice;
} lb_step;

#define LB_NONE ((size_t)-1)

typedef struct leaderboard {
  char *root;
  lb_entry *entries; /* record track in chain order, then the rest by track and name */
  size_t n_entries, cap_entries;
  lb_step *steps; /* one per record track entry placed in the chain, in order */
  size_t n_steps;
  double median_sd; /* of the record track's samples with 2+ values, NAN if none */
  char **skipped_replays; /* files under --replays that are not replay manifests */
  size_t n_skipped_replays, cap_skipped_replays;
} leaderboard;

/* Walk root (RECORDS_DIR: its subfolders are tracks, theirs submission
 * folders), check every folder, order them and build the chain. -1 (err)
 * only when root cannot be read or memory runs out; a folder that cannot
 * be read is an entry with unreadable set. */
int leaderboard_load(const char *root, leaderboard *lb, pg_error *err);
/* The chain of the record track (leaderboard_chain.c; called by
 * leaderboard_load). */
int leaderboard_chain(leaderboard *lb, pg_error *err);
/* Join the replay manifests under dir (recursively) to the folders by the
 * folder they name (leaderboard_replays.c). */
int leaderboard_add_replays(leaderboard *lb, const char *dir, pg_error *err);
void leaderboard_free(leaderboard *lb);

/* A replay manifest's text, for the join and its fuzz target: 1 if it is
 * a pgolf/replay/v1 manifest (*folder: the folder it names, malloc'd; r
 * filled, r->path and r->claimed left alone), 0 if it is JSON of another
 * kind or no JSON, -1 (err) if it says it is a replay manifest but its
 * fields are not. */
int lb_replay_parse(const char *text, size_t len, const char *name, lb_replay *r, char **folder,
                    pg_error *err);

/* Counts over the chain, for the page and the summary. */
typedef struct lb_counts {
  size_t records, steps, not_displacing, testable, untestable;
  size_t readme_pass, practice_pass, practice_only, neither;
  size_t folders_with_errors;
} lb_counts;
lb_counts leaderboard_counts(const leaderboard *lb);

/* Renderings (leaderboard_out.c, leaderboard_html.c): fresh strings or
 * objects, NULL when memory runs out. */
json_t *leaderboard_json(const leaderboard *lb);
char *leaderboard_markdown(const leaderboard *lb);
char *leaderboard_html(const leaderboard *lb);
/* The page of entry i (OUT/<folder>.html); see leaderboard_page.c. NULL
 * (err) when memory runs out. */
char *leaderboard_folder_html(const leaderboard *lb, size_t i, pg_error *err);

const char *lb_kind_name(lb_kind k);
/* Is code one of the comma-separated codes of list? */
int lb_codes_has(const char *list, const char *code);

#endif
