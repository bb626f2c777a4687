#!/usr/bin/env bash
# Validation run 27 (VM D: 2-vCPU AMD EPYC under Firecracker): run 26 repeated (the planner's
# latency as waiting), with one change decided before measuring: each round, before each
# transport's points, one all-reduce run of the first point (the forced 2-rank ring at the
# smallest size) is run and discarded. In runs 22-26 that forced ring on shm at 1 MiB measured
# 1.06-1.25x the planner's run of the same schedule right after it (it missed in runs 25 and 26);
# alternated outside validate_local (2026-12-03 03:10 UTC) they were equal. The question: does it
# pass now, and does run 26's result hold (a second held-out run for the latency share)?
# The 1 MiB points get 9 rounds, 4-64 MiB 3; tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB.
# The script runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t-1m" --transports "$t" --sizes 1M --rounds 9
done
for t in tcp shm; do
  python3 "$S" --build "$B" --out "$OUT/$t" --transports "$t" --sizes 4M,16M,64M --rounds 3
done
