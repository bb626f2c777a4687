#!/usr/bin/env bash
# Simulator scaling: one all-reduce of SIZE on N GPUs for each algorithm; prints simulated
# time/busbw and the simulator's own user CPU time and peak memory (GNU time). CSV on stdout.
# Fabric: 8 GPUs and 8 x 400 Gb/s rails per host, 32 hosts per leaf, 1:1 rail-optimised fat-tree:
# two levels up to 256 hosts (32 spines), else three levels (pods of 256 hosts, 32 spines per pod,
# 2048 cores). ROUTING (env, default ecmp: one path per flow; spray splits a flow over all 1024
# core paths, which is slower to simulate). BATCH_US (env, default 1): events closer than this
# are merged (loom-sim --batch-us; the error it adds is measured in tests/sim and the README).
#   perf/sim/scaling.sh [loom-sim] [SIZE] [ALGOS] [GPU counts...]
# Example: perf/sim/scaling.sh build/tools/loom-sim/loom-sim 1G "hier rabenseifner" 1024 4096 16384
set -euo pipefail
SIM=${1:-build/tools/loom-sim/loom-sim}
SIZE=${2:-1G}
ALGOS=${3:-"hier hier_tree rabenseifner tree ring"}
shift $(( $# < 3 ? $# : 3 ))
COUNTS=${*:-"1024 2048 4096 8192 16384"}
echo "gpus,algo,size,sim_time_us,busbw_GBps,flows,user_s,wall_s,peak_rss_MB"
for n in $COUNTS; do
  hosts=$((n / 8))
  if (( hosts <= 256 )); then
    leaves=$(( (hosts + 31) / 32 ))
    spec="fat-tree:levels=2,leavesPerPod=${leaves},spinesPerPod=32,hostsPerLeaf=32,rails=8,speed=NDR"
  else
    pods=$(( (hosts + 255) / 256 ))
    spec="fat-tree:levels=3,pods=${pods},leavesPerPod=8,spinesPerPod=32,cores=2048,hostsPerLeaf=32,rails=8,speed=NDR"
  fi
  for a in $ALGOS; do
    out=$( { /usr/bin/time -f "TIME %U %e %M" "$SIM" --fabric "$spec" --algo "$a" --size "$SIZE" \
             --ranks "$n" --routing "${ROUTING:-ecmp}" --batch-us "${BATCH_US:-1}" -q; } 2>&1 ) || { echo "$n,$a,$SIZE,FAILED" ; continue; }
    row=$(echo "$out" | awk '$1=="healthy"{print $4","$6","$7}')
    t=$(echo "$out" | awk '$1=="TIME"{printf "%s,%s,%.0f", $2, $3, $4/1024}')
    echo "$n,$a,$SIZE,$row,$t"
  done
done
