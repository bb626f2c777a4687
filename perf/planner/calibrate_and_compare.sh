#!/bin/sh
# Calibrates the planner on this machine, then measures it against every forced algorithm:
#   perf/planner/calibrate_and_compare.sh BUILD OUT_DIR [LOCK]
# Writes perf/planner/calibrated-vm.txt (the parameters), OUT_DIR/calibration.txt (measured
# against predicted for every calibration point), OUT_DIR/planner_vs_forced.md and
# OUT_DIR/planner_vs_forced.jsonl. With LOCK (e.g. /tmp/loom-measure.lock) the calibration and
# each of the six measured configurations run under `flock LOCK`, one at a time.
set -e
B=${1:?build dir}
OUT=${2:?output dir}
LOCK=$3
DIR=$(dirname "$0")
mkdir -p "$OUT"
PLAN="$B/tools/loom-plan/loom-plan"
if [ -n "$LOCK" ]; then
  flock "$LOCK" "$PLAN" --calibrate --save-params "$DIR/calibrated-vm.txt" 2> "$OUT/calibration.txt"
else
  "$PLAN" --calibrate --save-params "$DIR/calibrated-vm.txt" 2> "$OUT/calibration.txt"
fi
tail -1 "$OUT/calibration.txt"
rm -f "$OUT/planner_vs_forced.jsonl"
python3 "$DIR/planner_vs_forced.py" --build "$B" --params-file "$DIR/calibrated-vm.txt" \
  --out "$OUT" --json "$OUT/planner_vs_forced.jsonl" ${LOCK:+--lock "$LOCK"}
