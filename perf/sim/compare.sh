#!/usr/bin/env bash
# All-reduce algorithms side by side on three fabrics of the same GPU count (8 GPUs per host):
# non-blocking and 2:1 rail-optimised fat-trees (8 x 400 Gb/s NICs per host) and a Dragonfly+
# (one 400 Gb/s NIC per host, the generator's model). Writes busbw-vs-size and utilisation PNGs
# per fabric under OUT.
#   perf/sim/compare.sh [loom-sim] [OUT] [SWEEP] [ALGOS] [HOSTS_PER_LEAF_LEAVES]
set -euo pipefail
SIM=${1:-build/tools/loom-sim/loom-sim}
OUT=${2:-sim-compare}
SWEEP=${3:-1M:1G:4}
ALGOS=${4:-rabenseifner,hier,hier_tree,ring}
LEAVES=${5:-4}   # leaves per rail; hosts = 32 x LEAVES, GPUs = 256 x LEAVES
mkdir -p "$OUT"
declare -A fab=(
  [nonblocking]="fat-tree:levels=2,leavesPerPod=${LEAVES},spinesPerPod=32,hostsPerLeaf=32,rails=8,speed=NDR"
  [taper2]="fat-tree:levels=2,leavesPerPod=${LEAVES},spinesPerPod=16,hostsPerLeaf=32,rails=8,speed=NDR"
  [dragonfly]="dragonfly:groups=$((2 * LEAVES)),leavesPerGroup=4,spinesPerGroup=4,hostsPerLeaf=4,globalLinksPerSpine=4,speed=NDR"
)
for name in nonblocking taper2 dragonfly; do
  routing=spray
  [[ $name == dragonfly ]] && routing=ugal
  echo "## $name: ${fab[$name]} ($routing)"
  mkdir -p "$OUT/$name"
  "$SIM" --fabric "${fab[$name]}" --algo "$ALGOS" --sweep "$SWEEP" --routing "$routing" \
    --top 3 --plot "$OUT/$name"
done
