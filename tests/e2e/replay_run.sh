# pgolf replay MANIFEST: a pgolf run replays with an identical chain, artifact
# and metric; a manifest whose configuration was changed (one hyperparameter)
# is reported at its first differing step; a manifest with a broken chain
# is refused before any training; budgets are judged on the replay's clock;
# a run recorded on a GPU replays on a GPU, its environment compared.
. "$(dirname "$0")/lib.sh"

TOK=data/tokenizers/fineweb_1024_bpe.model
DATA=$TMP/data
small_demo_data "$DATA" 1025
cat >"$TMP/small.json" <<EOF2
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 512, "iterations": 6, "warmdown_iters": 3,
 "val_batch_size": 1024, "train_log_every": 1, "data": "$DATA", "tokenizer": "$TOK"}
EOF2

expect_rc "replay-run: original trains" 0 "$PGOLF" train --config "$TMP/small.json" --quiet \
  --threads 1 --out "$TMP/run"

# The same run on 2 threads: identical in every bit.
expect_rc "replay-run: identical replay passes" 0 "$PGOLF" replay "$TMP/run/manifest.json" \
  --threads 2 --quiet
if [ -f "$TMP/run/manifest.replay.json" ] &&
   [ "$(jq -r .verdict "$TMP/run/manifest.replay.json")" = pass ] &&
   [ "$(jq -r .summary.replay.chain "$TMP/run/manifest.replay.json")" = \
     "$(jq -r .predicate.losses.chain "$TMP/run/manifest.json")" ]; then
  ok "replay-run: replay manifest beside the original, same chain head"
else
  fail "replay-run: replay manifest beside the original, same chain head" \
    "$(cat "$TMP/run/manifest.replay.json" 2>/dev/null | head -c 400)"
fi

# One hyperparameter changed: the first step still matches (its loss comes
# before any update), the second does not.
jq '.predicate.config.matrix_lr = 0.02' "$TMP/run/manifest.json" >"$TMP/lr.json"
expect_rc "replay-run: changed hyperparameter reported at its first differing step" 1 \
  "$PGOLF" replay "$TMP/lr.json" --quiet
if grep -q "CHAIN_MISMATCH" "$TMP/out" && grep -q "first differing step 2:" "$TMP/out"; then
  ok "replay-run: the report names step 2"
else
  fail "replay-run: the report names step 2" "$(head -c 600 "$TMP/out")"
fi

# A manifest whose own chain is broken is refused without training.
jq '.predicate.losses.steps[2].loss_bits = "0x3f800000"' "$TMP/run/manifest.json" >"$TMP/bad.json"
expect_rc "replay-run: broken chain is a finding" 1 "$PGOLF" replay "$TMP/bad.json" --quiet
if grep -q MANIFEST_INVALID "$TMP/out" && [ ! -d "$TMP/bad.replay.d" ]; then
  ok "replay-run: nothing was trained for a broken manifest"
else
  fail "replay-run: nothing was trained for a broken manifest" "$(head -c 400 "$TMP/out")"
fi

# A training budget smaller than the run on the replay's clock.
expect_rc "replay-run: over budget on the replay's clock" 1 "$PGOLF" replay \
  "$TMP/run/manifest.json" --quiet --out "$TMP/budget" --budget-train 0.000001
grep -q TRAIN_OVER_BUDGET "$TMP/out" && ok "replay-run: TRAIN_OVER_BUDGET reported" ||
  fail "replay-run: TRAIN_OVER_BUDGET reported" "$(head -c 400 "$TMP/out")"

expect_err "replay-run: missing manifest exits 2" 2 "nope.json" "$PGOLF" replay "$TMP/nope.json"
expect_err "replay-run: bad --threads exits 2" 2 "threads" "$PGOLF" replay "$TMP/run/manifest.json" --threads 0

# A run recorded on a GPU replays on a GPU: without one, refused with the
# runtime's reason (exit 2); on the CPU (--device cpu) it replays, with a
# REPLAY_ENVIRONMENT warning naming both devices (the chain here is a CPU
# chain, so it still matches).
jq '.predicate.environment.device = {"kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "sm_count": 132,
    "compute_capability": "9.0", "cublaslt": {"cublaslt_version": 130001, "plans": []}}' \
  "$TMP/run/manifest.json" >"$TMP/gpu.json"
if "$PGOLF" gpu >/dev/null 2>&1; then
  "$PGOLF" replay "$TMP/gpu.json" --quiet --out "$TMP/gpu-on-gpu" >"$TMP/out" 2>"$TMP/err"
  grep -q REPLAY_ENVIRONMENT "$TMP/out" && ok "replay-run: a GPU run replayed on this GPU, its environment compared" ||
    fail "replay-run: a GPU run replayed on this GPU, its environment compared" "$(head -c 400 "$TMP/out" "$TMP/err")"
else
  expect_err "replay-run: a GPU run without a GPU exits 2" 2 "no CUDA device|built without CUDA" \
    "$PGOLF" replay "$TMP/gpu.json" --quiet --out "$TMP/gpu-none"
fi
expect_rc "replay-run: a GPU run replayed on the CPU" 0 "$PGOLF" replay "$TMP/gpu.json" --quiet \
  --device cpu --out "$TMP/gpu-on-cpu"
grep -q "REPLAY_ENVIRONMENT.*recorded on cuda (NVIDIA H100 80GB HBM3), replayed on cpu" "$TMP/out" &&
  ok "replay-run: the device difference is a warning that names both" ||
  fail "replay-run: the device difference is a warning that names both" "$(head -c 600 "$TMP/out")"
expect_err "replay-run: bad --device exits 2" 2 "cpu or cuda" "$PGOLF" replay "$TMP/gpu.json" --device tpu
