#!/bin/sh
# The speed of `pgolf train --device cuda` against the official baseline
# train_gpt.py on the same GPU, and pgolf's run-to-run bits at that shape.
# Two rows for ci/gpu-check.sh's table, printed last as
#   row<TAB>CHECK<TAB>RESULT<TAB>DETAIL        (RESULT pass, fail or skipped)
#
# The baseline shape at world size 1, as the official script runs on one
# GPU: 524,288 tokens a step in 8 gradient-accumulation micro-steps, bf16
# autocast (pgolf's --precision mixed), the same data and tokenizer.
#   pgolf:    `pgolf train --device cuda --preset baseline` (by a config
#             file: no validation, every step logged), stopped after
#             BENCH_STEPS steps with --stop-after, so that no evaluation of
#             the 62M-token validation split is timed or waited for; run
#             twice, the two loss chains must be equal (the second row).
#   official: the challenge's train_gpt.py under `torchrun --standalone
#             --nproc_per_node=1` with ITERATIONS=BENCH_STEPS,
#             VAL_LOSS_EVERY=0, TRAIN_LOG_EVERY=1, MAX_WALLCLOCK_SECONDS=0
#             (no cap), its own torch.compile and its WARMUP_STEPS (20 by
#             default: the compile happens there, before its clock starts);
#             it still evaluates the validation split at its end, untimed.
# Both logs print, per step, `step:I/N train_loss:L train_time:Tms
# step_avg:Ams` (A = the clock so far / I, the clock stopped during
# validation). ms/step is taken over steps BENCH_SKIP+1..BENCH_STEPS of
# each, from the two step_avg figures: (A_N * N - A_S * S) / (N - S), so
# the first steps (pgolf's cuBLASLt plan search, the official's first
# steps after compiling) count for neither. tokens/s = the log's
# train_batch_tokens per step / that; the ratio is pgolf's tokens/s over
# the official's. The aim is a ratio >= 1.0; it is reported, not a pass
# condition: the row passes when both ran their steps and logged them.
#
# The official script is never part of pgolf: PGOLF_BASELINE_SCRIPT,
# PGOLF_BASELINE_DATA and PGOLF_BASELINE_TOKENIZER say where it and its
# data are (as for ci/baseline-replay.sh); torchrun is the one on PATH.
# Without them, or without a GPU, the rows say why and give no number.
#   PGOLF_BASELINE_SCRIPT=... PGOLF_BASELINE_DATA=... PGOLF_BASELINE_TOKENIZER=... \
#   [BENCH_STEPS=20] [BENCH_SKIP=5] [PGOLF=./pgolf] [OUT=DIR] sh ci/gpu-bench.sh
set -u
cd "$(dirname "$0")/.."
pgolf=${PGOLF:-./pgolf}
out=${OUT:-/tmp/pgolf-gpu-bench}
steps=${BENCH_STEPS:-20}
skip=${BENCH_SKIP:-5}
script=${PGOLF_BASELINE_SCRIPT:-}
data=${PGOLF_BASELINE_DATA:-}
tok=${PGOLF_BASELINE_TOKENIZER:-}
SPEED="ms/step and tokens/s vs official train_gpt.py (1 GPU, baseline)"
CHAINS="train --device cuda, baseline shape, twice: loss chains equal"

row() { printf 'row\t%s\t%s\t%s\n' "$1" "$2" "$3"; }

# window_ms LOG: ms/step over logged steps skip+1..steps from step_avg;
# fails unless the log has train steps skip (when > 0) and steps, the last.
window_ms() {
  awk -v s="$skip" -v n="$steps" '
    $1 ~ /^step:[0-9]+\/[0-9]+$/ && $2 ~ /^train_loss:/ && $4 ~ /^step_avg:[0-9.]+ms/ {
      split($1, a, "[:/]"); i = a[2] + 0
      avg = $4; sub(/^step_avg:/, "", avg); sub(/ms.*$/, "", avg)
      total[i] = avg * i; last = i
    }
    END {
      if (last != n || (s > 0 && !(s in total))) exit 1
      printf "%.2f\n", (total[n] - (s > 0 ? total[s] : 0)) / (n - s)
    }' "$1"
}

# batch_tokens LOG: the train_batch_tokens the run logged.
batch_tokens() { sed -n 's/^train_batch_tokens:\([0-9]*\) .*/\1/p' "$1" | head -n 1; }

tokens_per_s() { awk -v t="$1" -v ms="$2" 'BEGIN { printf "%.0f", t * 1000 / ms }'; }

