#!/bin/sh
# pgolf stats with run manifests and submission folders as inputs: the
# values and tokens per byte (val_bpb ln 2 / val_loss: bits per byte over
# bits per token) come from the
# files, and the test equals the one on the same numbers given by hand.
. "$(dirname "$0")/lib.sh"
repo=$(pwd)

cd "$TMP" || exit 1
mkdir data
{ printf '\210\330\064\001\001\000\000\000\004\000\000\000'; head -c 1012 /dev/zero; printf '\001\000\002\000\003\000\004\000'; } \
  >data/fineweb_val_000000.bin
printf '{"preset": "tiny"}\n' >config.json
printf '1 6.5\n' >losses.txt

# run NAME SEED VAL_LOSS VAL_BPB
run() {
  "$PGOLF" manifest create --config config.json --tokenizer "$repo/data/tokenizers/fineweb_1024_bpe.model" \
    --data data --seed "$2" --losses losses.txt -o "$1.raw" >/dev/null &&
    jq --argjson l "$3" --argjson b "$4" '.predicate.evaluation = {val_loss: $l, val_bpb: $b}' "$1.raw" >"$1.json"
}
# tokens per byte 0.4 (sp1024-like): val_loss = val_bpb * ln 2 / 0.4
run n1 1 1.87026 1.07928348 && run n2 2 1.87144 1.07996676 && run n3 3 1.87193 1.08024795 &&
  run r1 4 1.87287 1.08079 && run r2 5 1.87328 1.08103 && run r3 6 1.87354 1.08118 || fail stats_inputs_setup "manifest create failed"

json_field() { sed -n "s/^ *\"$1\": \(.*\)$/\1/p" "$TMP/out" | sed 's/,$//'; }

# Paths are one per option (a comma-joined list is no file).
expect_err stats_paths_one_per_option 2 "no such manifest" "$PGOLF" stats --new n1.json --new n2.json --record r1.json,r2.json --json
expect_rc stats_manifests_rc 1 "$PGOLF" stats --new n1.json --new n2.json --new n3.json \
  --record r1.json --record r2.json --record r3.json --json
tpb=$(json_field tokens_per_byte)
from=$(json_field tokens_per_byte_from)
p_files=$(json_field p_margin)
want_tpb=$(awk 'BEGIN { l = log(2); printf "%.15f", (1.07928348 * l / 1.87026 + 1.07996676 * l / 1.87144 + 1.08024795 * l / 1.87193) / 3 }')
if awk -v a="$tpb" -v b="$want_tpb" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d < 1e-12) }' && [ "$from" = '"new"' ]; then
  ok stats_manifest_tpb; else fail stats_manifest_tpb "tokens_per_byte $tpb from $from, wanted $want_tpb"; fi
expect_rc stats_numbers_rc 1 "$PGOLF" stats --new 1.07928348,1.07996676,1.08024795 --record 1.08079,1.08103,1.08118 \
  --tokens-per-byte "$tpb" --json
p_numbers=$(json_field p_margin)
if [ -n "$p_files" ] && [ "$p_files" = "$p_numbers" ]; then ok stats_manifests_equal_numbers; else
  fail stats_manifests_equal_numbers "p from files $p_files, from numbers $p_numbers"; fi

# --metric nats takes val_loss.
expect_rc stats_manifest_nats 1 "$PGOLF" stats --new n1.json --new n2.json --new n3.json --target 1.873 --metric nats --json
mean=$(json_field mean_new)
if awk -v m="$mean" 'BEGIN { d = m - (1.87026 + 1.87144 + 1.87193) / 3; if (d < 0) d = -d; exit !(m != "" && d < 1e-12) }'; then
  ok stats_manifest_val_loss; else fail stats_manifest_val_loss "mean_new $mean"; fi

# A submission folder: one value per log with a final metric.
mkdir sub
for s in 11 12 13; do
  { printf 'seed:%s\n' "$s"; printf 'step:10/10 train_loss:3.0000 train_time:5000ms step_avg:500.00ms\n'
    printf 'final_int8_zlib_roundtrip_exact val_loss:2.0000000%s val_bpb:1.0800000%s\n' "${s#1}" "${s#1}"; } >"sub/train_seed$s.log"
done
expect_rc stats_folder_rc 1 "$PGOLF" stats --new sub --record r1.json --record r2.json --record r3.json --json
n=$(json_field n_new)
mean=$(json_field mean_new)
if [ "$n" = 3 ] && awk -v m="$mean" 'BEGIN { d = m - 1.08000002; if (d < 0) d = -d; exit !(d < 1e-12) }'; then
  ok stats_folder_values; else fail stats_folder_values "n_new $n mean_new $mean"; fi

# A folder is one value per run, not per file: a copy of seed 11's log and
# a separate evaluation log of seed 11 (its TTT score, printed after the
# roundtrip) leave three runs, and seed 11's value is its last final
# metric in file order (the evaluation log after the training log).
cp sub/train_seed11.log sub/copy_seed11.log
{ printf 'seed:11
'; printf 'final_int8_zlib_roundtrip_exact val_loss:2.00000009 val_bpb:1.07000009
'; } >sub/ttt_seed11.log
expect_rc stats_folder_runs_rc 1 "$PGOLF" stats --new sub --record r1.json --record r2.json --record r3.json --json
n=$(json_field n_new)
mean=$(json_field mean_new)
if [ "$n" = 3 ] && awk -v m="$mean" 'BEGIN { d = m - (1.07000009 + 1.08000002 + 1.08000003) / 3; if (d < 0) d = -d; exit !(d < 1e-12) }'; then
  ok stats_folder_one_value_per_run; else fail stats_folder_one_value_per_run "n_new $n mean_new $mean"; fi
rm sub/copy_seed11.log sub/ttt_seed11.log
# A folder with no final metric, a missing file, a manifest without evaluation.
mkdir empty
printf 'step:10/10 train_loss:3.0000 train_time:5000ms step_avg:500.00ms\n' >empty/train.log
expect_err stats_folder_empty 2 "no training log with a final" "$PGOLF" stats --new empty --record 1.08,1.09 --margin-nats 0
expect_err stats_missing_file 2 "no such manifest or submission folder" "$PGOLF" stats --new ./nope.json --record 1.08,1.09 --margin-nats 0
expect_err stats_no_evaluation 2 "evaluation.val_bpb" "$PGOLF" stats --new n1.raw --record 1.08,1.09 --margin-nats 0
# Numbers alone still need --tokens-per-byte for a nonzero margin in bpb.
expect_err stats_numbers_need_tpb 2 "tokens-per-byte.*required" "$PGOLF" stats --new 1.08,1.09 --record 1.1,1.2
