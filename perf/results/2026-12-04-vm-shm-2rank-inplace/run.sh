#!/usr/bin/env bash
# 2-rank shm: out-of-place vs in-place ring all-reduce across sizes, with the pieces beside it.
# Usage: run.sh [OUT_DIR] [BUILD_DIR]  (the 2026-12-04 run used build-lead); analyze.py summarises.
mkdir -p "${1:-$(dirname "$0")}"
O=$(cd "${1:-$(dirname "$0")}" && pwd)
B=${2:-build}/perf
cd "$(dirname "$0")/../../.."
export LOOM_TRANSPORT=shm
for rep in 1 2 3; do
  flock /tmp/loom-measure.lock bash -c "
  $B/all_reduce_perf --ranks 2 -b 128K -e 16M -f 2 -n 100 -w 10 -a ring -J $O/ar$rep.jsonl > $O/ar$rep.txt 2>&1
  $B/all_gather_perf --ranks 2 -b 128K -e 16M -f 2 -n 100 -w 10 -a ring -J $O/ag$rep.jsonl > $O/ag$rep.txt 2>&1
  $B/reduce_scatter_perf --ranks 2 -b 128K -e 16M -f 2 -n 100 -w 10 -a ring -J $O/rs$rep.jsonl > $O/rs$rep.txt 2>&1
  $B/sendrecv_perf --ranks 2 -b 128K -e 16M -f 2 -n 100 -w 10 -J $O/sr$rep.jsonl > $O/sr$rep.txt 2>&1
  $B/membw_perf -b 64K -e 32M -f 2 -n 20 -w 2 > $O/mb$rep.txt 2>&1
  "
done
