#!/bin/sh
# det_math: the training and evaluation kernels reference no libm
# elementary function (glibc picks CPU-specific variants at load time), and
# det_math gives the same bits under every compiler and flag set we can
# build it with, equal to a pinned hash (so to the bits of any other
# x86-64 machine that passes this test).
. "$(dirname "$0")/lib.sh"

build=$(dirname "$PGOLF")
objs="$build/obj/kernels/*.o $build/obj/trainer/gpt.o"
# The libm functions whose results differ between glibc variants/versions.
LIBM='^(exp|exp2|exp10|expm1|log|log2|log10|log1p|pow|sin|cos|tan|sincos|tanh|sinh|cosh|atan|atan2|asin|acos|erf|erfc|cbrt|hypot)(f|l)?$'

libm_refs() { nm -u "$@" 2>/dev/null | awk '{print $NF}' | sed 's/@.*//' | grep -E "$LIBM" | sort -u; }

# shellcheck disable=SC2086
if ls $objs >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  refs=$(libm_refs $objs)
  if [ -z "$refs" ]; then ok "kernels reference no libm elementary function"; else
    fail "kernels reference no libm elementary function" "found: $(echo $refs)"
  fi
else
  fail "kernel objects present" "no $build/obj/kernels/*.o"
fi

# The scan is not blind: an object calling expf and tanhf is caught.
printf '#include <math.h>\nfloat f(float x) { return expf(x) + tanhf(x); }\n' >"$TMP/uses_libm.c"
cc -O2 -c -o "$TMP/uses_libm.o" "$TMP/uses_libm.c"
if [ "$(libm_refs "$TMP/uses_libm.o" | tr '\n' ' ')" = "expf tanhf " ]; then
  ok "libm scan catches expf and tanhf"
else fail "libm scan catches expf and tanhf" "got: $(libm_refs "$TMP/uses_libm.o")"; fi

PINNED=11a72e8a57fcddba
src="tests/e2e/det_math_hash.c kernels/det_math.c"
n=0
for cfg in "cc -O0" "cc -O2" "cc -O3 -mavx2 -mfma" "cc -O2 -fopenmp -g" "clang -O2" "clang -O0 -mavx2"; do
  set -- $cfg
  command -v "$1" >/dev/null 2>&1 || continue
  n=$((n + 1))
  # shellcheck disable=SC2086
  if $cfg -std=c11 -Wall -Wextra -Werror -ffp-contract=off -I. -o "$TMP/h$n" $src 2>"$TMP/err"; then
    got=$("$TMP/h$n")
    if [ "$got" = "$PINNED" ]; then ok "det_math bits with $cfg"; else
      fail "det_math bits with $cfg" "hash $got, pinned $PINNED"
    fi
  else fail "det_math builds with $cfg" "$(head -c 300 "$TMP/err")"; fi
done

# The hash sees a one-function change: glibc's tanhf in place of det_tanhf.
cc -std=c11 -O2 -ffp-contract=off -I. -Ddet_tanhf=tanhf -include math.h -c \
  -o "$TMP/hash_libm.o" tests/e2e/det_math_hash.c
cc -std=c11 -O2 -ffp-contract=off -I. -c -o "$TMP/det_math.o" kernels/det_math.c
cc -o "$TMP/hlibm" "$TMP/hash_libm.o" "$TMP/det_math.o" -lm
got=$("$TMP/hlibm")
if [ "$got" != "$PINNED" ]; then ok "hash differs with glibc tanhf"; else
  fail "hash differs with glibc tanhf" "same hash $got"
fi
