#!/bin/sh
# ci/gpu-bench.sh (the speed rows of ci/gpu-check.sh) on the CPU: pgolf's
# GPU runs played by tests/stand-ins/pgolf-cuda and the official script by
# tests/stand-ins/torchrun, each with planted step times per GPU count, so
# that the parsing, the skipped first steps, the ratio and, on 2 GPUs, the
# scaling efficiencies are checked exactly; a missing script, a pgolf that
# cannot train on a GPU (the real binary here, which has none), unequal
# chains, a count above the machine's GPUs and a failing 2-GPU run each
# give a non-pass row that says why and gives no invented number.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
STANDINS=$HERE/tests/stand-ins
command -v jq >/dev/null 2>&1 || { fail gpu-bench-environment "jq is not installed"; exit 1; }
mkdir -p "$TMP/data"
printf 'model' >"$TMP/tok.model"
# The stand-in plays 6 steps of 50 ms.
printf '# standin: steps=6 step_ms=50\n' >"$TMP/train_gpt.py"

# bench SCRIPT [VAR=VALUE...]: the bench with 6 steps, the first 2
# skipped, at the default GPU counts 1, 2 and 8 (the stand-in has 1 GPU
# unless STANDIN_GPUS says more); its rows (RESULT<TAB>DETAIL) in
# $TMP/speed1, $TMP/speed2, $TMP/speed8, $TMP/chains and $TMP/losses, the names of all
# its rows in $TMP/names.
bench() {
  s=$1
  shift
  env PATH="$STANDINS:$PATH" PGOLF="$STANDINS/pgolf-cuda" OUT="$TMP/o" \
    PGOLF_BASELINE_SCRIPT="$s" PGOLF_BASELINE_DATA="$TMP/data" PGOLF_BASELINE_TOKENIZER="$TMP/tok.model" \
    BENCH_STEPS=6 BENCH_SKIP=2 "$@" sh "$HERE/ci/gpu-bench.sh" >"$TMP/out" 2>&1
  for g in 1 2 8; do grep "^row	ms/step[^	]* ($g GPUs*, baseline)	" "$TMP/out" | cut -f3- >"$TMP/speed$g"; done
  grep '^row	train --device cuda, baseline shape' "$TMP/out" | cut -f3- >"$TMP/chains"
  grep '^row	train --device cuda vs official' "$TMP/out" | cut -f3- >"$TMP/losses"
  grep '^row	' "$TMP/out" | cut -f2 >"$TMP/names"
}

# pgolf at 40 ms a step after a first step 3 s slower (skipped), the
# official at 50: 524288 tokens / 40 ms and / 50 ms, ratio 50/40.
bench "$TMP/train_gpt.py" STANDIN_STEP_MS=40 STANDIN_FIRST_MS=3000
case $(cat "$TMP/speed1") in
  "pass	NVIDIA H100 80GB HBM3, steps 3-6 of 6: pgolf 40.00 ms/step, 13107200 tokens/s (second run 40.00 ms/step); official 50.00 ms/step, 10485760 tokens/s; pgolf/official tokens/s 1.250 (aim >= 1.0, reported, not a pass condition)")
    ok gpu-bench-ratio ;;
  *) fail gpu-bench-ratio "$(cat "$TMP/out")" ;;
esac
case $(cat "$TMP/chains") in
  "pass	6 steps each, chain 5f0e2a9c"*) ok gpu-bench-chains-equal ;;
  *) fail gpu-bench-chains-equal "$(cat "$TMP/chains")" ;;
esac
# The official script ran as the bench says: one process, the reduced
# schedule, its master rank's log.
if grep -q '^step:6/6 train_loss:' "$TMP/o/gpus-1/official/logs/gpu-bench-1.txt" &&
  [ "$(sort -u "$TMP/o/gpus-1/official/ranks.txt" | sed 's/ step.*//' | uniq)" = "rank 0" ]; then
  ok gpu-bench-official-ran
else
  fail gpu-bench-official-ran "$(tail -n 3 "$TMP/o/gpus-1/official.txt")"
fi
# One row a count and the chains row, in that order; 2 and 8 GPUs on this
# 1-GPU stand-in are not run, and say so without a number.
printf '%s\n' "ms/step and tokens/s vs official train_gpt.py (1 GPU, baseline)" \
  "ms/step and tokens/s vs official train_gpt.py (2 GPUs, baseline)" \
  "ms/step and tokens/s vs official train_gpt.py (8 GPUs, baseline)" \
  "train --device cuda, baseline shape, twice: loss chains equal" \
  "train --device cuda vs official train_gpt.py: baseline losses, same GPU and schedule" >"$TMP/want-names"
