# One pgolf run over two "hosts": two network namespaces on this machine
# joined by a veth pair (addresses of a private test subnet that exist only
# inside them), Open MPI over TCP between them, its remote launch through
# `ip netns exec` (a small agent script, no ssh). --world 8 on one process
# per namespace gives the single-process run's loss chain and artifact.
# Needs root and network namespaces; skips with the reason otherwise. The
# namespaces (and with them the veth pair) are always deleted.
. "$(dirname "$0")/lib.sh"

OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
command -v mpirun >/dev/null 2>&1 || { skip train-netns "no mpirun (openmpi-bin)"; exit 0; }
command -v ip >/dev/null 2>&1 || { skip train-netns "no ip (iproute2)"; exit 0; }
"$PGOLF" --version | grep -qx 'mpi yes' || { skip train-netns "this pgolf was built without MPI"; exit 0; }
[ "$(id -u)" -eq 0 ] || { skip train-netns "needs root to create network namespaces"; exit 0; }
mpi_test_env
NA=pgolf-a-$$ NB=pgolf-b-$$ VA=pgva$$ VB=pgvb$$
SUBNET=10.213.77.0/24 IPA=10.213.77.1 IPB=10.213.77.2
cleanup() { ip netns del "$NA" 2>/dev/null; ip netns del "$NB" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM
if ! ip netns add "$NA" 2>"$TMP/err" || ! ip netns add "$NB" 2>>"$TMP/err"; then
  skip train-netns "cannot create network namespaces: $(head -c 200 "$TMP/err")"
  exit 0
fi
# The pair is made inside A, one end moved to B: nothing is added outside.
ip -n "$NA" link add "$VA" type veth peer name "$VB" netns "$NB" &&
  ip -n "$NA" addr add "$IPA/24" dev "$VA" && ip -n "$NB" addr add "$IPB/24" dev "$VB" &&
  ip -n "$NA" link set "$VA" up && ip -n "$NB" link set "$VB" up &&
  ip -n "$NA" link set lo up && ip -n "$NB" link set lo up ||
  { fail netns-setup "could not join the namespaces"; exit 0; }

# Open MPI's remote launch: AGENT HOST CMD..., run in HOST's namespace with
# its own host name, as ssh would run it on another machine.
cat >"$TMP/agent.sh" <<EOF2
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case "\$host" in $IPA) ns=$NA ;; $IPB) ns=$NB ;; *) echo "agent: unknown host \$host" >&2; exit 1 ;; esac
echo "\$ns \$*" >>'$TMP/agent.log'
exec ip netns exec "\$ns" unshare --uts sh -c "hostname \$ns; \$*"
EOF2
chmod +x "$TMP/agent.sh"
printf '%s slots=1\n%s slots=1\n' "$IPA" "$IPB" >"$TMP/hosts"

DATA=$TMP/data
small_world_run "$TMP/small.json" "$DATA"
chain() { jq -r .predicate.losses.chain "$1/manifest.json"; }
expect_rc single-process 0 "$PGOLF" train --config "$TMP/small.json" --world 8 --threads 1 --quiet --out "$TMP/ref"
expect_rc two-hosts 0 timeout 120 ip netns exec "$NA" unshare --uts sh -c "hostname $NA; exec mpirun -np 2 \
  --hostfile $TMP/hosts --mca plm_rsh_agent $TMP/agent.sh --mca btl tcp,self \
  --mca btl_tcp_if_include $SUBNET --mca oob_tcp_if_include $SUBNET \
  $PGOLF train --config $TMP/small.json --world 8 --threads 1 --quiet --out $TMP/two"
[ -f "$TMP/two/manifest.json" ] && [ "$(chain "$TMP/two")" = "$(chain "$TMP/ref")" ] && ok two-hosts-same-chain ||
  fail two-hosts-same-chain "$(chain "$TMP/two" 2>&1) vs $(chain "$TMP/ref")"
grep -q "^$NB .*orted" "$TMP/agent.log" 2>/dev/null && ok second-host-launched-through-agent ||
  fail second-host-launched-through-agent "agent log: $(cat "$TMP/agent.log" 2>&1 | head -c 300)"
expect_same two-hosts-same-artifact "$TMP/ref/model.int8.ptz" "$TMP/two/model.int8.ptz"
