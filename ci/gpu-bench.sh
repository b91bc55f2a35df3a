#!/bin/sh
# The speed of `pgolf train --device cuda` against the official baseline
# train_gpt.py under torchrun on the same GPUs, at each GPU count G of
# GPU_COUNTS (default "1 2 8"; official world sizes, 1, 2, 4 or 8), and
# pgolf's run-to-run bits at the 1-GPU shape. Rows for ci/gpu-check.sh's table, printed last as
#   row<TAB>CHECK<TAB>RESULT<TAB>DETAIL   (RESULT pass, fail, skipped, not run)
# one per count in increasing order, "ms/step and tokens/s vs official
# train_gpt.py (G GPU[s], baseline)", then the chains row, "train --device
# cuda, baseline shape, twice: loss chains equal", then the losses row
# (below).
#
# The baseline shape at world size G on G GPUs, as the official script runs
# there: 524,288 tokens a step, each of the G ranks doing 8/G gradient-
# accumulation micro-steps, bf16 autocast (pgolf's --precision mixed), the
# same data and tokenizer.
#   pgolf:    `pgolf train --device cuda --preset baseline` (by a config
#             file: no validation, every step logged), stopped after
#             BENCH_STEPS steps with --stop-after, so that no evaluation of
#             the 62M-token validation split is timed or waited for. At 1
#             GPU without --gpus (world size 1), run twice: the two loss
#             chains must be equal (the chains row). At G > 1 with
#             `--gpus G --world G` (G processes under Open MPI's mpirun,
#             one per GPU, which pgolf starts itself and, where it cannot,
#             says why; process 0 alone writes train.log), once: its loss
#             chain is given in its row (the world size sets the order of
#             the sums, so that chain need not be the 1-GPU one).
#   official: the challenge's train_gpt.py under `torchrun --standalone
#             --nproc_per_node=G` (world size G, so grad_accum_steps 8/G)
#             with ITERATIONS=BENCH_STEPS, VAL_LOSS_EVERY=0,
#             TRAIN_LOG_EVERY=1, MAX_WALLCLOCK_SECONDS=0 (no cap), its own
#             torch.compile and its WARMUP_STEPS (20 by default: the
#             compile happens there, before its clock starts); it still
#             evaluates the validation split at its end, untimed. Its log
#             is the master rank's, logs/gpu-bench-G.txt.
# Both logs print `world_size:W grad_accum_steps:A` (W must be G, or the
# row fails) and, per step, `step:I/N train_loss:L train_time:Tms
# step_avg:Ams` (A = the clock so far / I, the clock stopped during
# validation). ms/step is taken over steps BENCH_SKIP+1..BENCH_STEPS of
# each, from the two step_avg figures: (A_N * N - A_S * S) / (N - S), so
# the first steps (pgolf's cuBLASLt plan search, the official's first
# steps after compiling) count for neither. tokens/s = the log's
# train_batch_tokens (global: all ranks' tokens of one step) / that; the
# ratio is pgolf's tokens/s over the official's. At G > 1 the row also
# gives each side's scaling efficiency, its tokens/s / G / its own 1-GPU
# tokens/s, where the 1-GPU row measured that side. The aim is a ratio
# >= 1.0; the ratio and the efficiencies are reported, not pass
# conditions: a row passes when both sides ran their steps at world G and
# logged them (and, at G > 1, pgolf gave its chain).
#
# A count above this machine's GPUs (`pgolf gpu --json`'s devices) is a
# "not run" row that says "only N GPUs" and gives no number: on a GPU
# machine nothing may be left unchecked, so ci/gpu-check.sh fails it like
# any non-pass. (The count 1 always runs: where no GPU is usable, pgolf's
# own exit says why.) The chains row needs the count 1; without it in
# GPU_COUNTS that row is skipped.
#
# Both sides train the same schedule (pgolf's config takes iterations =
# BENCH_STEPS, as the official's ITERATIONS, with the same warmdown_iters,
# seed and data, and the official restores its initial state and loader
# after its warmup), so their logged losses compare step by step: the row
# "train --device cuda vs official train_gpt.py: baseline losses" (1 GPU)
# passes when every step's train_loss of pgolf's first run is within 1e-2
# of the official's (the GPU's mixed-precision tolerance against the
# official goldens, tests/e2e/train_golden.sh; the logs round to 1e-4), and
# gives the largest difference and its step.
#
# The official script is never part of pgolf: PGOLF_BASELINE_SCRIPT,
# PGOLF_BASELINE_DATA and PGOLF_BASELINE_TOKENIZER say where it and its
# data are (as for ci/baseline-replay.sh); torchrun is the one on PATH.
# Without them, or without a GPU, the rows say why and give no number.
#   PGOLF_BASELINE_SCRIPT=... PGOLF_BASELINE_DATA=... PGOLF_BASELINE_TOKENIZER=... \
#   [GPU_COUNTS="1 2 8"] [BENCH_STEPS=20] [BENCH_SKIP=5] [PGOLF=./pgolf] \
#   [OUT=DIR] sh ci/gpu-bench.sh
# Logs: OUT/gpus-G/ (pgolf-R.out, .err and pgolf-R/train.log; official.txt,
# torchrun's output, and official/logs/gpu-bench-G.txt).
set -u
cd "$(dirname "$0")/.."
pgolf=${PGOLF:-./pgolf}
out=${OUT:-/tmp/pgolf-gpu-bench}
steps=${BENCH_STEPS:-20}
skip=${BENCH_SKIP:-5}
counts=${GPU_COUNTS:-1 2 8}
script=${PGOLF_BASELINE_SCRIPT:-}
data=${PGOLF_BASELINE_DATA:-}
tok=${PGOLF_BASELINE_TOKENIZER:-}
CHAINS="train --device cuda, baseline shape, twice: loss chains equal"
LOSSES="train --device cuda vs official train_gpt.py: baseline losses, same GPU and schedule"
LOSS_TOL=1e-2
T=$(printf '\t')

