#!/bin/sh
# Calibrates the planner on this machine, then measures it against every forced algorithm in a
# second, separate run (the tuning table is never validated on the data it came from):
#   perf/planner/calibrate_and_compare.sh BUILD OUT_DIR [LOCK] [ROUNDS]
# 1. Calibration run: for shm and tcp at 2, 4 and 8 ranks, `loom-plan --measure --forced-only`
#    (every algorithm forced, and the direct path over shm, 8 B to 64 MiB x4, ROUNDS interleaved
#    rounds, default 5) into OUT_DIR/calibration.jsonl; with LOCK each configuration runs under
#    `flock LOCK` on its own, so others may measure in between.
# 2. Fit: `loom-plan --calibrate --from-json` writes perf/planner/calibrated-vm.txt (model terms,
#    fits and the tuning table) and OUT_DIR/calibration.txt (measured against predicted for every
#    point, one-level and two-level model, and the fit quality).
# 3. Validation run: planner_vs_forced.py with those parameters writes OUT_DIR/planner_vs_forced.md
#    and OUT_DIR/planner_vs_forced.jsonl.
set -e
B=${1:?build dir}
OUT=${2:?output dir}
LOCK=$3
ROUNDS=${4:-5}
DIR=$(dirname "$0")
mkdir -p "$OUT"
PLAN="$B/tools/loom-plan/loom-plan"
run() { if [ -n "$LOCK" ]; then flock "$LOCK" "$@"; else "$@"; fi; }
rm -f "$OUT/calibration.jsonl"
for T in shm tcp; do
  for N in 2 4 8; do
    run "$PLAN" --measure "$T" --ranks "$N" --min 8 --max 64m --rounds "$ROUNDS" --forced-only \
      >> "$OUT/calibration.jsonl"
    echo "calibration run: $T $N ranks done" >&2
  done
done
run "$PLAN" --calibrate --from-json "$OUT/calibration.jsonl" \
  --save-params "$DIR/calibrated-vm.txt" 2> "$OUT/calibration.txt" > /dev/null
tail -12 "$OUT/calibration.txt"
rm -f "$OUT/planner_vs_forced.jsonl"
python3 "$DIR/planner_vs_forced.py" --build "$B" --params-file "$DIR/calibrated-vm.txt" \
  --rounds "$ROUNDS" --out "$OUT" --json "$OUT/planner_vs_forced.jsonl" ${LOCK:+--lock "$LOCK"}
