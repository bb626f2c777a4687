#!/usr/bin/env python3
"""How far validate_local's measurement agrees with itself, over stored runs.

  perf/sim/repeatability.py [--tolerance 0.25] DIR...

DIR: a validate_local results directory (points.json), or a run's directory whose parts (tcp-1m,
shm-1m, tcp, shm) hold one each.
Where the planner ran the very schedule the forced ring ran beside it (on 2 ranks it always does),
one point was measured twice in each round, minutes apart. For each such pair this prints
planner / forced of the two medians over the rounds and of each round's two runs, and counts how
many lie outside the tolerance: a model that priced one of the two exactly would miss the other
there, so this is the floor under the validation's "every point within 25%".
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import validate_local as v  # noqa: E402


def pairs_of(d):
    """[(run dir, transport, ranks, size, median ratio, [per-round ratios])] of one directory."""
    data = json.load(open(os.path.join(d, "points.json")))
    out = []
    for f, _, ratio in v.same_schedule_pairs(data["rows"]):
        per_round = []
        for rd in data["rounds"]:
            pts = {tuple(x["key"]): x["us"] for x in rd["points"]}
            kf = (f["transport"], "ring", f["ranks"], f["size"])
            kb = (f["transport"], "planner", f["ranks"], f["size"])
            if kf in pts and kb in pts:
                per_round.append(pts[kb] / pts[kf])
        out.append((d, f["transport"], f["ranks"], f["size"], ratio, per_round))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    rows = [p for d in v.part_dirs(a.dirs) for p in pairs_of(d)]
    if not rows:
        sys.exit("repeatability: no point ran the same schedule twice in these directories")
    out = lambda x: abs(x - 1) > a.tolerance
    print("| run | transport | ranks | size | planner / forced, medians | per round |")
    print("|---|---|---|---|---|---|")
    for d, t, p, s, m, rs in rows:
        print(f"| {d} | {t} | {p} | {v.human(s)} | {m:.2f}{' **out**' if out(m) else ''} | "
              + " ".join(f"{x:.2f}" for x in rs) + " |")
    n_r = sum(len(r[5]) for r in rows)
    print(f"\n{sum(out(r[4]) for r in rows)} of {len(rows)} pairs' medians and "
          f"{sum(out(x) for r in rows for x in r[5])} of {n_r} single rounds' pairs lie more than "
          f"{a.tolerance:.0%} apart.")


if __name__ == "__main__":
    main()
