# pgolf train --world N in one process: N emulated ranks, each on its
# official span of the stream with grad_accum_steps = 8 / N, gradients
# combined in rank order. The chain of --world 8 is the same for 1 and 2
# threads; --world 1 is the default run, bit for bit; world sizes are not
# interchangeable (2 and 8 give different chains); the log and manifest
# record the world; a world that does not divide 8 exits 2.
. "$(dirname "$0")/lib.sh"

TOK=data/tokenizers/fineweb_1024_bpe.model
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
DATA=$TMP/data
small_world_run "$TMP/small.json" "$DATA"
chain() { jq -r .predicate.losses.chain "$1/manifest.json"; }
train() { "$PGOLF" train --config "$TMP/small.json" --quiet "$@"; }

expect_rc world8-2-threads 0 train --world 8 --threads 2 --out "$TMP/w8a"
expect_rc world8-1-thread 0 train --world 8 --threads 1 --out "$TMP/w8b"
[ "$(chain "$TMP/w8a")" = "$(chain "$TMP/w8b")" ] && ok world8-same-chain-1-and-2-threads ||
  fail world8-same-chain-1-and-2-threads "$(chain "$TMP/w8a") vs $(chain "$TMP/w8b")"
expect_same world8-same-artifact "$TMP/w8a/model.int8.ptz" "$TMP/w8b/model.int8.ptz"

expect_rc default-run 0 train --threads 2 --out "$TMP/d"
expect_rc world1-run 0 train --world 1 --threads 2 --out "$TMP/w1"
[ "$(chain "$TMP/d")" = "$(chain "$TMP/w1")" ] && ok world1-is-the-default ||
  fail world1-is-the-default "$(chain "$TMP/d") vs $(chain "$TMP/w1")"

expect_rc world2-run 0 train --world 2 --threads 2 --out "$TMP/w2"
[ "$(chain "$TMP/w2")" != "$(chain "$TMP/w8a")" ] && ok world2-differs-from-world8 ||
  fail world2-differs-from-world8 "same chain $(chain "$TMP/w2")"

grep -q '^world_size:8 grad_accum_steps:1$' "$TMP/w8a/train.log" && ok log-world8 ||
  fail log-world8 "$(grep world_size "$TMP/w8a/train.log")"
grep -q '^world_size:2 grad_accum_steps:4$' "$TMP/w2/train.log" && ok log-world2 ||
  fail log-world2 "$(grep world_size "$TMP/w2/train.log")"
w=$(jq -c '[.predicate.config.world_size, .predicate.config.grad_accum_steps, .predicate.environment.world_size, .predicate.environment.processes]' "$TMP/w8a/manifest.json")
[ "$w" = "[8,1,8,1]" ] && ok manifest-world8 || fail manifest-world8 "$w"
w=$(jq -c '[.predicate.config.world_size, .predicate.environment.world_size]' "$TMP/d/manifest.json")
[ "$w" = "[1,1]" ] && ok manifest-world1 || fail manifest-world1 "$w"

# A world-8 run stopped and resumed continues the same chain.
expect_rc world8-stop 0 train --world 8 --threads 2 --stop-after 2 --out "$TMP/r"
expect_rc world8-resume 0 "$PGOLF" train --resume "$TMP/r" --threads 1 --quiet
[ "$(chain "$TMP/r")" = "$(chain "$TMP/w8a")" ] && ok world8-resume-same-chain ||
  fail world8-resume-same-chain "$(chain "$TMP/r") vs $(chain "$TMP/w8a")"

expect_err world-3 2 "world.*1, 2, 4 or 8" train --world 3 --out "$TMP/x3"
expect_err world-16 2 "world" train --world 16 --out "$TMP/x16"
expect_err world-with-resume 2 "configuration from the checkpoint" "$PGOLF" train --resume "$TMP/r" --world 2
printf '{"preset": "tiny", "world_size": 3}' >"$TMP/w3.json"
expect_err world-key-3 2 "world_size.*does not divide 8" "$PGOLF" train --config "$TMP/w3.json" --data "$DATA" --tokenizer "$TOK" --out "$TMP/x"
expect_err comm-timeout-zero 2 "comm-timeout" train --comm-timeout 0 --out "$TMP/xt"
# --device cuda here: no usable GPU (or no CUDA path in the build), the
# runtime's reason, nothing written.
expect_err device-cuda-refused 2 "train: --device cuda: (no CUDA device: .+|.*built without CUDA)" train --device cuda --out "$TMP/xc"
[ ! -e "$TMP/xc" ] && ok device-cuda-writes-nothing || fail device-cuda-writes-nothing "$(ls "$TMP/xc")"
expect_err device-cuda-gpus-refused 2 "no CUDA device|built without CUDA" train --device cuda --gpus 8 --out "$TMP/xc"
expect_err gpus-without-cuda 2 "--gpus needs --device cuda" train --gpus 2 --out "$TMP/xg"
expect_err device-unknown 2 "--device wants cpu or cuda" train --device tpu --out "$TMP/xd"
