#!/bin/sh
# pgolf report end to end: three run manifests (pgolf manifest create, with
# evaluation, timing and artifact added by jq), a replay manifest and a real
# `pgolf check --json` result make one HTML report and a Markdown summary.
# The HTML is self-contained (no script, nothing fetched); headless
# Chromium renders it, and the screenshot is not blank and shows each
# run's curve in its own colour (pixels of exactly that colour, counted
# with ImageMagick).
#
# PGOLF_REPORT_KEEP=DIR keeps report.html, report.md and shot.png there.
# Chromium (Debian `chromium`) and ImageMagick (`imagemagick`) are
# required: without them the screenshot checks FAIL, unless
# PGOLF_ALLOW_NO_CHROMIUM=1 is set, which turns that into a loud SKIP line
# (lib.sh's screenshot).
. "$(dirname "$0")/lib.sh"
repo=$(pwd)

cd "$TMP" || exit 1
mkdir data
{ printf '\210\330\064\001\001\000\000\000\004\000\000\000'; head -c 1012 /dev/zero; printf '\001\000\002\000\003\000\004\000'; } \
  >data/fineweb_val_000000.bin
printf '{"preset": "tiny"}\n' >config.json
printf 'int8 weights' >model.bin

# run NAME SEED BPB: a 300-step run whose loss decays differently per seed.
run() {
  awk -v s="$2" 'BEGIN { for (i = 1; i <= 300; i++) printf "%d %.6f\n", i, 3 + 4 * exp(-i / (20 * s)) + 0.05 * sin(i * s) }' >"$1.losses"
  "$PGOLF" manifest create --config config.json --tokenizer "$repo/data/tokenizers/fineweb_1024_bpe.model" \
    --data data --seed "$2"  --losses "$1.losses" --artifact model.bin -o "$1.raw.json" >/dev/null || return 1
  jq --argjson b "$3" '.predicate.evaluation = {val_loss: ($b * 1.9), val_bpb: $b}
    | .predicate.timing = {train_ms: 512345, final_eval_ms: 80000}
    | .predicate.artifact.total_bytes = 15800000' "$1.raw.json" >"$1.json"
}
run run1 1 1.2210 && run run2 2 1.2190 && run run3 3 1.2230 || fail report_setup "manifest create failed"

# A replay manifest (the fields report reads), over the limit on train time.
awk 'BEGIN { printf "{\"kind\": \"pgolf/replay/v1\", \"verdict\": \"fail\", \"record\": {\"seed\": 2},\n";
  printf " \"timings\": {\"train_ms\": 640000, \"eval_ms\": 90000}, \"accounting\": {\"total_bytes\": 16100000},\n";
  printf " \"result\": {\"val_loss\": 2.3, \"val_bpb\": 1.2195},\n";
  printf " \"findings\": [{\"code\": \"TRAIN_OVER_BUDGET\", \"severity\": \"error\", \"message\": \"trained 640 s <of> 600\", \"file\": null, \"line\": null}],\n";
  printf " \"losses\": [";
  for (i = 1; i <= 300; i++) printf "%s{\"step\": %d, \"loss\": %.4f}", (i > 1 ? ", " : ""), i, 3.2 + 3 * exp(-i / 60);
  printf "]}\n" }' >replay.json

# A submission folder with one log, checked for real.
mkdir sub
printf '# a submission\n' >sub/README.md
printf 'print(1)\n' >sub/train_gpt.py
printf '{"val_bpb": 1.2}\n' >sub/submission.json
{ printf 'seed:7\n'; printf 'step:100/200 train_loss:3.0000 train_time:50000ms step_avg:500.00ms\n'
  printf 'final_int8_zlib_roundtrip_exact val_loss:2.07269931 val_bpb:1.22500000\n'; } >sub/train_seed7.log
