#!/bin/bash
# Quick look before run.sh: loom all-reduce (shm, fork launcher, float32 sum, blocking calls),
# 2 ranks 64 KiB .. 128 MiB and 4 ranks 1 MiB .. 64 MiB, with the copy path (off), single copy at
# the default threshold (auto 65536) and single copy from 256 KiB (auto 262144), alternating,
# twice, plus one core's memcpy. Writes tune.log and tune-np<N>-<mode>-<threshold>.jsonl.
# Usage (repository root): flock /tmp/loom-measure.lock perf/results/2026-11-30-vm-shm-cma/tune.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-perf/results/2026-11-30-vm-shm-cma}
BIN=${BUILD:-build-shm}/perf
rm -f "$OUT"/tune-*.jsonl
for rep in 1 2; do
  for v in "off 65536" "auto 65536" "auto 262144"; do
    set -- $v
    echo "# rep $rep np2 LOOM_SHM_CMA=$1 LOOM_SHM_CMA_THRESHOLD=$2"
    LOOM_TRANSPORT=shm LOOM_SHM_CMA=$1 LOOM_SHM_CMA_THRESHOLD=$2 "$BIN/all_reduce_perf" --ranks 2 \
      -b 64K -e 128M -f 2 -n 10 -w 2 -z 1 -J "$OUT/tune-np2-$1-$2.jsonl" | grep -v '^#'
  done
  "$BIN/membw_perf" -b 64K -e 128M -f 2 | grep -v '^#'
  for v in "off 65536" "auto 65536"; do
    set -- $v
    echo "# rep $rep np4 LOOM_SHM_CMA=$1 LOOM_SHM_CMA_THRESHOLD=$2"
    LOOM_TRANSPORT=shm LOOM_SHM_CMA=$1 LOOM_SHM_CMA_THRESHOLD=$2 "$BIN/all_reduce_perf" --ranks 4 \
      -b 1M -e 64M -f 4 -n 5 -w 1 -z 1 -J "$OUT/tune-np4-$1-$2.jsonl" | grep -v '^#'
  done
done 2>&1 | tee "$OUT/tune.log"
