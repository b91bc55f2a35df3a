#!/bin/sh
# What can be proven about the CUDA kernels without a GPU, for every
# kernels/*.cu (or the files given):
#   - the device flags are pinned: sm_90, no fused multiply-add, IEEE
#     division and square root, denormals kept, never fast math;
#   - the PTX has no floating-point atomic (atom/red on f16, bf16, f32,
#     f64): a float added atomically lands in an order the GPU's timing
#     decides, and pgolf's reductions must give the same bits every run
#     (integer counters are allowed);
#   - where cuobjdump is found (PATH, the CUDA toolkit, or PyPI's
#     nvidia-cuda-cuobjdump with nvidia-cuda-nvdisasm), the same on SASS;
#   - ptxas -v reports no register spills; registers and shared memory of
#     each kernel are printed;
#   - each file compiles with the headers of the libraries pgolf links
#     (jansson, OpenSSL, zlib, lzma, brotli, cmocka, Open MPI) shadowed by
#     ones that stop the compiler: the GPU machine may lack them, and its
#     static checks compile these files there (its 2026-11-28 run failed
#     22 rows on kernels/cuda_common.h's jansson.h);
#   - a file that writes mma.sync in PTX has tensor-core instructions
#     (HMMA) in its SASS: the tensor-core path was compiled, not lost;
#   - no loop in the SASS divides integers (ci/sass_divisions.py: a GPU
#     divides in software, 20 to 70 instructions, and a grid-stride loop
#     would pay that per element) but in the kernels that
#     ci/sass-divisions.allow (or $SASS_DIVISIONS_ALLOW) names with the
#     reason.
# Prints "ok NAME" / "FAIL NAME: why" / "SKIP NAME: why" lines (the e2e
# format) and exits 1 on any FAIL.
#   sh ci/cuda-static.sh [FILE.cu...]
set -u
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })}
if [ -z "$NVCC" ]; then echo "SKIP cuda static checks: no nvcc on this machine"; exit 0; fi
files=${*:-$(ls kernels/*.cu 2>/dev/null)}
[ -n "$files" ] || { echo "SKIP cuda static checks: no kernels/*.cu"; exit 0; }
flags=$(make -s --no-print-directory print-nvcc-flags)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgolf-cuda.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
say_fail() { echo "FAIL $1: $2"; bad=1; }

for want in -arch=sm_90 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false; do
  case " $flags " in *" $want "*) echo "ok device flags pin $want" ;; *) say_fail "device flags pin $want" "flags are: $flags" ;; esac
done
case " $flags " in
  *fast_math* | *fast-math* | *--fmad=true* | *-ftz=true*) say_fail "no fast math in the device flags" "$flags" ;;
  *) echo "ok no fast math in the device flags" ;;
esac

# cuobjdump, and nvdisasm beside it (cuobjdump needs it for -sass).
find_cuobjdump() {
  for c in "$(command -v cuobjdump 2>/dev/null)" "${NVCC%/nvcc}/cuobjdump"; do
    [ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return; }
  done
  py=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "bin"))' 2>/dev/null)
  [ -n "$py" ] && [ -x "$py/cuobjdump" ] && [ -x "$py/nvdisasm" ] && echo "$py/cuobjdump"
}
CUOBJDUMP=$(find_cuobjdump)
allow=${SASS_DIVISIONS_ALLOW:-ci/sass-divisions.allow}

# The libraries' headers, each an #error naming itself.
for h in jansson.h cmocka.h mpi.h zlib.h lzma.h brotli/decode.h brotli/encode.h openssl/bio.h \
  openssl/crypto.h openssl/err.h openssl/evp.h openssl/pem.h openssl/x509.h; do
  mkdir -p "$tmp/shadow/$(dirname "$h")"
  echo "#error \"<$h>: a library header the GPU machine may lack; kernels/*.cu must not need it\"" \
    >"$tmp/shadow/$h"
done

FLOAT_ATOMIC_PTX='(^|[^a-z_])(atom|red)\.[a-z0-9_.]*\.(f16|f16x2|bf16|bf16x2|f32|f64)([^a-z0-9]|$)'
FLOAT_ATOMIC_SASS='(^|[^A-Z])(RED|REDG|REDS|ATOM|ATOMG|ATOMS)\.[A-Z0-9_.]*(F16|F32|F64|BF16)'

for f in $files; do
  name=$(basename "$f" .cu)
  # shellcheck disable=SC2086
  if ! "$NVCC" $flags -I"$tmp/shadow" -ptx -o "$tmp/$name.ptx" "$f" 2>"$tmp/$name.err"; then
    say_fail "$name compiles to PTX" "$(head -c 400 "$tmp/$name.err")"
    continue
  fi
  hits=$(grep -nE "$FLOAT_ATOMIC_PTX" "$tmp/$name.ptx" | head -3)
  if [ -z "$hits" ]; then echo "ok $name: no floating-point atomics in PTX"; else
    say_fail "$name: no floating-point atomics in PTX" "$hits"
  fi
  # shellcheck disable=SC2086
  if ! "$NVCC" $flags -Xptxas -v -c -o "$tmp/$name.o" "$f" >"$tmp/$name.v" 2>&1; then
    say_fail "$name compiles" "$(head -c 400 "$tmp/$name.v")"
    continue
  fi
  spills=$(grep -E '[1-9][0-9]* bytes spill (stores|loads)' "$tmp/$name.v" | head -3)
  if [ -z "$spills" ]; then echo "ok $name: no register spills"; else
    say_fail "$name: no register spills" "$spills"
  fi
  # One info line per kernel: registers and shared memory.
  awk '/Compiling entry function/ { k = $0; sub(/.*function .\047?/, "", k); sub(/\047.*/, "", k) }
       /Used [0-9]+ registers/ { r = $0; sub(/.*Used /, "", r); print "info " k ": " r }' "$tmp/$name.v"
  if [ -n "$CUOBJDUMP" ]; then
    if "$CUOBJDUMP" -sass "$tmp/$name.o" >"$tmp/$name.sass" 2>"$tmp/$name.sasserr"; then
      hits=$(grep -E "$FLOAT_ATOMIC_SASS" "$tmp/$name.sass" | head -3)
      if [ -z "$hits" ]; then echo "ok $name: no floating-point atomics in SASS"; else
        say_fail "$name: no floating-point atomics in SASS" "$hits"
      fi
      if ! command -v python3 >/dev/null 2>&1; then
        echo "SKIP $name: integer divisions in loops: no python3 to read the SASS"
      elif div=$(python3 ci/sass_divisions.py --allow "$allow" "$tmp/$name.sass" 2>&1); then
        echo "ok $name: no integer division in a loop (outside $allow)"
      else
        say_fail "$name: no integer division in a loop" "$(echo "$div" | head -3 | tr '\n' ' ')"
      fi
      if grep -q 'mma\.sync' "$f"; then
        n=$(grep -c 'HMMA' "$tmp/$name.sass")
        if [ "$n" -gt 0 ]; then echo "ok $name: $n tensor-core instructions (HMMA) in SASS"; else
          say_fail "$name: tensor-core instructions in SASS" "no HMMA in $name's SASS"
        fi
      fi
    else
      say_fail "$name: SASS readable" "$(head -c 300 "$tmp/$name.sasserr")"
    fi
  else
    echo "SKIP $name: SASS check: no cuobjdump (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)"
  fi
done
exit $bad
