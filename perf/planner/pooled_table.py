#!/usr/bin/env python3
"""A tuning table fitted on pooled runs, and its leave-one-run-out check (no new measurement).

The planner's target is "within 10% of the fastest forced all-reduce". One run's fastest is
noisy: at many points two or three algorithms trade places from run to run. Over several stored
runs (planner_vs_forced.py / loom-plan --measure jsonl files, every forced algorithm timed in one
process set), this script counts per (transport, ranks, size) in how many runs each algorithm was
within 10% of that run's fastest. The model's choice (loom-plan with PARAMS, as
choices_vs_measured.py asks it) is kept unless another algorithm was within 10% in at least
--margin more runs; then the table names that one (ties: the lower median of time / fastest).

  * --check: leave one run out. For every file, fit on all the others and score on it, beside the
    model alone: how often the choice is within 10% of that run's fastest. Files measured with the
    same library go in; the score is out-of-sample for the table.
  * --write OUT: PARAMS plus the table (tuned.TRANSPORT.RANKS.UPTO=ALGO, as loom-plan
    --calibrate --tuning-table writes it: buckets up to the geometric middle between measured
    sizes, the last up to the largest) fitted on all files.

    perf/planner/pooled_table.py --build build-lead perf/planner/calibrated-vm.txt --check F...
"""
import argparse
import collections
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import choices_vs_measured as cvm  # noqa: E402  (model choices from loom-plan)

ALGOS = cvm.ALGOS
SLACK = 1.10


def load(path):
    """(transport, ranks, size) -> {algo: median us} of one file."""
    out = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            vals = {a: r[a]["median_us"] for a in ALGOS if isinstance(r.get(a), dict)}
            if vals:
                out[(r["transport"], r["ranks"], r["size"])] = vals
    return out


def model_choices(args, runs):
    """(transport, ranks, size) -> the model's algorithm, for every point of `runs`."""
    sizes = collections.defaultdict(set)
    for run in runs:
        for (t, p, s) in run:
            sizes[(t, p)].add(s)
    got = {}
    for (t, p), ss in sizes.items():
        table = cvm.choices(args, t, p, min(ss), max(ss))
        for s in ss:
            if s in table:
                got[(t, p, s)] = table[s]
    return got


def fit(runs, model, margin):
    """(transport, ranks, size) -> algorithm the table names, where it overrides the model."""
    within = collections.defaultdict(collections.Counter)
    ratio = collections.defaultdict(lambda: collections.defaultdict(list))
    for run in runs:
        for key, vals in run.items():
            best = min(vals.values())
            for a, us in vals.items():
                within[key][a] += us <= SLACK * best
                ratio[key][a].append(us / best)
    table = {}
    for key, counts in within.items():
        cand = max(counts, key=lambda a: (counts[a], -statistics.median(ratio[key][a])))
        mine = model.get(key)
        if mine not in counts:
            continue
        if counts[cand] - counts[mine] >= margin:
            table[key] = cand
    return table


def score(run, choice):
    met = n = 0
    misses = []
    for key, vals in sorted(run.items()):
        pick = choice(key)
        if pick not in vals:
            continue
        best = min(vals, key=vals.get)
        r = vals[pick] / vals[best]
        n += 1
        met += r <= SLACK
        if r > SLACK:
            misses.append(f"{key[0]} {key[1]}r {key[2]} B: {pick} {r:.2f} (best {best})")
    return met, n, misses


def buckets(table, runs):
    """tuned.* lines: per (transport, ranks) with an override, every measured size's bucket (up to
    the geometric middle to the next size), naming the table's algorithm or "model" (the cost
    model decides there), equal neighbours merged."""
    sizes = collections.defaultdict(set)
    for run in runs:
        for (t, p, s) in run:
            sizes[(t, p)].add(s)
    lines = []
    for (t, p), ss in sorted(sizes.items()):
        ss = sorted(ss)
        if not any((t, p, s) in table for s in ss):
            continue
        merged = []
        for i, s in enumerate(ss):
            algo = table.get((t, p, s), "model")
            up = ss[i] if i + 1 == len(ss) else int(math.sqrt(s * ss[i + 1]))
            if merged and merged[-1][1] == algo:
                merged[-1][0] = up
            else:
                merged.append([up, algo])
        lines += [f"tuned.{t}.{p}.{up}={algo}" for up, algo in merged]
    return lines


def report(runs, choice):
    """Every point: the choice's runs within 10% and median ratio; a summary line."""
    ratios = collections.defaultdict(list)
    for run in runs:
        for key, vals in run.items():
            if choice.get(key) in vals:
                ratios[key].append(vals[choice[key]] / min(vals.values()))
    over = 0
    for key in sorted(ratios):
        rs = ratios[key]
        med = statistics.median(rs)
        over += med > SLACK
        print(f"report: {key[0]} {key[1]} ranks {key[2]:>9} B: {choice[key]:<12} within 10% in "
              f"{sum(r <= SLACK for r in rs)}/{len(rs)} runs, median {med:.2f}"
              + ("  OVER" if med > SLACK else ""))
    n = sum(len(r) for r in ratios.values())
    met = sum(r <= SLACK for rs in ratios.values() for r in rs)
    print(f"report: {len(ratios)} points, {over} with a median over runs above {SLACK}; "
          f"{met}/{n} run-points within 10%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--direct-bytes", type=int, default=32768)
    ap.add_argument("--margin", type=int, default=2,
                    help="runs more within 10%% than the model's choice before the table overrides")
    ap.add_argument("--check", action="store_true", help="leave-one-run-out check")
    ap.add_argument("--write", help="write PARAMS plus the table fitted on every file here")
    ap.add_argument("--report", action="store_true",
                    help="per point, PARAMS' own choice (its table included) over all files: in "
                         "how many runs within 10%% of the fastest, and the median time / fastest")
    ap.add_argument("params")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    runs = [load(f) for f in args.files]
    model = model_choices(args, runs)
    if args.report:
        report(runs, model)
    if args.check:
        tot = collections.Counter()
        for i, f in enumerate(args.files):
            others = runs[:i] + runs[i + 1:]
            table = fit(others, model, args.margin)
            m_met, n, m_miss = score(runs[i], lambda k: model.get(k))
            t_met, _, t_miss = score(runs[i], lambda k: table.get(k, model.get(k)))
            tot["model"] += m_met
            tot["table"] += t_met
            tot["n"] += n
            print(f"{f}: model {m_met}/{n}, model + table fitted without it {t_met}/{n}")
            for m in sorted(set(t_miss) - set(m_miss)):
                print(f"    table miss  {m}")
            for m in sorted(set(m_miss) - set(t_miss)):
                print(f"    fixed       {m}")
        print(f"all files, leave one run out: model {tot['model']}/{tot['n']}, "
              f"model + table {tot['table']}/{tot['n']}")
    table = fit(runs, model, args.margin)
    for (t, p, s), a in sorted(table.items()):
        print(f"table: {t} {p} ranks {s} B: {a} (model {model.get((t, p, s))})")
    if args.write:
        text = open(args.params).read().strip()
        kept = [kv for kv in text.split(",") if not kv.startswith("tuned.")]
        with open(args.write, "w") as out:
            out.write(",".join(kept + buckets(table, runs)) + "\n")
        print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
