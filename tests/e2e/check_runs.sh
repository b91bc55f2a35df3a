# pgolf check: runs, not files, and claims judged against runs
# (CLAIM_MISMATCH, SEED_DUPLICATE, NO_FINAL_METRIC). The figures are those
# of real record folders; the logs are written by tests/fixtures/submission.sh.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/fixtures/submission.sh"
F=$TMP/f
fin() { printf 'final_int8_zlib_roundtrip_exact %s 2.03600000' "$1"; }
# ship_script DIR: its train_gpt.py grown to the 47,642 bytes the logs print.
ship_script() {
  { printf '#'; head -c 47640 /dev/zero | tr '\0' x; printf '\n'; } >>"$1/train_gpt.py"
  head -c 47642 "$1/train_gpt.py" >"$1/t" && mv "$1/t" "$1/train_gpt.py"
}

# --- Claims ---------------------------------------------------------------
# 2026-03-18_LongContextSeq2048: the claim is seed 1337's 1.20576485, the
# two other seeds are evidence; their mean is 1.20636623. A warning that
# gives both numbers.
d=$F/longctx
fx_folder "$d" 1.20576485
FX_SEED=1337 FX_FINAL=$(fin 1.20576485) fx_log "$d/train.log"
FX_SEED=1338 FX_FINAL=$(fin 1.20617460) fx_log "$d/train_seed1338.log"
FX_SEED=1339 FX_FINAL=$(fin 1.20715923) fx_log "$d/train_seed1339.log"
fx_has claim_one_run_warns CLAIM_MISMATCH warning "1\.20576485 .*one run \(seed 1337.*averages 1\.20636623" "$d"
fx_verdict claim_one_run_passes pass "$d"
# The mean of the three is a claim with no finding.
sed -i 's/"val_bpb": 1.20576485/"val_bpb": 1.20636623/' "$d/submission.json"
fx_lacks claim_mean_clean CLAIM_MISMATCH warning "$d"
# A number in no log and not the mean: an error.
sed -i 's/"val_bpb": 1.20636623/"val_bpb": 1.2050/' "$d/submission.json"
fx_has claim_unsupported_fails CLAIM_MISMATCH error "1\.2050 is in no log at 4 decimals.*mean of 3 runs is 1\.20636623" "$d"
# Within 1e-4 of the mean: a slip in the arithmetic (PR #1883: 1.067773
# against 1.06777029), a warning; 2e-4 away is no slip.
sed -i 's/"val_bpb": 1.2050/"val_bpb": 1.206369/' "$d/submission.json"
fx_has claim_mean_slip_warns CLAIM_MISMATCH warning "1\.206369 is not quite the mean of the claimed runs: the mean of 3 runs is 1\.20636623 \(2\.8e-06 apart" "$d"
fx_lacks claim_mean_slip_no_error CLAIM_MISMATCH error "$d"
sed -i 's/"val_bpb": 1.206369/"val_bpb": 1.206566/' "$d/submission.json"
fx_has claim_mean_past_slip_fails CLAIM_MISMATCH error "1\.206566 is in no log" "$d"
# The same with per-seed claims that each log prints (PR #1784: 1.07080923
# against their mean 1.07080613): the warning names the claims' mean.
sed -i 's/"val_bpb": 1.206566/"seed_results": {"1337": 1.20576485, "1338": 1.2061746, "1339": 1.20715923}, "val_bpb": 1.206369/' "$d/submission.json"
fx_has claim_seed_mean_slip_warns CLAIM_MISMATCH warning "1\.206369 is not quite the mean of the 3 per-seed claims, each of which its log prints: their mean is 1\.20636623" "$d"
fx_lacks claim_seed_mean_slip_no_error CLAIM_MISMATCH error "$d"

# 2026-03-19_MLP3x_QAT_Int6_SlidingWindow (PR #86, the maintainers could
# not reproduce it): the claim 1.15015359 is in no log, whose final metric
# is 1.16660881, and two listed seeds have no log. An error.
d=$F/mlp3x
fx_folder "$d" 1.15015359 '"seeds": [1337, 42, 123],'
FX_SEED=1337 FX_FINAL=$(fin 1.16660881) fx_log "$d/train.log"
fx_has claim_pr86_fails CLAIM_MISMATCH error "1\.15015359 is in no log.*1\.16660881.*without a log: 42, 123" "$d"

