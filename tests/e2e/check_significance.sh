# pgolf check --against: the folder's seeds against the previous record,
# under the README's rule (0.005 nats at p < 0.01) and the maintainers'
# practice (p < 0.25 on diff > 0), each with its verdict (SIGNIFICANCE).
# The values are those of records/track_10min_16mb/2026-04-09_A2_Muon097_3Seed
# and its predecessor (published p = 0.020), at their tokens per byte.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"
# folder NAME BPB...: one log per value, val_loss at 0.268 tokens per byte.
folder() {
  d=$F/$1
  shift
  rm -rf "$d"
  mkdir -p "$d"
  printf 'print("train")\n' >"$d/train_gpt.py"
  seed=1
  for b in "$@"; do
    loss=$(awk -v b="$b" 'BEGIN { printf "%.8f", b * log(2) / 0.268 }')
    LOSS=$loss BPB=$b mini_log "$d/train_seed$seed.log" "$seed" 15000000 16
    seed=$((seed + 1))
  done
  echo "$d"
}
REC=1.08079,1.08103,1.08118

d=$(folder a2 1.07928348 1.07996676 1.08024795)
has sig_practice_accepts_readme_warns SIGNIFICANCE warning \
  "README's rule is not met .*p = 0.9494 for diff > 0.001933 bpb \(0.005 nats\).*practice accepts it: p = 0.0204" "$d" \
  --against "$REC"
[ "$(jq -r '.summary.significance.readings | "\(.readme.verdict) \(.practice.verdict) \(.grace.verdict)"' "$TMP/out")" = \
  "not_significant accepted above" ] && ok sig_json_readings || fail sig_json_readings "$(jq .summary.significance "$TMP/out")"
"$PGOLF" check --against "$REC" "$d" >"$TMP/out" 2>&1
grep -q "^    practice     diff > 0 at p < 0.25 (progression cutoff):  p = 0.02042  accepted$" "$TMP/out" &&
  ok sig_text_readings || fail sig_text_readings "$(grep -A4 significance "$TMP/out")"

# Worse than the record: no progression, an error.
d=$(folder worse 1.0815 1.0818 1.0812)
has sig_no_progression_errors SIGNIFICANCE error "not a progression over .*not below 0.25" "$d" --against "$REC"
# A clear win passes both readings: no finding.
d=$(folder win 1.0700 1.0702 1.0698)
lacks sig_clear_win SIGNIFICANCE "$d" --against "$REC"
[ "$(jq -r '.summary.significance.readings.readme.verdict' "$TMP/out")" = significant ] && ok sig_clear_win_readme ||
  fail sig_clear_win_readme "$(jq .summary.significance "$TMP/out")"
# The record as a folder.
r=$(folder record 1.08079 1.08103 1.08118)
d=$(folder a2 1.07928348 1.07996676 1.08024795)
has sig_against_folder SIGNIFICANCE warning "practice accepts it: p = 0.0204" "$d" --against "$r"
# One seed cannot be tested: a warning saying so; an unreadable record: exit 2.
d=$(folder one 1.0700)
has sig_one_seed SIGNIFICANCE warning "cannot test against .*at least 2 values" "$d" --against "$REC"
expect_err sig_bad_against 2 "against" "$PGOLF" check --against 1.08,abc "$d"
# Without --against there is no significance at all.
lacks sig_not_asked SIGNIFICANCE "$d"
