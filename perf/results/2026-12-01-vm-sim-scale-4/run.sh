#!/usr/bin/env bash
# The locked measurements of 2026-12-01 (03:55-05:05 UTC window), one algorithm and size per
# locked command (each under 6 minutes). NEW: build-sim/tools/loom-sim/loom-sim copied to
# /tmp/sim-new at commit 09f7292; OLD: the binary of commit 022007a (before skeleton folding and the rotated hier
# build), copied to /tmp/sim-old before the window. Run from the repository root:
#   perf/results/2026-12-01-vm-sim-scale-4/run.sh STEP...   (steps: see below)
set -uo pipefail
D=perf/results/2026-12-01-vm-sim-scale-4
NEW=${NEW:-/tmp/sim-new/loom-sim}
OLD=${OLD:-/tmp/sim-old/loom-sim}
export TIMEOUT=${TIMEOUT:-330}
one() {  # one() TAG BIN ALGO GPUS: a locked scaling run, appended to $D/TAG.csv
  local tag=$1 bin=$2 algo=$3 n=$4
  echo "$(date -u +%FT%TZ) $tag $algo $n: flock /tmp/loom-measure.lock perf/sim/scaling.sh $bin 1G $algo $n" >> $D/commands.log
  flock /tmp/loom-measure.lock perf/sim/scaling.sh "$bin" 1G "$algo" "$n" | tail -n +2 | sed "s/^/$tag,/" | tee -a $D/$tag.csv
}
for step in "$@"; do
  case $step in
    new-ht)    one new "$NEW" hier_tree 16384; one new "$NEW" hier_tree 65536 ;;
    small)     for n in 1024 4096; do one new "$NEW" hier_tree $n; one old "$OLD" hier_tree $n; done ;;
    old-ht16)  one old "$OLD" hier_tree 16384 ;;
    old-ht64)  one old "$OLD" hier_tree 65536 ;;
    new-tree16) one new "$NEW" tree 16384 ;;
    old-tree16) one old "$OLD" tree 16384 ;;
    new-tree64) one new "$NEW" tree 65536 ;;
    new-rest)  for a in ring hier rabenseifner; do for n in 16384 65536; do one new "$NEW" $a $n; done; done ;;
    old-rest)  for a in ring hier rabenseifner; do for n in 16384 65536; do one old "$OLD" $a $n; done; done ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
