#!/usr/bin/env bash
# Validation run 31 (VM D: 2-vCPU AMD EPYC under Firecracker): runs 29-30 repeated unchanged (same
# code and settings, decided before measuring), a third held-out run for the column "cpu,
# all-gather, cheaper core" (45 and 48 of 48 in runs 29 and 30).
# The 1 MiB points get 9 rounds, 4-64 MiB 3; tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB.
# The script runs from a copy taken at the start.
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