expect_same gpu-bench-rows "$TMP/want-names" "$TMP/names"
if [ "$(cat "$TMP/speed2")" = "not run	not run: only 1 GPU" ] && [ "$(cat "$TMP/speed8")" = "not run	not run: only 1 GPU" ]; then
  ok gpu-bench-one-gpu-machine
else
  fail gpu-bench-one-gpu-machine "$(cat "$TMP/out")"
fi

# The losses, step by step against the official's (the same schedule):
# equal, within the tolerance, and past it at one step.
printf '# standin: steps=6 step_ms=50 loss0=7\n' >"$TMP/same.py"
bench "$TMP/same.py" STANDIN_STEP_MS=40
case $(cat "$TMP/losses") in
  "pass	max |train_loss difference| 0.0000 at step 1 of 6 (tolerance 1e-2); step 1: pgolf 6.9900, official 6.9900")
    grep -q '"iterations": 6,' "$TMP/o/pgolf.json" && ok gpu-bench-losses-equal ||
      fail gpu-bench-losses-equal "pgolf's schedule is not the official's: $(cat "$TMP/o/pgolf.json")" ;;
  *) fail gpu-bench-losses-equal "$(cat "$TMP/out")" ;;
esac
bench "$TMP/same.py" STANDIN_STEP_MS=40 STANDIN_LOSS0=7.0075
case $(cat "$TMP/losses") in
  "pass	max |train_loss difference| 0.0075 at step "*" of 6 (tolerance 1e-2); step 1: pgolf 6.9975, official 6.9900") ok gpu-bench-losses-within ;;
  *) fail gpu-bench-losses-within "$(cat "$TMP/losses")" ;;
esac
bench "$TMP/same.py" STANDIN_STEP_MS=40 STANDIN_LOSS0=7.02
case $(cat "$TMP/losses") in
  "fail	max |train_loss difference| 0.0200 at step "*" of 6 (tolerance 1e-2)"*) ok gpu-bench-losses-differ ;;
  *) fail gpu-bench-losses-differ "$(cat "$TMP/losses")" ;;
esac

# Slower than the official: reported, still a pass.
bench "$TMP/train_gpt.py" STANDIN_STEP_MS=125
case $(cat "$TMP/speed1") in
  "pass	"*"pgolf 125.00 ms/step, 4194304 tokens/s"*"pgolf/official tokens/s 0.400 (aim >= 1.0"*) ok gpu-bench-slower-passes ;;
  *) fail gpu-bench-slower-passes "$(cat "$TMP/speed1")" ;;
esac

# Without the official script: a skipped row naming it, no official figure.
bench "$TMP/no-such-train_gpt.py" STANDIN_STEP_MS=40
case $(cat "$TMP/speed1") in
  "skipped	PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py"*"official not measured; measured: pgolf 40.00 ms/step"*)
    grep -q 'official [0-9]' "$TMP/speed1" && fail gpu-bench-no-script "an official figure: $(cat "$TMP/speed1")" ||
      ok gpu-bench-no-script ;;
  *) fail gpu-bench-no-script "$(cat "$TMP/out")" ;;
esac

# pgolf cannot train on a GPU: both rows fail with its message, no number.
bench "$TMP/train_gpt.py" STANDIN_FAIL="no CUDA device: no CUDA-capable device is detected"
case $(cat "$TMP/speed1") in
  "fail	pgolf run 1: exit 2: pgolf: no CUDA device: no CUDA-capable device is detected (no number measured)") ok gpu-bench-no-gpu ;;
  *) fail gpu-bench-no-gpu "$(cat "$TMP/out")" ;;
esac
case $(cat "$TMP/speed2") in
  "not run	not run: only 0 GPUs (pgolf gpu: no CUDA device: no CUDA-capable device is detected)") ok gpu-bench-no-gpu-counts ;;
  *) fail gpu-bench-no-gpu-counts "$(cat "$TMP/out")" ;;
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
  if grep -q '^row	ms/step[^	]*(1 GPU, baseline)	fail	pgolf run 1: exit 2: pgolf: ' "$TMP/out" &&
    [ "$(grep -c '^row	ms/step[^	]*(. GPUs, baseline)	not run	not run: only 0 GPUs (pgolf gpu: ' "$TMP/out")" = 2 ] &&
    ! grep -q 'ms/step,' "$TMP/out"; then
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
case $(cat "$TMP/speed1") in
  "fail	the official log"*"lacks train steps 2 and 6"*) ok gpu-bench-official-short ;;
  *) fail gpu-bench-official-short "$(cat "$TMP/speed1")" ;;
