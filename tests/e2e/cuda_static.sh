#!/bin/sh
# The static checks of the CUDA kernels (ci/cuda-static.sh) pass on the
# tree, and are not blind: a planted floating-point atomicAdd is caught in
# the PTX (and the SASS, where cuobjdump is installed), an integer counter
# is not, a kernel that spills registers is caught, and so is a file
# meant for the tensor cores without HMMA in its SASS, and a grid-stride
# loop that divides its index per element (unless the allow-list names
# the kernel). Without nvcc every check is a SKIP with that reason.
# suite: sources (reads the tree and its tools, not the build: tests/run.sh)
. "$(dirname "$0")/lib.sh"

out=$(sh ci/cuda-static.sh 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E '^(ok|FAIL|SKIP) '
[ "$rc" -eq 0 ] || fail "cuda static checks exit 0 on the tree" "exit $rc"
case "$out" in "SKIP cuda static checks: no nvcc"*) exit 0 ;; esac

cat >"$TMP/racy.cu" <<'CU'
__global__ void sum_racy(const float *x, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}
__global__ void count(unsigned *c) { atomicAdd(c, 1u); }
CU
cat >"$TMP/spilly.cu" <<'CU'
__global__ void __launch_bounds__(1024, 2) spilly(float *x) {
  float a[96];
#pragma unroll
  for (int i = 0; i < 96; i++) a[i] = x[i * blockDim.x + threadIdx.x];
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 96; i++) s = s + a[i] * a[95 - i];
#pragma unroll
  for (int i = 0; i < 96; i++) x[i * blockDim.x + threadIdx.x] = a[i] * s;
}
CU
cat >"$TMP/counter.cu" <<'CU'
__global__ void count(unsigned *c) { atomicAdd(c, 1u); }
CU
sh ci/cuda-static.sh "$TMP/racy.cu" >"$TMP/racy.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^FAIL racy: no floating-point atomics in PTX: .*atom.global.add.f32' "$TMP/racy.out"; then
  ok "a float atomicAdd is caught in the PTX"
else
  fail "a float atomicAdd is caught in the PTX" "exit $rc: $(head -c 400 "$TMP/racy.out")"
fi
if grep -q '^SKIP racy: SASS check' "$TMP/racy.out"; then
  skip "a float atomicAdd is caught in the SASS" "no cuobjdump here"
elif grep -q '^FAIL racy: no floating-point atomics in SASS: .*RED.*F32' "$TMP/racy.out"; then
  ok "a float atomicAdd is caught in the SASS"
else
  fail "a float atomicAdd is caught in the SASS" "$(head -c 400 "$TMP/racy.out")"
fi
if sh ci/cuda-static.sh "$TMP/counter.cu" >"$TMP/counter.out" 2>&1; then
  ok "an integer atomic counter is allowed"
else
  fail "an integer atomic counter is allowed" "$(head -c 400 "$TMP/counter.out")"
fi
sh ci/cuda-static.sh "$TMP/spilly.cu" >"$TMP/spilly.out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^FAIL spilly: no register spills: .*spill stores' "$TMP/spilly.out"; then
  ok "a kernel that spills registers is caught"
else
  fail "a kernel that spills registers is caught" "exit $rc: $(head -c 400 "$TMP/spilly.out")"
fi
# A file that means to use the tensor cores (it writes mma.sync) but whose
# instruction was compiled out has no HMMA: caught where SASS is read.
cat >"$TMP/nomma.cu" <<'CU'
__global__ void nomma(float *d, const unsigned *a) {
#if 0
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 ...");
#endif
  d[threadIdx.x] = (float)a[threadIdx.x];
}
CU
sh ci/cuda-static.sh "$TMP/nomma.cu" >"$TMP/nomma.out" 2>&1
rc=$?
if grep -q '^SKIP nomma: SASS check' "$TMP/nomma.out"; then
  skip "a lost tensor-core path is caught in the SASS" "no cuobjdump here"
elif [ "$rc" -eq 1 ] && grep -q '^FAIL nomma: tensor-core instructions in SASS: no HMMA' "$TMP/nomma.out"; then
  ok "a lost tensor-core path is caught in the SASS"
else
  fail "a lost tensor-core path is caught in the SASS" "exit $rc: $(head -c 400 "$TMP/nomma.out")"
fi

# A division per element of a grid-stride loop is caught; one before the
# loop is not; the allow-list lets a named kernel divide, and a list line
# without its reason is refused, naming the line.
cat >"$TMP/divides.cu" <<'CU'
__global__ void divides(float *y, const float *s, unsigned long n, int d) {
  unsigned long stride = (unsigned long)gridDim.x * blockDim.x;
  for (unsigned long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = y[i] * s[i % (unsigned long)d];
}
CU
cat >"$TMP/once.cu" <<'CU'
__global__ void once(float *y, unsigned long n, int d) {
  unsigned long stride = (unsigned long)gridDim.x * blockDim.x;
  unsigned long first = blockIdx.x * blockDim.x + threadIdx.x;
  float c = (float)(first % (unsigned long)d);
  for (unsigned long i = first; i < n; i += stride) y[i] = y[i] * c;
}
CU
printf '# planted\ndivides  the test says so\n' >"$TMP/divides.allow"
printf 'divides\n' >"$TMP/noreason.allow"
sh ci/cuda-static.sh "$TMP/divides.cu" "$TMP/once.cu" >"$TMP/div.out" 2>&1
rc=$?
if grep -q '^SKIP divides: SASS check' "$TMP/div.out"; then
  skip "a division per element is caught in the SASS" "no cuobjdump here"
else
  if [ "$rc" -eq 1 ] && grep -q '^FAIL divides: no integer division in a loop: divides 0x' "$TMP/div.out" &&
    grep -q '^ok once: no integer division in a loop' "$TMP/div.out"; then
    ok "a division per element is caught in the SASS, one before the loop is not"
  else
    fail "a division per element is caught in the SASS, one before the loop is not" \
      "exit $rc: $(grep -i division "$TMP/div.out" | head -c 400)"
  fi
  if SASS_DIVISIONS_ALLOW="$TMP/divides.allow" sh ci/cuda-static.sh "$TMP/divides.cu" >"$TMP/div2.out" 2>&1; then
    ok "the allow-list lets a named kernel divide"
  else
    fail "the allow-list lets a named kernel divide" "$(grep -i division "$TMP/div2.out" | head -c 400)"
  fi
  SASS_DIVISIONS_ALLOW="$TMP/noreason.allow" sh ci/cuda-static.sh "$TMP/divides.cu" >"$TMP/div3.out" 2>&1
  rc=$?
  if [ "$rc" -eq 1 ] && grep -q "noreason.allow:1: 'divides' has no reason after it" "$TMP/div3.out"; then
    ok "an allow-list line without a reason is refused, naming the line"
  else
    fail "an allow-list line without a reason is refused, naming the line" \
      "exit $rc: $(grep -i division "$TMP/div3.out" | head -c 400)"
  fi
fi
