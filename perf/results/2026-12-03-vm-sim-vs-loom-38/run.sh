#!/usr/bin/env bash
# Validation run 38 (VM E: 2-vCPU Intel Xeon under KVM, 2 MiB L2 per core, 260 MiB L3): runs
# 36-37's settings (5 rounds at 4-64 MiB, 9 at 1 MiB, 1 MiB shm pair rings, in-place reductions
# priced, the in-place call simulated) with one model change, held out: an shm pair's handoff is
# held longer while its receiver reduces out of the ring (loom-plan --sim-pair-copy-gbps at
# membw_perf's memcpy rate; validate_local --pair-copy 1, the default). Decided before measuring,
# after rescoring runs 36-37 with it (44 -> 46 of 48 both). The script runs from a copy taken at the start.
# tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB.
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
