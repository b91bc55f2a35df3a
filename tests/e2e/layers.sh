#!/bin/sh
# The include order of the parts (ci/layers.sh): the tree obeys it, and the
# check catches an include of a part above, but not one below or an
# allowed re-run.
# suite: sources (reads the tree and its tools, not the build: tests/run.sh)
. "$(dirname "$0")/lib.sh"

if out=$(sh ci/layers.sh . 2>&1); then ok "no part includes a part above it"; else
  fail "no part includes a part above it" "$out"
fi

mk() { mkdir -p "$TMP/t/$(dirname "$1")"; printf '%s\n' "$2" >"$TMP/t/$1"; }
mk common/a.h '#include "common/b.h"'
mk formats/f.c '#include "common/a.h"'
mk trainer/t.c '#include "kernels/k.h"'
mk verifier/replay_run.c '#include "trainer/train.h"'
if sh ci/layers.sh "$TMP/t" >"$TMP/out" 2>&1; then ok "downward includes and the allowed re-run pass"; else
  fail "downward includes and the allowed re-run pass" "$(cat "$TMP/out")"
fi

mk formats/shard.c '#include "trainer/loader.h"'
mk verifier/rule_x.c '  #  include "trainer/train.h"'
sh ci/layers.sh "$TMP/t" >"$TMP/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^formats/shard.c:1: formats includes trainer' "$TMP/out" &&
   grep -q '^verifier/rule_x.c:1: verifier includes trainer' "$TMP/out"; then
  ok "an upward include is caught with its file and line"
else
  fail "an upward include is caught with its file and line" "exit $rc: $(cat "$TMP/out")"
fi
