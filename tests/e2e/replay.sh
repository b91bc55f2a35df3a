# pgolf replay --record: fake submissions (POSIX sh scripts written here)
# that print challenge-format logs with chosen timings, sizes and values,
# run under the real bubblewrap sandbox with small budgets.
. "$(dirname "$0")/lib.sh"

# The sandbox is the point of these tests: where bwrap cannot run, say so
# as a failure of the environment instead of passing without it.
if ! command -v bwrap >/dev/null 2>&1; then
  fail replay-environment "skipped: bubblewrap is not installed (apt-get install -y bubblewrap)"
  exit 1
fi
if ! why=$(bwrap --unshare-all --die-with-parent --ro-bind /usr /usr --symlink usr/bin /bin \
  --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev -- true 2>&1); then
  fail replay-environment "skipped: bwrap cannot create a sandbox here: $why"
  exit 1
fi

D="$TMP/data"
mkdir -p "$D"
printf 'shard' >"$D/fineweb_val_000000.bin"
printf 'model' >"$TMP/tok.model"

# make_sub DIR STEPS SLEEP ART_BYTES [LOGGED_BYTES [BPB [TRAIN_MS_PER_STEP]]]: a fake
# submission that logs STEPS training steps SLEEP seconds apart, writes an
# artifact of ART_BYTES, reports LOGGED_BYTES and a final val_bpb of BPB.
make_sub() {
  dir=$1 steps=$2 sleep=$3 art=$4 logged=${5:-$4} bpb=${6:-1.21000000} per=${7:-100}
  mkdir -p "$dir"
  cat >"$dir/train.sh" <<EOF
#!/bin/sh
mkdir -p logs
log() { echo "\$1"; echo "\$1" >> "logs/\$RUN_ID.txt"; }
log "seed:\$SEED"
log "data:\$DATA_PATH tokenizer:\$TOKENIZER_PATH"
i=1
while [ \$i -le $steps ]; do
  sleep $sleep
  log "step:\$i/$steps train_loss:\$((10 - i % 10)).5000 train_time:\$((i * $per))ms step_avg:$per.00ms"
  i=\$((i + 1))
done
log "step:$steps/$steps val_loss:2.1000 val_bpb:1.2500 train_time:\$(($steps * $per))ms step_avg:$per.00ms"
sleep 0.3
head -c $art /dev/zero > final_model.int8.ptz
log "Serialized model int8+zlib: $logged bytes (payload:1 raw_torch:2 payload_ratio:1.00x)"
sleep 0.2
log "final_int8_zlib_roundtrip val_loss:2.0500 val_bpb:$(printf '%.4f' "$bpb") eval_time:200ms"
log "final_int8_zlib_roundtrip_exact val_loss:2.05000000 val_bpb:$bpb"
EOF
  printf '{"seed_results": {"1337": {"val_bpb": 1.21}}}\n' >"$dir/submission.json"
}

# replay NAME RC OUT DIR [options...] -- CMD...: run pgolf replay with the data bound.
replay() {
  name=$1 want=$2 out=$3 dir=$4
  shift 4
  expect_rc "$name" "$want" "$PGOLF" replay --record "$dir" --seed 1337 --out "$out" \
    --data "$D" --tokenizer "$TMP/tok.model" "$@"
}

# has_code NAME MANIFEST CODE: the manifest lists a finding with CODE.
has_code() {
  if jq -e --arg c "$3" '[.findings[].code] | index($c)' "$2" >/dev/null 2>&1; then ok "$1"; else
    fail "$1" "no $3 in $(jq -c '[.findings[] | .code + ": " + .message]' "$2" 2>&1 | head -c 600)"
  fi
}

# jq_true NAME MANIFEST EXPR: EXPR holds on the manifest.
jq_true() {
  if jq -e "$3" "$2" >/dev/null 2>&1; then ok "$1"; else
    fail "$1" "$3 is not true of $2: $(jq -c '.timings, .findings' "$2" 2>&1 | head -c 600)"
  fi
}

# ---- a clean run: passes, times and sizes measured from the files ----
make_sub "$TMP/clean" 5 0.1 1000
replay replay-clean-pass 0 "$TMP/o1" "$TMP/clean" -- sh train.sh
M="$TMP/o1/replay-seed1337.json"
jq_true replay-clean-verdict "$M" '.verdict == "pass" and (.findings | length) == 0'
jq_true replay-artifact-bytes-from-file "$M" \
  '.artifact.path == "final_model.int8.ptz" and .artifact.bytes == 1000 and .accounting.total_bytes == 1000 + .code.entry_bytes'