# A claim that is a pre-quantization line: an error that says so.
d=$F/prequant
fx_folder "$d" 1.2100
FX_FINAL="pre_quantization_post_ema 1.21000000 2.05;$(fin 1.22436570)" fx_log "$d/train.log"
fx_has claim_prequant_fails CLAIM_MISMATCH error "pre-quantization line" "$d"

# Per-seed claims: "1.06400" is a claim to 5 decimals (it reads back as
# 1.064); seed 42's training log prints 1.06443847 and its evaluation log
# 1.06400238 (2026-04-23: train_seed42.log and ttt_pr1767/seed_42.log).
d=$F/perseed
fx_folder "$d" 1.06335 '"seeds": [42, 0, 1234], "seed_results": {"42": {"val_bpb": 1.06400}, "0": {"val_bpb": 1.06308}, "1234": {"val_bpb": 1.06297}},'
for x in "42 1.06443847 1.06400238" "0 1.06353012 1.06307957" "1234 1.06336388 1.06296654"; do
  set -- $x
  mkdir -p "$d/ttt"
  FX_SEED=$1 FX_FINAL="quantized_ttt_phased $2 2.329" fx_log "$d/train_seed$1.log"
  FX_SEED=$1 FX_STOP= FX_FINAL="quantized_ttt_phased $3 2.328" fx_log "$d/ttt/seed_$1.log"
done
fx_lacks claim_written_decimals CLAIM_MISMATCH error "$d"
sed -i 's/"42": {"val_bpb": 1.06400}/"42": {"val_bpb": 1.06420}/' "$d/submission.json"
fx_has claim_per_seed_fails CLAIM_MISMATCH error "seed 42: val_bpb 1\.06420 is not a final metric" "$d"

# val_loss and byte counts no log prints: warnings (val_bpb is the score,
# sizes are SIZE_OVER_LIMIT's). 2026-03-20_10L_Int5MLP_MuonWD04_SWA50
# wrote its bpb mean 1.14276 in val_loss.
d=$F/loss
fx_folder "$d" 1.14276 '"val_loss": 1.14276, "bytes_total": 15900000,'
FX_SEED=1337 FX_FINAL=$(fin 1.14298416) fx_log "$d/train_seed1337.log"
FX_SEED=42 FX_FINAL=$(fin 1.14260369) fx_log "$d/train_seed42.log"
FX_SEED=2024 FX_FINAL=$(fin 1.14271194) fx_log "$d/train_seed2024.log"
fx_has claim_loss_is_bpb_warns CLAIM_MISMATCH warning "val_loss 1\.14276 is a val_bpb value" "$d"
fx_has claim_bytes_warns CLAIM_MISMATCH warning "bytes_total 15900000 is not a total any log prints; the logs print 15863489" "$d"
fx_verdict claim_loss_bytes_pass pass "$d"

# --- Runs -----------------------------------------------------------------
# A training log with its evaluation in another file of the same seed
# (train_seed0.log + ttt_seed0.log): one run, complete.
d=$F/split
fx_folder "$d" 1.06159742 '"seeds": [42, 0, 1234],'
for x in "42 1.06099764" "0 1.06162560" "1234 1.06216902"; do
  set -- $x
  FX_SEED=$1 FX_FINAL="diagnostic quantized 1.07393374 2.35" fx_log "$d/train_seed$1.log"
  FX_SEED=$1 FX_STOP= FX_FINAL="quantized_ttt_phased $2 2.32" fx_log "$d/ttt_seed$1.log"
done
fx_verdict runs_split_eval_passes pass "$d"
fx_lacks runs_split_no_final_metric NO_FINAL_METRIC warning "$d"
fx_lacks runs_split_no_duplicate SEED_DUPLICATE warning "$d"
# A listed seed whose run has no final metric anywhere: an error.
rm "$d/ttt_seed0.log"
fx_has runs_listed_run_unscored NO_FINAL_METRIC error "train_seed0.log" "$d"

