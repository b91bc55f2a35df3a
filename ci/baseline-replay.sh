#!/bin/sh
# The official baseline's train_gpt.py replayed under `pgolf replay` with
# reduced iterations, on the GPUs this machine has; prints the attestation
# and one line "RESULT<TAB>DETAIL" last (RESULT pass, fail or skipped),
# which ci/gpu-check.sh turns into a row of its table. The script is the
# challenge's (openai/parameter-golf, root train_gpt.py), never part of
# pgolf: say where it is.
#   PGOLF_BASELINE_SCRIPT=/path/to/parameter-golf/train_gpt.py \
#   PGOLF_BASELINE_DATA=/path/to/data/datasets/fineweb10B_sp1024 \
#   PGOLF_BASELINE_TOKENIZER=/path/to/data/tokenizers/fineweb_1024_bpe.model \
#   [ITERATIONS=200] [PGOLF=./pgolf] [OUT=DIR] sh ci/baseline-replay.sh
# torchrun is the one on PATH; its Python environment, when outside /usr,
# is bound read-only into the sandbox. The sandbox clears the environment,
# so the reduced schedule goes in through `env` on the command line.
set -u
cd "$(dirname "$0")/.."
pgolf=${PGOLF:-./pgolf}
out=${OUT:-/tmp/pgolf-baseline-replay}
iters=${ITERATIONS:-200}
script=${PGOLF_BASELINE_SCRIPT:-}
data=${PGOLF_BASELINE_DATA:-}
tok=${PGOLF_BASELINE_TOKENIZER:-}

result() { printf '%s\t%s\n' "$1" "$2"; exit 0; }

[ -n "$script" ] && [ -f "$script" ] ||
  result skipped "PGOLF_BASELINE_SCRIPT does not name the challenge's train_gpt.py ('$script')"
[ -n "$data" ] && [ -d "$data" ] || result skipped "PGOLF_BASELINE_DATA is not a folder ('$data')"
[ -n "$tok" ] && [ -f "$tok" ] || result skipped "PGOLF_BASELINE_TOKENIZER is not a file ('$tok')"
torchrun=$(command -v torchrun) || result skipped "no torchrun (PyTorch) on PATH"
command -v jq >/dev/null 2>&1 || result skipped "jq is needed to read the replay manifest"

rm -rf "$out" && mkdir -p "$out/record"
cp "$script" "$out/record/train_gpt.py"
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$n" -ge 1 ] || n=1
# The environment torchrun runs from: bound read-only when outside /usr.
prefix=$(dirname "$(dirname "$(readlink -f "$torchrun")")")
set --
case $prefix in /usr | /usr/*) ;; *) set -- --ro-bind "$prefix" ;; esac
python=$(sed -n '1s/^#! *//p' "$torchrun" | cut -d' ' -f1)
if [ -n "$python" ] && [ -x "$python" ]; then
  pyprefix=$(dirname "$(dirname "$(readlink -f "$python")")")
  case $pyprefix in /usr | /usr/* | "$prefix") ;; *) set -- "$@" --ro-bind "$pyprefix" ;; esac
fi

"$pgolf" gpu attest --gpus "$n" >"$out/attest.txt" 2>&1
cat "$out/attest.txt"
"$pgolf" replay --record "$out/record" --seed 1337 --out "$out/replay" --data "$data" --tokenizer "$tok" \
  --gpus "$n" --grace 300 "$@" -- /usr/bin/env ITERATIONS="$iters" WARMUP_STEPS=5 VAL_LOSS_EVERY=0 \
  TRAIN_LOG_EVERY=50 "$torchrun" --standalone --nproc_per_node="$n" train_gpt.py >"$out/replay.txt" 2>&1
rc=$?
m=$out/replay/replay-seed1337.json
[ -f "$m" ] || result fail "exit $rc, no replay manifest: $(tail -n 3 "$out/replay.txt" | tr '\n' ' ')"
jq -r '.hardware | if .attested then "attestation: \(.gpus | length) x \(.gpus[0].name) (\(.gpus[0].form_factor)), driver \(.driver_version), CUDA driver \(.cuda_driver_version), matches the challenge: \(.matches_challenge), \(.samples.samples | length) samples" else "attestation: none (\(.reason))" end' "$m"
summary=$(jq -r '"val_bpb \(.result.val_bpb // "none"), \(.losses | length) logged steps, train \(.timings.train_ms // "?") ms (log \(.timings.train_logged_ms // "?") ms), artifact \(.artifact.bytes // "?") bytes, verdict \(.verdict) [\([.findings[].code] | join(","))]"' "$m")
if jq -e '.hardware.attested and .result.val_bpb != null and (.losses | length) > 0 and .artifact != null' "$m" >/dev/null &&
   [ "$rc" -le 1 ]; then
  result pass "$n GPU(s), ITERATIONS=$iters: $summary"
fi
result fail "exit $rc: $summary"
