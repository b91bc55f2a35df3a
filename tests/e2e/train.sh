# pgolf train end to end, on the demo data with the tiny model, a small
# batch and a small validation split so each run takes a second or two:
# the same command twice, 1 and 2 threads, and a run stopped and resumed
# all give the same loss chain; the manifest verifies and a flipped loss
# bit fails it; the log has the official line formats; bad configuration
# keys, values and option mixes exit 2 naming what is wrong.
. "$(dirname "$0")/lib.sh"

TOK=data/tokenizers/fineweb_1024_bpe.model
# Spinning OpenMP threads starve each other on a busy machine (see ci/demo.sh).
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
DATA=$TMP/data
small_demo_data "$DATA" 1025

cat >"$TMP/small.json" <<EOF
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 512, "iterations": 6, "warmdown_iters": 3,
 "val_batch_size": 1024, "train_log_every": 1, "data": "$DATA", "tokenizer": "$TOK"}
EOF

chain() { jq -r .predicate.losses.chain "$1/manifest.json"; }

train() { "$PGOLF" train --config "$TMP/small.json" --quiet "$@"; }

expect_rc train-runs 0 train --threads 2 --out "$TMP/a"
[ -f "$TMP/a/manifest.json" ] && [ -f "$TMP/a/model.int8.ptz" ] && [ -f "$TMP/a/checkpoint" ] &&
  [ -f "$TMP/a/train.log" ] && ok outputs-written || fail outputs-written "$(ls "$TMP/a")"
n_steps=$(jq '.predicate.losses.steps | length' "$TMP/a/manifest.json")
[ "$n_steps" = 6 ] && ok six-steps-recorded || fail six-steps-recorded "$n_steps steps"

expect_rc train-again 0 train --threads 2 --out "$TMP/b"
[ "$(chain "$TMP/a")" = "$(chain "$TMP/b")" ] && ok same-chain-twice || fail same-chain-twice "$(chain "$TMP/a") vs $(chain "$TMP/b")"
expect_rc manifests-equal 0 "$PGOLF" manifest diff "$TMP/a/manifest.json" "$TMP/b/manifest.json"

expect_rc train-one-thread 0 train --threads 1 --out "$TMP/t1"
[ "$(chain "$TMP/a")" = "$(chain "$TMP/t1")" ] && ok same-chain-1-and-2-threads ||
  fail same-chain-1-and-2-threads "$(chain "$TMP/a") vs $(chain "$TMP/t1")"
[ "$(jq .predicate.environment.threads "$TMP/t1/manifest.json")" = 1 ] && ok threads-recorded ||
  fail threads-recorded "$(jq .predicate.environment.threads "$TMP/t1/manifest.json")"

# Stopped after step 3 (checkpoints at 2, then at the stop), resumed with
# another thread count.
expect_rc train-stop 0 train --threads 2 --checkpoint-every 2 --stop-after 3 --out "$TMP/r"
[ -f "$TMP/r/checkpoint" ] && [ ! -f "$TMP/r/manifest.json" ] && ok stop-leaves-checkpoint ||
  fail stop-leaves-checkpoint "$(ls "$TMP/r")"
expect_rc train-resume 0 "$PGOLF" train --resume "$TMP/r" --threads 1 --quiet
[ "$(chain "$TMP/a")" = "$(chain "$TMP/r")" ] && ok resume-same-chain ||
  fail resume-same-chain "$(chain "$TMP/a") vs $(chain "$TMP/r")"
expect_rc resumed-manifest-equal 0 "$PGOLF" manifest diff "$TMP/a/manifest.json" "$TMP/r/manifest.json"

# Mixed precision: also the same bits for 1 and 2 threads, and not fp32's.
expect_rc mixed-2-threads 0 train --precision mixed --threads 2 --out "$TMP/m2"
expect_rc mixed-1-thread 0 train --precision mixed --threads 1 --out "$TMP/m1"
[ "$(chain "$TMP/m1")" = "$(chain "$TMP/m2")" ] && ok mixed-same-chain-1-and-2-threads ||
  fail mixed-same-chain-1-and-2-threads "$(chain "$TMP/m1") vs $(chain "$TMP/m2")"
[ "$(chain "$TMP/m1")" != "$(chain "$TMP/a")" ] && ok mixed-differs-from-fp32 || fail mixed-differs-from-fp32 "same chain"

