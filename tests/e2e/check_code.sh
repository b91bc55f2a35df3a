# pgolf check: which code counts (SIZE_OVER_LIMIT with the counted code)
# and whether the logs were written by the shipped code
# (LOG_CODE_MISMATCH). Folders are generated here; the figures are those
# of real records (a 15,516-byte self-extracting train_gpt.py beside a
# 58,367-byte readable copy; a module of 8,624 bytes and a C++ source of
# 18,406 bytes loaded under NGRAM_TILT_ENABLED=1).
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/check_helpers"

F=$TMP/f
mkdir -p "$F"

# --- A: an imported module and a C++ folder, under a flag the README sets.
# The entry is a self-extracting raw-LZMA2/base85 script (380 bytes) whose
# payload reads NGRAM_TILT_ENABLED and imports ngram_tilt when it is on.
A=$F/ngram
mkdir -p "$A/ngram"
cat >"$A/train_gpt.py" <<'PY'
import lzma as L,base64 as B
exec(L.decompress(B.b85decode("-~lNB%3T07n@VT6Qap3*G*?mGKd~l#J-r`@QDbYMfN)xv6}%re936StP}#NalL4<mDa_X<J%v8YmizwaXq<2i2psSHHuK1?7DZ@giRK0`pOM$=dqp;~>m2Q$-^%X9Q62PL<d<mdg~S3+2g1@GeIkRaW3)Gs2p1P&)~P!=co|`abeA{IA-9x{Ta3P(MPt=*&fBMPrqwHapYb|wawD;3Xp%(SvJpvP=@1xASq3z_%pjf=p+j&%?K~X`Tq^$3R}+0GiB=Va000"),format=L.FORMAT_RAW,filters=[{"id":L.FILTER_LZMA2}]))
PY
printf '"""Eval-time helper."""\nfrom pathlib import Path\n_HERE = Path(__file__).resolve().parent\nSRC = _HERE / "ngram" / "fused_expert_kernel.cpp"\n' >"$A/ngram_tilt.py"
pad "$A/ngram_tilt.py" 8624
printf '// kernel\nint tilt(void) { return 0; }\n' >"$A/ngram/fused_expert_kernel.cpp"
pad "$A/ngram/fused_expert_kernel.cpp" 18406
printf '# N-gram tilt\n\n```bash\nexport NGRAM_TILT_ENABLED=1\nSEED=$SEED torchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$A/README.md"
mini_log "$A/train_seed0.log" 0 15980000 380
# 380 + 8,624 + 18,406 code bytes + 15,980,000 = 16,007,410: over.
has code_import_under_flag_counts SIZE_OVER_LIMIT error \
  "counted code \(train_gpt.py and 2 files it loads\): 27410 code bytes \+ 15980000 model bytes" "$A"
grep -q '"why": "imported by train_gpt.py (decoded):6 under `if h.ngram_tilt_enabled`, on for the documented run (NGRAM_TILT_ENABLED=1 in README.md:4)"' "$TMP/out" &&
  ok code_json_says_why || fail code_json_says_why "$(grep -B3 '"why"' "$TMP/out" | head -20)"
grep -q '"library": "liblzma' "$TMP/out" && ok code_json_decoder_version || fail code_json_decoder_version "no library"
"$PGOLF" check "$A" >"$TMP/out" 2>&1
grep -Eq '^    ngram/fused_expert_kernel.cpp +18,406  in the folder named "ngram" at ngram_tilt.py:4$' "$TMP/out" &&
  ok code_text_lists_files || fail code_text_lists_files "$(tail -5 "$TMP/out")"

# The same folder with the flag off: the module is not loaded, 380 bytes count.
B=$F/ngram_off
cp -r "$A" "$B"
sed -i 's/NGRAM_TILT_ENABLED=1/NGRAM_TILT_ENABLED=0/' "$B/README.md"
lacks code_flag_off_not_counted SIZE_OVER_LIMIT "$B"
grep -q '"state": "not loaded"' "$TMP/out" && ok code_flag_off_listed || fail code_flag_off_listed "$(grep state "$TMP/out")"

