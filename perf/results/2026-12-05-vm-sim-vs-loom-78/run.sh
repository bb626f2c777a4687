#!/usr/bin/env bash
# Validation run 78 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 73
# repeated at a2de13a (session 34): the first full held-out run of the host-set-up-above-the-cores
# column (cpu_gb), beside cpu_ge, cpu_gs and earlier columns. tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB,
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
