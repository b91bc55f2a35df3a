#!/bin/sh
# pgolf audit on score dumps built here byte by byte over a 41-token split
# (the first tokens of the demo validation shard): a clean dump passes,
# each fault fails its condition (exit 1), each malformed input exits 2
# naming the file and byte offset.
. "$(dirname "$0")/lib.sh"
N=41
. "$(dirname "$0")/dump_helpers"

header 1024 40 0 >"$TMP/clean.pgsd"
records 1 40 >>"$TMP/clean.pgsd"

audit() { "$PGOLF" audit "$@" --tokenizer $TOK --val "$val"; }

expect_rc "audit: clean dump passes" 0 audit "$TMP/clean.pgsd"
grep -q "pass    AUDIT_COVERAGE" "$TMP/out" && grep -q "skipped AUDIT_ORDER" "$TMP/out" \
  && ok "audit: text report lists every condition" \
  || fail "audit: text report lists every condition" "$(cat "$TMP/out")"

# the recomputed value, then claims to 4 decimals
"$PGOLF" audit "$TMP/clean.pgsd" --tokenizer $TOK --val "$val/fineweb_val_000000.bin" --json \
  >"$TMP/clean.json"
bpb=$(jq -r .summary.val_bpb "$TMP/clean.json")
bytes=$(jq -r .summary.bytes "$TMP/clean.json")
want=$("$PGOLF" bpb --json --tokenizer $TOK "$val" | jq -r .bytes)
[ "$bytes" = "$want" ] && [ "$(jq -r .verdict "$TMP/clean.json")" = pass ] \
  && ok "audit: bytes are pgolf bpb's for the same split" \
  || fail "audit: bytes are pgolf bpb's for the same split" "audit $bytes, bpb $want"
claim=$(printf '%.4f' "$bpb")
wrong=$(awk -v b="$bpb" 'BEGIN { printf "%.4f", b + 0.0002 }')
expect_rc "audit: right claim passes" 0 audit "$TMP/clean.pgsd" --claim "$claim"
expect_rc "audit: wrong claim fails" 1 audit "$TMP/clean.pgsd" --claim "$wrong" --json
[ "$(jq -r '[.findings[] | select(.severity == "error") | .code] | join(",")' "$TMP/out")" = AUDIT_BYTES ] \
  && ok "audit: wrong claim is only AUDIT_BYTES" || fail "audit: wrong claim is only AUDIT_BYTES" "$(cat "$TMP/out")"

# coverage faults: a duplicate, a gap
{ header 1024 41 0; records 1 7; record 7; records 8 40; } >"$TMP/dup.pgsd"
expect_rc "audit: duplicate fails" 1 audit "$TMP/dup.pgsd" --json
jq -e '[.findings[] | select(.severity == "error")] | length == 1 and .[0].code == "AUDIT_COVERAGE" and (.[0].message | test("position 7: 1 scored twice"))' \
  "$TMP/out" >/dev/null && ok "audit: duplicate is AUDIT_COVERAGE at position 7" \
  || fail "audit: duplicate is AUDIT_COVERAGE at position 7" "$(cat "$TMP/out")"
{ header 1024 39 0; records 1 40 13; } >"$TMP/gap.pgsd"
expect_rc "audit: gap fails" 1 audit "$TMP/gap.pgsd"
grep -q "fail    AUDIT_COVERAGE      position 13" "$TMP/out" && ok "audit: gap names position 13" \
  || fail "audit: gap names position 13" "$(cat "$TMP/out")"
expect_rc "audit: --seq-len 8 truncates the split (targets 1..40 all scored)" 0 \
  audit "$TMP/clean.pgsd" --seq-len 8
expect_rc "audit: --seq-len 16 keeps 1..32, so 33..40 are outside" 1 \
  audit "$TMP/clean.pgsd" --seq-len 16

# normalization: a probe at position 5 with all mass on the target (nll 0)
probe() { # POS TARGET P_BITS
  le "$1" 8
  le "$2" 4
  le 1024 4
  head -c $((8 * $2)) /dev/zero
  le "$3" 8
  head -c $((8 * (1023 - $2))) /dev/zero
}
{ header 1024 40 1; records 1 4; record 5 0; records 6 40; probe 5 "$tok_5" $ONE; } >"$TMP/probe.pgsd"
expect_rc "audit: a normalized probe passes" 0 audit "$TMP/probe.pgsd"
grep -q "pass    AUDIT_NORMALIZATION" "$TMP/out" && ok "audit: normalization checked" \
  || fail "audit: normalization checked" "$(cat "$TMP/out")"
{ header 1024 40 1; records 1 4; record 5 0; records 6 40; probe 5 "$tok_5" 0x3fe0000000000000; } \
  >"$TMP/half.pgsd"
