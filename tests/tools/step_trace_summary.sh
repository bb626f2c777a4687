#!/bin/bash
# perf/step_trace.py on a real trace: a 4-rank tree all-reduce over shm, 5 calls, traced with
# LOOM_STEP_TRACE=DIR/t.%r. The summary must list the 4 ranks with the calls left after --skip 1
# and the bytes each sent; --steps one row per step; bad --skip and empty input exit non-zero.
set -u
src=$1 driver=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
LOOM_TRANSPORT=shm LOOM_ALGO=allreduce:tree LOOM_STEP_TRACE="$tmp/t.%r" \
  "$driver" --ranks 4 --timeout 60 -b 1M -e 1M -n 2 -w 1 -c 1 > "$tmp/out" 2>&1 ||
  { echo "driver failed:"; cat "$tmp/out"; exit 1; }
# Calls per rank: all_reduce_perf runs warm-up, timed and checked iterations out of place and in
# place; whatever the count, every rank has the same.
calls=$(grep -v '^#' "$tmp/t.0" | awk '{print $2}' | sort -u | wc -l)
python3 "$src/perf/step_trace.py" "$tmp"/t.* --skip 1 > "$tmp/sum" || { echo "step_trace failed"; fail=1; }
for r in 0 1 2 3; do
  row=$(grep "^| $r |" "$tmp/sum")
  [ "$(echo "$row" | awk -F'|' '{gsub(/ /,"",$3); print $3}')" = "$((calls - 1))" ] ||
    { echo "rank $r: calls not $((calls - 1)): $row"; fail=1; }
  sent=$(echo "$row" | awk -F'|' '{gsub(/ /,"",$8); print $8}')
  # A double binary tree: each rank sends each half of 1 MiB up and down once or twice.
  [ "$sent" -gt 0 ] && [ $((sent % 524288)) -eq 0 ] || { echo "rank $r: sent '$sent'"; fail=1; }
done
steps=$(grep -vc '^#' "$tmp/t.0")
python3 "$src/perf/step_trace.py" "$tmp"/t.0 --steps > "$tmp/steps" || fail=1
[ "$(grep -c '^| 0 | [0-9]* | [a-z]' "$tmp/steps")" -eq $((steps / calls)) ] ||
  { echo "--steps rows:"; cat "$tmp/steps"; fail=1; }
python3 "$src/perf/step_trace.py" "$tmp"/t.0 --skip -1 2>/dev/null && { echo "--skip -1 accepted"; fail=1; }
: > "$tmp/empty"
python3 "$src/perf/step_trace.py" "$tmp/empty" 2>/dev/null && { echo "empty accepted"; fail=1; }
[ $fail -eq 0 ] && echo "step_trace.py: OK"
exit $fail
