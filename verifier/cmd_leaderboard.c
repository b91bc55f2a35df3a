/* pgolf leaderboard RECORDS_DIR [--replays DIR] -o OUT/
 *
 * Every submission folder of a records/ tree checked in process, the
 * record track's records in date order each tested against the record it
 * displaced, and the pages: OUT/index.html, OUT/<folder>.html,
 * OUT/leaderboard.json, OUT/summary.md (verifier/leaderboard.h). */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/challenge.h"
#include "common/cli.h"
#include "common/error.h"
#include "common/fileio.h"
#include "common/json_read.h"
#include "common/verbs.h"
#include "verifier/leaderboard.h"

static const char USAGE[] = "pgolf leaderboard RECORDS_DIR [--replays DIR] -o OUT";
static const char ABOUT[] =
    "Checks every submission folder of RECORDS_DIR (records/<track>/<date>_<name>/, the\n"
    "challenge repository's layout) as `pgolf check` does, orders the record track\n"
    "by date and tests each record against the record it displaced: one-sided Welch\n"
    "with the 0.005-nat margin at p < 0.01 (the README's rule) and at zero margin at\n"
    "p < 0.25 (the maintainers' practice). Writes OUT/index.html (one self-contained\n"
    "page: the table, the chain, a chart of val_bpb over time), OUT/<folder>.html\n"
    "per folder, OUT/leaderboard.json (every number on the page) and OUT/summary.md.";
static const char FOOTER[] = "Exit: 0 written, 2 usage error or unreadable input.";

typedef struct lb_opts {
  const char *out, *replays;
  cli_args dirs;
} lb_opts;

static int parse_opts(int argc, char **argv, lb_opts *o, pg_error *err) {
  *o = (lb_opts){0};
  const cli_option opts[] = {
      CLI_STRING("output", 'o', &o->out, "OUT", "the folder to write (created if missing)"),
      CLI_STRING("replays", 0, &o->replays, "DIR",
                 "replay manifests (pgolf replay, pgolf/replay/v1) under DIR, joined\n"
                 "to the folders they name: replayed against claimed per seed, and\n"
                 "the reproduction test (REPRODUCTION_GAP)"),
      CLI_ARGS(&o->dirs, "RECORDS_DIR", NULL),
      CLI_END};
  const cli_command cmd = {
      .name = "leaderboard", .usage = USAGE, .about = ABOUT, .options = opts, .footer = FOOTER};
  int r = cli_parse(&cmd, argc, argv, err);
  if (r != CLI_OK) return r;
  if (o->dirs.n != 1) return cli_fail(err, &cmd, "give one RECORDS_DIR");
  if (!o->out) return cli_fail(err, &cmd, "-o is required (the folder to write)");
  return CLI_OK;
}

static int write_text(const char *dir, const char *name, char *text, pg_error *err) {
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!text) return pg_fail(err, path, -1, "out of memory");
  int rc = file_write_atomic(path, text, strlen(text), 0644, err);
  free(text);
  return rc;
}

static int write_json(const char *dir, json_t *j, pg_error *err) {
  char path[8192], *text = NULL;
  size_t len;
  snprintf(path, sizeof path, "%s/leaderboard.json", dir);
  if (!j) return pg_fail(err, path, -1, "out of memory");
  int rc = json_write_pretty(j, &text, &len, err);
  json_decref(j);
  if (!rc) rc = file_write_atomic(path, text, len, 0644, err);
  free(text);
  return rc;
}

static int write_all(const lb_opts *o, const leaderboard *lb, pg_error *err) {
  if (mkdir(o->out, 0755) != 0 && errno != EEXIST) return pg_fail_errno(err, o->out, "cannot create");
  for (size_t i = 0; i < lb->n_entries; i++) {
    const lb_entry *e = &lb->entries[i];
    char *page = leaderboard_folder_html(lb, i, err);
    if (!page || write_text(o->out, e->page, page, err)) return -1;
  }
  if (write_json(o->out, leaderboard_json(lb), err)) return -1;
  if (write_text(o->out, "summary.md", leaderboard_markdown(lb), err)) return -1;
  return write_text(o->out, "index.html", leaderboard_html(lb), err);
}

int cmd_leaderboard(int argc, char **argv) {
  lb_opts o;
  pg_error err = {0};
  int pr = parse_opts(argc, argv, &o, &err);
  if (pr != CLI_OK) return cli_status(pr, &err);
  /* One thread: submission_load parses a folder's logs in a parallel
   * region, and between sixty short regions the idle workers spin; on the
   * whole records/ tree that took 0.65-0.9 s of CPU and 2-4.5 s of wall
   * time on a busy 2-core machine, against 0.3 s and 0.8 s with one. */
  omp_set_num_threads(1);
  leaderboard lb;
  int rc = leaderboard_load(o.dirs.v[0], &lb, &err);
  if (!rc && o.replays) rc = leaderboard_add_replays(&lb, o.replays, &err);
  if (!rc) rc = write_all(&o, &lb, &err);
  if (rc) {
    leaderboard_free(&lb);
    pg_error_print(&err);
    return PG_EXIT_USAGE;
  }
  lb_counts c = leaderboard_counts(&lb);
  printf("pgolf leaderboard: %zu folders (%zu on the record track), %zu record-to-record steps:\n"
         "  README rule (%g nats, p < %g): %zu accepted; practice (p < %g): %zu accepted;\n"
         "  %zu not testable (one seed); %zu did not beat the standing one;\n"
         "  %zu folders with errors; wrote %s/index.html\n",
         lb.n_entries, c.records, c.steps, CHALLENGE_MARGIN_NATS, CHALLENGE_ALPHA, c.readme_pass,
         CHALLENGE_PRACTICE_ALPHA, c.practice_pass, c.untestable, c.not_displacing,
         c.folders_with_errors, o.out);
  leaderboard_free(&lb);
  return PG_EXIT_OK;
}
