#!/usr/bin/env bash
# Validation run 59 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3), short: the
# shm half of run 58's script (shm 1 MiB, shm 4-64 MiB; tcp left out for time: the session ends
# at 00:03 UTC) at 38a93bf: the first held-out scoring of the latency-cap column (cpu_gz, "...,
# latency no larger than at the smallest size", chosen in sample on runs 44-58; it moves only
# 2-rank points, and over tcp moved none in sample), beside the shm-halves, host-set and
# ring-core columns. Decided before measuring. Runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/shm-1m" --transports shm --sizes 1M --rounds 9
python3 "$S" --build "$B" --out "$OUT/shm" --transports shm --sizes 4M,16M,64M --rounds 5
