#!/usr/bin/env bash
# Validation run 35 (VM D: 2-vCPU AMD EPYC under Firecracker): run 34 repeated (5 rounds at
# 4-64 MiB, 9 at 1 MiB) with loom's new default shm pair ring, 1 MiB (4 MiB in runs 1-33), and
# the in-place time of every point kept beside the out-of-place one. Code committed before the
# run: every column held out, the footprint column now with 1 MiB rings. Decided before measuring.
# The 1 MiB points get 9 rounds, 4-64 MiB 5; tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB.
# The script runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t-1m" --transports "$t" --sizes 1M --rounds 9
done
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t" --transports "$t" --sizes 4M,16M,64M --rounds 5
done
