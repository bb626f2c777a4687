#!/usr/bin/env bash
# The exact commands of this run (held out: the cpu column as committed after run 10): each transport on
# its own, 3 rounds, each round under /tmp/loom-measure.lock (validate_local.py takes it per round).
set -euo pipefail
B=${1:-build-sim}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t" --transports "$t" --rounds 3
done
