/* What `pgolf check` reports: findings, each with a stable code, a
 * severity, a message and, where it applies, the file and line it is
 * about. A folder passes iff it has no error. */
#ifndef PGOLF_FINDINGS_H
#define PGOLF_FINDINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

typedef enum severity { SEV_ERROR, SEV_WARNING } severity;

/* One file a finding covers. */
typedef struct finding_loc {
  char *file;
  uint32_t line;
  char *detail; /* what this file shows; may be empty */
} finding_loc;

typedef struct finding {
  const char *code; /* a string literal, e.g. "SIZE_OVER_LIMIT" */
  severity sev;
  char *message;
  char *file;    /* path relative to the folder, NULL if none (the first file of a group) */
  uint32_t line; /* 1-based, 0 if none */
  char *head;    /* a grouped finding's shared text (see findings_group), else NULL */
  finding_loc *locs; /* a grouped finding: every file it covers, in the order added */
  size_t n_locs;
} finding;

typedef struct finding_list {
  finding *v;
  size_t n, cap;
  int oom; /* an allocation failed: the list is incomplete (reported as an error) */
} finding_list;

void findings_add(finding_list *f, const char *code, severity sev, const char *file,
                  uint32_t line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* One finding per root cause: the first call with a given code, severity
 * and head starts a finding; later calls add their file to it. The message
 * is the head, then each file's own detail (fmt) and place, e.g. "GPTQ
 * calibration past 600 s: until 603.1 s (a.log:170); until 603.0 s
 * (b.log:170)"; a file and line already in the finding is not added again. Past
 * FINDINGS_GROUP_SHOWN files the rest are counted, not listed. */
#define FINDINGS_GROUP_SHOWN 12
void findings_group(finding_list *f, const char *code, severity sev, const char *head,
                    const char *file, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
/* Errors first; within a severity, the order they were found in. */
void findings_sort(finding_list *f);
size_t findings_count(const finding_list *f, severity sev);
/* Does the list hold a finding with this code (any severity)? */
int findings_has(const finding_list *f, const char *code);
void findings_free(finding_list *f);

/* {"folder":...,"verdict":"pass"|"fail","findings":[...],"summary":summary}
 * (summary is stolen; NULL gives {}). */
json_t *findings_json(const char *folder, const finding_list *f, json_t *summary);
/* One table: a header line with the verdict, then one row per finding. */
void findings_print_table(FILE *out, const char *folder, const finding_list *f);

const char *severity_name(severity s);

#endif
