#!/usr/bin/env bash
# Validation run 80 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 79's
# tcp parts alone, at the model of bbad116 (session 34): the second held-out run of the
# tcp-ring-reductions column (cpu_gv), which moves only tcp points on 4-8 ranks. tcp 1 MiB
# (9 rounds), tcp 4-64 MiB (5 rounds). Runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/tcp-1m" --transports tcp --sizes 1M --rounds 9
python3 "$S" --build "$B" --out "$OUT/tcp" --transports tcp --sizes 4M,16M,64M --rounds 5
