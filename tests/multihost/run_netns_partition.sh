#!/usr/bin/env bash
# Usage: run_netns_partition.sh PARTITION_RANK_BINARY [partition|kill|stop]
# Two namespaced hosts joined by a veth (ranks 0,1 on loom-a, 2,3 on loom-b: shm inside a host,
# tcp across), all-reducing. partition: the veth is set down mid-way; each side must name the
# other side's ranks (and only them). kill / stop: rank 3 gets SIGKILL / SIGSTOP; ranks 0-2 must
# name it. Within the detection bound plus headroom; then they agree and shrink, and an
# all-reduce over what is left is checked. Removes everything.
set -u
bin=$1
mode=${2:-partition}
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
pid3=$(sed -n 's/.*running pid \([0-9]*\).*/\1/p' "$tmp/out3")
case "$mode" in
  partition) ip -n "$A" link set "pa$sfx" down ;;
  kill) kill -KILL "$pid3" ;;
  stop) kill -STOP "$pid3" ;;
esac
if [ "$mode" = stop ]; then
  for r in 0 1 2; do
    for i in $(seq 300); do grep -q "rank $r: detected" "$tmp/out$r" 2>/dev/null && break; sleep 0.1; done
  done
  kill -KILL "$pid3"
fi
wait
cat "$tmp"/out*
fail=0
ranks="0 1 2 3"; [ "$mode" = partition ] || ranks="0 1 2"
for r in $ranks; do
  if [ "$mode" != partition ]; then want="3, shrunk to 3"
  elif [ "$r" -lt 2 ]; then want="2,3, shrunk to 2"; else want="0,1, shrunk to 2"; fi
  line=$(grep "rank $r: detected" "$tmp/out$r")
  case "$line" in
    *"failed $want ok"*) ;;
    *) echo "FAIL: rank $r: expected failed $want: ${line:-no result}"; fail=1 ;;
  esac
  s=$(echo "$line" | sed -n 's/.*detected \([0-9.]*\) s.*/\1/p')
  if [ -n "$s" ] && awk "BEGIN{exit !($s > 8)}"; then echo "FAIL: rank $r took $s s"; fail=1; fi
done
[ $fail -eq 0 ] && echo "PASS ($mode): the survivors named the failed ranks and shrank"
exit $fail
