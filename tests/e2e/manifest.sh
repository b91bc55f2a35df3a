#!/bin/sh
# pgolf manifest through the CLI: keygen, create, sign, verify on an
# untouched run, then each kind of tampering caught with its own message;
# diff of identical and of one-step-different manifests.
. "$(dirname "$0")/lib.sh"
repo=$(pwd)

# shard FILE COUNT: a valid shard of COUNT tokens 1, 2, ... (COUNT < 256).
shard() {
  {
    printf '\210\330\064\001\001\000\000\000'          # magic 20240520, version 1
    printf "$(printf '\\%03o' "$2")\\000\\000\\000"     # token count
    head -c 1012 /dev/zero
    i=1
    while [ "$i" -le "$2" ]; do printf "$(printf '\\%03o' "$i")\\000"; i=$((i + 1)); done
  } >"$1"
}

cd "$TMP" || exit 1
mkdir data
shard data/fineweb_train_000000.bin 20
shard data/fineweb_train_000001.bin 7
shard data/fineweb_val_000000.bin 9
cp "$repo/data/tokenizers/fineweb_1024_bpe.model" tok.model
printf '{"model": "gpt", "layers": 9, "lr": 0.04}\n' >config.json
printf 'int8 weights' >model.bin
cat >losses.txt <<'L'
# step loss lr_mult wall_ms
0 6.9375 1.0 101.5
1 0x40c80000 1.0 99
2 5.5
3 0x40900000 0.5
L

expect_rc "keygen" 0 "$PGOLF" manifest keygen -o signer
if grep -Eq '^[0-9a-f]{64}$' "$TMP/out"; then ok "keygen-prints-keyid"; else fail "keygen-prints-keyid" "$(cat "$TMP/out")"; fi
mode=$(stat -c %a signer.key)
if [ "$mode" = 600 ]; then ok "keygen-private-0600"; else fail "keygen-private-0600" "mode $mode"; fi
if grep -q 'BEGIN PRIVATE KEY' signer.key && grep -q 'BEGIN PUBLIC KEY' signer.pub; then
  ok "keygen-pem"; else fail "keygen-pem" "unexpected PEM headers"; fi
"$PGOLF" manifest keygen -o other >/dev/null 2>&1
expect_err "keygen-no-overwrite" 2 "already exists" "$PGOLF" manifest keygen -o signer

expect_rc "create" 0 "$PGOLF" manifest create --config config.json --tokenizer tok.model \
  --data data --seed 1337 --losses losses.txt --artifact model.bin -o run.json
head=$(jq -r .predicate.losses.chain run.json)
if [ "$(jq -r '.subject[] | select(.name=="loss-chain") | .digest.sha256' run.json)" = "$head" ] &&
   [ "$(jq -r .predicateType run.json)" = pgolf/run/v1 ] &&
   [ "$(jq -r '.predicate.losses.steps[1].loss_bits' run.json)" = 0x40c80000 ] &&
   [ "$(jq -r '.predicate.losses.steps[0].loss_bits' run.json)" = 0x40de0000 ] &&
   [ "$(jq '.predicate.data.shards | length' run.json)" = 3 ] &&
   [ "$(jq -r '.predicate.data.shards[2].split' run.json)" = val ]; then ok "create-fields"
else fail "create-fields" "unexpected manifest content"; fi
expect_rc "create-deterministic-rerun" 0 "$PGOLF" manifest create --config config.json \
  --tokenizer tok.model --data data --seed 1337 --losses losses.txt --artifact model.bin -o run2.json
expect_err "create-bad-loss-file" 2 "bad.txt:2: loss" sh -c \
  "printf '0 1.0\n1 0x123\n' >bad.txt; \"$PGOLF\" manifest create --config config.json \
   --tokenizer tok.model --data data --seed 1 --losses bad.txt -o x.json"
expect_err "create-missing-seed" 2 "required" "$PGOLF" manifest create --config config.json \
  --tokenizer tok.model --data data -o x.json

expect_rc "sign" 0 "$PGOLF" manifest sign --key signer.key run.json -o run.dsse
if [ "$(jq -r .payloadType run.dsse)" = application/vnd.in-toto+json ] &&
   jq -r .payload run.dsse | base64 -d | cmp -s - run.json; then ok "sign-payload-is-exact-bytes"
else fail "sign-payload-is-exact-bytes" "payload differs from run.json"; fi

expect_rc "verify-manifest" 0 "$PGOLF" manifest verify run.json
expect_rc "verify-envelope" 0 "$PGOLF" manifest verify run.dsse --key signer.pub
expect_rc "verify-json" 0 "$PGOLF" manifest verify --json run.json
if [ "$(jq '.ok == true and .checked == 6' "$TMP/out")" = true ]; then ok "verify-json-report"
else fail "verify-json-report" "$(head -c 300 "$TMP/out")"; fi
expect_err "verify-envelope-needs-key" 2 "--key PUB.pem is required" "$PGOLF" manifest verify run.dsse
expect_rc "show" 0 "$PGOLF" manifest show run.dsse
if grep -q "seed: *1337" "$TMP/out" && grep -q "last loss: *step 3, loss 0x40900000 (4.5)" "$TMP/out" &&
   grep -q "$head" "$TMP/out"; then ok "show-summary"; else fail "show-summary" "$(cat "$TMP/out")"; fi
