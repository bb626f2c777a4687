#!/usr/bin/env bash
# Validation run 40 (VM E: 2-vCPU Intel Xeon under KVM, 2 MiB L2 per core, 260 MiB L3): run 39's
# settings (5 rounds at 4-64 MiB, 9 at 1 MiB, 1 MiB shm pair rings, in-place reductions priced,
# the in-place call simulated, an shm pair's handoff held longer while its receiver reduces out
# of the ring), plus the pairwise p-rank sendrecv over tcp beside each Rabenseifner / recursive
# doubling point on 4-8 ranks, for the new "cpu, all-gather, cheaper core, pairwise" column
# (added before this run; first held out here). Decided before measuring.
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
