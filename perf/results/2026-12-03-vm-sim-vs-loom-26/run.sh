#!/usr/bin/env bash
# Validation run 26 (VM D: 2-vCPU AMD EPYC under Firecracker): run 25's settings, but the planner's
# points run with the message latency as waiting (validate_local --alpha-cpu 0, its new default:
# tcpAlphaCpu=0 / shmAlphaCpu=0 in LOOM_PLAN_PARAMS and in loom-plan's model). Decided before
# measuring: on run 25's calibration this moves the planner's choice on 4 and 8 ranks at 1 and
# 4 MiB from the tree in one chunk per half to Rabenseifner; the forced ring, the simulator and
# every column are unchanged. The questions: do those planner points now pass (best column "cpu,
# all-gather at the smallest size", held out), and did they get faster against the forced ring?
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
