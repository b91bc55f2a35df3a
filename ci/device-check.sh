#!/bin/sh
# The GPU proof in one call of the device tool, which lends a session one
# GPU machine for 15 minutes of device time, one command of at most 10:
#   run(command="sh ci/device-check.sh", carry=["build/device"], timeout_s=600)
# after `sh ci/device-bundle.sh` here. Each step leaves its result in $OUT
# (the folder the tool brings back; at most 8 files):
#   probe.txt  the machine: GPUs, driver, nvcc, PyTorch, the tools and
#              headers it has, where cuBLASLt and NCCL are;
#   build.txt  where this pgolf comes from: the binaries of the bundle
#              (build/device, ci/device-bundle.sh) when they were built from
#              this tree's sources (the digest of --digest), else a build
#              on the machine (make build) when it has the headers, else
#              none, said plainly (every row then fails; DEVICE_BUILD=0
#              never builds);
#   rows.tsv   ci/gpu-check.sh's rows as they come, so that a run cut off
#              still reports what it did;
#   table.txt  the table (gpu-check's, or made from the rows so far);
#   logs.tgz   gpu-check's logs (files under 1 MB: no artifacts).
# gpu-check runs in its own process group under DEVICE_BUDGET_S seconds
# (default 480: the call's 600 less the packing and the transfer); past
# that it is stopped and the table says after which row. The bundle's
# libraries reach pgolf, the tests, jq and bwrap only (through wrappers),
# never PyTorch. The baseline rows use the bundle's train_gpt.py on the
# demo data, ITERATIONS (default 20), BENCH_STEPS (default 5) and
# BENCH_SKIP (default 1): on an H200 (docs/GPU-RUNS.md) a baseline step of
# pgolf took 11.8 s, so the bench's two pgolf runs of 20 steps alone would
# outlast a call. Seen there: the GPU tests, the tiny-preset training and
# replay rows, the goldens and the 1-GPU world row took 61 s together; the
# bench with 4 steps 190 s; ci/gpu-profile.sh about 70 s. A lease of 15
# minutes fits two calls: GPU_CHECK_SECTIONS (ci/gpu-check.sh) splits the
# rows between them.
# Exit 0 iff gpu-check passed every row.
#   sh ci/device-check.sh --digest    the source digest (for the bundle)
set -u
cd "$(dirname "$0")/.." || exit 2

# The sources the binaries are built from: the parts, the tests, the
# Makefile. Run where the bundle is made and where it is used.
digest() {
  { find common formats kernels manifests trainer verifier tests -maxdepth 1 -type f \
      \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print; echo Makefile; } |
    LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-64
}
if [ "${1:-}" = --digest ]; then digest; exit 0; fi

out=${OUT:?OUT must name the folder the results go to}
bundle=${DEVICE_BUNDLE:-build/device}
budget=${DEVICE_BUDGET_S:-480}
work=${GPU_CHECK_OUT:-/tmp/pgolf-gpu-check}
mkdir -p "$out"
bundle=$(cd "$bundle" 2>/dev/null && pwd) || bundle=

# find_lib NAME: a folder holding the shared library NAME (the loader's
# cache, CUDA's folders, then the Python packages' nvidia/ wheels).
find_lib() {
  p=$(ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; exit }')
  if [ -n "$p" ]; then dirname "$p"; return 0; fi
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-*/lib64; do
    if [ -e "$d/$1" ]; then echo "$d"; return 0; fi
  done
  for s in $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null); do
    p=$(find "$s/nvidia" -name "$1" 2>/dev/null | head -n 1)
    if [ -n "$p" ]; then dirname "$p"; return 0; fi
  done
  return 1
}

has_header() { # HEADER: the C compiler finds it
  printf '#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <setjmp.h>\n#include <%s>\n' "$1" |
    cc -E -x c - >/dev/null 2>&1
}

# ---- probe ----
cublas_dir=$(find_lib libcublasLt.so.13) || cublas_dir=
nccl_dir=$(find_lib libnccl.so.2) || nccl_dir=
missing_headers=
for h in jansson.h cmocka.h openssl/sha.h zlib.h lzma.h brotli/decode.h; do
  has_header "$h" || missing_headers="$missing_headers $h"
done
{
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv,noheader 2>&1 |
    sed 's/^/gpu /'
  echo "os $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"), $(ldd --version 2>/dev/null | head -n 1)"
  echo "nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 \2/p')"
  echo "python $(python3 -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1)"
  for t in make cc nvcc ptxas cuobjdump jq bwrap mpirun torchrun; do
    echo "tool $t $(command -v "$t" || echo missing)"
  done
  echo "headers missing:${missing_headers:- none}$(pkg-config --exists ompi-c 2>/dev/null || echo ' (and Open MPI: no pkg-config ompi-c)')"
  echo "cublasLt ${cublas_dir:-not found}"
  echo "nccl ${nccl_dir:-not found}"
  echo "bundle ${bundle:-none}"
  [ -n "$bundle" ] && sed -n '1,6p' "$bundle/MANIFEST" | sed 's/^/bundle /'
} >"$out/probe.txt" 2>&1
cat "$out/probe.txt"

