# pgolf check: training on the validation tokens before scoring them
# (VAL_TRAIN_BEFORE_SCORE). The folders are generated here; the trainer
# is the shape of the pre-quant TTT PRs the maintainers closed (PR #1376,
# PR #1487's call with `val_data.val_tokens`), its log lines those runs
# printed (`prequant_ttt:epoch 1/10 loss:...`), and the legal form beside
# it is the leaderboard's score-first TTT, which scores each chunk before
# training on it.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"

# prequant_script FILE: a training script stand-in whose evaluation is
# preceded, when PREQUANT_TTT_ENABLED is set, by epochs of AdamW on the
# validation tokens.
prequant_script() {
  cat >"$1" <<'PY'
import os
import torch
prequant_ttt_enabled = bool(int(os.environ.get("PREQUANT_TTT_ENABLED", "0")))
def prequant_ttt_adapt_adamw(h, base_model, device, val_tokens, rank=0, world_size=1):
    optimizer = torch.optim.AdamW(base_model.parameters(), lr=h.prequant_ttt_lr)
    for epoch in range(h.prequant_ttt_epochs):
        for bs in range(0, 100, 8):
            local = val_tokens[bs:bs + 9].to(device=device, dtype=torch.int64)
            loss = base_model(local[:-1], local[1:])
            loss.backward()
            optimizer.step()
        print(f"prequant_ttt:epoch {epoch + 1}/{h.prequant_ttt_epochs} loss:{loss.item():.4f}")
def main(h, base_model, device, val_data):
    if prequant_ttt_enabled:
        prequant_ttt_adapt_adamw(h, base_model, device, val_data.val_tokens)
    print("final_int6_roundtrip_exact")
PY
}

# ttt_lines FILE: the trainer's lines, before the final metric.
ttt_lines() {
  sed -i 's/^final_int6_roundtrip_exact /prequant_ttt:epoch 1\/2 loss:2.5012\nprequant_ttt:epoch 2\/2 loss:2.4817\n&/' "$1"
}

P=$F/prequant
record_folder "$P" 1.10000000
prequant_script "$P/train_gpt.py"
printf '# Fixture\n\n    PREQUANT_TTT_ENABLED=1 torchrun --standalone --nproc_per_node=8 train_gpt.py\n' >"$P/README.md"
ttt_lines "$P/train_seed1.log"
has vt_prequant_errors VAL_TRAIN_BEFORE_SCORE error \
  'the claimed run trains on the validation tokens before scoring them: .prequant_ttt_adapt_adamw. \(train_gpt.py:4\) runs backward passes and optimizer steps over the validation tokens \(train_gpt.py:8 .local=val_tokens\[bs:bs\+9\].*train_gpt.py:15 calls it on the whole stream .val_data.val_tokens.; its log shows it ran \(train_seed1.log:8 .prequant_ttt:epoch 1/2 loss:2.5012.*before the final metric \(train_seed1.log:10 .final_int6_roundtrip.*PR #1376' "$P"
has vt_nonrecord_warns VAL_TRAIN_BEFORE_SCORE warning 'the claimed run trains on the validation tokens' "$P" --track nonrecord

# The same code, its run without the trainer (PR #1489's NoTTT folder).
O=$F/off
record_folder "$O" 1.10000000
prequant_script "$O/train_gpt.py"
has vt_unshown_warns VAL_TRAIN_BEFORE_SCORE warning \
  'the counted code trains on the validation tokens before scoring them: .prequant_ttt_adapt_adamw.*no log prints what it prints before a final metric' "$O"
if grep -A1 '"code": "VAL_TRAIN_BEFORE_SCORE"' "$TMP/out" | grep -q '"severity": "error"'; then
  fail vt_unshown_no_error "an error when no log shows the trainer ran"
else ok vt_unshown_no_error; fi

# The trainer's lines after the final metric: the score came first.
A=$F/after
record_folder "$A" 1.10000000
prequant_script "$A/train_gpt.py"
printf 'prequant_ttt:epoch 1/2 loss:2.5012\n' >>"$A/train_seed1.log"
has vt_after_final_warns VAL_TRAIN_BEFORE_SCORE warning 'no log prints what it prints before a final metric' "$A"

# A log that begins with the script's copy: its lines, a docstring that
# begins with the trainer's text included, are no lines the run printed.
C=$F/copy
record_folder "$C" 1.10000000
prequant_script "$C/train_gpt.py"
printf '"""\nprequant_ttt:epoch lines go to the log, one an epoch.\n"""\n' | cat - "$C/train_gpt.py" >"$TMP/s.py"
mv "$TMP/s.py" "$C/train_gpt.py"
LOSS=$(awk 'BEGIN { printf "%.8f", 1.1 * log(2) / 0.268 }') BPB=1.10000000 \
  mini_log "$C/train_seed1.log" 1 15000000 15 "$C/train_gpt.py"
has vt_copy_not_shown VAL_TRAIN_BEFORE_SCORE warning 'no log prints what it prints' "$C"

# A module the script imports, a keyword argument.
M=$F/module
record_folder "$M" 1.10000000
printf 'from ttt import adapt\nadapt(model, tokens=val_tokens, epochs=3)\n' >"$M/train_gpt.py"
printf 'def adapt(model, tokens, epochs):\n    for e in range(epochs):\n        model(tokens[e:e + 9]).backward()\n        opt.step()\n        log0(f"adapt:epoch {e}")\n' >"$M/ttt.py"
sed -i 's/^final_int6_roundtrip_exact /adapt:epoch 0\n&/' "$M/train_seed1.log"
has vt_module_errors VAL_TRAIN_BEFORE_SCORE error 'ttt.py:1\) runs backward.*train_gpt.py:2 calls it on the whole stream .val_tokens.' "$M"

# Score-first TTT (the leaderboard's): each chunk scored, then trained on.
S=$F/score_first
record_folder "$S" 1.10000000
cat >"$S/train_gpt.py" <<'PY'
import torch
def eval_val_ttt(model, val_tokens, base_bytes_lut):
    for ci in range(8):
        with torch.no_grad():
            nll = model(val_tokens[ci * 8:ci * 8 + 9])
        for ep in range(3):
            model(val_tokens[ci * 8:ci * 8 + 9]).backward()
            opt.step()
        print(f"ttt_chunk:{ci}")
eval_val_ttt(model, val_tokens, base_bytes_lut)
PY
sed -i 's/^final_int6_roundtrip_exact /ttt_chunk:0\n&/' "$S/train_seed1.log"
lacks vt_score_first_passes VAL_TRAIN_BEFORE_SCORE "$S"
