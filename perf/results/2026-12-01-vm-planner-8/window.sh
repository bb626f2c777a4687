#!/bin/bash
# Run at 05:35 UTC (machine idle: load 0.00, the helper waiting for its window): issue 4's held-out validation of perf/planner/calibrated-vm.txt
# with the pooled tuning table (2, 4, 8 ranks over shm and tcp, 8 B-64 MiB, 7 interleaved rounds;
# each configuration under the measurement lock on its own, --lock). The 'planner' column is the
# library with the table, the 'model' column the same parameters without it.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-8
B=${B:-build-lead}
L=/tmp/loom-measure.lock
V=perf/planner/planner_vs_forced.py
stamp() { echo "$* $(date -u +%H:%M:%S)" >> $D/stamps.txt; }
rm -f $D/planner_vs_forced.jsonl
stamp "window start (HEAD $(git rev-parse --short HEAD))"
for T in shm tcp; do
  $V --build $B --params-file perf/planner/calibrated-vm.txt --lock $L --rounds 7 --ranks 2,4,8 \
    -e 64m --transports $T --json $D/planner_vs_forced.jsonl --out $D/tmp > /dev/null
  stamp "validation $T done"
done
$V --from-json $D/planner_vs_forced.jsonl --out $D | tail -3
rm -rf $D/tmp
stamp "window end"