esac

# A crashing official script: fail with its last words.
printf '# standin: steps=6 step_ms=50 fail_rank=0\n' >"$TMP/crash.py"
bench "$TMP/crash.py" STANDIN_STEP_MS=40
case $(cat "$TMP/speed1") in
  "fail	official train_gpt.py (torchrun --nproc_per_node=1): exit 1: "*"(official not measured); measured: pgolf 40.00 ms/step"*)
    case $(cat "$TMP/losses") in
      "fail	official train_gpt.py (torchrun --nproc_per_node=1): exit 1: "*"(official not measured)") ok gpu-bench-official-crash ;;
      *) fail gpu-bench-official-crash "the losses row: $(cat "$TMP/losses")" ;;
    esac ;;
  *) fail gpu-bench-official-crash "$(cat "$TMP/speed1")" ;;
esac

# ---- 2 and 8 GPUs on a 2-GPU machine ----
# pgolf at 40 ms a step on 1 GPU and 25 on 2 (--gpus 2 --world 2, its own
# chain), the official at 50 and 30 (torchrun --nproc_per_node=2): on 2
# GPUs 524288 tokens / 25 ms against / 30 ms, ratio 30/25; efficiency
# pgolf 40/(2*25) = 0.80, official 50/(2*30) = 0.83. 8 GPUs: not run.
CHAIN2=7a1b2c3d00000000000000000000000000000000000000000000000000000002
printf '# standin: steps=6 step_ms=50 step_ms_2=30\n' >"$TMP/two.py"
bench "$TMP/two.py" STANDIN_GPUS=2 STANDIN_STEP_MS=40 STANDIN_STEP_MS_2=25 STANDIN_CHAIN_2=$CHAIN2
case $(cat "$TMP/speed2") in
  "pass	2 x NVIDIA H100 80GB HBM3, steps 3-6 of 6: pgolf 25.00 ms/step, 20971520 tokens/s, chain $CHAIN2; official 30.00 ms/step, 17476267 tokens/s; pgolf/official tokens/s 1.200 (aim >= 1.0, reported, not a pass condition); scaling efficiency (tokens/s / 2 / 1 GPU's): pgolf 0.80, official 0.83")
    ok gpu-bench-2gpus-ratio ;;
  *) fail gpu-bench-2gpus-ratio "$(cat "$TMP/out")" ;;
esac
# The 1-GPU row is as on a 1-GPU machine; the chains row is the 1-GPU one.
case $(cat "$TMP/speed1")/$(cat "$TMP/chains") in
  "pass	NVIDIA H100 80GB HBM3, steps 3-6 of 6: pgolf 40.00 ms/step, 13107200 tokens/s (second run 40.00 ms/step); official 50.00 ms/step, 10485760 tokens/s; pgolf/official tokens/s 1.250 (aim >= 1.0, reported, not a pass condition)/pass	6 steps each, chain 5f0e2a9c"*)
    ok gpu-bench-2gpus-1gpu-row ;;
  *) fail gpu-bench-2gpus-1gpu-row "$(cat "$TMP/out")" ;;
esac
# Both sides ran at world 2: pgolf as 2 processes (its log says so), the
# official as 2 ranks, each doing all 6 steps.
if grep -q '^processes:2 ' "$TMP/o/gpus-2/pgolf-1/train.log" &&
  [ "$(grep -c 'step 6$' "$TMP/o/gpus-2/official/ranks.txt")" = 2 ] &&
  grep -q '^world_size:2 grad_accum_steps:4$' "$TMP/o/gpus-2/official/logs/gpu-bench-2.txt"; then
  ok gpu-bench-2gpus-world
else
  fail gpu-bench-2gpus-world "$(cat "$TMP/o/gpus-2/pgolf-1/train.log" "$TMP/o/gpus-2/official.txt" 2>&1 | head -n 20)"
fi
# 8 GPUs on this machine of 2: a "not run" row, no number, nothing started.
if [ "$(cat "$TMP/speed8")" = "not run	not run: only 2 GPUs" ] && [ ! -e "$TMP/o/gpus-8" ]; then
  ok gpu-bench-8gpus-not-run
else
  fail gpu-bench-8gpus-not-run "$(cat "$TMP/speed8"); $(ls "$TMP/o")"
fi

