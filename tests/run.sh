#!/bin/sh
# Run the whole suite against one build directory: every CMocka binary in
# BUILD/tests, then every end-to-end script in tests/e2e with PGOLF set to
# BUILD/pgolf. Prints per-file results and one closing line
#   tests: N passed, M failed, K skipped
# and exits non-zero if anything failed. A skipped test (one that needs a
# GPU on a machine without one) is counted apart with its reason, never as
# passed.
set -u
build=${1:-build/release}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
PGOLF="$here/$build/pgolf"
export PGOLF
# OpenMP threads that spin while waiting starve each other on a busy 2-core
# machine (a tiny training step went from 1.7 s to 11.6 s); results are
# bit-identical either way.
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
passed=0
failed=0
skipped=0
failed_files=""
failed_lines=""
skip_reasons=""

# record_failure FILE OUTPUT: prints OUTPUT whole, and keeps FILE's name and
# its first few failure lines for the closing summary.
record_failure() {
  failed_files="$failed_files $1"
  failed_lines="$failed_lines
$(printf '%s\n' "$2" | grep -E '^(\[  FAILED  \] [^0-9]|\[  ERROR   \]|FAIL )' | head -n 5 | sed "s|^|  $(basename "$1"): |")"
  printf '%s\n' "$2"
}

# report_line FILE PASSED FAILED SKIPPED START: one file's counts and its
# wall-clock seconds, so that a CI log says which files its minutes went to.
report_line() {
  secs=$(($(date +%s) - $5))
  if [ "$4" -ne 0 ]; then
    printf '%-40s %4d passed %4d failed %4d skipped %5d s\n' "$(basename "$1")" "$2" "$3" "$4" "$secs"
  else
    printf '%-40s %4d passed %4d failed %17d s\n' "$(basename "$1")" "$2" "$3" "$secs"
  fi
}

for t in "$build"/tests/test_*; do
  [ -x "$t" ] || continue
  t0=$(date +%s)
  out=$("$t" 2>&1)
  rc=$?
  p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' | awk '{s+=$1} END {print s+0}')
  f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' | awk '{s+=$1} END {print s+0}')
  k=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' | awk '{s+=$1} END {print s+0}')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # crashed before reporting
  if [ "$k" -ne 0 ]; then
    skipped=$((skipped + k))
    why=$(printf '%s\n' "$out" | sed -n 's/^skipped: //p' | sort -u | head -n 1)
    skip_reasons="$skip_reasons
  $(basename "$t"): $k skipped: $why"
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$f" -ne 0 ] && record_failure "$t" "$out"
  report_line "$t" "$p" "$f" "$k" "$t0"
done

# PGOLF_SOURCES_CHECKED=1 (make sanitize sets it, after make test in CI):
# the e2e files marked "# suite: sources" check the tree and its tools
# (nvcc's PTX and SASS, the layering, the GPU scripts against stand-ins),
# never the build under test, so a second suite would redo the same work
# (the CUDA static checks: a minute on two cores). They are named, not
# run, and counted neither passed nor skipped.
for t in tests/e2e/*.sh; do
  [ -f "$t" ] || continue
  case "$t" in */lib.sh) continue ;; esac
  if [ "${PGOLF_SOURCES_CHECKED:-0}" = 1 ] && grep -q '^# suite: sources' "$t"; then
    printf '%-40s not rerun: checks the sources, not this build\n' "$(basename "$t")"
    continue
  fi
  t0=$(date +%s)
  out=$(sh "$t" 2>&1)
  rc=$?
  p=$(printf '%s\n' "$out" | grep -c '^ok ' || true)
  f=$(printf '%s\n' "$out" | grep -c '^FAIL ' || true)
  k=$(printf '%s\n' "$out" | grep -c '^SKIP ' || true)
  if [ "$k" -ne 0 ]; then
    skipped=$((skipped + k))
    skip_reasons="$skip_reasons
$(printf '%s\n' "$out" | sed -n "s|^SKIP |  $(basename "$t"): |p")"
  fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$f" -ne 0 ] && record_failure "$t" "$out"
  report_line "$t" "$p" "$f" "$k" "$t0"
done

# Repeated here, next to the summary, because a CI log is often read from
# its tail: which checks failed, a few lines each, above them in full.
[ -n "$failed_files" ] && echo "failing:$failed_files$failed_lines"
[ -n "$skip_reasons" ] && echo "skipped (each with its reason):$skip_reasons"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
