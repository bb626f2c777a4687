#!/bin/bash
# quiet only: the direct path forced, 2 ranks shm 8 B, 20,000 calls, N interleaved runs of each
# LABEL|BINARY (all_reduce_perf); run under flock /tmp/loom-measure.lock
n=$1; shift
for r in $(seq $n); do for v in "$@"; do lab=${v%%|*}; bin=${v#*|}; echo "$lab $(LOOM_TRANSPORT=shm $bin --ranks 2 -b 8 -e 8 -n 20000 -w 200 -a direct 2>&1 | awk '$1==8{print $6}')"; done; done | python3 -c '
import sys,statistics,collections
d=collections.defaultdict(list)
for l in sys.stdin:
    k,v=l.split(); d[k].append(float(v))
for k,v in d.items(): print(k, "median %.2f" % statistics.median(v), " ".join("%.2f" % x for x in v))'