jq_true replay-artifact-digest "$M" \
  ".artifact.sha256 == \"$(head -c 1000 /dev/zero | sha256sum | cut -c1-64)\""
# The artifact appears after the last step (>= 300 ms later, by the script's
# sleep) and before the final metric, on the replay's clock.
jq_true replay-artifact-timing "$M" \
  '.artifact.created_ms >= .timings.end_of_training_ms + 250 and .artifact.created_ms <= .timings.end_of_evaluation_ms and .timings.end_of_evaluation_ms <= .timings.exit_ms'
jq_true replay-train-clock "$M" \
  '.timings.first_train_step_ms >= 50 and .timings.train_ms >= 400 and .timings.train_ms < 3000 and .timings.train_logged_ms == 500'
jq_true replay-losses "$M" '[.losses[].step] == [1,2,3,4,5] and .losses[0].loss == 9.5'
jq_true replay-log-source "$M" '.log.source == "logs/pgolf_replay_seed1337.txt" and .log.lines == 11'
jq_true replay-data-digest "$M" \
  ".data.files[0].sha256 == \"$(sha256sum "$D/fineweb_val_000000.bin" | cut -c1-64)\" and .tokenizer.bytes == 5"
jq_true replay-claim-read "$M" '.claim.val_bpb == 1.21 and .result.val_bpb == 1.21'
# Inside, the data and tokenizer are at fixed read-only paths.
if grep -q '^data:/data tokenizer:/tokenizer/tok.model$' "$TMP/o1/scratch-seed1337/logs/pgolf_replay_seed1337.txt"; then
  ok replay-inside-paths; else fail replay-inside-paths "$(head -3 "$TMP/o1/scratch-seed1337/logs/"*)"; fi
[ -f "$TMP/clean/final_model.int8.ptz" ] && fail replay-folder-untouched "the run wrote into the folder" \
  || ok replay-folder-untouched

# ---- the claim differs beyond the tolerance, and within it ----
make_sub "$TMP/claim" 2 0.05 1000 1000 1.21500000
replay replay-claim-mismatch 1 "$TMP/o2" "$TMP/claim" -- sh train.sh
has_code replay-claim-mismatch-code "$TMP/o2/replay-seed1337.json" CLAIM_MISMATCH
replay replay-claim-within-tolerance 0 "$TMP/o2b" "$TMP/claim" --tolerance 0.01 -- sh train.sh

# ---- artifact size: the file, not the log, is counted ----
make_sub "$TMP/lie" 2 0.05 1200 1000
replay replay-artifact-not-logged-size 1 "$TMP/o3" "$TMP/lie" -- sh train.sh
has_code replay-artifact-not-found "$TMP/o3/replay-seed1337.json" ARTIFACT_NOT_FOUND
replay replay-artifact-named 1 "$TMP/o3b" "$TMP/lie" --artifact final_model.int8.ptz -- sh train.sh
has_code replay-artifact-mismatch "$TMP/o3b/replay-seed1337.json" ARTIFACT_MISMATCH
jq_true replay-artifact-named-bytes "$TMP/o3b/replay-seed1337.json" '.artifact.bytes == 1200'
make_sub "$TMP/big" 2 0.05 16000000
replay replay-size-over-limit 1 "$TMP/o4" "$TMP/big" -- sh train.sh
has_code replay-size-over-limit-code "$TMP/o4/replay-seed1337.json" SIZE_OVER_LIMIT

# ---- an overrunning program is killed at the hard limit (2 + 1 + 1 s) ----
make_sub "$TMP/slow" 100 0.1 1000
start=$(date +%s)
replay replay-overrun-fails 1 "$TMP/o5" "$TMP/slow" --budget-train 2 --budget-eval 1 --grace 1 -- sh train.sh
took=$(($(date +%s) - start))
M="$TMP/o5/replay-seed1337.json"
has_code replay-overrun-killed "$M" KILLED_AT_LIMIT
has_code replay-overrun-train-budget "$M" TRAIN_OVER_BUDGET
jq_true replay-overrun-kill-time "$M" \
  '.exit.killed_at_limit and .timings.killed_at_ms >= 4000 and .timings.killed_at_ms < 4500 and .timings.end_of_evaluation_ms == null'
if [ "$took" -le 9 ]; then ok replay-overrun-wall; else fail replay-overrun-wall "took ${took}s"; fi

