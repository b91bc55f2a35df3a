#!/bin/sh
# pgolf leaderboard end to end, on a records/ tree written here: one record
# for every verdict of the chain (the first, both rules, the practice only,
# neither, a side with one seed, one that does not beat the standing
# record), a folder without submission.json holding several logs per seed,
# a tokenizer at 0.268 tokens per byte (sp8192-like; the margin follows the
# logs' val_loss/val_bpb), a folder over the size and time limits, a
# non-record folder (no time budget), a folder outside the tracks, a folder
# name with spaces, and replay manifests (one consistent folder, one with a
# REPRODUCTION_GAP).
#
# The JSON's numbers are checked against `pgolf stats` on the same pairs;
# the page is self-contained, its links resolve, and headless Chromium
# shows each record's square in its verdict's colour (pixels of exactly
# that colour, counted with ImageMagick, as tests/e2e/report.sh does).
# Chromium and ImageMagick are required (PGOLF_ALLOW_NO_CHROMIUM=1 turns
# their absence into a SKIP line). PGOLF_LEADERBOARD_KEEP=DIR keeps the
# output and the screenshot there.
. "$(dirname "$0")/lib.sh"

R=$TMP/records
T10=$R/track_10min_16mb
mkdir -p "$T10" "$R/track_non_record_16mb" "$R/misc"

# log FILE SEED BPB TPB [TRAIN_MS [MODEL_BYTES]]: a record-shaped log whose
# final metric is BPB, with val_loss at TPB tokens per byte.
log() {
  loss=$(awk -v b="$3" -v t="$4" 'BEGIN { printf "%.8f", b * log(2) / t }')
  {
    printf 'Hyperparameters:\n  seed: %s\n  max_wallclock_seconds: 600.0\n' "$2"
    printf 'step:1000/20000 train_loss:2.5000 train_time:40000ms step_avg:40.00ms\n'
    printf 'stopping_early: wallclock_cap train_time:%sms step:14750/20000\n' "${5:-590000}"
    printf 'Serialized model int6+lzma: %s bytes\n' "${6:-15000000}"
    printf 'final_int6_roundtrip val_loss:%.4f val_bpb:%.4f eval_time:75000ms\n' "$loss" "$3"
    printf 'final_int6_roundtrip_exact val_loss:%s val_bpb:%.8f\n' "$loss" "$3"
  } >"$1"
}

# folder DIR DATE TPB BPB...: one log per seed (seeds 1, 2, ...), a
# submission.json claiming their mean; DATE "" leaves the date out.
folder() {
  d=$1 date=$2 tpb=$3
  shift 3
  mkdir -p "$d"
  printf '# a submission\n' >"$d/README.md"
  printf 'print("train")\n' >"$d/train_gpt.py"
  seed=1 seeds=""
  for b in "$@"; do
    log "$d/train_seed$seed.log" "$seed" "$b" "$tpb" ${TRAIN_MS:+"$TRAIN_MS"} ${MODEL_BYTES:+"$MODEL_BYTES"}
    seeds="$seeds${seeds:+,}$seed"
    seed=$((seed + 1))
  done
  mean=$(printf '%s\n' "$@" | awk '{ s += $1; n++ } END { printf "%.8f", s / n }')
  printf '{"name": "%s", "author": "a", "github_id": "a", %s"val_bpb": %s, "seeds": [%s]}\n' \
    "$(basename "$d")" "${date:+\"date\": \"$date\", }" "$mean" "$seeds" >"$d/submission.json"
}

