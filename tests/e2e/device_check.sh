#!/bin/sh
# ci/device-check.sh (the one call a session lent a GPU machine makes) on
# the CPU, in a copy of the tree, with a planted bundle and a stand-in
# gpu-check: binaries from a bundle built from these sources are used
# (through wrappers that give only them the bundle's libraries), a bundle
# built from other sources is refused, the rows come back as they are
# written, and a check that runs past the deadline is stopped, its process
# group and all, with a table that says after which row.
. "$(dirname "$0")/lib.sh"
tree=$TMP/tree
copy_tree "$tree"

# A bundle: a stand-in pgolf (and one GPU test) in release.tar.xz, a
# MANIFEST with this tree's source digest.
b=$tree/build/device
mkdir -p "$b/lib" "$b/bin" "$TMP/rel/build/release/tests"
cat >"$TMP/rel/pgolf" <<'SH'
#!/bin/sh
[ "$1" = version ] && { echo "pgolf stand-in"; echo "cuda yes"; echo "ld $LD_LIBRARY_PATH"; }
exit 0
SH
chmod +x "$TMP/rel/pgolf"
cp "$TMP/rel/pgolf" "$TMP/rel/build/release/pgolf"
cp "$TMP/rel/pgolf" "$TMP/rel/build/release/tests/test_cuda_standin"
tar cJf "$b/release.tar.xz" -C "$TMP/rel" pgolf build/release/pgolf build/release/tests/test_cuda_standin
digest=$(cd "$tree" && sh ci/device-check.sh --digest)
printf 'source_digest %s\ncommit test\nbuilt_on here\nnvcc 13.0\n' "$digest" >"$b/MANIFEST"

# The stand-in gpu-check: rows into $GPU_CHECK_OUT/rows, then the table,
# or (SLOW=1) one row and a long sleep in a child, whose pid it leaves.
cat >"$tree/ci/standin-gpu-check.sh" <<'SH'
#!/bin/sh
mkdir -p "$GPU_CHECK_OUT"
printf 'build (CUDA compiled in)\tpass\t%s\n' "$GPU_CHECK_PREBUILT" >"$GPU_CHECK_OUT/rows"
if [ "${SLOW:-0}" = 1 ]; then
  sleep 120 &
  echo $! >"$GPU_CHECK_OUT/child.pid"
  wait
fi
printf 'pgolf gpu\tpass\tplanted\n' >>"$GPU_CHECK_OUT/rows"
echo "log line" >"$GPU_CHECK_OUT/some.log"
printf '| check | result | detail\n| planted table\n'
exit 0
SH

run_check() { # OUTDIR [VAR=VALUE...]: device-check in the copy, with the stand-in
  o=$1
  shift
  (cd "$tree" && env OUT="$o" GPU_CHECK_OUT="$o.work" DEVICE_GPU_CHECK=ci/standin-gpu-check.sh \
    DEVICE_BUILD=0 "$@" sh ci/device-check.sh >"$o.stdout" 2>&1)
}

# 1. The bundle matches: its binaries behind wrappers, the check's rows and table.
run_check "$TMP/o1"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "^prebuilt: bundle built on here, nvcc 13.0, commit test, sources $digest" "$TMP/o1/build.txt"; then
  ok device-check-uses-matching-bundle
else
  fail device-check-uses-matching-bundle "exit $rc: $(cat "$TMP/o1/build.txt" "$TMP/o1.stdout" | head -c 600)"
fi
v=$("$tree/pgolf" version)
case $v in
  *"cuda yes"*"ld $b/lib"*) ok device-check-wrapper-gives-bundle-libraries ;;
  *) fail device-check-wrapper-gives-bundle-libraries "$v" ;;
esac
[ -x "$tree/build/release/tests/test_cuda_standin" ] && ok device-check-wraps-gpu-tests ||
  fail device-check-wraps-gpu-tests "no build/release/tests/test_cuda_standin"
if [ "$(cut -f1,2 "$TMP/o1/rows.tsv" | tr '\t\n' ':;')" = "build (CUDA compiled in):pass;pgolf gpu:pass;" ] &&
   grep -q '^| planted table' "$TMP/o1/table.txt"; then
  ok device-check-rows-and-table
else
  fail device-check-rows-and-table "$(cat "$TMP/o1/rows.tsv" "$TMP/o1/table.txt")"
fi
if tar tzf "$TMP/o1/logs.tgz" 2>/dev/null | grep -q 'o1.work/some.log' && [ -s "$TMP/o1/probe.txt" ] &&
   grep -q '^bundle source_digest' "$TMP/o1/probe.txt"; then
  ok device-check-probe-and-logs
else
  fail device-check-probe-and-logs "$(ls "$TMP/o1"; head -c 300 "$TMP/o1/probe.txt")"
fi
[ "$(ls "$TMP/o1" | wc -l)" -le 8 ] && ok device-check-at-most-8-files ||
  fail device-check-at-most-8-files "$(ls "$TMP/o1")"

# 2. A bundle built from other sources is refused, and nothing is built.
sed -i 's/^source_digest .*/source_digest 0000/' "$b/MANIFEST"
rm -f "$tree/pgolf"
run_check "$TMP/o2"
rc=$?
if grep -q "the bundle was built from other sources (digest 0000, this tree $digest)" "$TMP/o2/build.txt" &&
   grep -q "not building here" "$TMP/o2/build.txt" && [ ! -e "$tree/pgolf" ]; then
  ok device-check-refuses-stale-bundle
else
  fail device-check-refuses-stale-bundle "exit $rc: $(cat "$TMP/o2/build.txt")"
fi
sed -i "s/^source_digest .*/source_digest $digest/" "$b/MANIFEST"

# 3. Past the deadline: stopped with its children, the rows so far kept.
s=$(date +%s)
run_check "$TMP/o3" SLOW=1 DEVICE_BUDGET_S=3
rc=$? elapsed=$(($(date +%s) - s))
child=$(cat "$TMP/o3.work/child.pid" 2>/dev/null)
if [ "$rc" -ne 0 ] && [ "$elapsed" -lt 30 ] &&
   grep -q '^stopped at the deadline (3 s) after 1 rows; the rows after "build (CUDA compiled in)" were not reached' "$TMP/o3/table.txt" &&
   [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null; then
  ok device-check-deadline-stops-the-group
else
  fail device-check-deadline-stops-the-group "exit $rc after ${elapsed}s, child ${child:-none}: $(cat "$TMP/o3/table.txt")"
  [ -n "$child" ] && kill "$child" 2>/dev/null
fi
