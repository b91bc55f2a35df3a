# pgolf train against the official train_gpt.py (golden/train_tiny.json,
# from golden/make_train_golden.py): the tiny preset on the demo data, seed
# 1337, the official 20000-iteration schedule (lr_mul 1 for these steps),
# stopped after 20 steps. The whole loop is exercised: loader spans,
# 8 micro-steps, the float32 mean of their losses, momentum warm-up and
# the optimizers. Step 1 has no optimizer step before its loss, so it is
# compared bit for bit in fp32. After it, float32 results differ from
# PyTorch's in the last bits (summation order of the matmuls, the fp32
# Newton-Schulz; trainer/optimizer.h); with the RoPE tables taken from the
# bf16 inv_freq buffer as the official model has it (kernels/rope.h) the
# 20 fp32 steps stay within 1e-4 (the issue's tolerance; measured 1.9e-5).
# Mixed against the golden's CUDA-policy mixed run (the rounding points
# GPT_MIXED reproduces): within 5e-3 (the issue allows 2e-2; measured
# 3.4e-3; single-ulp bf16 differences from step 1, amplified by Muon).
. "$(dirname "$0")/lib.sh"

# PGOLF_GOLDEN_DEVICE=cuda trains on the GPU instead (ci/gpu-check.sh):
# the same goldens; fp32 within the same 1e-4, mixed within 1e-2 (the
# issue allows 2e-2). cuBLASLt's summation order moves products by float32
# ulps, which flips some bf16 roundings and Muon amplifies the flips:
# measured on an H200, 2026-11-27, 5.1e-3 at step 16 (the CPU's 3.4e-3),
# while the GPU run and the CPU run with the GPU's trees stay within 1.4e-4
# of each other over the 20 steps (ci/gpu-check.sh's row).
dev=""
mixed_tol=5e-3
if [ -n "${PGOLF_GOLDEN_DEVICE:-}" ]; then
  dev="--device $PGOLF_GOLDEN_DEVICE"
  [ "$PGOLF_GOLDEN_DEVICE" = cuda ] && mixed_tol=1e-2
fi
# Under make sanitize (PGOLF_TEST_SAMPLED=1) the runs stop after the
# golden's first 4 steps: every part of the loop at a fifth of the minutes
# (tests/test_util.h says why a sample is enough there).
n=20
[ "${PGOLF_TEST_SAMPLED:-0}" != 0 ] && n=4
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
G=golden/train_tiny.json
cat >"$TMP/golden.json" <<EOF
{"preset": "tiny", "iterations": 20000, "warmdown_iters": 1200, "train_log_every": 0,
 "data": "data/demo", "tokenizer": "data/tokenizers/fineweb_1024_bpe.model"}
EOF

# compare NAME GOLDEN_KEY LOSSES_FILE TOLERANCE [STEPS]: the first STEPS (20).
compare() {
  nsteps=${5:-20}
  jq -r ".$2.steps[] | \"\(.step) \(.train_loss_bits)\"" "$G" >"$TMP/want"
  grep -v '^#' "$3" | awk '{ print $1, $2 }' | head -n "$nsteps" >"$TMP/got"
  awk -v tol="$4" -v nsteps="$nsteps" '
    function f32(h,   b, e, m) { b = 0; h = tolower(substr(h, 3))
      for (i = 1; i <= 8; i++) b = b * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
      s = b >= 2147483648 ? -1 : 1; if (b >= 2147483648) b -= 2147483648
      e = int(b / 8388608); m = b % 8388608
      return s * (1 + m / 8388608) * 2 ^ (e - 127) }
    NR == FNR { want[$1] = $2; next }
    { n++; if (!($1 in want)) { print "step " $1 " not in the golden"; bad = 1; next }
      d = f32($2) - f32(want[$1]); if (d < 0) d = -d
      if (d > max) max = d
      if ($2 == want[$1]) exact++
      if (d > tol) { print "step " $1 ": " $2 " vs golden " want[$1] " (diff " d ")"; bad = 1 } }
    END { if (n != nsteps) { print n " steps, wanted " nsteps; bad = 1 }
          printf "max |diff| %.3g, %d of %d bit-exact\n", max, exact, n > "/dev/stderr"; exit bad }
  ' "$TMP/want" "$TMP/got" >"$TMP/cmp" 2>"$TMP/cmp.info"
  if [ $? -eq 0 ]; then ok "$1 ($(cat "$TMP/cmp.info"))"; else fail "$1" "$(head -5 "$TMP/cmp")"; fi
}

# shellcheck disable=SC2086
expect_rc golden-fp32-run 0 "$PGOLF" train --config "$TMP/golden.json" --stop-after $n --threads 2 --quiet $dev --out "$TMP/f"
compare "golden-fp32-$n-steps-1e-4" fp32 "$TMP/f/losses.txt" 1e-4 "$n"
first=$(grep -v '^#' "$TMP/f/losses.txt" | head -1 | awk '{ print $2 }')
want=$(jq -r '.fp32.steps[0].train_loss_bits' "$G")
[ "$first" = "$want" ] && ok golden-fp32-step1-bitwise || fail golden-fp32-step1-bitwise "$first vs $want"

# shellcheck disable=SC2086
expect_rc golden-mixed-run 0 "$PGOLF" train --config "$TMP/golden.json" --precision mixed --stop-after $n --threads 2 --quiet $dev --out "$TMP/m"
compare "golden-mixed-$n-steps-$mixed_tol" mixed_cuda_policy "$TMP/m/losses.txt" "$mixed_tol" "$n"

# The comparison can fail: mixed-precision losses are not within 1e-4 of
# the fp32 golden.
compare golden-negative fp32 "$TMP/m/losses.txt" 1e-4 "$n" >"$TMP/neg"
grep -q '^FAIL' "$TMP/neg" && ok golden-catches-a-different-run || fail golden-catches-a-different-run "$(cat "$TMP/neg")"
