#!/usr/bin/env bash
# Validation run 29 (VM D: 2-vCPU AMD EPYC under Firecracker): the measurements of runs 27 and 28
# unchanged (the planner's latency as waiting, one discarded run before each transport's points),
# and the column "cpu, all-gather, cheaper core" added after run 28 (above the cores, a core's cost
# per byte from the cheaper of the streamed and the lock-step p-rank sendrecv of the same
# messages), held out here for the first time. In-sample it had 48 and 47 of 48 on runs 27 and 28
# (the all-gather column 47 and 45). The question: does it hold on a run it has not seen?
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
