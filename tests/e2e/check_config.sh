# pgolf check, CONFIG_MISMATCH: the runs a claimed mean averages must be
# runs of one configuration; only settings that change training or
# evaluation count. Logs written by tests/fixtures/submission.sh.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/fixtures/submission.sh"
F=$TMP/f

# mean3 DIR: seeds 1337, 42, 2025 and a claim that is their mean, each
# log printing the extra hyperparameters in HP_<seed>.
mean3() {
  fx_folder "$1" 1.1194 '"seeds": [1337, 42, 2025],'
  for s in 1337 42 2025; do
    case $s in 1337) b=1.11920000 hp=$HP_1337 ;; 42) b=1.11930000 hp=$HP_42 ;; 2025) b=1.11970000 hp=$HP_2025 ;; esac
    FX_SEED=$s FX_HP=$hp FX_FINAL="${BASE:-final_int6_sliding_window_exact} $b 1.8897" fx_log "$1/train_seed$s.log"
  done
}

# Incidental differences (2026-04-10_VarLenAttn, 2026-04-23, 2026-04-29):
# artifact and data paths, run ids, a hypothesis, the seed under another
# name ("s:42", 2026-03-24's ternary logs), durations the run measured
# (PR #2050's inner_ttt_eval_time:546.7s), dates, and keys only one log
# prints.
HP_1337='  artifact_dir: runs/varlen0-new-tuned
  datasets_dir: /root/caseops_data/datasets/fineweb10B_sp8192
  run_id: a1
  s: 1337
  hypothesis: baseline
  inner_ttt_eval_time: 546.7s
  test_date: 2026-04-28
  etlb_clip: 3.0' HP_42='  artifact_dir: runs/varlen1-new-tuned
  datasets_dir: /dev/shm/pgolf_data
  run_id: b2
  s: 42
  hypothesis: try the same again
  inner_ttt_eval_time: 544.1s
  test_date: 2026-04-29' HP_2025='  artifact_dir: /workspace/draft7_runs/seed_2025
  run_id: c3
  s: 2025
  inner_ttt_eval_time: 545.6s
  ttt_hash_buckets: 16384' mean3 "$F/incidental"
fx_verdict config_incidental_passes pass "$F/incidental"
fx_lacks config_incidental_no_warning CONFIG_MISMATCH warning "$F/incidental"

# TTT settings when the claimed metric is not a TTT evaluation
# (2026-04-04: seed 42 alone ran TTT; the claim is the sliding window).
HP_1337='  ttt_enabled: False' HP_42='  ttt_enabled: True' HP_2025='  ttt_enabled: False' mean3 "$F/ttt_off"
fx_verdict config_ttt_unused_passes pass "$F/ttt_off"
# ... but when the claim is the TTT evaluation they count.
HP_1337='  ttt_lora_rank: 80' HP_42='  ttt_lora_rank: 128' HP_2025='  ttt_lora_rank: 80' BASE=quantized_ttt_phased \
  mean3 "$F/ttt_on"
fx_has config_ttt_used_fails CONFIG_MISMATCH error "ttt_lora_rank is 128 in train_seed42.log" "$F/ttt_on"

# A setting of training that differs between averaged runs: an error that
# names the key, the values and the lines. 600 and 600.0 are one value.
HP_1337='  num_layers_x: 11
  warmdown_iters: 3500' HP_42='  num_layers_x: 11
  warmdown_iters: 3500.0' HP_2025='  num_layers_x: 12
  warmdown_iters: 3500' mean3 "$F/layers"
fx_has config_training_key_fails CONFIG_MISMATCH error "averages differ in 1 setting: num_layers_x is 12 in train_seed2025.log:[0-9]+ but 11 in train_seed1337.log:[0-9]+" "$F/layers"
# On the non-record track (accepted for what it shows, not its number): a warning.
fx_has config_nonrecord_warns CONFIG_MISMATCH warning "averages differ in 1 setting: num_layers_x" --track nonrecord "$F/layers"
fx_lacks config_nonrecord_no_error CONFIG_MISMATCH error --track nonrecord "$F/layers"

# One run claimed, the others shown beside it: their differences are a
# warning.
fx_folder "$F/onerun" 1.1192
FX_SEED=1337 FX_LAYERS=11 FX_FINAL="final_int6_sliding_window_exact 1.11920000 1.8897" fx_log "$F/onerun/train.log"
FX_SEED=42 FX_LAYERS=12 FX_FINAL="final_int6_sliding_window_exact 1.11980000 1.8897" fx_log "$F/onerun/train_seed42.log"
fx_has config_evidence_runs_warn CONFIG_MISMATCH warning "num_layers" "$F/onerun"
fx_verdict config_evidence_runs_pass pass "$F/onerun"

# A value the shipped code computes from the seed is each run's own
# (PR #1120's Rascal loader prints batch_stride:47 for seed 42 and 63 for
# seed 300, choose_coprime_stride(num_shards, seed * 41 + 3)); the same
# key from a setting the seed does not reach is an error.
HP_1337='  batch_stride: 47' HP_42='  batch_stride: 63' HP_2025='  batch_stride: 7' mean3 "$F/stride"
cat >>"$F/stride/train_gpt.py" <<'PY'
class Loader:
    def __init__(self, num_shards, seed):
        salt = seed * 41 + 3
        self.batch_shard_stride = choose_coprime_stride(num_shards, salt)
        print(f"shards:{num_shards} batch_stride:{self.batch_shard_stride} ")
PY
fx_verdict config_seed_derived_passes pass "$F/stride"
fx_lacks config_seed_derived_no_warning CONFIG_MISMATCH warning "$F/stride"
cp -r "$F/stride" "$F/stride_set"
sed -i 's/salt = seed \* 41 + 3/salt = int(os.environ.get("STRIDE_SALT", "3"))/' "$F/stride_set/train_gpt.py"
fx_has config_not_seed_derived_fails CONFIG_MISMATCH error "batch_stride is 63 in train_seed42.log" "$F/stride_set"
# The same loader in a self-extracting script: its decoded payload is read.
cp -r "$F/stride" "$F/stride_wrapped"
python3 - "$F/stride/train_gpt.py" >"$F/stride_wrapped/train_gpt.py" <<'PY'
import base64, lzma, sys
blob = base64.b85encode(lzma.compress(open(sys.argv[1], "rb").read())).decode()
print("import lzma as L,base64 as B\nexec(L.decompress(B.b85decode(\"%s\")))" % blob)
PY
fx_verdict config_seed_derived_wrapped_passes pass "$F/stride_wrapped"
