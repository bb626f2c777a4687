#!/usr/bin/env python3
"""Planner's choice against every forced all-reduce algorithm, measured side by side.

For each transport (shm, tcp) and rank count (2, 4, 8) it runs `loom-plan --measure`: the ranks
are forked once and open one communicator per registered all-reduce algorithm (forced) plus one
where the planner chooses (LOOM_SHM_DIRECT_BYTES=0, so it chooses at every size) and, over shm,
one as the library is by default (small all-reduces take the one-host direct path, which bypasses
the planner), then every size is timed in interleaved rounds over all candidates
(round r visits them in a rotated order, every other round reversed), so load changes and
process-start differences hit every candidate alike. Sizes go from -b to -e in steps of x4 (and
-e itself): 8 B, 32 B, ..., 32 MiB, 64 MiB by default. Per candidate and size the median over the
rounds is kept (the minimum too, in the JSON). It writes a markdown table per configuration:
times per algorithm, the planner's time and choice, planner / best forced (the target: <= 1.10),
and over shm the library's default time and library / best forced.

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

ALGOS = ["ring", "tree", "rd", "rabenseifner", "hier", "hier_tree"]


def measure(args, transport, nranks):
    cmd = [os.path.join(args.build, "tools", "loom-plan", "loom-plan"), "--measure", transport,
           "--ranks", str(nranks), "--min", args.b, "--max", args.e, "--rounds", str(args.rounds)]
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


def table(transport, nranks, rows, stat):
    lib = any("library" in r for r in rows)
    head = "| size | " + " | ".join(ALGOS) + " | planner | choice | planner/best | met |"
    if lib:
        head += " library | library/best |"
    lines = [f"### {transport}, {nranks} ranks", "", head,
             "|" + "---|" * (len(ALGOS) + 5 + 2 * lib)]
    met = lib_met = 0
    misses = []
    for r in sorted(rows, key=lambda r: r["size"]):
        forced = {a: r[a][stat] for a in ALGOS if a in r}
        best_algo = min(forced, key=forced.get)
        pt = r["planner"][stat]
        ratio = pt / forced[best_algo]
        ok = ratio <= 1.10
        met += ok
        if not ok:
            misses.append(f"{r['size']} B ({ratio:.2f}, chose {r['choice'].split('(')[0]}, "
                          f"best {best_algo})")
        cells = " | ".join(f"**{forced[a]:.1f}**" if a == best_algo else f"{forced[a]:.1f}"
                           for a in ALGOS if a in forced)
        line = (f"| {r['size']} | {cells} | {pt:.1f} | {r['choice']} | {ratio:.2f} | "
                f"{'yes' if ok else 'NO'} |")
        if lib:
            lt = r.get("library", r["planner"])[stat]
            lib_met += lt / forced[best_algo] <= 1.10
            line += (f" {lt:.1f}{' (direct)' if r.get('direct') else ''} | "
                     f"{lt / forced[best_algo]:.2f} |")
        lines.append(line)
    lines += ["", f"planner within 10% of the best forced algorithm at {met} of {len(rows)} sizes"
              + (f"; missed at {', '.join(misses)}" if misses else "")
              + (f". Library as is (direct path for small sizes): within 10% at {lib_met} of "
                 f"{len(rows)}" if lib else ""), ""]
    return lines, met, len(rows)


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
             f"Times in us per call ({args.stat.replace('_us', '')} of the interleaved rounds), "
             "float32 sum, out of place; best forced algorithm in bold. `planner`: nothing "
             "forced, the one-host direct path off (LOOM_SHM_DIRECT_BYTES=0), so the planner "
             "chooses at every size; `library` (shm): loom as it is by default, whose small "
             "all-reduces take the direct path past the planner.",
             ""]
    total_met = total = 0
    configs = []
    for r in rows:
        if (r["transport"], r["ranks"]) not in configs:
            configs.append((r["transport"], r["ranks"]))
    for transport, n in configs:
        sel = [r for r in rows if r["transport"] == transport and r["ranks"] == n]
        t, m, k = table(transport, n, sel, args.stat)
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
