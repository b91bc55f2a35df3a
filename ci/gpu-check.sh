#!/bin/sh
# The one command that proves the GPU path on a machine with a GPU:
# builds pgolf (CUDA compiled in), lists the devices, runs every GPU test
# (each kernel against its CPU tree twin, bit for bit, and run to run),
# the training and speed rows below, compute-sanitizer's memcheck,
# racecheck and initcheck over the kernel tests, the static checks and
# the baseline replay (these two last: a run cut off by a deadline loses
# them first), and prints one table. Any skip is a failure here: on a GPU
# machine nothing may be left unchecked. Exit 0 when every row passed.
#   sh ci/gpu-check.sh            (from anywhere in the repository)
# With GPU_CHECK_PREBUILT set (by ci/device-check.sh, on a lent machine
# that cannot build pgolf) the build row checks the binaries in place and
# says where they were built, instead of running make.
# One row replays the official baseline train_gpt.py under pgolf replay
# with reduced iterations and prints the attestation (ci/baseline-replay.sh):
# set PGOLF_BASELINE_SCRIPT, PGOLF_BASELINE_DATA and PGOLF_BASELINE_TOKENIZER
# (and ITERATIONS, default 200), with torchrun on PATH; without them the row
# says skipped, which fails the table like any skip.
# The training rows run `pgolf train --device cuda` (the tiny preset) twice
# and against the CPU, `pgolf eval --device cuda` on its artifact likewise
# (plain, sliding, TTT), then at --world 8 on 1, 2 and 8 GPUs (a count the
# machine lacks is a failing "not run" row); ci/gpu-bench.sh times the
# baseline shape against the official script under torchrun on the same
# GPUs, one row each for 1, 2 and 8 GPUs (GPU_COUNTS; world size = GPU
# count on both sides; ms/step, tokens/s, the ratio and, above 1 GPU, each
# side's scaling efficiency; a count the machine lacks is again a failing
# "not run" row), and pgolf's two 1-GPU runs there must give one chain (the
# same PGOLF_BASELINE_* and torchrun; BENCH_STEPS, default 20, BENCH_SKIP,
# default 5).
# GPU_CHECK_SECTIONS (default: all of them) names the sections to run, out
# of: tests train golden world bench sanitizer static baseline; a row
# "sections not run" then names the others and fails the table, so that a
# proof split over two calls of a lent machine never reads as a whole one.
# Each GPU test and each training run is bounded by GPU_CHECK_TIMEOUT
# seconds (default 180): a kernel that hangs costs one row, not the rest.
set -u
cd "$(dirname "$0")/.."
out=${GPU_CHECK_OUT:-/tmp/pgolf-gpu-check}
rm -rf "$out" && mkdir -p "$out"
rows="$out/rows"
: >"$rows"
status=0
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$rows"; [ "$2" = pass ] || status=1; }
all_sections="tests train golden world bench sanitizer static baseline"
sections=${GPU_CHECK_SECTIONS:-$all_sections}
for s in $sections; do
  case " $all_sections " in *" $s "*) ;; *) echo "gpu-check: unknown section $s (known: $all_sections)" >&2; exit 2 ;; esac
done
want() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }
for v in "${GPU_CHECK_TIMEOUT:-180}" "${SANITIZER_TIMEOUT:-40}"; do
  case $v in '' | *[!0-9]*) echo "gpu-check: GPU_CHECK_TIMEOUT and SANITIZER_TIMEOUT are whole seconds ('$v')" >&2; exit 2 ;; esac
done
lim="timeout ${GPU_CHECK_TIMEOUT:-180}"

if [ -n "${GPU_CHECK_PREBUILT:-}" ]; then
  # ci/device-check.sh brought binaries built from these sources elsewhere.
  if ./pgolf version 2>"$out/build.log" | grep -q '^cuda yes$'; then
    row "build (CUDA compiled in)" pass "prebuilt: $GPU_CHECK_PREBUILT"
  else
    row "build (CUDA compiled in)" fail "the prebuilt pgolf does not run or lacks CUDA: $(head -n 1 "$out/build.log")"
  fi
