#!/bin/bash
# Leave-one-out over the 12 pooled planner files: calibrate on 11 with the old fit (share 1 only)
# and the new (share fitted from {1, 0}), rate each fit's choices on the held-out file.
cd /work/main
mapfile -t F < perf/results/2026-12-01-vm-planner-8/pooled_files.txt
job() {
  i=$1; v=$2; bin=$3
  others=(); for j in "${!F[@]}"; do [ $j != $i ] && others+=("${F[$j]}"); done
  $bin --calibrate --from-json "${others[@]}" --save-params /tmp/loo/$v-$i.txt >/dev/null 2>/tmp/loo/$v-$i.err
  python3 perf/planner/choices_vs_measured.py --build build-lead /tmp/loo/$v-$i.txt "${F[$i]}" > /tmp/loo/$v-$i.score
}
for i in "${!F[@]}"; do
  job $i old /tmp/loom-plan-old &
  job $i new build-lead/tools/loom-plan/loom-plan
  wait
done
for v in old new; do echo "$v: $(cat /tmp/loo/$v-*.score | grep -o 'at [0-9]* of [0-9]*' | awk '{m+=$2; n+=$4} END {print m" of "n}')"; done
