#!/usr/bin/env bash
# VM D (2-vCPU AMD EPYC, Firecracker), 2026-12-02 13:45-13:49 UTC, build-lead, nothing else running.
# 25 runs of a 4-rank shm ring all-reduce of 1 MiB (200 iterations), each between two probes:
#  copy_probe: one thread copies 1 MiB 50 times, 10 times, mean ms (a core's speed);
#  pingpong:   two threads pinned to CPU 0 and 1 bounce a cache line, ns per round trip (how far
#              apart the host placed the two vCPUs).
# Columns: probe before, probe after, time_us, cpu_us, steal_pct (copy_probe_vs_ring.txt also
# lists cpu_us and steal; pingpong_vs_ring.txt the same).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."
gcc -O2 -o /tmp/copy_probe "$HERE/copy_probe.c"
gcc -O2 -pthread -o /tmp/pingpong "$HERE/pingpong.c"
for probe in copy_probe pingpong; do
  for i in $(seq 1 25); do
    pb=$(/tmp/$probe)
    rm -f /tmp/pj.json
    LOOM_TRANSPORT=shm LOOM_ALGO=allreduce:ring build-lead/perf/all_reduce_perf --ranks 4 -b 1M -e 1M \
      -n 200 -w 20 -J /tmp/pj.json > /dev/null 2>&1
    pa=$(/tmp/$probe)
    python3 -c "import json; d=json.loads(open('/tmp/pj.json').readline()); o=d['oop']; print($pb, $pa, o['time_us'], o['cpu_us'], o.get('steal_pct'))"
  done
done
