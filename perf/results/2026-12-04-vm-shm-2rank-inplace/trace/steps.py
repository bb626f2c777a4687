#!/usr/bin/env python3
"""Per rank, out of place and in place: the median over the timed calls of each step's start and end
(us from the call's start) in the LOOM_STEP_TRACE files of run.sh (reps 1-2 out of place first, 3-4
in place first, --ip-first 1). Calls: w warm-ups, n timed, 1 checked per placement."""
import sys, statistics as st, glob, collections
# calls 0..(w+n-1) out of place, then (w+n).. in place (the driver's order); skip the warm-ups
O = sys.argv[1] if len(sys.argv) > 1 else __import__("os").path.dirname(__import__("os").path.abspath(__file__)); w, n = 30, 300
for rep in (1, 2, 3, 4):
    for r in (0, 1):
        calls = collections.defaultdict(list)
        for line in open(f"{O}/t.{rep}.{r}"):
            if line.startswith("#") or not line.strip(): continue
            p = line.split()
            calls[int(p[1])].append((int(p[2]), p[3], int(p[5]), float(p[6]), float(p[7])))
        ks = sorted(calls)
        a, b = ks[w:w + n], ks[(w + n + 1) + w:(w + n + 1) + w + n]
        groups = {"oop": a, "ip": b} if rep < 3 else {"ip": a, "oop": b}
        for g, cs in groups.items():
            steps = collections.defaultdict(list)
            tot = []
            for c in cs:
                for s in calls[c]:
                    steps[(s[0], s[1], s[2])].append((s[3], s[4]))
                tot.append(max(s[4] for s in calls[c]))
            desc = "; ".join(f"{k[0]}:{k[1]} {st.median(x[0] for x in v):.1f}-{st.median(x[1] for x in v):.1f}" for k, v in sorted(steps.items()))
            print(f"rep {rep} rank {r} {g:3s} calls {len(cs)} total {st.median(tot):.1f} | {desc}")
