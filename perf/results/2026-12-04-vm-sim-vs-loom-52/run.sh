#!/usr/bin/env bash
# Validation run 52 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 51's
# script and model (unchanged since run 44), measured at efa4750: after the shm doorbell fix
# (f8efbc8) and with the forked driver's new default --bind auto (2 ranks pinned to a CPU each, as
# mpirun --bind-to core pins them; 4 and 8 ranks on 2 CPUs unpinned, as before). Held out: decided
# before measuring. tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB. Runs from a copy taken at
# the start.
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
