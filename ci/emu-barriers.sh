#!/bin/sh
# Does the stand-in see each barrier? Every __syncthreads() and
# __syncwarp() of the kernel files given (default: all of kernels/*.cu
# that have one) is taken out in turn; the file is built for the stand-in
# as ci/cuda-emu.sh builds it (ci/cuda_emu/build.sh), and the GPU tests
# that call its kernels run in both orders (CUDA_EMU_ORDER). One line a
# barrier: "caught" with how (a stand-in report, a crash, or the tests'
# bits), or "MISSED": a barrier the tests pass without, which is
# redundant or untested; which one, the code says. (A "report" is the
# stand-in's race check, which needs no wrong bits: ci/cuda_emu/grid.cpp.)
# A measuring tool, not a test: minutes (about 15 s a barrier on 2
# cores); not run by CI. Needs make build and g++.
#   sh ci/emu-barriers.sh [kernels/NAME.cu...]
set -eu
cd "$(dirname "$0")/.."
PGOLF_EMU_ONLY_BINARY=1 sh ci/cuda-emu.sh >/dev/null
. ci/cuda_emu/build.sh
work=build/emu-barriers
rm -rf "$work" && mkdir -p "$work"
files=${*:-$(grep -lE '__syncthreads\(\)|__syncwarp\(\)' kernels/*.cu)}
for f in $files; do
  n=$(basename "$f" .cu)
  # The tests of a file's kernels: those that include its header
  # (attention_mma's kernels are declared in attention.h).
  tests=$(grep -l "kernels/${n%_mma}\.h" tests/test_cuda_*.c | grep -v 'test_cuda_matmul\.c' || true)
  [ -n "$tests" ] || { echo "$f: no GPU test includes kernels/${n%_mma}.h"; continue; }
  for ln in $(grep -nE '__syncthreads\(\)|__syncwarp\(\)' "$f" | cut -d: -f1); do
    sed -E "${ln}s/__sync(threads|warp)\(\)/(void)0/" "$f" >"$work/$n.cu"
    emu_kernel "$work/$n.cu" "$work/$n.cpp" "$work/$n.o"
    cp "$emu_out/libemu-kernels.a" "$work/lib.a"
    (cd "$work" && ar rcs lib.a "$n.o")
    how=""
    for t in $tests; do
      tn=$(basename "$t" .c)
      emu_test "$t" "$work/lib.a" "$work/$tn"
      for o in forward reverse; do
        # (global memory's check once, as ci/cuda-emu.sh runs it)
        plain=all && [ "$o" = reverse ] && plain=shared
        CUDA_EMU_ORDER=$o CUDA_EMU_PLAIN=$plain "$work/$tn" >"$work/run.txt" 2>&1 && continue
        if grep -q '^cuda-emu:' "$work/run.txt"; then how="$how $tn/$o:report"
        elif grep -q 'exception: \|Sanitizer' "$work/run.txt"; then how="$how $tn/$o:crash"
        else how="$how $tn/$o:bits"; fi
      done
    done
    if [ -n "$how" ]; then echo "$f:$ln caught$how"; else echo "$f:$ln MISSED"; fi
  done
done