# ---- over the training budget on the replay's clock, without a kill ----
make_sub "$TMP/long" 10 0.2 1000 1000 1.21000000 10
replay replay-train-over-clock 1 "$TMP/o6" "$TMP/long" --budget-train 1 --budget-eval 5 --grace 5 -- sh train.sh
M="$TMP/o6/replay-seed1337.json"
has_code replay-train-over-clock-code "$M" TRAIN_OVER_BUDGET
jq_true replay-train-over-clock-measured "$M" '.timings.train_ms > 1500 and .timings.train_logged_ms == 100 and (.exit.killed_at_limit | not)'
# The log's own clock past the budget is caught too.
make_sub "$TMP/logclock" 2 0.05 1000 1000 1.21000000 700000
replay replay-train-over-logged 1 "$TMP/o6b" "$TMP/logclock" -- sh train.sh
has_code replay-train-over-logged-code "$TMP/o6b/replay-seed1337.json" TRAIN_OVER_BUDGET

# ---- evaluation past its budget ----
make_sub "$TMP/evalslow" 2 0.05 1000
sed -i 's/^sleep 0.2$/sleep 2.2/' "$TMP/evalslow/train.sh"
replay replay-eval-over 1 "$TMP/o7" "$TMP/evalslow" --budget-eval 2 -- sh train.sh
has_code replay-eval-over-code "$TMP/o7/replay-seed1337.json" EVAL_OVER_BUDGET

# ---- a network connection fails inside the sandbox and is reported ----
mkdir -p "$TMP/net"
cat >"$TMP/net/train.sh" <<'EOF'
#!/bin/bash
# /proc is the sandbox's own: its network namespace has only loopback.
sed -n 's/^ *\([a-z0-9]*\):.*/\1/p' /proc/net/dev > ifaces.txt
if : 3<>/dev/tcp/1.1.1.1/80; then echo CONNECTED; exit 0; fi
if : 4<>/dev/tcp/127.0.0.1/22; then echo LOOPBACK_CONNECTED; fi
exit 4
EOF
replay replay-network-fails 1 "$TMP/o8" "$TMP/net" -- bash train.sh
M="$TMP/o8/replay-seed1337.json"
has_code replay-network-violation "$M" SANDBOX_VIOLATION
has_code replay-network-nonzero "$M" NONZERO_EXIT
if grep -q CONNECTED "$TMP/o8/scratch-seed1337/ifaces.txt" 2>/dev/null || [ "$(cat "$TMP/o8/scratch-seed1337/ifaces.txt")" != lo ]; then
  fail replay-network-only-loopback "interfaces inside: $(cat "$TMP/o8/scratch-seed1337/ifaces.txt")"
else ok replay-network-only-loopback; fi

# ---- writes outside the scratch folder fail ----
mkdir -p "$TMP/escape"
cat >"$TMP/escape/train.sh" <<EOF
#!/bin/sh
n=0
echo x > ../escaped || n=\$((n + 1))
echo x > "\$DATA_PATH/evil" || n=\$((n + 1))
echo x > "$TMP/escaped-abs" || n=\$((n + 1))
echo x > "$TMP/o9/escaped-out" || n=\$((n + 1))
echo x > inside.txt || n=100
echo "failed writes: \$n"
exit \$n
EOF
replay replay-escape-fails 1 "$TMP/o9" "$TMP/escape" -- sh train.sh
M="$TMP/o9/replay-seed1337.json"
has_code replay-escape-violation "$M" SANDBOX_VIOLATION
jq_true replay-escape-all-denied "$M" '.exit.status == 4'
if [ -e "$TMP/o9/escaped" ] || [ -e "$TMP/escaped-abs" ] || [ -e "$TMP/o9/escaped-out" ] || [ -e "$D/evil" ]; then
  fail replay-escape-nothing-written "$(ls "$TMP" "$TMP/o9" "$D")"
else ok replay-escape-nothing-written; fi
[ -f "$TMP/o9/scratch-seed1337/inside.txt" ] && ok replay-scratch-writable || fail replay-scratch-writable "no inside.txt"

