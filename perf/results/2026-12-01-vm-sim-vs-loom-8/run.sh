#!/usr/bin/env bash
# The exact commands of this run (repeat of -7 with the final script): each transport on its own, 3 rounds, each round under the lock.
set -euo pipefail
B=${1:-build-lead}
OUT=$(dirname "$0")
for t in tcp shm; do
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t" --transports "$t" --rounds 3
done
