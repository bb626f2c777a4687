#!/bin/bash
# Pair-ring size sweep (LOOM_SHM_BUFFER_BYTES 4 MiB vs 1 MiB), interleaved, 4 repetitions;
# measured under flock /tmp/loom-measure.lock. Usage: run.sh [BUILD_DIR] > raw.txt (BUILD_DIR
# relative to where it is called; default build-lead, as measured). Output: one line per driver
# run: rep ranks size algo ring_bytes oop_us ip_us forced_algo.
B=$(realpath "${1:-build-lead}")
cd "$(dirname "$0")/../../.."
for rep in 1 2 3 4; do
 for p in 2 4 8; do
  for s in 1M 4M 16M 64M; do
   case $s in 1M) n=100;; 4M) n=30;; 16M) n=10;; 64M) n=4;; esac
   for algo in planner ring; do
    for rb in 4194304 1048576; do
      extra=""; [ $algo = ring ] && extra="-a ring"
      LOOM_SHM_BUFFER_BYTES=$rb LOOM_TRANSPORT=shm timeout 300 "$B"/perf/all_reduce_perf --ranks $p -b $s -e $s -n $n -w 3 $extra -J /tmp/ring-sweep.json >/dev/null 2>&1
      python3 -c "import json;d=json.loads(open('/tmp/ring-sweep.json').readline());print($rep,$p,'$s','$algo',$rb,d['oop']['time_us'],d['ip']['time_us'],d['algo'],flush=True)"
      rm -f /tmp/ring-sweep.json
    done
   done
  done
 done
done