folder "$T10/2026-03-01_Base" 2026-03-01 0.41 1.2000 1.2010 1.1990
folder "$T10/2026-02-27_Both" 2026-03-02 0.41 1.1900 1.1905 1.1895      # date from submission.json
folder "$T10/2026-03-03_PracticeOnly" "" 0.41 1.1890 1.1891 1.1889       # date from the folder name
folder "$T10/2026-03-04_Neither" 2026-03-04 0.41 1.1880 1.1910 1.1870
# No submission.json; seed 1 trained and evaluated in two logs, seed 2's
# log copied, seed 3 trained twice.
M=$T10/2026-03-05_Multi
folder "$M" 2026-03-05 0.41 1.1700 1.1710 1.1690
rm "$M/submission.json"
cp "$M/train_seed2.log" "$M/train.log"
log "$M/ttt_seed1.log" 1 1.1650 0.41
log "$M/train_seed3_rerun.log" 3 1.1692 0.41
sed -i '/^step:\|^stopping_early\|^Serialized/d' "$M/ttt_seed1.log"
folder "$T10/2026-03-06_SP8192" 2026-03-06 0.268 1.1600 1.1605 1.1595
folder "$T10/2026-03-07_OneSeed" 2026-03-07 0.41 1.1500
folder "$T10/2026-03-08_Not Best" 2026-03-08 0.41 1.2500 1.2510 1.2490
TRAIN_MS=640000 MODEL_BYTES=15999990 folder "$T10/2026-03-09_OverLimits" 2026-03-09 0.41 1.1400 1.1410 1.1390
TRAIN_MS=14400000 folder "$R/track_non_record_16mb/2026-03-10_FourHours" 2026-03-10 0.41 1.1300
folder "$R/misc/2026-03-11_Elsewhere" 2026-03-11 0.41 1.1200 1.1210

# Replays: Both reproduces; SP8192's replays are worse beyond its noise.
P=$TMP/replays
mkdir -p "$P/both" "$P/sp"
# replay FILE FOLDER SEED BPB
replay() {
  printf '{"kind": "pgolf/replay/v1", "verdict": "pass", "record": {"folder": "%s", "seed": %s},\n "result": {"val_loss": 2.0, "val_bpb": %s}, "findings": []}\n' \
    "$2" "$3" "$4" >"$1"
}
replay "$P/both/replay-seed1.json" "records/track_10min_16mb/2026-02-27_Both" 1 1.1902
replay "$P/both/replay-seed2.json" "/elsewhere/track_10min_16mb/2026-02-27_Both/" 2 1.1899
replay "$P/sp/replay-seed1.json" "2026-03-06_SP8192" 1 1.1700
replay "$P/sp/replay-seed2.json" "2026-03-06_SP8192" 2 1.1710
replay "$P/sp/replay-seed3.json" "2026-03-06_SP8192" 3 1.1690
printf '{"record": "2026-03-06_SP8192", "salt": "s", "runs": [], "reproduction": {"verdict": "REPRODUCTION_GAP", "claimed_mean": 1.16, "replayed_mean": 1.17, "p": 0.001}}\n' >"$P/sp/replay-fresh.json"
printf '{"notes": "not a replay"}\n' >"$P/notes.json"

O=$TMP/lb
expect_rc lb_writes 0 "$PGOLF" leaderboard "$R" --replays "$P" -o "$O"
J=$O/leaderboard.json
for f in index.html leaderboard.json summary.md 2026-03-01_Base.html "2026-03-08_Not Best.html" \
  2026-03-10_FourHours.html 2026-03-11_Elsewhere.html; do
  [ -s "$O/$f" ] || fail lb_files "missing $f"
done
[ "$(ls "$O" | grep -c '\.html$')" -eq 12 ] && ok lb_files || fail lb_files "$(ls "$O")"

# jqv FILTER: one value of the JSON.
jqv() { jq -r "$1" "$J"; }
step() { jqv ".chain[] | select(.record == \"$1\") | $2"; }
entry() { jqv ".folders[] | select(.folder == \"$1\") | $2"; }

# The chain and its verdicts.
[ "$(jqv '[.chain[].record] | join(" ")')" = \
  "2026-03-01_Base 2026-02-27_Both 2026-03-03_PracticeOnly 2026-03-04_Neither 2026-03-05_Multi 2026-03-06_SP8192 2026-03-07_OneSeed 2026-03-08_Not Best 2026-03-09_OverLimits" ] &&
  ok lb_chain_order || fail lb_chain_order "$(jqv '[.chain[].record] | join(" ")')"
[ "$(entry 2026-02-27_Both '.date + " " + .date_from')" = "2026-03-02 submission.json" ] &&
  [ "$(entry 2026-03-03_PracticeOnly '.date + " " + .date_from')" = "2026-03-03 folder name" ] &&
  ok lb_dates || fail lb_dates "$(entry 2026-02-27_Both .date) $(entry 2026-03-03_PracticeOnly .date_from)"