row() { printf 'row\t%s\t%s\t%s\n' "$1" "$2" "$3"; }

# gpus N: "1 GPU", "N GPUs".
gpus() { if [ "$1" = 1 ]; then echo "1 GPU"; else echo "$1 GPUs"; fi; }

# speed_name G: the speed row's name at G GPUs.
speed_name() { echo "ms/step and tokens/s vs official train_gpt.py ($(gpus "$1"), baseline)"; }

# every_row RESULT DETAIL: each count's speed row, the chains row and the
# losses row alike.
every_row() {
  for g in $counts; do row "$(speed_name "$g")" "$1" "$2"; done
  row "$CHAINS" "$1" "$2"
  row "$LOSSES" "$1" "$2"
}

# losses_vs PGOLF_LOG OFFICIAL_LOG: "RESULT<TAB>DETAIL" of the losses row:
# each logged train_loss of steps 1..steps, pgolf's against the official's.
losses_vs() {
  awk -v n="$steps" -v tol="$LOSS_TOL" -v T="$T" '
    $1 ~ /^step:[0-9]+\/[0-9]+$/ && $2 ~ /^train_loss:/ {
      split($1, a, "[:/]"); i = a[2] + 0; v = $2; sub(/^train_loss:/, "", v)
      if (FILENAME == ARGV[1]) p[i] = v; else o[i] = v
    }
    END {
      for (i = 1; i <= n; i++) {
        if (!(i in p) || !(i in o)) { printf "fail%sstep %d is missing from %s\n", T, i, !(i in p) ? "pgolf'"'"'s log" : "the official log"; exit }
        d = p[i] - o[i]; if (d < 0) d = -d
        if (i == 1 || d > worst) { worst = d; at = i }
      }
      printf "%s%smax |train_loss difference| %.4f at step %d of %d (tolerance %s); step 1: pgolf %s, official %s\n",
        worst <= tol ? "pass" : "fail", T, worst, at, n, tol, p[1], o[1]
    }' "$1" "$2"
}

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

# world_of LOG: the world_size the run logged.
world_of() { sed -n 's/^world_size:\([0-9]*\) .*/\1/p' "$1" | head -n 1; }

tokens_per_s() { awk -v t="$1" -v ms="$2" 'BEGIN { printf "%.0f", t * 1000 / ms }'; }

# efficiency TPS G TPS1: tokens/s per GPU against 1 GPU's.
efficiency() { awk -v t="$1" -v g="$2" -v t1="$3" 'BEGIN { printf "%.2f", t / g / t1 }'; }

# first_words FILE: pgolf's own message (under mpirun, among its lines),
# else the file's first line.
first_words() { grep -m 1 '^pgolf: ' "$1" || head -n 1 "$1"; }

case $steps$skip in *[!0-9]*) echo "BENCH_STEPS and BENCH_SKIP must be whole numbers" >&2; exit 2 ;; esac
if [ "$skip" -ge "$steps" ]; then echo "BENCH_SKIP ($skip) must be below BENCH_STEPS ($steps)" >&2; exit 2; fi
for g in $counts; do
  case $g in
    1 | 2 | 4 | 8) ;;
    *) echo "GPU_COUNTS ('$counts') wants counts among 1, 2, 4 and 8 (the official world sizes)" >&2; exit 2 ;;
  esac
