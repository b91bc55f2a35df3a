# pgolf check: validation targets stored in the artifact (VAL_PAID_PREFIX).
# The folders are generated here; the evaluation is the shape of the
# paid-prefix PRs (#168, #262: a stored slice compared with the targets,
# the loss zeroed where they agree) and the log lines those runs printed
# (`paid_prefix:loaded 6,200,000 tokens ...`, `Paid prefix blob: 0 bytes`
# when none was given).
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"

# prefix_script FILE: an evaluation that scores stored targets as certain.
prefix_script() {
  cat >"$1" <<'PY'
import torch
def eval_val(model, val_tokens, y_batch, paid_prefix_tokens=None):
    nll = model(val_tokens)
    if paid_prefix_tokens is not None:
        prefix_slice = paid_prefix_tokens[0:1024].to("cuda")
        match_mask = (prefix_slice == y_batch[0, :1024])
        nll[:1024] *= (~match_mask).to(nll.dtype)
    return nll.sum()
PY
}

P=$F/prefix
record_folder "$P" 1.05000000
prefix_script "$P/train_gpt.py"
sed -i 's/^final_int6_roundtrip_exact /paid_prefix:loaded 6,200,000 tokens from prefix.xz (4,240,472 bytes)\n&/' "$P/train_seed1.log"
has pp_loaded_errors VAL_PAID_PREFIX error \
  'the claimed run scores validation targets stored in the artifact: the evaluation compares stored tokens with the validation targets \(train_gpt.py:6 .match_mask=\(prefix_slice==y_batch\[0,:1024\]\).\) and zeroes the loss where they agree \(train_gpt.py:7 .*train_seed1.log:8 .paid_prefix:loaded 6,200,000 tokens.*paid prefix' "$P"
has pp_nonrecord_warns VAL_PAID_PREFIX warning 'the claimed run scores validation targets' "$P" --track nonrecord

# The same code, no prefix given (PR #290's `Paid prefix blob: 0 bytes`).
Z=$F/none
record_folder "$Z" 1.05000000
prefix_script "$Z/train_gpt.py"
sed -i 's/^final_int6_roundtrip_exact /Paid prefix blob: 0 bytes\n&/' "$Z/train_seed1.log"
has pp_empty_warns VAL_PAID_PREFIX warning 'no log shows a prefix loaded \(a line naming .paid_prefix. with a count' "$Z"
if grep -A1 '"code": "VAL_PAID_PREFIX"' "$TMP/out" | grep -q '"severity": "error"'; then
  fail pp_empty_no_error "an error when no prefix was loaded"
else ok pp_empty_no_error; fi

# Predictions compared with the targets: an accuracy, not a prefix.
A=$F/accuracy
record_folder "$A" 1.05000000
cat >"$A/train_gpt.py" <<'PY'
def eval_val(model, x, tgt):
    logits = model(x)
    correct = logits.argmax(-1) == tgt
    nll = loss_fn(logits, tgt)
    nll *= ~correct
    return nll.sum()
PY
lacks pp_prediction_passes VAL_PAID_PREFIX "$A"