# A budget becomes a step count before training, recorded with its plan.
expect_err steps-zero 2 "steps" train --steps 0 --out "$TMP/x0"
"$PGOLF" train --config "$TMP/small.json" --budget 30 --threads 2 --json --out "$TMP/bud" >"$TMP/bud.json" 2>"$TMP/err"
jq -e '.finished == true and .steps == 6' "$TMP/bud.json" >/dev/null && ok budget-json-result ||
  fail budget-json-result "$(cat "$TMP/bud.json" "$TMP/err" | head -c 400)"
jq -e '.predicate.schedule.wall_clock_budget_s == 30 and .predicate.schedule.plan.planned_steps == 6 and
  .predicate.schedule.total_steps == 6 and .predicate.schedule.plan.measured_step_ms > 0' \
  "$TMP/bud/manifest.json" >/dev/null && ok budget-plan-recorded || fail budget-plan-recorded "$(jq .predicate.schedule "$TMP/bud/manifest.json")"
[ "$(chain "$TMP/a")" = "$(chain "$TMP/bud")" ] && ok budget-timing-steps-leave-no-trace ||
  fail budget-timing-steps-leave-no-trace "$(chain "$TMP/a") vs $(chain "$TMP/bud")"

# Killed (SIGKILL, no chance to clean up) after its first periodic
# checkpoint, then resumed: the chain of an uninterrupted run. If the run
# outpaces the kill, resuming a finished run must still give the same chain.
jq '.iterations = 120' "$TMP/small.json" >"$TMP/long.json"
"$PGOLF" train --config "$TMP/long.json" --quiet --threads 2 --out "$TMP/long" >/dev/null 2>&1
"$PGOLF" train --config "$TMP/long.json" --quiet --threads 2 --checkpoint-every 10 --out "$TMP/k" >/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f "$TMP/k/checkpoint" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
expect_rc resume-after-kill 0 "$PGOLF" train --resume "$TMP/k" --quiet
[ "$(chain "$TMP/long")" = "$(chain "$TMP/k")" ] && ok kill-resume-same-chain ||
  fail kill-resume-same-chain "$(chain "$TMP/long") vs $(chain "$TMP/k")"

# A different seed is a different run (the chain is not a constant).
expect_rc train-seed 0 train --threads 2 --seed 7 --out "$TMP/s"
[ "$(chain "$TMP/a")" != "$(chain "$TMP/s")" ] && ok seed-changes-chain || fail seed-changes-chain "same chain"

# The manifest verifies, and a flipped loss bit is caught.
expect_rc verify-passes 0 "$PGOLF" manifest verify "$TMP/a/manifest.json"
jq '.predicate.losses.steps[2].loss_bits |= (.[0:9] + (if .[9:10] == "0" then "1" else "0" end))' \
  "$TMP/a/manifest.json" >"$TMP/flipped.json"
expect_rc verify-flipped-bit 1 "$PGOLF" manifest verify "$TMP/flipped.json"
[ "$(jq -r .predicate.init.sha256 "$TMP/a/manifest.json" | wc -c)" = 65 ] && ok init-sha-recorded ||
  fail init-sha-recorded "$(jq .predicate.init "$TMP/a/manifest.json" | head -3)"
jq -e '.predicate.artifact.total_bytes == .predicate.artifact.code_bytes + .predicate.artifact.model_bytes and
  .predicate.artifact.code_bytes > 0 and .predicate.evaluation.mode == "int8_zlib_roundtrip"' \
  "$TMP/a/manifest.json" >/dev/null && ok artifact-accounting || fail artifact-accounting "$(jq .predicate.artifact "$TMP/a/manifest.json")"

# Code bytes are counted over the files of the binary's source digest:
# when the tree matches, the recomputed digest is the binary's.
jq -r '.predicate.artifact | "\(.code_matches_binary) \(.code_digest)"' "$TMP/a/manifest.json" >"$TMP/code"
read -r matches digest <"$TMP/code"
# A mismatch is only acceptable when a source is newer than the binary (a
# tree edited since the build); otherwise it means code bytes counted other
# files than the digest (as when a part moved and the count missed it).
binary_digest=$("$PGOLF" version | sed -n 's/^source //p')
edited=$(find common formats kernels manifests trainer verifier Makefile -newer "$PGOLF" \
  \( -name '*.[ch]' -o -name '*.cu' -o -name Makefile \) 2>/dev/null | head -n 1)
