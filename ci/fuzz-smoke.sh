#!/bin/sh
# Run each libFuzzer target for SECONDS on a scratch copy of its seed
# corpus (tests/fuzz/corpus/NAME/, if any), FUZZ_JOBS targets at a time
# (default 2: each target fuzzes on one core, so two cores run two).
# Fails if any target finds a failure, with that target's log.
#   sh ci/fuzz-smoke.sh SECONDS build/fuzz/fuzz_a build/fuzz/fuzz_b ...
set -eu
secs=$1
shift
jobs=${FUZZ_JOBS:-2}
work=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

# fuzz_one BIN: one target's run, its log in $work/NAME.log and its exit
# status in $work/NAME.rc.
fuzz_one() {
  name=$(basename "$1")
  mkdir -p "$work/$name"
  [ -d "tests/fuzz/corpus/$name" ] && cp -R "tests/fuzz/corpus/$name/." "$work/$name/"
  rc=0
  "$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$work/$name-" "$work/$name" >"$work/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$name.rc"
}

# report BIN: what one finished target did; returns 1 on a finding.
report() {
  name=$(basename "$1")
  echo "fuzz-smoke: $name for ${secs}s"
  if [ "$(cat "$work/$name.rc")" != 0 ]; then
    tail -n 40 "$work/$name.log"
    echo "fuzz-smoke: $name found a failure" >&2
    return 1
  fi
  grep -E '^Done [0-9]+ runs' "$work/$name.log" || tail -n 1 "$work/$name.log"
}

bad=0
n=$#
while [ $# -gt 0 ]; do
  batch=""
  i=0
  while [ $# -gt 0 ] && [ "$i" -lt "$jobs" ]; do
    fuzz_one "$1" &
    batch="$batch $1"
    shift
    i=$((i + 1))
  done
  wait
  for bin in $batch; do report "$bin" || bad=1; done
  [ "$bad" = 0 ] || exit 1
done
echo "fuzz-smoke: $n targets, no findings"
