# ci/gpu-profile.sh on the CPU with a stand-in ncu (PROFILE_NCU): the
# profiled run is the baseline preset's, stopped after 2 steps, with the
# launch window asked for; the import's launches are summed per kernel,
# the most time first, in the unit of the units row, with each kernel's
# commonest grid and block, and the attention kernels' throughput from
# their grids (CUDA cores and tensor cores), and with PROFILE_BYTES=1
# each kernel's DRAM bytes and rate; without ncu, without
# a report, or with a CSV lacking the columns, it fails and says why; a
# launch count or preset name it cannot use is refused.
# suite: sources (reads the tree and its tools, not the build: tests/run.sh)
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
cat >"$TMP/ncu" <<'SH'
#!/bin/sh
# Records its arguments; --export R writes R.ncu-rep (unless NO_REPORT=1);
# --import prints the planted CSV.
echo "$*" >>"$(dirname "$0")/ncu.args"
while [ $# -gt 0 ]; do
  case $1 in
    --export) [ "${NO_REPORT:-0}" = 1 ] || : >"$2.ncu-rep"; shift ;;
    --import) cat "$(dirname "$0")/raw.csv"; exit 0 ;;
  esac
  shift
done
exit 0
SH
chmod +x "$TMP/ncu"
cat >"$TMP/raw.csv" <<'CSV'
"ID","Process ID","Process Name","Kernel Name","Block Size","Grid Size","gpu__time_duration.sum"
"","","","","","","msecond"
"0","7","pgolf","attention_dq_kernel","(256, 1, 1)","(64, 8, 64)","40.5"
"1","7","pgolf","rmsnorm_forward_kernel","(256, 1, 1)","(512, 1, 1)","0.25"
"2","7","pgolf","attention_dq_kernel","(256, 1, 1)","(64, 8, 64)","39.5"
"3","7","pgolf","nvjet_sm90_tst_256x128","(384, 1, 1)","(32, 1, 1)","1,019.75"
"4","7","pgolf","void attention_mma_dkv_kernel<64>(float *, float *, const float *)","(128, 1, 1)","(16, 4, 64)","10"
CSV
prof() { (cd "$HERE" && env PROFILE_NCU="$TMP/ncu" PROFILE_OUT="$TMP/p" "$@" sh ci/gpu-profile.sh >"$TMP/out" 2>"$TMP/err"); }

prof PROFILE_SKIP=7 PROFILE_COUNT=11
rc=$?
first=$(sed -n 2p "$TMP/out" | awk '{ print $1, $2, $3 }')
second=$(sed -n 3p "$TMP/out" | awk '{ print $1, $2, $3, $5, $6 }')
total=$(awk '$1 == "total" { print $2, $3 }' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "$first" = "nvjet_sm90_tst_256x128 1 1019.75" ] &&
   [ "$second" = "attention_dq_kernel 2 80.00 40000.0 (64,8,64)x(256,1,1)" ] && [ "$total" = "5 1110.00" ]; then
  ok gpu-profile-sums-per-kernel-most-first
else
  fail gpu-profile-sums-per-kernel-most-first "exit $rc: $(cat "$TMP/out" "$TMP/err" | head -c 600)"
fi
# The baseline's attention model (docs/GPU-RUNS.md): two dq launches of
# grid (64, 8, 64) are 2 x 64 x 8 x 524,800 pairs x 3 x 128 flops,
# 0.206 TFLOP in 80 ms.
# The tensor-core dkv launch, named as ncu names a template's instance:
# 64 x 8 x 524,800 pairs (grid (16, 4, 64): T = 64 x 16, 4 KV heads of
# group 2) x 4 x 128 flops, 0.138 TFLOP in 10 ms, against 989 TFLOP/s.
att=$(awk '$1 == "attention_dq_kernel" && $3 == "TFLOP" { print $2, $4, $6 }' "$TMP/out")
mma=$(awk '$1 == "attention_mma_dkv_kernel" && $3 == "TFLOP" { print $2, $4, $6, $8 }' "$TMP/out")
if [ "$att" = "0.206 2.58 3.8%" ] && [ "$mma" = "0.138 13.76 1.4% 989" ] && ! grep -q '^  nvjet' "$TMP/out"; then
  ok gpu-profile-attention-throughput
else
  fail gpu-profile-attention-throughput "got '$att', '$mma': $(tail -n 4 "$TMP/out")"
fi
python3 "$HERE/ci/gpu_profile_table.py" "$TMP/raw.csv" --attention 2,64,bf16 >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "wants GROUP,HEAD_DIM" "$TMP/err" && ok gpu-profile-bad-attention-refused ||
  fail gpu-profile-bad-attention-refused "exit $rc: $(cat "$TMP/err")"
