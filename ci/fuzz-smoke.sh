#!/bin/sh
# Run each libFuzzer target for SECONDS on a scratch copy of its seed
# corpus (tests/fuzz/corpus/NAME/, if any). Fails on the first finding.
#   sh ci/fuzz-smoke.sh SECONDS build/fuzz/fuzz_a build/fuzz/fuzz_b ...
set -eu
secs=$1
shift
work=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
for bin in "$@"; do
  name=$(basename "$bin")
  mkdir -p "$work/$name"
  [ -d "tests/fuzz/corpus/$name" ] && cp -R "tests/fuzz/corpus/$name/." "$work/$name/"
  echo "fuzz-smoke: $name for ${secs}s"
  if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$work/$name-" "$work/$name" >"$work/$name.log" 2>&1; then
    tail -n 40 "$work/$name.log"
    echo "fuzz-smoke: $name found a failure" >&2
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$work/$name.log" || tail -n 1 "$work/$name.log"
done
echo "fuzz-smoke: $# targets, no findings"
