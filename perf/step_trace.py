#!/usr/bin/env python3
"""Summarises LOOM_STEP_TRACE files (one per rank: LOOM_STEP_TRACE=/tmp/trace.%r), and compares
them with the simulator's trace of the same schedule (loom-plan --simulate --sim-step-trace).

Each line of a trace is one step of one schedule run ("call"): rank call step op peer bytes
start_us end_us, times from that rank's start of the call. Per rank this prints the median over
the calls (after --skip warm-up calls, or only call --call) of: the call's time (its last step's
end), the time in local steps (copy, reduce), and the time from posting to completion of the
network steps, summed (they overlap, so this can exceed the call's time). --steps adds each step's
median start and end. --sim FILE adds the simulated times of call --sim-call of that file (the
schedules must be the same: per rank the same steps, ops, peers and bytes).

  LOOM_STEP_TRACE=/tmp/t.%r all_reduce_perf --ranks 8 -b 1M -e 1M -n 50 -a tree
  loom-plan --hosts 1 --ranks-per-host 8 --params ... --simulate --sim-always --sim-cores 2 \\
      --algo allreduce:tree --min 1M --max 1M --sim-step-trace /tmp/sim.txt
  perf/step_trace.py /tmp/t.* --skip 10 --steps --sim /tmp/sim.txt
"""
import argparse
import signal
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
                r, call, step, op, peer, nbytes = parts[:6]
                out[int(r)][int(call)].append((int(step), op, int(peer), int(nbytes),
                                               float(parts[6]), float(parts[7])))
    return out


def calls_of(trace, r, skip, call):
    """Rank r's calls (each its steps in step order): all after `skip`, or only `call`."""
    if call is not None:
        return [sorted(trace[r][call])] if call in trace[r] else []
    return [sorted(trace[r][c]) for c in sorted(trace[r])][skip:]


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="trace files (one or more ranks each)")
    ap.add_argument("--skip", type=int, default=0, help="leave out each rank's first N calls")
    ap.add_argument("--call", type=int, help="only this call (e.g. one size of a simulated sweep)")
    ap.add_argument("--steps", action="store_true", help="also each step's median start and end")
    ap.add_argument("--sim", metavar="FILE", help="a simulated trace of the same schedule")
    ap.add_argument("--sim-call", type=int, default=0, help="its call to compare with (0)")
    a = ap.parse_args()
    if a.skip < 0:
        sys.exit("step_trace: --skip must be >= 0")
    ranks = read(a.files)
    if not ranks:
        sys.exit("step_trace: no steps in the files")
    sim = {}
    if a.sim:
        st = read([a.sim])
        for r in ranks:
            c = calls_of(st, r, 0, a.sim_call)
            if not c:
                sys.exit(f"step_trace: --sim {a.sim} has no call {a.sim_call} for rank {r}")
            sim[r] = c[0]
    med = statistics.median
    simcol = " simulated call us |" if sim else ""
    print("| rank | calls | call us | local steps us | network steps us (posted to done, "
          "summed) | steps | bytes sent |" + simcol)
    print("|---|---|---|---|---|---|---|" + ("---|" if sim else ""))
    picked = {}
    for r in sorted(ranks):
        calls = calls_of(ranks, r, a.skip, a.call)
        if not calls:
            sys.exit(f"step_trace: rank {r} has no calls left (--skip {a.skip}, --call {a.call})")
        picked[r] = calls
        if r in sim and [s[:4] for s in sim[r]] != [s[:4] for s in calls[0]]:
            sys.exit(f"step_trace: rank {r}: the simulated schedule's steps differ from the trace's")
        run = med([max(s[5] for s in c) for c in calls])
        local = med([sum(s[5] - s[4] for s in c if s[1] in ("copy", "reduce")) for c in calls])
        net = med([sum(s[5] - s[4] for s in c if s[1] not in ("copy", "reduce")) for c in calls])
        sent = med([sum(s[3] for s in c if s[1] == "send") for c in calls])
        extra = f" {max(s[5] for s in sim[r]):.1f} |" if sim else ""
        print(f"| {r} | {len(calls)} | {run:.1f} | {local:.1f} | {net:.1f} | {len(calls[0])} | "
              f"{sent:.0f} |" + extra)
    if a.steps:
        print("\n| rank | step | op | peer | bytes | start us | end us | us |" +
              (" simulated start us | simulated end us | simulated us |" if sim else ""))
        print("|---|---|---|---|---|---|---|---|" + ("---|---|---|" if sim else ""))
        for r in sorted(ranks):
            calls = picked[r]
            for i, s in enumerate(calls[0]):
                same = [c[i] for c in calls if len(c) > i and c[i][0] == s[0]]
                start, end = med([x[4] for x in same]), med([x[5] for x in same])
                extra = ""
                if sim:
                    q = sim[r][i]
                    extra = f" {q[4]:.1f} | {q[5]:.1f} | {q[5] - q[4]:.1f} |"
                print(f"| {r} | {s[0]} | {s[1]} | {s[2]} | {s[3]} | {start:.1f} | {end:.1f} | "
                      f"{med([x[5] - x[4] for x in same]):.1f} |" + extra)


if __name__ == "__main__":
    main()
