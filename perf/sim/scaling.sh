#!/usr/bin/env bash
# Simulator scaling: one all-reduce of SIZE on N GPUs (8 per host, 8 x 400 Gb/s rails, two-level
# 1:1 fat-tree, 32 hosts per leaf) for each algorithm; prints simulated time/busbw and the
# simulator's own user CPU time and peak memory (GNU time). Output: CSV on stdout.
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
  leaves=$(( (hosts + 31) / 32 ))
  spec="fat-tree:levels=2,leavesPerPod=${leaves},spinesPerPod=32,hostsPerLeaf=32,rails=8,speed=NDR"
  for a in $ALGOS; do
    out=$( { /usr/bin/time -f "TIME %U %e %M" "$SIM" --fabric "$spec" --algo "$a" --size "$SIZE" \
             --ranks "$n" -q; } 2>&1 ) || { echo "$n,$a,$SIZE,FAILED" ; continue; }
    row=$(echo "$out" | awk '$1=="healthy"{print $4","$6","$7}')
    t=$(echo "$out" | awk '$1=="TIME"{printf "%s,%s,%.0f", $2, $3, $4/1024}')
    echo "$n,$a,$SIZE,$row,$t"
  done
done
