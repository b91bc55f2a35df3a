#!/bin/sh
# The GPU tests without a GPU: every kernels/*.cu is compiled as plain C++
# on the CPU stand-in of ci/cuda_emu/emu.h (blocks in turn, the threads of
# a block coroutines on one OS thread with real barriers and warp ballots,
# ci/cuda_emu/grid.cpp; host memory), linked with the library minus its
# CUDA objects, and every tests/test_cuda_*.c but the cuBLASLt one is run
# against it (matmul's entry points are the CPU kernels there:
# ci/cuda_emu/matmul_standin.cpp). This checks the kernels' logic and the
# tests' (indices, reduction orders, barriers, aliasing), not nvcc's code
# generation: on a GPU machine ci/gpu-check.sh is the proof. Under two
# minutes on 2 cores, compiling included. NCCL is
# ci/cuda_emu/nccl_standin.c (bytes over MPI), loaded through
# PGOLF_NCCL_LIBRARY as pgolf loads libnccl.
# Streams are queues run as late as allowed (CUDA_EMU_SCHEDULE, default
# lazy; see ci/cuda_emu/emu.h) and unordered accesses abort (CUDA_EMU_RACES),
# so a missing event or synchronisation fails here; the stand-in's own
# tests of that, ci/cuda_emu/streams_selftest.cu, and of its barriers
# (a hang a GPU would have is reported, named), ci/cuda_emu/grid_selftest.cu,
# run first. A shared or global memory access that nothing orders with
# another thread's (no __syncthreads between warps, no __syncwarp between
# lanes, and nothing at all between two blocks of a launch) is reported
# whatever the data: the kernels are built with gcc's -fsanitize=thread
# instrumentation, which calls the stand-in at each load and store
# (ci/cuda_emu/grid.cpp). Each test also runs twice: blocks and threads
# in order, then last first (CUDA_EMU_ORDER=reverse, with the check of
# global memory left out: it is the same in any order and most of the
# check's cost), so a missing barrier also shows in the bits of one run
# (the only check of that kind under CUDA_EMU_SANITIZE, which excludes
# the instrumentation).
# Needs build/release/libpgolf.a (make build), g++ and python3.
# CUDA_EMU_SANITIZE=1: the kernels, the stand-in and the tests built with
# AddressSanitizer and UBSan and linked with make sanitize's library
# (build/sanitize; the stand-in announces its stack switches to ASan), in
# build/cuda-emu-sanitize (ci/cuda_emu/build.sh): an index past an array
# (a __shared__ one, the device's memory) or undefined arithmetic in a
# kernel stops the test with the sanitizer's report, as
# compute-sanitizer's memcheck would on a GPU.
# CUDA_EMU_REVERSE=0 leaves the reverse-order runs out: .ci/run does so
# under CUDA_EMU_SANITIZE, after the unsanitized runs made them with the
# race check, because the order moves no index, so the sanitizers would
# find nothing there that the first order does not show.
# Exits 1 if a test fails.
#   sh ci/cuda-emu.sh [tests/test_cuda_NAME.c...]   (default: all but matmul)
set -eu
cd "$(dirname "$0")/.."
. ci/cuda_emu/build.sh
out=$emu_out
lib=$emu_lib
[ -f "$lib" ] || { echo "cuda-emu: no $lib (run make build, or make sanitize, first)"; exit 2; }
# CUDA_EMU_PREBUILT=1: the stand-in, its kernels and pgolf as an earlier
# PGOLF_EMU_ONLY_BINARY=1 run of this script left them in $out, not built
# again (.ci/run builds once and then runs this script and
# ci/cuda-emu-train.sh side by side, which must not rebuild under each other;
# nothing checks that the build is current).
emu="$out/emu.o $out/grid.o"
if [ "${CUDA_EMU_PREBUILT:-0}" = 1 ]; then
  [ -x "$out/pgolf" ] && [ -f "$out/libemu-kernels.a" ] && [ -f "$out/libpgolf-cpu.a" ] ||
    { echo "cuda-emu: CUDA_EMU_PREBUILT=1 and no build in $out"; exit 2; }
