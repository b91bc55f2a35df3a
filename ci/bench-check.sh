#!/bin/sh
# Time of `pgolf check` on one submission folder holding three seed logs
# of 30,000 lines each (challenge format: a step line per training step,
# hyperparameters, sizes, final metrics), best of 5 runs, warm page cache.
# Prints ms per folder (target: well under 50 ms) and, as the baseline
# measured in the same run, the ratio to `wc -l` reading the same logs.
#   sh ci/bench-check.sh      (after `make pgolf`; called by `make bench`)
# Environment: PGOLF (default ./pgolf), BENCH_LINES per log (default 30000),
# BENCH_RUNS (default 5), TMPDIR.
set -eu
pgolf=${PGOLF:-./pgolf}
lines=${BENCH_LINES:-30000}
runs=${BENCH_RUNS:-5}
target=50

[ -x "$pgolf" ] || { echo "bench: $pgolf not built (run make pgolf)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-bench-check.XXXXXX")
trap '[ -n "${BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
d=$tmp/folder
mkdir -p "$d"
printf '# bench\n' >"$d/README.md"
printf 'print("train")\n' >"$d/train_gpt.py"

# One log: hyperparameters, LINES-40 training steps of 19.99 ms with a
# validation line every 1000 steps, the stop, sizes and final metrics.
for seed in 1 2 3; do
  awk -v seed=$seed -v n=$((lines - 40)) 'BEGIN {
    print "Hyperparameters:"
    for (k = 0; k < 20; k++) printf "  key_%d: %d\n", k, k
    printf "  seed: %d\n", seed
    for (i = 1; i <= n; i++) {
      printf "step:%d/%d train_loss:%.4f train_time:%dms step_avg:19.99ms\n", i, n, 2 + 1 / i, int(i * 19.99)
      if (i % 1000 == 0) printf "step:%d/%d val_loss:2.1000 val_bpb:1.2400 train_time:%dms step_avg:19.99ms\n", i, n, int(i * 19.99)
    }
    printf "stopping_early: wallclock_cap train_time:%dms step:%d/%d\n", int(n * 19.99), n, n
    print "Serialized model: 67224983 bytes"
    print "Code size: 47642 bytes"
    print "Serialized model int8+zlib: 15815847 bytes"
    print "Total submission size int8+zlib: 15863489 bytes"
    print "final_int8_zlib_roundtrip val_loss:2.0727 val_bpb:1.2244 eval_time:1401ms"
    print "final_int8_zlib_roundtrip_exact val_loss:2.07269931 val_bpb:1.22436570"
  }' >"$d/train_seed$seed.log"
done
cat >"$d/submission.json" <<JSON
{"author": "bench", "github_id": "bench", "name": "bench", "date": "2026-01-01",
 "val_bpb": 1.2243657, "bytes_total": 15863489, "bytes_code": 47642}
JSON
echo "bench: folder with 3 logs of $(wc -l <"$d/train_seed1.log") lines ($(cat "$d"/*.log | wc -c) bytes)"

now_ns() { date +%s%N; }
best_check= best_wc=
i=0
while [ "$i" -lt "$runs" ]; do
  t0=$(now_ns); "$pgolf" check --json "$d" >/dev/null || { echo "bench: check failed" >&2; "$pgolf" check "$d"; exit 1; }
  t1=$(now_ns); wc -l "$d"/*.log >/dev/null; t2=$(now_ns)
  c=$(( (t1 - t0) / 1000 )) w=$(( (t2 - t1) / 1000 ))
  [ -z "$best_check" ] || [ "$c" -lt "$best_check" ] && best_check=$c
  [ -z "$best_wc" ] || [ "$w" -lt "$best_wc" ] && best_wc=$w
  i=$((i + 1))
done
awk -v c="$best_check" -v w="$best_wc" -v t=$target 'BEGIN {
  printf "check: %.1f ms per folder (best of runs; target < %d ms)\n", c / 1000, t
  printf "wc -l on the same logs: %.1f ms; ratio check/wc %.1f\n", w / 1000, c / (w > 0 ? w : 1)
  if (c / 1000 >= t) print "check: target missed (wall time: a loaded machine inflates it)" }'