elif make -j"$(nproc)" build >"$out/build.log" 2>&1; then
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

for t in build/release/tests/test_cuda_*; do
  want tests || break
  [ -x "$t" ] || continue
  $lim "$t" >"$out/$(basename "$t").txt" 2>&1
  rc=$?
  p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$out/$(basename "$t").txt")
  k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s), listed below:/\1/p' "$out/$(basename "$t").txt")
  # The tensor-core attention's margin: its worst comparison, as a share
  # of ATTENTION_MMA_TOL (kernels/attention.h).
  margin=$(sed -n 's/.* worst \([0-9.e+-]*\) of the tolerance$/\1/p' "$out/$(basename "$t").txt" | sort -g | tail -n 1)
  if [ "$rc" -eq 0 ] && [ -z "$k" ]; then
    row "$(basename "$t") (GPU vs its CPU twin; run to run)" pass "${p:-0} tests${margin:+; tensor-core attention: worst $margin of its tolerance}"
  else
    row "$(basename "$t") (GPU vs its CPU twin; run to run)" fail "exit $rc, ${p:-0} passed, ${k:-0} skipped: $(grep -m1 '^skipped:\|element' "$out/$(basename "$t").txt")"
  fi
done

# The trainer on the GPU: the tiny preset, 20 steps, twice on the GPU (the
# chains must be equal) and once on the CPU with the GPU's reduction trees
# (PGOLF_TEST_GPU_TREES=1): every step's loss within a tolerance, since
# only cuBLASLt's summation order differs, and in mixed precision the
# tensor-core attention's adder (fp32 2e-4, mixed 1e-2 absolute, the size
# of the CPU goldens' own gaps to PyTorch).
train_args="--preset tiny --steps 20 --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model --quiet --json"
precs=; want train && precs="fp32 mixed"
for prec in $precs; do
  tol=2e-4; [ "$prec" = mixed ] && tol=1e-2
  ok_runs=1
  for r in 1 2; do
    # shellcheck disable=SC2086
    $lim ./pgolf train $train_args --precision "$prec" --device cuda --out "$out/gpu-$prec-$r" \
      >"$out/gpu-$prec-$r.json" 2>"$out/gpu-$prec-$r.err" || ok_runs=0
  done
  # shellcheck disable=SC2086
  PGOLF_TEST_GPU_TREES=1 $lim ./pgolf train $train_args --precision "$prec" --out "$out/cpu-$prec" \
    >"$out/cpu-$prec.json" 2>"$out/cpu-$prec.err" || ok_runs=0
  if [ "$ok_runs" = 0 ]; then
    row "train --device cuda ($prec, tiny, 20 steps)" fail "$(cat "$out"/gpu-$prec-*.err "$out/cpu-$prec.err" | head -n 1)"
    continue
  fi
  c1=$(jq -r .chain "$out/gpu-$prec-1.json"); c2=$(jq -r .chain "$out/gpu-$prec-2.json")
  if [ "$c1" = "$c2" ]; then
    row "train --device cuda twice ($prec): loss chains equal" pass "$c1"
  else
    row "train --device cuda twice ($prec): loss chains equal" fail "$c1 vs $c2"
  fi
  # The first run replayed from its manifest (pgolf replay: on this GPU,
  # the recorded environment compared): the same chain, artifact and
  # metric, and no REPLAY_ENVIRONMENT difference on the same machine.
  $lim ./pgolf replay "$out/gpu-$prec-1/manifest.json" --quiet --out "$out/replay-$prec" \
    >"$out/replay-$prec.txt" 2>&1
  rc=$?
  if [ "$rc" -eq 0 ] && ! grep -q REPLAY_ENVIRONMENT "$out/replay-$prec.txt"; then
    row "pgolf replay of the GPU run's manifest ($prec)" pass "identical chain, artifact and metric; same device and cuBLASLt plans"
  else
    row "pgolf replay of the GPU run's manifest ($prec)" fail "exit $rc: $(grep -m2 -E 'MISMATCH|REPLAY_ENVIRONMENT|pgolf:' "$out/replay-$prec.txt" | tr '\n' ' ' | cut -c1-300)"
  fi
  worst=$(python3 - "$out/gpu-$prec-1/losses.txt" "$out/cpu-$prec/losses.txt" <<'PY'
import struct, sys
def losses(path):  # manifests/loss_file.h: STEP LOSS ..., LOSS as 0x + IEEE bits
    out = []
    for line in open(path):
        f = line.split("#")[0].split()
        if len(f) >= 2:
            out.append(struct.unpack(">f", bytes.fromhex(f[1][2:]))[0] if f[1].startswith("0x") else float(f[1]))
    return out
a, b = losses(sys.argv[1]), losses(sys.argv[2])
print("%.3g" % (max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) and a else float("inf")))
PY
)
  if awk -v w="$worst" -v t="$tol" 'BEGIN { exit !(w <= t) }'; then
    row "train --device cuda vs CPU with GPU trees ($prec)" pass "max |loss diff| $worst over 20 steps (tolerance $tol); ms: gpu $(jq -r .train_ms "$out/gpu-$prec-1.json"), cpu $(jq -r .train_ms "$out/cpu-$prec.json")"
  else
    row "train --device cuda vs CPU with GPU trees ($prec)" fail "max |loss diff| $worst > $tol"
  fi