done
# In increasing order, each once: the 1-GPU figures come first.
counts=$(for g in $counts; do echo "$g"; done | sort -nu | tr '\n' ' ')
counts=${counts% }
[ -n "$counts" ] || { echo "GPU_COUNTS is empty" >&2; exit 2; }
[ -n "$data" ] && [ -d "$data" ] && [ -n "$tok" ] && [ -f "$tok" ] || {
  every_row skipped "PGOLF_BASELINE_DATA ('$data') must be a folder and PGOLF_BASELINE_TOKENIZER ('$tok') a file: nothing measured"
  exit 0
}
command -v jq >/dev/null 2>&1 || {
  every_row skipped "jq is needed to read pgolf's results: nothing measured"
  exit 0
}
data=$(cd "$data" && pwd)
tok=$(cd "$(dirname "$tok")" && pwd)/$(basename "$tok")
rm -rf "$out" && mkdir -p "$out"
cat >"$out/pgolf.json" <<JSON
{"preset": "baseline", "precision": "mixed", "iterations": $steps, "val_loss_every": 0, "train_log_every": 1}
JSON

# This machine's GPUs, as pgolf sees them (and why none, where it says).
"$pgolf" gpu --json >"$out/gpu.json" 2>"$out/gpu.err"
ngpu=$(jq '.devices | length' "$out/gpu.json" 2>/dev/null)
case $ngpu in '' | *[!0-9]*) ngpu=0 ;; esac
gpu_why=
[ "$ngpu" -gt 0 ] || gpu_why=$(first_words "$out/gpu.err" | sed 's/^pgolf: //')

# pgolf_train DIR [FLAGS...]: one pgolf run at the baseline shape into
# DIR (its result in DIR.out, its messages in DIR.err).
pgolf_train() {
  d=$1
  shift
  "$pgolf" train --config "$out/pgolf.json" --data "$data" --tokenizer "$tok" --device cuda "$@" \
    --stop-after "$steps" --out "$d" --json >"$d.out" 2>"$d.err"
}

# official G DIR: the official script at world G in DIR; sets of_res
# (pass, fail or skipped), of_why (why not pass), of_ms and of_tps.
official() {
  of_ms='' of_tps=''
  of_res=skipped
  [ -n "$script" ] && [ -f "$script" ] ||
    { of_why="PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py ('$script'): official not measured"; return; }
  torchrun=$(command -v torchrun) ||
    { of_why="no torchrun (PyTorch) on PATH: official not measured"; return; }
  of_res=fail
  mkdir -p "$2/official"
  cp "$script" "$2/official/train_gpt.py"
  (cd "$2/official" && env DATA_PATH="$data" TOKENIZER_PATH="$tok" RUN_ID="gpu-bench-$1" \
    ITERATIONS="$steps" VAL_LOSS_EVERY=0 TRAIN_LOG_EVERY=1 MAX_WALLCLOCK_SECONDS=0 \
    "$torchrun" --standalone --nproc_per_node="$1" train_gpt.py) >"$2/official.txt" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] ||
    { of_why="official train_gpt.py (torchrun --nproc_per_node=$1): exit $rc: $(grep -v '^ *$' "$2/official.txt" | tail -n 1) (official not measured)"; return; }
  log=$2/official/logs/gpu-bench-$1.txt
  [ -f "$log" ] || { of_why="the official run left no master log ($log): official not measured"; return; }
  w=$(world_of "$log")
  [ "$w" = "$1" ] || { of_why="the official log ($log) says world_size:$w, not $1: official not measured"; return; }
  of_ms=$(window_ms "$log") && tok_n=$(batch_tokens "$log") && [ -n "$tok_n" ] ||
    { of_ms='' of_why="the official log ($log) lacks train steps $skip and $steps or train_batch_tokens"; return; }
  of_tps=$(tokens_per_s "$tok_n" "$of_ms")
  of_res=pass
}

