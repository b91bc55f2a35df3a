# pgolf eval, then pgolf audit with nothing but the dump, the tokenizer and
# the split: every condition must pass for pgolf's own legal evaluators,
# on a split whose length is not a whole number of sequences (999 targets,
# 960 scored at T = 64). The dump records T and the event chain's head;
# the event log lies beside it; the log reports the val_bpb the audit
# checks. Then the ways this can go wrong: another T on the command line,
# a log of another evaluation, a missing log, and a version 1 dump (still
# read, with the old defaults).
. "$(dirname "$0")/lib.sh"

TOK=data/tokenizers/fineweb_1024_bpe.model
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
DATA=$TMP/data
small_demo_data "$DATA" 1000

cat >"$TMP/small.json" <<EOF
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 512, "iterations": 2, "warmdown_iters": 1,
 "val_batch_size": 1024, "data": "$DATA", "tokenizer": "$TOK"}
EOF
expect_rc train-for-artifact 0 "$PGOLF" train --config "$TMP/small.json" --threads 1 --quiet --out "$TMP/run"
ART=$TMP/run/model.int8.ptz

ev() { "$PGOLF" eval --artifact "$ART" --data "$DATA" --tokenizer "$TOK" --threads 1 "$@"; }
audit() { "$PGOLF" audit "$1" --tokenizer "$TOK" --val "$DATA" --json; }
# statuses FILE: the four conditions' statuses, comma-separated
statuses() { jq -r '[.summary.conditions[].status] | join(",")' "$1"; }
# status_of CODE FILE / message_of CODE FILE
status_of() { jq -r --arg c "$1" '.summary.conditions[] | select(.code == $c) | .status' "$2"; }
message_of() { jq -r --arg c "$1" '.summary.conditions[] | select(.code == $c) | .message' "$2"; }

# defaults_pass NAME DUMP: exit 0 and all four conditions pass, with T,
# the log and the claim all taken from the evaluation's own outputs.
defaults_pass() {
  expect_rc "audit-defaults-$1" 0 audit "$2"
  got=$(statuses "$TMP/out")
  [ "$got" = pass,pass,pass,pass ] && ok "audit-defaults-$1-all-pass" ||
    fail "audit-defaults-$1-all-pass" "$got: $(jq -c '.summary.conditions' "$TMP/out")"
}

# every mode with its defaults, then TTT with chunks (ADAPT events) and
# sliding with overlapping windows of another length
for mode in plain sliding ttt; do
  expect_rc "eval-$mode-defaults" 0 ev --mode "$mode" --score-dump "$TMP/$mode.pgsd" --json
  cp "$TMP/out" "$TMP/$mode.out"
  [ -f "$TMP/$mode.pgsd.events.json" ] && [ "$(jq -r .event_log "$TMP/$mode.out")" = "$TMP/$mode.pgsd.events.json" ] &&
    ok "eval-$mode-log-beside-dump" || fail "eval-$mode-log-beside-dump" "$(ls "$TMP")"
  defaults_pass "$mode" "$TMP/$mode.pgsd"
done
[ "$(jq .tokens "$TMP/plain.out")" = 960 ] && [ "$(jq .summary.targets "$TMP/out")" = 960 ] &&
  [ "$(jq .summary.seq_len "$TMP/out")" = 64 ] && [ "$(jq .summary.probes "$TMP/out")" = 8 ] &&
  ok audit-defaults-use-the-dumps-t || fail audit-defaults-use-the-dumps-t "$(jq -c .summary "$TMP/out")"
[ "$(jq -r .summary.claim "$TMP/out")" = "$(jq -r '.val_bpb * 1e8 | round / 1e8 | tostring' "$TMP/ttt.out" | xargs printf '%.8f')" ] &&
  ok audit-defaults-claim-is-the-printed-val-bpb ||
  fail audit-defaults-claim-is-the-printed-val-bpb "$(jq -r .summary.claim "$TMP/out") vs $(jq .val_bpb "$TMP/ttt.out")"
expect_rc eval-ttt-chunked 0 ev --mode ttt --seq-len 32 --stride 8 --chunk 256 --epochs 1 --lr 0.05 \
  --ttt-batch 4 --score-dump "$TMP/chunked.pgsd" --json
cp "$TMP/out" "$TMP/chunked.out"
[ "$(jq '.ttt.steps' "$TMP/chunked.out")" -gt 0 ] && ok eval-ttt-chunked-adapts || fail eval-ttt-chunked-adapts "$(cat "$TMP/chunked.out")"
defaults_pass ttt-chunked "$TMP/chunked.pgsd"
jq -e '.summary.events == 7 and .summary.seq_len == 32 and .summary.targets == 992' "$TMP/out" >/dev/null &&
  ok audit-defaults-ttt-chunked-events || fail audit-defaults-ttt-chunked-events "$(jq -c .summary "$TMP/out")"
expect_rc eval-sliding-32 0 ev --mode sliding --seq-len 32 --stride 8 --score-dump "$TMP/sliding32.pgsd"
defaults_pass sliding-32 "$TMP/sliding32.pgsd"
claim32=$(jq -r .summary.claim "$TMP/out")
"$PGOLF" audit "$TMP/chunked.pgsd" --tokenizer "$TOK" --val "$DATA" >"$TMP/text" 2>&1
grep -q "using   sequence length 32 (the dump's); event log $TMP/chunked.pgsd.events.json (beside the dump); claim" "$TMP/text" &&
  ok audit-text-says-what-it-used || fail audit-text-says-what-it-used "$(cat "$TMP/text")"

