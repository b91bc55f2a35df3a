# pgolf check, EVAL_SELECTION: several evaluations of one trained seed and
# a claim that takes the best of them. Figures of 2026-04-23 (PR #1787,
# merged: every seed re-evaluated with PR #1767's TTT settings) and of
# PR #2121 (seed 42 alone re-evaluated with other TTT settings, the best
# claimed); logs written by tests/fixtures/submission.sh.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/fixtures/submission.sh"
F=$TMP/f

# Accepted: every seed re-evaluated alike, the claim the mean of the new
# evaluations: a warning that names them.
d=$F/pr1787
fx_folder "$d" 1.06335 '"seeds": [42, 0, 1234],'
mkdir -p "$d/ttt_pr1767"
for x in "42 1.06443847 1.06400238" "0 1.06353012 1.06307957" "1234 1.06336388 1.06296654"; do
  set -- $x
  FX_SEED=$1 FX_HP='  ttt_weight_decay: 0.5' FX_FINAL="quantized_ttt_phased $2 2.329" fx_log "$d/train_seed$1.log"
  FX_SEED=$1 FX_STOP= FX_HP='  ttt_weight_decay: 1.0' FX_FINAL="quantized_ttt_phased $3 2.328" \
    fx_log "$d/ttt_pr1767/seed_$1.log"
done
fx_has selection_uniform_warns EVAL_SELECTION warning "seed 42, quantized_ttt_phased: 2 evaluations.*ttt_weight_decay 0\.5 vs 1\.0" "$d"
fx_verdict selection_uniform_passes pass "$d"
fx_json "$d"
[ "$(fx_findings EVAL_SELECTION | wc -l)" -eq 1 ] && ok selection_one_finding || fail selection_one_finding "$(fx_findings EVAL_SELECTION | wc -l) findings"

# Rejected shape: seed 42 evaluated twice (TTT rank 80, prefix 2500 docs;
# then rank 128, prefix 2000), the other seeds once; the claim is seed 42's
# better number.
d=$F/pr2121
fx_folder "$d" 1.06095913 '"seeds": [42],'
for x in "0 1.06162560" "1234 1.06220754" "314 1.06100570" "999 1.06247161"; do
  set -- $x
  FX_SEED=$1 FX_STOP= FX_HP='  ttt_lora_rank: 80
  phased_ttt_prefix_docs: 2500' FX_FINAL="quantized_ttt_phased $2 2.32" fx_log "$d/ttt_seed$1.log"
done
FX_SEED=42 FX_FINAL="diagnostic quantized 1.07393374 2.35" fx_log "$d/train_seed42.log"
FX_SEED=42 FX_STOP= FX_HP='  ttt_lora_rank: 80
  phased_ttt_prefix_docs: 2500' FX_FINAL="quantized_ttt_phased 1.06099764 2.32185611" fx_log "$d/ttt_seed42.log"
FX_SEED=42 FX_STOP= FX_HP='  ttt_lora_rank: 128
  phased_ttt_prefix_docs: 2000' FX_FINAL="quantized_ttt_phased 1.06095913 2.32177184" \
  fx_log "$d/ttt_seed42_rank128_final.log"
fx_has selection_best_of_two_fails EVAL_SELECTION error "seed 42, quantized_ttt_phased: 2 evaluations, the claimed one the best, more than other runs had.*ttt_lora_rank 80 vs 128" "$d"
# Claiming the first evaluation instead (not the best): a warning.
sed -i 's/"val_bpb": 1.06095913/"val_bpb": 1.06099764/' "$d/submission.json"
fx_lacks selection_not_best_no_error EVAL_SELECTION error "$d"
fx_has selection_not_best_warns EVAL_SELECTION warning "2 evaluations" "$d"

# A sweep: one log evaluating its model three times, the claim the best.
d=$F/sweep
fx_folder "$d" 1.11290586
FX_SEED=314 FX_FINAL="final_int6_sliding_window 1.11291713 1.88;final_int6_sliding_window 1.11290938 1.88;final_int6_sliding_window 1.11290586 1.88" \
  fx_log "$d/train_seed314.log"
fx_has selection_sweep_fails EVAL_SELECTION error "3 evaluations, the claimed one the best" "$d"
# The non-record track accepts for what a submission shows, not its number.
fx_has selection_sweep_nonrecord_warns EVAL_SELECTION warning "3 evaluations, the claimed one the best" --track nonrecord "$d"
fx_lacks selection_sweep_nonrecord_no_error EVAL_SELECTION error --track nonrecord "$d"

# Not re-evaluations: three runs concatenated in one log (each restarts
# its steps; 2026-03-19_MixedQuant_Int6Int8_SlidingWindow's train.log),
# and one score printed twice.
d=$F/concat
fx_folder "$d" 1.16301431
FX_SEED=1337 FX_FINAL="final_sliding_window_eval_exact 1.19763674 2.02" fx_log "$d/a"
FX_SEED=1337 FX_FINAL="final_sliding_window_eval_exact 1.20840424 2.04" fx_log "$d/b"
FX_SEED=1337 FX_FINAL="final_sliding_window_eval_exact 1.16301431 1.96;final_sliding_window_eval_exact 1.16301431 1.96" fx_log "$d/c"
cat "$d/a" "$d/b" "$d/c" >"$d/train.log"
rm "$d/a" "$d/b" "$d/c"
fx_lacks selection_concatenated_runs EVAL_SELECTION warning "$d"
fx_verdict selection_concatenated_passes pass "$d"
