#!/bin/sh
# `pgolf train --device cuda` end to end on the CPU stand-in of
# ci/cuda-emu.sh (whose products are the CPU's), held to the CPU trainer's
# chain with the GPU's reduction trees (PGOLF_TEST_GPU_TREES=1): the same
# loss bits every step, the same artifact, the same validation (on the GPU
# path, trainer_gpu_validate: the log's val_loss/val_bpb lines at step 0
# and at the end, the final round trip's, and the manifest's float64 bits
# of both and of the loss sum), in fp32 and mixed precision. A small model
# (2 layers of 32, sequences of 64, 1,024 tokens a step: 8 micro-steps of
# 2 sequences), STEPS steps (default 1), a validation split of the demo's
# first 1,089 tokens (17 sequences: the last batch padded); on the
# stand-in (a block's threads coroutines on one OS thread) a step and its
# validations take seconds on 2 cores, the script a minute or two. Its streams
# run as late as the program's events allow (CUDA_EMU_SCHEDULE, default
# lazy) and an unordered access stops it (ci/cuda_emu/emu.h), so a missing
# event or synchronisation fails here, and so does a shared or global
# memory access that no barrier orders with another thread's (the race
# check of ci/cuda_emu/grid.cpp: global memory in the first run of each
# kind, CUDA_EMU_PLAIN=shared in the repeats); the run again with the
# blocks and threads last first (CUDA_EMU_ORDER=reverse) must give the
# same bits.
# Then (unless RESUME=0) a checkpoint at step 1 resumed GPU to GPU, GPU to
# CPU and CPU to GPU must end on a 2-step run's chain and artifact. pgolf
# eval --device cuda on the run's artifact writes the CPU's score dumps
# (plain, sliding, TTT). PRECISIONS (default "fp32 mixed") picks the
# precisions. CUDA_EMU_SANITIZE=1 runs the stand-in's pgolf built with
# ASan and UBSan (after make sanitize): the GPU trainer's host code and
# kernels at a model's shapes, where an undersized buffer is an overflow
# the sanitizer reports; CUDA_EMU_REVERSE=0 leaves the reverse-order run
# out (ci/cuda-emu.sh says when that is enough). Needs make build. Exits 1
# on any difference.
#   sh ci/cuda-emu-train.sh
set -eu
cd "$(dirname "$0")/.."
. ci/cuda_emu/build.sh
emu=$emu_out/pgolf
out=build/cuda-emu-train
if [ "${CUDA_EMU_SANITIZE:-0}" = 1 ]; then out=build/cuda-emu-train-sanitize; fi
rm -rf "$out" && mkdir -p "$out"
PGOLF_EMU_ONLY_BINARY=1 sh ci/cuda-emu.sh >/dev/null
. tests/e2e/lib.sh
data=$out/data
small_demo_data "$data" 1089
steps=${STEPS:-1}
bad=0
if [ "${CUDA_EMU_REVERSE:-1}" = 0 ]; then
  echo "(CUDA_EMU_REVERSE=0: the runs with blocks and threads last first are left out)"
fi
for prec in ${PRECISIONS:-fp32 mixed}; do
  cfg=$out/$prec.json
  cat >"$cfg" <<JSON
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 1024, "iterations": $steps, "warmdown_iters": 1,
 "val_batch_size": 65536, "val_loss_every": $steps, "train_log_every": 1, "precision": "$prec"}
