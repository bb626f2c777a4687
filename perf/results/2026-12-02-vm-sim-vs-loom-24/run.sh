#!/usr/bin/env bash
# Validation run 24 (VM D: 2-vCPU AMD EPYC under Firecracker), the first with the ring
# reduce-scatter after each point's ring all-gather (the "cpu, + reduce-scatter" column: the
# "cpu, all-gather" one with the reduction rate fitted so that the simulator prices the
# reduce-scatter at its measured time). Decided before measuring, as runs 22 and 23: the 1 MiB
# points get 9 rounds, 4-64 MiB 3; tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB. The script
# runs from a copy taken at the start ($2).
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t-1m" --transports "$t" --sizes 1M --rounds 9
done
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t" --transports "$t" --sizes 4M,16M,64M --rounds 3
done