# A byte-identical copy (2026-03-20_11L_XSA4: train.log is
# train_seed1337.log): one run; the claim is the mean of the three seeds.
d=$F/copy
fx_folder "$d" 1.12801921
FX_SEED=1337 FX_FINAL="final_int6_sliding_window_exact 1.12707468 1.90" fx_log "$d/train_seed1337.log"
cp "$d/train_seed1337.log" "$d/train.log"
FX_SEED=2025 FX_FINAL="final_int6_sliding_window_exact 1.12835808 1.90" fx_log "$d/train_seed2025.log"
FX_SEED=42 FX_FINAL="final_int6_sliding_window_exact 1.12862486 1.90" fx_log "$d/train_seed42.log"
fx_verdict runs_copy_passes pass "$d"
fx_lacks runs_copy_no_duplicate SEED_DUPLICATE warning "$d"

# Reruns (2026-04-29_SmearGateBOSFix_3Seed_1.06141): each seed's original
# and a compliance rerun with GPTQ_RESERVE_SECONDS=8; the claim 1.06145 is
# the originals' mean.
d=$F/rerun
fx_folder "$d" 1.06145 '"seeds": [42, 314, 1234],'
for x in "42 1.06128183 1.06083288" "314 1.06086831 1.06090748" "1234 1.06220261 1.06248776"; do
  set -- $x
  FX_SEED=$1 FX_HP='  gptq_reserve_seconds: 0.5' FX_FINAL="quantized_ttt_phased $2 2.32" \
    fx_log "$d/train_seed$1_original.log"
  FX_SEED=$1 FX_HP='  gptq_reserve_seconds: 8.0' FX_STOP=592054 FX_FINAL="quantized_ttt_phased $3 2.32" \
    fx_log "$d/train_seed$1_rerun_gptq8s.log"
done
fx_verdict runs_rerun_passes pass "$d"
fx_lacks runs_rerun_no_duplicate SEED_DUPLICATE warning "$d"
fx_lacks runs_rerun_config CONFIG_MISMATCH warning "$d"

# A claimed mean that counts one seed twice (two trainings that both
# print seed 42): an error naming them.
d=$F/twice
fx_folder "$d" 1.2241219
FX_SEED=1337 FX_FINAL=$(fin 1.22436570) fx_log "$d/train_seed1337.log"
FX_SEED=42 FX_FINAL=$(fin 1.22500000) fx_log "$d/train_seed42.log"
FX_SEED=42 FX_FINAL=$(fin 1.22300000) fx_log "$d/train_seed2025.log"
fx_has runs_seed_twice_fails SEED_DUPLICATE error "counting a seed twice.*seed 42 \(train_seed2025.log" "$d"
fx_lacks runs_seed_twice_one_cause CLAIM_MISMATCH error "$d"

# A seed's claim in the one log, which gives no seed (PR #534's train.log
# holds seed 1337's 1.18041917 and prints no seed): linked, with a warning
# that only the claim says whose run it is.
d=$F/unseeded
fx_folder "$d" 1.18041917 '"seed_results": {"1337": {"val_bpb": 1.18041917}},'
FX_FINAL=$(fin 1.18041917) fx_log "$d/train.log"
sed -i '/^  seed: /d' "$d/train.log"
fx_has claim_unseeded_log_warns CLAIM_MISMATCH warning "seed 1337: val_bpb is the final metric of train.log .*gives no seed" "$d"
fx_lacks claim_unseeded_log_no_error CLAIM_MISMATCH error "$d"
# A log that prints another seed is no such evidence.
FX_SEED=42 FX_FINAL=$(fin 1.18041917) fx_log "$d/train.log"
fx_has claim_other_seed_log_fails CLAIM_MISMATCH error "seed 1337: val_bpb 1\.18041917 is not a final metric" "$d"

