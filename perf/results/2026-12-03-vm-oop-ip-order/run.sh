#!/usr/bin/env bash
# 2026-12-03 14:26 UTC, VM E (2-vCPU Intel Xeon, KVM, 2 MiB L2 per core, 260 MiB L3), under flock /tmp/loom-measure.lock:
#   flock /tmp/loom-measure.lock bash run.sh [BUILD] > raw.txt
# Columns of raw.txt: transport, repetition, --ip-first, out-of-place us, in-place us.
# Order effect: each driver run times out of place and in place; --ip-first 1 swaps the order.
B=${1:-build-lead}
for t in shm tcp; do
  for rep in 1 2 3 4; do
    for first in 0 1; do
      out=$(LOOM_TRANSPORT=$t $B/perf/all_reduce_perf --ranks 2 -b 4M -e 4M -n 100 -w 10 -a ring --ip-first $first 2>&1 | grep -v "^#" | awk 'NF>5{print $6, $10}')
      echo "$t rep $rep ip_first $first oop_ip_us $out"
    done
  done
done
