#!/usr/bin/env bash
# Validation run 36 (VM E: 2-vCPU Intel Xeon under KVM, 2 MiB L2 per core, 260 MiB L3; runs 20-35
# ran on VM D, a 2-vCPU AMD EPYC under Firecracker): run 35's settings (5 rounds at
# 4-64 MiB, 9 at 1 MiB, 1 MiB shm pair rings) with the in-place reduction priced: membw_perf's
# new in-place rate (dst = dst + x) for every reduction whose local operand is its destination
# (an out-of-place Rabenseifner's steps after its first; loom-plan --sim-reduce-ip-gbps), and the
# in-place call simulated as well (--sim-in-place) against the drivers' in-place column. Code
# committed before the run: every column held out. Decided before measuring.
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