# A claim no log supports still rests on the seeds submission.json lists:
# a run of another seed beside them (PR #2018's ap_pod_seed0 beside its
# listed 42, 1337 and 2026) does not back it, so its excess is a warning.
d=$F/unlinked
fx_folder "$d" 1.1111 '"seeds": [1337, 42, 2025],'
ship_script "$d"
for s in 1337 42 2025; do FX_SEED=$s FX_FINAL=$(fin 1.2243657) fx_log "$d/train_seed$s.log"; done
FX_SEED=7 FX_MODEL=15960000 FX_FINAL=$(fin 1.22100000) fx_log "$d/train_seed7.log"
fx_has runs_unlinked_other_seed_warns SIZE_OVER_LIMIT warning "do not back the claim.*train_seed7.log" "$d"
fx_lacks runs_unlinked_other_seed_no_error SIZE_OVER_LIMIT error "$d"
# Without listed seeds every run backs it.
sed -i 's/"seeds": \[1337, 42, 2025\],//' "$d/submission.json"
fx_has runs_unlinked_all_back SIZE_OVER_LIMIT error "train_seed7.log" "$d"

# Sizes: a rerun beside the claimed runs whose artifact is over the limit
# is a warning (its artifact is not the one submitted); the claimed runs
# over it are one error listing each log.
d=$F/size
fx_folder "$d" 1.2241219
ship_script "$d"
FX_SEED=1337 FX_FINAL=$(fin 1.22436570) fx_log "$d/train_seed1337.log"
FX_SEED=42 FX_FINAL=$(fin 1.22500000) fx_log "$d/train_seed42.log"
FX_SEED=2025 FX_FINAL=$(fin 1.22300000) fx_log "$d/train_seed2025.log"
FX_SEED=42 FX_MODEL=15960000 FX_FINAL=$(fin 1.22100000) fx_log "$d/train_seed42_rerun.log"
fx_has runs_size_unclaimed_warns SIZE_OVER_LIMIT warning "do not back the claim.*16007642 > 16,000,000 \(train_seed42_rerun.log" "$d"
fx_verdict runs_size_unclaimed_passes pass "$d"
for s in 1337 42 2025; do sed -i 's/^Serialized model int8+zlib: .*/Serialized model int8+zlib: 15960000 bytes/' "$d/train_seed$s.log"; done
fx_json "$d"
n=$(fx_findings SIZE_OVER_LIMIT | grep -c '^error	counted code (train_gpt.py): 47642 .*train_seed1337.log.*train_seed2025.log.*train_seed42.log')
[ "$n" -eq 1 ] && ok runs_size_one_finding || fail runs_size_one_finding "$(fx_findings SIZE_OVER_LIMIT | cut -c1-300)"

# --- Several runs in one file -----------------------------------------------
# PR #1722's train_v3_3seeds.log: seeds 42, 314 and 999 one after the other,
# each printing its seed, steps and final metric; the claim 0.65802 is
# their mean (0.65801947). Read as one log it was one run of seed 42 whose
# score was seed 999's, and the claim "in no log".
d=$F/threeinone
fx_folder "$d" 0.65802
ship_script "$d"
for x in "42 0.65604470" "314 0.65955212" "999 0.65846160"; do
  set -- $x
  FX_SEED=$1 FX_FINAL=$(fin $2) fx_log "$d/part"
  cat "$d/part" >>"$d/train_v3_3seeds.log"
done
rm "$d/part"
fx_lacks parts_three_seeds_mean CLAIM_MISMATCH error "$d"
fx_lacks parts_three_seeds_counted TOO_FEW_SEEDS warning "$d"
fx_json "$d"
python3 - "$TMP/out" <<'PY' && ok parts_three_seeds_lines || fail parts_three_seeds_lines "$(head -c 600 "$TMP/out")"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
logs = [(l["seed"], l["lines"], l["val_bpb"]) for l in s["logs"]]
assert [x[0] for x in logs] == [42, 314, 999], logs
assert logs[0][1][0] == 1 and logs[1][1][0] == logs[0][1][1] + 1 and logs[2][1][0] == logs[1][1][1] + 1, logs
assert [x[2] for x in logs] == [0.6560447, 0.65955212, 0.6584616], logs
assert len(s["runs"]) == 3, s["runs"]
PY
# The mean a list names each run by its line.
sed -i 's/"val_bpb": 0.65802/"val_bpb": 0.6590/' "$d/submission.json"
fx_has parts_mean_names_lines CLAIM_MISMATCH error "mean of 3 runs is 0\.65801947 \(train_v3_3seeds\.log:[0-9]+ 0\.65604470, train_v3_3seeds\.log:[0-9]+ 0\.65955212" "$d"

