#!/bin/sh
# pgolf verify DIR: the static check, the replay (the torchrun stand-in
# under NVML's stand-in), the audit of the folder's and the replay's score
# dumps, the significance test under both readings, one HTML report and a
# capped Markdown summary. A passing folder passes every step it runs; a
# failing one fails each step for its own reason; what could not run says
# why and never passes; bad input exits 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/check_helpers"
N=41
. "$(dirname "$0")/dump_helpers"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
STANDINS=$HERE/tests/stand-ins
FAKE=$(dirname "$PGOLF")/tests/libfake_nvml.so
[ -f "$FAKE" ] || { fail verify-fake-nvml "no $FAKE (make build)"; exit 1; }
command -v bwrap >/dev/null 2>&1 || { fail verify-environment "bubblewrap is not installed (apt-get install -y bubblewrap)"; exit 1; }

# folder DIR BPB...: a record-shaped folder (check_helpers) with a clean
# score dump of the 41-token split in eval/.
folder() {
  record_folder "$@"
  mkdir -p "$1/eval"
  { header 1024 40 0; records 1 40; } >"$1/eval/score.pgsd"
}

# steps NAME FILE WANT: the "step status" pairs verify printed, e.g.
# "check:pass replay:not run audit:pass significance:pass".
steps() {
  got=$(awk '/^  (check|replay|audit|significance) / { s = $2; if ($3 == "run") s = s " run"; printf "%s%s:%s", sep, $1, s; sep = " " }' "$2")
  if [ "$got" = "$3" ]; then ok "$1"; else fail "$1" "steps: $got; wanted $3; $(head -c 600 "$2")"; fi
}

REC=1.08079,1.08103,1.08118

# ---- a passing folder: check, audit and significance pass ----
folder "$TMP/good" 1.0700 1.0702 1.0698
expect_rc verify-pass 0 "$PGOLF" verify "$TMP/good" --against "$REC" --tokenizer "$TOK" --val "$val" -o "$TMP/v1"
steps verify-pass-steps "$TMP/out" "check:pass replay:not run audit:pass significance:pass"
grep -q "^$TMP/good: PASS$" "$TMP/out" && ok verify-pass-verdict || fail verify-pass-verdict "$(head -3 "$TMP/out")"
H=$TMP/v1/verify.html
M=$TMP/v1/verify.md
[ -s "$H" ] && [ -s "$M" ] && ok verify-pass-files || fail verify-pass-files "$(ls "$TMP/v1")"
grep -q 'Verification: <span class="pass">PASS</span>' "$H" && grep -q '<td>eval/score.pgsd</td>' "$H" &&
  grep -q 'Significance against the record' "$H" && ok verify-pass-html || fail verify-pass-html "$(head -c 800 "$H")"
# Self-contained: no script, nothing fetched.
if grep -Eqi '<script|src=|href=|@import|url\(' "$H"; then fail verify-html-self-contained "$(grep -Eio '<script|src=[^ ]*|href=[^ ]*|@import|url\([^)]*' "$H" | head -3)"
else ok verify-html-self-contained; fi
grep -q '^### pgolf verify: `.*good` \*\*PASS\*\*$' "$M" && grep -q '^| score-first audit | pass | 1 dump' "$M" &&
  grep -q '^| `eval/score.pgsd` | pass | pass | skipped | skipped | skipped |$' "$M" &&
  ok verify-pass-markdown || fail verify-pass-markdown "$(cat "$M")"

# ---- both readings of the significance rule, side by side ----
folder "$TMP/a2" 1.07928348 1.07996676 1.08024795
expect_rc verify-a2-passes-practice 0 "$PGOLF" verify "$TMP/a2" --against "$REC" --tokenizer "$TOK" --html "$TMP/a2.html" --markdown "$TMP/a2.md"
steps verify-a2-steps "$TMP/out" "check:pass replay:not run audit:not run significance:pass"
grep -q 'README rule, diff > 0.005 nats (0.001933 bpb) at p < 0.01: p = 0.9494, \*\*not significant\*\*' "$TMP/a2.md" &&
  grep -q "maintainers' practice, diff > 0 at p < 0.25: p = 0.02042, \*\*accepted\*\* (grace p <= 0.014: above)" "$TMP/a2.md" &&
  ok verify-both-rules-markdown || fail verify-both-rules-markdown "$(cat "$TMP/a2.md")"
grep -q '<td>README rule</td>.*<td class="fail">not significant</td>' "$TMP/a2.html" &&
  grep -q "<td>maintainers' practice</td>.*<td class=\"pass\">accepted</td>" "$TMP/a2.html" &&
  ok verify-both-rules-html || fail verify-both-rules-html "$(grep -A6 'Significance against' "$TMP/a2.html" | head -c 900)"
