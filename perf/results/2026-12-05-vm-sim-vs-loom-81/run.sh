#!/usr/bin/env bash
# Validation run 81 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 79's
# shm parts alone, with its rounds (18 at 1 MiB, 10 at 4-64 MiB), at the model of bbad116
# (session 34): one more held-out run of cpu_gb / cpu_gv (equal over shm). Runs from a copy
# taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/shm-1m" --transports shm --sizes 1M --rounds 18
python3 "$S" --build "$B" --out "$OUT/shm" --transports shm --sizes 4M,16M,64M --rounds 10