verdicts=$(jqv '[.chain[] | if .previous == null then "first" elif .displaces | not then "not_best"
  elif .testable | not then "untestable" elif .readme.accepted then "both"
  elif .practice.accepted then "practice" else "neither" end] | join(" ")')
[ "$verdicts" = "first both practice neither both practice untestable not_best untestable" ] &&
  ok lb_verdicts || fail lb_verdicts "$verdicts"
[ "$(jqv '.summary | "\(.steps) \(.readme_accepted) \(.practice_accepted) \(.neither) \(.untestable) \(.not_displacing)"')" = "7 2 4 1 2 1" ] &&
  ok lb_counts || fail lb_counts "$(jqv .summary)"

# Each testable step is what `pgolf stats` says about the same pair.
# same NAME FILTER_STATS FILTER_STEP: equal to 12 significant digits.
same() {
  a=$(jq -r "$2" "$TMP/stats.json") b=$(step "$3" "$4")
  if awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; m = (a < 0 ? -a : a); exit !(a != "" && b != "" && d <= 1e-12 * (m > 1e-300 ? m : 1)) }'; then
    ok "$1"; else fail "$1" "stats $a, leaderboard $b"; fi
}
# compare NAME RECORD STATS_ARGS...: the step of RECORD against stats.
compare() {
  n=$1 rec=$2
  shift 2
  "$PGOLF" stats "$@" --json >"$TMP/stats.json" 2>"$TMP/stats.err"
  same "${n}_readme_p" .readings.readme.p "$rec" .readme.p
  same "${n}_practice_p" .readings.practice.p "$rec" .practice.p
  same "${n}_margin" .readings.readme.margin "$rec" .margin_bpb
  same "${n}_tpb" .tokens_per_byte "$rec" .tokens_per_byte
  same "${n}_means" '.mean_new - .mean_record' "$rec" '.mean_new - .mean_record'
}
compare lb_stats_both 2026-02-27_Both --new "$T10/2026-02-27_Both" --record "$T10/2026-03-01_Base"
compare lb_stats_practice 2026-03-03_PracticeOnly --new "$T10/2026-03-03_PracticeOnly" --record "$T10/2026-02-27_Both"
compare lb_stats_neither 2026-03-04_Neither --new "$T10/2026-03-04_Neither" --record "$T10/2026-03-03_PracticeOnly"
# Several logs per seed (stats refuses the folder): its values as numbers.
multi=$(entry 2026-03-05_Multi '[.values[].val_bpb | tostring] | join(",")')
compare lb_stats_multi 2026-03-05_Multi --new "$multi" --record "$T10/2026-03-04_Neither" \
  --tokens-per-byte "$(step 2026-03-05_Multi .tokens_per_byte)"
compare lb_stats_sp8192 2026-03-06_SP8192 --new "$T10/2026-03-06_SP8192" --record "$multi"
# The sp8192-like folder's margin is 0.005 nats at its own 0.268 tokens per byte.
awk -v m="$(step 2026-03-06_SP8192 .margin_bpb)" 'BEGIN { e = 0.005 * 0.268 / log(2); exit !(m - e < 1e-9 && e - m < 1e-9) }' &&
  ok lb_margin_from_logs || fail lb_margin_from_logs "$(step 2026-03-06_SP8192 .margin_bpb)"
# Three runs from five logs and a copy; a run's value is its last final
# metric in file order (seed 1: ttt_seed1.log, the evaluation of its
# model; seed 3: its rerun).
[ "$(entry 2026-03-05_Multi '"\(.n) \(.runs_with_final_metric) \(.reruns) \(.sample_from) \(.claimed_val_bpb) \([.values[].file] | join(","))"')" = \
  "3 3 1 runs null train.log,ttt_seed1.log,train_seed3_rerun.log" ] &&
  [ "$(entry 2026-03-05_Multi '.errors | join(",")')" = MISSING_FILE ] &&
  ok lb_several_logs_per_seed || fail lb_several_logs_per_seed "$(entry 2026-03-05_Multi '[.n, .sample_from, .errors]')"

