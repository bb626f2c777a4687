#!/usr/bin/env bash
# Validation run 63 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): runs 61-62
# repeated at the same model (f75cfd6's validate_local): the third held-out scoring of the tcp
# flow-rate column (cpu_gy), beside the latency-cap (cpu_gz), host-set (cpu_gw), shm-halves
# (cpu_gx) and ring-core (cpu_ga) columns. Decided before measuring (before run 62's shm part
# had finished). tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB. Runs from a copy taken at the
# start.
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
