#!/bin/sh
# Throughput of `pgolf hash --jobs 2` against GNU sha256sum on the same
# files, warm page cache, best of 3 runs each (runs interleaved, so a
# noisy moment hits both tools alike). Prints MB/s (10^6 bytes/s) and the
# ratio pgolf/sha256sum; the target on a 2-core machine is >= 1.8.
#   sh ci/bench.sh            (after `make pgolf`; called by `make bench`)
# Environment: PGOLF (default ./pgolf), BENCH_MIB per file (default 256),
# BENCH_FILES (default 4), BENCH_JOBS (default 2), TMPDIR.
set -eu
pgolf=${PGOLF:-./pgolf}
mib=${BENCH_MIB:-256}
nfiles=${BENCH_FILES:-4}
jobs=${BENCH_JOBS:-2}
target=1.8

[ -x "$pgolf" ] || { echo "bench: $pgolf not built (run make pgolf)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "bench: writing $nfiles files of $mib MiB of random data in $tmp"
files=""
i=1
while [ "$i" -le "$nfiles" ]; do
  f="$tmp/rand$i.bin"
  # Random data so no layer below can shortcut (compression, zero pages).
  if command -v openssl >/dev/null 2>&1; then
    openssl rand -out "$f" $((mib * 1048576))
  else
    head -c $((mib * 1048576)) /dev/urandom >"$f"
  fi
  files="$files $f"
  i=$((i + 1))
done
total_bytes=$((nfiles * mib * 1048576))

# Read once so both tools hash from the page cache, not the disk.
# shellcheck disable=SC2086
cat $files >/dev/null

now() { date +%s.%N; }
# elapsed CMD...: run CMD (stdout to $tmp/last.out) and print its seconds.
elapsed() {
  t0=$(now)
  "$@" >"$tmp/last.out"
  t1=$(now)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }

best_sum=999999
best_pg=999999
for round in 1 2 3; do
  # shellcheck disable=SC2086
  t=$(elapsed sha256sum $files)
  mv "$tmp/last.out" "$tmp/want.out"
  best_sum=$(min "$best_sum" "$t")
  # shellcheck disable=SC2086
  t=$(elapsed "$pgolf" hash --jobs "$jobs" $files)
  best_pg=$(min "$best_pg" "$t")
  if ! cmp -s "$tmp/want.out" "$tmp/last.out"; then
    echo "bench: pgolf hash output differs from sha256sum (round $round)" >&2
    exit 1
  fi
  echo "bench: round $round done"
done

awk -v bytes="$total_bytes" -v ts="$best_sum" -v tp="$best_pg" -v jobs="$jobs" \
    -v target="$target" -v n="$nfiles" -v mib="$mib" 'BEGIN {
  ms = bytes / ts / 1e6; mp = bytes / tp / 1e6; r = mp / ms
  printf "\n%d files x %d MiB, warm cache, best of 3\n", n, mib
  printf "%-26s %10s %10s\n", "tool", "seconds", "MB/s"
  printf "%-26s %10.3f %10.1f\n", "sha256sum", ts, ms
  printf "%-26s %10.3f %10.1f\n", "pgolf hash --jobs " jobs, tp, mp
  printf "ratio pgolf/sha256sum: %.2f (target >= %.1f: %s)\n", r, target, ((r >= target) ? "met" : "NOT met")
}'
