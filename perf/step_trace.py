#!/usr/bin/env python3
"""Summarises LOOM_STEP_TRACE files (one per rank: LOOM_STEP_TRACE=/tmp/trace.%r).

Each line of a trace is one step of one schedule run ("call"): rank call step op peer bytes
start_us end_us, times from that rank's start of the call. Per rank this prints the median over
the calls (after --skip warm-up calls) of: the call's time (its last step's end), the time in
local steps (copy, reduce), and the time from posting to completion of the network steps, summed
(they overlap, so this can exceed the call's time). --steps adds each step's median start and end.

  LOOM_STEP_TRACE=/tmp/t.%r all_reduce_perf --ranks 8 -b 1M -e 1M -n 50 -a tree
  perf/step_trace.py /tmp/t.* --skip 10 --steps
"""
import argparse
import statistics
import sys
from collections import defaultdict


def read(paths):
    """{rank: {call: [(step, op, peer, bytes, start, end)]}}"""
    out = defaultdict(lambda: defaultdict(list))
    for path in paths:
        with open(path) as f:
            for n, text in enumerate(f, 1):
                if text.startswith("#") or not text.strip():
                    continue
                parts = text.split()
                if len(parts) != 8:
                    sys.exit(f"step_trace: {path}:{n}: expected 8 fields, got '{text.strip()}'")
                r, call, step, op, peer, nbytes = parts[0], parts[1], parts[2], parts[3], \
                    parts[4], parts[5]
                out[int(r)][int(call)].append((int(step), op, int(peer), int(nbytes),
                                               float(parts[6]), float(parts[7])))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="trace files (one or more ranks each)")
    ap.add_argument("--skip", type=int, default=0, help="leave out each rank's first N calls")
    ap.add_argument("--steps", action="store_true", help="also each step's median start and end")
    a = ap.parse_args()
    if a.skip < 0:
        sys.exit("step_trace: --skip must be >= 0")
    ranks = read(a.files)
    if not ranks:
        sys.exit("step_trace: no steps in the files")
    med = statistics.median
    print("| rank | calls | call us | local steps us | network steps us (posted to done, "
          "summed) | steps | bytes sent |")
    print("|---|---|---|---|---|---|---|")
    for r in sorted(ranks):
        calls = [ranks[r][c] for c in sorted(ranks[r])][a.skip:]
        if not calls:
            sys.exit(f"step_trace: rank {r} has no calls left after --skip {a.skip}")
        run = med([max(s[5] for s in c) for c in calls])
        local = med([sum(s[5] - s[4] for s in c if s[1] in ("copy", "reduce")) for c in calls])
        net = med([sum(s[5] - s[4] for s in c if s[1] not in ("copy", "reduce")) for c in calls])
        sent = med([sum(s[3] for s in c if s[1] == "send") for c in calls])
        print(f"| {r} | {len(calls)} | {run:.1f} | {local:.1f} | {net:.1f} | {len(calls[0])} | "
              f"{sent:.0f} |")
    if a.steps:
        print("\n| rank | step | op | peer | bytes | start us | end us | us |")
        print("|---|---|---|---|---|---|---|---|")
        for r in sorted(ranks):
            calls = [sorted(ranks[r][c]) for c in sorted(ranks[r])][a.skip:]
            for i, s in enumerate(calls[0]):
                same = [c[i] for c in calls if len(c) > i and c[i][0] == s[0]]
                start, end = med([x[4] for x in same]), med([x[5] for x in same])
                print(f"| {r} | {s[0]} | {s[1]} | {s[2]} | {s[3]} | {start:.1f} | {end:.1f} | "
                      f"{med([x[5] - x[4] for x in same]):.1f} |")


if __name__ == "__main__":
    main()
