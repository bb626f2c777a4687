#!/usr/bin/env bash
# Interleaved A/B of the shm wait/notify variants. Needs a build of f8efbc8 with
# instrumentation.patch applied and spin.h copied to src/core/ (the switches LOOM_TMP_NOTIFY and
# LOOM_TMP_SHARE exist only there). Usage: N=10 R=2 S=1M I=300 ab.sh BUILD_DIR > out.txt
B=${1:-build}
cd "$(dirname "$0")/../../.."
export LOOM_TRANSPORT=shm LOOM_PLAN_PARAMS="shmAlphaUs=1.318,shmGBps=26.0736,hostMemGBps=1000,reduceGBps=36.5100,cores=2,shmAlphaCpu=0"
R=${R:-2}; S=${S:-1M}
for rep in $(seq 1 ${N:-10}); do
for v in 00 10 11 01; do
  t=$(LOOM_TMP_NOTIFY=${v:0:1} LOOM_TMP_SHARE=${v:1:1} "$B"/perf/all_reduce_perf --ranks $R -b $S -e $S -n ${I:-300} -w 30 -a ring 2>&1 | grep -E "^ +[0-9]+ +[0-9]+ +float" | awk '{print $6, $10}')
  echo "$v $t"
done; done
