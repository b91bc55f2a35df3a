#!/bin/sh
# Distributed training throughput: --world 8 of the tiny preset on 1
# process (THREADS threads) and on 2 processes under mpirun (THREADS/2
# threads each, at least 1), the same STEPS steps each (the chains are
# equal, checked here too), as tokens/s, their ratio (2 processes / 1),
# and the share of training time each spends in the gradient exchange
# (heartbeat, all-to-all, ordered sum, all-gather; for 1 process the
# ordered sum alone), from pgolf's own timers around it.
#   sh ci/bench-mpi.sh        (after `make pgolf`; called by `make bench`)
# Knobs: PGOLF (default ./pgolf), STEPS (default 10), THREADS (default
# nproc). Without mpirun or an MPI build the 2-process row is skipped with
# the reason.
set -eu
cd "$(dirname "$0")/.."
pgolf=${PGOLF:-./pgolf}
steps=${STEPS:-10}
threads=${THREADS:-$(nproc)}
half=$((threads / 2)); [ "$half" -ge 1 ] || half=1
[ -x "$pgolf" ] || { echo "bench-mpi: $pgolf not built (run make pgolf)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-bench-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
args="--preset tiny --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model --world 8 --steps 200 --stop-after $steps --json"

# NAME JSON: tokens/s and exchange share from a --json result.
row() {
  jq -r --arg name "$1" --argjson tokens 8192 '
    [$name, (.steps * $tokens / (.train_ms / 1000) | floor), (100 * .exchange_ms / .train_ms * 100 | floor / 100), .chain[0:16]]
    | @tsv' "$2"
}

# shellcheck disable=SC2086
"$pgolf" train $args --threads "$threads" --out "$tmp/p1" >"$tmp/p1.json"
printf 'run\ttokens/s\texchange %%\tchain\n' >"$tmp/table"
row "1 process x $threads threads" "$tmp/p1.json" >>"$tmp/table"
if ! command -v mpirun >/dev/null 2>&1; then
  echo "bench-mpi: no mpirun (openmpi-bin): the 2-process row is skipped"
# shellcheck disable=SC2086
elif ! mpirun -np 2 "$pgolf" train $args --threads "$half" --out "$tmp/p2" >"$tmp/p2.json" 2>"$tmp/p2.err"; then
  echo "bench-mpi: the 2-process run failed: $(head -c 300 "$tmp/p2.err")"
  exit 1
else
  row "2 processes x $half threads" "$tmp/p2.json" >>"$tmp/table"
fi
column -t -s "$(printf '\t')" "$tmp/table"
if [ -s "$tmp/p2.json" ]; then
  c1=$(jq -r .chain "$tmp/p1.json") c2=$(jq -r .chain "$tmp/p2.json")
  [ "$c1" = "$c2" ] || { echo "bench-mpi: the chains differ ($c1 vs $c2)"; exit 1; }
  jq -rn --slurpfile a "$tmp/p1.json" --slurpfile b "$tmp/p2.json" \
    '"2 processes / 1 process: \(($a[0].train_ms / $b[0].train_ms) * 100 | floor / 100)x tokens/s (same chain)"'
fi
