# pgolf check: hashed n-gram caches keyed on the target token
# (NGRAM_TARGET_KEY). The folders are generated here; the cache is the
# shape of the n-gram records the maintainers disallowed (PRs #779, #982:
# `full_key = ((ctx_hash ^ (tgt_np * primes[...])) & mask)`), the metric
# labels those runs printed (`final_int6_sliding_window_ngram7_exact`),
# and the leaderboard's Rascal (PR #1120), which ships such a cache
# switched off and scores without it.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"

# cache_script FILE: a training script stand-in whose evaluation blends a
# hashed n-gram cache when NGRAM_EVAL_ORDER is set.
cache_script() {
  cat >"$1" <<'PY'
import os
import numpy as np
ngram_eval_order = int(os.environ.get("NGRAM_EVAL_ORDER", 0))
primes = np.array([36313, 27191, 51647, 81929, 131071], dtype=np.uint64)
def ngram_blend(val_np, jv, p_model, ctx_tables, full_tables, mask, ctx_width):
    ctx_hash = np.zeros(len(jv), dtype=np.uint64)
    for k in range(ctx_width):
        tok = val_np[jv - (ctx_width - k)].astype(np.uint64)
        ctx_hash ^= tok * primes[k % len(primes)]
    ctx_key = (ctx_hash & mask).astype(np.int64)
    tgt_np = val_np[jv].astype(np.uint64)
    full_key = ((ctx_hash ^ (tgt_np * primes[ctx_width % len(primes)])) & mask).astype(np.int64)
    p_ng = full_tables[full_key] / np.maximum(ctx_tables[ctx_key], 1)
    return 0.8 * p_model + 0.2 * p_ng
PY
}

# ngram_log FILE SEED LABEL: a run whose final metric is LABEL.
ngram_log() {
  mini_log "$1" "$2" 15000000 2000
  sed -i "s/^final_int6_roundtrip_exact /$3 /" "$1"
}

N=$F/scored
mkdir -p "$N"
cache_script "$N/train_gpt.py"
printf '```\nNGRAM_EVAL_ORDER=7 torchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$N/README.md"
ngram_log "$N/train_seed1.log" 1 final_int6_sliding_window_ngram7_exact
has ngram_scored_errors NGRAM_TARGET_KEY error \
  'the claimed score is an n-gram cache.s \(train_seed1.log:8 .final_int6_sliding_window_ngram7_exact.\), a hashed cache whose key holds the target token itself \(train_gpt.py:12 .full_key=\(\(ctx_hash\^\(tgt_np\*primes\[.*PRs #779, #982' "$N"
has ngram_nonrecord_warns NGRAM_TARGET_KEY warning 'the claimed score is an n-gram cache' "$N" --track nonrecord

# Rascal's shape: the cache is in the code, the score is not named for it.
R=$F/off
mkdir -p "$R"
cache_script "$R/train_gpt.py"
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$R/README.md"
ngram_log "$R/train_seed1.log" 1 final_sliding_window_exact
has ngram_unnamed_warns NGRAM_TARGET_KEY warning \
  'the counted code holds a hashed n-gram cache whose key holds the target token itself \(train_gpt.py:12 .*no final metric of the claimed runs is named for it' "$R"
if grep -A1 '"code": "NGRAM_TARGET_KEY"' "$TMP/out" | grep -q '"severity": "error"'; then
  fail ngram_unnamed_no_error "an error when the score is not the cache's"
else ok ngram_unnamed_no_error; fi

# A cache keyed on the context alone, the target blended by candidates:
# nothing to report.
C=$F/context
mkdir -p "$C"
cache_script "$C/train_gpt.py"
sed -i 's/(tgt_np \* primes/(cand * primes/' "$C/train_gpt.py"
printf '```\nNGRAM_EVAL_ORDER=7 torchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$C/README.md"
ngram_log "$C/train_seed1.log" 1 final_int6_sliding_window_ngram7_exact
lacks ngram_other_key_passes NGRAM_TARGET_KEY "$C"

# The product the other way round, in an augmented xor, in a module the
# script imports.
M=$F/module
mkdir -p "$M"
printf 'from ngram_cache import blend\nprint("train")\n' >"$M/train_gpt.py"
printf 'def key(h, targets, PRIMES, n):\n    h ^= PRIMES[n] * targets.astype("uint64")\n    return h\n' >"$M/ngram_cache.py"
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$M/README.md"
ngram_log "$M/train_seed1.log" 1 final_ngram_exact
has ngram_module_errors NGRAM_TARGET_KEY error 'ngram_cache.py:2 .h\^=PRIMES\[n\]\*targets' "$M"

# PR #778's shape: the log's last metric is a plain one, and the claimed
# val_bpb is that of a metric line named for the cache.
V=$F/claimed_value
mkdir -p "$V"
cache_script "$V/train_gpt.py"
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$V/README.md"
BPB=1.12000000 ngram_log "$V/train_seed1.log" 1 final_sliding_window_exact
sed -i 's/^final_sliding_window_exact /final_ngram_fixed_alpha_exact val_loss:1.64737000 val_bpb:0.97570000\n&/' "$V/train_seed1.log"
printf '{"author":"a","github_id":"a","name":"n","date":"2026-03-25","val_bpb":0.9757}\n' >"$V/submission.json"
has ngram_claimed_value_errors NGRAM_TARGET_KEY error 'train_seed1.log:8 .final_ngram_fixed_alpha_exact.' "$V"
printf '{"author":"a","github_id":"a","name":"n","date":"2026-03-25","val_bpb":1.12}\n' >"$V/submission.json"
has ngram_other_value_warns NGRAM_TARGET_KEY warning 'no final metric of the claimed runs is named for it' "$V"

# The target under other names, the table as an attribute: PR #1033's
# `full_h = ctx_h ^ (y_batch * self.PRIMES[...])`, PR #870's
# `tokens_np[a:b] * target_prime`.
Y=$F/attribute
mkdir -p "$Y"
printf 'class Mixer:\n    def key(self, ctx_h, y_batch, order):\n        full_h = ctx_h ^ (y_batch * self.PRIMES[(order - 1) %% len(self.PRIMES)])\n        return full_h\n' >"$Y/train_gpt.py"
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$Y/README.md"
ngram_log "$Y/train_seed1.log" 1 final_ngram_exact
has ngram_attribute_errors NGRAM_TARGET_KEY error 'train_gpt.py:3 .full_h=ctx_h\^\(y_batch\*self.PRIMES' "$Y"
printf 'def key(h, tokens_np, a, b, target_prime, mask):\n    return (h ^ (tokens_np[a:b].astype(np.int64) * target_prime)) & mask\n' >"$Y/train_gpt.py"
has ngram_target_prime_errors NGRAM_TARGET_KEY error 'train_gpt.py:2 .return\(h\^\(tokens_np\[a:b\]' "$Y"
printf 'def key(h, x_batch, PRIMES, k):\n    return h ^ (x_batch * PRIMES[k])\n' >"$Y/train_gpt.py"
lacks ngram_context_name_passes NGRAM_TARGET_KEY "$Y"