# ---- a non-zero exit, and a cleared environment ----
mkdir -p "$TMP/bad"
cat >"$TMP/bad/train.sh" <<'EOF'
#!/bin/sh
env | sort > env.txt
echo "step:1/5 train_loss:9.0000 train_time:10ms step_avg:10.00ms"
echo "boom: out of memory" >&2
exit 3
EOF
export PGOLF_SECRET=hunter2
replay replay-nonzero-fails 1 "$TMP/o10" "$TMP/bad" -- sh train.sh
M="$TMP/o10/replay-seed1337.json"
has_code replay-nonzero-exit "$M" NONZERO_EXIT
jq_true replay-nonzero-message "$M" '[.findings[] | select(.code == "NONZERO_EXIT") | .message | test("status 3.*boom")] | any'
got=$(cut -d= -f1 "$TMP/o10/scratch-seed1337/env.txt" | grep -v '^PWD$' | tr '\n' ' ')
if [ "$got" = "DATA_PATH HOME PATH RUN_ID SEED TOKENIZER_PATH " ]; then ok replay-env-cleared; else
  fail replay-env-cleared "environment inside: $got"; fi

# ---- human output, and input errors (exit 2) ----
make_sub "$TMP/h" 1 0.01 10
expect_rc replay-human 0 "$PGOLF" replay --record "$TMP/h" --seed 1337 --out "$TMP/o11" -- sh train.sh
grep -q 'PASS (0 errors, 0 warnings)' "$TMP/out" && ok replay-human-table || fail replay-human-table "$(cat "$TMP/out")"
expect_err replay-scratch-exists 2 'earlier replay' "$PGOLF" replay --record "$TMP/h" --seed 1337 --out "$TMP/o11" -- sh train.sh
expect_err replay-no-seed 2 'seed' "$PGOLF" replay --record "$TMP/h" -- sh train.sh
expect_err replay-bad-seed 2 'not a seed' "$PGOLF" replay --record "$TMP/h" --seed x -- sh train.sh
expect_err replay-no-command 2 'no command' "$PGOLF" replay --record "$TMP/h" --seed 1
expect_err replay-no-folder 2 'nope' "$PGOLF" replay --record "$TMP/nope" --seed 1 -- true
expect_err replay-bad-budget 2 'budget-train' "$PGOLF" replay --record "$TMP/h" --seed 1 --budget-train -3 -- true
expect_err replay-no-bwrap 2 'bubblewrap' env PGOLF_BWRAP=/nonexistent/bwrap "$PGOLF" replay --record "$TMP/h" --seed 1 --out "$TMP/o12" -- true
expect_rc replay-help 0 "$PGOLF" replay --help

# Hardware attestation around the run, against NVML's stand-in
# (tests/fake_nvml.c): the manifest records it; a GPU in use stops the
# replay unless --allow-busy; other hardware is judged but its timings do
# not decide (budget errors become warnings, HARDWARE_MISMATCH).
FAKE=$(dirname "$PGOLF")/tests/libfake_nvml.so
make_sub "$TMP/hw" 3 0 100 100 1.21000000
PGOLF_NVML_LIBRARY=$FAKE expect_rc replay-attested 0 "$PGOLF" replay --record "$TMP/hw" --seed 1337 \
  --out "$TMP/ohw1" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '.hardware.attested and .hardware.matches_challenge and (.hardware.gpus | length) == 8 and
  .hardware.processes_before == [] and (.hardware.samples.columns | length) == 8' \
  "$TMP/ohw1/replay-seed1337.json" >/dev/null && ok replay-hardware-recorded ||
  fail replay-hardware-recorded "$(jq -c .hardware "$TMP/ohw1/replay-seed1337.json" | head -c 400)"
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_BUSY_PID=$$ expect_rc replay-busy-stops 1 "$PGOLF" replay \
  --record "$TMP/hw" --seed 1337 --out "$TMP/ohw2" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
grep -q "HARDWARE_BUSY.*pid $$" "$TMP/out" && [ ! -e "$TMP/ohw2/replay-seed1337.json" ] &&
  ok replay-busy-did-not-run || fail replay-busy-did-not-run "$(head -c 400 "$TMP/out")"
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_BUSY_PID=$$ expect_rc replay-allow-busy 0 "$PGOLF" replay \
  --record "$TMP/hw" --seed 1337 --out "$TMP/ohw3" --data "$D" --tokenizer "$TMP/tok.model" \
  --allow-busy -- sh train.sh
# Over the training budget on PCIe cards: judged, warned, not failed.
make_sub "$TMP/hw2" 3 0.4 100 100 1.21000000 400
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_NAME="NVIDIA H100 PCIe" FAKE_NVML_POWER_MAX_MW=350000 \
  expect_rc replay-mismatch-timings-warn 0 "$PGOLF" replay --record "$TMP/hw2" --seed 1337 \
  --out "$TMP/ohw4" --data "$D" --tokenizer "$TMP/tok.model" --budget-train 0.5 --grace 30 -- sh train.sh
