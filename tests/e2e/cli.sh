#!/bin/sh
# Every verb parses its options with common/cli.c: its --help exits 0 and
# lists every option it accepts (the table below is the interface), an
# unknown option is exit 2 with one line `pgolf: VERB: ...`, the README's
# verb table names only options the verbs have, and no verb exits or uses
# getopt on its own.
. "$(dirname "$0")/lib.sh"

# INVOCATION:NAME:OPTIONS. NAME starts the verb's messages; OPTIONS are
# every option the verb accepts (short forms included).
COMMANDS='
train:train:--preset --config --seed --steps --budget --threads --data --tokenizer --precision --out --checkpoint-every --stop-after --resume --world --device --gpus --comm-timeout --quiet --json
eval:eval:--artifact --data --tokenizer --mode --seq-len --stride --chunk --epochs --lr --momentum --clip --ttt-batch --batch --precision --device --threads --score-dump --probes --probe-at --events --json
audit:audit:--tokenizer --val --claim --manifest --seq-len --json
audit --perturb:audit --perturb:--perturb --data --cut --chunk --tolerance --keep --json --self
check:check:--json --track --against
replay:replay:--record --seed --budget-train --budget-eval --grace --tolerance --out --data --tokenizer --artifact --ro-bind --gpus --allow-busy --fresh-seeds --salt --json
replay run.json:replay:--threads --out --data --tokenizer --budget-train --budget-eval --json --quiet --device
stats:stats:--new --record --target --metric --margin-nats --tokens-per-byte --alpha --test --consistency --json
regress:regress:--golden --config --k --junit --markdown --json
report:report:-o --output --markdown --record --margin-nats --tokens-per-byte --alpha
leaderboard:leaderboard:-o --output --replays
verify:verify:--against --track --tokenizer --val -o --output --html --markdown --markdown-max --replay --seed --fresh-seeds --salt --data --gpus --allow-busy --ro-bind --budget-train --budget-eval --grace
shard info:shard info:--json --vocab
shard glob:shard glob:--split
tokenizer luts:tokenizer luts:--json --vocab
tokenizer info:tokenizer info:--json
bpb:bpb:-t --tokenizer -s --split -L --seq-len -v --vocab -j --json
hash:hash:-j --jobs
gpu:gpu:--json
gpu attest:gpu:--gpus --json
data overlap:data overlap:--train --val --bos --tokenizer --min-tokens --json
manifest create:manifest create:--config --tokenizer --data --seed --losses --artifact --steps -o --output
manifest show:manifest show:--json
manifest verify:manifest verify:--key --root --json
manifest diff:manifest diff:--json
manifest keygen:manifest keygen:-o --output
manifest sign:manifest sign:--key -o --output
'

commands() { printf '%s\n' "$COMMANDS" | sed '/^$/d'; }

# An option is listed when it starts a help entry: "  -o, --output FILE",
# "      --json".
listed() {
  grep -Eq -- "^  (-[A-Za-z], |    )?$1( |\$)" "$2" || grep -Eq -- "^  $1, --" "$2"
}

commands | while IFS=: read -r inv name opts; do
  # shellcheck disable=SC2086 # the invocation is words
  "$PGOLF" $inv --help >"$TMP/help" 2>"$TMP/err"
  rc=$?
  missing=""
  for o in $opts --help -h; do listed "$o" "$TMP/help" || missing="$missing $o"; done
  if [ "$rc" -ne 0 ]; then fail "help: $inv" "exit $rc: $(head -c 300 "$TMP/err")"
  elif [ -s "$TMP/err" ]; then fail "help: $inv" "wrote to stderr: $(head -c 300 "$TMP/err")"
  elif [ -n "$missing" ]; then fail "help: $inv" "does not list$missing"
  else ok "help: $inv"; fi

  "$PGOLF" $inv -h >"$TMP/h" 2>&1
  if [ $? -eq 0 ] && cmp -s "$TMP/h" "$TMP/help"; then ok "-h: $inv"; else
    fail "-h: $inv" "differs from --help or fails"; fi

  "$PGOLF" $inv --no-such-option >"$TMP/out" 2>"$TMP/err"
  rc=$?
  if [ "$rc" -ne 2 ]; then fail "unknown option: $inv" "exit $rc, wanted 2"
  elif [ "$(wc -l <"$TMP/err")" -ne 1 ] ||
    ! grep -q "^pgolf: $name: unknown option '--no-such-option'" "$TMP/err"; then
    fail "unknown option: $inv" "stderr: $(head -c 300 "$TMP/err")"
  else ok "unknown option: $inv"; fi
