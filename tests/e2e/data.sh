# pgolf data overlap on shards written here: disjoint splits pass,
# validation documents in training are found (also across a shard
# boundary), short documents, the BOS id from a tokenizer, input errors;
# and challenge.h's published figures against the data manifest copy.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

le16() { printf "$(printf '\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)))"; }

# mkshard FILE TOKEN...: a shard in the challenge's format.
mkshard() {
  f=$1
  shift
  {
    le32 20240520; le32 1; le32 $#
    dd if=/dev/zero bs=1012 count=1 2>/dev/null
    for t in "$@"; do le16 "$t"; done
  } >"$f"
}

D=$TMP/d
mkdir -p "$D/clean" "$D/leak" "$D/span" "$D/bad"

# Validation: three documents (BOS = 1), one of them empty.
mkshard "$D/clean/fineweb_val_000000.bin" 1 10 11 12 1 13 14 1
mkshard "$D/clean/fineweb_train_000000.bin" 1 20 21 1 22 23 24 1 25
mkshard "$D/clean/fineweb_train_000001.bin" 1 26 27 1 13 15
expect_rc data_disjoint_exit0 0 "$PGOLF" data overlap --train "$D/clean" --val "$D/clean"
grep -q "validation documents found in training: 0 of 2 (0.00%)" "$TMP/out" && ok data_disjoint_report ||
  fail data_disjoint_report "$(cat "$TMP/out")"
grep -q "not compared (fewer than 1 tokens): 1 validation, 0 training documents" "$TMP/out" &&
  ok data_short_docs_left_out || fail data_short_docs_left_out "$(cat "$TMP/out")"
# Empty documents match every other empty one: left out by default,
# compared (and found) with --min-tokens 0.
mkdir -p "$D/empty"
cp "$D/clean/fineweb_val_000000.bin" "$D/empty/"
mkshard "$D/empty/fineweb_train_000000.bin" 1 1 20
expect_rc data_empty_docs_left_out 0 "$PGOLF" data overlap --train "$D/empty" --val "$D/empty"
expect_rc data_min_tokens_zero 1 "$PGOLF" data overlap --train "$D/empty" --val "$D/empty" --min-tokens 0

# A validation document (13 14) also in training, in the second shard.
cp "$D/clean/fineweb_val_000000.bin" "$D/leak/"
cp "$D/clean/fineweb_train_000000.bin" "$D/leak/"
mkshard "$D/leak/fineweb_train_000001.bin" 1 26 27 1 13 14 1 40
expect_rc data_overlap_exit1 1 "$PGOLF" data overlap --train "$D/leak" --val "$D/leak"
grep -q "validation documents found in training: 1 of 2 (50.00%), in 1 training documents" "$TMP/out" &&
  ok data_overlap_counted || fail data_overlap_counted "$(cat "$TMP/out")"
grep -q "^  fineweb_val_000000.bin:4 = fineweb_train_000001.bin:3 (2 tokens)$" "$TMP/out" &&
  ok data_overlap_position || fail data_overlap_position "$(cat "$TMP/out")"
"$PGOLF" data overlap --train "$D/leak" --val "$D/leak" --json >"$TMP/out" 2>&1
[ "$(jq -r '.matched_val_docs, .first[0].train_shard, .first[0].train_offset, .verdict' "$TMP/out" | tr '\n' ' ')" = \
  "1 fineweb_train_000001.bin 3 overlap " ] && ok data_overlap_json || fail data_overlap_json "$(cat "$TMP/out")"