# ---- build: the bundle's binaries, or a build here ----
# wrap BIN REAL: BIN runs REAL with the bundle's libraries (and cuBLASLt's
# folder) first on the loader's path; nothing else sees them.
wrap() {
  mkdir -p "$(dirname "$1")"
  rm -f "$1"
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
    "$bundle/lib${cublas_dir:+:$cublas_dir}" "$2" >"$1"
  chmod +x "$1"
}
prebuilt=
{
  want=$(digest)
  if [ -n "$bundle" ] && [ -f "$bundle/MANIFEST" ] && [ -f "$bundle/release.tar.xz" ]; then
    have=$(sed -n 's/^source_digest //p' "$bundle/MANIFEST")
    if [ "$have" = "$want" ]; then
      real=$bundle/real
      rm -rf "$real" && mkdir -p "$real"
      tar xJf "$bundle/release.tar.xz" -C "$real"
      wrap pgolf "$real/pgolf"
      wrap build/release/pgolf "$real/build/release/pgolf"
      for t in "$real"/build/release/tests/test_cuda_*; do wrap "build/release/tests/$(basename "$t")" "$t"; done
      for t in jq bwrap; do
        command -v "$t" >/dev/null 2>&1 || wrap "$bundle/wrapped/$t" "$bundle/bin/$t"
      done
      prebuilt="bundle built on $(sed -n 's/^built_on //p' "$bundle/MANIFEST"), nvcc $(sed -n 's/^nvcc //p' "$bundle/MANIFEST"), commit $(sed -n 's/^commit //p' "$bundle/MANIFEST"), sources $want"
      echo "prebuilt: $prebuilt"
    else
      echo "the bundle was built from other sources (digest $have, this tree $want): run ci/device-bundle.sh again; building here instead"
    fi
  else
    echo "no bundle (build/device: run ci/device-bundle.sh and carry it); building here"
  fi
  if [ -z "$prebuilt" ]; then
    if [ "${DEVICE_BUILD:-1}" = 0 ]; then
      echo "not building here (DEVICE_BUILD=0)"
    elif [ -n "$missing_headers" ]; then
      echo "cannot build here: headers missing:$missing_headers"
    elif make -j"$(nproc)" build; then
      echo "built here: $(./pgolf version | tr '\n' ' ')"
    else
      echo "the build here failed"
    fi
  fi
} >"$out/build.txt" 2>&1
tail -n 3 "$out/build.txt"
[ -d "$bundle/wrapped" ] && PATH=$PATH:$bundle/wrapped
if [ -z "$nccl_dir" ] || ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
  [ -n "$nccl_dir" ] && PGOLF_NCCL_LIBRARY=$nccl_dir/libnccl.so.2 && export PGOLF_NCCL_LIBRARY
fi
if [ -n "$bundle" ] && [ -f "$bundle/official/train_gpt.py" ]; then
  PGOLF_BASELINE_SCRIPT=$bundle/official/train_gpt.py
  PGOLF_BASELINE_DATA=$(pwd)/data/demo
  PGOLF_BASELINE_TOKENIZER=$(pwd)/data/tokenizers/fineweb_1024_bpe.model
  export PGOLF_BASELINE_SCRIPT PGOLF_BASELINE_DATA PGOLF_BASELINE_TOKENIZER
fi
ITERATIONS=${ITERATIONS:-20} BENCH_STEPS=${BENCH_STEPS:-5} BENCH_SKIP=${BENCH_SKIP:-1} GPU_CHECK_OUT=$work GPU_CHECK_PREBUILT=$prebuilt
export PATH ITERATIONS BENCH_STEPS BENCH_SKIP GPU_CHECK_OUT GPU_CHECK_PREBUILT

# ---- gpu-check under the deadline ----
check=${DEVICE_GPU_CHECK:-ci/gpu-check.sh}
start=$(date +%s)
setsid sh "$check" >"$out/gpu-check.txt" 2>&1 &
pid=$!
stopped=
while kill -0 "$pid" 2>/dev/null; do
  [ -f "$work/rows" ] && cp "$work/rows" "$out/rows.tsv"
  if [ $(($(date +%s) - start)) -ge "$budget" ]; then
    kill -TERM "-$pid" 2>/dev/null # the group (dash's kill takes no --)
    sleep 5
    kill -KILL "-$pid" 2>/dev/null
    stopped=1
    break
  fi
  sleep 2
done
wait "$pid" 2>/dev/null
rc=$?
[ -f "$work/rows" ] && cp "$work/rows" "$out/rows.tsv"
[ -f "$out/rows.tsv" ] || : >"$out/rows.tsv"
elapsed=$(($(date +%s) - start))

# ---- the table and the logs ----
{
  if [ -z "$stopped" ] && grep -q '^| check' "$out/gpu-check.txt"; then
    sed -n '/^| check/,$p' "$out/gpu-check.txt"
  else
    printf '| %-58s | %-9s | %s\n' "check" "result" "detail"
    printf '|%s|%s|%s\n' "------------------------------------------------------------" "-----------" "--------"
    while IFS="$(printf '\t')" read -r a b c; do printf '| %-58s | %-9s | %s\n' "$a" "$b" "$c"; done <"$out/rows.tsv"
    if [ -n "$stopped" ]; then
      echo "stopped at the deadline (${budget} s) after $(wc -l <"$out/rows.tsv") rows; the rows after \"$(tail -n 1 "$out/rows.tsv" | cut -f1)\" were not reached"
      rc=1
    else
      echo "gpu-check exited $rc without its table: $(tail -n 1 "$out/gpu-check.txt")"
    fi
  fi
  echo "gpu-check: ${elapsed} s; build: $(tail -n 1 "$out/build.txt")"
} >"$out/table.txt"
cat "$out/table.txt"
if [ -d "$work" ]; then
  (cd "$(dirname "$work")" && find "$(basename "$work")" -type f -size -1024k | tar czf "$out/logs.tgz" -T -)
fi
[ "$rc" -eq 0 ] && [ -z "$stopped" ]
