#!/bin/bash
# Second quiet window (01:35-02:05 UTC): the validation of perf/planner/calibrated-vm.txt (issue
# 4's benchmark: 2, 4, 8 ranks over shm and tcp, 8 B-64 MiB, 5 interleaved rounds), then, as time
# allows, the fifth run's planner beside it (its library, 6c50877, built from a separate worktree
# into OLD, with its parameters, before.txt). Each transport (2, 4, 8 ranks: 1-2 minutes) is one
# locked command; the tables are rendered from the joined jsonl files.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-6
B=build-plan
OLD=${OLD:-/tmp/plan6/old/b}
L=/tmp/loom-measure.lock
V=perf/planner/planner_vs_forced.py
stamp() { echo "$* $(date -u +%H:%M:%S)" >> $D/stamps.txt; }
mkdir -p $D/before
rm -f $D/planner_vs_forced.jsonl $D/before/planner_vs_forced.jsonl
stamp "window2 start"
for T in shm tcp; do
  flock $L $V --build $B --params-file perf/planner/calibrated-vm.txt --rounds 5 --ranks 2,4,8 \
    -e 64m --transports $T --json $D/planner_vs_forced.jsonl --out $D/tmp-new > /dev/null
  stamp "validation $T done"
done
$V --from-json $D/planner_vs_forced.jsonl --out $D | tail -3
for T in shm tcp; do
  [ "$(date -u +%H%M)" -lt 0158 ] || break
  flock $L $V --build $OLD --params-file $D/before.txt --rounds 5 --ranks 2,4,8 -e 64m \
    --transports $T --json $D/before/planner_vs_forced.jsonl --out $D/tmp-old > /dev/null
  stamp "fifth run's planner $T done"
done
rm -rf $D/tmp-new $D/tmp-old
[ -s $D/before/planner_vs_forced.jsonl ] &&
  $V --from-json $D/before/planner_vs_forced.jsonl --out $D/before | tail -3
stamp "window2 end"
