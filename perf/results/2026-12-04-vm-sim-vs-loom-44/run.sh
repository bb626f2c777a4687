#!/usr/bin/env bash
# Validation run 44 (VM E: 2-vCPU Intel Xeon under KVM, 2 MiB L2 per core, 260 MiB L3): run 43's
# settings and measurements; first held-out scoring of the two ring-core columns (added after run
# 43: where the ring all-gather beside the point runs faster than the least latency prices it, the
# ring's core cost per byte from that all-gather; over shm only, and over both transports), second
# of the "tcp reduction by CPU at most membw's" column. Decided before measuring.
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