# One seed: not testable, with the seeds 80% power would need at the standing record's spread.
[ "$(step 2026-03-07_OneSeed '"\(.why_not_testable) \(.spread_from) \(.readme.p)"')" = "this record has one seed record null" ] &&
  [ "$(step 2026-03-07_OneSeed '.seeds_needed_readme > 1 and .seeds_needed_practice >= 2')" = true ] &&
  ok lb_one_seed || fail lb_one_seed "$(step 2026-03-07_OneSeed .)"
[ "$(step 2026-03-09_OverLimits .why_not_testable)" = "the standing record has one seed" ] &&
  ok lb_one_seed_standing || fail lb_one_seed_standing "$(step 2026-03-09_OverLimits .why_not_testable)"
[ "$(step '2026-03-08_Not Best' '"\(.displaces) \(.previous)"')" = "false 2026-03-07_OneSeed" ] &&
  ok lb_not_best || fail lb_not_best "$(step '2026-03-08_Not Best' .)"

# Columns: bytes, times, verdict and codes; the non-record track has no time budget.
[ "$(entry 2026-03-09_OverLimits '"\(.verdict) \(.errors | join(",")) \(.bytes) \(.train_s) \(.eval_s)"')" = \
  "fail SIZE_OVER_LIMIT,TRAIN_OVER_BUDGET 16000005 640 75" ] &&
  ok lb_limits || fail lb_limits "$(entry 2026-03-09_OverLimits '[.verdict, .errors, .bytes, .train_s, .eval_s]')"
[ "$(entry 2026-03-10_FourHours '"\(.track) \(.verdict) \(.train_s)"')" = "nonrecord pass 14400" ] &&
  [ "$(entry 2026-03-11_Elsewhere .track)" = other ] && ok lb_tracks ||
  fail lb_tracks "$(entry 2026-03-10_FourHours '[.track, .verdict, .errors]') $(entry 2026-03-11_Elsewhere .track)"
[ "$(jqv '[.summary.folders_with_errors[].folder] | join(" ")')" = "2026-03-05_Multi 2026-03-09_OverLimits" ] &&
  ok lb_error_list || fail lb_error_list "$(jqv .summary.folders_with_errors)"

# Replays, joined by folder name (paths differ); a fresh-seed summary goes
# to its folder's page; other JSON is skipped.
[ "$(entry 2026-02-27_Both '"\(.replays.reproduction.verdict) \([.replays.runs[].claimed_val_bpb] | join(","))"')" = "consistent 1.19,1.1905" ] &&
  ok lb_replays_consistent || fail lb_replays_consistent "$(entry 2026-02-27_Both .replays)"
[ "$(entry 2026-03-06_SP8192 '"\(.replays.reproduction.verdict) \(.replays.runs | length)"')" = "REPRODUCTION_GAP 3" ] &&
  ok lb_replays_gap || fail lb_replays_gap "$(entry 2026-03-06_SP8192 .replays)"
[ "$(jqv '.replay_files_skipped | length')" = 1 ] && [ "$(jqv '.replay_files_skipped[0]')" = "$P/notes.json" ] &&
  ok lb_replays_skipped || fail lb_replays_skipped "$(jqv .replay_files_skipped)"
# The folder pages are pgolf verify's, with the replays and the fresh-seed verdict.
grep -q 'pgolf verify: ' "$O/2026-03-06_SP8192.html" && grep -q 'replay-seed3.json' "$O/2026-03-06_SP8192.html" &&
  grep -q 'REPRODUCTION_GAP' "$O/2026-03-06_SP8192.html" && ok lb_folder_page_verify ||
  fail lb_folder_page_verify "$(grep -o '<h1>.*</h1>' "$O/2026-03-06_SP8192.html")"
printf '{"kind": "pgolf/replay/v1", "record": {"seed": 1}}\n' >"$P/bad.json"
expect_err lb_replay_malformed 2 "bad.json.*record.folder" "$PGOLF" leaderboard "$R" --replays "$P" -o "$TMP/o2"
# RECORDS_DIR may be one track's folder.
"$PGOLF" leaderboard "$T10" -o "$TMP/o4" >/dev/null 2>&1
[ "$(jq '.summary | "\(.folders) \(.steps)"' "$TMP/o4/leaderboard.json" 2>/dev/null)" = '"9 7"' ] &&
  ok lb_track_folder || fail lb_track_folder "$(jq .summary "$TMP/o4/leaderboard.json" 2>&1 | head -5)"
