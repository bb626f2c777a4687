#!/usr/bin/env python3
"""Simulator vs loom on this machine: does the flow simulator, with calibrated parameters,
predict loom's own shm and tcp all-reduce times within 25%?

For each transport (shm, tcp loopback) it
  1. calibrates on 2 ranks, per size: the transfer rate of one flow (sendrecv_perf: both ranks
     send and receive S at once, no reduction), the per-message latency (sendrecv at 8 B) and one
     core's reduction rate through loom's kernel (membw_perf, column loom-red);
  2. measures all_reduce_perf for 2, 4, 8 ranks at 1, 4, 16, 64 MiB (float32 sum, out of place),
     with the ring forced and with the planner's choice, LOOM_PLAN_PARAMS = the calibrated
     parameters of that size, so loom and loom-plan make the same decision;
  3. simulates the same decision with `loom-plan --simulate --sim-always --sim-cores N` (one
     machine: each rank moves at most the calibrated per-flow rate, all ranks together at most
     N cores x that rate, reductions at the core rate x min(1, N / ranks));
  4. prints measured / simulated with the ratio, PASS when within --tolerance (25%).
The measuring steps hold /tmp/loom-measure.lock (flock), as every perf run on this machine
(or run it as `flock /tmp/loom-measure.lock perf/sim/validate_local.py --lock '' ...`).

  perf/sim/validate_local.py --build build --out perf/results/<date>-<host>-sim-vs-loom
"""
import argparse
import fcntl
import json
import os
import platform
import subprocess
import sys
import time

MIB = 1 << 20


def size_arg(s):
    s = s.strip().lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def human(b):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k and b % k == 0:
            return f"{b // k} {unit}"
    return f"{b} B"


