#!/bin/sh
# ci/baseline-replay.sh (the baseline row of ci/gpu-check.sh) on the CPU:
# with the torchrun and NVML stand-ins in place of PyTorch and the driver,
# it replays the script it is given and prints the attestation and a pass
# line; without the challenge's script it says it skipped, and why; a run
# that produces no result is a fail.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
FAKE=$(dirname "$PGOLF")/tests/libfake_nvml.so
[ -f "$FAKE" ] || { fail baseline-fake-nvml "no $FAKE (make build)"; exit 1; }
command -v jq >/dev/null 2>&1 || { fail baseline-environment "jq is not installed"; exit 1; }

mkdir -p "$TMP/data"
printf 'shard' >"$TMP/data/fineweb_val_000000.bin"
printf 'model' >"$TMP/tok.model"
printf '# standin: steps=4 step_ms=50 art_bytes=4321\n' >"$TMP/train_gpt.py"

run() {
  PATH="$HERE/tests/stand-ins:$PATH" PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_GPUS=1 PGOLF=$PGOLF OUT="$TMP/o" \
    PGOLF_BASELINE_SCRIPT="$1" PGOLF_BASELINE_DATA="$TMP/data" PGOLF_BASELINE_TOKENIZER="$TMP/tok.model" \
    ITERATIONS=40 sh "$HERE/ci/baseline-replay.sh" >"$TMP/out" 2>&1
}

run "$TMP/train_gpt.py"
last=$(tail -n 1 "$TMP/out")
case $last in
  "pass	1 GPU(s), ITERATIONS=40: val_bpb 1.21, 4 logged steps, "*"artifact 4321 bytes, verdict pass"*) ok baseline-replay-pass ;;
  *) fail baseline-replay-pass "$(tail -n 5 "$TMP/out")" ;;
esac
grep -q '^attestation: 1 x NVIDIA H100 80GB HBM3 (SXM), driver 580.65.06, CUDA driver 13000, matches the challenge: true' "$TMP/out" &&
  ok baseline-replay-attestation || fail baseline-replay-attestation "$(grep -i attest "$TMP/out")"
# The reduced schedule reached the script through `env` inside the sandbox.
jq -e '.record.command[0:4] == ["/usr/bin/env", "ITERATIONS=40", "WARMUP_STEPS=5", "VAL_LOSS_EVERY=0"]' \
  "$TMP/o/replay/replay-seed1337.json" >/dev/null && ok baseline-replay-command ||
  fail baseline-replay-command "$(jq -c .record.command "$TMP/o/replay/replay-seed1337.json")"

run "$TMP/no-such-train_gpt.py"
case $(tail -n 1 "$TMP/out") in
  "skipped	PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py"*) ok baseline-replay-skips ;;
  *) fail baseline-replay-skips "$(tail -n 2 "$TMP/out")" ;;
esac

printf '# standin: steps=2 step_ms=50 fail_rank=0\n' >"$TMP/crash.py"
run "$TMP/crash.py"
case $(tail -n 1 "$TMP/out") in
  "fail	exit 1: val_bpb none"*) ok baseline-replay-fails ;;
  *) fail baseline-replay-fails "$(tail -n 2 "$TMP/out")" ;;
esac
