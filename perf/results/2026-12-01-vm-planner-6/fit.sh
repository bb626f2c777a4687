#!/bin/bash
# After the first window: fits on the pooled runs and their choices checked on runs each fit did
# not see (perf/planner/choices_vs_measured.py). Seconds of CPU, no measurement.
set -u
cd "$(dirname "$0")/../../.."
D=perf/results/2026-12-01-vm-planner-6
R5=perf/results/2026-11-30-vm-planner-5
LP="nice build-plan/tools/loom-plan/loom-plan"
CHK="nice perf/planner/choices_vs_measured.py --build build-plan"
mkdir -p $D/fits
NEW="$D/cal/shm-1.jsonl $D/cal/shm-2.jsonl $D/cal/shm-3.jsonl $D/cal/tcp-1.jsonl $D/cal/tcp-2.jsonl"
OLD="$R5/planner_vs_forced.jsonl $R5/fresh/planner_vs_forced.jsonl"
# new: this window's five runs; all: with the fifth run's two full runs (same library);
# loo-N: the window's runs without shm run N (and without tcp run 2 for N = 3).
$LP --calibrate --from-json $NEW --save-params $D/fits/new.txt > /dev/null 2> $D/fits/new.log &
$LP --calibrate --from-json $NEW $OLD --save-params $D/fits/all.txt > /dev/null 2> $D/fits/all.log
wait
for n in 1 2 3; do
  files=""
  for i in 1 2 3; do [ $i != $n ] && files="$files $D/cal/shm-$i.jsonl"; done
  t=$([ $n = 3 ] && echo "$D/cal/tcp-1.jsonl" || echo "$D/cal/tcp-1.jsonl $D/cal/tcp-2.jsonl")
  $LP --calibrate --from-json $files $t --save-params $D/fits/loo-$n.txt > /dev/null 2> $D/fits/loo-$n.log
done
for p in perf/planner/calibrated-vm.txt $D/fits/new.txt $D/fits/all.txt; do
  echo "=== $p"
  $CHK $p $NEW $OLD $R5/fresh/calibration-shm.jsonl
done
for n in 1 2 3; do
  echo "=== leave out shm run $n$([ $n = 3 ] && echo ' and tcp run 2')"
  $CHK $D/fits/loo-$n.txt $D/cal/shm-$n.jsonl $([ $n = 3 ] && echo $D/cal/tcp-2.jsonl)
done
