/* Finding the event log a dump's audit reads (audit.h, audit_log_load):
 * --manifest when given, else the file pgolf eval writes beside the dump
 * (manifests/eval_chain.h, DUMP.events.json). */
#include "verifier/audit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What C3 is told when the dump records a chain head but no log was
 * found: the evaluator kept one, the audit does not have it. */
static void say_missing(const score_dump *d, const char *looked_at, audit_log *lg) {
  char head[SHA256_HEX_LEN + 1];
  sha256_hex(d->chain_head, head);
  snprintf(lg->missing, sizeof lg->missing, "the dump records event chain head %s, so its "
           "evaluator kept an event log, but there is none at %s: pass the log with --manifest "
           "FILE (pgolf eval writes it there unless --events names another file)", head,
           looked_at);
}

int audit_log_load(const char *dump_path, const score_dump *d, const char *manifest,
                   audit_log *lg, pg_error *err) {
  memset(lg, 0, sizeof *lg);
  lg->is_default = manifest == NULL;
  lg->path = manifest ? strdup(manifest) : eval_events_default_path(dump_path);
  if (!lg->path) return pg_fail(err, dump_path, -1, "out of memory");
  struct stat st;
  if (lg->is_default && stat(lg->path, &st) != 0) {
    if (errno != ENOENT) return pg_fail_errno(err, lg->path, "cannot look for the event log");
    if (d->has_chain) say_missing(d, lg->path, lg);
    return 0;
  }
  if (eval_events_load(lg->path, &lg->events, err)) return -1;
  lg->found = 1;
  return 0;
}

void audit_log_free(audit_log *lg) {
  if (lg->found) eval_events_free(&lg->events);
  free(lg->path);
  memset(lg, 0, sizeof *lg);
}
