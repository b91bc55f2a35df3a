#!/bin/sh
# What one training step of `pgolf train --device cuda` queues on the GPU,
# counted on the CPU stand-in (ci/cuda-emu.sh, CUDA_EMU_TALLY): every
# kernel launch by name, every GEMM, copy and set, for one step of eight
# micro-steps and the optimizer. A count, not a timing: it does not depend
# on the hardware, so a change that fuses passes shows here without a GPU
# (how many bytes each pass moves is arithmetic on the shapes). The model
# has the baseline's 9 layers (4 skip connections, 2 heads over 1 KV head)
# at width 32 and sequences of 64, so the counts per layer are the
# baseline's; one step is the difference between a 2-step and a 1-step
# run (the same validations in both). PRECISION: mixed (default) or fp32.
# Needs make build; about half a minute.
#   sh ci/emu-tally.sh [BINARY]   (default: the stand-in pgolf it builds)
set -eu
cd "$(dirname "$0")/.."
out=build/emu-tally
rm -rf "$out" && mkdir -p "$out"
if [ $# -ge 1 ]; then
  emu=$1
else
  PGOLF_EMU_ONLY_BINARY=1 sh ci/cuda-emu.sh >/dev/null
  emu=build/cuda-emu/pgolf
fi
. tests/e2e/lib.sh
small_demo_data "$out/data" 1089
prec=${PRECISION:-mixed}
for it in 1 2; do
  cat >"$out/c$it.json" <<JSON
{"preset": "tiny", "num_layers": 9, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 1024, "iterations": $it, "warmdown_iters": 1,
 "val_batch_size": 65536, "val_loss_every": 2, "train_log_every": 1, "precision": "$prec"}
JSON
  if ! CUDA_EMU_TALLY="$out/tally-$it.txt" "$emu" train --config "$out/c$it.json" \
      --data "$out/data" --tokenizer data/tokenizers/fineweb_1024_bpe.model --threads 1 \
      --quiet --device cuda --out "$out/run-$it" >/dev/null 2>"$out/run-$it.err"; then
    echo "emu-tally: the $it-step run failed: $(tail -n 3 "$out/run-$it.err")"
    exit 1
  fi
done
python3 - "$out/tally-1.txt" "$out/tally-2.txt" "$prec" <<'EOF'
import collections, sys
def load(path):
    c = collections.Counter()
    for line in open(path):
        n, name = line.rstrip("\n").split(" ", 1)
        c[name] += int(n)
    return c
one, two = load(sys.argv[1]), load(sys.argv[2])
step = {k: two[k] - one[k] for k in two if two[k] != one[k]}
print(f"one {sys.argv[3]} training step (8 micro-steps and the optimizer): "
      f"{sum(step.values())} operations queued")
for name, n in sorted(step.items(), key=lambda kv: (-kv[1], kv[0])):
    print(f"{n:7d} {name}")
EOF
