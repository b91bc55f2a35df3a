#!/bin/sh
# pgolf stats end to end: the published leaderboard p-values from their
# per-seed val_bpb, JSON fields, margins in bpb, and input errors (exit 2).
. "$(dirname "$0")/lib.sh"

# records/track_10min_16mb/2026-04-09_A2_Muon097_3Seed vs
# records/track_10min_16mb/2026-04-09_SP8192_3LayerRecur_ParResid_QK525_LegalTTT: published p=0.020
A2_NEW=1.07928348,1.07996676,1.08024795
A2_REC=1.08079,1.08103,1.08118
# records/track_10min_16mb/2026-04-22_SP8192_CaseOps_GatedAttn_QuantGate_Loop45_PhasedTTT_MLPClip12 vs
# records/track_10min_16mb/2026-04-19_SP8192_CaseOps_GatedAttn_QuantGate_Loop45_PhasedTTT: published p=0.063
CLIP_NEW=1.06356801,1.0641313,1.06466993,1.06509678,1.06516558
CLIP_REC=1.06610,1.06473,1.06563

# json_field NAME FIELD: the value of FIELD in $TMP/out (one "key": value per line).
json_field() { sed -n "s/^ *\"$2\": \(.*\),\{0,1\}$/\1/p" "$TMP/out" | sed 's/,$//'; }

# expect_near NAME FIELD WANT TOL: |value - WANT| <= TOL.
expect_near() {
  got=$(json_field "$1" "$2")
  if awk -v g="$got" -v w="$3" -v t="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= t) }'; then
    ok "$1"
  else fail "$1" "$2 = '$got', wanted $3 +- $4"; fi
}

expect_rc stats_p020_rc 1 "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --metric bpb --margin-nats 0 --json
expect_near stats_p020 p_zero_margin 0.020 0.0005
expect_near stats_p020_scipy p_margin 0.02041677096795916 1e-12
expect_near stats_p020_df df 2.614014738913333 1e-10

expect_rc stats_p063_rc 1 "$PGOLF" stats --new "$CLIP_NEW" --record "$CLIP_REC" --metric bpb --margin-nats 0 --json
expect_near stats_p063 p_zero_margin 0.063 0.0005
expect_near stats_p063_scipy p_zero_margin 0.06250171303098642 1e-12
expect_near stats_p063_n_new n_new 5 0
expect_near stats_p063_n_record n_record 3 0

# Every fixed JSON field is there, in order (after the echoed settings).
want="n_new n_record mean_new mean_record sd_new sd_record diff margin t df p_margin p_zero_margin lower_bound power seeds_needed verdict"
got=$(sed -n 's/^ *"\([a-z_]*\)":.*/\1/p' "$TMP/out" | tr '\n' ' ')
case "$got" in *"$want "*) ok stats_json_fields ;;
  *) fail stats_json_fields "got: $got" ;; esac
if grep -q '"verdict": "not_significant"' "$TMP/out"; then ok stats_verdict; else fail stats_verdict "$(cat "$TMP/out")"; fi

# Margin in bpb: 0.005 nats * 0.4 tokens/byte / ln 2.
expect_rc stats_margin_bpb_rc 1 "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --tokens-per-byte 0.4 --json
expect_near stats_margin_bpb margin 0.0028853900817779268 1e-15
expect_rc stats_margin_nats_rc 1 "$PGOLF" stats --new 2.7879,2.7897,2.7904 --record 2.7923,2.7930,2.7925 --metric nats --json
expect_near stats_margin_nats margin 0.005 0

# A clear win is significant (exit 0) and the text table says so.
expect_rc stats_significant 0 "$PGOLF" stats --new 1.0700,1.0702,1.0698,1.0701 --record 1.0810,1.0808,1.0812 --tokens-per-byte 0.4
if grep -q "verdict: significant" "$TMP/out"; then ok stats_text_verdict; else fail stats_text_verdict "$(cat "$TMP/out")"; fi

# One-sample against a target (scipy ttest_1samp: p = 0.018022595770828122).
expect_rc stats_target_rc 1 "$PGOLF" stats --new "$A2_NEW" --target 1.0815 --metric nats --margin-nats 0.0002 --json
expect_near stats_target p_margin 0.018022595770828122 1e-12

