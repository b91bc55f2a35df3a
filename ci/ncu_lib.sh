# Shared by ci/gpu-profile.sh and ci/gpu-stalls.sh (sourced, not run):
# ncu_setup WHO checks $preset, finds ncu ($PROFILE_NCU, else on PATH, in
# /usr/local/cuda/bin or /opt/nvidia) into $ncu, and makes $out afresh
# with the profiled run's config.json (the preset, mixed precision, no
# validation); a bad preset or no ncu exits 2, naming WHO.
ncu_setup() {
  case $preset in '' | *[!a-z0-9_-]*) echo "$1: '$preset' is no preset name (pgolf train --help lists them)" >&2; exit 2 ;; esac
  ncu=${PROFILE_NCU:-$(command -v ncu 2>/dev/null || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)}
  [ -n "$ncu" ] && [ -x "$ncu" ] ||
    { echo "$1: no ncu (Nsight Compute) on PATH, in /usr/local/cuda/bin or /opt/nvidia${PROFILE_NCU:+ (PROFILE_NCU=$PROFILE_NCU)}" >&2; exit 2; }
  rm -rf "$out" && mkdir -p "$out"
  cat >"$out/config.json" <<JSON
{"preset": "$preset", "precision": "mixed", "val_loss_every": 0, "train_log_every": 1}
JSON
}
