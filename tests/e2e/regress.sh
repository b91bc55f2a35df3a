#!/bin/sh
# pgolf regress end to end on manifests made by `pgolf manifest create`
# (with an evaluation added by jq): three reference seeds make a golden;
# a run inside the band passes, a run pushed above it fails, a run whose
# chain differs fails; JUnit XML is well-formed (xmllint) and the
# Markdown has one row per run; bad input exits 2.
. "$(dirname "$0")/lib.sh"
repo=$(pwd)

cd "$TMP" || exit 1
mkdir data
# A valid shard of 4 tokens.
{ printf '\210\330\064\001\001\000\000\000\004\000\000\000'; head -c 1012 /dev/zero; printf '\001\000\002\000\003\000\004\000'; } \
  >data/fineweb_val_000000.bin
printf '{"preset": "tiny", "iterations": 3}\n' >config.json

# run NAME SEED LAST_LOSS VAL_BPB: NAME.json, a 3-step run.
run() {
  printf '1 6.5\n2 5.0\n3 %s\n' "$3" >"$1.losses"
  "$PGOLF" manifest create --config config.json --tokenizer "$repo/data/tokenizers/fineweb_1024_bpe.model" \
    --data data --seed "$2" --losses "$1.losses" -o "$1.raw.json" >/dev/null || return 1
  jq --argjson b "$4" '.predicate.evaluation = {val_loss: 2.5, val_bpb: $b}' "$1.raw.json" >"$1.json"
}
head_of() { jq -r '.predicate.losses.chain' "$1"; }

run ref1 1 3.0 2.00 && run ref2 2 3.0 2.01 && run ref3 3 3.0 2.02 || fail regress_setup "manifest create failed"
cat >golden.json <<EOF
{"format": "pgolf/regress/v1",
 "configs": {"tiny": {"deterministic": true, "match": {"preset": "tiny"},
   "val_bpb": {"mean": 2.01, "sd": 0.01, "n": 3},
   "seeds": [{"seed": 1, "val_bpb": 2.00, "loss_chain_head": "$(head_of ref1.json)"},
             {"seed": 2, "val_bpb": 2.01, "loss_chain_head": "$(head_of ref2.json)"},
             {"seed": 3, "val_bpb": 2.02, "loss_chain_head": "$(head_of ref3.json)"}]}}}
EOF

# The reference runs themselves pass (limit 2.01 + 25.78 * 0.01 = 2.2678).
expect_rc regress_pass 0 "$PGOLF" regress --golden golden.json ref1.json ref2.json ref3.json
if grep -q 'regress: pass (0 of 3 runs regressed)' "$TMP/out"; then ok regress_pass_table; else
  fail regress_pass_table "$(cat "$TMP/out")"; fi

# Same losses as seed 2, val_bpb pushed above the band.
run high 2 3.0 2.30
expect_rc regress_band_fails 1 "$PGOLF" regress --golden golden.json ref1.json high.json
# ... and with a wider k it passes: the band, not something else, failed it.
expect_rc regress_band_k 0 "$PGOLF" regress --golden golden.json --k 40 high.json

# Seed 3 with its last loss changed: the chain differs.
run drift 3 3.0001 2.02
expect_rc regress_chain_fails 1 "$PGOLF" regress --golden golden.json --json drift.json
if [ "$(jq '.results[0].chain == "differs" and .results[0].band_failed == false and .verdict == "fail"' "$TMP/out")" = true ]; then
  ok regress_chain_json; else fail regress_chain_json "$(cat "$TMP/out")"; fi

# JUnit and Markdown for a mix: pass, band failure, chain failure.
expect_rc regress_outputs 1 "$PGOLF" regress --golden golden.json --junit junit.xml --markdown summary.md \
  ref1.json high.json drift.json
if command -v xmllint >/dev/null 2>&1; then
  if xmllint --noout junit.xml 2>"$TMP/xml"; then ok regress_junit_wellformed; else
    fail regress_junit_wellformed "$(cat "$TMP/xml")"; fi
else fail regress_junit_wellformed "xmllint not installed (Debian libxml2-utils)"; fi
n_fail=$(grep -c '<failure ' junit.xml)
if [ "$n_fail" -eq 2 ] && grep -q 'tests="6" failures="2"' junit.xml &&
  grep -q 'type="val_bpb_above_band"' junit.xml && grep -q 'type="loss_chain_differs"' junit.xml; then
  ok regress_junit_content; else fail regress_junit_content "$(cat junit.xml)"; fi
if grep -q '^### pgolf regress: FAIL (2 of 3 runs regressed)$' summary.md &&
  grep -q '^| ref1.json | tiny | 1 | 2.00000000 | 2.26781.* | same | pass |$' summary.md &&
  grep -q '^| high.json | tiny | 2 | 2.30000000 | .* | same | \*\*FAIL\*\* |$' summary.md &&
  grep -q '^| drift.json | tiny | 3 | 2.02000000 | .* | DIFFERS | \*\*FAIL\*\* |$' summary.md &&
  [ "$(grep -c '^| ' summary.md)" -eq 4 ]; then ok regress_markdown_rows; else
  fail regress_markdown_rows "$(cat summary.md)"; fi

# Bad input: exit 2 with the cause named.
expect_err regress_no_golden 2 "golden.*required" "$PGOLF" regress ref1.json
expect_err regress_bad_manifest 2 "config.json" "$PGOLF" regress --golden golden.json config.json
sed 's/"mean": 2.01/"mean": 2.5/' golden.json >bad.json
expect_err regress_golden_summary 2 "disagree with its seeds" "$PGOLF" regress --golden bad.json ref1.json
jq '.predicate.config.preset = "baseline"' ref1.json >other.json
expect_err regress_other_config 2 "not a run of configuration 'tiny'" "$PGOLF" regress --golden golden.json other.json
jq 'del(.predicate.evaluation.val_bpb)' ref1.json >noeval.json
expect_err regress_no_val_bpb 2 "evaluation.val_bpb" "$PGOLF" regress --golden golden.json noeval.json
