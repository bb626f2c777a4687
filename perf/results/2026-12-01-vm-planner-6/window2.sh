#!/bin/bash
# Second quiet window (01:35-02:05 UTC): the validation of perf/planner/calibrated-vm.txt (issue
# 4's benchmark), then the same with the fifth run's parameters (before.txt) for comparison, each
# configuration under the shared lock.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-6
B=build-plan
L=/tmp/loom-measure.lock
stamp() { echo "$* $(date -u +%H:%M:%S)" >> $D/stamps.txt; }
stamp "window2 start"
perf/planner/planner_vs_forced.py --build $B --params-file perf/planner/calibrated-vm.txt \
  --rounds 5 --ranks 2,4,8 -e 64m --lock $L --json $D/planner_vs_forced.jsonl --out $D
stamp "validation done"
perf/planner/planner_vs_forced.py --build $B --params-file $D/before.txt \
  --rounds 5 --ranks 2,4,8 -e 64m --lock $L --json $D/before/planner_vs_forced.jsonl \
  --out $D/before
stamp "before-parameters run done"
