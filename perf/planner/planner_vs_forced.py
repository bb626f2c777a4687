#!/usr/bin/env python3
"""Planner's choice against every forced all-reduce algorithm, measured side by side.

For each transport (shm, tcp) and rank count (2, 4, 8) it runs build/perf/all_reduce_perf once per
algorithm with LOOM_ALGO forced (-a) and once with the planner choosing (its choice is read from
the PLAN log), interleaved and repeated (--reps, best time kept), and writes a markdown table per
configuration: times per algorithm, the planner's time and choice, and planner / best forced
(the issue's target: <= 1.10 at every size).

    perf/planner/planner_vs_forced.py --build build                    # 2,4,8 ranks, shm+tcp, 8 B..64 MiB
    perf/planner/planner_vs_forced.py --build build --ranks 2,4 -e 1M --reps 1
    perf/planner/planner_vs_forced.py --build build --params-file params.txt  # calibrated model
"""
import argparse
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import tempfile

ALGOS = ["ring", "tree", "rd", "rabenseifner", "hier", "hier_tree"]
UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
CHOICE = re.compile(r"allreduce (\d+) (B|KiB|MiB|GiB) \w+ on \d+ ranks: (\S+) predicted")


def run(args, nranks, transport, algo):
    """Returns ({size: time_us}, {size: chosen description})."""
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
        jpath = f.name
    cmd = [os.path.join(args.build, "perf", "all_reduce_perf"), "--ranks", str(nranks),
           "-b", args.b, "-e", args.e, "-f", "2", "-n", str(args.iters), "-w", str(args.warmup),
           "-c", "1", "-J", jpath]
    if algo != "planner":
        cmd += ["-a", algo]
    env = dict(os.environ, LOOM_TRANSPORT=transport, LOOM_DEBUG="INFO", LOOM_DEBUG_SUBSYS="PLAN")
    env.pop("LOOM_ALGO", None)
    if args.params_file:
        env["LOOM_PLAN_PARAMS"] = "@" + os.path.abspath(args.params_file)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    times, chosen = {}, {}
    with open(jpath) as f:
        for line in f:
            row = json.loads(line)
            if row.get("oop"):
                times[row["size"]] = row["oop"]["time_us"]
    os.unlink(jpath)
    if p.returncode != 0:
        print(f"warning: {algo} {transport} np={nranks} exited {p.returncode}: "
              f"{p.stderr.strip().splitlines()[-1:] }", file=sys.stderr)
    for m in CHOICE.finditer(p.stderr):
        chosen.setdefault(int(m.group(1)) * UNITS[m.group(2)], m.group(3))
    return times, chosen


def table(nranks, transport, best, chosen):
    sizes = sorted(best["planner"])
    lines = [f"### {transport}, {nranks} ranks", "",
             "| size | " + " | ".join(ALGOS) + " | planner | choice | planner/best | met |",
             "|" + "---|" * (len(ALGOS) + 5)]
    met = 0
    for s in sizes:
        forced = {a: best[a].get(s) for a in ALGOS}
        valid = [t for t in forced.values() if t]
        pt = best["planner"][s]
        ratio = pt / min(valid) if valid else float("nan")
        ok = ratio <= 1.10
        met += ok
        cells = " | ".join(f"{forced[a]:.1f}" if forced[a] else "-" for a in ALGOS)
        lines.append(f"| {s} | {cells} | {pt:.1f} | {chosen.get(s, '?')} | {ratio:.2f} | "
                     f"{'yes' if ok else 'NO'} |")
    lines += ["", f"planner within 10% of the best forced algorithm at {met} of {len(sizes)} sizes",
              ""]
    return lines, met, len(sizes)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="64M")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--params-file", help="LOOM_PLAN_PARAMS file (loom-plan --calibrate)")
    ap.add_argument("--out", help="output directory (default perf/results/<date>-<host>)")
    args = ap.parse_args()
    out = args.out or os.path.join(os.path.dirname(__file__), "..", "results",
                                   f"{datetime.date.today()}-{socket.gethostname()}")
    os.makedirs(out, exist_ok=True)
    lines = [f"# Planner vs forced all-reduce algorithms ({socket.gethostname()}, "
             f"{datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs)", "",
             "Times in us (out of place, best of the repetitions), float32 sum.", ""]
    total_met = total = 0
    for transport in args.transports.split(","):
        for n in map(int, args.ranks.split(",")):
            best, chosen = {}, {}
            for _ in range(args.reps):
                for algo in ALGOS + ["planner"]:
                    times, ch = run(args, n, transport, algo)
                    for s, t in times.items():
                        if s not in best.setdefault(algo, {}) or t < best[algo][s]:
                            best[algo][s] = t
                    chosen.update(ch)
            if not best.get("planner"):
                lines += [f"### {transport}, {n} ranks", "", "planner run failed", ""]
                continue
            t, m, k = table(n, transport, best, chosen)
            lines += t
            total_met += m
            total += k
            print("\n".join(t), flush=True)
    lines.append(f"**Overall: within 10% at {total_met} of {total} (size, configuration) points.**")
    path = os.path.join(out, "planner_vs_forced.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
