# pgolf check: the data a log says it read against the published data
# (TRAIN_VAL_OVERLAP, VAL_SPLIT_MISMATCH), with the lines real logs print:
# the baseline logger's `train_loader:dataset:fineweb10B_sp1024
# train_shards:80` / `val_loader:shards pattern=... tokens:62021632`, and
# later scripts' `train_shards: 1499` / `val_tokens: 47851520`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"
folder() {
  d=$F/$1
  rm -rf "$d"
  mkdir -p "$d"
  printf 'print("train")\n' >"$d/train_gpt.py"
  mini_log "$d/train_seed1.log" 1 15000000 16
  echo "$d"
}

# The published sp1024 data: 80 of its 195 shards, the whole validation split
# cut to 1,024-token sequences (62,021,845 targets -> 62,021,632).
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:80
val_loader:shards pattern=./data/datasets/fineweb10B_sp1024/fineweb_val_*.bin tokens:62021632' d=$(folder clean)
lacks data_clean_no_overlap TRAIN_VAL_OVERLAP "$d"
lacks data_clean_no_split VAL_SPLIT_MISMATCH "$d"
# Sequences of 65,536 tokens leave 24,789 out: still the whole split.
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:195
val_loader:shards pattern=/data/fineweb10B_sp1024/fineweb_val_*.bin tokens:61997056' d=$(folder long_seq)
lacks data_long_sequences_ok VAL_SPLIT_MISMATCH "$d"

# The maintainers' fingerprint of overlapping data (CaseOps logs, whose
# dataset pgolf has no published figures for): an error.
DATA='train_shards: 1499
val_tokens: 47851520' d=$(folder fingerprint)
has data_fingerprint_errors TRAIN_VAL_OVERLAP error "train_shards: 1499 is the maintainers' fingerprint.*issue #2127" "$d"
DATA='train_shards: 80
val_tokens: 47851520' d=$(folder caseops_clean)
lacks data_caseops_80_ok TRAIN_VAL_OVERLAP "$d"

# More shards than the published sp1024 set has: prepared locally (warning).
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:240
val_loader:shards pattern=./data/datasets/fineweb10B_sp1024/fineweb_val_*.bin tokens:62021632' d=$(folder local_prep)
has data_local_prep_warns TRAIN_VAL_OVERLAP warning "240 training shards of fineweb10B_sp1024, but the published set has 195" "$d"

# Scored on part of the validation split: an error; a longer split (the
# first baseline's earlier export, 63,779,840 tokens): a warning.
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:80
val_loader:shards pattern=./data/datasets/fineweb10B_sp1024/fineweb_val_*.bin tokens:1048576' d=$(folder subset)
has data_subset_errors VAL_SPLIT_MISMATCH error "1048576 validation tokens, 1.69% of the published fineweb10B_sp1024 split" "$d"
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:25
val_loader:shards pattern=/root/data/fineweb10B_sp1024/fineweb_val_*.bin tokens:63779840' d=$(folder earlier_export)
has data_earlier_export_warns VAL_SPLIT_MISMATCH warning "63779840 validation tokens, more than the published" "$d"
# The dataset named only by the hyperparameters.
DATA='  data_path: ./data/datasets/fineweb10B_sp1024
train_shards: 80
val_tokens: 524288' d=$(folder hparam_dataset)
has data_dataset_from_hparams VAL_SPLIT_MISMATCH error "524288 validation tokens" "$d"
# Lines inside the script copy a log begins with are not what the run read.
printf 'import os\nprint("train_shards: 1499")\ntrain_shards: 1499\n' >"$TMP/src.py"
DATA='train_shards: 80' d=$(folder in_source)
mini_log "$d/train_seed1.log" 1 15000000 16 "$TMP/src.py"
lacks data_source_lines_ignored TRAIN_VAL_OVERLAP "$d"
# On the non-record track a subset is a warning: it is not accepted for its number.
DATA='train_loader:dataset:fineweb10B_sp1024 train_shards:80
val_loader:shards pattern=./data/datasets/fineweb10B_sp1024/fineweb_val_*.bin tokens:1048576' d=$(folder subset_nonrecord)
has data_subset_nonrecord_warns VAL_SPLIT_MISMATCH warning "1048576 validation tokens" "$d" --track nonrecord