args=$(head -n 1 "$TMP/ncu.args")
case $args in
  *"--launch-skip 7 --launch-count 11 "*"./pgolf train --config $TMP/p/config.json"*"--device cuda --stop-after 2"*)
    grep -q '"preset": "baseline", "precision": "mixed", "val_loss_every": 0' "$TMP/p/config.json" &&
      ok gpu-profile-runs-the-baseline-window || fail gpu-profile-runs-the-baseline-window "$(cat "$TMP/p/config.json")" ;;
  *) fail gpu-profile-runs-the-baseline-window "ncu was run as: $args" ;;
esac

prof PROFILE_NCU=/nonexistent/ncu
rc=$?
[ "$rc" -eq 2 ] && grep -q "no ncu" "$TMP/err" && ok gpu-profile-without-ncu-refused ||
  fail gpu-profile-without-ncu-refused "exit $rc: $(cat "$TMP/err")"
prof NO_REPORT=1
rc=$?
[ "$rc" -eq 1 ] && grep -q "ncu wrote no report" "$TMP/err" && ok gpu-profile-without-report-fails ||
  fail gpu-profile-without-report-fails "exit $rc: $(cat "$TMP/err")"
# PROFILE_BYTES=1: the DRAM counters asked for, and each kernel's bytes
# (in their columns' units: 201.5 Mbyte read and 67,000 Kbyte written a
# launch) over its own time: 0.537 GB in 1 ms, 537 GB/s.
cat >"$TMP/raw.csv" <<'CSV'
"ID","Kernel Name","Block Size","Grid Size","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum"
"","","","","Mbyte","Kbyte","usecond"
"0","rmsnorm_backward_kernel","(256, 1, 1)","(8192, 1, 1)","201.5","67,000","530"
"1","rmsnorm_backward_kernel","(256, 1, 1)","(8192, 1, 1)","201.5","67,000","470"
"2","qk_norm_forward_kernel","(256, 1, 1)","(65536, 1, 1)","67","134,000","250"
CSV
: >"$TMP/ncu.args"
prof PROFILE_BYTES=1
rc=$?
row=$(awk '$1 == "rmsnorm_backward_kernel" { print $2, $3, $6, $7 }' "$TMP/out")
total=$(awk '$1 == "total" { print $3, $5, $6 }' "$TMP/out")
if [ "$rc" -eq 0 ] && [ "$row" = "2 1.00 0.537 537" ] && [ "$total" = "1.25 0.738 590" ] &&
   grep -q -- "--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum " "$TMP/ncu.args"; then
  ok gpu-profile-dram-bytes-per-kernel
else
  fail gpu-profile-dram-bytes-per-kernel "exit $rc, '$row', '$total': $(cat "$TMP/out" "$TMP/err" "$TMP/ncu.args" | head -c 600)"
fi
sed 's/"Kbyte"/"Kibyte"/' "$TMP/raw.csv" >"$TMP/raw2.csv"
python3 "$HERE/ci/gpu_profile_table.py" "$TMP/raw2.csv" >/dev/null 2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "unknown unit 'Kibyte' of dram__bytes_write.sum" "$TMP/err" &&
  ok gpu-profile-unknown-byte-unit-fails || fail gpu-profile-unknown-byte-unit-fails "exit $rc: $(cat "$TMP/err")"
prof PROFILE_BYTES=yes
rc=$?
[ "$rc" -eq 2 ] && grep -q "PROFILE_BYTES is 0 or 1" "$TMP/err" && ok gpu-profile-bad-bytes-switch-refused ||
  fail gpu-profile-bad-bytes-switch-refused "exit $rc: $(cat "$TMP/err")"
printf '"ID","Kernel Name"\n"0","k"\n' >"$TMP/raw.csv"
prof
rc=$?
[ "$rc" -eq 1 ] && grep -q "no 'Kernel Name' and 'gpu__time_duration.sum' columns" "$TMP/err" &&
  ok gpu-profile-bad-csv-fails || fail gpu-profile-bad-csv-fails "exit $rc: $(cat "$TMP/err")"
prof PROFILE_COUNT=x
rc=$?
[ "$rc" -eq 2 ] && ok gpu-profile-bad-count-refused || fail gpu-profile-bad-count-refused "exit $rc"
(cd "$(dirname "$0")/../.." && env PROFILE_NCU="$TMP/ncu" PROFILE_OUT="$TMP/p" sh ci/gpu-profile.sh 'base"line' >"$TMP/out" 2>"$TMP/err")
rc=$?
[ "$rc" -eq 2 ] && grep -q "no preset name" "$TMP/err" && ok gpu-profile-bad-preset-refused ||
  fail gpu-profile-bad-preset-refused "exit $rc: $(cat "$TMP/err")"
