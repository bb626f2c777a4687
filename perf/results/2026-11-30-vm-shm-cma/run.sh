#!/bin/bash
# shm copy path (LOOM_SHM_CMA=off) against single copy (LOOM_SHM_CMA=auto, Cross Memory Attach):
# 2 ranks, float32 sum all-reduce, 1 MiB .. 128 MiB, with perf/compare's baselines (Open MPI,
# Gloo, one core's memcpy/reduce) measured in every run. The two modes run back to back under one
# hold of the measurement lock (/tmp/loom-measure.lock), twice; combine.py merges them (best of the
# repetitions per mode).
# Usage (repository root): perf/results/2026-11-30-vm-shm-cma/run.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-perf/results/2026-11-30-vm-shm-cma}
BUILD=${BUILD:-build-shm}
REPS=${REPS:-2}
B=${B:-1M}
E=${E:-128M}
rm -rf "$OUT/raw"
pair() {
  for mode in off auto; do
    LOOM_SHM_CMA=$mode perf/compare --build "$BUILD" --ranks 2 --no-tcp -b "$B" -e "$E" -f 2 \
      --reps 1 --out "$OUT/raw/$mode-$1" > "$OUT/raw/$mode-$1.log" 2>&1
  done
}
export -f pair
export OUT BUILD B E
mkdir -p "$OUT/raw"
for rep in $(seq 1 "$REPS"); do
  flock /tmp/loom-measure.lock bash -c "pair $rep"
done
python3 "$(dirname "$0")/combine.py" "$OUT"
