# ci/gpu-stalls.sh on the CPU with a stand-in ncu (PROFILE_NCU): the
# profiled run is the baseline preset's, 2 steps, with the kernels, launch
# window and sections asked for; the raw page's launches are averaged per
# kernel (bare names), with the stall reasons as shares of their sum
# ("selected" left out, "n/a" cells skipped, the older ratio columns used
# where the pct ones are absent) and the busiest pipes largest first; the
# details and source pages are kept; without ncu, without a report, with
# a CSV lacking the duration, or with a count, preset or kernel regex it
# cannot use, it fails and says why.
# suite: sources (reads the tree and its tools, not the build: tests/run.sh)
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
cat >"$TMP/ncu" <<'SH'
#!/bin/sh
# Records its arguments; --export R writes R.ncu-rep (unless NO_REPORT=1);
# --import prints the planted raw CSV, or a line for the other pages
# (the source page fails when NO_SOURCE=1).
echo "$*" >>"$(dirname "$0")/ncu.args"
page=
while [ $# -gt 0 ]; do
  case $1 in
    --export) [ "${NO_REPORT:-0}" = 1 ] || : >"$2.ncu-rep"; shift ;;
    --page) page=$2; shift ;;
  esac
  shift
done
case $page in
  raw) cat "$(dirname "$0")/raw.csv" ;;
  details) echo '"ID","Section Name"' ;;
  source) [ "${NO_SOURCE:-0}" = 1 ] && { echo "no source in this report" >&2; exit 1; }; echo '"Address","Source"' ;;
esac
exit 0
SH
chmod +x "$TMP/ncu"
S=smsp__warp_issue_stalled P=.avg.pct_of_peak_sustained_active
cat >"$TMP/raw.csv" <<CSV
"ID","Kernel Name","gpu__time_duration.sum","launch__registers_per_thread","sm__warps_active$P","smsp__issue_active$P","${S}_long_scoreboard_per_warp_active.pct","${S}_barrier_per_warp_active.pct","${S}_math_pipe_throttle_per_warp_active.pct","${S}_selected_per_warp_active.pct","sm__pipe_fp64_cycles_active$P","sm__inst_executed_pipe_lsu$P","sm__pipe_tensor_op_hmma_cycles_active$P"
"","","usecond","register/thread","%","%","%","%","%","%","%","%","%"
"0","void attention_mma_forward_kernel<64, unsigned short>(float *, int)","3,000","128","24","30","50","20","10","40","70","10","20"
"1","void attention_mma_forward_kernel<64, unsigned short>(float *, int)","1,000","128","26","n/a","30","20","30","40","90","14","22"
"2","rmsnorm_backward_kernel","500","40","90","60","10","5","5","60","0","30","0"
CSV
st() { (cd "$HERE" && env PROFILE_NCU="$TMP/ncu" STALLS_OUT="$TMP/s" "$@" sh ci/gpu-stalls.sh >"$TMP/out" 2>"$TMP/err"); }

st STALLS_SKIP=3 STALLS_COUNT=9
rc=$?
# forward: 2 launches, mean 2,000 us; issue 30% (the n/a skipped); waits
# long_scoreboard 40, barrier 20, math_pipe_throttle 20 of 80: 50/25/25%;
# pipes fp64 80, tensor 21, lsu 12.
want="attention_mma_forward_kernel: 2 launches, mean 2,000.0 us, 128 registers, warps resident 25.0% of the SM's maximum
  issuing: 30.0% of a scheduler's cycles
  waiting for: long_scoreboard 50%, barrier 25%, math_pipe_throttle 25%
  pipes busy: fp64 cycles 80%, tensor_op_hmma cycles 21%, lsu inst 12%
rmsnorm_backward_kernel: 1 launches, mean 500.0 us, 40 registers, warps resident 90.0% of the SM's maximum
  issuing: 60.0% of a scheduler's cycles
  waiting for: long_scoreboard 50%, barrier 25%, math_pipe_throttle 25%
  pipes busy: lsu inst 30%, fp64 cycles 0%, tensor_op_hmma cycles 0%"
if [ "$rc" -eq 0 ] && [ "$(cat "$TMP/out")" = "$want" ]; then
  ok gpu-stalls-per-kernel-shares
else
  fail gpu-stalls-per-kernel-shares "exit $rc: $(cat "$TMP/out" "$TMP/err" | head -c 900)"
fi
args=$(head -n 1 "$TMP/ncu.args")
case $args in
  *"--kernel-name regex:attention_mma_|q_gain_dg|rmsnorm_backward --launch-skip 3 --launch-count 9 "*"--section WarpStateStats"*"--section SourceCounters"*"./pgolf train --config $TMP/s/config.json"*"--device cuda --stop-after 2"*)
    grep -q '"preset": "baseline", "precision": "mixed", "val_loss_every": 0' "$TMP/s/config.json" &&
      [ -s "$TMP/s/details.csv" ] && [ "$(gzip -dc "$TMP/s/source.csv.gz")" = '"Address","Source"' ] &&
      ok gpu-stalls-runs-the-baseline-window || fail gpu-stalls-runs-the-baseline-window "$(cat "$TMP/s/config.json"; ls "$TMP/s")" ;;
  *) fail gpu-stalls-runs-the-baseline-window "ncu was run as: $args" ;;
esac

