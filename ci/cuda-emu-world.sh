#!/bin/sh
# The multi-GPU world of `pgolf train --device cuda` on the CPU stand-in
# of ci/cuda-emu.sh, with NCCL's stand-in (ci/cuda_emu/nccl_standin.c,
# bytes over MPI) loaded through PGOLF_NCCL_LIBRARY and two stand-in
# devices (CUDA_EMU_DEVICES=2): `mpirun -np 2 ... --device cuda --world 2`
# (one process per device, the ranks' gradients moved by the NCCL calls
# pgolf makes and summed by the ordered-sum kernel) must give the CPU
# trainer's chain with the GPU's reduction trees (PGOLF_TEST_GPU_TREES=1
# ./pgolf train --world 2), and the one-process stand-in run at --world 2:
# the same chain, last loss bits, val_bpb, model bytes and artifact. So
# must `--gpus 2` (which starts the two processes under mpirun itself).
# The manifest of a two-process run records both devices and NCCL; too
# few devices, or no mpirun for --gpus, are refused with the reason; a
# hung process stops the run, named; a process that dies stops it too,
# and its last checkpoint resumed on one process reaches the two-process
# chain. Two steps: the first's loss is taken before any update, so the
# combined gradient shows in the second's (STEPS=1: in the artifact and
# val_bpb only, and no death).
# The model of ci/cuda-emu-train.sh (2 layers of 32, 1,024 tokens a step),
# STEPS steps (default 2), PRECISIONS (default "fp32 mixed"), a validation
# split of the demo's first 1,089 tokens (as ci/cuda-emu-train.sh's): about
# a minute on 2 cores. Needs make build and mpirun. Exits 1 on any
# difference. CUDA_EMU_SANITIZE=1: the stand-in's pgolf with ASan and
# UBSan (ci/cuda_emu/build.sh; needs make sanitize's library), every
# process of every mpirun under them.
#   sh ci/cuda-emu-world.sh
set -eu
cd "$(dirname "$0")/.."
. ci/cuda_emu/build.sh
out=build/cuda-emu-world${emu_san:+-sanitize}
rm -rf "$out" && mkdir -p "$out"
command -v mpirun >/dev/null 2>&1 || { echo "cuda-emu-world: no mpirun (Debian: openmpi-bin)"; exit 2; }
PGOLF_EMU_ONLY_BINARY=1 sh ci/cuda-emu.sh >/dev/null
emu=$emu_out/pgolf
PGOLF_NCCL_LIBRARY=$(pwd)/$emu_out/libnccl-standin.so
OMP_WAIT_POLICY=passive
export PGOLF_NCCL_LIBRARY OMP_WAIT_POLICY
. tests/e2e/lib.sh
mpi_test_env
data=$out/data
mkdir -p "$data"
small_demo_data "$data" 1089 # 17 sequences: the evaluations take seconds, not minutes
steps=${STEPS:-2}
bad=0
say() { if [ "$2" = ok ]; then echo "ok $1"; else echo "FAIL $1: $3"; bad=1; fi; }
same() { # NAME A.json B.json: the compared keys and the artifacts
  for k in chain last_loss_bits val_bpb model_bytes; do
    a=$(jq -r ".$k" "$out/$2.json") b=$(jq -r ".$k" "$out/$3.json")
    if [ "$a" = "$b" ] && [ "$a" != null ]; then say "$1 $k $a" ok; else say "$1 $k" FAIL "$2 $a, $3 $b"; fi
  done
  cmp -s "$out/$2/model.int8.ptz" "$out/$3/model.int8.ptz" && say "$1 artifact identical" ok ||
    say "$1 artifact identical" FAIL "$out/$2 and $out/$3 differ"
}
for prec in ${PRECISIONS:-fp32 mixed}; do
  cfg=$out/$prec.json
  cat >"$cfg" <<JSON
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 1024, "iterations": $steps, "warmdown_iters": 1,
 "val_batch_size": 65536, "val_loss_every": 0, "train_log_every": 1, "precision": "$prec"}
JSON
  common="--config $cfg --data $data --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 --quiet --json"
  # shellcheck disable=SC2086
  PGOLF_TEST_GPU_TREES=1 ./pgolf train $common --world 2 --out "$out/cpu-$prec" >"$out/cpu-$prec.json"
  # shellcheck disable=SC2086
  "$emu" train $common --device cuda --world 2 --out "$out/gpu1-$prec" >"$out/gpu1-$prec.json"
  # shellcheck disable=SC2086
  CUDA_EMU_DEVICES=2 mpirun -np 2 "$emu" train $common --device cuda --world 2 --out "$out/gpu2-$prec" \
    >"$out/gpu2-$prec.json"
  # shellcheck disable=SC2086
  CUDA_EMU_DEVICES=2 "$emu" train $common --device cuda --gpus 2 --out "$out/gpus2-$prec" >"$out/gpus2-$prec.json"
  same "$prec cpu vs 1-process cuda" "cpu-$prec" "gpu1-$prec"
  same "$prec 1-process vs mpirun -np 2 cuda" "gpu1-$prec" "gpu2-$prec"
  same "$prec mpirun -np 2 vs --gpus 2" "gpu2-$prec" "gpus2-$prec"
  m=$out/gpu2-$prec/manifest.json
  d=$(jq -c '.predicate.environment.device | [.gpus, (.devices | map(.process)), .devices[1].pci_bus_id, .nccl.version, .nccl.library]' "$m")
  [ "$d" = "[2,[0,1],\"0000:00:01.0\",\"0.0.0\",\"$PGOLF_NCCL_LIBRARY\"]" ] && say "$prec manifest records both devices and NCCL" ok ||
    say "$prec manifest records both devices and NCCL" FAIL "$d"
  grep -q '^gpus:2 nccl:0.0.0$' "$out/gpu2-$prec/train.log" && say "$prec log names NCCL" ok ||
    say "$prec log names NCCL" FAIL "$(grep -m1 nccl "$out/gpu2-$prec/train.log")"
