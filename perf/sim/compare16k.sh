#!/usr/bin/env bash
# The README's 16,384-GPU comparison: all-reduce algorithms side by side on three fabrics of 2,048
# hosts x 8 GPUs, busbw against size, one loom-sim run per fabric (busbw and utilisation PNGs
# under OUT/<fabric>, the table on stdout, the simulator's user CPU time and peak memory per run).
#   nonblocking  3-level rail-optimised fat-tree, 8 x 400 Gb/s NICs per host, 1:1 at every level
#                (8 pods x 8 leaves per rail x 32 hosts, 32 spines per pod, 2,048 cores)
#   taper2       the same with 16 spines per pod and 1,024 cores: leaves 2:1, spines 1:1
#   dragonfly    Dragonfly+ of 8 groups x 256 hosts with 8 x 400 Gb/s NICs per host (rails=8: 8
#                leaves per rail and group, 32 hosts per leaf), 32 spines per group (leaves 1:1),
#                28 global links per spine: 896 per group, 128 per group pair (global/injection
#                bandwidth 0.44)
#   dragonfly1   the earlier table's Dragonfly+ with one 400 Gb/s NIC per host (8 groups x 32 leaves
#                x 8 hosts, 7 spines, 16 global links per spine), for reference
# Routing: spray (adaptive: every flow split evenly over all shortest paths) on all three, so
# symmetric ranks fold (sim/fold.h); exact timing (no --batch-us).
# TIMEOUT (env, seconds, default none) caps each loom-sim run.
#   perf/sim/compare16k.sh [loom-sim] [OUT] [SIZES] [ALGOS] [FABRICS]
# Each fabric's parts (switches, ports, cables) are printed first (loom-topo --generate).
set -euo pipefail
SIM=${1:-build/tools/loom-sim/loom-sim}
OUT=${2:-sim-compare-16k}
SIZES=${3:-1M,32M,1G,4G}
ALGOS=${4:-ring,tree,hier,hier_tree,rabenseifner,planner}
FABRICS=${5:-"nonblocking taper2 dragonfly"}
declare -A fab=(
  [nonblocking]="fat-tree:levels=3,pods=8,leavesPerPod=8,spinesPerPod=32,cores=2048,hostsPerLeaf=32,rails=8,speed=NDR"
  [taper2]="fat-tree:levels=3,pods=8,leavesPerPod=8,spinesPerPod=16,cores=1024,hostsPerLeaf=32,rails=8,speed=NDR"
  [dragonfly]="dragonfly:groups=8,leavesPerGroup=8,spinesPerGroup=32,hostsPerLeaf=32,globalLinksPerSpine=28,rails=8,speed=NDR"
  [dragonfly1]="dragonfly:groups=8,leavesPerGroup=32,spinesPerGroup=7,hostsPerLeaf=8,globalLinksPerSpine=16,speed=NDR"
)
mkdir -p "$OUT"
for name in $FABRICS; do
  echo "## $name: ${fab[$name]} (spray)"
  mkdir -p "$OUT/$name"
  "$(dirname "$SIM")/../loom-topo/loom-topo" --generate "${fab[$name]}" | grep -E "parts:|fabric:|taper|global/host" || true
  timeout "${TIMEOUT:-0}" /usr/bin/time -f "# simulator: %U s user CPU, %e s wall, %M KB peak RSS" \
    "$SIM" --fabric "${fab[$name]}" --ranks 16384 --algo "$ALGOS" --size "$SIZES" \
    --routing spray --top 3 --plot "$OUT/$name" 2>&1 || echo "# $name: stopped (exit $?, TIMEOUT=${TIMEOUT:-none})"
done
