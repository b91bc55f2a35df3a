#!/bin/sh
# ci/github/verify-submission.yml, the example workflow for a leaderboard
# repository: its YAML holds (parsed where python3-yaml is installed,
# else skipped with the reason), it uses no third-party action, every
# `run:` step is valid sh that takes no ${{ }} expression inline, and the
# steps that find the changed folders, verify them and build the comment
# do their job when run here on a git repository made for the purpose.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/check_helpers"
WF=$(cd "$(dirname "$0")/../.." && pwd)/ci/github/verify-submission.yml
[ -f "$WF" ] || { fail ci-workflow-exists "no $WF"; exit 1; }

# ---- structure ----
if python3 -c 'import yaml' 2>/dev/null; then
  if python3 - "$WF" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
on = d.get("on", d.get(True))
assert "pull_request" in on, "not on pull_request"
steps = d["jobs"]["verify"]["steps"]
allowed = ("actions/checkout@", "actions/upload-artifact@", "actions/github-script@")
for s in steps:
    assert "uses" not in s or s["uses"].startswith(allowed), "third-party action " + s["uses"]
    assert ("uses" in s) != ("run" in s), "a step both runs and uses"
runs = "\n".join(s.get("run", "") for s in steps)
assert "verify" in runs and "replay" not in runs.replace("no replay", "")
assert d["permissions"]["pull-requests"] == "write"
PY
  then ok ci-workflow-yaml; else fail ci-workflow-yaml "see the assertion above"; fi
else
  skip ci-workflow-yaml "python3 with the yaml module is not installed (the grep checks below still run)"
fi
others=$(grep -E '^ *- uses: ' "$WF" | grep -vE 'uses: actions/(checkout|upload-artifact|github-script)@v[0-9]+$')
[ -z "$others" ] && ok ci-workflow-no-third-party-actions || fail ci-workflow-no-third-party-actions "$others"

# ---- the run: blocks, each as a file ----
mkdir -p "$TMP/blocks"
awk -v dir="$TMP/blocks" '
  in_run && (NF == 0 || match($0, /^ */) && RLENGTH > ind) { sub("^" pad, ""); print > file; next }
  in_run { in_run = 0; close(file) }
  /^ *run: \|$/ { match($0, /^ */); ind = RLENGTH; pad = sprintf("%" (ind + 2) "s", "");
                  n++; file = sprintf("%s/%02d.sh", dir, n); in_run = 1 }
' "$WF"
n=$(ls "$TMP/blocks" | wc -l)
[ "$n" -eq 6 ] && ok ci-workflow-run-blocks || fail ci-workflow-run-blocks "$n run blocks"
bad=""
for b in "$TMP"/blocks/*.sh; do
  sh -n "$b" 2>"$TMP/err" || bad="$bad $(basename "$b"): $(head -c 200 "$TMP/err")"
  grep -q '\${{' "$b" && bad="$bad $(basename "$b"): an inline \${{ }} expression"
done
[ -z "$bad" ] && ok ci-workflow-run-blocks-parse || fail ci-workflow-run-blocks-parse "$bad"

# ---- steps 3 to 6 on a repository made here ----
L=$TMP/leaderboard
mkdir -p "$L/records/track_10min_16mb"
git -C "$L" init -q
git -C "$L" config user.email t@example.com
git -C "$L" config user.name t
record_folder "$L/records/track_10min_16mb/2026-01-01_Old" 1.0800 1.0803 1.0798
record_folder "$L/records/track_10min_16mb/2026-01-02_Gone" 1.0900 1.0903 1.0898
git -C "$L" add -A && git -C "$L" commit -qm base
base=$(git -C "$L" rev-parse HEAD)
record_folder "$L/records/track_10min_16mb/2026-02-01_Good run" 1.0700 1.0702 1.0698
record_folder "$L/records/track_10min_16mb/2026-02-02_Bad" 1.0700 1.0702 1.0698
BPB=1.0700 mini_log "$L/records/track_10min_16mb/2026-02-02_Bad/train_seed1.log" 1 16000000 15
rm -r "$L/records/track_10min_16mb/2026-01-02_Gone"
git -C "$L" add -A && git -C "$L" commit -qm head
head_sha=$(git -C "$L" rev-parse HEAD)
export LEADERBOARD="$L" OUT="$TMP/out-dir" PGOLF_BIN="$PGOLF" BASE_SHA="$base" HEAD_SHA="$head_sha" \
  PGOLF_AGAINST=records/track_10min_16mb/2026-01-01_Old
sh -e "$TMP/blocks/03.sh" >"$TMP/log3" 2>&1 && [ "$(cat "$OUT/changed")" = "records/track_10min_16mb/2026-02-01_Good run
records/track_10min_16mb/2026-02-02_Bad" ] && ok ci-workflow-changed-folders ||
  fail ci-workflow-changed-folders "$(cat "$TMP/log3" "$OUT/changed" 2>&1 | head -c 500)"
sh -e "$TMP/blocks/04.sh" >"$TMP/log4" 2>&1
[ "$(cat "$OUT/status")" = 1 ] && [ "$(ls "$OUT/reports" | wc -l)" -eq 2 ] && [ "$(ls "$OUT/summaries" | wc -l)" -eq 2 ] &&
  ok ci-workflow-verifies-each || fail ci-workflow-verifies-each "status $(cat "$OUT/status"); $(ls "$OUT/reports" "$OUT/summaries"); $(tail -5 "$TMP/log4")"
sh -e "$TMP/blocks/05.sh" >"$TMP/log5" 2>&1
C=$OUT/comment.md
if head -1 "$C" | grep -q '^<!-- pgolf-verify -->$' && grep -q '2026-02-01_Good run` \*\*PASS\*\*' "$C" &&
   grep -q '2026-02-02_Bad` \*\*FAIL\*\*' "$C" && grep -q '`SIZE_OVER_LIMIT`' "$C" &&
   grep -q "maintainers' practice" "$C" && [ "$(wc -c <"$C")" -le 65000 ]; then ok ci-workflow-comment
else fail ci-workflow-comment "$(head -c 800 "$C")"; fi
sh "$TMP/blocks/06.sh"
[ $? -eq 1 ] && ok ci-workflow-verdict-fails || fail ci-workflow-verdict-fails "the last step did not exit 1"
