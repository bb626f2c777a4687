#!/usr/bin/env bash
# Usage: run_uts_latency.sh MULTIHOST_RANK_BINARY MAX_US
# 4 ranks as two "hosts" told apart by hostname only (UTS namespaces, one network namespace): ranks
# 0,1 on loom-a and 2,3 on loom-b, so each rank has a shm peer and tcp peers (over loopback). Every
# rank must see correct results and a mean 8-byte all-reduce time under MAX_US. A rank that slept
# on one transport while a message arrived on the other used to wait out a 1 ms slice (1.1-1.2 ms
# per call against 50-70 us with tcp alone); now it sleeps in one poll over both.
set -u
bin=$1 max=$2
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
  echo "SKIP: needs root and unshare"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in 0 1 2 3; do
  h=loom-a; [ "$r" -ge 2 ] && h=loom-b
  unshare --uts sh -c "hostname $h; LOOM_RANK=$r LOOM_NRANKS=4 ID_FILE=$tmp/id LATENCY_ITERS=400 \
    LOOM_SOCKET_IFNAME=lo LOOM_TIMEOUT_MS=30000 LOOM_DEBUG=INFO timeout 90 $bin" >"$tmp/out$r" 2>&1 &
done
wait
cat "$tmp"/out* | grep -v ' INFO ' 
ok=$(cat "$tmp"/out* | grep -c ': ok (0 wrong)')
[ "$ok" -eq 4 ] || { echo "FAIL: $ok of 4 ranks ok"; cat "$tmp"/out*; exit 1; }
grep -q "shm transport ready: 1 peers" "$tmp/out0" || { echo "FAIL: rank 0 has no shm peer"; exit 1; }
worst=$(cat "$tmp"/out* | awk '/latency/ { if ($4 > w) w = $4 } END { print w + 0 }')
echo "worst mean 8-byte all-reduce: $worst us (limit $max us)"
awk -v w="$worst" -v m="$max" 'BEGIN { exit !(w < m) }' || { echo "FAIL: too slow"; exit 1; }
echo "PASS"