JSON
  common="--config $cfg --data $data --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 --quiet --json"
  # shellcheck disable=SC2086
  PGOLF_TEST_GPU_TREES=1 ./pgolf train $common --out "$out/cpu-$prec" >"$out/cpu-$prec.json"
  # A stand-in run that stops (a refused launch, a race the stand-in
  # reports, ci/cuda_emu/emu.h) fails with its last words.
  # shellcheck disable=SC2086
  if ! "$emu" train $common --device cuda --out "$out/gpu-$prec" >"$out/gpu-$prec.json" 2>"$out/gpu-$prec.err"; then
    echo "FAIL $prec cuda (stand-in) run: $(tail -n 3 "$out/gpu-$prec.err") $(grep -q Sanitizer "$out/gpu-$prec.err" && err_excerpt "$out/gpu-$prec.err")"
    bad=1
    continue
  fi
  # The same run with the stand-in's blocks and threads last first
  # (CUDA_EMU_ORDER=reverse, ci/cuda_emu/grid.cpp): a barrier missing
  # anywhere in a step changes its bits in one of the two orders.
  # shellcheck disable=SC2086
  if [ "${CUDA_EMU_REVERSE:-1}" = 0 ]; then
    :
  elif CUDA_EMU_ORDER=reverse CUDA_EMU_PLAIN=shared "$emu" train $common --device cuda --out "$out/rev-$prec" >"$out/rev-$prec.json" 2>"$out/rev-$prec.err" &&
     [ "$(jq -r .chain "$out/rev-$prec.json")" = "$(jq -r .chain "$out/gpu-$prec.json")" ] &&
     cmp -s "$out/rev-$prec/model.int8.ptz" "$out/gpu-$prec/model.int8.ptz"; then
    echo "ok $prec CUDA_EMU_ORDER=reverse: the same chain and artifact"
  else
    echo "FAIL $prec CUDA_EMU_ORDER=reverse: chain $(jq -r .chain "$out/rev-$prec.json" 2>/dev/null || echo none), or the artifact differs: $(tail -n 2 "$out/rev-$prec.err" | tr '\n' ' ' | cut -c1-300) $(grep -q Sanitizer "$out/rev-$prec.err" && err_excerpt "$out/rev-$prec.err")"
    bad=1
  fi
  for k in chain last_loss_bits val_bpb model_bytes; do
    a=$(jq -r ".$k" "$out/cpu-$prec.json")
    b=$(jq -r ".$k" "$out/gpu-$prec.json")
    if [ "$a" = "$b" ]; then echo "ok $prec $k $a"; else echo "FAIL $prec $k: cpu $a, cuda (stand-in) $b"; bad=1; fi
  done
  # The validation lines without their clocks, and the manifest's bits.
  for run in cpu gpu; do
    sed -n 's/^\(step:[0-9]*\/[0-9]* val_loss:[^ ]* val_bpb:[^ ]*\) .*/\1/p; /^final_int8_zlib_roundtrip_exact /p' \
      "$out/$run-$prec/train.log" >"$out/$run-$prec.val"
    jq -c '.. | objects | select(has("loss_sum_bits"))' "$out/$run-$prec/manifest.json" >>"$out/$run-$prec.val"
  done
  if [ "$(grep -c val_loss "$out/cpu-$prec.val")" -ge 4 ] && cmp -s "$out/cpu-$prec.val" "$out/gpu-$prec.val"; then
    echo "ok $prec validation: $(tr '\n' ' ' <"$out/gpu-$prec.val" | cut -c1-400)"
  else
    echo "FAIL $prec validation differs (or is missing): $(diff "$out/cpu-$prec.val" "$out/gpu-$prec.val" | head -n 6)"; bad=1
  fi
  if cmp -s "$out/cpu-$prec/model.int8.ptz" "$out/gpu-$prec/model.int8.ptz"; then
    echo "ok $prec artifact identical"
  else
    echo "FAIL $prec artifact differs"; bad=1
  fi
  grep -q '"device": {' "$out/gpu-$prec/manifest.json" && echo "ok $prec manifest records the device" ||
    { echo "FAIL $prec manifest has no device"; bad=1; }
  # The tiny preset's heads are 16 wide: mixed runs the tensor-core
  # attention (the stand-in's mma), fp32 the CUDA cores'.
  want_att=cuda_cores
  [ "$prec" = mixed ] && want_att=tensor_cores
  att=$(jq -r '.. | objects | select(has("attention") and has("cublaslt")) | .attention' "$out/gpu-$prec/manifest.json" | head -n 1)
  [ "$att" = "$want_att" ] && echo "ok $prec manifest records the attention kernels: $att" ||
    { echo "FAIL $prec manifest's attention kernels: '$att', not $want_att"; bad=1; }
  # pgolf eval --device cuda on the run's artifact, each mode against the
  # CPU's evaluation with the GPU's trees: the same dump, byte for byte
  # (every position's nll, the probes' distributions, the event chain's
  # head). Batches of 4 windows of 64: plain's last batch is short (17
  # windows), sliding starts with windows of 16, 32 and 48 (padded to
  # 64 on the GPU), TTT trains on batches of 3 and 1 sequences with the
  # clip on.
  for mode in "plain" "sliding --stride 16" "ttt --stride 32 --chunk 256 --epochs 1 --ttt-batch 3"; do
    m=${mode%% *}
    ev="eval --artifact $out/cpu-$prec/model.int8.ptz --data $data --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 --batch 4 --precision $prec --json --mode $mode"
    # shellcheck disable=SC2086
    PGOLF_TEST_GPU_TREES=1 ./pgolf $ev --score-dump "$out/ev-cpu-$prec-$m.pgsd" >"$out/ev-cpu-$prec-$m.json" 2>"$out/ev-cpu-$prec-$m.err" || true
    # shellcheck disable=SC2086
    "$emu" $ev --device cuda --score-dump "$out/ev-gpu-$prec-$m.pgsd" >"$out/ev-gpu-$prec-$m.json" 2>"$out/ev-gpu-$prec-$m.err" || true
    a=$(jq -r '"\(.nll_sum_bits) \(.chain)"' "$out/ev-cpu-$prec-$m.json" 2>/dev/null || true)
    b=$(jq -r '"\(.nll_sum_bits) \(.chain)"' "$out/ev-gpu-$prec-$m.json" 2>/dev/null || true)
    if [ -n "$a" ] && [ "$a" = "$b" ] && cmp -s "$out/ev-cpu-$prec-$m.pgsd" "$out/ev-gpu-$prec-$m.pgsd" &&
       [ "$(jq -r .device.kind "$out/ev-gpu-$prec-$m.json")" = cuda ]; then
      echo "ok $prec eval $m --device cuda: the CPU's dump, byte for byte ($a)"
    else
      echo "FAIL $prec eval $m --device cuda: cpu ${a:-none}, cuda (stand-in) ${b:-none}, or the dumps differ: $(tail -n 2 "$out/ev-cpu-$prec-$m.err" "$out/ev-gpu-$prec-$m.err" | tr '\n' ' ' | cut -c1-300)"; bad=1
    fi
  done
  # Checkpoints across the device (RESUME=0 leaves this out): two steps on
  # the CPU with the GPU's trees are the reference; a GPU run stopped after
  # step 1 (its checkpoint holds the device's parameters and optimizer
  # state, brought back) resumes on the GPU and, from a copy, on the CPU,
  # and the CPU's step-1 checkpoint resumes on the GPU: every one must end
  # on the reference's chain and artifact.
  [ "${RESUME:-1}" = 1 ] || continue
  cfg2=$out/$prec-2.json
  sed 's/"iterations": [0-9]*/"iterations": 2/; s/"val_loss_every": [0-9]*/"val_loss_every": 0/' "$cfg" >"$cfg2"
  two="--data $data --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 --quiet --json"
  # A run that fails leaves no result: its check below says FAIL.
  # shellcheck disable=SC2086
  PGOLF_TEST_GPU_TREES=1 ./pgolf train --config "$cfg2" $two --out "$out/ref2-$prec" >"$out/ref2-$prec.json"
  # shellcheck disable=SC2086
  CUDA_EMU_PLAIN=shared "$emu" train --config "$cfg2" $two --device cuda --stop-after 1 --checkpoint-every 1 \
    --out "$out/gstop-$prec" >/dev/null 2>"$out/gstop-$prec.err" || true
  # shellcheck disable=SC2086
  PGOLF_TEST_GPU_TREES=1 ./pgolf train --config "$cfg2" $two --stop-after 1 --checkpoint-every 1 \
    --out "$out/cstop-$prec" >/dev/null
  cp -r "$out/gstop-$prec" "$out/g2c-$prec" 2>/dev/null || true
  mv "$out/cstop-$prec" "$out/c2g-$prec"
  CUDA_EMU_PLAIN=shared "$emu" train --resume "$out/gstop-$prec" --device cuda --threads 1 --quiet --json \
    >"$out/g2g-$prec.json" 2>"$out/g2g-$prec.err" || true
  PGOLF_TEST_GPU_TREES=1 ./pgolf train --resume "$out/g2c-$prec" --threads 1 --quiet --json \
    >"$out/g2c-$prec.json" 2>"$out/g2c-$prec.err" || true
  CUDA_EMU_PLAIN=shared "$emu" train --resume "$out/c2g-$prec" --device cuda --threads 1 --quiet --json \
    >"$out/c2g-$prec.json" 2>"$out/c2g-$prec.err" || true
  ref=$(jq -r .chain "$out/ref2-$prec.json")
  for r in g2g:gstop g2c:g2c c2g:c2g; do
    got=$(jq -r .chain "$out/${r%%:*}-$prec.json" 2>/dev/null || true)
    if [ "$got" = "$ref" ] && [ "$ref" != null ] &&
       cmp -s "$out/ref2-$prec/model.int8.ptz" "$out/${r#*:}-$prec/model.int8.ptz"; then
      echo "ok $prec resume ${r%%:*} (checkpoint at step 1): chain and artifact of the 2-step run"
    else
      echo "FAIL $prec resume ${r%%:*}: chain ${got:-none}, the 2-step run's $ref (or the artifact differs): $(tail -n 2 "$out/${r%%:*}-$prec.err" "$out/gstop-$prec.err" 2>/dev/null | tr '\n' ' ' | cut -c1-300)"; bad=1
    fi
  done
done
exit $bad
