#!/bin/bash
# First quiet window (00:35-00:55 UTC): calibration data for the current library, and the two
# side questions (one communicator per process; tcp planned vs forced rd). Every measurement under
# the shared lock, one configuration per lock.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-6
B=build-plan
L=/tmp/loom-measure.lock
P=perf/planner/calibrated-vm.txt
LP=$B/tools/loom-plan/loom-plan
stamp() { echo "$* $(date -u +%H:%M:%S)" >> $D/stamps.txt; }
mkdir -p $D/cal $D/single $D/tcp-same
stamp "window1 start"
# Calibration runs in the validation's own form (every algorithm forced, direct, planner; the
# installed parameters), shm three times and tcp twice, interleaved.
for i in 1 2 3; do
  perf/planner/planner_vs_forced.py --build $B --params-file $P --rounds 5 --ranks 2,4,8 \
    --transports shm -e 64m --lock $L --json $D/cal/shm-$i.jsonl --out $D/cal/shm-$i
  stamp "shm run $i"
  if [ $i -le 2 ]; then
    perf/planner/planner_vs_forced.py --build $B --params-file $P --rounds 5 --ranks 2,4,8 \
      --transports tcp -e 64m --lock $L --json $D/cal/tcp-$i.jsonl --out $D/cal/tcp-$i
    stamp "tcp run $i"
  fi
done
# One communicator per process (as a user's program has), 4 ranks over shm, against the same
# candidates side by side in one process.
for a in ring rabenseifner hier tree; do
  flock $L $LP --measure shm --ranks 4 --min 32k --max 8m --rounds 5 --algos $a \
    > $D/single/shm4-$a.jsonl
done
flock $L $LP --measure shm --ranks 4 --min 32k --max 8m --rounds 5 \
  --algos ring,rabenseifner,hier,tree > $D/single/shm4-together.jsonl
stamp "single done"
# tcp small sizes: the planner's communicator against the same algorithm forced, 11 rounds.
for n in 2 4 8; do
  flock $L $LP --measure tcp --ranks $n --min 8 --max 32k --rounds 11 --algos rd,planner \
    --params-file $P > $D/tcp-same/tcp$n-rd-planner.jsonl
done
stamp "window1 end"
