#!/bin/sh
# Check the Debian packages a make target needs; install the missing ones
# when run as root, otherwise print the exact apt-get line and fail.
#   sh ci/deps.sh build|test|demo|fuzz
set -eu
mode=${1:-build}

build_pkgs="make gcc libc6-dev libssl-dev libjansson-dev zlib1g-dev liblzma-dev libbrotli-dev"
case "$mode" in
  build|demo) pkgs="$build_pkgs" ;;
  test)       pkgs="$build_pkgs libcmocka-dev jq bubblewrap chromium imagemagick libxml2-utils openmpi-bin libopenmpi-dev iproute2" ;;
  fuzz)       pkgs="$build_pkgs clang" ;;
  *) echo "ci/deps.sh: unknown mode '$mode'" >&2; exit 2 ;;
esac

missing_of() {
  out=""
  for p in "$@"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || out="$out $p"
  done
  echo $out
}

install_or_explain() {
  missing=$(missing_of "$@")
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "pgolf: installing missing Debian packages: $missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "pgolf: missing Debian packages; run:" >&2
    echo "  sudo apt-get install -y$(printf ' %s' $missing)" >&2
    exit 1
  fi
}

install_or_explain $pkgs

# libFuzzer's runtime and clang's OpenMP ship in packages named after
# clang's major version.
if [ "$mode" = fuzz ]; then
  major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
  install_or_explain "libclang-rt-$major-dev" "libomp-$major-dev"
fi