mkdir elsewhere
expect_rc "verify-absent-files-skipped" 0 "$PGOLF" manifest verify run.json --root elsewhere
if grep -q "absent, skipped" "$TMP/out"; then ok "verify-skipped-reported"; else fail "verify-skipped-reported" "$(cat "$TMP/out")"; fi

# One flipped bit in step 2's loss (5.5 = 0x40b00000).
jq '.predicate.losses.steps[2].loss_bits = "0x40b00001"' run.json >flip.json
expect_err "tamper-loss-bit" 1 "step 2: loss_bits 0x40b00001 do not match the recorded chain link" \
  "$PGOLF" manifest verify flip.json
jq '.predicate.losses.chain = "'"$(printf '%064d' 0)"'"' run.json >head.json
expect_err "tamper-chain-head" 1 "wrong chain head 0{64}" "$PGOLF" manifest verify head.json
jq '(.subject[] | select(.name=="loss-chain") | .digest.sha256) = "'"$(printf '%064d' 1)"'"' run.json >subj.json
expect_err "tamper-subject" 1 "subject\[1\] 'loss-chain': digest 0{63}1 disagrees with the loss chain head" \
  "$PGOLF" manifest verify subj.json
jq '.predicate.losses.steps[1].loss_bits = "0x40c8"' run.json >malformed.json
expect_err "malformed-loss-bits" 2 'steps\[1\]\.loss_bits: expected "0x" and 8 hex digits' \
  "$PGOLF" manifest verify malformed.json

cp -R data data.orig
printf '\001' | dd of=data/fineweb_train_000001.bin bs=1 seek=1030 conv=notrunc 2>/dev/null
expect_err "tamper-shard" 1 "shard fineweb_train_000001.bin changed: recorded sha256 [0-9a-f]{64}, actual [0-9a-f]{64}" \
  "$PGOLF" manifest verify run.json
rm -rf data && mv data.orig data
cp tok.model tok.orig && printf 'x' >>tok.model
expect_err "tamper-tokenizer" 1 "tokenizer tok.model changed: recorded sha256" "$PGOLF" manifest verify run.json
mv tok.orig tok.model

# Re-encode a modified payload, keeping the signature.
jq -r .payload run.dsse | base64 -d | sed 's/"seed": 1337/"seed": 1338/' >payload.json
jq --arg p "$(base64 -w0 payload.json)" '.payload = $p' run.dsse >tampered.dsse
expect_err "tamper-envelope-payload" 1 "signature by key [0-9a-f]{64} does not verify" \
  "$PGOLF" manifest verify tampered.dsse --key signer.pub
expect_err "wrong-key" 1 "wrong key: the envelope is not signed by key [0-9a-f]{64}" \
  "$PGOLF" manifest verify run.dsse --key other.pub
jq '.signatures[0].sig = "bm90IGJhc2U2NCE!"' run.dsse >badb64.dsse
expect_err "envelope-bad-base64" 2 "signatures\[0\]\.sig: invalid base64 character" \
  "$PGOLF" manifest verify badb64.dsse --key signer.pub

expect_rc "diff-identical" 0 "$PGOLF" manifest diff run.json run2.json
if grep -q "equal in every deterministic field" "$TMP/out" && grep -q "timing differ" "$TMP/out"; then
  ok "diff-identical-notes-timing"; else fail "diff-identical-notes-timing" "$(cat "$TMP/out")"; fi
sed 's/^2 5.5$/2 5.25/' losses.txt >losses2.txt
"$PGOLF" manifest create --config config.json --tokenizer tok.model --data data --seed 1337 \
  --losses losses2.txt --artifact model.bin -o run3.json >/dev/null
expect_rc "diff-one-step" 1 "$PGOLF" manifest diff run.json run3.json
if grep -q "step 2: loss_bits 0x40b00000 (5.5) vs 0x40a80000 (5.25)" "$TMP/out"; then ok "diff-names-step"
else fail "diff-names-step" "$(cat "$TMP/out")"; fi
expect_rc "diff-json" 1 "$PGOLF" manifest diff --json run.json run3.json
if [ "$(jq '.equal == false and .step.step == 2 and .step.b_bits == "0x40a80000"' "$TMP/out")" = true ]; then
  ok "diff-json-step"; else fail "diff-json-step" "$(head -c 300 "$TMP/out")"; fi
jq '.predicate.config.lr = 0.05' run.json >cfg.json
expect_rc "diff-config-first" 1 "$PGOLF" manifest diff run3.json cfg.json
if grep -q "predicate.config.lr" "$TMP/out"; then ok "diff-config-named"; else fail "diff-config-named" "$(cat "$TMP/out")"; fi

expect_rc "help" 0 "$PGOLF" manifest verify --help
expect_err "unknown-subcommand" 2 "unknown subcommand" "$PGOLF" manifest frobnicate
