#!/bin/sh
# pgolf bpb against golden/demo_bytes.json, computed independently with the
# sentencepiece library by the official rule.
. tests/e2e/lib.sh
TOK=data/tokenizers/fineweb_1024_bpe.model
G=golden/demo_bytes.json

# check_split NAME SPLIT [SEQ_LEN]: tokens, targets and bytes equal the golden.
check_split() {
  name=$1 split=$2 seq=${3:-0}
  if [ "$seq" -eq 0 ]; then
    sel=".splits.$split"
    want_targets=$(jq -r "$sel.targets" $G)
    want_bytes=$(jq -r "$sel.target_bytes" $G)
  else
    sel=".splits.$split.truncated"
    want_targets=$(jq -r "$sel.targets" $G)
    want_bytes=$(jq -r "$sel.target_bytes" $G)
  fi
  want_tokens=$(jq -r ".splits.$split.tokens" $G)
  if ! "$PGOLF" bpb --json --tokenizer $TOK --split "$split" --seq-len "$seq" data/demo >"$TMP/bpb.json" 2>"$TMP/err"; then
    fail "$name" "pgolf bpb failed: $(cat "$TMP/err")"
    return
  fi
  got=$(jq -r '"\(.tokens) \(.targets) \(.bytes)"' "$TMP/bpb.json")
  want="$want_tokens $want_targets $want_bytes"
  if [ "$got" = "$want" ]; then ok "$name"; else fail "$name" "got '$got', golden '$want'"; fi
}

check_split "bpb: demo val split equals the sentencepiece golden" val
check_split "bpb: demo train split equals the sentencepiece golden" train
check_split "bpb: demo val, whole 1024-token sequences only" val 1024
check_split "bpb: demo train, whole 1024-token sequences only" train 1024

# With no unknown pieces, the rule gives exactly the decoded text's UTF-8 bytes.
unk=$(jq -r '.splits.val.unknown_tokens' $G)
dec=$(jq -r '.splits.val.decoded_text_bytes' $G)
got=$("$PGOLF" bpb --json --tokenizer $TOK data/demo | jq -r .bytes)
if [ "$unk" = 0 ] && [ -n "$got" ] && [ "$got" = "$dec" ]; then ok "bpb: val bytes equal the decoded text's UTF-8 length"
else fail "bpb: val bytes equal the decoded text's UTF-8 length" "unknown=$unk bytes=$got decoded=$dec"; fi

# The same split given as a file instead of a directory.
a=$("$PGOLF" bpb --json --tokenizer $TOK data/demo/fineweb_val_000000.bin | jq -r .bytes)
if [ -n "$a" ] && [ "$a" = "$got" ]; then ok "bpb: file and directory arguments agree"; else fail "bpb: file and directory arguments agree" "$a vs $got"; fi

# A split cut into two shards is one stream: the same totals.
u32le() { printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }
u16le() { printf "$(printf '\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)))"; }
header() { u32le 20240520; u32le 1; u32le "$1"; head -c 1012 /dev/zero; }
src=data/demo/fineweb_val_000000.bin
n=$(od -An -t d4 -j 8 -N 4 "$src" | tr -d ' ')
mkdir -p "$TMP/split2"
{ header 1000; tail -c +1025 "$src" | head -c 2000; } >"$TMP/split2/fineweb_val_000000.bin"
{ header $((n - 1000)); tail -c +3025 "$src"; } >"$TMP/split2/fineweb_val_000001.bin"
b=$("$PGOLF" bpb --json --tokenizer $TOK "$TMP/split2" | jq -r '"\(.tokens) \(.targets) \(.bytes)"')
w=$("$PGOLF" bpb --json --tokenizer $TOK data/demo | jq -r '"\(.tokens) \(.targets) \(.bytes)"')
if [ -n "$w" ] && [ "$b" = "$w" ]; then ok "bpb: a split over two shards counts as one stream"; else fail "bpb: a split over two shards counts as one stream" "$b vs $w"; fi

# Bad input: exit 2 and a message naming the file.
expect_err "bpb: missing tokenizer option" 2 "need --tokenizer" "$PGOLF" bpb data/demo
expect_err "bpb: directory without shards" 2 "fineweb_val_" "$PGOLF" bpb --tokenizer $TOK "$TMP"
head -c 3000 data/demo/fineweb_val_000000.bin >"$TMP/trunc.bin"
expect_err "bpb: truncated shard is named" 2 "trunc.bin" "$PGOLF" bpb --tokenizer $TOK "$TMP/trunc.bin"
{ header 3; u16le 1; u16le 70; u16le 2000; } >"$TMP/big.bin"
expect_err "bpb: token beyond the vocabulary is named" 2 "big.bin" "$PGOLF" bpb --tokenizer $TOK "$TMP/big.bin"
expect_err "bpb: bad --seq-len" 2 "seq-len" "$PGOLF" bpb --tokenizer $TOK --seq-len x data/demo
