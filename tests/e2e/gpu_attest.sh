#!/bin/sh
# pgolf gpu attest against NVML's stand-in (tests/fake_nvml.c, through
# PGOLF_NVML_LIBRARY): the challenge's hardware passes; another form
# factor, count or MIG is HARDWARE_MISMATCH; a process on a GPU is
# HARDWARE_BUSY with its pid; no NVML at all is "attested": false.
. "$(dirname "$0")/lib.sh"

FAKE=$(dirname "$PGOLF")/tests/libfake_nvml.so
[ -f "$FAKE" ] || { fail "fake NVML built" "no $FAKE"; exit 0; }

PGOLF_NVML_LIBRARY=$FAKE expect_rc attest-h100-sxm-passes 0 "$PGOLF" gpu attest --json
jq -e '.attested and .matches_challenge and (.busy | not) and (.gpus | length) == 8 and
  .gpus[0].form_factor == "SXM" and .gpus[0].ecc and .gpus[0].nvlink_active == 18 and
  .driver_version == "580.65.06" and .cuda_driver_version == 13000 and .processes_before == []' \
  "$TMP/out" >/dev/null && ok attest-json-fields || fail attest-json-fields "$(head -c 400 "$TMP/out")"

PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_NAME="NVIDIA H100 PCIe" FAKE_NVML_POWER_MAX_MW=350000 \
  expect_err attest-pcie-mismatch 1 'HARDWARE_MISMATCH: GPU 0 is NVIDIA H100 PCIe \(PCIe\)' \
  "$PGOLF" gpu attest
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_NAME="NVIDIA A100-SXM4-80GB" \
  expect_err attest-a100-mismatch 1 'HARDWARE_MISMATCH: GPU 0 is NVIDIA A100' "$PGOLF" gpu attest
# A name without a form factor falls back on the power limit (SXM: 700 W).
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_NAME="NVIDIA H100" FAKE_NVML_POWER_MAX_MW=700000 \
  expect_rc attest-form-factor-from-power 0 "$PGOLF" gpu attest
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_NAME="NVIDIA H100" FAKE_NVML_POWER_MAX_MW=350000 \
  expect_err attest-unknown-form-factor 1 'HARDWARE_MISMATCH: .*\(unknown\)' "$PGOLF" gpu attest
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_GPUS=4 \
  expect_err attest-four-gpus-mismatch 1 'HARDWARE_MISMATCH: 4 GPUs, the challenge runs on 8' \
  "$PGOLF" gpu attest
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_GPUS=4 expect_rc attest-four-of-four 0 "$PGOLF" gpu attest --gpus 4
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_MIG=1 \
  expect_err attest-mig-mismatch 1 'HARDWARE_MISMATCH: GPU 0 has MIG enabled' "$PGOLF" gpu attest

# A process already on a GPU: this shell's pid, so /proc names it.
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_BUSY_PID=$$ \
  expect_err attest-busy 1 "HARDWARE_BUSY: 1 process already on a GPU \\(pid $$ first\\)" \
  "$PGOLF" gpu attest --json
jq -e --argjson pid $$ '.busy and .processes_before[0].pid == $pid and .processes_before[0].gpu == 0
  and (.processes_before[0].comm | length) > 0' "$TMP/out" >/dev/null &&
  ok attest-busy-recorded || fail attest-busy-recorded "$(head -c 400 "$TMP/out")"

PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_INIT_FAIL=1 \
  expect_err attest-init-fails 1 'not attested: nvmlInit_v2 failed: Driver Not Loaded' \
  "$PGOLF" gpu attest --json
jq -e '(.attested | not) and (.reason | test("Driver Not Loaded"))' "$TMP/out" >/dev/null &&
  ok attest-init-fails-json || fail attest-init-fails-json "$(cat "$TMP/out")"
PGOLF_NVML_LIBRARY=$TMP/no-such-libnvidia-ml.so \
  expect_err attest-no-nvml 1 'not attested: NVML not available' "$PGOLF" gpu attest
expect_err attest-bad-gpus 2 'gpu: --gpus wants an integer' "$PGOLF" gpu attest --gpus 0

# ECC off on one GPU: the challenge's boards run with ECC, so a mismatch
# that names the GPU; clocks thermally throttled now: a warning, exit 0.
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_ECC_OFF_GPU=3 \
  expect_err attest-ecc-off-mismatch 1 'HARDWARE_MISMATCH: GPU 3 has ECC off' "$PGOLF" gpu attest --json
jq -e '.gpus[3].ecc == false and .gpus[2].ecc == true and (.matches_challenge | not)' "$TMP/out" \
  >/dev/null && ok attest-ecc-off-json || fail attest-ecc-off-json "$(head -c 400 "$TMP/out")"
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_THROTTLE=0x20 FAKE_NVML_THROTTLE_GPU=5 \
  expect_err attest-thermal-warns 0 'HARDWARE_THROTTLED \(warning\): GPU 5 clocks slowed now: SW thermal slowdown' \
  "$PGOLF" gpu attest --json
jq -e '.gpus[5].throttle_reasons == 32 and .gpus[5].thermal_throttle == "SW thermal slowdown" and
  .gpus[0].thermal_throttle == null and .matches_challenge' "$TMP/out" >/dev/null &&
  ok attest-thermal-json || fail attest-thermal-json "$(head -c 400 "$TMP/out")"
# Power capping (0x4) is a busy GPU's normal state, not a thermal reason.
PGOLF_NVML_LIBRARY=$FAKE FAKE_NVML_THROTTLE=0x4 expect_rc attest-power-cap-quiet 0 "$PGOLF" gpu attest
grep -q HARDWARE_THROTTLED "$TMP/err" && fail attest-power-cap-no-warning "$(cat "$TMP/err")" ||
  ok attest-power-cap-no-warning

# Without a GPU the gpu verb refuses cleanly: exit 2, naming the
# runtime's reason (or, in a build without nvcc, saying so).
if "$PGOLF" gpu >"$TMP/gpu.out" 2>"$TMP/gpu.err"; then
  skip "pgolf gpu without a GPU exits 2" "this machine has a GPU: $(head -n 1 "$TMP/gpu.out")"
else
  rc=$?
  if [ "$rc" -eq 2 ] && grep -qE '^pgolf: (no CUDA device: |this pgolf was built without CUDA)' "$TMP/gpu.err"; then
    ok "pgolf gpu without a GPU exits 2 naming the runtime's reason"
  else
    fail "pgolf gpu without a GPU exits 2 naming the runtime's reason" "exit $rc: $(cat "$TMP/gpu.err")"
  fi
fi
