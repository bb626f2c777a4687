#!/usr/bin/env python3
"""Planner's choice against every forced all-reduce algorithm, measured side by side.

For each transport (shm, tcp) and rank count (2, 4, 8) it runs `loom-plan --measure`: the ranks
are forked once and open one communicator per registered all-reduce algorithm (forced through
LOOM_ALGO), over shm one with the one-host direct path forced (LOOM_ALGO=allreduce:direct, timed
up to LOOM_SHM_DIRECT_BYTES), one where nothing is forced (the library as it is: the planner
chooses, the direct path among its candidates) and, when the parameters carry a tuning table, one
with the same parameters without it (the cost model alone). Every size is timed in interleaved
rounds over all candidates (round r visits them in a rotated order, every other round reversed),
so load changes and process-start differences hit every candidate alike. Sizes go from -b to -e
in steps of x4 (and -e itself): 8 B, 32 B, ..., 32 MiB, 64 MiB by default. Per candidate and size
the median over the rounds is kept (the minimum and every round too, in the JSON). It writes a
markdown table per configuration: times per algorithm, the planner's time, choice and its source
(tuned / cost), planner / best forced (the target: <= --target, 1.10 by default) by median and by minimum, each
point's round-to-round spread (points where it exceeds 10% are flagged noise-limited) and the
cost model's own choice and time.

    perf/planner/planner_vs_forced.py --build build                # 2,4,8 ranks x shm,tcp
    perf/planner/planner_vs_forced.py --build build --ranks 2 --transports shm -e 1M --rounds 3
    perf/planner/planner_vs_forced.py --build build --params-file perf/planner/calibrated-vm.txt

Each configuration is one `loom-plan --measure` process; with --lock FILE it runs under
`flock FILE` (one configuration at a time, so others may measure in between). --json FILE appends
the raw lines and --from-json FILE re-renders a table from them without measuring.
"""
import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

ALGOS = ["ring", "tree", "rd", "rabenseifner", "hier", "hier_tree"]  # "direct" added over shm


def measure(args, transport, nranks):
    cmd = [os.path.join(args.build, "tools", "loom-plan", "loom-plan"), "--measure", transport,
           "--ranks", str(nranks), "--min", args.b, "--max", args.e, "--rounds", str(args.rounds)]
    if args.algos:
        cmd += ["--algos", args.algos + ",planner"]
    if args.params_file:
        cmd += ["--params-file", os.path.abspath(args.params_file)]
    if args.lock:
        cmd = ["flock", args.lock] + cmd
    env = dict(os.environ)
    for k in ("LOOM_ALGO", "LOOM_TUNE", "LOOM_PLAN_PARAMS", "LOOM_TRANSPORT"):
        env.pop(k, None)
    t0 = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if p.returncode != 0:
        print(f"warning: {transport} np={nranks} exited {p.returncode}: {p.stderr.strip()[-400:]}",
              file=sys.stderr)
    rows = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        r["stamp"] = f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC"
    print(f"{transport} np={nranks}: {len(rows)} sizes in {time.time() - t0:.0f} s", file=sys.stderr)
    return rows


def spread(cell):
    """Largest over smallest per-call time of one candidate across the rounds."""
    r = [x for x in cell.get("rounds_us", []) if x > 0]
    return max(r) / min(r) if r else 1.0


