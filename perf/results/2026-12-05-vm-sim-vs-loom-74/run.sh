#!/usr/bin/env bash
# Validation run 74 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 70
# repeated at 69f77fa (session 33): the first held-out run of cpu_gb (host set rounded up above the cores),
# beside cpu_ge, the shm-rate (cpu_gs) and earlier columns. tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB,
# shm 4-64 MiB. Runs from a copy taken at the start.
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
