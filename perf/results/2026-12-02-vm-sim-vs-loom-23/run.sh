#!/usr/bin/env bash
# Validation run 23 (VM D: 2-vCPU AMD EPYC under Firecracker): run 22 again, unchanged code and
# settings, to see whether its best column ("cpu, all-gather", 44 of 48) holds in a second run.
# Decided before measuring: the 1 MiB points get 9 rounds, 4-64 MiB 3; tcp 1 MiB, shm 1 MiB, then
# tcp and shm at 4-64 MiB.
# The script runs from a copy taken at the start ($2), so edits to the repository's copy during
# the run do not reach it.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t-1m" --transports "$t" --sizes 1M --rounds 9
done
python3 "$S" --build "$B" --out "$OUT/tcp" --transports tcp --sizes 4M,16M,64M --rounds 3
python3 "$S" --build "$B" --out "$OUT/shm" --transports shm --sizes 4M,16M,64M --rounds 3
