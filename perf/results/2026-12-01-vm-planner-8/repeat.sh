#!/bin/bash
# More held-out runs on the idle machine, same method, each into its own directory: run-b..d (05:42-05:49, table fitted on 12 runs), run-e..g (05:49-05:56, table refitted on 16 runs: 8a-d added), run-h..k (ROUNDS=15; j, k at 06:19-06:27).
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-8
for R in ${RUNS:-b c d}; do
  mkdir -p $D/run-$R
  for T in shm tcp; do
    perf/planner/planner_vs_forced.py --build ${B:-build-lead} --params-file perf/planner/calibrated-vm.txt \
      --lock /tmp/loom-measure.lock --rounds ${ROUNDS:-7} --ranks 2,4,8 -e 64m --transports $T \
      --json $D/run-$R/planner_vs_forced.jsonl --out $D/tmp > /dev/null
  done
  perf/planner/planner_vs_forced.py --from-json $D/run-$R/planner_vs_forced.jsonl --out $D/run-$R | tail -2
  echo "run $R done $(date -u +%H:%M:%S)" >> $D/stamps.txt
done
rm -rf $D/tmp
