#!/usr/bin/env bash
# 2-rank shm ring all-reduce at 1 MiB with LOOM_STEP_TRACE: reps 1-2 out of place first, 3-4 in
# place first (--ip-first 1); run 48's calibrated parameters. steps.py summarises.
O=$(cd "${1:-$(dirname "$0")}" && pwd)
B=${2:-build}
cd "$(dirname "$0")/../../../.."
rm -f "$O"/t.*
export LOOM_TRANSPORT=shm LOOM_PLAN_PARAMS="shmAlphaUs=1.318,shmGBps=26.0736,hostMemGBps=1000,reduceGBps=36.5100,cores=2,shmAlphaCpu=0"
for rep in 1 2 3 4; do
  f=0; [ $rep -ge 3 ] && f=1
  flock /tmp/loom-measure.lock env LOOM_STEP_TRACE="$O/t.$rep.%r" "$B/perf/all_reduce_perf" --ranks 2 -b 1M -e 1M -n 300 -w 30 -a ring --ip-first $f > "$O/ar.$rep.txt" 2>&1
done
