#!/bin/sh
# `make demo`: the foundation on the embedded demo data, step by step.
# Each step is a plain pgolf command, echoed before it runs, so the demo
# doubles as a tour of the verbs. Outputs go to build/demo/.
set -eu
cd "$(dirname "$0")/.."
P=./pgolf
TOK=data/tokenizers/fineweb_1024_bpe.model
OUT=build/demo
rm -rf "$OUT"
mkdir -p "$OUT"

run() {
  printf '\n$ %s\n' "$*"
  "$@"
}

echo "== 1. the demo shards (data/demo/, see data/demo/PROVENANCE.md)"
run $P shard info --vocab 1024 data/demo/fineweb_val_000000.bin data/demo/fineweb_train_*.bin

echo
echo "== 2. the tokenizer: piece types and accounting hazards"
run $P tokenizer info $TOK

echo
echo "== 3. byte accounting of each split (the challenge's previous-token rule)"
run $P bpb --tokenizer $TOK --split val data/demo
run $P bpb --tokenizer $TOK --split train data/demo
run $P bpb --tokenizer $TOK --split val --seq-len 1024 data/demo

echo
echo "== 4. a run manifest for this data and configuration, signed and verified"
run $P manifest keygen -o "$OUT/demo"
run $P manifest create --config data/demo-config.json --tokenizer $TOK --data data/demo \
  --seed 1337 -o "$OUT/manifest.json"
run $P manifest show "$OUT/manifest.json"
run $P manifest sign --key "$OUT/demo.key" "$OUT/manifest.json" -o "$OUT/manifest.dsse.json"
run $P manifest verify --key "$OUT/demo.pub" "$OUT/manifest.dsse.json"

echo
echo "== 5. tampering is caught: a second key did not sign this envelope"
run $P manifest keygen -o "$OUT/other"
if $P manifest verify --key "$OUT/other.pub" "$OUT/manifest.dsse.json"; then
  echo "demo: a wrong key was accepted" >&2
  exit 1
fi
echo "(exit 1, as it must be)"
echo
echo "demo: done; files in $OUT/"