expect_rc "audit: a probe summing to 0.5 fails" 1 audit "$TMP/half.pgsd"
grep -q "fail    AUDIT_NORMALIZATION position 5" "$TMP/out" && ok "audit: AUDIT_NORMALIZATION at 5" \
  || fail "audit: AUDIT_NORMALIZATION at 5" "$(cat "$TMP/out")"

# the event log: SCORE 1..40 (sum 40.0) then ADAPT, chained with sha256sum
sha() { sha256sum | cut -c1-64; }
e0=$(printf 'pgolf-eval-chain-v1' | sha)
link() { # PREV KIND CHUNK FIRST LAST BITS
  { hexbin "$1"; le "$2" 1; le "$3" 8; le "$4" 8; le "$5" 8; le "$6" 8; } | sha
}
manifest() { # FILE then events as "KIND FIRST LAST" (chunk 0)
  f=$1
  shift
  c=$e0 sep="" ev=""
  for e in "$@"; do
    set -- $e
    if [ "$1" = SCORE ]; then k=1 bits=0x4044000000000000; else k=2 bits=0; fi
    c=$(link "$c" $k 0 "$2" "$3" $bits)
    extra=""
    [ $k = 1 ] && extra="\"nll_sum_bits\": \"0x4044000000000000\", "
    ev="$ev$sep{\"kind\": \"$1\", \"chunk\": 0, \"first\": $2, \"last\": $3, $extra\"chain\": \"$c\"}"
    sep=", "
  done
  printf '{"predicate": {"eval": {"mode": "ttt", "events": [%s], "chain": "%s"}}}\n' "$ev" "$c" >"$f"
}
manifest "$TMP/good.json" "SCORE 1 40" "ADAPT 1 40"
expect_rc "audit: score-first event log passes" 0 audit "$TMP/clean.pgsd" --manifest "$TMP/good.json"
grep -q "pass    AUDIT_ORDER" "$TMP/out" && ok "audit: order checked from the manifest" \
  || fail "audit: order checked from the manifest" "$(cat "$TMP/out")"
manifest "$TMP/early.json" "SCORE 1 20" "ADAPT 1 30" "SCORE 21 40"
expect_rc "audit: adapt before score fails" 1 audit "$TMP/clean.pgsd" --manifest "$TMP/early.json" --json
jq -e '[.findings[] | select(.severity == "error")] | length == 1 and .[0].code == "AUDIT_ORDER"' "$TMP/out" >/dev/null \
  && ok "audit: adapt before score is only AUDIT_ORDER" \
  || fail "audit: adapt before score is only AUDIT_ORDER" "$(cat "$TMP/out")"
sed 's/"last": 40, "nll/"last": 39, "nll/' "$TMP/good.json" >"$TMP/edited.json"
expect_rc "audit: edited event log fails" 1 audit "$TMP/clean.pgsd" --manifest "$TMP/edited.json"
grep -q "chain link does not recompute" "$TMP/out" && ok "audit: broken chain reported" \
  || fail "audit: broken chain reported" "$(cat "$TMP/out")"
printf '{"predicate": {"eval": {"events": [{"kind": "LEARN"}], "chain": "%s"}}}' "$e0" >"$TMP/bad.json"
expect_err "audit: malformed event log is exit 2" 2 "events\[0\].kind" \
  audit "$TMP/clean.pgsd" --manifest "$TMP/bad.json"

# version 2: the header records T and the event chain's head, and the
# audit takes both from it (the log beside the dump, DUMP.events.json)
header2() { # VOCAB RECORDS PROBES T HEAD_HEX
  printf PGSD
  le 2 4
  le "$1" 4
  le 0 4
  le "$2" 8
  le "$3" 8
  le "$4" 4
  le 0 4
  hexbin "$5"
  head -c 24 /dev/zero
}
ZERO=0000000000000000000000000000000000000000000000000000000000000000
good_head=$(jq -r .predicate.eval.chain "$TMP/good.json")
{ header2 1024 32 0 16 $ZERO; records 1 32; } >"$TMP/t16.pgsd"
expect_rc "audit: v2 dump's T keeps targets 1..32" 0 audit "$TMP/t16.pgsd"
grep -q "using   sequence length 16 (the dump's); event log none; claim none" "$TMP/out" \
  && ok "audit: v2 T is reported as used" || fail "audit: v2 T is reported as used" "$(cat "$TMP/out")"
expect_rc "audit: --seq-len other than the dump's T" 1 audit "$TMP/t16.pgsd" --seq-len 8
grep -q "fail    AUDIT_COVERAGE      position 33: the dump was evaluated with sequence length 16 but the split was kept for 8" "$TMP/out" \
  && ok "audit: T mismatch named" || fail "audit: T mismatch named" "$(cat "$TMP/out")"
{ header2 1024 40 0 8 "$good_head"; records 1 40; } >"$TMP/v2.pgsd"
cp "$TMP/good.json" "$TMP/v2.pgsd.events.json"
expect_rc "audit: v2 dump with its log beside it" 0 audit "$TMP/v2.pgsd"
grep -q "pass    AUDIT_ORDER" "$TMP/out" && grep -q "event log $TMP/v2.pgsd.events.json (beside the dump)" "$TMP/out" \
  && ok "audit: the log beside the dump is used" || fail "audit: the log beside the dump is used" "$(cat "$TMP/out")"
