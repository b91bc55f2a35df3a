/* `pgolf check --against RECORD`: the folder's seeds against the previous
 * record under the README's rule and the maintainers' practice
 * (verifier/significance.h), as SIGNIFICANCE findings and a summary. */
#ifndef PGOLF_CHECK_SIGNIFICANCE_H
#define PGOLF_CHECK_SIGNIFICANCE_H

#include <jansson.h>
#include <stdio.h>

#include "verifier/findings.h"
#include "verifier/significance.h"
#include "verifier/submission.h"

typedef struct check_sig {
  char against[1024];
  int computed;
  sample_summary s_new, s_rec;
  significance sig;
} check_sig;

/* -1 (err) when RECORD cannot be read (a usage error); the folder's own
 * problems (too few seeds) become a SIGNIFICANCE warning. */
int check_significance(const submission *s, const char *against, finding_list *f, check_sig *out,
                       pg_error *err);
void check_significance_print(FILE *out, const check_sig *c);
json_t *check_significance_json(const check_sig *c);

#endif
