#!/usr/bin/env bash
# Ring all-reduce busbw on hosts with 8 GPUs and 8 x 400 Gb/s NICs, as NCCL runs it (8 channels,
# each leaving a host through a different NIC), against the 370-385 GB/s busbw NCCL reports for
# large messages on such systems (nccl.md). Non-blocking rail-optimised fat-tree, adaptive
# routing (spray), 16 hosts = 128 GPUs (busbw at large sizes does not depend on the host count).
#   perf/sim/nccl_compare.sh [loom-sim] [plot dir]
set -euo pipefail
SIM=${1:-build/tools/loom-sim/loom-sim}
PLOT=${2:-}
spec="fat-tree:levels=2,leavesPerPod=2,spinesPerPod=8,hostsPerLeaf=8,rails=8,speed=NDR"
args=(--fabric "$spec" --algo ring --channels 8 --sweep 64M:4G:4 --routing spray --top 3)
if [[ -n "$PLOT" ]]; then args+=(--plot "$PLOT"); fi
"$SIM" "${args[@]}"
echo "# NCCL reference (nccl.md): 370-385 GB/s busbw, all-reduce, 8 x 400 Gb/s per node"
