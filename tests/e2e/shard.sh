#!/bin/sh
# pgolf shard info / glob on shards built here byte by byte: valid ones
# (text and JSON), and each way a shard can be broken, reported with its
# byte offset while the other files are still printed.
. "$(dirname "$0")/lib.sh"

# le32 N: N as 4 little-endian bytes.
le32() {
  printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) \
    $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}

# mkshard FILE COUNT [MAGIC [VERSION]]: header for COUNT tokens, then
# COUNT tokens 0, 1, 2, ... (little-endian uint16; COUNT < 256 here).
mkshard() {
  {
    le32 "${3:-20240520}"
    le32 "${4:-1}"
    le32 "$2"
    head -c 1012 /dev/zero
    i=0
    while [ "$i" -lt "$2" ]; do printf "$(printf '\\%03o' "$i")\\000"; i=$((i + 1)); done
  } >"$1"
}

d="$TMP/data"
mkdir -p "$d"
mkshard "$d/fineweb_val_000000.bin" 10
mkshard "$d/fineweb_train_000002.bin" 200
mkshard "$d/fineweb_train_000001.bin" 0
size=$(wc -c <"$d/fineweb_val_000000.bin" | tr -d ' ')
if [ "$size" -eq 1044 ]; then ok "mkshard-size"; else fail "mkshard-size" "$size bytes"; fi

expect_rc "info-valid" 0 "$PGOLF" shard info "$d/fineweb_val_000000.bin"
sum=$(sha256sum "$d/fineweb_val_000000.bin" | cut -c1-64)
if grep -q "tokens *10$" "$TMP/out" && grep -q "bytes *1044$" "$TMP/out" &&
   grep -q "magic *20240520$" "$TMP/out" && grep -q "version *1$" "$TMP/out" &&
   grep -q "sha256 *$sum$" "$TMP/out"; then ok "info-text-fields"
else fail "info-text-fields" "$(cat "$TMP/out")"; fi

expect_rc "info-json" 0 "$PGOLF" shard info --json --vocab 200 "$d/fineweb_val_000000.bin" \
  "$d/fineweb_train_000002.bin"
cp "$TMP/out" "$TMP/info.json"
if jq -e --arg p "$d/fineweb_val_000000.bin" --arg s "$sum" \
  'length == 2 and .[0] == {path: $p, magic: 20240520, version: 1, tokens: 10, bytes: 1044, sha256: $s}
   and .[1].tokens == 200 and .[1].bytes == 1424' "$TMP/info.json" >/dev/null; then
  ok "info-json-fields"
else fail "info-json-fields" "$(cat "$TMP/info.json")"; fi

# Broken shards, each with its expected offset and message.
b="$TMP/bad"
mkdir -p "$b"
head -c 100 "$d/fineweb_val_000000.bin" >"$b/short.bin"
mkshard "$b/magic.bin" 3 20240521
mkshard "$b/version.bin" 3 20240520 2
mkshard "$b/negative.bin" 3
{ le32 20240520; le32 1; le32 4294967295; tail -c +13 "$b/negative.bin"; } >"$b/neg.tmp"
mv "$b/neg.tmp" "$b/negative.bin"
mkshard "$b/truncated.bin" 10
head -c 1040 "$b/truncated.bin" >"$b/t.tmp" && mv "$b/t.tmp" "$b/truncated.bin"
mkshard "$b/trailing.bin" 10
printf 'xyz' >>"$b/trailing.bin"

expect_err "short-header" 2 "^pgolf: $b/short.bin:offset 100: .*shorter than the 1024-byte" \
  "$PGOLF" shard info "$b/short.bin"
expect_err "bad-magic" 2 "^pgolf: $b/magic.bin:offset 0: bad magic 20240521" \
  "$PGOLF" shard info "$b/magic.bin"
expect_err "bad-version" 2 "^pgolf: $b/version.bin:offset 4: .*version 2" \
  "$PGOLF" shard info "$b/version.bin"
expect_err "negative-count" 2 "^pgolf: $b/negative.bin:offset 8: negative token count -1" \
  "$PGOLF" shard info "$b/negative.bin"
expect_err "truncated" 2 "offset 1040: .*1044 bytes expected.*has 1040 \\(truncated by 4 bytes\\)" \
  "$PGOLF" shard info "$b/truncated.bin"
expect_err "trailing" 2 "offset 1044: .*1044 bytes expected.*has 1047 \\(3 trailing bytes\\)" \
  "$PGOLF" shard info "$b/trailing.bin"
# tokens are 0..199: with vocab 150, token 150 (index 150, byte 1024+300) is the first bad one
expect_err "vocab" 2 "^pgolf: $d/fineweb_train_000002.bin:offset 1324: token 150 at index 150" \
  "$PGOLF" shard info --vocab 150 "$d/fineweb_train_000002.bin"
expect_err "missing-file" 2 "^pgolf: $b/nope.bin: cannot open" "$PGOLF" shard info "$b/nope.bin"
expect_err "directory" 2 "^pgolf: $b: not a regular file" "$PGOLF" shard info "$b"

# A bad file among good ones: every good one is still printed, exit 2.
"$PGOLF" shard info --json "$d/fineweb_val_000000.bin" "$b/magic.bin" \
  "$d/fineweb_train_000001.bin" >"$TMP/mixed" 2>"$TMP/mixed.err"
rc=$?
if [ $rc -eq 2 ]; then ok "mixed-exit-2"; else fail "mixed-exit-2" "exit $rc"; fi
if [ "$(jq -r '.[].tokens' "$TMP/mixed" | tr '\n' ' ')" = "10 0 " ]; then ok "mixed-good-printed"
else fail "mixed-good-printed" "$(cat "$TMP/mixed")"; fi
if [ "$(wc -l <"$TMP/mixed.err" | tr -d ' ')" -eq 1 ] && grep -q "magic.bin:offset 0" "$TMP/mixed.err"
then ok "mixed-one-error"; else fail "mixed-one-error" "$(cat "$TMP/mixed.err")"; fi

# Usage errors.
expect_err "info-no-files" 2 "no FILE" "$PGOLF" shard info
expect_err "vocab-zero" 2 "--vocab" "$PGOLF" shard info --vocab 0 "$d/fineweb_val_000000.bin"
expect_err "vocab-too-big" 2 "--vocab" "$PGOLF" shard info --vocab 65537 "$d/fineweb_val_000000.bin"
expect_err "unknown-option" 2 "unknown option" "$PGOLF" shard info --bogus "$d/fineweb_val_000000.bin"
expect_err "unknown-subcommand" 2 "unknown subcommand" "$PGOLF" shard frob
expect_rc "shard-help" 0 "$PGOLF" shard --help
expect_rc "shard-info-help" 0 "$PGOLF" shard info --help

# glob: sorted by name, only the asked split.
expect_rc "glob-train" 0 "$PGOLF" shard glob "$d" --split train
printf '%s\n' "$d/fineweb_train_000001.bin" "$d/fineweb_train_000002.bin" >"$TMP/glob.want"
expect_same "glob-train-sorted" "$TMP/glob.want" "$TMP/out"
expect_rc "glob-val" 0 "$PGOLF" shard glob "$d" --split val
expect_err "glob-none" 2 "^pgolf: $b: no shards match fineweb_val_\\*\\.bin" \
  "$PGOLF" shard glob "$b" --split val
expect_err "glob-bad-split" 2 "train\\|val" "$PGOLF" shard glob "$d" --split test
