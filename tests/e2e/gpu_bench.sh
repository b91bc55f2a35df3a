#!/bin/sh
# ci/gpu-bench.sh (the speed row of ci/gpu-check.sh) on the CPU: pgolf's
# GPU run played by tests/stand-ins/pgolf-cuda and the official script by
# tests/stand-ins/torchrun, each with planted step times, so that the
# parsing, the skipped first steps and the ratio are checked exactly; a
# missing script, a pgolf that cannot train on a GPU (the real binary
# here, which has none) and unequal chains each give a non-pass row that
# says why and gives no invented number.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
STANDINS=$HERE/tests/stand-ins
command -v jq >/dev/null 2>&1 || { fail gpu-bench-environment "jq is not installed"; exit 1; }
mkdir -p "$TMP/data"
printf 'model' >"$TMP/tok.model"
# The stand-in plays 6 steps of 50 ms.
printf '# standin: steps=6 step_ms=50\n' >"$TMP/train_gpt.py"

# bench SCRIPT [VAR=VALUE...]: the bench with 6 steps, the first 2 skipped;
# its two rows in $TMP/speed and $TMP/chains (RESULT<TAB>DETAIL).
bench() {
  s=$1
  shift
  env PATH="$STANDINS:$PATH" PGOLF="$STANDINS/pgolf-cuda" OUT="$TMP/o" \
    PGOLF_BASELINE_SCRIPT="$s" PGOLF_BASELINE_DATA="$TMP/data" PGOLF_BASELINE_TOKENIZER="$TMP/tok.model" \
    BENCH_STEPS=6 BENCH_SKIP=2 "$@" sh "$HERE/ci/gpu-bench.sh" >"$TMP/out" 2>&1
  grep '^row	ms/step' "$TMP/out" | cut -f3- >"$TMP/speed"
  grep '^row	train --device cuda' "$TMP/out" | cut -f3- >"$TMP/chains"
}

# pgolf at 40 ms a step after a first step 3 s slower (skipped), the
# official at 50: 524288 tokens / 40 ms and / 50 ms, ratio 50/40.
bench "$TMP/train_gpt.py" STANDIN_STEP_MS=40 STANDIN_FIRST_MS=3000
case $(cat "$TMP/speed") in
  "pass	NVIDIA H100 80GB HBM3, steps 3-6 of 6: pgolf 40.00 ms/step, 13107200 tokens/s (second run 40.00 ms/step); official 50.00 ms/step, 10485760 tokens/s; pgolf/official tokens/s 1.250 (aim >= 1.0, reported, not a pass condition)")
    ok gpu-bench-ratio ;;
  *) fail gpu-bench-ratio "$(cat "$TMP/out")" ;;
esac
case $(cat "$TMP/chains") in
  "pass	6 steps each, chain 5f0e2a9c"*) ok gpu-bench-chains-equal ;;
  *) fail gpu-bench-chains-equal "$(cat "$TMP/chains")" ;;
esac
# The official script ran as the bench says: one process, the reduced
# schedule, its own log.
grep -q '^step:6/6 train_loss:' "$TMP/o/official.txt" && ok gpu-bench-official-ran ||
  fail gpu-bench-official-ran "$(tail -n 3 "$TMP/o/official.txt")"

# Slower than the official: reported, still a pass.
bench "$TMP/train_gpt.py" STANDIN_STEP_MS=125
case $(cat "$TMP/speed") in
  "pass	"*"pgolf 125.00 ms/step, 4194304 tokens/s"*"pgolf/official tokens/s 0.400 (aim >= 1.0"*) ok gpu-bench-slower-passes ;;
  *) fail gpu-bench-slower-passes "$(cat "$TMP/speed")" ;;
esac

# Without the official script: a skipped row naming it, no official figure.
bench "$TMP/no-such-train_gpt.py" STANDIN_STEP_MS=40
case $(cat "$TMP/speed") in
  "skipped	PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py"*"official not measured; measured: pgolf 40.00 ms/step"*)
    grep -q 'official [0-9]' "$TMP/speed" && fail gpu-bench-no-script "an official figure: $(cat "$TMP/speed")" ||
      ok gpu-bench-no-script ;;
  *) fail gpu-bench-no-script "$(cat "$TMP/out")" ;;
esac

# pgolf cannot train on a GPU: both rows fail with its message, no number.
bench "$TMP/train_gpt.py" STANDIN_FAIL="no CUDA device: no CUDA-capable device is detected"
case $(cat "$TMP/speed") in
  "fail	pgolf run 1: exit 2: pgolf: no CUDA device: no CUDA-capable device is detected (no number measured)") ok gpu-bench-no-gpu ;;
  *) fail gpu-bench-no-gpu "$(cat "$TMP/out")" ;;
esac
# The real binary on a machine without a usable GPU: the same, in its own
# words. (Where `pgolf gpu` finds one, the bench would really train the
# baseline shape: that is ci/gpu-check.sh's to do.)
if "$PGOLF" gpu >/dev/null 2>&1; then
  skip gpu-bench-real-binary-no-gpu "this machine has a GPU (ci/gpu-check.sh runs the bench on it)"
else
  small_demo_data "$TMP/demo" 1025
  env PATH="$STANDINS:$PATH" PGOLF="$PGOLF" OUT="$TMP/o" PGOLF_BASELINE_SCRIPT="$TMP/train_gpt.py" \
    PGOLF_BASELINE_DATA="$TMP/demo" PGOLF_BASELINE_TOKENIZER="$HERE/data/tokenizers/fineweb_1024_bpe.model" \
    BENCH_STEPS=6 BENCH_SKIP=2 sh "$HERE/ci/gpu-bench.sh" >"$TMP/out" 2>&1
  if grep -q '^row	ms/step[^	]*	fail	pgolf run 1: exit 2: pgolf: ' "$TMP/out" && ! grep -q 'ms/step,' "$TMP/out"; then
    ok gpu-bench-real-binary-no-gpu
  else
    fail gpu-bench-real-binary-no-gpu "$(cat "$TMP/out")"
  fi
fi

# Two runs with different chains: the chains row fails, naming both.
bench "$TMP/train_gpt.py" STANDIN_STEP_MS=40 STANDIN_CHAIN_VARY=1
case $(cat "$TMP/chains") in
  "fail	6 steps each: "*" vs "*) ok gpu-bench-chains-differ ;;
  *) fail gpu-bench-chains-differ "$(cat "$TMP/chains")" ;;
esac

# An official run that stops short of its steps is a fail, not a figure.
printf '# standin: steps=4 step_ms=50\n' >"$TMP/short.py"
bench "$TMP/short.py" STANDIN_STEP_MS=40
case $(cat "$TMP/speed") in
  "fail	the official log"*"lacks train steps 2 and 6"*) ok gpu-bench-official-short ;;
  *) fail gpu-bench-official-short "$(cat "$TMP/speed")" ;;
esac

# A crashing official script: fail with its last words.
printf '# standin: steps=6 step_ms=50 fail_rank=0\n' >"$TMP/crash.py"
bench "$TMP/crash.py" STANDIN_STEP_MS=40
case $(cat "$TMP/speed") in
  "fail	official train_gpt.py: exit 1: "*"(official not measured); measured: pgolf 40.00 ms/step"*) ok gpu-bench-official-crash ;;
  *) fail gpu-bench-official-crash "$(cat "$TMP/speed")" ;;
esac