case $steps$skip in *[!0-9]*) echo "BENCH_STEPS and BENCH_SKIP must be whole numbers" >&2; exit 2 ;; esac
if [ "$skip" -ge "$steps" ]; then echo "BENCH_SKIP ($skip) must be below BENCH_STEPS ($steps)" >&2; exit 2; fi
[ -n "$data" ] && [ -d "$data" ] && [ -n "$tok" ] && [ -f "$tok" ] || {
  why="PGOLF_BASELINE_DATA ('$data') must be a folder and PGOLF_BASELINE_TOKENIZER ('$tok') a file: nothing measured"
  row "$SPEED" skipped "$why"
  row "$CHAINS" skipped "$why"
  exit 0
}
command -v jq >/dev/null 2>&1 || {
  row "$SPEED" skipped "jq is needed to read pgolf's result: nothing measured"
  row "$CHAINS" skipped "jq is needed to read pgolf's result"
  exit 0
}
data=$(cd "$data" && pwd)
tok=$(cd "$(dirname "$tok")" && pwd)/$(basename "$tok")
rm -rf "$out" && mkdir -p "$out"

# ---- pgolf, twice ----
cat >"$out/pgolf.json" <<JSON
{"preset": "baseline", "precision": "mixed", "val_loss_every": 0, "train_log_every": 1}
JSON
pg_fail=
for r in 1 2; do
  "$pgolf" train --config "$out/pgolf.json" --data "$data" --tokenizer "$tok" --device cuda \
    --stop-after "$steps" --out "$out/pgolf-$r" --json >"$out/pgolf-$r.out" 2>"$out/pgolf-$r.err" ||
    { pg_fail="pgolf run $r: exit $?: $(head -n 1 "$out/pgolf-$r.err")"; break; }
done
if [ -n "$pg_fail" ]; then
  row "$SPEED" fail "$pg_fail (no number measured)"
  row "$CHAINS" fail "$pg_fail"
  exit 0
fi
c1=$(jq -r .chain "$out/pgolf-1.out")
c2=$(jq -r .chain "$out/pgolf-2.out")
if [ "$c1" = "$c2" ] && [ -n "$c1" ] && [ "$c1" != null ]; then
  chains_row="pass	$steps steps each, chain $c1"
else
  chains_row="fail	$steps steps each: $c1 vs $c2"
fi
pg_ms=$(window_ms "$out/pgolf-1/train.log") || pg_ms=
pg_ms2=$(window_ms "$out/pgolf-2/train.log") || pg_ms2=
pg_tok=$(batch_tokens "$out/pgolf-1/train.log")
gpu=$(sed -n 's/^device:cuda[:0-9]* name:\(.*\) sm_count:.*/\1/p' "$out/pgolf-1/train.log" | head -n 1)
if [ -z "$pg_ms" ] || [ -z "$pg_ms2" ] || [ -z "$pg_tok" ]; then
  row "$SPEED" fail "pgolf's log ($out/pgolf-1/train.log) lacks train steps $skip and $steps or train_batch_tokens"
  row "$CHAINS" "${chains_row%%	*}" "${chains_row#*	}"
  exit 0
fi
pg_tps=$(tokens_per_s "$pg_tok" "$pg_ms")
pg_said="pgolf $pg_ms ms/step, $pg_tps tokens/s (second run $pg_ms2 ms/step)"

# ---- the official script, once ----
official() {
  [ -n "$script" ] && [ -f "$script" ] ||
    { echo "skipped	PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py ('$script'): official not measured"; return; }
  torchrun=$(command -v torchrun) ||
    { echo "skipped	no torchrun (PyTorch) on PATH: official not measured"; return; }
  mkdir -p "$out/official"
  cp "$script" "$out/official/train_gpt.py"
  (cd "$out/official" && env DATA_PATH="$data" TOKENIZER_PATH="$tok" RUN_ID=gpu-bench \
    ITERATIONS="$steps" VAL_LOSS_EVERY=0 TRAIN_LOG_EVERY=1 MAX_WALLCLOCK_SECONDS=0 \
    "$torchrun" --standalone --nproc_per_node=1 train_gpt.py) >"$out/official.txt" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] ||
    { echo "fail	official train_gpt.py: exit $rc: $(grep -v '^ *$' "$out/official.txt" | tail -n 1) (official not measured)"; return; }
  of_ms=$(window_ms "$out/official.txt") && of_tok=$(batch_tokens "$out/official.txt") && [ -n "$of_tok" ] ||
    { echo "fail	the official log ($out/official.txt) lacks train steps $skip and $steps or train_batch_tokens"; return; }
  of_tps=$(tokens_per_s "$of_tok" "$of_ms")
  ratio=$(awk -v a="$pg_tps" -v b="$of_tps" 'BEGIN { printf "%.3f", a / b }')
  echo "pass	${gpu:+$gpu, }steps $((skip + 1))-$steps of $steps: $pg_said; official $of_ms ms/step, $of_tps tokens/s; pgolf/official tokens/s $ratio (aim >= 1.0, reported, not a pass condition)"
}
speed=$(official)
case $speed in
  pass*) ;;
  *) speed="${speed%%	*}	${speed#*	}; measured: $pg_said" ;;
esac
row "$SPEED" "${speed%%	*}" "${speed#*	}"
row "$CHAINS" "${chains_row%%	*}" "${chains_row#*	}"
exit 0
