#!/bin/sh
# The one command that proves the GPU path on a machine with a GPU:
# builds pgolf (CUDA compiled in), lists the devices, runs the static
# checks of the kernels and every GPU test (each kernel against its CPU
# tree twin, bit for bit, and run to run), and prints one table. Any skip
# is a failure here: on a GPU machine nothing may be left unchecked.
# Exit 0 when every row passed.
#   sh ci/gpu-check.sh            (from anywhere in the repository)
# One row replays the official baseline train_gpt.py under pgolf replay
# with reduced iterations and prints the attestation (ci/baseline-replay.sh):
# set PGOLF_BASELINE_SCRIPT, PGOLF_BASELINE_DATA and PGOLF_BASELINE_TOKENIZER
# (and ITERATIONS, default 200), with torchrun on PATH; without them the row
# says skipped, which fails the table like any skip.
# The rows for training on the GPU (20 baseline steps against the CPU
# goldens, the loss chain twice, ms/step against the official script)
# join this table when `pgolf train --device cuda` exists; until then the
# table says so instead of leaving them out.
set -u
cd "$(dirname "$0")/.."
out=${GPU_CHECK_OUT:-/tmp/pgolf-gpu-check}
rm -rf "$out" && mkdir -p "$out"
rows="$out/rows"
: >"$rows"
status=0
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$rows"; [ "$2" = pass ] || status=1; }

if make -j"$(nproc)" build >"$out/build.log" 2>&1; then
  if grep -q 'nvcc' "$out/build.log" || ls build/release/obj/kernels/*.cu.o >/dev/null 2>&1; then
    row "build (CUDA compiled in)" pass "$(ls kernels/*.cu | wc -l) kernel files, flags: $(make -s print-nvcc-flags | tr -s ' ' | cut -c1-80)"
  else
    row "build (CUDA compiled in)" fail "no nvcc: the CUDA path was not built"
  fi
else
  row "build (CUDA compiled in)" fail "see $out/build.log"
fi

if ./pgolf gpu >"$out/gpu.txt" 2>&1; then
  row "pgolf gpu" pass "$(head -n 2 "$out/gpu.txt" | tr '\n' ';')"
else
  row "pgolf gpu" fail "$(head -n 1 "$out/gpu.txt")"
fi

sh ci/cuda-static.sh >"$out/static.txt" 2>&1
n_ok=$(grep -c '^ok ' "$out/static.txt")
n_bad=$(grep -c '^FAIL ' "$out/static.txt")
n_skip=$(grep -c '^SKIP ' "$out/static.txt")
if [ "$n_bad" -eq 0 ] && [ "$n_skip" -eq 0 ]; then
  row "static: flags, PTX+SASS atomics, spills" pass "$n_ok checks; $(grep '^info' "$out/static.txt" | sed 's/^info //; s/_Z[0-9]*//' | tr '\n' ';' | cut -c1-200)"
else
  row "static: flags, PTX+SASS atomics, spills" fail "$n_bad failed, $n_skip skipped (see $out/static.txt)"
fi

for t in build/release/tests/test_cuda_*; do
  [ -x "$t" ] || continue
  "$t" >"$out/$(basename "$t").txt" 2>&1
  rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$out/$(basename "$t").txt")
  k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' "$out/$(basename "$t").txt")
  if [ "$rc" -eq 0 ] && [ -z "$k" ]; then
    row "$(basename "$t") (GPU vs its CPU twin; run to run)" pass "${p:-0} tests"
  else
    row "$(basename "$t") (GPU vs its CPU twin; run to run)" fail "exit $rc, ${p:-0} passed, ${k:-0} skipped: $(grep -m1 '^skipped:\|element' "$out/$(basename "$t").txt")"
  fi
done

# The official baseline replayed under pgolf replay (ci/baseline-replay.sh;
# the challenge's train_gpt.py is never part of pgolf: PGOLF_BASELINE_*
# say where it and its data are).
OUT="$out/baseline" sh ci/baseline-replay.sh >"$out/baseline.txt" 2>&1
b=$(tail -n 1 "$out/baseline.txt")
row "replay: official baseline train_gpt.py, ITERATIONS=${ITERATIONS:-200}" "${b%%	*}" "${b#*	}"

row "train --device cuda: 20 baseline steps fp32/mixed vs CPU goldens" "not built" "the CUDA trainer does not exist yet (issue 11)"
row "train --device cuda twice: loss chains equal" "not built" "needs the CUDA trainer"
row "ms/step and tokens/s vs official train_gpt.py" "not built" "needs the CUDA trainer"
row "train --device cuda --gpus 1/2/8: same chain on each count" "not built" "needs the CUDA trainer (NCCL all-gather + ordered sum: kernels/nccl.h, test_cuda_nccl)"
row "GPU scaling efficiency; ms/step vs torchrun on the same GPUs" "not built" "needs the CUDA trainer"

echo
printf '| %-58s | %-9s | %s\n' "check" "result" "detail"
printf '|%s|%s|%s\n' "------------------------------------------------------------" "-----------" "--------"
while IFS="$(printf '\t')" read -r a b c; do printf '| %-58s | %-9s | %s\n' "$a" "$b" "$c"; done <"$rows"
echo
grep -E '^(attestation|driver|gpu [0-9]|process)' "$out/baseline.txt" 2>/dev/null
echo
echo "logs in $out/"
exit $status
