# pgolf eval and pgolf audit --perturb end to end, on a model trained for
# two steps (tiny, width 32) and the first 1025 tokens of the demo
# validation shard: plain equals the training run's own final evaluation;
# plain, sliding and ttt write dumps and event logs that `pgolf audit`
# passes; the TTT result is reported beside the sliding one; the
# perturbation test passes pgolf's TTT and an outside command, and calls
# an evaluator that ignores its data inconclusive; bad options exit 2.
. "$(dirname "$0")/lib.sh"

TOK=data/tokenizers/fineweb_1024_bpe.model
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
DATA=$TMP/data
small_demo_data "$DATA" 1025

cat >"$TMP/small.json" <<EOF
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 512, "iterations": 2, "warmdown_iters": 1,
 "val_batch_size": 1024, "data": "$DATA", "tokenizer": "$TOK"}
EOF
expect_rc train-for-artifact 0 "$PGOLF" train --config "$TMP/small.json" --threads 1 --quiet --out "$TMP/run"
ART=$TMP/run/model.int8.ptz

ev() { "$PGOLF" eval --artifact "$ART" --data "$DATA" --tokenizer "$TOK" --threads 1 "$@"; }
audit() { "$PGOLF" audit "$1" --tokenizer "$TOK" --val "$DATA" --seq-len "$2" --manifest "$3" --claim "$4"; }
bpb() { jq -r '.val_bpb * 1e8 | round / 1e8 | tostring' "$1"; }

# plain at the training length is the training run's own final evaluation
expect_rc eval-plain 0 ev --mode plain --score-dump "$TMP/plain.pgsd" --events "$TMP/plain.json" --json
cp "$TMP/out" "$TMP/plain.out"
want=$(sed -n 's/^final_int8_zlib_roundtrip_exact val_loss:[0-9.]* val_bpb:\([0-9.]*\)$/\1/p' "$TMP/run/train.log")
got=$(jq -r '.val_bpb' "$TMP/plain.out" | xargs printf '%.8f')
[ -n "$want" ] && [ "$got" = "$want" ] && ok plain-equals-train-eval || fail plain-equals-train-eval "eval $got, train log $want"

W="--seq-len 32 --probes 8"
expect_rc eval-sliding 0 ev --mode sliding $W --stride 8 --score-dump "$TMP/sliding.pgsd" --events "$TMP/sliding.json" --json
cp "$TMP/out" "$TMP/sliding.out"
TTT="--stride 8 --chunk 256 --epochs 1 --lr 0.05 --ttt-batch 4"
expect_rc eval-ttt 0 ev --mode ttt $W $TTT --score-dump "$TMP/ttt.pgsd" --events "$TMP/ttt.json" --json
cp "$TMP/out" "$TMP/ttt.out"
echo "# sliding val_bpb $(jq .val_bpb "$TMP/sliding.out")  ttt val_bpb $(jq .val_bpb "$TMP/ttt.out")"
[ "$(jq .val_bpb "$TMP/sliding.out")" != "$(jq .val_bpb "$TMP/ttt.out")" ] && ok ttt-beside-sliding ||
  fail ttt-beside-sliding "same val_bpb"
[ "$(jq '.tokens' "$TMP/ttt.out")" = 1024 ] && [ "$(jq '.ttt.steps' "$TMP/ttt.out")" = 6 ] && ok ttt-counts ||
  fail ttt-counts "$(cat "$TMP/ttt.out")"
[ "$(jq -r '[.predicate.eval.events[].kind] | join(",")' "$TMP/ttt.json")" = SCORE,ADAPT,SCORE,ADAPT,SCORE,ADAPT,SCORE ] &&
  ok ttt-event-order || fail ttt-event-order "$(jq -c '[.predicate.eval.events[].kind]' "$TMP/ttt.json")"
[ "$(jq -r .predicate.eval.score_dump.sha256 "$TMP/ttt.json")" = "$(sha256sum "$TMP/ttt.pgsd" | cut -c1-64)" ] &&
  ok events-name-the-dump || fail events-name-the-dump "digest differs"

expect_rc audit-plain 0 audit "$TMP/plain.pgsd" 64 "$TMP/plain.json" "$(bpb "$TMP/plain.out")"
expect_rc audit-sliding 0 audit "$TMP/sliding.pgsd" 32 "$TMP/sliding.json" "$(bpb "$TMP/sliding.out")"
expect_rc audit-ttt 0 audit "$TMP/ttt.pgsd" 32 "$TMP/ttt.json" "$(bpb "$TMP/ttt.out")"
# a log edited to put an ADAPT first no longer chains: caught
jq '.predicate.eval.events |= (.[1] as $a | .[0] as $s | .[0] = $a | .[1] = $s)' "$TMP/ttt.json" >"$TMP/swapped.json"
expect_rc audit-swapped-events 1 audit "$TMP/ttt.pgsd" 32 "$TMP/swapped.json" "$(bpb "$TMP/ttt.out")"
# the same dump, bit for bit, for another thread count and batch size
expect_rc eval-ttt-2-threads 0 "$PGOLF" eval --artifact "$ART" --data "$DATA" --tokenizer "$TOK" --threads 2 \
  --batch 3 --mode ttt $W $TTT --score-dump "$TMP/ttt2.pgsd"
