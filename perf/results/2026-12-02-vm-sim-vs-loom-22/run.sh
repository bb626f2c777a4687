#!/usr/bin/env bash
# Validation run 22 (VM D: 2-vCPU AMD EPYC under Firecracker), the first with the ring all-gather
# after each point (the "cpu, all-gather" column: the p-rank cpu calibration with the per-message
# latency fitted so that the simulator prices the ring all-gather of the same S on the same ranks
# at its measured time). Decided before measuring, as run 21: the 1 MiB points get 9 rounds, the
# others 3; everything else as run 21. The 1 MiB points run first (tcp, then shm), because the
# gap this column is for is tcp on 4 ranks at 1-4 MiB.
set -euo pipefail
B=${1:-build-sim}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t-1m" --transports "$t" \
    --sizes 1M --rounds 9
done
for t in tcp shm; do
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t" --transports "$t" \
    --sizes 4M,16M,64M --rounds 3
done
