#!/bin/sh
# pgolf tokenizer: byte tables identical to the sentencepiece golden files,
# info on the real models and on a crafted model with accounting hazards,
# and clean exit-2 errors on bad input.
. "$(dirname "$0")/lib.sh"

meta=golden/tokenizer_luts.meta.json

for n in 1024 2048 4096 8192; do
  model=data/tokenizers/fineweb_${n}_bpe.model
  expect_rc "luts-json-$n-runs" 0 "$PGOLF" tokenizer luts "$model" --json --vocab "$n"
  expect_same "luts-json-$n-golden" "$TMP/out" "golden/tokenizer_luts_$n.json"
  # Without --vocab the table is the model's size, which is the same here.
  "$PGOLF" tokenizer luts "$model" --json >"$TMP/out2" 2>&1
  expect_same "luts-json-$n-default-vocab" "$TMP/out2" "golden/tokenizer_luts_$n.json"

  expect_rc "info-json-$n" 0 "$PGOLF" tokenizer info "$model" --json
  for key in pieces types unk_id bos_id eos_id pad_id byte_pieces space_piece_id; do
    want=$(jq -c ".models[\"$n\"].info.$key" "$meta")
    got=$(jq -c ".$key" "$TMP/out")
    if [ "$want" = "$got" ]; then ok "info-$n-$key"; else fail "info-$n-$key" "got $got, golden $want"; fi
  done
done

# The 1024 model has no byte pieces: info must say so; the 8192 one has all 256.
"$PGOLF" tokenizer info data/tokenizers/fineweb_1024_bpe.model >"$TMP/info" 2>&1
if grep -q '^warning: no byte fallback' "$TMP/info"; then ok info-1024-warns-byte-fallback
else fail info-1024-warns-byte-fallback "$(cat "$TMP/info")"; fi
"$PGOLF" tokenizer info data/tokenizers/fineweb_8192_bpe.model --json >"$TMP/info" 2>&1
if [ "$(jq -c '[.byte_fallback, .warnings]' "$TMP/info")" = '[true,[]]' ]; then ok info-8192-no-warnings
else fail info-8192-no-warnings "$(cat "$TMP/info")"; fi

# A larger --vocab pads with boundaries of 0 bytes.
"$PGOLF" tokenizer luts data/tokenizers/fineweb_1024_bpe.model --json --vocab 1030 >"$TMP/pad" 2>&1
if [ "$(jq -c '[.vocab_size, (.base_bytes[1024:] | unique), (.is_boundary[1024:] | unique)]' "$TMP/pad")" = \
     '[1030,[0],[true]]' ]; then ok luts-vocab-padding
else fail luts-vocab-padding "$(head -c 200 "$TMP/pad")"; fi

# The readable table names the pieces.
expect_rc luts-table 0 "$PGOLF" tokenizer luts data/tokenizers/fineweb_1024_bpe.model
if grep -Eq '^ +3 +unknown +0 +no +yes +<unk>$' "$TMP/out"; then ok luts-table-unk-row
else fail luts-table-unk-row "$(sed -n 1,6p "$TMP/out")"; fi

# A crafted model: <unk> and "a" only, no trainer spec: no byte fallback,
# no standalone U+2581 piece.
printf '\012\011\012\005<unk>\030\002\012\003\012\001a' >"$TMP/hazard.model"
expect_rc info-hazard 0 "$PGOLF" tokenizer info "$TMP/hazard.model"
for w in 'no byte fallback' 'no standalone U\+2581 piece'; do
  if grep -Eq "^warning: $w" "$TMP/out"; then ok "info-hazard-$w"
  else fail "info-hazard-$w" "$(cat "$TMP/out")"; fi
done
"$PGOLF" tokenizer info "$TMP/hazard.model" --json >"$TMP/hz" 2>&1
if [ "$(jq -c '[.pieces, .types.unknown, .byte_fallback, .space_piece_id, (.warnings | length)]' "$TMP/hz")" = \
     '[2,1,false,-1,2]' ]; then ok info-hazard-json
else fail info-hazard-json "$(cat "$TMP/hz")"; fi

# Bad input: exit 2, "pgolf: FILE..." on stderr.
head -c 1000 data/tokenizers/fineweb_1024_bpe.model >"$TMP/cut.model"
expect_err bad-truncated 2 "^pgolf: $TMP/cut.model:offset [0-9]+: " \
  "$PGOLF" tokenizer luts "$TMP/cut.model" --json
: >"$TMP/empty.model"
expect_err bad-empty 2 "^pgolf: $TMP/empty.model:offset 0: no pieces" \
  "$PGOLF" tokenizer info "$TMP/empty.model"
printf '\012\012\012\006<0x4G>\030\006' >"$TMP/badbyte.model"
expect_err bad-byte-piece 2 "^pgolf: $TMP/badbyte.model:offset 0: piece 0: byte piece" \
  "$PGOLF" tokenizer info "$TMP/badbyte.model"
printf '\012\004\012\002\300\257' >"$TMP/utf8.model"
expect_err bad-utf8 2 "^pgolf: $TMP/utf8.model:offset 4: piece 0: invalid UTF-8 \\(overlong" \
  "$PGOLF" tokenizer luts "$TMP/utf8.model"
printf '\012\005\012\001a\030\011' >"$TMP/type.model"
expect_err bad-type-enum 2 "^pgolf: $TMP/type.model:offset 5: piece 0: unknown piece type 9" \
  "$PGOLF" tokenizer info "$TMP/type.model"
expect_err bad-missing 2 "^pgolf: $TMP/nope.model" "$PGOLF" tokenizer info "$TMP/nope.model"
expect_err bad-vocab-small 2 "^pgolf: .*smaller than the model's 1024 pieces" \
  "$PGOLF" tokenizer luts data/tokenizers/fineweb_1024_bpe.model --vocab 1000
expect_out_empty() { if [ -s "$TMP/out" ]; then fail "$1" "stdout not empty"; else ok "$1"; fi; }
expect_out_empty bad-vocab-small-no-stdout

# Usage.
expect_rc usage-none 2 "$PGOLF" tokenizer
expect_rc usage-no-model 2 "$PGOLF" tokenizer luts --json
expect_rc usage-bad-sub 2 "$PGOLF" tokenizer frobnicate
expect_rc usage-bad-opt 2 "$PGOLF" tokenizer info data/tokenizers/fineweb_1024_bpe.model --vocab 5
expect_rc usage-bad-vocab 2 "$PGOLF" tokenizer luts data/tokenizers/fineweb_1024_bpe.model --vocab x
expect_rc usage-two-models 2 "$PGOLF" tokenizer info a.model b.model
expect_rc help 0 "$PGOLF" tokenizer --help
# The verb's help lists both sub-verbs; each sub-verb's help is its own.
if grep -q 'tokenizer luts MODEL' "$TMP/out" && grep -q 'tokenizer info MODEL' "$TMP/out"; then
  ok help-text; else fail help-text "$(cat "$TMP/out")"; fi
expect_rc help-luts 0 "$PGOLF" tokenizer luts --help
expect_rc help-info 0 "$PGOLF" tokenizer info --help
if grep -q 'tokenizer info MODEL' "$TMP/out"; then ok help-info-text; else
  fail help-info-text "$(cat "$TMP/out")"; fi