def run(cmd, env=None, timeout=600):
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit(f"validate_local: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def loom_decision(log):
    """The planner's decision as loom logged it (LOOM_DEBUG=INFO, subsystem PLAN)."""
    for line in log.splitlines():
        if " predicted " in line and "allreduce" in line:
            return line.split(" ranks: ", 1)[1].split(" predicted ", 1)[0]
    return "?"


def driver_times(build, driver, ranks, transport, lo, hi, iters, extra=(), env=None, log=None):
    """{size: out-of-place time in us} from a perf driver's -J output (`log`: list that gets the
    driver's output)."""
    jfile = f"/tmp/validate_local_{os.getpid()}.jsonl"
    if os.path.exists(jfile):
        os.remove(jfile)
    cmd = [os.path.join(build, "perf", driver), "--ranks", str(ranks), "-b", str(lo), "-e", str(hi),
           "-f", "4", "-n", str(iters), "-w", "3", "-J", jfile, *extra]
    e = {"LOOM_TRANSPORT": transport}
    e.update(env or {})
    txt = run(cmd, env=e)
    if log is not None:
        log.append(txt)
    out = {}
    with open(jfile) as f:
        for line in f:
            r = json.loads(line)
            out[r["size"]] = r["oop"]["time_us"]
    os.remove(jfile)
    return out


def reduce_rates(build, sizes):
    """{size: GB/s} of loom's reduce kernel on one core (membw_perf, loom-red column)."""
    txt = run([os.path.join(build, "perf", "membw_perf"), "-b", str(min(sizes)), "-e",
               str(max(sizes)), "-f", "4", "-n", "10", "-w", "2"])
    out = {}
    for line in txt.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split()
        out[int(cols[0])] = float(cols[6])
    return out


def calibrate(build, transport, sizes, iters, red, cores, reps):
    """Per size CostParams text for `transport` (2 ranks; best of `reps` runs)."""
    alpha = min(driver_times(build, "sendrecv_perf", 2, transport, 8, 8, 200)[8]
                for _ in range(reps))
    runs = [driver_times(build, "sendrecv_perf", 2, transport, min(sizes), max(sizes), iters)
            for _ in range(reps)]
    t = {s: min(r[s] for r in runs) for s in sizes}
    params = {}
    for s in sizes:
        gbps = s / max(1e-3, t[s] - alpha) / 1e3
        keys = (f"shmAlphaUs={alpha:.3f},shmGBps={gbps:.4f}" if transport == "shm" else
                f"tcpAlphaUs={alpha:.3f},tcpGBps={gbps:.4f}")
        # hostMemGBps: not the limit here (the cores are, `cores`); reduce: one core, per size.
        params[s] = f"{keys},hostMemGBps=1000,reduceGBps={red[s]:.4f},cores={cores}"
    return {"alpha_us": alpha, "sendrecv_us": t, "params": params}


def plan_args(transport, ranks):
    if transport == "shm":
        return ["--hosts", "1", "--ranks-per-host", str(ranks)]
    return ["--hosts", str(ranks), "--ranks-per-host", "1", "--transport", "tcp"]


def simulate(build, transport, ranks, size, params, algo, cores):
    """(decision, model us, simulated us) of loom-plan --simulate for one point."""
    cmd = [os.path.join(build, "tools", "loom-plan", "loom-plan"), *plan_args(transport, ranks),
           "--params", params, "--simulate", "--sim-always", "--sim-cores", str(cores),
           "--min", str(size), "--max", str(size)]
    if algo != "planner":
        cmd += ["--algo", f"allreduce:{algo}"]
    for line in run(cmd).splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 5 or line.startswith("#") or parts[0] in ("", "size"):
            continue
        model = parts[1].rsplit(None, 1)
        # The model's choice is what loom runs (same parameters): its simulated time.
        return model[0], float(model[1]), float(parts[2])
    sys.exit(f"validate_local: no row in loom-plan output for {transport} {ranks} {size}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--sizes", default="1M,4M,16M,64M")
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--algos", default="ring,planner", help="forced algorithms and/or 'planner'")
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--reps", type=int, default=2, help="measurements per point (best is kept)")
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--lock", default="/tmp/loom-measure.lock",
                    help="held while measuring ('' when run under flock(1) on it)")
    a = ap.parse_args()
    ranks = [int(x) for x in a.ranks.split(",")]
    sizes = [size_arg(x) for x in a.sizes.split(",")]
    transports = a.transports.split(",")
    algos = a.algos.split(",")
    for t in transports:
        if t not in ("shm", "tcp"):
            sys.exit(f"validate_local: --transports: '{t}' is not shm or tcp")
    if sorted(sizes) != [min(sizes) * 4 ** k for k in range(len(sizes))]:
        sys.exit("validate_local: --sizes must be x4 steps (the drivers' -f 4)")
    os.makedirs(a.out, exist_ok=True)

    lock = open(a.lock, "w") if a.lock else None  # "": the caller holds it (flock(1))
    if lock:
        print(f"validate_local: waiting for {a.lock} ...", flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    reds = [reduce_rates(a.build, sizes) for _ in range(a.reps)]
    red = {s: max(r[s] for r in reds) for s in sizes}
    calib = {t: calibrate(a.build, t, sizes, a.iters, red, a.cores, a.reps) for t in transports}
    measured = {}  # (t, algo, p, size) -> best us over reps
    ran = {}  # (t, algo, p, size) -> loom's decision
    for rep in range(a.reps):
        for t in transports:
            for p in ranks:
                for algo in algos:
                    for s in sizes:
                        extra = [] if algo == "planner" else ["-a", algo]
                        env = {"LOOM_PLAN_PARAMS": calib[t]["params"][s], "LOOM_DEBUG": "INFO",
                               "LOOM_DEBUG_SUBSYS": "PLAN"}
                        log = []
                        us = driver_times(a.build, "all_reduce_perf", p, t, s, s, a.iters, extra,
                                          env, log)[s]
                        k = (t, algo, p, s)
                        measured[k] = min(us, measured.get(k, us))
                        ran[k] = loom_decision(log[0])
    if lock:
        fcntl.flock(lock, fcntl.LOCK_UN)

    def point(t, algo, p, s, params, force=None):
        dec, model_us, sim_us = simulate(a.build, t, p, s, params, force or algo, a.cores)
        m = measured[(t, algo, p, s)]
        return {"transport": t, "algo": algo, "ranks": p, "size": s, "decision": dec,
                "loom_ran": ran[(t, algo, p, s)], "measured_us": m, "simulated_us": sim_us,
                "model_us": model_us, "ratio": sim_us / m, "pass": abs(sim_us / m - 1) <= a.tolerance}

    # A: parameters from independent 2-rank measurements (sendrecv, reduce kernel).
    rows = [point(t, algo, p, s, calib[t]["params"][s]) for t in transports for algo in algos
            for p in ranks for s in sizes]
    # B: the per-flow rate fitted to the 2-rank ring all-reduce itself (its reduction folded into
    # the rate, reductions free), predicting the ring at the other rank counts.
    rows_b, fits = [], {}
    if "ring" in algos and 2 in ranks:
        for t in transports:
            alpha = calib[t]["alpha_us"]
            for s in sizes:
                gbps = s / max(1e-3, measured[(t, "ring", 2, s)] - 2 * alpha) / 1e3
                pre = "shm" if t == "shm" else "tcp"
                fits[(t, s)] = (f"{pre}AlphaUs={alpha:.3f},{pre}GBps={gbps:.4f},hostMemGBps=1000,"
                                f"reduceGBps=1000000,cores={a.cores}")
                for p in ranks:
                    if p != 2:
                        rows_b.append(point(t, "ring", p, s, fits[(t, s)], "ring"))

    def table(rs):
        out = ["| transport | schedule | ranks | size | decision (simulated) | loom ran | "
               "measured us | simulated us | sim/measured | cost model us | |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            same = r["loom_ran"] == r["decision"]
            out.append(f"| {r['transport']} | {r['algo']} | {r['ranks']} | {human(r['size'])} | "
                       f"{r['decision']} | {'same' if same else r['loom_ran']} | "
                       f"{r['measured_us']:.0f} | {r['simulated_us']:.0f} | {r['ratio']:.2f} | "
                       f"{r['model_us']:.0f} | {'PASS' if r['pass'] else 'MISS'} |")
        n = sum(r["pass"] for r in rs)
        return out + ["", f"**{n} of {len(rs)} points within {a.tolerance:.0%}.**", ""]

    host = platform.node()
    lines = [f"# Simulator vs loom on this machine ({host}, {os.cpu_count()} CPUs), {started}", "",
             "float32 sum all-reduce, out of place, best of "
             f"{a.reps} runs of {a.iters} iterations; loom's own decision under LOOM_PLAN_PARAMS "
             f"(column 'loom ran'); simulated with `loom-plan --simulate --sim-always --sim-cores "
             f"{a.cores}` (one machine: per rank the calibrated flow rate, all ranks together "
             f"{a.cores} x that rate, reductions at the kernel rate x min(1, {a.cores}/ranks)). "
             f"PASS: simulated within {a.tolerance:.0%} of measured.", "",
             "## A: calibrated on independent 2-rank measurements", "",
             "Per size: sendrecv_perf on 2 ranks (both send and receive S at once: the transfer "
             "rate of one flow, and the latency at 8 B) and membw_perf's loom-red (one core's "
             f"reduction rate), best of {a.reps} runs.", ""]
    lines += table(rows)
    for t in transports:
        lines.append(f"- {t}: latency {calib[t]['alpha_us']:.1f} us; " + "; ".join(
            f"{human(s)}: {calib[t]['params'][s]}" for s in sizes))
    if rows_b:
        lines += ["", "## B: flow rate fitted to the 2-rank ring, predicting 4 and 8 ranks", "",
                  "Per size the 2-rank ring all-reduce gives one flow's effective rate, its "
                  "reduction included (reductions then cost nothing extra); what is tested is how "
                  "the simulator's shared-cores model scales that to more ranks.", ""]
        lines += table(rows_b)
        for (t, s), prm in fits.items():
            lines.append(f"- {t} {human(s)}: {prm}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "points.json"), "w") as f:
        json.dump({"rows_a": rows, "rows_b": rows_b, "calibration": calib, "reduce_gbps": red,
                   "measured": [{"key": list(k), "us": v, "loom_ran": ran[k]}
                                for k, v in measured.items()],
                   "started": started, "host": host}, f, indent=1, default=str)
    print(text)


if __name__ == "__main__":
    main()
