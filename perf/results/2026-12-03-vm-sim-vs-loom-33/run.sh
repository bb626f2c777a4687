#!/usr/bin/env bash
# Validation run 33 (VM D: 2-vCPU AMD EPYC under Firecracker): run 32 repeated with the same
# settings (5 rounds at 4-64 MiB), a second run with 5 rounds. The code is run 32's plus the
# column "cpu, all-gather, pair-ring footprint" and the repeatability line, both committed
# before run 32's results were read: every column held out. Decided before measuring.
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