done

# Verbs with sub-verbs list them all and refuse an unknown one.
for v in "shard info glob" "tokenizer luts info" "manifest create show verify diff keygen sign"; do
  set -- $v
  verb=$1
  shift
  "$PGOLF" "$verb" --help >"$TMP/help" 2>&1
  rc=$?
  missing=""
  for s in "$@"; do grep -q "pgolf $verb $s" "$TMP/help" || missing="$missing $s"; done
  if [ "$rc" -eq 0 ] && [ -z "$missing" ]; then ok "help: $verb"; else
    fail "help: $verb" "exit $rc, missing:$missing"; fi
  expect_err "unknown subcommand: $verb" 2 "^pgolf: $verb: unknown subcommand 'frob'" \
    "$PGOLF" "$verb" frob
done

# Both value forms and a strict number, on one verb of each kind.
expect_err "value forms: --name=VALUE" 2 "^pgolf: hash: --jobs wants an integer from 1 to 1024, got '2x'" \
  "$PGOLF" hash --jobs=2x
expect_err "value forms: missing value" 2 "^pgolf: stats: --alpha needs a value" \
  "$PGOLF" stats --new 1,2 --record 1,2 --alpha
expect_err "given twice" 2 "^pgolf: train: option given twice: --seed" \
  "$PGOLF" train --seed 1 --seed 2

# The README's verb table: every option it shows is one a verb lists.
: >"$TMP/all"
commands | while IFS=: read -r inv name opts; do
  echo "$inv $opts" >>"$TMP/all"
done
grep '^| `pgolf ' README.md | while IFS= read -r row; do
  verb=$(printf '%s\n' "$row" | sed 's/^| `pgolf \([a-z]*\).*/\1/')
  cell=$(printf '%s\n' "$row" | awk '{ print substr($0, 1, index($0, "` | ")) }')
  known=$(grep "^$verb[ ]" "$TMP/all")
  if [ -z "$known" ]; then fail "README: $verb" "no such verb in this test's table"; continue; fi
  missing=""
  for o in $(printf '%s\n' "$cell" | grep -oE -- '(^|[ `[(|])--?[a-z][a-z-]*' | sed 's/^[ `[(|]//'); do
    printf '%s\n' "$known" | tr ' ' '\n' | grep -qx -- "$o" || missing="$missing $o"
  done
  if [ -z "$missing" ]; then ok "README: $verb"; else
    fail "README: $verb" "options not accepted:$missing"; fi
done

# No verb leaves the option API: no exit() (a forked child's _exit is
# fine) and no getopt in the code of any part (comments may name them).
no_exit_or_getopt() {
  (cd "$1" && find common formats kernels manifests trainer verifier -type f \
    \( -name '*.[ch]' -o -name '*.cu' \) -exec awk '
    FNR == 1 { in_comment = 0 }
    {
      rest = $0; code = ""
      while (rest != "") {
        if (in_comment) {
          k = index(rest, "*/")
          if (!k) break
          rest = substr(rest, k + 2); in_comment = 0
        } else {
          k = index(rest, "/*"); s = index(rest, "//")
          if (s && (!k || s < k)) { code = code substr(rest, 1, s - 1); break }
          if (!k) { code = code rest; break }
          code = code substr(rest, 1, k - 1); rest = substr(rest, k + 2); in_comment = 1
        }
      }
      if (code ~ /(^|[^_A-Za-z0-9])exit[ \t]*\(/ || code ~ /getopt/) print FILENAME ":" FNR ": " $0
    }' {} + 2>/dev/null)
}
out=$(no_exit_or_getopt .)
if [ -n "$out" ]; then fail "no exit() or getopt in verbs" "$out"; else
  ok "no exit() or getopt in verbs"; fi
mkdir -p "$TMP/t/common" "$TMP/t/verifier"
printf '%s\n' 'int f(void) { _exit(127); } /* exit(2) and getopt here are words */' \
  '/* a comment on' '   exit(1) */' >"$TMP/t/common/a.c"
if [ -z "$(no_exit_or_getopt "$TMP/t")" ]; then ok "the check allows _exit and comments"; else
  fail "the check allows _exit and comments" "$(no_exit_or_getopt "$TMP/t")"; fi
printf '%s\n' '#include <getopt.h>' 'int g(void) { exit(2); }' >"$TMP/t/verifier/b.c"
if [ "$(no_exit_or_getopt "$TMP/t" | wc -l)" -eq 2 ]; then ok "the check catches exit and getopt"; else
  fail "the check catches exit and getopt" "$(no_exit_or_getopt "$TMP/t")"; fi
