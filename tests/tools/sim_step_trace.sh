#!/bin/bash
# loom-plan --simulate --sim-step-trace and perf/step_trace.py --sim: the simulator's trace of a
# 4-rank double binary tree (shm, 2 cores) at 1 and 4 MiB has every rank's steps per size (calls
# 0 and 1), and its 1 MiB call has step for step the schedule a real 4-rank run executes under the
# same cost parameters (traced with LOOM_STEP_TRACE), so the two compare; the 4 MiB call does not
# match that run and is refused; an unwritable trace path fails with a message naming the option,
# and so does the option without --simulate.
set -u
src=$1 plan=$2 driver=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
params="shmAlphaUs=10,shmGBps=3.3,hostMemGBps=1000,reduceGBps=5.6,cores=2"
"$plan" --hosts 1 --ranks-per-host 4 --params "$params" --simulate --sim-always --sim-cores 2 \
  --algo allreduce:tree --min 1M --max 4M --sim-step-trace "$tmp/sim.txt" > "$tmp/plan.out" 2>&1 ||
  { echo "loom-plan failed:"; cat "$tmp/plan.out"; exit 1; }
head -1 "$tmp/sim.txt" | grep -q '^# loom simulated step trace' || { echo "no header"; fail=1; }
for call in 0 1; do
  for r in 0 1 2 3; do
    grep -q "^$r $call 0 " "$tmp/sim.txt" || { echo "no rank $r call $call"; fail=1; }
  done
done
LOOM_TRANSPORT=shm LOOM_PLAN_PARAMS="$params" LOOM_ALGO=allreduce:tree \
  LOOM_STEP_TRACE="$tmp/t.%r" "$driver" --ranks 4 --timeout 60 -b 1M -e 1M -n 3 -w 1 \
  > "$tmp/drv.out" 2>&1 || { echo "driver failed:"; cat "$tmp/drv.out"; exit 1; }
python3 "$src/perf/step_trace.py" "$tmp"/t.? --skip 1 --steps --sim "$tmp/sim.txt" \
  --sim-call 0 > "$tmp/cmp" 2>&1 || { echo "compare failed:"; cat "$tmp/cmp"; fail=1; }
grep -q "simulated start us" "$tmp/cmp" || { echo "no simulated columns"; fail=1; }
python3 "$src/perf/step_trace.py" "$tmp"/t.? --sim "$tmp/sim.txt" --sim-call 1 > "$tmp/bad" 2>&1 &&
  { echo "a 4 MiB simulation compared with a 1 MiB run"; fail=1; }
grep -q "differ" "$tmp/bad" || { echo "mismatch not named:"; cat "$tmp/bad"; fail=1; }
"$plan" --hosts 1 --ranks-per-host 4 --params "$params" --simulate --sim-cores 2 \
  --min 1M --max 1M --sim-step-trace /nonexistent-loom-dir/sim.txt > "$tmp/err" 2>&1 &&
  { echo "unwritable path accepted"; fail=1; }
grep -q -- "--sim-step-trace: cannot open" "$tmp/err" || { echo "no message:"; cat "$tmp/err"; fail=1; }
# Without --simulate the option would do nothing: refused, naming both.
"$plan" --hosts 1 --ranks-per-host 4 --params "$params" --min 1M --max 1M \
  --sim-step-trace "$tmp/x.txt" > "$tmp/err2" 2>&1 && { echo "--sim-step-trace without --simulate accepted"; fail=1; }
grep -q -- "--sim-step-trace requires --simulate" "$tmp/err2" || { echo "no message:"; cat "$tmp/err2"; fail=1; }
[ $fail -eq 0 ] && echo "sim step trace: OK"
exit $fail
