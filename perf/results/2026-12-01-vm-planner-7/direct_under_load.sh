#!/bin/bash
# The one-host direct path against recursive doubling (rd, through the executor and the shm
# transport) at 2 ranks, 8 B, quiet and with one `yes` process holding a core: all_reduce_perf,
# 20,000 timed calls a run, REPS interleaved runs per variant; prints each run's us per call and
# the median per variant. Run it under the measurement lock:
#   flock /tmp/loom-measure.lock direct_under_load.sh BEFORE_BIN AFTER_BIN [REPS]
before=$1 after=$2 reps=${3:-7}
one() {  # binary algo -> us per call
  LOOM_TRANSPORT=shm "$1" --ranks 2 -b 8 -e 8 -n 20000 -w 200 -a "$2" 2>&1 | awk '$1==8{print $6}'
}
phase() {
  for r in $(seq "$reps"); do
    for v in "before direct" "after direct" "before rd" "after rd"; do
      set -- $v
      bin=$before; [ "$1" = after ] && bin=$after
      echo "$1-$2 $(one "$bin" "$2")"
    done
  done | python3 -c '

import sys, statistics, collections
d = collections.defaultdict(list)
for line in sys.stdin:
    k, v = line.split(); d[k].append(float(v))
for k in ["before-direct", "after-direct", "before-rd", "after-rd"]:
    print(f"  {k:14s} median {statistics.median(d[k]):7.2f} us   runs " + " ".join(f"{x:.2f}" for x in d[k]))
m = {k: statistics.median(v) for k, v in d.items()}
b, a = m["before-direct"] / m["before-rd"], m["after-direct"] / m["after-rd"]
print(f"  direct / rd: before {b:.2f}, after {a:.2f}")'
}
date -u +"%F %T UTC"; uptime
echo "# quiet (no hog of ours)"; phase
yes >/dev/null &
hog=$!
sleep 0.5
echo "# one 'yes >/dev/null' holding a core"; phase
kill "$hog"
date -u +"%F %T UTC"