pg_tps1='' of_tps1=''
chains_row="skipped${T}GPU_COUNTS ('$counts') has no 1: pgolf's two 1-GPU runs were not made"
losses_row="skipped${T}GPU_COUNTS ('$counts') has no 1: nothing compared"
for g in $counts; do
  name=$(speed_name "$g")
  if [ "$g" -gt 1 ] && [ "$g" -gt "$ngpu" ]; then
    row "$name" "not run" "not run: only $(gpus "$ngpu")${gpu_why:+ (pgolf gpu: $gpu_why)}"
    continue
  fi
  dir=$out/gpus-$g
  mkdir -p "$dir"

  # ---- pgolf: twice at 1 GPU, once at --gpus G --world G ----
  pg_fail=
  if [ "$g" = 1 ]; then
    for r in 1 2; do
      pgolf_train "$dir/pgolf-$r" ||
        { rc=$?; pg_fail="pgolf run $r: exit $rc: $(first_words "$dir/pgolf-$r.err")"; break; }
    done
  else
    pgolf_train "$dir/pgolf-1" --gpus "$g" --world "$g" ||
      { rc=$?; pg_fail="pgolf --gpus $g --world $g: exit $rc: $(first_words "$dir/pgolf-1.err")"; }
  fi
  if [ -n "$pg_fail" ]; then
    row "$name" fail "$pg_fail (no number measured)"
    [ "$g" = 1 ] && chains_row="fail${T}$pg_fail" losses_row="fail${T}$pg_fail"
    continue
  fi
  c1=$(jq -r .chain "$dir/pgolf-1.out" 2>/dev/null)
  if [ "$g" = 1 ]; then
    c2=$(jq -r .chain "$dir/pgolf-2.out" 2>/dev/null)
    if [ "$c1" = "$c2" ] && [ -n "$c1" ] && [ "$c1" != null ]; then
      chains_row="pass${T}$steps steps each, chain $c1"
    else
      chains_row="fail${T}$steps steps each: $c1 vs $c2"
    fi
  fi
  log=$dir/pgolf-1/train.log
  pg_ms=$(window_ms "$log") || pg_ms=
  pg_ms2=- # one run at G > 1
  [ "$g" = 1 ] && { pg_ms2=$(window_ms "$dir/pgolf-2/train.log") || pg_ms2=; }
  pg_tok=$(batch_tokens "$log")
  pg_w=$(world_of "$log")
  if [ "$g" = 1 ]; then
    gpu=$(sed -n 's/^device:cuda[:0-9]* name:\(.*\) sm_count:.*/\1/p' "$log" | head -n 1)
  else # the G devices the processes take, one each (as `pgolf gpu` lists them)
    gpu=$(jq -r --argjson g "$g" '[.devices[:$g][].name] | group_by(.) | map("\(length) x \(.[0])") | join(" + ")' "$out/gpu.json" 2>/dev/null)
  fi
  if [ -z "$pg_ms" ] || [ -z "$pg_ms2" ] || [ -z "$pg_tok" ]; then
    row "$name" fail "pgolf's log ($log) lacks train steps $skip and $steps or train_batch_tokens"
    continue
  fi
  if [ "$pg_w" != "$g" ]; then
    row "$name" fail "pgolf's log ($log) says world_size:$pg_w, not $g (no number measured)"
    continue
  fi
  if [ "$g" != 1 ] && { [ -z "$c1" ] || [ "$c1" = null ]; }; then
    row "$name" fail "pgolf --gpus $g --world $g gave no loss chain ($dir/pgolf-1.out) (no number measured)"
    continue
  fi
  pg_tps=$(tokens_per_s "$pg_tok" "$pg_ms")
  if [ "$g" = 1 ]; then
    pg_tps1=$pg_tps
    pg_said="pgolf $pg_ms ms/step, $pg_tps tokens/s (second run $pg_ms2 ms/step)"
  else
    pg_said="pgolf $pg_ms ms/step, $pg_tps tokens/s, chain $c1"
  fi

  # ---- the official script, once ----
  official "$g" "$dir"
  if [ "$g" = 1 ]; then
    of_tps1=$of_tps
    if [ "$of_res" = pass ]; then losses_row=$(losses_vs "$dir/pgolf-1/train.log" "$dir/official/logs/gpu-bench-1.txt")
    else losses_row="$of_res${T}$of_why"; fi
  fi
  # Each side's scaling efficiency at G > 1, where its 1-GPU row measured it.
  eff=
  if [ "$g" != 1 ]; then
    if [ -n "$pg_tps1" ]; then e_pg=$(efficiency "$pg_tps" "$g" "$pg_tps1"); else e_pg="not measured (no 1-GPU figure)"; fi
    if [ -z "$of_tps" ]; then e_of="not measured"
    elif [ -n "$of_tps1" ]; then e_of=$(efficiency "$of_tps" "$g" "$of_tps1")
    else e_of="not measured (no 1-GPU figure)"; fi
    eff="; scaling efficiency (tokens/s / $g / 1 GPU's): pgolf $e_pg, official $e_of"
  fi
  if [ "$of_res" = pass ]; then
    ratio=$(awk -v a="$pg_tps" -v b="$of_tps" 'BEGIN { printf "%.3f", a / b }')
    row "$name" pass "${gpu:+$gpu, }steps $((skip + 1))-$steps of $steps: $pg_said; official $of_ms ms/step, $of_tps tokens/s; pgolf/official tokens/s $ratio (aim >= 1.0, reported, not a pass condition)$eff"
  else
    row "$name" "$of_res" "$of_why; measured: $pg_said$eff"
  fi
done
row "$CHAINS" "${chains_row%%"$T"*}" "${chains_row#*"$T"}"
row "$LOSSES" "${losses_row%%"$T"*}" "${losses_row#*"$T"}"
exit 0