jq -e '(.hardware.matches_challenge | not) and
  ([.findings[] | select(.code == "HARDWARE_MISMATCH" and .severity == "warning")] | length) == 1 and
  ([.findings[] | select(.code == "TRAIN_OVER_BUDGET")][0].severity == "warning")' \
  "$TMP/ohw4/replay-seed1337.json" >/dev/null && ok replay-mismatch-recorded ||
  fail replay-mismatch-recorded "$(jq -c '[.findings[] | {code, severity}]' "$TMP/ohw4/replay-seed1337.json" | head -c 400)"
# The same run on the challenge's hardware fails on the budget.
PGOLF_NVML_LIBRARY=$FAKE expect_rc replay-match-timings-decide 1 "$PGOLF" replay --record "$TMP/hw2" \
  --seed 1337 --out "$TMP/ohw5" --data "$D" --tokenizer "$TMP/tok.model" --budget-train 0.5 --grace 30 -- sh train.sh
# ECC off on one GPU: the run is judged, HARDWARE_MISMATCH names the GPU.
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_ECC_OFF_GPU=6 expect_rc replay-ecc-off 0 "$PGOLF" replay \
  --record "$TMP/hw" --seed 1337 --out "$TMP/ohw7" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '(.hardware.matches_challenge | not) and .hardware.gpus[6].ecc == false and
  ([.findings[] | select(.code == "HARDWARE_MISMATCH" and (.message | test("GPU 6 has ECC off")))] | length) == 1' \
  "$TMP/ohw7/replay-seed1337.json" >/dev/null && ok replay-ecc-off-recorded ||
  fail replay-ecc-off-recorded "$(jq -c '[.findings[] | {code, message}]' "$TMP/ohw7/replay-seed1337.json" | head -c 400)"
# Thermal throttling during the run: in the samples, and a warning that
# names the GPU; the verdict stands (exit 0). Power capping alone is not.
make_sub "$TMP/hot" 3 0.5 100 100 1.21000000
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_THROTTLE=0x40 FAKE_NVML_THROTTLE_GPU=2 expect_rc replay-throttled 0 \
  "$PGOLF" replay --record "$TMP/hot" --seed 1337 --out "$TMP/ohw8" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
M="$TMP/ohw8/replay-seed1337.json"
jq -e '.hardware.matches_challenge and
  ([.hardware.samples.samples[] | select(.[1] == 2 and .[7] == 64)] | length) > 0 and
  ([.hardware.samples.samples[] | select(.[1] != 2 and .[7] != 0)] | length) == 0 and
  ([.findings[] | select(.code == "HARDWARE_THROTTLED" and .severity == "warning" and
    (.message | test("on 1 GPU, GPU 2: [0-9]+ of [0-9]+ samples from [0-9.]+ s \\(HW thermal slowdown\\)")))] | length) == 1' \
  "$M" >/dev/null && ok replay-throttled-recorded ||
  fail replay-throttled-recorded "$(jq -c '[.findings[] | {code, severity, message}]' "$M" | head -c 400)"
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_THROTTLE=0x4 expect_rc replay-power-capped 0 "$PGOLF" replay \
  --record "$TMP/hot" --seed 1337 --out "$TMP/ohw9" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '[.findings[] | select(.code == "HARDWARE_THROTTLED")] | length == 0' "$TMP/ohw9/replay-seed1337.json" \
  >/dev/null && ok replay-power-cap-not-thermal || fail replay-power-cap-not-thermal "$(jq -c .findings "$TMP/ohw9/replay-seed1337.json")"
# Without NVML: "attested": false, the run judged as before.
PGOLF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 expect_rc replay-unattested 0 "$PGOLF" replay \
  --record "$TMP/hw" --seed 1337 --out "$TMP/ohw6" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '(.hardware.attested | not) and (.hardware.reason | test("NVML not available"))' \
  "$TMP/ohw6/replay-seed1337.json" >/dev/null && ok replay-unattested-recorded ||
  fail replay-unattested-recorded "$(jq -c .hardware "$TMP/ohw6/replay-seed1337.json")"

