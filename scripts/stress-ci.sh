#!/usr/bin/env bash
# The suite under load: clones this checkout's HEAD into a fresh directory, then runs the README's
# test command (scripts/run-tests.sh) three times in a row while `stress-ng --cpu 2` keeps both
# cores busy. Fails on the first failing run; prints each run's wall time.
#   bash scripts/stress-ci.sh [RUNS] [STRESS_WORKERS]
set -euo pipefail
runs=${1:-3}
workers=${2:-2}
src="$(cd "$(dirname "$0")/.." && pwd)"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v stress-ng > /dev/null; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends stress-ng
fi
work=$(mktemp -d /tmp/loom-stress-ci.XXXXXX)
git clone -q "$src" "$work/loom"
stress-ng --cpu "$workers" --timeout 0 --quiet &
stress=$!
trap 'kill $stress 2> /dev/null || true; wait $stress 2> /dev/null || true' EXIT
echo "stress-ci: $(git -C "$work/loom" rev-parse --short HEAD), $runs runs under stress-ng --cpu $workers"
for i in $(seq 1 "$runs"); do
  t0=$(date +%s)
  if ! bash "$work/loom/scripts/run-tests.sh" > "$work/run$i.log" 2>&1; then
    tail -n 60 "$work/run$i.log"
    echo "stress-ci: run $i FAILED after $(($(date +%s) - t0)) s (log: $work/run$i.log)"
    exit 1
  fi
  echo "stress-ci: run $i passed in $(($(date +%s) - t0)) s"
  grep -E "tests passed|Total Test time" "$work/run$i.log" | sed 's/^/  /'
done
echo "stress-ci: all $runs runs passed (logs in $work)"
