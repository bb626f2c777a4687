#!/usr/bin/env bash
# Validation run 77 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3), short: the
# shm parts of run 76 repeated (tcp passed 24 of 24 in every fitted column in runs 68-73, and the
# host-set-up columns change only shm), at 2ba503e's validate_local (columns unchanged since
# 69f77fa): the fourth held-out run of cpu_gb (host set rounded up above the cores), beside cpu_ge
# and the shm-rate column (cpu_gs). shm 1 MiB, shm 4-64 MiB. Runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/shm-1m" --transports shm --sizes 1M --rounds 9
python3 "$S" --build "$B" --out "$OUT/shm" --transports shm --sizes 4M,16M,64M --rounds 5
