#!/bin/bash
# The planner's choice, simulated, on 16 hosts x 8 GPUs x 8 x 400 Gb/s NICs (non-blocking 8-rail
# fat-tree, spray) at 1 and 8 GiB: the rail-aligned multi-channel ring, at least 380 GB/s bus
# bandwidth (NCCL reports 370-385 on such systems); and on 64 hosts with the leaves 2:1 at least
# 0.9x of the non-blocking figure. Model: no protocol overhead, NVLink 450 GB/s, 2 us + 0.3 us per
# switch per message. Simulation only; no measurement checks these numbers.
set -u
sim=$1
fail=0
busbw() { echo "$1" | awk -v s="$2" '$2=="planner" && $3==s {print $6}'; }
nb=$("$sim" --fabric "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR" \
  --algo planner --size 1G,8G --routing spray -q) || { echo "FAIL: loom-sim exited $?"; exit 1; }
echo "$nb"
for s in 1GiB 8GiB; do
  b=$(busbw "$nb" $s)
  echo "$nb" | grep -q "planner $s: ring_rail" || { echo "FAIL: planner at $s is not ring_rail"; fail=1; }
  awk -v b="$b" 'BEGIN{exit !(b >= 380)}' || { echo "FAIL: busbw $b < 380 at $s"; fail=1; }
done
full=$("$sim" --fabric "fat-tree:levels=2,leavesPerPod=8,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR" \
  --algo planner --size 1G --routing spray -q) || { echo "FAIL: loom-sim exited $?"; exit 1; }
taper=$("$sim" --fabric "fat-tree:levels=2,leavesPerPod=8,spinesPerPod=4,hostsPerLeaf=8,rails=8,speed=NDR" \
  --algo planner --size 1G --routing spray -q) || { echo "FAIL: loom-sim exited $?"; exit 1; }
a=$(busbw "$full" 1GiB) b=$(busbw "$taper" 1GiB)
echo "512 GPUs, 1 GiB: non-blocking $a GB/s, 2:1 $b GB/s"
awk -v a="$a" -v b="$b" 'BEGIN{exit !(b >= 0.9 * a)}' || { echo "FAIL: 2:1 $b < 0.9 x $a"; fail=1; }
[ $fail = 0 ] && echo ok
exit $fail
