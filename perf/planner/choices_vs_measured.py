#!/usr/bin/env python3
"""The cost model's choices against measurements it was not fitted to (no new measurement).

For a parameters file (loom-plan --calibrate) it asks loom-plan for the model's choice at every
(transport, ranks, size) of the given --measure / planner_vs_forced.py jsonl files (one host over
shm with the direct path up to --direct-bytes, one rank per host over tcp, as the measurement ran)
and reports, per file and transport, at how many points the chosen algorithm's measured median is
within 10% of the fastest forced one, and every miss. Validating a fit on runs it did not see:

    perf/planner/choices_vs_measured.py --build build-plan perf/planner/calibrated-vm.txt \
        perf/results/2026-11-30-vm-planner-5/planner_vs_forced.jsonl

This rates the choice alone; planner_vs_forced.py also times the planner's own communicator.
"""
import argparse
import collections
import json
import os
import re
import subprocess

ALGOS = ["ring", "tree", "rd", "rabenseifner", "hier", "hier_tree", "direct"]
UNIT = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def choices(args, transport, ranks, lo, hi):
    """size -> algorithm the model picks, from loom-plan's decision table."""
    cmd = [os.path.join(args.build, "tools", "loom-plan", "loom-plan"), "--params-file",
           args.params, "--min", str(lo), "--max", str(hi)]
    if transport == "shm":
        cmd += ["--hosts", "1", "--ranks-per-host", str(ranks), "--direct-bytes",
                str(args.direct_bytes)]
    else:
        cmd += ["--hosts", str(ranks), "--transport", "tcp"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    got = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        m = re.fullmatch(r"(\d+)([BKMG])", cells[0])
        if m:
            got[int(m.group(1)) * UNIT[m.group(2)]] = cells[-1].split("(")[0]
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--direct-bytes", type=int, default=32768,
                    help="the direct path's size limit the measurement ran with")
    ap.add_argument("params", help="parameters file (loom-plan --calibrate --save-params)")
    ap.add_argument("files", nargs="+", help="jsonl files of --measure lines")
    args = ap.parse_args()
    table = {}
    total = collections.Counter()
    for path in args.files:
        met, n, misses = collections.Counter(), collections.Counter(), []
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.startswith("{")]
        for r in rows:
            tr, ranks, size = r["transport"], r["ranks"], r["size"]
            if (tr, ranks) not in table:
                sizes = [x["size"] for x in rows if x["transport"] == tr and x["ranks"] == ranks]
                table[tr, ranks] = choices(args, tr, ranks, 8, max(sizes))
            pick = table[tr, ranks].get(size)
            forced = {a: r[a]["median_us"] for a in ALGOS if a in r}
            if pick not in forced:
                continue
            best = min(forced, key=forced.get)
            ratio = forced[pick] / forced[best]
            n[tr] += 1
            met[tr] += ratio <= 1.10
            if ratio > 1.10:
                misses.append(f"{tr} {ranks} ranks {size} B: {pick} {ratio:.2f} (best {best})")
        print(f"{path}: " + ", ".join(f"{t} {met[t]}/{n[t]}" for t in n))
        for m in misses:
            print("    " + m)
        for t in n:
            total["met"] += met[t]
            total["n"] += n[t]
    print(f"all files: the model's choice within 10% of the fastest at {total['met']} of "
          f"{total['n']} points")


if __name__ == "__main__":
    main()
