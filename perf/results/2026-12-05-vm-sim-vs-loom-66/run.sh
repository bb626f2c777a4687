#!/usr/bin/env bash
# Validation run 66 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 64
# repeated at 95b4170's validate_local (changed from d798299 before this run started, during
# run 65): the third held-out scoring of the shm-ring-reductions (cpu_gq) and pairwise-latency-cap
# (cpu_gu) columns, priced as at d798299, and the first of the memcpy-copy column (cpu_gd), beside
# the flow-rate (cpu_gy) and earlier columns. tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB.
# Runs from a copy taken at the start.
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
