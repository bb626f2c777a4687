#!/usr/bin/env python3
"""How many rounds a validate_local run needs, from stored runs' per-round ratios.

  perf/sim/rounds_needed.py [--column cpu_gb] [--tolerance 0.25] [--times 1,2,3,4]
                            [--points points.json] [--draws 2000] [--seed 1] DIR...

DIR: a validate_local results directory (points.json), or a run's directory whose parts (tcp-1m,
shm-1m, tcp, shm) hold one each. A point's score is the median over the run's rounds of
simulated / measured (the column's "<column>_ratios"). For each point this pools the per-round
ratios of every run given and prints:
  - the spread (standard deviation) of the runs' medians, and the spread a median of that many
    rounds drawn at random from the pool has: if the two agree, the rounds behave as independent
    draws, and more rounds shrink the spread of a run's median as 1/sqrt(rounds);
  - the chance that a median of k times the runs' rounds, drawn from the pool, lies outside the
    tolerance (k from --times);
and, last, the chance that every point passes, for each k (the points taken as independent).
The pool mixes runs, so a bias that moves from run to run is in it; drawing from it
assumes the next run is like these.
"""
import argparse
import json
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from validate_local import part_dirs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--column", default="cpu_gb")
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--times", default="1,2,3,4", help="multiples of the runs' rounds")
    ap.add_argument("--points", default="points.json",
                    help="the file in each part (points-rescored.json for rescored runs)")
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    try:
        times = [int(x) for x in a.times.split(",")]
    except ValueError:
        times = []
    if not times or min(times) < 1:
        sys.exit(f"rounds_needed: --times '{a.times}': give positive integers, comma-separated")
    if a.draws < 1 or not 0 < a.tolerance < 1:
        sys.exit("rounds_needed: --draws must be >= 1 and --tolerance between 0 and 1")
    runs = {}  # point -> [per-round ratios of one run part]
    for d in part_dirs(a.dirs, a.points):
        for r in json.load(open(os.path.join(d, a.points)))["rows"]:
            ratios = r.get(a.column + "_ratios")
            if ratios:
                key = (r["transport"], r["algo"], r["ranks"], r["size"])
                runs.setdefault(key, []).append(ratios)
    if not runs:
        sys.exit(f"rounds_needed: no point has column '{a.column}' in {', '.join(a.dirs)}")
    rng = random.Random(a.seed)
    lo, hi = 1 - a.tolerance, 1 + a.tolerance
    all_pass = {k: 1.0 for k in times}
    print(f"| point | runs | rounds | median of pool | sd of runs' medians | sd, rounds drawn | "
          + " | ".join(f"miss, {k}x rounds" for k in times) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(times))
    for key in sorted(runs):
        rs = runs[key]
        pool = [x for r in rs for x in r]
        m = round(statistics.median(len(r) for r in rs))
        meds = [statistics.median(r) for r in rs]
        one = [statistics.median(rng.choices(pool, k=m)) for _ in range(a.draws)]
        miss = []
        for k in times:
            draws = one if k == 1 else [statistics.median(rng.choices(pool, k=m * k))
                                        for _ in range(a.draws)]
            p = sum(not lo <= x <= hi for x in draws) / a.draws
            miss.append(p)
            all_pass[k] *= 1 - p
        sd_runs = f"{statistics.pstdev(meds):.3f}" if len(meds) > 1 else "n/a"
        t, algo, p, s = key
        print(f"| {t} {algo} {p}r {s >> 20} MiB | {len(rs)} | {m} | {statistics.median(pool):.2f} "
              f"| {sd_runs} | {statistics.pstdev(one):.3f} | "
              + " | ".join(f"{x:.3f}" for x in miss) + " |")
    print(f"\nChance every one of the {len(runs)} points lies within {a.tolerance:.0%}, "
          f"column {a.column}: " + ", ".join(f"{k}x rounds {all_pass[k]:.3f}" for k in times))


if __name__ == "__main__":
    main()