# The older ratio columns, where the pct ones are absent: the same shares.
sed -e 's/smsp__warp_issue_stalled_\([a-z_]*\)_per_warp_active\.pct/smsp__average_warps_issue_stalled_\1_per_issue_active.ratio/g' \
  "$TMP/raw.csv" >"$TMP/raw2.csv"
python3 "$HERE/ci/gpu_stalls_table.py" "$TMP/raw2.csv" 2 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] && grep -qx '  waiting for: long_scoreboard 50%, barrier 25%' "$TMP/out" &&
  ok gpu-stalls-ratio-columns || fail gpu-stalls-ratio-columns "exit $rc: $(cat "$TMP/out" "$TMP/err" | head -c 600)"

# The sampled counts (SourceCounters), where neither is there; their
# _not_issued twins are left out.
sed -e 's/smsp__warp_issue_stalled_\([a-z_]*\)_per_warp_active\.pct/smsp__pcsamp_warps_issue_stalled_\1/g' \
  -e 's/"ID",/"smsp__pcsamp_warps_issue_stalled_barrier_not_issued","ID",/' -e 's/^"\([0-9]\)",/"1000","\1",/' \
  -e 's/^"",/"","",/' "$TMP/raw.csv" >"$TMP/raw2.csv"
python3 "$HERE/ci/gpu_stalls_table.py" "$TMP/raw2.csv" 3 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] && grep -qx '  waiting for: long_scoreboard 50%, barrier 25%, math_pipe_throttle 25%' "$TMP/out" &&
  ok gpu-stalls-sampled-columns || fail gpu-stalls-sampled-columns "exit $rc: $(cat "$TMP/out" "$TMP/err" | head -c 600)"

# A source page ncu cannot print is noted; the table still comes.
: >"$TMP/ncu.args"
st NO_SOURCE=1
rc=$?
[ "$rc" -eq 0 ] && grep -q "no source page: no source in this report" "$TMP/err" && grep -q "^rmsnorm_backward_kernel" "$TMP/out" &&
  ok gpu-stalls-source-page-optional || fail gpu-stalls-source-page-optional "exit $rc: $(cat "$TMP/err")"

# Without the sections' columns: the launches and "-" for the rest.
printf '"ID","Kernel Name","gpu__time_duration.sum"\n"","","msecond"\n"0","k","2"\n' >"$TMP/raw3.csv"
python3 "$HERE/ci/gpu_stalls_table.py" "$TMP/raw3.csv" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] && grep -qx "k: 1 launches, mean 2,000.0 us, - registers, warps resident -% of the SM's maximum" "$TMP/out" &&
  grep -qx "  waiting for: -" "$TMP/out" && grep -qx "(no stall columns among the report's 1 metrics: gpu__time_duration.sum)" "$TMP/out" &&
  ok gpu-stalls-missing-columns-dashed ||
  fail gpu-stalls-missing-columns-dashed "exit $rc: $(cat "$TMP/out" "$TMP/err")"

printf '"ID","Kernel Name","sm__warps_active%s"\n"0","k","3"\n' "$P" >"$TMP/raw.csv"
st
rc=$?
[ "$rc" -eq 1 ] && grep -q "no 'Kernel Name' and 'gpu__time_duration.sum' columns (metrics: sm__warps_active$P)" "$TMP/err" &&
  ok gpu-stalls-bad-csv-fails || fail gpu-stalls-bad-csv-fails "exit $rc: $(cat "$TMP/err")"
printf '"ID","Kernel Name","gpu__time_duration.sum"\n"","","msecond"\n"0","k","soon"\n' >"$TMP/raw.csv"
st
rc=$?
[ "$rc" -eq 1 ] && grep -q "raw.csv:3: the duration 'soon' is not a number" "$TMP/err" &&
  ok gpu-stalls-bad-duration-fails || fail gpu-stalls-bad-duration-fails "exit $rc: $(cat "$TMP/err")"
st PROFILE_NCU=/nonexistent/ncu
rc=$?
[ "$rc" -eq 2 ] && grep -q "no ncu" "$TMP/err" && ok gpu-stalls-without-ncu-refused ||
  fail gpu-stalls-without-ncu-refused "exit $rc: $(cat "$TMP/err")"
st NO_REPORT=1
rc=$?
[ "$rc" -eq 1 ] && grep -q "ncu wrote no report" "$TMP/err" && ok gpu-stalls-without-report-fails ||
  fail gpu-stalls-without-report-fails "exit $rc: $(cat "$TMP/err")"
st STALLS_COUNT=x
rc=$?
[ "$rc" -eq 2 ] && grep -q "whole numbers" "$TMP/err" && ok gpu-stalls-bad-count-refused ||
  fail gpu-stalls-bad-count-refused "exit $rc: $(cat "$TMP/err")"
st STALLS_KERNELS='attention"; rm -rf /'
rc=$?
[ "$rc" -eq 2 ] && grep -q "is not a regex of names" "$TMP/err" && ok gpu-stalls-bad-regex-refused ||
  fail gpu-stalls-bad-regex-refused "exit $rc: $(cat "$TMP/err")"
(cd "$HERE" && env PROFILE_NCU="$TMP/ncu" STALLS_OUT="$TMP/s" sh ci/gpu-stalls.sh 'base line' >"$TMP/out" 2>"$TMP/err")
rc=$?
[ "$rc" -eq 2 ] && grep -q "no preset name" "$TMP/err" && ok gpu-stalls-bad-preset-refused ||
  fail gpu-stalls-bad-preset-refused "exit $rc: $(cat "$TMP/err")"