"$PGOLF" check --json sub >check.json 2>/dev/null
if [ "$(jq -r '.folder' check.json 2>/dev/null)" = sub ]; then ok report_check_input; else fail report_check_input "$(head -c 300 check.json)"; fi

expect_rc report_writes 0 "$PGOLF" report run1.json run2.json run3.json replay.json check.json \
  -o report.html --markdown report.md --record 1.2260,1.2270,1.2250 --tokens-per-byte 0.41

# Self-contained: no script, no stylesheet, image or font fetched.
if [ ! -s report.html ]; then fail report_self_contained "no report.html"
elif grep -Eiq '<script|<link|<img|<iframe|src=|href=|url\(|@import' report.html; then
  fail report_self_contained "$(grep -Eio '<script|<link|<img|<iframe|src=|href=|url\(|@import' report.html | head -3)"
else ok report_self_contained; fi
n_poly=$(grep -c '<polyline' report.html)
if [ "$n_poly" -eq 4 ]; then ok report_four_curves; else fail report_four_curves "$n_poly polylines"; fi
if grep -q 'TRAIN_OVER_BUDGET' report.html && grep -q 'trained 640 s &lt;of&gt; 600' report.html; then
  ok report_findings_escaped; else fail report_findings_escaped "finding missing or unescaped"; fi
if grep -q 'p (diff &gt; margin)' report.html && grep -q 'train_seed7.log' report.html; then
  ok report_tables; else fail report_tables "significance or check log row missing"; fi

# Markdown: one row per run (3 runs, the replay, the checked log).
if [ "$(grep -c '^| ' report.md)" -eq 6 ] &&
  grep -q '^| run seed 2 | 2 | 1.21900000 | 2.31610000 | 512.3 | 80.0 | 15800000 |  |$' report.md &&
  grep -q '^| replay seed 2 | 2 | 1.21950000 | 2.30000000 | 640.0 | 90.0 | 16100000 | fail |$' report.md &&
  grep -q '^\*\*Findings:\*\* [1-9][0-9]* errors\?,' report.md && grep -q '^- `TRAIN_OVER_BUDGET` trained 640 s &lt;of&gt; 600$' report.md &&
  grep -q 'runs: n=3, mean val_bpb 1.22100000, sd 0.00200000; record: n=3, mean 1.22600000' report.md &&
  grep -q 'not significant\*\* at alpha 0.01' report.md; then
  ok report_markdown; else fail report_markdown "$(cat report.md)"; fi

expect_err report_bad_input 2 "neither a run manifest" "$PGOLF" report config.json -o x.html
expect_err report_needs_output 2 "-o.*required" "$PGOLF" report run1.json

# ---- the screenshot ----
screenshot report_screenshot "$TMP/report.html" "$TMP/shot.png" 1200x1600 || exit 0
# PGOLF_REPORT_KEEP=DIR keeps the report and its screenshot (to look at).
[ -n "${PGOLF_REPORT_KEEP:-}" ] && mkdir -p "$PGOLF_REPORT_KEEP" && cp report.html report.md shot.png "$PGOLF_REPORT_KEEP/" 2>/dev/null
distinct=$(wc -l <"$SHOT_HIST")
white=$(pixels '#ffffff')
if [ "$distinct" -ge 20 ] && [ "$white" -lt $((1200 * 1600 - 20000)) ]; then ok report_not_blank; else
  fail report_not_blank "$distinct colours, $white white pixels"; fi
# The palette of report_html.h, in curve order: 3 runs, then the replay.
for c in e6194b 3cb44b 4363d8 f58231; do
  n=$(pixels "#$c")
  if [ "$n" -ge 400 ]; then ok "report_curve_$c"; else fail "report_curve_$c" "$n pixels of #$c"; fi
done
# The fifth colour belongs to no curve: only stray pixels, if any.
n=$(pixels '#911eb4')
if [ "$n" -lt 100 ]; then ok report_no_fifth_curve; else fail report_no_fifth_curve "$n pixels of #911eb4"; fi
