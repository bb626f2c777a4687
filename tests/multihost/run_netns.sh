#!/usr/bin/env bash
# Usage: run_netns.sh MULTIHOST_RANK_BINARY [VAR=VALUE ...]
# Makes namespaces loomA/loomB joined by veth, runs ranks 0,1 as host "loom-a" and 2,3 as "loom-b"
# (4 ranks: shm within a host, tcp across, or what the VAR=VALUE settings given to every rank
# choose, e.g. LOOM_TRANSPORT=shm,ucx), checks every rank printed ok, removes everything.
set -u
bin=$1
shift
extra="$*"
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root, ip and unshare"; exit 77
fi
sfx=$$
A=loomA$sfx B=loomB$sfx
cleanup() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; rm -rf "$tmp"; }
tmp=$(mktemp -d)
trap cleanup EXIT
ip netns add "$A" && ip netns add "$B" || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip link add "va$sfx" type veth peer name "vb$sfx" || { echo "SKIP: no veth"; exit 77; }
ip link set "va$sfx" netns "$A"; ip link set "vb$sfx" netns "$B"
ip -n "$A" addr add 10.231.0.1/24 dev "va$sfx"; ip -n "$B" addr add 10.231.0.2/24 dev "vb$sfx"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "va$sfx" up; ip -n "$B" link set "vb$sfx" up
run() {  # ns host rank ifname
  ip netns exec "$1" unshare --uts sh -c "hostname $2; $extra LOOM_RANK=$3 LOOM_NRANKS=4 ID_FILE=$tmp/id \
    LOOM_SOCKET_IFNAME=$4 LOOM_TIMEOUT_MS=30000 timeout 90 $bin" > "$tmp/out$3" 2>&1 &
}
run "$A" loom-a 0 "va$sfx"; run "$A" loom-a 1 "va$sfx"
run "$B" loom-b 2 "vb$sfx"; run "$B" loom-b 3 "vb$sfx"
wait
cat "$tmp"/out*
ok=$(cat "$tmp"/out* | grep -c ': ok (0 wrong)')
[ "$ok" -eq 4 ] || { echo "FAIL: $ok of 4 ranks ok"; exit 1; }
# LOOM_NETNS_EXPECT: a line every rank must log (e.g. its transports, at LOOM_DEBUG=INFO).
if [ -n "${LOOM_NETNS_EXPECT:-}" ]; then
  seen=$(cat "$tmp"/out* | grep -c -- "$LOOM_NETNS_EXPECT")
  [ "$seen" -eq 4 ] || { echo "FAIL: $seen of 4 ranks logged '$LOOM_NETNS_EXPECT'"; exit 1; }
fi
echo "PASS: 4 ranks on 2 namespaced hosts $extra"