done

# Refusals, before any training (the first precision's configuration).
set -- ${PRECISIONS:-fp32 mixed}
c="--config $out/$1.json --data $data --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 --quiet --device cuda"
set +e
# shellcheck disable=SC2086
CUDA_EMU_DEVICES=1 mpirun -np 2 "$emu" train $c --world 2 --out "$out/one-device" >/dev/null 2>"$out/one-device.err"
rc=$?
[ "$rc" -ne 0 ] && grep -q "process 1 is process 1 of 2 on its node, which has 1 usable CUDA device" "$out/one-device.err" &&
  say "two processes on one device refused" ok || say "two processes on one device refused" FAIL "exit $rc: $(head -c 300 "$out/one-device.err")"
# shellcheck disable=SC2086
CUDA_EMU_DEVICES=1 "$emu" train $c --gpus 2 --out "$out/few" >/dev/null 2>"$out/few.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--gpus 2, but 1 CUDA device is usable" "$out/few.err" && say "--gpus beyond the devices refused" ok ||
  say "--gpus beyond the devices refused" FAIL "exit $rc: $(head -c 300 "$out/few.err")"
# shellcheck disable=SC2086
CUDA_EMU_DEVICES=2 PATH=/nonexistent "$(pwd)/$emu" train $c --gpus 2 --out "$out/no-mpirun" >/dev/null 2>"$out/no-mpirun.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "mpirun, which is not on PATH" "$out/no-mpirun.err" && say "--gpus without mpirun refused" ok ||
  say "--gpus without mpirun refused" FAIL "exit $rc: $(head -c 300 "$out/no-mpirun.err")"
# A hung process stops a GPU run as it stops a CPU one: process 1 hangs at
# the exchange of step 1 (the test-only hook of tests/e2e/train_mpi.sh),
# process 0 names it after --comm-timeout and every process exits non-zero.
s=$(date +%s)
# shellcheck disable=SC2086
PGOLF_TEST_HANG=1:1 CUDA_EMU_DEVICES=2 mpirun -np 2 -x PGOLF_TEST_HANG "$emu" train $c --world 2 --comm-timeout 2 \
  --out "$out/hang" >/dev/null 2>"$out/hang.err"
rc=$? elapsed=$(($(date +%s) - s))
[ "$rc" -ne 0 ] && grep -q "process 1 (rank 1) did not reach the exchange of step 1 within 2 s" "$out/hang.err" &&
  say "a hung process is named and stops the run (${elapsed}s)" ok ||
  say "a hung process is named and stops the run" FAIL "exit $rc after ${elapsed}s: $(head -c 300 "$out/hang.err")"
# A process that dies stops a GPU run too (STEPS >= 2): process 1 exits at
# step 2, after the checkpoint of step 1; the run ends non-zero, naming it,
# and one process resuming from that checkpoint (another process count,
# the same world) ends on the chain of the uninterrupted two-process run.
if [ "$steps" -ge 2 ]; then
  s=$(date +%s)
  # shellcheck disable=SC2086
  PGOLF_TEST_DIE=1:2 CUDA_EMU_DEVICES=2 mpirun -np 2 -x PGOLF_TEST_DIE "$emu" train $c --world 2 \
    --comm-timeout 60 --checkpoint-every 1 --out "$out/die" >/dev/null 2>"$out/die.err"
  rc=$? elapsed=$(($(date +%s) - s))
  if [ "$rc" -ne 0 ] && grep -q "process 1 exits at step 2" "$out/die.err" && [ ! -f "$out/die/manifest.json" ] &&
     [ "$(grep -c . "$out/die/losses.txt")" = 2 ]; then
    say "a dead process stops the run, named, its checkpoint of step 1 kept (${elapsed}s)" ok
  else
    say "a dead process stops the run" FAIL "exit $rc after ${elapsed}s: $(head -c 300 "$out/die.err"); $(ls "$out/die")"
  fi
  "$emu" train --resume "$out/die" --device cuda --threads 1 --quiet --json \
    >"$out/die-resumed.json" 2>"$out/die-resumed.err"
  a=$(jq -r .chain "$out/die-resumed.json" 2>/dev/null) b=$(jq -r .chain "$out/gpu2-$1.json")
  [ "$a" = "$b" ] && [ -n "$a" ] && say "resumed after the death on one process: the two-process chain $a" ok ||
    say "resumed after the death" FAIL "chain $a, the uninterrupted run's $b: $(head -c 300 "$out/die-resumed.err")"
fi
exit $bad
