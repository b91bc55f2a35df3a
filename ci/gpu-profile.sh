#!/bin/sh
# Where a GPU training step's time goes, kernel by kernel: NVIDIA Nsight
# Compute (ncu) times PROFILE_COUNT kernel launches (default 3000, about
# a baseline step's) of `pgolf train --device cuda` at the baseline shape
# (mixed precision, no validation), after PROFILE_SKIP launches (default
# 400: the first micro-steps, where cuBLASLt's plans are chosen) of a
# 2-step run. It prints one line per kernel, the most time first:
#   KERNEL  LAUNCHES  TOTAL_MS  SHARE_%  MEAN_US
# then the total, and (baseline and tiny) each attention kernel's TFLOP/s
# from its grids against its unit's peak, CUDA cores or tensor cores
# (ci/gpu_profile_table.py --attention). ncu serialises the launches, so the figures are each
# kernel's own time on the GPU, not the step's wall time (no overlap, no
# host gaps): they say which kernels to make faster, not how fast a step
# is (ci/gpu-bench.sh measures that).
#   sh ci/gpu-profile.sh [PRESET]    (default baseline; needs ncu and a GPU)
# PROFILE_OUT (default /tmp/pgolf-profile) keeps the report and the logs;
# PROFILE_NCU names the ncu to use. PROFILE_BYTES=1 also counts each
# launch's DRAM bytes (read and written), and the table gives each
# kernel's GB/s: a kernel far below the HBM's rate that moves most of its
# bytes once is waiting on latency, not bandwidth (ncu may need more
# passes for the counters: a longer run).
set -u
cd "$(dirname "$0")/.."
preset=${1:-baseline}
skip=${PROFILE_SKIP:-400}
count=${PROFILE_COUNT:-3000}
out=${PROFILE_OUT:-/tmp/pgolf-profile}
case $skip$count in *[!0-9]*) echo "gpu-profile: PROFILE_SKIP and PROFILE_COUNT must be whole numbers" >&2; exit 2 ;; esac
. ci/ncu_lib.sh
ncu_setup gpu-profile

# The run stops after 2 steps (the launches past PROFILE_COUNT run
# unprofiled); the report's presence is what counts.
metrics=gpu__time_duration.sum
case ${PROFILE_BYTES:-0} in
  0) ;;
  1) metrics=$metrics,dram__bytes_read.sum,dram__bytes_write.sum ;;
  *) echo "gpu-profile: PROFILE_BYTES is 0 or 1" >&2; exit 2 ;;
esac
"$ncu" --clock-control none --target-processes all --metrics "$metrics" \
  --launch-skip "$skip" --launch-count "$count" --export "$out/report" --force-overwrite \
  ./pgolf train --config "$out/config.json" --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model \
  --device cuda --stop-after 2 --quiet --out "$out/run" >"$out/ncu.log" 2>&1
[ -f "$out/report.ncu-rep" ] ||
  { echo "gpu-profile: ncu wrote no report: $(grep -v '^ *$' "$out/ncu.log" | tail -n 2 | tr '\n' ' ')" >&2; exit 1; }
"$ncu" --import "$out/report.ncu-rep" --csv --page raw --print-kernel-base function >"$out/raw.csv" 2>"$out/import.err" ||
  { echo "gpu-profile: ncu --import failed: $(head -n 2 "$out/import.err" | tr '\n' ' ')" >&2; exit 1; }
# The attention kernels' throughput against their units' peaks, for the
# presets' shapes (query heads per KV head, head width; the run is mixed).
case $preset in
  baseline) att="--attention 2,64,mixed" ;;
  tiny) att="--attention 2,16,mixed" ;;
  *) att= ;;
esac
# shellcheck disable=SC2086
python3 ci/gpu_profile_table.py "$out/raw.csv" $att
