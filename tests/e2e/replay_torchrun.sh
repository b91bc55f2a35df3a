#!/bin/sh
# A whole replay of a torchrun-launched submission on the CPU: pgolf replay
# runs tests/stand-ins/torchrun (8 ranks playing train_gpt.py) under the
# real sandbox, with NVML's stand-in attesting 8 H100 SXM. Checked: the
# ranks start, the external clock times the run, the artifact is measured
# from the file, the attestation and samples are in the manifest; an
# overrunning run is killed at the (test-sized) limit with every rank; a
# failing rank fails the run; another artifact size than the log's is
# caught.
. "$(dirname "$0")/lib.sh"

if ! command -v bwrap >/dev/null 2>&1; then
  fail replay-torchrun-environment "skipped: bubblewrap is not installed (apt-get install -y bubblewrap)"
  exit 1
fi
HERE=$(cd "$(dirname "$0")/../.." && pwd)
STANDINS=$HERE/tests/stand-ins
FAKE=$(dirname "$PGOLF")/tests/libfake_nvml.so
[ -f "$FAKE" ] || { fail replay-torchrun-fake-nvml "no $FAKE (make build)"; exit 1; }

D="$TMP/data"
mkdir -p "$D"
printf 'shard' >"$D/fineweb_val_000000.bin"
printf 'model' >"$TMP/tok.model"

# fixture DIR STANDIN_LINE: a self-made submission folder whose
# train_gpt.py tells the stand-in what to play.
fixture() {
  mkdir -p "$1"
  { echo "# standin: $2"; echo 'import torch  # the stand-in never runs this'; } >"$1/train_gpt.py"
  printf '{"val_bpb": 1.21, "seed_results": {"1337": {"val_bpb": 1.21}}}\n' >"$1/submission.json"
  printf '# A fixture\n\n    torchrun --standalone --nproc_per_node=8 train_gpt.py\n' >"$1/README.md"
}

# run NAME RC OUT DIR [options]: pgolf replay of DIR with the stand-in.
run() {
  name=$1 want=$2 out=$3 dir=$4
  shift 4
  PGOLF_NVML_LIBRARY=$FAKE expect_rc "$name" "$want" "$PGOLF" replay --record "$dir" --seed 1337 \
    --out "$out" --data "$D" --tokenizer "$TMP/tok.model" --ro-bind "$STANDINS" "$@" \
    -- "$STANDINS/torchrun" --standalone --nproc_per_node=8 train_gpt.py
}

jq_true() {
  if jq -e "$3" "$2" >/dev/null 2>&1; then ok "$1"; else
    fail "$1" "$3 is not true of $2: $(jq -c '{timings, findings, artifact, exit}' "$2" 2>&1 | head -c 700)"
  fi
}

# ---- a clean 8-rank run ----
fixture "$TMP/ok" "steps=6 step_ms=150 art_bytes=23456"
run torchrun-clean-pass 0 "$TMP/o1" "$TMP/ok"
M=$TMP/o1/replay-seed1337.json
S=$TMP/o1/scratch-seed1337
n=$(cut -d' ' -f2 "$S/ranks.txt" | sort -u | wc -l)
[ "$n" -eq 8 ] && [ "$(wc -l <"$S/ranks.txt")" -eq 48 ] && ok torchrun-eight-ranks ||
  fail torchrun-eight-ranks "ranks seen: $n, lines $(wc -l <"$S/ranks.txt")"
jq_true torchrun-verdict "$M" '.verdict == "pass" and .exit.status == 0 and (.exit.killed_at_limit | not)'
jq_true torchrun-log-source "$M" '.log.source == "logs/pgolf_replay_seed1337.txt" and ([.losses[].step] == [1,2,3,4,5,6])'
# The external clock: six steps of 150 ms slept, measured as 0.7 to 3 s
# (a busy machine is slower, never faster); the log's own clock is 900 ms.
jq_true torchrun-external-clock "$M" \
  '.timings.train_ms >= 700 and .timings.train_ms < 3000 and .timings.train_logged_ms == 900 and
   .timings.first_train_step_ms > 0 and .timings.end_of_evaluation_ms >= .timings.end_of_training_ms'
jq_true torchrun-artifact-accounting "$M" \
  ".artifact.path == \"final_model.int8.ptz\" and .artifact.bytes == 23456 and
   .accounting.code_bytes == $(wc -c <"$TMP/ok/train_gpt.py") and
   .accounting.total_bytes == 23456 + $(wc -c <"$TMP/ok/train_gpt.py") and .accounting.limit == 16000000"
jq_true torchrun-result "$M" '.result.val_bpb == 1.21 and .claim.val_bpb == 1.21'
jq_true torchrun-attestation "$M" \
  '.hardware.attested and .hardware.matches_challenge and (.hardware.gpus | length) == 8 and
   (.hardware.gpus | all(.form_factor == "SXM" and .ecc)) and .hardware.processes_before == [] and
   (.hardware.samples.samples | length) >= 8'
jq_true torchrun-command-recorded "$M" '.record.command[-3:] == ["--standalone", "--nproc_per_node=8", "train_gpt.py"]'

# ---- an overrun: killed at the limit (1 + 1 + 1 s here), every rank with it ----
fixture "$TMP/slow" "steps=4 step_ms=100 overrun=1"
start=$(date +%s)
run torchrun-overrun-fails 1 "$TMP/o2" "$TMP/slow" --budget-train 1 --budget-eval 1 --grace 1
took=$(($(date +%s) - start))
M=$TMP/o2/replay-seed1337.json
jq_true torchrun-overrun-killed "$M" \
  '.exit.killed_at_limit and .timings.killed_at_ms >= 3000 and .timings.killed_at_ms < 3600 and
   ([.findings[].code] | index("KILLED_AT_LIMIT")) and ([.findings[].code] | index("TRAIN_OVER_BUDGET"))'
[ "$took" -le 8 ] && ok torchrun-overrun-wall || fail torchrun-overrun-wall "took ${took}s"
# No rank outlives the kill: ranks.txt stops growing.
a=$(wc -l <"$TMP/o2/scratch-seed1337/ranks.txt")
sleep 0.6
b=$(wc -l <"$TMP/o2/scratch-seed1337/ranks.txt")
[ "$a" -eq "$b" ] && [ "$a" -ge 16 ] && ok torchrun-ranks-killed || fail torchrun-ranks-killed "ranks.txt grew $a -> $b"

# ---- one rank fails: torchrun stops the others and exits non-zero ----
fixture "$TMP/crash" "steps=5 step_ms=100 fail_rank=5"
run torchrun-rank-fails 1 "$TMP/o3" "$TMP/crash"
jq_true torchrun-rank-fails-reported "$TMP/o3/replay-seed1337.json" \
  '.exit.status == 1 and .result == null and .artifact == null and
   ([.findings[] | select(.code == "NONZERO_EXIT" and (.message | test("status 1.*rank5 exited with status 3")))] | length) == 1'

# ---- the log reports another artifact size than the file's ----
fixture "$TMP/lie" "steps=2 step_ms=50 art_bytes=20000 logged_bytes=15000"
run torchrun-artifact-lie 1 "$TMP/o4" "$TMP/lie" --artifact final_model.int8.ptz
jq_true torchrun-artifact-mismatch "$TMP/o4/replay-seed1337.json" \
  '.artifact.bytes == 20000 and ([.findings[].code] | index("ARTIFACT_MISMATCH"))'
