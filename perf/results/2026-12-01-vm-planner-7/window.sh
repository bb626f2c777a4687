#!/bin/bash
# Quiet window (03:55-05:05 UTC): issue 4's validation of perf/planner/calibrated-vm.txt (2, 4, 8
# ranks over shm and tcp, 8 B-64 MiB, 7 interleaved rounds; each configuration under the
# measurement lock on its own, --lock), then the direct path under load (one locked command).
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-7
B=build-plan
L=/tmp/loom-measure.lock
V=perf/planner/planner_vs_forced.py
BEFORE=${BEFORE:-/tmp/loom-before/b/perf/all_reduce_perf}
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
if [ -x "$BEFORE" ]; then
  flock $L $D/direct_under_load.sh "$BEFORE" $B/perf/all_reduce_perf 7 > $D/direct_under_load.txt 2>&1
  stamp "direct under load done"
fi
stamp "window end"
