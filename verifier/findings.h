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

typedef struct finding {
  const char *code; /* a string literal, e.g. "SIZE_OVER_LIMIT" */
  severity sev;
  char *message;
  char *file;    /* path relative to the folder, NULL if none */
  uint32_t line; /* 1-based, 0 if none */
} finding;

typedef struct finding_list {
  finding *v;
  size_t n, cap;
  int oom; /* an allocation failed: the list is incomplete (reported as an error) */
} finding_list;

void findings_add(finding_list *f, const char *code, severity sev, const char *file,
                  uint32_t line, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
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