# Without --val, the dump is found but not audited, with the reason: never a pass.
grep -q '^| score-first audit | not run | 1 of 1 dump not audited: eval/score.pgsd: no validation split: pass --val DIR |$' "$TMP/a2.md" &&
  ok verify-audit-not-run-reason || fail verify-audit-not-run-reason "$(grep audit "$TMP/a2.md")"

# ---- a failing folder: each step fails for its own reason ----
folder "$TMP/bad" 1.0815 1.0818 1.0812
BPB=1.0815 mini_log "$TMP/bad/train_seed1.log" 1 16000000 15   # over 16,000,000 bytes
{ header 1024 39 0; records 1 40 17; } >"$TMP/bad/eval/score.pgsd" # position 17 never scored
echo "# standin: steps=3 step_ms=50 val_bpb=1.30000000" >>"$TMP/bad/train_gpt.py" # the replay misses the claim
mkdir -p "$TMP/data"
cp "$val/fineweb_val_000000.bin" "$TMP/data/"
PGOLF_NVML_LIBRARY=$FAKE expect_rc verify-fail 1 "$PGOLF" verify "$TMP/bad" --against "$REC" --tokenizer "$TOK" \
  --data "$TMP/data" -o "$TMP/v2" --replay --seed 1 --ro-bind "$STANDINS" \
  -- "$STANDINS/torchrun" --standalone --nproc_per_node=8 train_gpt.py
steps verify-fail-steps "$TMP/out" "check:fail replay:fail audit:fail significance:fail"
M=$TMP/v2/verify.md
for code in SIZE_OVER_LIMIT CLAIM_MISMATCH AUDIT_COVERAGE SIGNIFICANCE; do
  grep -q "^- \*\*error\*\* \`$code\`" "$M" && ok "verify-fail-lists-$code" || fail "verify-fail-lists-$code" "$(grep '^- ' "$M" | head -8)"
done
grep -q 'position 17' "$M" && ok verify-fail-audit-position || fail verify-fail-audit-position "$(grep AUDIT "$M")"
[ -f "$TMP/v2/replay/replay-seed1.json" ] && jq -e '.hardware.attested and .verdict == "fail"' \
  "$TMP/v2/replay/replay-seed1.json" >/dev/null && ok verify-replay-manifest || fail verify-replay-manifest "$(ls "$TMP/v2/replay")"
grep -q 'replay seed 1' "$TMP/v2/verify.html" && ok verify-replay-in-report || fail verify-replay-in-report "no replay run in the HTML"

# A replay's own score dump is audited too (the stand-in writes none; one
# is put where the replay writes, as an evaluation would).
folder "$TMP/rd" 1.0700 1.0702 1.0698
rm "$TMP/rd/eval/score.pgsd"
cat >"$TMP/rd/train_gpt.py" <<'PY'
# standin: steps=2 step_ms=50 val_bpb=1.07000000
PY
printf '#!/bin/sh\n%s/torchrun "$@" && cp /data/score.bin eval/replayed.pgsd\n' "$STANDINS" >"$TMP/rd/run.sh"
{ header 1024 40 0; records 1 40; } >"$TMP/data/score.bin"
PGOLF_NVML_LIBRARY=$FAKE expect_rc verify-replay-dump 0 "$PGOLF" verify "$TMP/rd" --tokenizer "$TOK" \
  --data "$TMP/data" -o "$TMP/v3" --replay --seed 2 --ro-bind "$STANDINS" \
  -- /bin/sh run.sh --standalone --nproc_per_node=8 train_gpt.py
steps verify-replay-dump-steps "$TMP/out" "check:pass replay:pass audit:pass significance:not run"
grep -q '^| `scratch-seed2/eval/replayed.pgsd` | pass |' "$TMP/v3/verify.md" && ok verify-replay-dump-audited ||
  fail verify-replay-dump-audited "$(grep -i dump "$TMP/v3/verify.md")"

# Fresh seeds: two replays the submitter did not choose; the claimed
# per-seed results beat them beyond the noise (REPRODUCTION_GAP).
folder "$TMP/fr" 1.0700 1.0702 1.0698
printf '# standin: steps=2 step_ms=30 val_bpb=1.30000000\n' >"$TMP/fr/train_gpt.py"
PGOLF_NVML_LIBRARY=$FAKE expect_rc verify-fresh-gap 1 "$PGOLF" verify "$TMP/fr" --tokenizer "$TOK" \
  --data "$TMP/data" -o "$TMP/vf" --replay --fresh-seeds 2 --salt maint-1 --ro-bind "$STANDINS" \
  -- "$STANDINS/torchrun" --standalone --nproc_per_node=8 train_gpt.py
steps verify-fresh-steps "$TMP/out" "check:pass replay:fail audit:pass significance:not run"
grep -q '^| replay | fail | 2 replays pass; reproduction test: REPRODUCTION_GAP (claimed mean 1.07000000, replayed 1.30000000)' "$TMP/vf/verify.md" &&
  grep -q '^- \*\*error\*\* `REPRODUCTION_GAP`' "$TMP/vf/verify.md" && ok verify-fresh-gap-reported ||
  fail verify-fresh-gap-reported "$(grep -i 'replay\|REPRO' "$TMP/vf/verify.md" | head -5)"