done
# pgolf eval --device cuda on each precision's first GPU artifact, in
# plain, sliding and TTT (chunks of 16,384 positions, one epoch) modes:
# twice on the GPU (the score dumps equal byte for byte) and once on the
# CPU with the GPU's trees (val_bpb within the training rows' tolerance:
# the products' order is the only difference).
eval_args="--data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model --json"
for prec in $precs; do
  art=$out/gpu-$prec-1/model.int8.ptz
  [ -f "$art" ] || { row "eval --device cuda ($prec)" fail "no artifact: the training row failed"; continue; }
  tol=1e-4; [ "$prec" = mixed ] && tol=1e-2
  for mode in plain sliding "ttt --chunk 16384 --epochs 1"; do
    m=${mode%% *}
    ok_runs=1
    for r in 1 2; do
      # shellcheck disable=SC2086
      $lim ./pgolf eval --artifact "$art" $eval_args --precision "$prec" --mode $mode --device cuda \
        --score-dump "$out/ev-$prec-$m-$r.pgsd" >"$out/ev-$prec-$m-$r.json" 2>"$out/ev-$prec-$m-$r.err" || ok_runs=0
    done
    # shellcheck disable=SC2086
    PGOLF_TEST_GPU_TREES=1 $lim ./pgolf eval --artifact "$art" $eval_args --precision "$prec" --mode $mode \
      --score-dump "$out/ev-$prec-$m-cpu.pgsd" >"$out/ev-$prec-$m-cpu.json" 2>"$out/ev-$prec-$m-cpu.err" || ok_runs=0
    name="eval --device cuda $m ($prec): twice equal dumps, vs CPU with GPU trees"
    if [ "$ok_runs" = 0 ]; then
      row "$name" fail "$(cat "$out"/ev-$prec-$m-*.err | head -n 1)"
      continue
    fi
    g=$(jq -r .val_bpb "$out/ev-$prec-$m-1.json"); c=$(jq -r .val_bpb "$out/ev-$prec-$m-cpu.json")
    d=$(awk -v a="$g" -v b="$c" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.3g", d }')
    detail="val_bpb gpu $g, cpu $c, |diff| $d (tolerance $tol); seconds gpu $(jq -r .seconds "$out/ev-$prec-$m-1.json"), cpu $(jq -r .seconds "$out/ev-$prec-$m-cpu.json")"
    if ! cmp -s "$out/ev-$prec-$m-1.pgsd" "$out/ev-$prec-$m-2.pgsd"; then
      row "$name" fail "the two GPU runs' dumps differ; $detail"
    elif awk -v d="$d" -v t="$tol" 'BEGIN { exit !(d <= t) }'; then
      row "$name" pass "$detail"
    else
      row "$name" fail "$detail"
    fi
  done
done
# The tiny preset's 20 steps on the GPU against the official script's
# goldens (tests/e2e/train_golden.sh: fp32 within 1e-4, mixed within
# 5e-3, the CPU trainer's tolerances; no golden exists for the baseline
# preset, whose 20 CPU steps would take an hour).
if want golden; then
  PGOLF="$(pwd)/build/release/pgolf" PGOLF_GOLDEN_DEVICE=cuda $lim sh tests/e2e/train_golden.sh >"$out/golden.txt" 2>&1
  if grep -q '^FAIL' "$out/golden.txt" || ! grep -q '^ok golden-mixed-20-steps' "$out/golden.txt"; then
    row "train --device cuda: 20 steps fp32/mixed vs the official goldens" fail "$(grep -m1 '^FAIL' "$out/golden.txt")"
  else
    row "train --device cuda: 20 steps fp32/mixed vs the official goldens" pass "$(grep '20-steps' "$out/golden.txt" | sed 's/^ok //' | tr '\n' ';')"
  fi
fi
# The multi-GPU world: the tiny preset at --world 8, 20 steps, on 1, 2
# and 8 GPUs of this machine (--gpus N: one process per GPU under mpirun,
# the gradients moved by NCCL and summed in rank order on the GPU). Every
# count must give the 1-GPU run's loss chain (the combination's bits do
# not depend on the process count); each row gives ms/step and the
# scaling efficiency, tokens/s per GPU against 1 GPU's. A count beyond
# the machine's GPUs is a row that says so, and fails like any skip.
ngpu=$(./pgolf gpu --json 2>/dev/null | jq '.devices | length' 2>/dev/null)
ngpu=${ngpu:-0}
world_args="--preset tiny --steps 20 --world 8 --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model --quiet --json --device cuda"
tps1=
chain1=
counts=; want world && counts="1 2 8"
for g in $counts; do
  name="train --device cuda --gpus $g --world 8 (tiny, 20 steps)"
  if [ "$g" -gt "$ngpu" ]; then
    row "$name" "not run" "not run: only $ngpu GPUs"
    continue
  fi
  # shellcheck disable=SC2086
  if ! $lim ./pgolf train $world_args --gpus "$g" --out "$out/world-$g" >"$out/world-$g.json" 2>"$out/world-$g.err"; then
    row "$name" fail "$(head -n 1 "$out/world-$g.err")"
    continue
  fi
  c=$(jq -r .chain "$out/world-$g.json")
  ms=$(jq -r '.train_ms / .steps' "$out/world-$g.json")
  tok=$(jq -r .predicate.config.train_batch_tokens "$out/world-$g/manifest.json")
  tps=$(jq -r --argjson tok "$tok" '$tok * .steps / (.train_ms / 1000)' "$out/world-$g.json")
  if [ "$g" = 1 ]; then tps1=$tps chain1=$c; fi
  eff=$(awk -v t="$tps" -v g="$g" -v t1="$tps1" 'BEGIN { if (t1 > 0) printf "%.2f", t / g / t1; else print "n/a" }')
  detail="chain $c; $(printf '%.2f' "$ms") ms/step; $(printf '%.0f' "$tps") tokens/s; efficiency $eff per GPU vs 1 GPU"
  if [ -n "$chain1" ] && [ "$c" = "$chain1" ]; then row "$name" pass "$detail"; else
    row "$name" fail "chain differs from the 1-GPU run's ($chain1); $detail"
  fi
done
# The speed against the official script on 1, 2 and 8 of this machine's
# GPUs, and pgolf's bits run to run at the baseline shape (ci/gpu-bench.sh:
# a row per GPU count, then the chains row, each taken into the table; the
# ratio and the efficiencies are reported, not pass conditions).
if want bench; then
  OUT="$out/bench" sh ci/gpu-bench.sh >"$out/bench.txt" 2>&1
  grep '^row	' "$out/bench.txt" >"$out/bench-rows" || row "ms/step and tokens/s vs official train_gpt.py" fail "ci/gpu-bench.sh printed no row: $(tail -n 1 "$out/bench.txt")"
  while IFS="$(printf '\t')" read -r _ a b c; do row "$a" "$b" "$c"; done <"$out/bench-rows"
fi

# NVIDIA's compute-sanitizer over the kernels' tests (not the model's and
# optimizer's, whose CPU twins are slow under it): memcheck (out of
# bounds, misaligned accesses, hardware exceptions), racecheck (shared
# memory hazards: a missing __syncthreads), initcheck (device memory read
# before it was written: bits that could differ run to run). Each test
# run is bounded by SANITIZER_TIMEOUT seconds (default 40).
san=$(command -v compute-sanitizer 2>/dev/null || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
tools=; want sanitizer && tools="memcheck racecheck initcheck"
for tool in $tools; do
  name="compute-sanitizer $tool (kernel tests)"
  if [ -z "$san" ]; then
    row "$name" skipped "no compute-sanitizer on PATH or in /usr/local/cuda/bin"
    continue
  fi
  found= ran=
  for t in test_cuda_kernels test_cuda_ops test_cuda_qk_norm test_cuda_residual_norm test_cuda_attention test_cuda_ordered_sum test_cuda_matmul_split; do
    [ -x "build/release/tests/$t" ] || continue
    log="$out/sanitizer-$tool-$t.txt"
    timeout "${SANITIZER_TIMEOUT:-40}" "$san" --tool "$tool" --target-processes all --error-exitcode 99 \
      "build/release/tests/$t" >"$log" 2>&1
    rc=$?
    ran="$ran $t"
    [ "$rc" -eq 0 ] && continue
    what=$(grep -m1 '^========= [^ C]' "$log" | sed 's/^========= //' | cut -c1-120)
    [ "$rc" -eq 124 ] && what="over ${SANITIZER_TIMEOUT:-40} s"
    found="$found $t (exit $rc: ${what:-see $log});"
  done
  if [ -z "$ran" ]; then row "$name" fail "no kernel test binaries"
  elif [ -z "$found" ]; then row "$name" pass "no findings in$ran"
  else row "$name" fail "$found"
  fi
done

# The checks that take long or need no GPU come last, so that a run cut
# off by a deadline (ci/device-check.sh) loses them first.
if want static; then
  sh ci/cuda-static.sh >"$out/static.txt" 2>&1
  n_ok=$(grep -c '^ok ' "$out/static.txt")
  n_bad=$(grep -c '^FAIL ' "$out/static.txt")
  n_skip=$(grep -c '^SKIP ' "$out/static.txt")
  if [ "$n_bad" -eq 0 ] && [ "$n_skip" -eq 0 ]; then
    row "static: flags, PTX+SASS atomics, spills" pass "$n_ok checks; $(grep '^info' "$out/static.txt" | sed 's/^info //; s/_Z[0-9]*//' | tr '\n' ';' | cut -c1-200)"
  else
    row "static: flags, PTX+SASS atomics, spills" fail "$n_bad failed, $n_skip skipped (see $out/static.txt)"
  fi
fi

# The official baseline replayed under pgolf replay (ci/baseline-replay.sh;
# the challenge's train_gpt.py is never part of pgolf: PGOLF_BASELINE_*
# say where it and its data are).
if want baseline; then
  OUT="$out/baseline" sh ci/baseline-replay.sh >"$out/baseline.txt" 2>&1
  b=$(tail -n 1 "$out/baseline.txt")
  row "replay: official baseline train_gpt.py, ITERATIONS=${ITERATIONS:-200}" "${b%%	*}" "${b#*	}"
fi
left=
for s in $all_sections; do want "$s" || left="$left $s"; done
[ -n "$left" ] && row "sections not run (GPU_CHECK_SECTIONS)" "not run" "not run here:$left"

echo
printf '| %-58s | %-9s | %s\n' "check" "result" "detail"
printf '|%s|%s|%s\n' "------------------------------------------------------------" "-----------" "--------"
while IFS="$(printf '\t')" read -r a b c; do printf '| %-58s | %-9s | %s\n' "$a" "$b" "$c"; done <"$rows"
echo
grep -E '^(attestation|driver|gpu [0-9]|process)' "$out/baseline.txt" 2>/dev/null
echo
echo "logs in $out/"
exit $status
