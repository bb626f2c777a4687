#!/usr/bin/env bash
# Simulator scaling: one all-reduce of SIZE on N GPUs for each algorithm; prints simulated
# time/busbw and the simulator's own user CPU time and peak memory (GNU time). CSV on stdout.
# Fabric: 8 GPUs and 8 x 400 Gb/s rails per host, 32 hosts per leaf, 1:1 rail-optimised fat-tree:
# two levels up to 256 hosts (32 spines), else three levels (pods of 256 hosts, 32 spines per pod,
# 2048 cores). ROUTING (env, default spray: adaptive routing, a flow split over all shortest paths;
# symmetric ranks fold into classes, sim/fold.h; ecmp's per-pair hashes break the symmetry, so
# with ecmp little folds). BATCH_US (env, default 0: exact to 1 ps; > 0 merges events closer than
# this, loom-sim --batch-us). FOLD=0 (env) runs without folding (--no-fold). TIMEOUT (env, seconds)
# caps each run: a run that does not finish prints "stopped after TIMEOUT s".
#   perf/sim/scaling.sh [loom-sim] [SIZE] [ALGOS] [GPU counts...]
# Example: perf/sim/scaling.sh build/tools/loom-sim/loom-sim 1G "hier rabenseifner" 1024 4096 16384
set -euo pipefail
SIM=${1:-build/tools/loom-sim/loom-sim}
SIZE=${2:-1G}
ALGOS=${3:-"hier hier_tree rabenseifner tree ring"}
shift $(( $# < 3 ? $# : 3 ))
COUNTS=${*:-"1024 2048 4096 8192 16384"}
nofold=""
[[ ${FOLD:-1} == 0 ]] && nofold=--no-fold
echo "gpus,algo,size,routing,sim_time_us,busbw_GBps,flows,classes,user_s,wall_s,peak_rss_MB"
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
    rc=0
    out=$( { timeout "${TIMEOUT:-0}" /usr/bin/time -f "TIME %U %e %M" "$SIM" --fabric "$spec" \
             --algo "$a" --size "$SIZE" --ranks "$n" --routing "${ROUTING:-spray}" \
             --batch-us "${BATCH_US:-0}" $nofold -q; } 2>&1 ) || rc=$?
    if (( rc == 124 )); then echo "$n,$a,$SIZE,${ROUTING:-spray},stopped after ${TIMEOUT} s"; continue; fi
    if (( rc != 0 )); then echo "$n,$a,$SIZE,${ROUTING:-spray},FAILED (exit $rc)"; continue; fi
    row=$(echo "$out" | awk '$1=="healthy"{print $4","$6","$7","$10}')
    t=$(echo "$out" | awk '$1=="TIME"{printf "%s,%s,%.0f", $2, $3, $4/1024}')
    echo "$n,$a,$SIZE,${ROUTING:-spray},$row,$t"
  done
done
