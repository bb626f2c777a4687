#!/bin/bash
# Alternating: default planner vs calibrated planner vs forced ring, shm, 4 and 8 ranks, 1 and 4 MiB
# (2026-12-02 13:27 UTC, VM D, build-lead, under flock /tmp/loom-measure.lock). calibrated.params:
# `loom-plan --calibrate --save-params` at 12:44 UTC on the same VM. Columns: round, ranks, mode,
# size, time_us, steal_pct, LOOM_ALGO.
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../.."
for rep in 1 2 3; do
 for p in 4 8; do
  for mode in default cal ring; do
   env=(LOOM_TRANSPORT=shm)
   [ $mode = cal ] && env+=(LOOM_PLAN_PARAMS=@$HERE/calibrated.params)
   [ $mode = ring ] && env+=(LOOM_ALGO=allreduce:ring)
   rm -f /tmp/cc.json
   env "${env[@]}" build-lead/perf/all_reduce_perf --ranks $p -b 1M -e 4M -f 4 -n 60 -w 6 -J /tmp/cc.json > /dev/null 2>/tmp/cc.err
   python3 -c "
import json
for l in open('/tmp/cc.json'):
  d=json.loads(l); print('$rep', $p, '$mode', d['size'], round(d['oop']['time_us']), d['oop'].get('steal_pct'), d.get('algo',''))"
  done
 done
done