# PR #1662's eval_seeds42_314.log: two evaluations, each printing the
# evaluating process's seed 42; the file's name says whose artifacts they
# scored. With eval_seed1337.log the claim 1.08624746 is the mean of three.
d=$F/evalnamed
fx_folder "$d" 1.08624746 '"seeds": [314, 1337, 42],'
ship_script "$d"
for s in 42 314 1337; do FX_SEED=$s FX_FINAL="pre_quantization_post_ema 1.0850 2.80" fx_log "$d/train_seed$s.log"; done
FX_SEED=1337 FX_STOP= FX_FINAL="final_int6_sliding_window_exact 1.08582287 2.80430163" fx_log "$d/eval_seed1337.log"
FX_SEED=42 FX_STOP= FX_FINAL="final_int6_sliding_window_exact 1.08868098 2.81168312" fx_log "$d/eval_seeds42_314.log"
FX_SEED=42 FX_STOP= FX_FINAL="final_int6_sliding_window_exact 1.08423854 2.80020987" fx_log "$d/part"
cat "$d/part" >>"$d/eval_seeds42_314.log" && rm "$d/part"
fx_verdict parts_eval_named_seeds_pass pass "$d"
fx_lacks parts_eval_named_no_missing NO_FINAL_METRIC error "$d"
# Named for three seeds, it holds two evaluations: the name says nothing
# about which is whose, and seed 314's run has no final metric.
mv "$d/eval_seeds42_314.log" "$d/eval_seeds42_314_7.log"
fx_has parts_eval_name_count_differs NO_FINAL_METRIC error "train_seed314.log" "$d"

# 2026-03-19_MixedQuant_Int6Int8_SlidingWindow (accepted): train.log holds
# three runs of seed 1337, each after a copy of the script that ran it;
# the claim is the last one's, whose copy is the shipped train_gpt.py, and
# the first two were written by an earlier version. Read as one log, the
# first copy stood for all three: a false "different code" error.
d=$F/reruns
fx_folder "$d" 1.16301431
{
  printf 'import os\nimport sys\n'
  i=0
  while [ $i -lt 24 ]; do printf 'def f%d(x):\n    return x + %d\n' $i $i; i=$((i + 1)); done
  printf 'if __name__ == "__main__":\n    f0(1)\n'
} >"$d/train_gpt.py"
for x in "1.19763674 -" "1.20840424 -" "1.16301431 +"; do
  set -- $x
  { sed "s/return x + 7$/return x $2 7/" "$d/train_gpt.py"; printf '%0100d\n' 0 | tr 0 =; } >>"$d/train.log"
  FX_CODE=$(wc -c <"$d/train_gpt.py") FX_FINAL=$(fin $1) fx_log "$d/part"
  cat "$d/part" >>"$d/train.log" && rm "$d/part"
done
fx_lacks parts_rerun_last_copy_no_error LOG_CODE_MISMATCH error "$d"
fx_has parts_rerun_earlier_copy_warns LOG_CODE_MISMATCH warning "its script \(lines 1-52,.*log line 18 .return x-7." "$d"
fx_verdict parts_rerun_passes pass "$d"
# The claim on an earlier attempt rests on its copy: an error at its line.
sed -i 's/"val_bpb": 1.16301431/"val_bpb": 1.19763674/' "$d/submission.json"
fx_has parts_rerun_claimed_attempt_fails LOG_CODE_MISMATCH error "its script \(lines 1-" "$d"

# PR #555's train_seed1337.log: an attempt whose artifact is over the limit
# (16,155,712 bytes), then a rerun of the seed under it; the claim's
# score is the attempt's. The size that backs the claim is the attempt's.
d=$F/attempt
fx_folder "$d" 1.09191418 '"seeds": [1337],'
ship_script "$d"
FX_MODEL=16108070 FX_FINAL=$(fin 1.09191418) fx_log "$d/train_seed1337.log"
FX_MODEL=15906838 FX_FINAL=$(fin 1.09231664) fx_log "$d/part"
cat "$d/part" >>"$d/train_seed1337.log" && rm "$d/part"
fx_has parts_attempt_size_fails SIZE_OVER_LIMIT error "16155712 > 16,000,000 \(train_seed1337.log:[0-9]+\)" "$d"
# Claiming the rerun's score, the attempt's size is a warning.
sed -i 's/"val_bpb": 1.09191418/"val_bpb": 1.09231664/' "$d/submission.json"
fx_has parts_attempt_size_warns SIZE_OVER_LIMIT warning "do not back the claim" "$d"
fx_lacks parts_attempt_size_no_error SIZE_OVER_LIMIT error "$d"

