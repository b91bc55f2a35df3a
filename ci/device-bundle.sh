#!/bin/sh
# Prepares build/device/, what a session lent a GPU machine (the `device`
# tool) carries there, so that its short device time goes to the GPU
# checks and not to setting up:
#   run(command="sh ci/device-check.sh", carry=["build/device"], timeout_s=600)
# That machine has CUDA 13 (nvcc, cuBLASLt), PyTorch and torchrun, and
# nothing can be installed on it; it may lack the libraries pgolf links
# (jansson, Open MPI, cmocka, brotli) and the tools ci/gpu-check.sh runs
# (jq, bubblewrap). So this folder holds:
#   release.tar.xz   ./pgolf and build/release/tests/test_cuda_*, built
#                    here with the CUDA path compiled in (the pinned nvcc
#                    flags of the Makefile; the CUDA runtime is static);
#   lib/             the shared libraries those binaries, jq and bwrap need
#                    beyond the C and C++ runtimes and cuBLASLt (which the
#                    machine's CUDA provides);
#   bin/             jq and bwrap;
#   official/train_gpt.py
#                    the challenge's baseline script, for the replay and
#                    speed rows: PGOLF_BASELINE_SCRIPT, or the root
#                    train_gpt.py of a local mirror of openai/parameter-golf
#                    (PGOLF_CHALLENGE_GIT, a git directory). Never part of
#                    pgolf: build/ is not tracked.
#   MANIFEST         what was built from what: the source digest of
#                    `sh ci/device-check.sh --digest` (ci/device-check.sh
#                    refuses binaries built from other sources), the commit,
#                    the compilers, glibc, each file's sha256.
# Built on glibc 2.36 (Debian 12), the libraries load on the machine's
# newer glibc. Needs make build's dependencies and nvcc.
#   sh ci/device-bundle.sh          (prints the MANIFEST; about 5 MB)
set -eu
cd "$(dirname "$0")/.."
out=${DEVICE_BUNDLE:-build/device}
release=build/release

make -j"$(nproc)" build >/dev/null
./pgolf version | grep -q '^cuda yes$' ||
  { echo "device-bundle: this pgolf was built without CUDA (no nvcc): nothing to carry" >&2; exit 2; }

# The GPU tests' binaries (not their .d files).
tests=$(ls "$release"/tests/test_cuda_* | grep -v '\.d$')
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/official"
# shellcheck disable=SC2086
tar cJf "$out/release.tar.xz" pgolf "$release/pgolf" $tests

# The tools gpu-check.sh runs that the machine may lack.
for tool in jq bwrap; do
  p=$(command -v "$tool") || { echo "device-bundle: no $tool here (Debian: jq, bubblewrap)" >&2; exit 2; }
  cp "$p" "$out/bin/$tool"
done

# Their libraries and the binaries', by soname, less those every machine
# with a C++ compiler and CUDA has (a second glibc would break the first).
libs=$(for f in pgolf $tests "$out/bin/jq" "$out/bin/bwrap"; do ldd "$f"; done |
  awk '$2 == "=>" && $3 ~ /^\// { print $1 " " $3 }' | sort -u)
echo "$libs" | while read -r name path; do
  case $name in
    linux-vdso* | ld-linux* | libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | \
      libstdc++.so* | libgcc_s.so* | libcublas*) ;;
    *) cp -L "$path" "$out/lib/$name" ;;
  esac
done

script=${PGOLF_BASELINE_SCRIPT:-}
git_dir=${PGOLF_CHALLENGE_GIT:-/work/.mirror/openai+parameter-golf/repo}
if [ -n "$script" ]; then
  cp "$script" "$out/official/train_gpt.py"
elif git --git-dir="$git_dir" show HEAD:train_gpt.py >"$out/official/train_gpt.py" 2>/dev/null; then
  :
else
  rm -f "$out/official/train_gpt.py"
  echo "device-bundle: no official train_gpt.py (PGOLF_BASELINE_SCRIPT, or PGOLF_CHALLENGE_GIT):" \
    "the replay and speed rows will say skipped" >&2
fi

{
  echo "source_digest $(sh ci/device-check.sh --digest)"
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo none)$(git status --porcelain 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
  echo "built_on $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
  echo "nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), \(V[0-9.]*\).*/\1 \2/p' || echo '?')"
  echo "cc $(${CC:-cc} --version | head -n 1)"
  echo "nvcc_flags $(make -s print-nvcc-flags)"
  (cd "$out" && find . -type f ! -name MANIFEST | LC_ALL=C sort | xargs sha256sum) | sed 's/^/sha256 /'
} >"$out/MANIFEST"
cat "$out/MANIFEST"
echo "device-bundle: $(du -sh "$out" | cut -f1) in $out"