# the records are those of explicit options: the dump differs only in its
# header from one written with --probes 0 and --events elsewhere
expect_rc eval-probes-off 0 ev --mode ttt --probes 0 --score-dump "$TMP/noprobe.pgsd" --events "$TMP/elsewhere.json"
[ "$(od -An -tu8 -j24 -N8 "$TMP/noprobe.pgsd" | tr -d ' ')" = 0 ] && ok eval-probes-0-writes-none || fail eval-probes-0-writes-none "probe count not 0"
n=$(($(wc -c <"$TMP/noprobe.pgsd") - 96))
cmp -s -n "$n" -i 96:96 "$TMP/noprobe.pgsd" "$TMP/ttt.pgsd" && ok eval-default-records-unchanged ||
  fail eval-default-records-unchanged "records differ"
[ ! -e "$TMP/noprobe.pgsd.events.json" ] && [ -f "$TMP/elsewhere.json" ] && ok eval-events-option-still-names-the-log ||
  fail eval-events-option-still-names-the-log "$(ls "$TMP")"

# a missing log when the dump records a chain head: C3 fails and says how
expect_rc audit-missing-log 1 audit "$TMP/noprobe.pgsd"
[ "$(status_of AUDIT_ORDER "$TMP/out")" = fail ] && [ "$(status_of AUDIT_NORMALIZATION "$TMP/out")" = skipped ] &&
  message_of AUDIT_ORDER "$TMP/out" | grep -q "there is none at $TMP/noprobe.pgsd.events.json: pass the log with --manifest" &&
  ok audit-missing-log-says-what-and-how || fail audit-missing-log-says-what-and-how "$(jq -c .summary.conditions "$TMP/out")"
expect_rc audit-missing-log-supplied 0 "$PGOLF" audit "$TMP/noprobe.pgsd" --tokenizer "$TOK" --val "$DATA" \
  --manifest "$TMP/elsewhere.json" --json
[ "$(status_of AUDIT_ORDER "$TMP/out")" = pass ] && ok audit-missing-log-supplied-passes ||
  fail audit-missing-log-supplied-passes "$(cat "$TMP/out")"

# a log of another evaluation beside the dump (or named): not used (nor
# its claim), C3 fails
cp "$TMP/sliding32.pgsd" "$TMP/swap.pgsd"
cp "$TMP/chunked.pgsd.events.json" "$TMP/swap.pgsd.events.json"
expect_rc audit-other-log 1 audit "$TMP/swap.pgsd"
[ "$(statuses "$TMP/out")" = pass,skipped,pass,fail ] &&
  message_of AUDIT_ORDER "$TMP/out" | grep -q "not this dump's: its chain head" &&
  ok audit-other-log-is-order-not-coverage || fail audit-other-log-is-order-not-coverage "$(jq -c .summary.conditions "$TMP/out")"
expect_rc audit-other-log-named 1 "$PGOLF" audit "$TMP/sliding32.pgsd" --tokenizer "$TOK" --val "$DATA" \
  --manifest "$TMP/chunked.pgsd.events.json" --claim "$claim32"
grep -q "fail    AUDIT_ORDER .*not this dump's" "$TMP/out" && grep -q "pass    AUDIT_BYTES" "$TMP/out" &&
  ok audit-other-log-named-fails ||
  fail audit-other-log-named-fails "$(cat "$TMP/out")"

# another T on the command line than the dump's: a coverage finding that
# names both (also when it would keep the same positions)
expect_rc audit-other-t 1 "$PGOLF" audit "$TMP/ttt.pgsd" --tokenizer "$TOK" --val "$DATA" --seq-len 32 --json
[ "$(status_of AUDIT_COVERAGE "$TMP/out")" = fail ] &&
  message_of AUDIT_COVERAGE "$TMP/out" | grep -q "evaluated with sequence length 64 but the split was kept for 32" &&
  ok audit-other-t-says-so || fail audit-other-t-says-so "$(jq -c .summary.conditions "$TMP/out")"
expect_rc audit-same-t-explicit 0 "$PGOLF" audit "$TMP/ttt.pgsd" --tokenizer "$TOK" --val "$DATA" --seq-len 64

# a version 1 dump (the same records, 64-byte header, no T, no head) is
# still read: every target by default, --seq-len for the truncated split
{
  printf PGSD
  printf '\001\000\000\000'
  dd if="$TMP/noprobe.pgsd" bs=1 skip=8 count=24 2>/dev/null
  head -c 32 /dev/zero
  tail -c +97 "$TMP/noprobe.pgsd"
} >"$TMP/v1.pgsd"
expect_rc audit-v1-default-every-target 1 audit "$TMP/v1.pgsd"
message_of AUDIT_COVERAGE "$TMP/out" | grep -q "39 positions never scored (first: 961)" &&
  [ "$(status_of AUDIT_ORDER "$TMP/out")" = skipped ] && ok audit-v1-read-with-old-defaults ||
  fail audit-v1-read-with-old-defaults "$(jq -c .summary.conditions "$TMP/out")"
expect_rc audit-v1-seq-len 0 "$PGOLF" audit "$TMP/v1.pgsd" --tokenizer "$TOK" --val "$DATA" --seq-len 64 \
  --claim "$(jq -r '.val_bpb' "$TMP/ttt.out" | xargs printf '%.6f')" --json
[ "$(statuses "$TMP/out")" = pass,pass,skipped,skipped ] && ok audit-v1-seq-len-passes ||
  fail audit-v1-seq-len-passes "$(jq -c .summary.conditions "$TMP/out")"

# a log beside the dump that cannot be read is an input error naming it
printf '{"predicate": {"eval": {"events": 3}}}' >"$TMP/swap.pgsd.events.json"
expect_err audit-bad-default-log 2 "swap.pgsd.events.json: predicate.eval.events" audit "$TMP/swap.pgsd"
