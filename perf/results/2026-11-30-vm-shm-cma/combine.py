#!/usr/bin/env python3
"""Merges the runs of run.sh: configs np2_shm_copy (LOOM_SHM_CMA=off) and np2_shm_cma (auto),
re-analysed by perf/compare --input (summary.md, ratios, plots), plus cma_vs_copy.md: per size the
best loom bus bandwidth of each mode, and both against one core's memcpy and Open MPI, where each
baseline is the best over every run (it does not depend on LOOM_SHM_CMA)."""
import glob
import json
import os
import subprocess
import sys

out = sys.argv[1]
root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
rows = []
for d in sorted(p for p in glob.glob(os.path.join(out, "raw", "*-*")) if os.path.isdir(p)):
    mode = os.path.basename(d).split("-")[0]
    name = "np2_shm_copy" if mode == "off" else "np2_shm_cma"
    with open(os.path.join(d, "all.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            r["config"] = name
            r["cma_mode"] = mode
            rows.append(r)
merged = os.path.join(out, "all.jsonl")
with open(merged, "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
subprocess.run([os.path.join(root, "perf", "compare"), "--input", merged, "--out", out], check=True)


def best(r):
    c = [p["busbw"] for p in (r.get("oop"), r.get("ip")) if p and p.get("wrong", 0) == 0]
    return max(c) if c else None


cell = {}
for r in rows:
    if r.get("coll") not in ("all_reduce", "stream"):
        continue
    b = best(r)
    if b is None:
        continue
    key = r["backend"] if r["backend"] != "loom" else "loom_" + r["cma_mode"]
    old = cell.setdefault(key, {}).get(r["size"])
    if old is None or b > old:
        cell[key][r["size"]] = b

MIB = 1 << 20
lines = ["# shm all-reduce, 2 ranks, float32 sum: copy path vs single copy (CMA)", "",
         "Best of the runs in raw/ (see run.sh); bus bandwidth in GB/s; memcpy and Open MPI are the",
         "best over all runs. Target (issue 2): loom busbw >= 0.5x one core's memcpy.", "",
         "| size | copy path | single copy | cma/copy | memcpy 1 core | Open MPI | copy/memcpy | cma/memcpy | copy/MPI | cma/MPI |",
         "|---|---|---|---|---|---|---|---|---|---|"]


def f(v, d=2):
    return "-" if v is None else "%.*f" % (d, v)


def div(a, b):
    return None if a is None or not b else a / b


for s in sorted(cell.get("loom_off", {})):
    cp, cm = cell["loom_off"].get(s), cell.get("loom_auto", {}).get(s)
    mc, mpi = cell.get("memcpy", {}).get(s), cell.get("mpi", {}).get(s)
    lines.append("| %d MiB | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        s // MIB, f(cp, 3), f(cm, 3), f(div(cm, cp)), f(mc, 3), f(mpi, 3), f(div(cp, mc)),
        f(div(cm, mc)), f(div(cp, mpi)), f(div(cm, mpi))))
with open(os.path.join(out, "cma_vs_copy.md"), "w") as fh:
    fh.write("\n".join(lines) + "\n")
print("\n".join(lines))
