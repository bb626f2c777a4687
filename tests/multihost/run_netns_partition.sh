#!/usr/bin/env bash
# Usage: run_netns_partition.sh PARTITION_RANK_BINARY
# Two namespaced hosts joined by a veth (ranks 0,1 on loom-a, 2,3 on loom-b), all-reducing; the
# veth is set down mid-way. Each side must name the other side's ranks (and only them) within the
# detection bound plus headroom, agree on them and shrink to its own two ranks. Removes everything.
set -u
bin=$1
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root, ip and unshare"; exit 77
fi
sfx=$$
A=loomPA$sfx B=loomPB$sfx
tmp=$(mktemp -d)
cleanup() { ip netns del "$A" 2>/dev/null; ip netns del "$B" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
ip netns add "$A" && ip netns add "$B" || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip link add "pa$sfx" type veth peer name "pb$sfx" || { echo "SKIP: no veth"; exit 77; }
ip link set "pa$sfx" netns "$A"; ip link set "pb$sfx" netns "$B"
ip -n "$A" addr add 10.232.0.1/24 dev "pa$sfx"; ip -n "$B" addr add 10.232.0.2/24 dev "pb$sfx"
for ns in "$A" "$B"; do ip -n "$ns" link set lo up; done
ip -n "$A" link set "pa$sfx" up; ip -n "$B" link set "pb$sfx" up
run() {  # ns host rank ifname
  ip netns exec "$1" unshare --uts sh -c "hostname $2; LOOM_RANK=$3 LOOM_NRANKS=4 ID_FILE=$tmp/id \
    LOOM_SOCKET_IFNAME=$4 LOOM_TIMEOUT_MS=60000 timeout 90 $bin" > "$tmp/out$3" 2>&1 &
}
run "$A" loom-a 0 "pa$sfx"; run "$A" loom-a 1 "pa$sfx"
run "$B" loom-b 2 "pb$sfx"; run "$B" loom-b 3 "pb$sfx"
for i in $(seq 600); do
  [ "$(cat "$tmp"/out* 2>/dev/null | grep -c ': running')" -eq 4 ] && break
  sleep 0.1
done
sleep 0.5
ip -n "$A" link set "pa$sfx" down
wait
cat "$tmp"/out*
fail=0
for r in 0 1 2 3; do
  if [ "$r" -lt 2 ]; then want="2,3,"; else want="0,1,"; fi
  line=$(grep "rank $r: detected" "$tmp/out$r")
  case "$line" in
    *"failed $want shrunk to 2 ok"*) ;;
    *) echo "FAIL: rank $r: expected failed $want and a shrink to 2: ${line:-no result}"; fail=1 ;;
  esac
  s=$(echo "$line" | sed -n 's/.*detected \([0-9.]*\) s.*/\1/p')
  if [ -n "$s" ] && awk "BEGIN{exit !($s > 8)}"; then echo "FAIL: rank $r took $s s"; fail=1; fi
done
[ $fail -eq 0 ] && echo "PASS: both sides of the partition named the other and shrank"
exit $fail