else
  mkdir -p "$out/src"
  # shellcheck disable=SC2086
  g++ $CXXFLAGS -c -o "$out/emu.o" ci/cuda_emu/emu.cpp
  # shellcheck disable=SC2086
  g++ $CXXFLAGS -c -o "$out/grid.o" ci/cuda_emu/grid.cpp
  objs=""
  for f in kernels/*.cu; do
    n=$(basename "$f" .cu)
    if [ "$n" = matmul ]; then
      # cuBLASLt has no stand-in: ci/cuda_emu/matmul_standin.cpp computes the
      # CUDA entry points with the CPU kernels (so test_cuda_matmul, which
      # tests cuBLASLt itself, is not run here).
      # shellcheck disable=SC2086
      g++ $CXXFLAGS -c -o "$out/$n.o" ci/cuda_emu/matmul_standin.cpp
      objs="$objs $out/$n.o"
      continue
    fi
    emu_kernel "$f" "$out/src/$n.cpp" "$out/$n.o"
    objs="$objs $out/$n.o"
  done
  # An archive, so a test links only the kernels it calls.
  rm -f "$out/libemu-kernels.a"
  # shellcheck disable=SC2086
  ar rcs "$out/libemu-kernels.a" $objs
  cp "$lib" "$out/libpgolf-cpu.a"
  # shellcheck disable=SC2046
  ar d "$out/libpgolf-cpu.a" $(ar t "$out/libpgolf-cpu.a" | grep '\.cu\.o$')
  # pgolf itself on the stand-in (ci/cuda-emu-train.sh trains with it),
  # exporting the runtime's symbols (-rdynamic) to the dlopen'ed NCCL
  # stand-in, which synchronises with the streams it is given.
  # shellcheck disable=SC2046,SC2086
  cc $emu_san -rdynamic -o "$out/pgolf" "$(dirname "$lib")/obj/common/pgolf.o" $emu -Wl,--start-group \
    "$out/libemu-kernels.a" "$out/libpgolf-cpu.a" -Wl,--end-group -fopenmp -lcrypto -ljansson -lz \
    -llzma -lbrotlidec -lpthread -ldl -lm -lstdc++ $(pkg-config --libs ompi-c 2>/dev/null)
  # NCCL's stand-in (bytes over MPI), loaded as pgolf loads libnccl; without
  # Open MPI's development files there is none (the NCCL tests then load libnccl).
  if pkg-config --exists ompi-c; then
    # shellcheck disable=SC2046
    cc -std=c11 -O1 -fPIC -shared -Wall -Wextra -Werror $(pkg-config --cflags ompi-c) -o "$out/libnccl-standin.so" \
      ci/cuda_emu/nccl_standin.c $(pkg-config --libs ompi-c)
  fi
fi
if pkg-config --exists ompi-c; then
  PGOLF_NCCL_LIBRARY=$(pwd)/$out/libnccl-standin.so
  export PGOLF_NCCL_LIBRARY
fi
[ "${PGOLF_EMU_ONLY_BINARY:-0}" = 1 ] && exit 0
bad=0
# The stand-in's stream model: stale bits and reported races without the
# events, the right bits with them, under each schedule.
python3 ci/cuda_emu/launches.py ci/cuda_emu/streams_selftest.cu "$out/src/streams_selftest.cpp"
# shellcheck disable=SC2086
g++ $CXXFLAGS -include ci/cuda_emu/emu.h -o "$out/streams_selftest" "$out/src/streams_selftest.cpp" \
  $emu -lpthread
if "$out/streams_selftest" >"$out/streams_selftest.txt" 2>&1; then
  echo "ok streams_selftest on the CPU stand-in: $(grep -c '^ok' "$out/streams_selftest.txt") checks"
else
  echo "FAIL streams_selftest on the CPU stand-in: see $out/streams_selftest.txt"
  bad=1
fi
# Its barriers and ballots: right answers, and each barrier a GPU would
# hang on reported with the kernel, block and thread; with both of the
# coroutines' switches (CUDA_EMU_CONTEXT, ci/cuda_emu/grid.cpp).
python3 ci/cuda_emu/launches.py ci/cuda_emu/grid_selftest.cu "$out/src/grid_selftest.cpp"
# shellcheck disable=SC2086
g++ $CXXFLAGS $emu_plain -rdynamic -include ci/cuda_emu/emu.h -o "$out/grid_selftest" "$out/src/grid_selftest.cpp" $emu
for ctx in asm ucontext; do
  if CUDA_EMU_CONTEXT=$ctx "$out/grid_selftest" >"$out/grid_selftest-$ctx.txt" 2>&1; then
    echo "ok grid_selftest ($ctx) on the CPU stand-in: $(grep -c '^ok' "$out/grid_selftest-$ctx.txt") checks"
  else
    echo "FAIL grid_selftest ($ctx) on the CPU stand-in: see $out/grid_selftest-$ctx.txt"
    bad=1
  fi
done
if [ "${CUDA_EMU_REVERSE:-1}" = 0 ]; then
  echo "(CUDA_EMU_REVERSE=0: the runs with blocks and threads last first are left out)"
fi
for t in ${*:-$(ls tests/test_cuda_*.c | grep -v 'test_cuda_matmul\.c')}; do
  n=$(basename "$t" .c)
  emu_test "$t" "$out/libemu-kernels.a" "$out/$n"
  if "$out/$n" >"$out/$n.txt" 2>&1; then
    echo "ok $n on the CPU stand-in: $(sed -n 's/^\[  PASSED  \] //p' "$out/$n.txt")"
  else
    echo "FAIL $n on the CPU stand-in: see $out/$n.txt"
    bad=1
  fi
  # Again with blocks and threads run last first: a barrier missing
  # between two threads' accesses to shared memory, or a block reading
  # another's output, shows in one order or the other
  # (CUDA_EMU_ORDER, ci/cuda_emu/grid.cpp).
  if [ "${CUDA_EMU_REVERSE:-1}" = 0 ]; then
    :
  elif CUDA_EMU_ORDER=reverse CUDA_EMU_PLAIN=shared "$out/$n" >"$out/$n-reverse.txt" 2>&1; then
    echo "ok $n (CUDA_EMU_ORDER=reverse) on the CPU stand-in: $(sed -n 's/^\[  PASSED  \] //p' "$out/$n-reverse.txt")"
  else
    echo "FAIL $n (CUDA_EMU_ORDER=reverse) on the CPU stand-in: see $out/$n-reverse.txt"
    bad=1
  fi
  # The tensor-core attention again with another adder than the CPU's
  # (ci/cuda_emu/emu.h): its results then hold only to the tolerance a GPU
  # is held to, which is what this exercises.
  [ "$n" = test_cuda_attention ] || continue
  if CUDA_EMU_MMA=wide CUDA_EMU_PLAIN=shared "$out/$n" >"$out/$n-wide.txt" 2>&1; then
    echo "ok $n (CUDA_EMU_MMA=wide: the tolerance) on the CPU stand-in: $(sed -n 's/^\[  PASSED  \] //p' "$out/$n-wide.txt")"
  else
    echo "FAIL $n (CUDA_EMU_MMA=wide) on the CPU stand-in: see $out/$n-wide.txt"
    bad=1
  fi
done
exit $bad
