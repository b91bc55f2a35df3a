#!/bin/sh
# CI regression of our own trainer: train the tiny preset (40 steps,
# ci/regress-config.json, so three seeds fit in CI's minutes) for the seeds of
# golden/ci_regress.json on the embedded demo data, then judge the three
# manifests with `pgolf regress` (loss chain heads bit for bit, and val_bpb
# against mean + k sd). Writes OUT/junit.xml and OUT/summary.md for the CI
# system; exits 1 on a regression, 2 on bad input.
#   sh ci/regress.sh [OUT]        (default out/ci-regress)
# PGOLF (default ./pgolf) and REGRESS_THREADS (default 2) may be set; the
# loss chain does not depend on the thread count. The seeds train in
# parallel, one process each.
set -eu
cd "$(dirname "$0")/.."
P=${PGOLF:-./pgolf}
OUT=${1:-out/ci-regress}
GOLDEN=golden/ci_regress.json
THREADS=${REGRESS_THREADS:-2}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
seeds=$(jq -r '.configs.tiny.seeds[].seed' "$GOLDEN")
rm -rf "$OUT"
mkdir -p "$OUT"

pids=""
for s in $seeds; do
  $P train --config ci/regress-config.json --data data/demo --tokenizer data/tokenizers/fineweb_1024_bpe.model \
    --threads "$THREADS" --seed "$s" --out "$OUT/seed$s" --quiet >"$OUT/seed$s.log" 2>&1 &
  pids="$pids $!"
done
failed=0
for p in $pids; do wait "$p" || failed=1; done
if [ "$failed" -ne 0 ]; then
  for s in $seeds; do echo "== $OUT/seed$s.log"; tail -n 20 "$OUT/seed$s.log"; done >&2
  echo "ci/regress.sh: training failed" >&2
  exit 2
fi

runs=""
for s in $seeds; do runs="$runs $OUT/seed$s/manifest.json"; done
# shellcheck disable=SC2086
$P regress --golden "$GOLDEN" --junit "$OUT/junit.xml" --markdown "$OUT/summary.md" $runs