# --fresh-seeds K --salt S: K seeds the submitter did not choose, derived
# from the folder and the salt; the folder's claimed per-seed results
# (its logs) against the replays.
fresh_sub() {
  make_sub "$1" 2 0 100 100 "$2"
  mkdir -p "$1/logs"
  for s in 1:1.21000000 2:1.21020000 3:1.20980000; do
    printf 'seed:%s\nfinal_int8_zlib_roundtrip_exact val_loss:2.05000000 val_bpb:%s\n' \
      "${s%%:*}" "${s#*:}" >"$1/logs/train_seed${s%%:*}.txt"
  done
}
fresh_sub "$TMP/fr" 1.25000000
expect_rc replay-fresh-gap 1 "$PGOLF" replay --record "$TMP/fr" --fresh-seeds 2 --salt maint-1 \
  --out "$TMP/ofr1" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '(.runs | length) == 2 and .runs[0].val_bpb == 1.25 and .reproduction.verdict == "REPRODUCTION_GAP"
  and (.claimed_val_bpb | length) == 3 and (.folder_digest | length) == 64' "$TMP/ofr1/replay-fresh.json" \
  >/dev/null && ok replay-fresh-gap-summary || fail replay-fresh-gap-summary "$(head -c 600 "$TMP/ofr1/replay-fresh.json")"
s1=$(jq -c '[.runs[].seed]' "$TMP/ofr1/replay-fresh.json")
[ -f "$TMP/ofr1/replay-seed$(jq -r '.runs[0].seed' "$TMP/ofr1/replay-fresh.json").json" ] &&
  ok replay-fresh-per-seed-manifest || fail replay-fresh-per-seed-manifest "$(ls "$TMP/ofr1")"
fresh_sub "$TMP/fr2" 1.21010000
expect_rc replay-fresh-consistent 0 "$PGOLF" replay --record "$TMP/fr2" --fresh-seeds 2 --salt maint-1 \
  --out "$TMP/ofr2" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
jq -e '.reproduction.verdict == "consistent"' "$TMP/ofr2/replay-fresh.json" >/dev/null &&
  ok replay-fresh-consistent-summary || fail replay-fresh-consistent-summary "$(head -c 600 "$TMP/ofr2/replay-fresh.json")"
# Same folder and salt: the same seeds; another salt: others.
expect_rc replay-fresh-again 1 "$PGOLF" replay --record "$TMP/fr" --fresh-seeds 2 --salt maint-1 \
  --out "$TMP/ofr3" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
[ "$(jq -c '[.runs[].seed]' "$TMP/ofr3/replay-fresh.json")" = "$s1" ] && ok replay-fresh-seeds-recomputable ||
  fail replay-fresh-seeds-recomputable "$s1 vs $(jq -c '[.runs[].seed]' "$TMP/ofr3/replay-fresh.json")"
expect_rc replay-fresh-other-salt 1 "$PGOLF" replay --record "$TMP/fr" --fresh-seeds 2 --salt maint-2 \
  --out "$TMP/ofr4" --data "$D" --tokenizer "$TMP/tok.model" -- sh train.sh
[ "$(jq -c '[.runs[].seed]' "$TMP/ofr4/replay-fresh.json")" != "$s1" ] && ok replay-fresh-salt-changes-seeds ||
  fail replay-fresh-salt-changes-seeds "same seeds $s1"
expect_err replay-fresh-needs-salt 2 'needs --salt' "$PGOLF" replay --record "$TMP/fr" --fresh-seeds 2 -- true
expect_err replay-fresh-not-with-seed 2 'exclude each other' "$PGOLF" replay --record "$TMP/fr" --fresh-seeds 2 \
  --salt x --seed 1 -- true

# The report draws the NVML samples under the loss curve; a replay without
# NVML has no such chart.
expect_rc report-hardware 0 "$PGOLF" report "$TMP/ohw1/replay-seed1337.json" -o "$TMP/hw.html"
grep -q 'GPUs during the replay (NVML)' "$TMP/hw.html" && grep -q 'NVIDIA H100 80GB HBM3, [1-9][0-9]* samples' "$TMP/hw.html" &&
  ok report-hardware-chart || fail report-hardware-chart "$(grep -o 'GPUs during[^<]*' "$TMP/hw.html")"
expect_rc report-no-hardware 0 "$PGOLF" report "$TMP/ohw6/replay-seed1337.json" -o "$TMP/nohw.html"
grep -q 'GPUs during the replay' "$TMP/nohw.html" && fail report-no-hardware-chart "a chart without samples" ||
  ok report-no-hardware-chart
