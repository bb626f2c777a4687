#!/usr/bin/env bash
# The exact commands of this run (calibration runs sized by --calib-moved, 1 GiB: up to 2000 iterations; the 8 B latency 2000; above the cores also a p-rank chunked sendrecv per point, streamed and in lock-step): each transport on
# its own, 3 rounds (a driver run that lost more than 2% of the CPU time to the hypervisor's steal runs again after 15 s of rest, doubling, up to 3 more times, the least-stolen try kept), each round under /tmp/loom-measure.lock (validate_local.py takes it per round).
set -euo pipefail
B=${1:-build-sim}
OUT=$(dirname "$0")
for t in shm tcp; do  # this run: shm 12:18-12:41 UTC, then tcp 12:44-13:20 (the same command, started by hand)
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t" --transports "$t" --rounds 3
done
