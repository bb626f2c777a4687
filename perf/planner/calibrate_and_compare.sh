#!/bin/sh
# Calibrates the planner on this machine, then measures it against every forced algorithm in a
# second, separate run (the tuning table is never validated on the data it came from):
#   perf/planner/calibrate_and_compare.sh BUILD OUT_DIR [LOCK] [ROUNDS] [VALIDATION_ROUNDS]
# 1. Calibration runs: RUNS times (default 3), for shm and tcp at 2, 4 and 8 ranks, `loom-plan
#    --measure --forced-only` (every algorithm forced, and the direct path over shm, 8 B to 64 MiB
#    x4, ROUNDS interleaved rounds, default 5) into OUT_DIR/calibration-RUN.jsonl; with LOCK each
#    configuration runs under `flock LOCK` on its own, so others may measure in between. Runs
#    minutes apart meet the machine in different states; one run alone has decided a fit before.
# 2. Fit: `loom-plan --calibrate --from-json` over all runs (a point is the median of every round
#    of every run) writes perf/planner/calibrated-vm.txt (model terms and fits; the tuning table
#    too with TUNED=1 in the environment) and OUT_DIR/calibration.txt (measured against predicted
#    for every point, one-level and two-level model, fit quality).
# 3. Validation run: planner_vs_forced.py with those parameters (VALIDATION_ROUNDS rounds, default
#    ROUNDS) writes OUT_DIR/planner_vs_forced.md and OUT_DIR/planner_vs_forced.jsonl.
# 4. With OFFGRID=1 in the environment, a second validation at sizes between the calibrated ones
#    (24 B, 96 B, ..., 24 MiB, 48 MiB) into OUT_DIR/offgrid/.
# RANKS (default "2 4 8") and MAX (default 64m) in the environment shrink the runs, for a quick try;
# PARAMS (default perf/planner/calibrated-vm.txt) is where the parameters go.
set -e
DIR=$(dirname "$0")
B=${1:?build dir}
OUT=${2:?output dir}
LOCK=$3
ROUNDS=${4:-5}
VROUNDS=${5:-$ROUNDS}
RANKS=${RANKS:-2 4 8}
RUNS=${RUNS:-3}
MAX=${MAX:-64m}
PARAMS=${PARAMS:-$DIR/calibrated-vm.txt}
COMMAS=$(echo $RANKS | tr ' ' ,)
mkdir -p "$OUT"
PLAN="$B/tools/loom-plan/loom-plan"
run() { if [ -n "$LOCK" ]; then flock "$LOCK" "$@"; else "$@"; fi; }
FILES=
for R in $(seq "$RUNS"); do
  rm -f "$OUT/calibration-$R.jsonl"
  for T in shm tcp; do
    for N in $RANKS; do
      run "$PLAN" --measure "$T" --ranks "$N" --min 8 --max "$MAX" --rounds "$ROUNDS" --forced-only \
        >> "$OUT/calibration-$R.jsonl"
      echo "calibration run $R: $T $N ranks done" >&2
    done
  done
  FILES="$FILES $OUT/calibration-$R.jsonl"
done
run "$PLAN" --calibrate --from-json $FILES $([ "$TUNED" = 1 ] && echo --tuning-table) \
  --save-params "$PARAMS" 2> "$OUT/calibration.txt" > /dev/null
tail -16 "$OUT/calibration.txt"
rm -f "$OUT/planner_vs_forced.jsonl"
python3 "$DIR/planner_vs_forced.py" --build "$B" --params-file "$PARAMS" \
  --rounds "$VROUNDS" --ranks "$COMMAS" -e "$MAX" --out "$OUT" \
  --json "$OUT/planner_vs_forced.jsonl" ${LOCK:+--lock "$LOCK"}
if [ "$OFFGRID" = 1 ]; then
  mkdir -p "$OUT/offgrid"
  rm -f "$OUT/offgrid/planner_vs_forced.jsonl"
  python3 "$DIR/planner_vs_forced.py" --build "$B" --params-file "$PARAMS" \
    --rounds "$VROUNDS" --ranks "$COMMAS" -b 24 -e "${OFFMAX:-48m}" --out "$OUT/offgrid" \
    --json "$OUT/offgrid/planner_vs_forced.jsonl" ${LOCK:+--lock "$LOCK"}
fi
