#!/usr/bin/env bash
# Validation run 50 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 48 repeated,
# model unchanged since run 44; the third held-out scoring of the ring-core columns on VM F (run 48:
# "ring's core from the all-gather" 46 of 48; run 49 see its results). Decided before measuring.
# tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB. The script runs from a copy taken at the start.
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
