#!/usr/bin/env bash
# Beside run 34 (VM D): shm at 4 MiB only, 5 rounds, first with the old 4 MiB pair rings
# (LOOM_SHM_BUFFER_BYTES=4194304 for the calibration, the points and validate_local's footprint),
# then with the new default 1 MiB: does the ring size move run 34's 4-8 rank shm misses at 4 MiB?
# Decided before measuring. The script runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
LOOM_SHM_BUFFER_BYTES=4194304 python3 "$S" --build "$B" --out "$OUT/shm-4m-ring" --transports shm --sizes 4M --rounds 5
python3 "$S" --build "$B" --out "$OUT/shm-1m-ring" --transports shm --sizes 4M --rounds 5
