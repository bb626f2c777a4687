#!/usr/bin/env python3
"""Per stored validation run (VM F, runs 52 on) and shm point: the all-reduce's measured time over
the sum of its two halves measured beside it in the same round (the ring all-gather + ring
reduce-scatter for the forced ring; loom's recursive-doubling all-gather + recursive-halving
reduce-scatter where the planner ran Rabenseifner), the median over the run's rounds. Nothing is
simulated. Usage: halves.py [FIRST_RUN] (default 52), from the repository root."""
import glob, json, re, statistics, sys

first = int(sys.argv[1]) if len(sys.argv) > 1 else 52
out = {}
for f in sorted(glob.glob("perf/results/*-vm-sim-vs-loom-*/shm*/points.json")):
    m = re.search(r"loom-(\d+)/", f)
    if not m or int(m.group(1)) < first:
        continue
    n = int(m.group(1))
    for r in json.load(open(f))["rounds"]:
        c = r["calib"]["shm"]
        for p in r["points"]:
            _, algo, ranks, size = p["key"]
            k = f"{ranks}:{size}"
            if algo == "ring":
                h = c["allgather_us"].get(k, 0) + c["reducescatter_us"].get(k, 0)
            elif p["loom_ran"].startswith("rabenseifner"):
                h = c["allgather_rd_us"].get(k, 0) + c["reducescatter_halving_us"].get(k, 0)
            else:
                continue
            if h and (c["allgather_us"].get(k) if algo == "ring" else c["allgather_rd_us"].get(k)):
                out.setdefault((algo, ranks, size >> 20), {}).setdefault(n, []).append(p["us"] / h)
print("| schedule | ranks | MiB | median over runs | per run: run:median of its rounds |")
print("|---|---|---|---|---|")
for (algo, ranks, mib), runs in sorted(out.items()):
    meds = {n: statistics.median(v) for n, v in sorted(runs.items())}
    name = "ring" if algo == "ring" else "Rabenseifner (planner)"
    print(f"| {name} | {ranks} | {mib} | {statistics.median(meds.values()):.2f} | " +
          " ".join(f"{n}:{v:.2f}" for n, v in meds.items()) + " |")
