#!/bin/sh
# pgolf hash against GNU sha256sum: byte-identical output (escaped names
# included), readable by `sha256sum -c`, and errors that do not stop the
# other files.
. "$(dirname "$0")/lib.sh"

d="$TMP/files"
mkdir -p "$d"
: >"$d/empty"
printf 'abc' >"$d/abc"
head -c 3000000 /dev/urandom >"$d/three-mb"
printf 'spaces' >"$d/name with spaces"
printf 'bs' >"$d/back\\slash"
printf 'nl' >"$d/new
line"
printf 'cr' >"$d/$(printf 'carriage\rreturn')"
i=0
while [ $i -lt 40 ]; do printf '%s' "$i" >"$d/many-$i"; i=$((i + 1)); done

cd "$d" || exit 1

# The same file list in the same (glob) order for both tools.
sha256sum -- * >"$TMP/want" 2>/dev/null
"$PGOLF" hash -- * >"$TMP/got" 2>"$TMP/got.err"
rc=$?
if [ $rc -eq 0 ]; then ok "hash-exit-0"; else fail "hash-exit-0" "exit $rc: $(cat "$TMP/got.err")"; fi
expect_same "hash-matches-sha256sum" "$TMP/want" "$TMP/got"

for j in 1 2 3 64; do
  "$PGOLF" hash --jobs $j -- * >"$TMP/got.j" 2>/dev/null
  expect_same "hash-jobs-$j-same-output" "$TMP/want" "$TMP/got.j"
done

if grep -q '^\\.*  new\\nline$' "$TMP/got" && grep -q '^\\.*  back\\\\slash$' "$TMP/got" &&
   grep -q '^\\.*  carriage\\rreturn$' "$TMP/got"; then ok "hash-escapes-names"
else fail "hash-escapes-names" "escaped lines missing: $(grep '^\\' "$TMP/got")"; fi

if sha256sum -c --quiet "$TMP/got" >"$TMP/check" 2>&1; then ok "sha256sum-c-accepts-output"
else fail "sha256sum-c-accepts-output" "$(head -5 "$TMP/check")"; fi

printf 'abc' | "$PGOLF" hash - >"$TMP/stdin" 2>&1
printf 'abc' | sha256sum - >"$TMP/stdin.want"
expect_same "hash-stdin-dash" "$TMP/stdin.want" "$TMP/stdin"
printf 'abc' | "$PGOLF" hash >"$TMP/stdin" 2>&1
expect_same "hash-stdin-no-args" "$TMP/stdin.want" "$TMP/stdin"

"$PGOLF" hash abc missing-file empty >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ]; then ok "hash-missing-exit-2"; else fail "hash-missing-exit-2" "exit $rc"; fi
if grep -q '^pgolf: missing-file: .*No such file' "$TMP/err"; then ok "hash-missing-message"
else fail "hash-missing-message" "$(cat "$TMP/err")"; fi
sha256sum abc empty >"$TMP/want2"
expect_same "hash-missing-others-printed" "$TMP/want2" "$TMP/out"

expect_err "hash-dir-exit-2" 2 "^pgolf: $d: " "$PGOLF" hash "$d"
expect_err "hash-jobs-zero" 2 "--jobs" "$PGOLF" hash --jobs 0 abc
expect_err "hash-jobs-too-many" 2 "--jobs" "$PGOLF" hash --jobs 1025 abc
expect_err "hash-jobs-not-number" 2 "--jobs" "$PGOLF" hash --jobs=2x abc
expect_err "hash-jobs-missing-value" 2 "needs a value" "$PGOLF" hash abc --jobs
expect_err "hash-unknown-option" 2 "unknown option" "$PGOLF" hash --frobnicate abc
expect_rc "hash-jobs-max" 0 "$PGOLF" hash --jobs=1024 abc
expect_rc "hash-help" 0 "$PGOLF" hash --help
if grep -q 'usage: pgolf hash' "$TMP/out"; then ok "hash-help-text"; else fail "hash-help-text" "no usage"; fi
