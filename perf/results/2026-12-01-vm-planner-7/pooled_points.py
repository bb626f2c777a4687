#!/usr/bin/env python3
"""Per (transport, ranks, size): over every distinct stored planner run (perf/results/*-vm-planner*,
identical files counted once; one-algorithm, A/B and hog-affected side runs left out), in how many runs each
algorithm's median was within 10% of that run's fastest, and the median over runs of its time /
fastest. Answers "does X beat Y here in general, or in one run?" without measuring.

    perf/results/2026-12-01-vm-planner-7/pooled_points.py tcp:8 tcp:4 shm:2
"""
import collections
import glob
import hashlib
import json
import statistics
import sys

ALGOS = ["ring", "tree", "rd", "rabenseifner", "hier", "hier_tree", "direct"]


def main():
    want = [(a.split(":")[0], int(a.split(":")[1])) for a in sys.argv[1:]] or [("tcp", 8)]
    files = sorted(glob.glob("perf/results/*-vm-planner*/**/*.jsonl", recursive=True))
    seen, rows = set(), collections.defaultdict(list)
    for f in files:
        if any(k in f for k in ("/single/", "/tcp-same/", "/ab/", "/hog-affected/")):
            continue
        digest = hashlib.md5(open(f, "rb").read()).hexdigest()
        if digest in seen:
            continue
        seen.add(digest)
        for line in open(f):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            vals = {a: r[a]["median_us"] for a in ALGOS if isinstance(r.get(a), dict)}
            if vals:
                rows[(r["transport"], r["ranks"], r["size"])].append(vals)
    print(f"{len(seen)} distinct files")
    for tr, p in want:
        for size in sorted(s for (t, q, s) in rows if t == tr and q == p and s >= 1 << 20):
            runs = rows[(tr, p, size)]
            within, ratio = collections.Counter(), collections.defaultdict(list)
            for v in runs:
                best = min(v.values())
                for a, x in v.items():
                    within[a] += x <= 1.1 * best
                    ratio[a].append(x / best)
            cells = [f"{a} {within[a]} ({statistics.median(ratio[a]):.2f})" for a in ALGOS
                     if a in ratio and a not in ("rd", "direct")]
            print(f"{tr} {p} ranks {size >> 10:6d} KiB, {len(runs):2d} runs: " + ", ".join(cells))


if __name__ == "__main__":
    main()
