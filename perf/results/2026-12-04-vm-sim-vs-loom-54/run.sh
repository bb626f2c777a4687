#!/usr/bin/env bash
# Validation run 54 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3), short: shm at
# 4 MiB only, 5 rounds, after the membw sweep fix. Run 53 repeated: the membw sweep now reaches the host set (run 53 stopped at 8 MiB). Scores the host-set column
# ("..., shm reductions at the host's working set", cpu_gw), which was chosen in sample on runs
# 44-52; every other column as in runs 51-52. Decided before measuring. Runs from a copy taken at
# the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/shm-4m" --transports shm --sizes 4M --rounds 5
