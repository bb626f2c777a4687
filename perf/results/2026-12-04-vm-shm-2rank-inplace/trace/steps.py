#!/usr/bin/env python3
"""Per rank, out of place and in place: the median over the timed calls of each step's start and end
(us from the call's start) in the LOOM_STEP_TRACE files of run.sh (reps 1-2 out of place first, 3-4
in place first, --ip-first 1). Per placement the driver makes W warm-up calls, N timed ones and 1
checked one; only the timed ones count. Parsing is perf/step_trace.py's."""
import os
import statistics as st
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", ".."))
from step_trace import read  # noqa: E402  (perf/step_trace.py)

W, N = 30, 300


def main(d):
    for rep in (1, 2, 3, 4):
        trace = read([os.path.join(d, f"t.{rep}.{r}") for r in (0, 1)])
        for r in sorted(trace):
            calls = trace[r]
            ks = sorted(calls)
            first, second = ks[W:W + N], ks[(W + N + 1) + W:(W + N + 1) + W + N]
            groups = {"oop": first, "ip": second} if rep < 3 else {"ip": first, "oop": second}
            for g, cs in groups.items():
                steps = defaultdict(list)
                for c in cs:
                    for step, op, _peer, nbytes, start, end in calls[c]:
                        steps[(step, op, nbytes)].append((start, end))
                total = st.median(max(s[5] for s in calls[c]) for c in cs)
                desc = "; ".join(f"{k[0]}:{k[1]} {st.median(x[0] for x in v):.1f}-"
                                 f"{st.median(x[1] for x in v):.1f}"
                                 for k, v in sorted(steps.items()))
                print(f"rep {rep} rank {r} {g:3s} calls {len(cs)} total {total:.1f} | {desc}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
