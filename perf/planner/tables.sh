#!/bin/sh
# Regenerates the planner decision tables quoted in the README: a 16,384-GPU Dragonfly+ and a
# 16,384-GPU two-level fat-tree with 2:1 leaf oversubscription (4,096 hosts x 4 GPUs, HDR 25 GB/s
# NICs), GPU-class intra-host parameters, and each with the job scattered over the machine.
#   perf/planner/tables.sh [build-dir]
set -e
B=${1:-build}/tools/loom-plan/loom-plan
OUT=$(dirname "$0")/tables
mkdir -p "$OUT"
GPU="shmAlphaUs=1,shmGBps=150,hostMemGBps=600,reduceGBps=1000"
DF="dragonfly:groups=16,leavesPerGroup=16,spinesPerGroup=16,hostsPerLeaf=16,globalLinksPerSpine=8"
FT="fat-tree:levels=2,leavesPerPod=128,spinesPerPod=16,hostsPerLeaf=32"
"$B" --gen "$DF" --ranks-per-host 4 --params "$GPU" > "$OUT/dragonfly16k.txt"
"$B" --gen "$FT" --ranks-per-host 4 --params "$GPU" > "$OUT/fattree16k_2to1.txt"
"$B" --gen "$DF" --ranks-per-host 4 --params "$GPU" --placement scatter --explain 256m \
  > "$OUT/dragonfly16k_scatter_256m.txt"
"$B" --gen "$FT" --ranks-per-host 4 --params "$GPU" --placement scatter --explain 256m \
  > "$OUT/fattree16k_2to1_scatter_256m.txt"
"$B" --gen "$DF" --ranks-per-host 4 --params "$GPU" --placement scatter --explain 64k \
  > "$OUT/dragonfly16k_scatter_64k.txt"
# 256 hosts, one rank each, scattered: a 4:1 tapered Dragonfly+ and an 8:1 fat-tree, where the
# ring is bandwidth-bound and its ordering decides.
"$B" --gen "dragonfly:groups=8,leavesPerGroup=4,spinesPerGroup=4,hostsPerLeaf=8,globalLinksPerSpine=2" \
  --params "$GPU" --placement scatter --explain 256m > "$OUT/dragonfly256_4to1_scatter_256m.txt"
"$B" --gen "fat-tree:levels=2,leavesPerPod=8,spinesPerPod=4,hostsPerLeaf=32" \
  --params "$GPU" --placement scatter --explain 256m > "$OUT/fattree256_8to1_scatter_256m.txt"
echo "wrote $OUT"
