# ci/gpu-check.sh's GPU_CHECK_SECTIONS on the CPU, in a copy of the tree
# with a stand-in ./pgolf that has CUDA and no GPU: the sections named run
# (here the world rows, "not run" for want of GPUs), the others are named
# in one failing "sections not run" row, so that a proof split over two
# calls never reads as a whole one; an unknown section, or a timeout that
# is not whole seconds, is refused.
# suite: sources (reads the tree and its tools, not the build: tests/run.sh)
. "$(dirname "$0")/lib.sh"
tree=$TMP/tree
copy_tree "$tree"
cat >"$tree/pgolf" <<'SH'
#!/bin/sh
case $1 in
  version) echo "pgolf stand-in"; echo "cuda yes" ;;
  gpu) if [ "${2:-}" = --json ]; then echo '{"devices": []}'; else echo "pgolf: no CUDA device: planted" >&2; exit 2; fi ;;
  *) echo "pgolf stand-in: $*" >&2; exit 2 ;;
esac
SH
chmod +x "$tree/pgolf"
check() { (cd "$tree" && env GPU_CHECK_OUT="$TMP/gc" GPU_CHECK_PREBUILT=planted "$@" sh ci/gpu-check.sh >"$TMP/out" 2>"$TMP/err"); }

check GPU_CHECK_SECTIONS=world
rc=$?
rows=$TMP/gc/rows
if [ "$rc" -eq 1 ] && [ "$(grep -c '^train --device cuda --gpus [128] --world 8 (tiny, 20 steps)	not run	not run: only 0 GPUs$' "$rows")" = 3 ] &&
   grep -q '^sections not run (GPU_CHECK_SECTIONS)	not run	not run here: tests train golden bench sanitizer static baseline$' "$rows" &&
   ! grep -q '^test_cuda\|^ms/step\|^compute-sanitizer\|^static\|^replay' "$rows"; then
  ok gpu-check-runs-only-the-named-sections
else
  fail gpu-check-runs-only-the-named-sections "exit $rc: $(cat "$rows" "$TMP/err" | head -c 800)"
fi
grep -q '^| sections not run (GPU_CHECK_SECTIONS) *| not run' "$TMP/out" && ok gpu-check-table-names-the-sections-left-out ||
  fail gpu-check-table-names-the-sections-left-out "$(tail -n 5 "$TMP/out")"

check GPU_CHECK_SECTIONS="world warp"
rc=$?
[ "$rc" -eq 2 ] && grep -q "unknown section warp" "$TMP/err" && ok gpu-check-unknown-section-refused ||
  fail gpu-check-unknown-section-refused "exit $rc: $(cat "$TMP/err")"

check GPU_CHECK_SECTIONS=world GPU_CHECK_TIMEOUT=3m
rc=$?
[ "$rc" -eq 2 ] && grep -q "whole seconds ('3m')" "$TMP/err" && ok gpu-check-bad-timeout-refused ||
  fail gpu-check-bad-timeout-refused "exit $rc: $(cat "$TMP/err")"