cp "$TMP/early.json" "$TMP/v2.pgsd.events.json"
expect_rc "audit: a log with another chain head" 1 audit "$TMP/v2.pgsd"
grep -q "fail    AUDIT_ORDER .*not this dump's: its chain head $(jq -r .predicate.eval.chain "$TMP/early.json")" "$TMP/out" \
  && ok "audit: another head is named" || fail "audit: another head is named" "$(cat "$TMP/out")"
rm "$TMP/v2.pgsd.events.json"
expect_rc "audit: the dump names a log that is missing" 1 audit "$TMP/v2.pgsd"
grep -q "fail    AUDIT_ORDER .*records event chain head $good_head.*none at $TMP/v2.pgsd.events.json: pass the log with --manifest" "$TMP/out" \
  && ok "audit: the missing log is named" || fail "audit: the missing log is named" "$(cat "$TMP/out")"
expect_rc "audit: the missing log supplied with --manifest" 0 audit "$TMP/v2.pgsd" --manifest "$TMP/good.json"
{ header2 1024 0 0 0 $ZERO; } >"$TMP/t0.pgsd"
expect_err "audit: v2 sequence length 0" 2 "t0.pgsd:offset 32: sequence length 0" audit "$TMP/t0.pgsd"
{ header2 1024 0 0 8 $ZERO; } | head -c 80 >"$TMP/short2.pgsd"
expect_err "audit: v2 header cut at 80 bytes" 2 "short2.pgsd:offset 80: truncated header: 80 bytes, a version 2" \
  audit "$TMP/short2.pgsd"
{ head -c 36 "$TMP/t16.pgsd"; printf x; tail -c +38 "$TMP/t16.pgsd"; } >"$TMP/res2.pgsd"
expect_err "audit: v2 reserved byte" 2 "res2.pgsd:offset 36: reserved header byte" audit "$TMP/res2.pgsd"
{ printf PGSD; le 3 4; head -c 88 /dev/zero; } >"$TMP/v3.pgsd"
expect_err "audit: unknown version" 2 "v3.pgsd:offset 4: unsupported version 3" audit "$TMP/v3.pgsd"

# malformed dumps: exit 2, file and byte offset named
{ printf PGSX; tail -c +5 "$TMP/clean.pgsd"; } >"$TMP/magic.pgsd"
expect_err "audit: bad magic" 2 "magic.pgsd:offset 0: bad magic" audit "$TMP/magic.pgsd"
head -c $((64 + 24 * 39 + 10)) "$TMP/clean.pgsd" >"$TMP/trunc.pgsd"
expect_err "audit: truncated record" 2 "trunc.pgsd:offset 1000: truncated record 39" audit "$TMP/trunc.pgsd"
{ cat "$TMP/clean.pgsd"; printf 'xy'; } >"$TMP/extra.pgsd"
expect_err "audit: count mismatch" 2 "extra.pgsd:offset 1024: count mismatch: 2 bytes" audit "$TMP/extra.pgsd"
{ header 1024 2 0; record 1; record 2 0x7ff8000000000000; } >"$TMP/nan.pgsd"
expect_err "audit: NaN nll" 2 "nan.pgsd:offset 104: record 1: nll nan" audit "$TMP/nan.pgsd"
{ header 2000000 1 0; record 1; } >"$TMP/vocab.pgsd"
expect_err "audit: absurd vocab size" 2 "vocab.pgsd:offset 8: absurd vocab size 2000000" audit "$TMP/vocab.pgsd"
{ header 512 40 0; records 1 40; } >"$TMP/small.pgsd"
expect_err "audit: a target outside the dump's vocabulary" 2 "small.pgsd:offset 72: record 0: target id $tok_1 >= vocab size 512" \
  audit "$TMP/small.pgsd"
header 512 0 0 >"$TMP/v512.pgsd"
expect_err "audit: dump vocabulary smaller than the tokenizer's" 2 "fineweb_1024_bpe.model: vocab size 512" \
  audit "$TMP/v512.pgsd"
expect_err "audit: missing dump" 2 "nope.pgsd" audit "$TMP/nope.pgsd"

# usage
expect_rc "audit --help" 0 "$PGOLF" audit --help
expect_err "audit: --tokenizer is required" 2 "required" "$PGOLF" audit "$TMP/clean.pgsd" --val "$val"
expect_err "audit: a claim must be a plain decimal" 2 "plain decimal" audit "$TMP/clean.pgsd" --claim 1e0
expect_err "audit: unknown option" 2 "unknown" audit "$TMP/clean.pgsd" --bogus
