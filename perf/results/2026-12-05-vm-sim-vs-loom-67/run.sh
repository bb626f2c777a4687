#!/usr/bin/env bash
# Validation run 67 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3), short: the
# tcp 1 MiB part of run 66 alone, at the same model (95b4170's validate_local), for a second
# held-out scoring of the memcpy-copy column (cpu_gd) on the one point it moves (the planner's
# 2-rank tcp all-reduce at 1 MiB, where the planner runs recursive doubling in some rounds).
# Decided before measuring (during run 65); it runs only if run 66 ends before 05:00 UTC (the
# session's clean-clone CI run comes after it). Runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/tcp-1m" --transports tcp --sizes 1M --rounds 9