expect_err lb_no_folders 2 "no submission folders" "$PGOLF" leaderboard "$P/both" -o "$TMP/o3"
expect_err lb_needs_output 2 "-o is required" "$PGOLF" leaderboard "$R"

# summary.md: the counts and a row per step.
grep -q 'Of 7 record-to-record steps (a record below the standing one), 2 pass the README.*, 4 the maintainers' "$O/summary.md" &&
  grep -q '^| 2026-03-04 | 2026-03-04_Neither | 1.18867 | 3 | 2026-03-03_PracticeOnly | ' "$O/summary.md" &&
  grep -q '^- `track_10min_16mb/2026-03-09_OverLimits`: SIZE_OVER_LIMIT,TRAIN_OVER_BUDGET$' "$O/summary.md" &&
  grep -q 'REPRODUCTION_GAP' "$O/summary.md" && ok lb_markdown || fail lb_markdown "$(cat "$O/summary.md")"

# The page: self-contained, every link to a page beside it.
H=$O/index.html
if [ ! -s "$H" ]; then fail lb_self_contained "no index.html"
elif grep -Eiq '<script|<link|<img|<iframe|src=|url\(|@import|href="[a-z]+:' "$H"; then
  fail lb_self_contained "$(grep -Eio '<script|<link|<img|<iframe|src=|url\(|@import|href="[a-z]+:' "$H" | head -3)"
else ok lb_self_contained; fi
bad=""
for l in $(grep -o 'href="[^"]*"' "$H" "$O/2026-03-04_Neither.html" | sed 's/.*href="//; s/"$//' | sort -u); do
  f=$(printf '%s' "$l" | sed 's/%20/ /g')
  [ -f "$O/$f" ] || bad="$bad $l"
done
[ -z "$bad" ] && [ "$(grep -c 'href="' "$H")" -gt 20 ] && ok lb_links || fail lb_links "$bad"
grep -q 'href="2026-03-08_Not%20Best.html"' "$H" && grep -q 'SIZE_OVER_LIMIT,TRAIN_OVER_BUDGET' "$H" &&
  grep -q '<h2>Non-record track (1)</h2>' "$H" && grep -q '<h2>Other folders (1)</h2>' "$H" &&
  grep -q 'REPRODUCTION_GAP: replayed mean' "$H" && ok lb_page_content || fail lb_page_content "a section or row is missing"
grep -q 'Record 4 of the chain: 1.18867 (n=3) against the standing record' "$O/2026-03-04_Neither.html" &&
  grep -q 'Practice: p = .*, rejected' "$O/2026-03-04_Neither.html" && ok lb_folder_page || fail lb_folder_page "$(grep -o '<p>Record.*' "$O/2026-03-04_Neither.html")"

# ---- the screenshot ----
# The window ends below the chart and above the chain's table, whose rows
# carry a swatch of each verdict's colour too.
screenshot lb_screenshot "$H" "$TMP/shot.png" 1200x800 || exit 0
[ -n "${PGOLF_LEADERBOARD_KEEP:-}" ] && mkdir -p "$PGOLF_LEADERBOARD_KEEP" && cp -R "$O/." "$TMP/shot.png" "$PGOLF_LEADERBOARD_KEEP/" 2>/dev/null
# verdict colours of leaderboard_html.c and the squares of each: a 10 x 10
# legend swatch plus one 9 x 9 square per record of that verdict.
for cv in e7298a:1 1a9850:2 2b83ba:2 d7191c:1 984ea3:2 a6761d:1; do
  c=${cv%:*} k=${cv#*:}
  n=$(pixels "#$c") want=$((100 + 81 * k))
  if [ "$n" -ge $((want - 8)) ] && [ "$n" -le $((want + 8)) ]; then ok "lb_chart_$c"; else
    fail "lb_chart_$c" "$n pixels of #$c, expected about $want ($k squares and the legend)"; fi
done