# The official script's rank 0 fails on 2 GPUs (alone: it trains on 1):
# the 2-GPU row fails with torchrun's last words, pgolf's figures and
# efficiency kept, the official's not invented.
printf '# standin: steps=6 step_ms=50 step_ms_2=30 fail_rank_2=0\n' >"$TMP/two-crash.py"
bench "$TMP/two-crash.py" STANDIN_GPUS=2 STANDIN_STEP_MS=40 STANDIN_STEP_MS_2=25 STANDIN_CHAIN_2=$CHAIN2
case $(cat "$TMP/speed2") in
  "fail	official train_gpt.py (torchrun --nproc_per_node=2): exit 1: torchrun (stand-in): rank0 exited with status 3; stopping the others (official not measured); measured: pgolf 25.00 ms/step, 20971520 tokens/s, chain $CHAIN2; scaling efficiency (tokens/s / 2 / 1 GPU's): pgolf 0.80, official not measured")
    case $(cat "$TMP/speed1") in
      "pass	"*"official 50.00 ms/step"*) ok gpu-bench-2gpus-official-fail ;;
      *) fail gpu-bench-2gpus-official-fail "the 1-GPU row: $(cat "$TMP/speed1")" ;;
    esac ;;
  *) fail gpu-bench-2gpus-official-fail "$(cat "$TMP/out")" ;;
esac

# pgolf fails on 2 GPUs: that row fails with pgolf's words and no number.
bench "$TMP/two.py" STANDIN_GPUS=2 STANDIN_STEP_MS=40 STANDIN_FAIL_2="train: --gpus 2: NCCL: unhandled system error"
case $(cat "$TMP/speed2") in
  "fail	pgolf --gpus 2 --world 2: exit 2: pgolf: train: --gpus 2: NCCL: unhandled system error (no number measured)") ok gpu-bench-2gpus-pgolf-fail ;;
  *) fail gpu-bench-2gpus-pgolf-fail "$(cat "$TMP/out")" ;;
esac

# A pgolf log that is not at the world asked for is no figure for it.
bench "$TMP/two.py" STANDIN_GPUS=2 STANDIN_STEP_MS=40 STANDIN_LOG_WORLD=1
case $(cat "$TMP/speed2") in
  "fail	pgolf's log ($TMP/o/gpus-2/pgolf-1/train.log) says world_size:1, not 2 (no number measured)") ok gpu-bench-2gpus-world-checked ;;
  *) fail gpu-bench-2gpus-world-checked "$(cat "$TMP/out")" ;;
esac

# So is an official log at another world than the ranks started.
printf '# standin: steps=6 step_ms=50 logged_world_2=1\n' >"$TMP/two-world.py"
bench "$TMP/two-world.py" STANDIN_GPUS=2 STANDIN_STEP_MS=40 STANDIN_STEP_MS_2=25
case $(cat "$TMP/speed2") in
  "fail	the official log ($TMP/o/gpus-2/official/logs/gpu-bench-2.txt) says world_size:1, not 2: official not measured; measured: pgolf 25.00 ms/step"*)
    ok gpu-bench-2gpus-official-world-checked ;;
  *) fail gpu-bench-2gpus-official-world-checked "$(cat "$TMP/out")" ;;
esac

# Without the count 1: no efficiency (nothing to divide by) and no chains
# row, each saying why.
bench "$TMP/two.py" STANDIN_GPUS=2 STANDIN_STEP_MS_2=25 GPU_COUNTS=2
case $(cat "$TMP/speed2")/$(cat "$TMP/chains")/$(cat "$TMP/losses")/$(wc -l <"$TMP/names") in
  "pass	"*"pgolf/official tokens/s 1.200 (aim >= 1.0, reported, not a pass condition); scaling efficiency (tokens/s / 2 / 1 GPU's): pgolf not measured (no 1-GPU figure), official not measured (no 1-GPU figure)/skipped	GPU_COUNTS ('2') has no 1: pgolf's two 1-GPU runs were not made/skipped	GPU_COUNTS ('2') has no 1: nothing compared/3")
    ok gpu-bench-no-1gpu-count ;;
  *) fail gpu-bench-no-1gpu-count "$(cat "$TMP/out")" ;;
esac

# A count that is no official world size is refused before anything runs.
bench "$TMP/two.py" GPU_COUNTS="1 3"
if grep -q "^GPU_COUNTS ('1 3') wants counts among 1, 2, 4 and 8" "$TMP/out" && [ ! -s "$TMP/names" ]; then
  ok gpu-bench-bad-count
else
  fail gpu-bench-bad-count "$(cat "$TMP/out")"
fi