def table(transport, nranks, rows, stat, target):
    algos = ALGOS + (["direct"] if any("direct" in r for r in rows) else [])
    model = any("model" in r for r in rows)
    head = ("| size | " + " | ".join(algos) + " | planner | choice (source) | planner/best | "
            "min ratio | met | round spread best/planner |")
    if model:
        head += " model | model choice | model/best |"
    lines = [f"### {transport}, {nranks} ranks", "", head,
             "|" + "---|" * (len(algos) + 7 + 3 * model)]
    st = {"met": 0, "met_min": 0, "noisy_miss": 0, "model_met": 0, "n": 0}
    misses = []
    for r in sorted(rows, key=lambda r: r["size"]):
        forced = {a: r[a][stat] for a in algos if a in r}
        best = min(forced, key=forced.get)
        pt = r["planner"][stat]
        ratio = pt / forced[best]
        ratio_min = r["planner"]["min_us"] / min(r[a]["min_us"] for a in forced)
        chosen = r["choice"].split("(")[0]
        sp_best, sp_plan = spread(r[best]), spread(r["planner"])
        # Noise-limited: a candidate's own rounds differ by more than 10%, or the planner ran the
        # very algorithm that was best and still measured more than 10% slower.
        noisy = max(sp_best, sp_plan) > 1.10 or (chosen == best and ratio > target)
        ok = ratio <= target
        st["n"] += 1
        st["met"] += ok
        st["met_min"] += ratio_min <= target
        if not ok:
            st["noisy_miss"] += noisy
            misses.append(f"{r['size']} B ({ratio:.2f}, chose {chosen}, best {best}"
                          f"{', noise-limited' if noisy else ''})")
        cells = " | ".join(f"**{forced[a]:.1f}**" if a == best else
                           (f"{forced[a]:.1f}" if a in forced else "-") for a in algos)
        line = (f"| {r['size']} | {cells} | {pt:.1f} | {r['choice']} ({r.get('source', '?')}) | "
                f"{ratio:.2f} | {ratio_min:.2f} | {'yes' if ok else 'NO'} | "
                f"{sp_best:.2f}/{sp_plan:.2f}{' noisy' if noisy else ''} |")
        if model:
            mt = r["model"][stat] if "model" in r else float("nan")
            st["model_met"] += mt / forced[best] <= target
            line += f" {mt:.1f} | {r.get('model_choice', '?')} | {mt / forced[best]:.2f} |"
        lines.append(line)
    n = st["n"]
    lines += ["", f"planner within {target:.2f}x of the best forced algorithm at {st['met']} of {n} sizes "
              f"(by the minimum over rounds: {st['met_min']} of {n})"
              + (f"; missed at {', '.join(misses)}" if misses else "")
              + (f". Cost model alone (tuning table left out): within {target:.2f}x at {st['model_met']} "
                 f"of {n}" if model else ""), ""]
    return lines, st


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median kept)")
    ap.add_argument("--stat", choices=["median_us", "min_us"], default="median_us")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--algos", help="forced candidates only these (comma list, e.g. ring,tree); "
                    "the planner's choice is always measured")
    ap.add_argument("--target", type=float, default=1.10,
                    help="planner / best forced at most this (1.10)")
    ap.add_argument("--params-file", help="LOOM_PLAN_PARAMS file (loom-plan --calibrate)")
    ap.add_argument("--lock", help="run each configuration under flock LOCK")
    ap.add_argument("--json", help="append the raw measurement lines to this file")
    ap.add_argument("--from-json", help="render the tables from this file, measure nothing")
    ap.add_argument("--out", help="output directory (default perf/results/<date>-<host>)")
    args = ap.parse_args()
    out = args.out or os.path.join(os.path.dirname(__file__), "..", "results",
                                   f"{datetime.date.today()}-{socket.gethostname()}")
    os.makedirs(out, exist_ok=True)
    if args.from_json:
        with open(args.from_json) as f:
            rows = [json.loads(line) for line in f if line.startswith("{")]
    else:
        rows = []
        for transport in args.transports.split(","):
            for n in map(int, args.ranks.split(",")):
                got = measure(args, transport, n)
                rows += got
                if args.json:
                    with open(args.json, "a") as f:
                        f.writelines(json.dumps(r) + "\n" for r in got)
    stamps = sorted({r.get("stamp", "?") for r in rows})
    lines = [f"# Planner vs forced all-reduce algorithms ({socket.gethostname()}, "
             f"{stamps[0]} to {stamps[-1]}, {os.cpu_count()} CPUs)", "",
             f"Times in us per call ({args.stat.replace('_us', '')} of {args.rounds} interleaved "
             "rounds, all candidates in the same processes), float32 sum, out of place; best "
             "forced algorithm in bold. `direct` (shm): the one-host direct path forced "
             "(LOOM_ALGO=allreduce:direct, up to LOOM_SHM_DIRECT_BYTES). `planner`: nothing "
             "forced, the library as it is: the planner chooses among the algorithms and the "
             "direct path, following the parameters' tuning table where the communicator has the "
             "calibrated shape (source `tuned`), the cost model elsewhere (`cost`). `min ratio`: "
             "planner / best by the minimum over the rounds. `round spread`: largest / smallest "
             "round of the best algorithm and of the planner; `noisy` when one exceeds 1.10 or "
             "when the planner ran the best algorithm itself and still missed. `model`: nothing "
             "forced, the same parameters without the tuning table (the cost model alone).",
             ""]
    tot = {}
    configs = []
    for r in rows:
        if (r["transport"], r["ranks"]) not in configs:
            configs.append((r["transport"], r["ranks"]))
    for transport, n in configs:
        sel = [r for r in rows if r["transport"] == transport and r["ranks"] == n]
        t, st = table(transport, n, sel, args.stat, args.target)
        lines += t
        for k, v in st.items():
            tot[k] = tot.get(k, 0) + v
        print("\n".join(t), flush=True)
    lines.append(f"**Overall: within {args.target:.2f}x at {tot['met']} of {tot['n']} (size, configuration) "
                 f"points; {tot['noisy_miss']} of the {tot['n'] - tot['met']} misses are "
                 f"noise-limited; by the minimum over rounds {tot['met_min']} of {tot['n']}.**"
                 + (f" The cost model alone: {tot['model_met']} of {tot['n']}." if any(
                     "model" in r for r in rows) else ""))
    path = os.path.join(out, "planner_vs_forced.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