# --- A readable companion copy nothing runs is not counted.
H=$F/human
mkdir -p "$H"
printf 'print("self-extracting stand-in")\n' >"$H/train_gpt.py"
pad "$H/train_gpt.py" 15516
printf 'print("readable")\n' >"$H/train_gpt_human.py"
pad "$H/train_gpt_human.py" 58367
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$H/README.md"
mini_log "$H/train_seed1.log" 1 15973467 15516
lacks code_human_copy_not_counted SIZE_OVER_LIMIT "$H"
grep -A3 '"not_counted"' "$TMP/out" | grep -q '"file": "train_gpt_human.py"' && ok code_human_copy_listed ||
  fail code_human_copy_listed "$(grep -A5 not_counted "$TMP/out")"

# --- A 74-byte loader exec's the real script: both count.
D=$F/loader
mkdir -p "$D"
printf 'exec(open(__file__.replace("train_gpt.py","train_gpt_decode.py")).read())\n' >"$D/train_gpt.py"
printf 'import os\nprint("the real script")\n' >"$D/train_gpt_decode.py"
pad "$D/train_gpt_decode.py" 80055
mini_log "$D/train_seed42.log" 42 15978439 80055
has code_loader_counts SIZE_OVER_LIMIT error "counted code \(train_gpt.py and 1 file it loads\): 80129" "$D"

# --- B: the script copy at the top of a log.
S=$F/src
mkdir -p "$S"
{
  printf 'import os\nimport sys\nclass Hyperparameters:\n'
  printf "    warmdown_iters = int(os.environ.get('WARMDOWN_ITERS', 3000))\n"
  i=0
  while [ $i -lt 24 ]; do printf 'def f%d(x):\n    return x + %d\n' $i $i; i=$((i + 1)); done
  printf 'if __name__ == "__main__":\n    f0(1)\n'
} >"$S/train_gpt.py"
printf '```\ntorchrun --nproc_per_node=8 train_gpt.py\n```\n' >"$S/README.md"
mini_log "$S/train_seed1.log" 1 15000000 2000 "$S/train_gpt.py"
lacks logcode_same_passes LOG_CODE_MISMATCH "$S"

sed 's/return x + 7$/return x * 7/' "$S/train_gpt.py" >"$TMP/other.py"
mini_log "$S/train_seed1.log" 1 15000000 2000 "$TMP/other.py"
has logcode_code_change_errors LOG_CODE_MISMATCH error \
  'different code wrote this log: .* for example: log line 20 `return x\*7` where train_gpt.py:20 has `return x\+7`' "$S"
# On the non-record track (accepted for what it shows; LeWM_Jepa_Mamba2 was
# merged with a log of an earlier script) the same is a warning.
has logcode_nonrecord_warns LOG_CODE_MISMATCH warning 'different code wrote this log' "$S" --track nonrecord

sed 's/return x + 7$/return x + 7  # seven/' "$S/train_gpt.py" >"$TMP/other.py"
mini_log "$S/train_seed1.log" 1 15000000 2000 "$TMP/other.py"
has logcode_comment_warns LOG_CODE_MISMATCH warning "only in comments, docstrings or layout" "$S"

sed 's/3000))/800))/' "$S/train_gpt.py" >"$TMP/other.py"
mini_log "$S/train_seed1.log" 1 15000000 2000 "$TMP/other.py"
has logcode_unset_default_errors LOG_CODE_MISMATCH error "reads WARMDOWN_ITERS with a different default" "$S"
printf '```\nWARMDOWN_ITERS=800 torchrun --nproc_per_node=8 train_gpt.py\n```\n' >"$S/README.md"
has logcode_set_default_warns LOG_CODE_MISMATCH warning "read environment variables the README's run sets" "$S"
# The run's value is the shipped default when the README's prose states it
# (TrainingOptSeq4096 lists `TRAIN_BATCH_TOKENS=393216` beside a shipped
# 393_216) or the log prints it: the shipped script repeats that run.
printf 'Schedule: `WARMDOWN_ITERS=3000 MATRIX_LR=0.02`\n\n```\ntorchrun --nproc_per_node=8 train_gpt.py\n```\n' >"$S/README.md"
sed -i 's/3000))/3_000))/' "$S/train_gpt.py"
has logcode_stated_default_warns LOG_CODE_MISMATCH warning "the README states" "$S"
printf 'Schedule: `WARMDOWN_ITERS=800`\n\n```\ntorchrun --nproc_per_node=8 train_gpt.py\n```\n' >"$S/README.md"
has logcode_stated_other_errors LOG_CODE_MISMATCH error "reads WARMDOWN_ITERS with a different default" "$S"
sed -i 's/^Hyperparameters:$/warmdown_iters:3000 num_layers:9/' "$S/train_seed1.log"
has logcode_printed_default_warns LOG_CODE_MISMATCH warning "the log prints" "$S"
sed -i 's/^warmdown_iters:3000 /warmdown_iters:800 /' "$S/train_seed1.log"
has logcode_printed_other_errors LOG_CODE_MISMATCH error "reads WARMDOWN_ITERS with a different default" "$S"
sed -i 's/3_000))/3000))/' "$S/train_gpt.py"

