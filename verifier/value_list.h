/* Comma-separated lists of numbers from the command line
 * ("1.0808,1.0810,1.0812"), validated item by item. */
#ifndef PGOLF_VALUE_LIST_H
#define PGOLF_VALUE_LIST_H

#include <stddef.h>

#include "common/error.h"

/* Parse text into a fresh array (*out, caller frees; *out is NULL on error).
 * Items may carry surrounding blanks; an empty item, text that is not
 * entirely one number, and NaN or infinity are errors naming `option` and
 * the 1-based item. */
int parse_value_list(const char *text, const char *option, double **out, size_t *n,
                     pg_error *err);

#endif