if [ "$matches" = true ] && [ "$digest" = "$binary_digest" ]; then ok code-digest-matches
elif [ -n "$edited" ] && [ "$matches" = false ] && [ "$digest" != "$binary_digest" ] && [ ${#digest} = 64 ]; then
  ok "code-digest-differs (sources edited since the build: $edited)"
else fail code-digest "$matches $digest vs $binary_digest (no source is newer than the binary)"; fi

# DIR/losses.txt is a loss file: `manifest create --losses` gives the same chain.
echo '{}' >"$TMP/empty.json"
expect_rc losses-file-reads 0 "$PGOLF" manifest create --config "$TMP/empty.json" --tokenizer "$TOK" \
  --data "$DATA" --seed 1337 --losses "$TMP/a/losses.txt" -o "$TMP/from-losses.json"
[ "$(jq -r .predicate.losses.chain "$TMP/from-losses.json")" = "$(chain "$TMP/a")" ] && ok losses-file-same-chain ||
  fail losses-file-same-chain "$(jq -r .predicate.losses.chain "$TMP/from-losses.json") vs $(chain "$TMP/a")"

# The official log line formats.
log=$TMP/a/train.log
for pat in '^seed:1337$' '^step:1/6 train_loss:[0-9]+\.[0-9]{4} train_time:[0-9]+ms step_avg:[0-9]+\.[0-9]{2}ms$' \
  '^step:6/6 val_loss:[0-9]+\.[0-9]{4} val_bpb:[0-9]+\.[0-9]{4} train_time:[0-9]+ms step_avg:[0-9.]+ms$' \
  '^Serialized model int8\+zlib: [0-9]+ bytes' '^Code size: [0-9]+ bytes$' \
  '^Total submission size int8\+zlib: [0-9]+ bytes$' \
  '^final_int8_zlib_roundtrip val_loss:[0-9.]+ val_bpb:[0-9.]+ eval_time:[0-9]+ms$' \
  '^final_int8_zlib_roundtrip_exact val_loss:[0-9]+\.[0-9]{8} val_bpb:[0-9]+\.[0-9]{8}$' '^Hyperparameters:$'; do
  grep -Eq "$pat" "$log" && ok "log-line $pat" || fail "log-line $pat" "not in $(head -c 600 "$log")"
done
# The logged loss of step 1 is the recorded bits, to 4 decimals.
bits=$(jq -r '.predicate.losses.steps[0].loss_bits' "$TMP/a/manifest.json")
want=$(printf '%.4f' "$(awk "BEGIN { b = $(printf '%d' "$bits"); e = int(b / 8388608) % 256; m = b % 8388608; printf \"%.9g\", (1 + m / 8388608) * 2 ^ (e - 127) }")")
grep -q "^step:1/6 train_loss:$want " "$log" && ok log-loss-matches-bits || fail log-loss-matches-bits "$bits -> $want; $(grep '^step:1/' "$log")"

# Bad configurations: exit 2, naming the key.
echo '{"preset": "tiny", "bogus_key": 1}' >"$TMP/bad1.json"
expect_err bad-key 2 'bogus_key' "$PGOLF" train --config "$TMP/bad1.json" --out "$TMP/x"
echo '{"preset": "tiny", "iterations": -5}' >"$TMP/bad2.json"
expect_err bad-value 2 '"iterations"' "$PGOLF" train --config "$TMP/bad2.json" --out "$TMP/x"
echo '{"preset": "tiny", "matrix_lr": "fast"}' >"$TMP/bad3.json"
expect_err bad-type 2 '"matrix_lr"' "$PGOLF" train --config "$TMP/bad3.json" --out "$TMP/x"
echo '{"preset": "tiny", "train_batch_tokens": 1000}' >"$TMP/bad4.json"
expect_err bad-batch-split 2 'train_batch_tokens' "$PGOLF" train --config "$TMP/bad4.json" --out "$TMP/x"
expect_err bad-preset 2 'huge' "$PGOLF" train --preset huge --out "$TMP/x"
expect_err steps-and-budget 2 'exclude' "$PGOLF" train --preset tiny --steps 3 --budget 10 --out "$TMP/x"
expect_err bad-threads 2 'threads' "$PGOLF" train --preset tiny --threads 0 --out "$TMP/x"
expect_err resume-with-seed 2 'resume' "$PGOLF" train --resume "$TMP/r" --seed 3
expect_err no-config 2 'preset' "$PGOLF" train --out "$TMP/x"
expect_err unknown-option 2 'unknown' "$PGOLF" train --preset tiny --bogus
expect_rc help 0 "$PGOLF" train --help

# A damaged checkpoint is refused before anything runs.
cp -r "$TMP/r" "$TMP/bad"
printf 'X' | dd of="$TMP/bad/checkpoint" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_err resume-corrupt 2 'digest' "$PGOLF" train --resume "$TMP/bad" --quiet