expect_same ttt-thread-independent "$TMP/ttt.pgsd" "$TMP/ttt2.pgsd"

# the perturbation test: pgolf's own TTT, bit-identical prefixes at every cut
expect_rc perturb-self-ttt 0 "$PGOLF" audit --perturb --data "$DATA" --json --self ttt \
  --artifact "$ART" --tokenizer "$TOK" --threads 1 --seq-len 32 $TTT
[ "$(jq -r '[.cuts[] | select(.status == "pass" and .max_abs_diff == 0)] | length' "$TMP/out")" = 4 ] &&
  ok perturb-four-cuts-bit-identical || fail perturb-four-cuts-bit-identical "$(head -c 400 "$TMP/out")"
# any command reading DATA_PATH and writing PGOLF_SCORE_DUMP
cat >"$TMP/outside.sh" <<EOF
#!/bin/sh
exec "$PGOLF" eval --artifact "$ART" --tokenizer "$TOK" --threads 1 --mode sliding --seq-len 32 --stride 16 \
  --data "\$DATA_PATH" --score-dump "\$PGOLF_SCORE_DUMP" --probe-at "\$PGOLF_PROBE_POSITIONS"
EOF
chmod +x "$TMP/outside.sh"
expect_rc perturb-command 0 "$PGOLF" audit --perturb --data "$DATA" --cut 300 --cut 700 -- "$TMP/outside.sh"
# an evaluator that scores the original split whatever it is given proves nothing
sed 's|"\$DATA_PATH"|"'"$DATA"'"|' "$TMP/outside.sh" >"$TMP/ignores.sh"
chmod +x "$TMP/ignores.sh"
expect_rc perturb-inconclusive 1 "$PGOLF" audit --perturb --data "$DATA" --cut 300 -- "$TMP/ignores.sh"
grep -q inconclusive "$TMP/out" && ok perturb-says-inconclusive || fail perturb-says-inconclusive "$(cat "$TMP/out")"
expect_err perturb-command-fails 2 'exited with status 3' "$PGOLF" audit --perturb --data "$DATA" -- sh -c 'exit 3'
expect_err perturb-no-evaluator 2 'give the evaluator' "$PGOLF" audit --perturb --data "$DATA"
expect_err perturb-bad-cut 2 'cuts must be' "$PGOLF" audit --perturb --data "$DATA" --cut 5000 -- true

# usage and input errors
expect_err eval-no-dump 2 'score-dump is required' ev --mode plain
expect_err eval-bad-mode 2 'plain, sliding or ttt' ev --mode best --score-dump "$TMP/x.pgsd"
expect_err eval-plain-stride 2 'do not overlap' ev --mode plain --stride 8 --score-dump "$TMP/x.pgsd"
expect_err eval-ttt-option 2 'for --mode ttt' ev --mode sliding --chunk 8 --score-dump "$TMP/x.pgsd"
expect_err eval-long-window 2 'seq-len' ev --mode sliding --seq-len 65 --score-dump "$TMP/x.pgsd"
expect_err eval-stride-too-long 2 'stride' ev --mode sliding --seq-len 32 --stride 33 --score-dump "$TMP/x.pgsd"
expect_err eval-bad-device 2 'cpu or cuda' ev --mode plain --device gpu --score-dump "$TMP/x.pgsd"
# No GPU here: --device cuda refuses with the runtime's reason (or says the
# build has no CUDA path), exit 2, before reading the data.
if "$PGOLF" gpu >"$TMP/gpu.out" 2>&1; then
  skip eval-device-cuda-no-gpu "this machine has a GPU: $(head -n 1 "$TMP/gpu.out")"
else
  ev --mode plain --device cuda --score-dump "$TMP/x.pgsd" >/dev/null 2>"$TMP/cuda.err"
  rc=$?
  if [ "$rc" -eq 2 ] && grep -Eq '^pgolf: eval: --device cuda: (no CUDA device: |this pgolf was built without CUDA)' "$TMP/cuda.err"; then
    ok eval-device-cuda-no-gpu
  else
    fail eval-device-cuda-no-gpu "exit $rc: $(cat "$TMP/cuda.err")"
  fi
fi
head -c 1000 "$ART" >"$TMP/cut.ptz"
expect_err eval-truncated-artifact 2 'cut.ptz' "$PGOLF" eval --artifact "$TMP/cut.ptz" --data "$DATA" \
  --tokenizer "$TOK" --mode plain --score-dump "$TMP/x.pgsd"
[ ! -e "$TMP/x.pgsd" ] && ok no-dump-on-error || fail no-dump-on-error "a dump was left behind"
expect_rc eval-help 0 "$PGOLF" eval --help
