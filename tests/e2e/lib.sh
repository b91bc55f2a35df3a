# Helpers for end-to-end tests of the pgolf command. Each check prints
# "ok NAME" or "FAIL NAME: why"; tests/run.sh counts them.
# PGOLF is the binary under test (set by tests/run.sh).
: "${PGOLF:=$(pwd)/pgolf}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

ok() { echo "ok $1"; }
fail() { echo "FAIL $1: $2"; }
# A check that cannot run here (it needs a GPU, a tool): counted apart.
skip() { echo "SKIP $1: $2"; }

# err_excerpt FILE: the start of a failed command's stderr for a FAIL line,
# and where it holds a crash report (a sanitizer's, or Open MPI's signal
# handler's) the report's first frames too, so a rare crash in CI names
# where it happened.
err_excerpt() {
  head -c 400 "$1"
  if grep -Eq 'Sanitizer|Process received signal' "$1"; then
    printf '\n[frames] '
    grep -E '^ *#[0-9]+ |\] \[ ?[0-9]+\] ' "$1" | head -n 16
  fi
}

# expect_rc NAME RC CMD...: run CMD, check its exit code is RC.
# stdout goes to $TMP/out, stderr to $TMP/err.
expect_rc() {
  name=$1 want=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" -eq "$want" ]; then ok "$name"; else
    fail "$name" "exit $got, wanted $want; stderr: $(err_excerpt "$TMP/err")"
  fi
}

# expect_err NAME RC PATTERN CMD...: exit code RC and stderr matching PATTERN (grep -E).
expect_err() {
  name=$1 want=$2 pat=$3
  shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"
  got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name" "exit $got, wanted $want; stderr: $(err_excerpt "$TMP/err")"
  elif ! grep -Eq -- "$pat" "$TMP/err"; then
    fail "$name" "stderr does not match /$pat/: $(err_excerpt "$TMP/err")"
  else ok "$name"; fi
}

# expect_same NAME FILE_A FILE_B: byte-identical files.
expect_same() {
  if cmp -s "$2" "$3"; then ok "$1"; else fail "$1" "$2 and $3 differ: $(diff "$2" "$3" | head -5)"; fi
}

# le32 N: four little-endian bytes.
le32() {
  printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}

# copy_tree DIR: the repository's files (tracked and untracked, not the
# ignored ones: no build/, no ./pgolf) copied into DIR, for a test that
# plants stand-ins in a tree of its own.
copy_tree() {
  mkdir -p "$1"
  here=$(cd "$(dirname "$0")/../.." && pwd)
  (cd "$here" && git ls-files -co --exclude-standard -z 2>/dev/null | xargs -0 cp --parents -t "$1" 2>/dev/null) ||
    (cd "$here" && tar cf - --exclude=./build --exclude=./pgolf . | tar xf - -C "$1")
}

# small_demo_data DIR N_VAL: a data directory for short runs: the demo's
# train shard, and a validation shard of the demo's first N_VAL tokens.
small_demo_data() {
  mkdir -p "$1"
  cp data/demo/fineweb_train_000000.bin "$1/"
  {
    le32 20240520; le32 1; le32 "$2"
    dd if=/dev/zero bs=1012 count=1 2>/dev/null
    dd if=data/demo/fineweb_val_000000.bin bs=2 skip=512 count="$2" 2>/dev/null
  } >"$1/fineweb_val_000000.bin"
}

# headless OUT ARGS...: headless Chromium (the caller's $chromium) with
# ARGS, its standard output into OUT, tried up to three times until OUT
# (or, for --screenshot=FILE, FILE) is non-empty. Chromium itself now and
# then exits with nothing written (a renderer lost on a loaded machine);
# what the page shows is still checked by the caller, on the run that
# wrote it.
headless() {
  hl_out=$1
  shift
  hl_want=$hl_out
  for hl_a in "$@"; do case $hl_a in --screenshot=*) hl_want=${hl_a#--screenshot=} ;; esac; done
  for hl_try in 1 2 3; do
    rm -f "$hl_want"
    HOME=$TMP timeout 120 "$chromium" --headless --no-sandbox --disable-gpu "$@" >"$hl_out" 2>/dev/null
    [ -s "$hl_want" ] && return 0
    echo "(chromium wrote nothing, try $hl_try of 3)" >&2
  done
  return 1
}

# screenshot NAME HTML PNG WIDTHxHEIGHT: headless Chromium's screenshot of
# HTML into PNG, and its colour histogram for pixels. Prints "ok NAME";
# without Chromium or ImageMagick (Debian chromium, imagemagick) "FAIL
# NAME", or a SKIP line when PGOLF_ALLOW_NO_CHROMIUM=1; returns 1 unless
# there is a screenshot to look at.
screenshot() {
  chromium=$(command -v chromium || command -v chromium-browser || true)
  if [ -z "$chromium" ] || ! command -v convert >/dev/null 2>&1; then
    if [ "${PGOLF_ALLOW_NO_CHROMIUM:-0}" = 1 ]; then
      echo "SKIP $1: chromium or ImageMagick missing (allowed by PGOLF_ALLOW_NO_CHROMIUM=1)" >&2
      echo "SKIPPED $1 (chromium or imagemagick missing)"
    else
      fail "$1" "needs Debian packages chromium and imagemagick (or PGOLF_ALLOW_NO_CHROMIUM=1 to skip)"
    fi
    return 1
  fi
  if ! headless "$TMP/headless.out" --hide-scrollbars --screenshot="$3" \
    --window-size="$(echo "$4" | tr x ,)" "file://$2"; then
    fail "$1" "chromium wrote no screenshot in three tries"
    return 1
  fi
  SHOT_HIST=$3.hist
  convert "$3" -format %c histogram:info:- >"$SHOT_HIST" 2>/dev/null
  ok "$1"
}

# pixels COLOR: how many pixels of exactly this colour (#rrggbb) the last
# screenshot has.
pixels() {
  want=$(echo "$1" | tr a-f A-F)
  awk -v w="$want" '{ n = $1; sub(":", "", n); for (i = 2; i <= NF; i++) if (toupper($i) == w) s += n }
    END { print s + 0 }' "$SHOT_HIST"
}

# small_world_run FILE DATA: data (small_demo_data) and a configuration
# small enough for many processes on 2 cores: 2 layers of 32, 4 steps of
# 1024 tokens (one sequence of 64 per rank and micro-step at world 8), a
# small validation split. For the --world and mpirun tests.
small_world_run() {
  small_demo_data "$2" 1025
  cat >"$1" <<EOF
{"preset": "tiny", "num_layers": 2, "model_dim": 32, "num_heads": 2, "num_kv_heads": 1,
 "train_seq_len": 64, "train_batch_tokens": 1024, "iterations": 4, "warmdown_iters": 2,
 "val_batch_size": 1024, "train_log_every": 1, "data": "$2",
 "tokenizer": "data/tokenizers/fineweb_1024_bpe.model"}
EOF
}

# mpi_test_env: what the mpirun tests need: mpirun as root, more processes
# than cores, and under the sanitizer build Open MPI's own allocations kept
# apart from pgolf's (tests/lsan-mpi.supp; full unwinding so library frames
# are seen, components not unloaded so their frames have names).
mpi_test_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_mca_base_component_disable_dlclose=1
  LSAN_OPTIONS="suppressions=$(pwd)/tests/lsan-mpi.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  export LSAN_OPTIONS
}
