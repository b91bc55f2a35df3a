#!/bin/sh
# The parts of pgolf are layered; a part may include itself and the parts
# below it, never one above:
#   common < formats < kernels < manifests < trainer < verifier
# `verifier/` may include `trainer/` only where it really re-runs training
# or evaluation; those files are listed below with the reason.
#   sh ci/layers.sh [ROOT]   prints each violation as FILE:LINE: ... and
#                            exits 1 if there is any.
set -eu
root=${1:-.}
order="common formats kernels manifests trainer verifier"

rank_of() {
  r=0
  for p in $order; do
    [ "$p" = "$1" ] && { echo $r; return; }
    r=$((r + 1))
  done
  echo -1
}

# FILE TARGET_PART: the verifier files allowed to reach into the trainer
# (anything else reads formats/ and manifests/, not the training code).
allowed() {
  case "$1 $2" in
    "verifier/replay_run.c trainer") return 0 ;;  # replay MANIFEST re-runs training
  esac
  return 1
}

bad=0
for part in $order; do
  mine=$(rank_of "$part")
  for f in "$root/$part"/*.c "$root/$part"/*.h "$root/$part"/*.cu; do
    [ -f "$f" ] || continue
    rel=${f#"$root"/}
    # Lines of the form #include "part/file.h".
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" | while IFS= read -r line; do
      n=${line%%:*}
      target=$(printf '%s\n' "$line" | sed 's/^[^"]*"\([a-z_]*\)\/.*/\1/')
      theirs=$(rank_of "$target")
      [ "$theirs" -lt 0 ] && continue  # not a part (generated headers)
      if [ "$theirs" -gt "$mine" ]; then
        echo "$rel:$n: $part includes $target, a part above it ($order)"
      elif [ "$part $target" = "verifier trainer" ] && ! allowed "$rel" "$target"; then
        echo "$rel:$n: verifier includes trainer outside the files that re-run training (ci/layers.sh)"
      fi
    done
  done
done >"${TMPDIR:-/tmp}/pgolf-layers.$$"
if [ -s "${TMPDIR:-/tmp}/pgolf-layers.$$" ]; then
  cat "${TMPDIR:-/tmp}/pgolf-layers.$$"
  bad=1
fi
rm -f "${TMPDIR:-/tmp}/pgolf-layers.$$"
exit $bad
