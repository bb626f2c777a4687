#!/usr/bin/env bash
# Measures detection and shrink time after SIGKILL / SIGSTOP at 2-8 ranks (median of 5) and the
# heartbeats' cost on the all-reduce, and writes the markdown tables to perf/results/failures.md
# with the machine and date. Usage: scripts/failure-table.sh [build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=perf/results/failures.md
ninja -C "$build" failure_perf_test >/dev/null
{
  echo "# Failure detection, shrink and heartbeat cost"
  echo
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n): $(nproc) cores,"\
       "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(uname -r)."
  echo "Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg). Defaults: LOOM_HEARTBEAT_MS=250,"
  echo "LOOM_HEARTBEAT_TIMEOUT_MS=1500. Detection: from the fault to the error on the slowest"
  echo "survivor. Shrink: loomCommShrink(comm, NULL, 0) (agreement included) on the slowest survivor."
} > "$out.tmp"
LOOM_FAILURE_TABLE="$PWD/$out.tmp" "$build/tests/coll/failure_perf_test" >/dev/null
mv "$out.tmp" "$out"
cat "$out"