# A wrapper whose payload does not decode hides what runs: a warning.
U=$F/unreadable
mkdir -p "$U"
printf 'import lzma as L,base64 as B\nexec(L.decompress(B.b85decode("0123456789012345678901234567890")))\n' >"$U/train_gpt.py"
mini_log "$U/train_seed1.log" 1 15000000 100
has code_unreadable_warns CODE_UNREADABLE warning "train_gpt.py:2: embedded code \(lzma \(xz\)\): lzma payload does not decode" "$U"
lacks code_readable_no_warning CODE_UNREADABLE "$A"

# A log beside the claim (an ablation, not a run the claim uses) written by
# other code: a warning, the same difference as an error in a claimed run.
S2=$F/src_beside
mkdir -p "$S2"
cp "$S/train_gpt.py" "$S2/"
printf '```\ntorchrun --nproc_per_node=8 train_gpt.py\n```\n' >"$S2/README.md"
mini_log "$S2/train_seed1.log" 1 15000000 2000 "$S2/train_gpt.py"
sed 's/return x + 7$/return x * 7/' "$S2/train_gpt.py" >"$TMP/other.py"
BPB=1.23000000 mini_log "$S2/ablation_seed2.log" 2 15000000 2000 "$TMP/other.py"
printf '{"author":"a","github_id":"a","name":"n","date":"2026-04-01","val_bpb":1.22436570,"seeds":[1]}\n' \
  >"$S2/submission.json"
has logcode_beside_claim_warns LOG_CODE_MISMATCH warning 'different code wrote this log' "$S2"
printf '{"author":"a","github_id":"a","name":"n","date":"2026-04-01","val_bpb":1.23000000,"seeds":[2]}\n' \
  >"$S2/submission.json"
has logcode_claimed_run_errors LOG_CODE_MISMATCH error 'different code wrote this log' "$S2"

# --- A log without a copy of its script that prints the script's size
# (issue #1594: one seed's log of an accepted record prints 16,630 bytes
# and ttt_hash_embed: True; the shipped script is 16,594 bytes and has no
# such setting). A warning that names the settings; none when the size
# is a shipped script's, or for a log the claim does not rest on.
K=$F/codesize
mkdir -p "$K"
printf 'import os\nseed = int(os.environ.get("SEED", 1337))\nmax_wallclock_seconds = 600.0\nprint("train")\n' \
  >"$K/train_gpt.py"
pad "$K/train_gpt.py" 16594
printf '```\ntorchrun --standalone --nproc_per_node=8 train_gpt.py\n```\n' >"$K/README.md"
mini_log "$K/train_seed314.log" 314 15000000 16594
lacks codesize_same_no_warning LOG_CODE_MISMATCH "$K"
# (A WARNING: line and a URL are no settings.)
DATA=$(printf '  ttt_hash_embed: True\nWARNING:__main__:\nhttps://example.org/x') BPB=1.23000000 \
  mini_log "$K/train_seed42.log" 42 15000000 16630
has codesize_differs_warns LOG_CODE_MISMATCH warning \
  "no shipped script has that size.*16630 bytes where the closest, train_gpt.py, has 16594; it prints settings no shipped script mentions: ttt_hash_embed \(train_seed42.log:" "$K"
printf '{"author":"a","github_id":"a","name":"n","date":"2026-04-01","val_bpb":1.22436570,"seeds":[314]}\n' \
  >"$K/submission.json"
lacks codesize_beside_claim_no_warning LOG_CODE_MISMATCH "$K"
# A payload that does not decode hides the settings the code reads: the
# size still differs, no setting is named.
has codesize_undecoded_names_none LOG_CODE_MISMATCH warning "100 bytes where the closest, train_gpt.py, has [0-9]+ \(train_seed1.log" "$U"