# ---- the Markdown cap: findings past it are counted, the HTML has all ----
folder "$TMP/many" 1.0700 1.0702 1.0698
i=0
while [ $i -lt 30 ]; do
  { header 1024 39 0; records 1 40 $((i + 2)); } >"$TMP/many/eval/gap$i.pgsd"
  i=$((i + 1))
done
expect_rc verify-many-fails 1 "$PGOLF" verify "$TMP/many" --tokenizer "$TOK" --val "$val" -o "$TMP/v4" --markdown-max 8192
M=$TMP/v4/verify.md
bytes=$(wc -c <"$M")
html_rows=$(grep -c '<td class="error">error</td>' "$TMP/v4/verify.html")
shown=$(grep -c '^- \*\*error\*\*' "$M")
more=$(sed -n 's/^… and \([0-9]*\) more findings (the summary is capped at 8192 bytes.*/\1/p' "$M")
if [ "$bytes" -le 8192 ] && [ -n "$more" ] && [ "$html_rows" -eq 30 ] && [ $((shown + more)) -ge 30 ]; then
  ok verify-markdown-capped; else fail verify-markdown-capped "$bytes bytes, $shown shown, '$more' more, $html_rows in the HTML"; fi
expect_rc verify-default-cap 1 "$PGOLF" verify "$TMP/many" --tokenizer "$TOK" --val "$val" -o "$TMP/v5"
[ "$(wc -c <"$TMP/v5/verify.md")" -le 60000 ] && ! grep -q 'more findings' "$TMP/v5/verify.md" &&
  ok verify-default-cap-holds-all || fail verify-default-cap-holds-all "$(wc -c <"$TMP/v5/verify.md") bytes"

# Escaping can make the head alone outgrow a small cap (dump names full of
# '<', each written as &lt;): the summary is cut at a line, with a note.
folder "$TMP/lt" 1.0700 1.0702 1.0698
lt=$(printf '%0240d' 0 | tr 0 '<')
i=0
while [ $i -lt 12 ]; do cp "$TMP/lt/eval/score.pgsd" "$TMP/lt/eval/$lt$i.pgsd"; i=$((i + 1)); done
expect_rc verify-escaped-head 0 "$PGOLF" verify "$TMP/lt" --tokenizer "$TOK" --val "$val" -o "$TMP/v7" --markdown-max 8192
[ "$(wc -c <"$TMP/v7/verify.md")" -le 8192 ] && tail -n 1 "$TMP/v7/verify.md" | grep -q '(cut to fit the cap; see the HTML report)' &&
  ok verify-escaped-head-capped || fail verify-escaped-head-capped "$(wc -c <"$TMP/v7/verify.md") bytes; $(tail -n 2 "$TMP/v7/verify.md")"

# ---- bad input: exit 2 ----
expect_err verify-no-folder 2 'no folder given' "$PGOLF" verify
expect_err verify-missing-folder 2 'nope' "$PGOLF" verify "$TMP/nope" -o "$TMP/v6"
expect_err verify-bad-against 2 'against' "$PGOLF" verify "$TMP/good" --against 1.08,abc -o "$TMP/v6"
expect_err verify-small-cap 2 'markdown-max: at least 8192' "$PGOLF" verify "$TMP/good" --markdown-max 100
expect_err verify-seed-needs-replay 2 'add --replay' "$PGOLF" verify "$TMP/good" --seed 1
expect_err verify-replay-needs-cmd 2 'no command after' "$PGOLF" verify "$TMP/good" --replay --seed 1
expect_err verify-replay-needs-seed 2 'needs --seed S or --fresh-seeds' "$PGOLF" verify "$TMP/good" --replay -- true
expect_err verify-out-exclusive 2 'exclude each other' "$PGOLF" verify "$TMP/good" -o x --html y.html
expect_rc verify-help 0 "$PGOLF" verify --help

# ---- the page in a browser ----
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  if [ "${PGOLF_ALLOW_NO_CHROMIUM:-0}" = 1 ]; then
    skip verify-html-renders "chromium missing (allowed by PGOLF_ALLOW_NO_CHROMIUM=1)"
  else
    fail verify-html-renders "needs the Debian package chromium (or PGOLF_ALLOW_NO_CHROMIUM=1 to skip)"
  fi
  exit 0
fi
headless "$TMP/dom.html" --dump-dom "file://$TMP/v2/verify.html"
grep -q '<span class="fail">FAIL</span>' "$TMP/dom.html" && grep -q '<svg' "$TMP/dom.html" &&
  ok verify-html-renders || fail verify-html-renders "$(head -c 400 "$TMP/dom.html")"