# --- Evaluations further down ------------------------------------------------
# PR #2018: train_seed42.log etc. at the top, and the scores claimed for each
# seed in token_only_fast_evals/seed42/run_tokenonly_fast.log, an evaluation
# two folders down. Such a log, which trains nothing and whose path names a
# seed, joins that seed's run; the claim then links.
d=$F/deepeval
fx_folder "$d" 1.04616727 '"seeds": [42], "seed_results": {"42": {"val_bpb": 1.04616727}},'
ship_script "$d"
FX_SEED=42 FX_FINAL="quantized_ttt_phased 1.04510781 2.2871" fx_log "$d/train_seed42.log"
mkdir -p "$d/token_only_fast_evals/seed42"
FX_SEED=42 FX_STOP= FX_FINAL="quantized_ttt_phased 1.04616727 2.2894" fx_log "$d/token_only_fast_evals/seed42/run_tokenonly_fast.log"
fx_lacks deep_eval_links CLAIM_MISMATCH error "$d"
fx_has deep_eval_selection_warns EVAL_SELECTION warning "seed 42" "$d"
# A training further down is another experiment's: not read, not a run.
mkdir -p "$d/ablations/seed7"
FX_SEED=7 FX_MODEL=15990000 FX_FINAL=$(fin 1.30000000) fx_log "$d/ablations/seed7/train.log"
fx_lacks deep_training_unread SIZE_OVER_LIMIT warning "$d"
fx_json "$d"
grep -q '"seed": 7' "$TMP/out" && fail deep_training_no_run "a run of seed 7" || ok deep_training_no_run
# An evaluation whose path names no seed says nothing of whose run it is.
mv "$d/token_only_fast_evals/seed42" "$d/token_only_fast_evals/latest"
fx_has deep_eval_unseeded_unread CLAIM_MISMATCH error "seed 42: val_bpb 1\.04616727 is not a final metric" "$d"

# A part that prints no seed, in a file whose name gives none, goes on with
# the run of the part before it: a training that prints seed 42 and only a
# pre-quantization score, then an evaluation session of its artifact
# (PR #1812's shape) are one run of seed 42 with a final metric.
d=$F/inherit
fx_folder "$d" 1.2230
ship_script "$d"
FX_SEED=42 FX_FINAL="pre_quantization_post_ema 1.2200 2.05" fx_log "$d/train.log"
printf 'Hyperparameters:\n  ttt_lr: 0.005\nfinal_int6_sliding_window_exact val_loss:2.06 val_bpb:1.22300000 eval_time:90000ms\n' >>"$d/train.log"
fx_lacks parts_inherit_final NO_FINAL_METRIC error "$d"
fx_has parts_inherit_one_run TOO_FEW_SEEDS warning "1 run with a final metric \(seed 42\)" "$d"

# With a claim in no log, the runs back it, but of two attempts at a seed in
# one file only the last (PR #1002's train_seed1.log: an attempt over the
# limit, then a rerun): the attempt's size is a warning.
d=$F/attempt_unlinked
fx_folder "$d" 1.1594
ship_script "$d"
FX_SEED=1 FX_MODEL=16108070 FX_FINAL=$(fin 1.17892196) fx_log "$d/train_seed1.log"
FX_SEED=1 FX_MODEL=15906838 FX_FINAL=$(fin 1.17029157) fx_log "$d/part"
cat "$d/part" >>"$d/train_seed1.log" && rm "$d/part"
fx_has parts_unlinked_attempt_warns SIZE_OVER_LIMIT warning "do not back the claim" "$d"
fx_lacks parts_unlinked_attempt_no_error SIZE_OVER_LIMIT error "$d"
