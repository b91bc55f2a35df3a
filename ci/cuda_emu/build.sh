# The CPU stand-in's build settings and steps, sourced from the repository
# root by ci/cuda-emu.sh (which builds it all), ci/cuda-emu-train.sh and
# ci/emu-barriers.sh (which rebuild one kernel), so they cannot drift.
# Sets emu_out (the build folder), emu_lib (the CPU library the tests
# link), emu_opt, emu_san, emu_plain and CXXFLAGS. CUDA_EMU_SANITIZE=1: ASan and
# UBSan on make sanitize's library, in build/cuda-emu-sanitize, with the
# sanitizers' options exported (leaks unchecked: the tests' device memory
# lives to the end).
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
emu_out=build/cuda-emu
emu_lib=build/release/libpgolf.a
emu_opt=-O2
emu_san=""
# The kernels' loads and stores reported to the stand-in's race check of
# shared and global memory (gcc's ThreadSanitizer instrumentation, with
# grid.cpp's hooks for its runtime); not with ASan, which excludes it.
emu_plain="-fsanitize=thread --param tsan-instrument-func-entry-exit=0"
if [ "${CUDA_EMU_SANITIZE:-0}" = 1 ]; then
  emu_out=build/cuda-emu-sanitize
  emu_lib=build/sanitize/libpgolf.a
  emu_opt=-O1
  emu_san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  emu_plain=""
  case ":${ASAN_OPTIONS:-}:" in
    *:detect_leaks=0:*) ;;
    *) ASAN_OPTIONS=detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS} ;;
  esac
  UBSAN_OPTIONS=print_stacktrace=1
  export ASAN_OPTIONS UBSAN_OPTIONS
fi
CXXFLAGS="-std=c++17 $emu_opt -g1 $emu_san -ffp-contract=off -Wall -Wextra -D_GNU_SOURCE -DPGOLF_HAVE_CUDA -I. -I$CUDA_HOME/include"

# emu_kernel SRC.cu CPP OBJ: a kernel file as plain C++ for the stand-in
# (launches.py rewrites its launches and __shared__ declarations into CPP),
# compiled to OBJ, with the pointers of struct arguments listed for the
# stream race check (arg_pointers.h). Elementwise launches get at most 3 blocks
# (kernels/cuda_common.h), so each thread of the tests' small shapes walks
# many elements.
emu_kernel() {
  python3 ci/cuda_emu/launches.py "$1" "$2"
  # shellcheck disable=SC2086
  g++ $CXXFLAGS $emu_plain -DCUDA_EW_MAX_BLOCKS=3 -Wno-unused-parameter -Wno-unknown-pragmas \
    -include ci/cuda_emu/emu.h -include ci/cuda_emu/arg_pointers.h -c -o "$3" "$2"
}

# emu_test TEST.c KERNELS.a BIN: a GPU test linked with the stand-in
# ($emu_out/emu.o, grid.o), the kernels' archive and the CPU library
# without its CUDA objects ($emu_out/libpgolf-cpu.a).
emu_test() {
  # shellcheck disable=SC2046,SC2086
  cc -std=c11 -Wall -Wextra -Werror $emu_opt $emu_san -ffp-contract=off -fno-strict-aliasing \
    -D_GNU_SOURCE -rdynamic -fopenmp -I. -I"$(dirname "$emu_lib")" -DPGOLF_HAVE_CUDA \
    -I"$CUDA_HOME/include" -o "$3" "$1" "$emu_out/emu.o" "$emu_out/grid.o" -Wl,--start-group "$2" \
    "$emu_out/libpgolf-cpu.a" -Wl,--end-group -lcmocka -fopenmp -lcrypto -ljansson -lz -lpthread -ldl \
    -lm -lstdc++ $(pkg-config --libs ompi-c 2>/dev/null)
}
