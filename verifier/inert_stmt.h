/* Python statements that change no number a run computes, for comparing a
 * log's copy of its script with the shipped one (verifier/log_code.c).
 *
 * A log whose copy differs from the shipped script only in the text of a
 * log line (`log0(f"final_int8_zlib_roundtrip_exact ...")` against
 * `log0(f"final_int6_roundtrip_exact ...")`, PR #175) or in an assignment
 * that nothing reads was still written by code that computes what the
 * shipped code computes. Two kinds, read from the normalized statements
 * of verifier/pysrc.h:
 *
 *   - a call statement to a printing function (INERT_PRINTERS: print,
 *     log0, logger.info, ...), whose arguments' values are only printed;
 *   - `NAME = EXPR` where NAME is read nowhere else in its script and EXPR
 *     calls only builtins without side effects (INERT_PURE: set, range,
 *     len, max, ...): no random state advances, nothing is written;
 *   - an import whose names no other statement mentions, and an import
 *     guard: `try:` around imports (and flags set to constants), its
 *     `except ImportError` (ModuleNotFoundError, Exception, or bare)
 *     clauses setting names to None, False or True (PR #172 wrapped its
 *     `from muon_t3 import ...` so after the run). A run that printed its
 *     log got past its imports, so a guard around one changes nothing it
 *     computes; a fallback that imports or computes something else is
 *     code, and so is every use of a guarded name that differs.
 *
 * The tests are of the text, so a printing call whose argument does work
 * (`log0(f"{evaluate(model)}")`) counts as printing: a limit of reading
 * text, accepted because the finding stays a warning that names the
 * statement, for a reviewer to read. */
#ifndef PGOLF_INERT_STMT_H
#define PGOLF_INERT_STMT_H

#include <stddef.h>

#include "verifier/pysrc.h"

/* 1 if s is a call statement to a printing function. */
int inert_prints(const py_stmt *s);

/* 1 if a and b are calls to the same printing function that differ only
 * inside string literals (what they print, not what they compute). */
int inert_same_print(const py_stmt *a, const py_stmt *b);

/* 1 if a and b raise the same exception with other text in its message
 * (PR #1846 renamed its run in `raise ValueError(f"... requires
 * WORLD_SIZE=8 ...")`): a run that raised ended without a score either
 * way. */
int inert_same_raise(const py_stmt *a, const py_stmt *b);

/* 1 if statement i of src assigns, from builtins without side effects, a
 * plain name that no other statement of src mentions. */
int inert_dead_assignment(const py_src *src, size_t i);

/* 1 if statement i of src is an import whose names no other statement
 * mentions, or a part of an import guard (the `try`, an import in it, a
 * clause catching the import's failure, a constant it sets, `pass`). */
int inert_import(const py_src *src, size_t i);

#endif