# A document that starts at the end of one training shard and ends in the
# next is one document; the stream's head before its first BOS too.
mkshard "$D/span/fineweb_val_000000.bin" 10 11 1 30 31 32 33
mkshard "$D/span/fineweb_train_000000.bin" 1 50 1 30 31
mkshard "$D/span/fineweb_train_000001.bin" 32
mkshard "$D/span/fineweb_train_000002.bin" 33 1 10 11
expect_rc data_span_exit1 1 "$PGOLF" data overlap --train "$D/span" --val "$D/span"
grep -q "found in training: 2 of 2" "$TMP/out" && grep -q "fineweb_val_000000.bin:2 = fineweb_train_000000.bin:2 (4 tokens)" "$TMP/out" &&
  grep -q "fineweb_val_000000.bin:0 = fineweb_train_000002.bin:1 (2 tokens)" "$TMP/out" &&
  ok data_span_shards || fail data_span_shards "$(cat "$TMP/out")"
# The same shards with another BOS id split differently: nothing matches.
expect_rc data_bos_option 0 "$PGOLF" data overlap --train "$D/span" --val "$D/span" --bos 50
expect_rc data_bos_from_tokenizer 1 "$PGOLF" data overlap --train "$D/span" --val "$D/span" \
  --tokenizer "$ROOT/data/tokenizers/fineweb_1024_bpe.model"

# Real text: the demo splits (KJV chapters, sp1024) are disjoint; training
# data that also holds the validation shard (what preparing with too few
# validation documents does) contains every validation chapter.
expect_rc data_demo_disjoint 0 "$PGOLF" data overlap --train "$ROOT/data/demo" --val "$ROOT/data/demo"
mkdir -p "$D/demo_leak"
cp "$ROOT/data/demo/fineweb_train_000000.bin" "$D/demo_leak/fineweb_train_000001.bin"
cp "$ROOT/data/demo/fineweb_val_000000.bin" "$D/demo_leak/fineweb_train_000000.bin"
expect_rc data_demo_leak 1 "$PGOLF" data overlap --train "$D/demo_leak" --val "$ROOT/data/demo"
grep -q "found in training: 119 of 119 (100.00%)" "$TMP/out" && ok data_demo_leak_all ||
  fail data_demo_leak_all "$(cat "$TMP/out")"

# Input errors: exit 2, naming the input.
expect_err data_missing_dir 2 "$D/none" "$PGOLF" data overlap --train "$D/none" --val "$D/clean"
printf 'not a shard' >"$D/bad/fineweb_val_000000.bin"
cp "$D/clean/fineweb_train_000000.bin" "$D/bad/"
expect_err data_bad_shard 2 "fineweb_val_000000.bin.*shorter than the 1024-byte shard header" \
  "$PGOLF" data overlap --train "$D/bad" --val "$D/bad"
expect_err data_bos_range 2 "--bos" "$PGOLF" data overlap --train "$D/clean" --val "$D/clean" --bos 70000
expect_err data_needs_both 2 "required" "$PGOLF" data overlap --train "$D/clean"
expect_err data_unknown_option 2 "unknown option" "$PGOLF" data overlap --train "$D/clean" --val "$D/clean" --fast
expect_rc data_help 0 "$PGOLF" data --help

# common/challenge.h's published figures are the manifest's.
M=$ROOT/data/fineweb10B_sp1024.manifest.json
H=$ROOT/common/challenge.h
want=$(jq -r '.datasets[0] | "\(.name) \(.stats.files_train) \(.stats.tokens_val) \(.stats.docs_val) \(.bos_id)"' "$M")
got=$(for k in SP1024_DATASET SP1024_TRAIN_FILES SP1024_VAL_TOKENS VAL_DOCS DATA_BOS_ID; do
  sed -n "s/^#define CHALLENGE_$k \"\{0,1\}\([^\" ]*\)\"\{0,1\}.*/\1/p" "$H" | sed 's/LL$//'; done | tr '\n' ' ')
[ "$got" = "$want " ] && ok data_challenge_h_matches_manifest || fail data_challenge_h_matches_manifest "challenge.h: $got manifest: $want"
[ "$(jq -r '.append_eos' "$M")" = false ] && ok data_manifest_no_eos || fail data_manifest_no_eos "append_eos is not false"
