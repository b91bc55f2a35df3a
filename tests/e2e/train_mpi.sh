# pgolf train under mpirun: --world 8 split over P = 1, 2, 4, 8 processes
# gives the single-process --world 8 run's loss chain and artifact byte for
# byte, and a one-process replay of its manifest passes; a run
# checkpointed with 2 processes resumes with 1 and with 4 to the same
# chain; a process that dies or hangs (the test-only hooks
# PGOLF_TEST_DIE / PGOLF_TEST_HANG) stops every process within the
# timeout, non-zero, naming it, and the last checkpoint resumes to the
# same chain; a process count that does not divide the world is refused.
# Skips (with the reason) without mpirun or without an MPI build.
. "$(dirname "$0")/lib.sh"

OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
if ! command -v mpirun >/dev/null 2>&1; then
  skip train-mpi "no mpirun (Debian: openmpi-bin libopenmpi-dev; ci/deps.sh test installs them)"
  exit 0
fi
mpi_test_env
DATA=$TMP/data
small_world_run "$TMP/small.json" "$DATA"
chain() { jq -r .predicate.losses.chain "$1/manifest.json"; }
mpi() { np=$1; shift; mpirun -np "$np" "$PGOLF" train "$@"; }

if ! "$PGOLF" --version | grep -qx 'mpi yes'; then
  skip train-mpi "this pgolf was built without MPI (libopenmpi-dev absent at build time)"
  # ... and says so when mpirun starts it.
  expect_err no-mpi-build-refuses 2 "built without MPI" env OMPI_COMM_WORLD_SIZE=2 "$PGOLF" train --config "$TMP/small.json" --out "$TMP/x"
  exit 0
fi

expect_rc single-process-world8 0 "$PGOLF" train --config "$TMP/small.json" --world 8 --threads 1 --quiet --out "$TMP/ref"
for P in 1 2 4 8; do
  expect_rc "mpirun-np$P" 0 mpi "$P" --config "$TMP/small.json" --world 8 --threads 1 --quiet --out "$TMP/p$P"
  [ "$(chain "$TMP/p$P")" = "$(chain "$TMP/ref")" ] && ok "np$P-same-chain" ||
    fail "np$P-same-chain" "$(chain "$TMP/p$P") vs $(chain "$TMP/ref")"
  expect_same "np$P-same-artifact" "$TMP/ref/model.int8.ptz" "$TMP/p$P/model.int8.ptz"
done
# One process under mpirun is a plain run: MPI never starts (trainer/comm.c).
p=$(jq -c '[.predicate.environment.processes, (.predicate.environment.mpi|type)]' "$TMP/p1/manifest.json")
[ "$p" = '[1,"null"]' ] && ok np1-without-mpi || fail np1-without-mpi "$p"
p=$(jq -c '[.predicate.environment.processes, .predicate.environment.ranks_per_process, (.predicate.environment.mpi|type)]' "$TMP/p4/manifest.json")
[ "$p" = '[4,2,"string"]' ] && ok manifest-processes || fail manifest-processes "$p"
grep -q '^processes:4 ranks_per_process:2 mpi:' "$TMP/p4/train.log" && ok log-processes ||
  fail log-processes "$(grep processes "$TMP/p4/train.log")"
expect_rc manifests-compare-equal 0 "$PGOLF" manifest diff "$TMP/ref/manifest.json" "$TMP/p2/manifest.json"
# The manifest carries world_size in its configuration: a plain replay
# (one process) re-runs the 2-process run step for step.
expect_rc replay-of-np2-run 0 "$PGOLF" replay "$TMP/p2/manifest.json" --threads 1

# Checkpointed by 2 processes, resumed by 1 and by 4.
expect_rc np2-stop 0 mpi 2 --config "$TMP/small.json" --world 8 --threads 1 --quiet --stop-after 2 --out "$TMP/s"
cp -r "$TMP/s" "$TMP/s4"
expect_rc resume-np1 0 "$PGOLF" train --resume "$TMP/s" --threads 1 --quiet
[ "$(chain "$TMP/s")" = "$(chain "$TMP/ref")" ] && ok resume-np1-same-chain ||
  fail resume-np1-same-chain "$(chain "$TMP/s") vs $(chain "$TMP/ref")"
expect_rc resume-np4 0 mpi 4 --resume "$TMP/s4" --threads 1 --quiet
[ "$(chain "$TMP/s4")" = "$(chain "$TMP/ref")" ] && ok resume-np4-same-chain ||
  fail resume-np4-same-chain "$(chain "$TMP/s4") vs $(chain "$TMP/ref")"

# Faults: every process stops, non-zero, the missing one named; the
# checkpoint of step 2 survives and resumes to the same chain.
timed() { s=$(date +%s); "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; elapsed=$(($(date +%s) - s)); }
fault() { # NAME VAR VALUE PATTERN MAX_SECONDS
  timed env "$2=$3" mpirun -np 2 -x "$2" "$PGOLF" train --config "$TMP/small.json" --world 8 --threads 1 --quiet \
    --checkpoint-every 2 --comm-timeout 2 --out "$TMP/$1"
  if [ "$rc" -eq 0 ]; then fail "$1-nonzero" "exit 0"; else ok "$1-nonzero"; fi
  grep -Eq "$4" "$TMP/err" && ok "$1-named" || fail "$1-named" "stderr: $(head -c 600 "$TMP/err")"
  [ "$elapsed" -le "$5" ] && ok "$1-bounded" || fail "$1-bounded" "${elapsed}s > $5 s"
  [ ! -f "$TMP/$1/manifest.json" ] && [ "$(grep -c . "$TMP/$1/losses.txt")" = 3 ] && ok "$1-checkpoint-at-2" ||
    fail "$1-checkpoint-at-2" "$(ls "$TMP/$1"; cat "$TMP/$1/losses.txt")"
}
fault die PGOLF_TEST_DIE 1:3 "process 1 exits at step 3" 30
fault hang PGOLF_TEST_HANG 1:3 "process 1 \(ranks 4-7\) did not reach the exchange of step 3 within 2 s" 30
fault hang-root PGOLF_TEST_HANG 0:3 "process 0 \(ranks 0-3\) did not answer at the exchange of step 3 within 4 s" 30
expect_rc resume-after-die 0 "$PGOLF" train --resume "$TMP/die" --threads 1 --quiet
[ "$(chain "$TMP/die")" = "$(chain "$TMP/ref")" ] && ok resume-after-die-same-chain ||
  fail resume-after-die-same-chain "$(chain "$TMP/die") vs $(chain "$TMP/ref")"

# 3 processes cannot split a world of 8.
timed mpirun -np 3 "$PGOLF" train --config "$TMP/small.json" --world 8 --threads 1 --quiet --out "$TMP/np3"
[ "$rc" -ne 0 ] && grep -q "world_size 8 is not a multiple of the 3 processes" "$TMP/err" && ok np3-refused ||
  fail np3-refused "exit $rc: $(head -c 400 "$TMP/err")"
