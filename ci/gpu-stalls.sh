#!/bin/sh
# Why the heaviest kernels of a GPU training step take their time: NVIDIA
# Nsight Compute (ncu) profiles STALLS_COUNT launches (default 30) of the
# kernels STALLS_KERNELS names (an ncu regex over function names; default
# the tensor-core attention, q_gain's dg and rmsnorm's backward, 70% of
# the kernels' time in the last profile, docs/GPU-RUNS.md: 30 launches
# hold a micro-step's 9 forwards and the backward of its last layers),
# after STALLS_SKIP of them (default 0), in `pgolf train --device cuda` at the
# baseline shape (mixed precision, no validation, 2 steps), with the
# sections that say where a warp's cycles go: occupancy, the schedulers'
# issue, the warps' stall reasons, the pipes' utilisation, and per SASS
# instruction the sampled stalls (SourceCounters). It prints, per kernel,
# ci/gpu_stalls_table.py's summary: how often a scheduler issues, what
# the warps wait for, which pipes are busy. ci/gpu-profile.sh says which
# kernels take the time; this says why.
#   sh ci/gpu-stalls.sh [PRESET]    (default baseline; needs ncu and a GPU)
# STALLS_OUT (default /tmp/pgolf-stalls) keeps the report, its raw and
# details pages as CSV, the source page (per SASS instruction of every
# profiled launch, for reading off the GPU) as source.csv.gz, and the
# logs; PROFILE_NCU names the ncu to use.
# ncu replays each profiled launch once per pass its sections need (a few
# dozen), so a launch costs it about a second: keep STALLS_COUNT small.
set -u
cd "$(dirname "$0")/.."
preset=${1:-baseline}
skip=${STALLS_SKIP:-0}
count=${STALLS_COUNT:-30}
kernels=${STALLS_KERNELS:-attention_mma_|q_gain_dg|rmsnorm_backward}
out=${STALLS_OUT:-/tmp/pgolf-stalls}
case $skip$count in *[!0-9]*) echo "gpu-stalls: STALLS_SKIP and STALLS_COUNT must be whole numbers" >&2; exit 2 ;; esac
case $kernels in '' | *[!A-Za-z0-9_\|^\$.]*) echo "gpu-stalls: STALLS_KERNELS '$kernels' is not a regex of names (letters, digits, _ | ^ \$ .)" >&2; exit 2 ;; esac
. ci/ncu_lib.sh
ncu_setup gpu-stalls

# The sections by their identifiers (ncu --list-sections); the launches
# past STALLS_COUNT run unprofiled, and the report's presence is what
# counts.
"$ncu" --clock-control none --target-processes all --kernel-name "regex:$kernels" \
  --launch-skip "$skip" --launch-count "$count" \
  --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats \
  --section ComputeWorkloadAnalysis --section InstructionStats --section SourceCounters \
  --export "$out/report" --force-overwrite \
  ./pgolf train --config "$out/config.json" --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model \
  --device cuda --stop-after 2 --quiet --out "$out/run" >"$out/ncu.log" 2>&1
[ -f "$out/report.ncu-rep" ] ||
  { echo "gpu-stalls: ncu wrote no report: $(grep -v '^ *$' "$out/ncu.log" | tail -n 2 | tr '\n' ' ')" >&2; exit 1; }
"$ncu" --import "$out/report.ncu-rep" --csv --page raw --print-kernel-base function >"$out/raw.csv" 2>"$out/import.err" ||
  { echo "gpu-stalls: ncu --import failed: $(head -n 2 "$out/import.err" | tr '\n' ' ')" >&2; exit 1; }
# The other pages are for reading afterwards; a failure there is noted,
# not fatal.
"$ncu" --import "$out/report.ncu-rep" --csv --page details >"$out/details.csv" 2>>"$out/import.err" ||
  echo "gpu-stalls: (no details page: $(tail -n 1 "$out/import.err"))" >&2
if "$ncu" --import "$out/report.ncu-rep" --csv --page source --print-source sass >"$out/source.csv" 2>>"$out/import.err"; then
  gzip -f "$out/source.csv" # about 5,000 lines a launch of an attention kernel
else
  echo "gpu-stalls: (no source page: $(tail -n 1 "$out/import.err"))" >&2
fi
python3 ci/gpu_stalls_table.py "$out/raw.csv"