# Input errors: exit 2 with the option and item named.
expect_err stats_need_tpb 2 "tokens-per-byte.*required" "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC"
expect_err stats_one_value 2 "record.*at least 2" "$PGOLF" stats --new "$A2_NEW" --record 1.08 --margin-nats 0
expect_err stats_zero_var 2 "zero variance" "$PGOLF" stats --new 1,1,1 --record 2,2 --margin-nats 0
expect_err stats_nan 2 "new: item 2 \('nan'\) is not a finite" "$PGOLF" stats --new 1,nan,2 --record 1,2 --margin-nats 0
expect_err stats_inf 2 "record: item 3 \('inf'\)" "$PGOLF" stats --new 1,2 --record 1,2,inf --margin-nats 0
expect_err stats_text 2 "new: item 1 \('abc'\) is not a number" "$PGOLF" stats --new abc,1 --record 1,2 --margin-nats 0
expect_err stats_empty 2 "record: item 2 is empty" "$PGOLF" stats --new 1,2 --record 1,,2 --margin-nats 0
expect_err stats_alpha 2 "alpha.*between 0 and 1" "$PGOLF" stats --new 1,2 --record 1,2 --margin-nats 0 --alpha 1
expect_err stats_alpha0 2 "alpha" "$PGOLF" stats --new 1,2 --record 1,2 --margin-nats 0 --alpha 0
expect_err stats_no_record 2 "exactly one" "$PGOLF" stats --new 1,2
expect_err stats_both 2 "exactly one" "$PGOLF" stats --new 1,2 --record 1,2 --target 3
expect_err stats_metric 2 "metric.*bpb or nats" "$PGOLF" stats --new 1,2 --record 1,2 --metric bits
expect_err stats_mw_refused 2 "1/20 = 0.05.*never be significant" "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --margin-nats 0 --test mann-whitney
expect_err stats_unknown 2 "unknown option" "$PGOLF" stats --new 1,2 --record 1,2 --frobnicate
expect_rc stats_help 0 "$PGOLF" stats --help

# The README's rule and the maintainers' practice side by side, whatever
# --alpha and --margin-nats say: A2 vs its predecessor (published p=0.020)
# fails the README's rule and passes the p < 0.25 progression cutoff, above
# the p = 0.014 once accepted under the grace policy.
readings() { jq -r '.readings | "\(.readme.verdict) \(.practice.verdict) \(.grace.verdict)"' "$TMP/out"; }
expect_rc stats_readings_rc 1 "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --tokens-per-byte 0.268 --json
[ "$(readings)" = "not_significant accepted above" ] && ok stats_readings_a2 || fail stats_readings_a2 "$(readings)"
expect_near stats_readings_practice_p p_zero_margin "$(jq .readings.practice.p "$TMP/out")" 1e-15
# Without tokens per byte the README's margin cannot be put in bpb.
expect_rc stats_readings_unknown 1 "$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --margin-nats 0 --json
[ "$(readings)" = "unknown accepted above" ] && ok stats_readings_readme_unknown || fail stats_readings_readme_unknown "$(readings)"
# p >= 0.25: rejected in practice too; a p below 0.014: within the grace.
expect_rc stats_readings_reject 1 "$PGOLF" stats --new 1.0810,1.0805,1.0812 --record "$A2_REC" --margin-nats 0 --json
[ "$(readings)" = "unknown rejected above" ] && ok stats_readings_rejected || fail stats_readings_rejected "$(readings)"
expect_rc stats_readings_grace 0 "$PGOLF" stats --new 1.0795,1.0796,1.0797 --record "$A2_REC" --margin-nats 0 --json
[ "$(readings)" = "unknown accepted within" ] && ok stats_readings_within_grace || fail stats_readings_within_grace "$(readings)"
"$PGOLF" stats --new "$A2_NEW" --record "$A2_REC" --tokens-per-byte 0.268 >"$TMP/out" 2>&1
grep -q "^  practice     diff > 0 at p < 0.25 (progression cutoff):  p = 0.02042  accepted$" "$TMP/out" &&
  grep -q "^  README rule  diff > 0.001933 bpb (0.005 nats) at p < 0.01:  p = 0.9494  not significant$" "$TMP/out" &&
  ok stats_readings_text || fail stats_readings_text "$(tail -4 "$TMP/out")"

# --consistency: claimed per-seed results against replays (REPRODUCTION_GAP).
# The maintainers' rerun of a record claimed at 1.1502 gave 1.1864.
expect_rc consistency-gap 1 "$PGOLF" stats --consistency --new 1.1497,1.1502,1.1507 --record 1.1864
grep -q '^verdict: REPRODUCTION_GAP' "$TMP/out" && grep -q 'one-sample test' "$TMP/out" &&
  ok consistency-gap-says-why || fail consistency-gap-says-why "$(cat "$TMP/out")"
expect_rc consistency-close 0 "$PGOLF" stats --consistency --new 1.1497,1.1502,1.1507 --record 1.1504 --json
jq -e '.verdict == "consistent" and .p > 0.25 and .test == "one-sample"' "$TMP/out" >/dev/null &&
  ok consistency-close-json || fail consistency-close-json "$(cat "$TMP/out")"
expect_rc consistency-welch 1 "$PGOLF" stats --consistency --new 1.08950,1.08972,1.08994 \
  --record 1.09200,1.09215,1.09230 --json
jq -e '.test == "welch" and .verdict == "REPRODUCTION_GAP"' "$TMP/out" >/dev/null &&
  ok consistency-welch-json || fail consistency-welch-json "$(cat "$TMP/out")"
expect_rc consistency-one-each 0 "$PGOLF" stats --consistency --new 1.15 --record 1.19
grep -q '^verdict: untestable' "$TMP/out" && ok consistency-untestable || fail consistency-untestable "$(cat "$TMP/out")"
expect_err consistency-needs-record 2 'consistency compares' "$PGOLF" stats --consistency --new 1.1,1.2 --target 1.0
