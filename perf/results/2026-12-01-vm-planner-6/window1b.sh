#!/bin/bash
# The first window's runs after its first shm run (window1.sh stopped there: the shared lock was
# busy, every configuration waited 3-4 minutes for it): tcp, shm, tcp, alternating, each transport
# (2, 4, 8 ranks, 1-2 minutes) as one locked command, then the tcp planned-against-forced check, as
# long as time allows.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-6
B=build-plan
L=/tmp/loom-measure.lock
P=perf/planner/calibrated-vm.txt
LP=$B/tools/loom-plan/loom-plan
stamp() { echo "$* $(date -u +%H:%M:%S)" >> $D/stamps.txt; }
while pgrep -f "planner_vs_forced.py --build $B" > /dev/null; do sleep 2; done
stamp "shm run 1"
for run in tcp-1 shm-2 tcp-2; do
  T=${run%-*}
  flock $L perf/planner/planner_vs_forced.py --build $B --params-file $P --rounds 5 \
    --ranks 2,4,8 --transports $T -e 64m --json $D/cal/$run.jsonl --out $D/cal/$run
  stamp "$run"
done
mkdir -p $D/tcp-same
for n in 8 2; do
  flock $L $LP --measure tcp --ranks $n --min 8 --max 32k --rounds 11 --algos rd,planner \
    --params-file $P > $D/tcp-same/tcp$n-rd-planner.jsonl
  stamp "tcp-same $n"
done
