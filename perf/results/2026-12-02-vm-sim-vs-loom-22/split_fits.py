#!/usr/bin/env python3
"""Run 22's points re-scored three more ways (nothing measured), to ask what the ring all-gather's
gap (measured minus simulated, same S, same ranks, same round) is: the "cpu, all-gather" column
fits it as a per-message latency; here it is instead
  - call: a cost per call, added once to the all-reduce's simulated time (two-sided: a negative
    gap subtracts);
  - rate: a factor e on the flow's and the cores' transfer rates (bisection, e in 1/20..4) at
    which the simulator prices the all-gather at its measured time; "rate>=" the same one-sided
    (e <= 1: the calibrated rates where the simulator already prices the all-gather at or above
    its measured time, as the latency fit keeps the 8 B latency there).
Each with the p-rank cpu calibration (validate_local.simulate_cpu "p-rank", shown as "p"); the
ratio is the median over the rounds of simulated / measured.
  split_fits.py BUILD RUN_DIR  (RUN_DIR: one of run 22's tcp-1m, shm-1m, tcp, shm)"""
import argparse
import importlib.util
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "vl", os.path.join(HERE, "..", "..", "sim", "validate_local.py"))
vl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(vl)

captured = {}
vl.score = lambda a, rounds, *rest: captured.update(rounds=rounds)  # the parsed rounds only
a = argparse.Namespace(rescore=sys.argv[2], cores=0, build=sys.argv[1])
vl.rescore(a)
rounds = captured["rounds"]


def ratios(key):
    t, _, p, s = key
    out = {"p": [], "call": [], "rate": [], "rate>=": [], "e": []}
    for r in rounds:
        us = r["points"][key][0]
        x = vl.cpu_round(a, r, key, "p-rank")  # the "cpu, p-rank" column's calibration
        ran, alpha, rate, core, red = x["ran"], x["alpha"], x["rate"], x["core"], x["red"]
        ag = r["calib"][t]["allgather_us"][f"{p}:{s}"]

        def sim(e, coll, schedule):
            params = vl.params_line(t, alpha, e * rate / 1e3, red, a.cores)
            return vl.simulate(a.build, t, p, s, params, schedule, a.cores, e * core / 1e3,
                               coll=coll)[2]
        ar1, ag1 = sim(1, "allreduce", ran), sim(1, "allgather", "ring")
        lo, hi = 0.05, 4.0
        for _ in range(14):
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if sim(mid, "allgather", "ring") < ag else (mid, hi)
        e = math.sqrt(lo * hi)
        are = sim(e, "allreduce", ran)
        out["p"].append(ar1 / us)
        out["call"].append((ar1 + ag - ag1) / us)
        out["rate"].append(are / us)
        out["rate>="].append((are if e < 1 else ar1) / us)
        out["e"].append(e)
    return {k: vl.median(v) for k, v in out.items()}


passed = {}
for key in rounds[0]["points"]:
    res = ratios(key)
    print(" ".join(map(str, key)), " ".join(f"{k}={v:.2f}" for k, v in res.items()), flush=True)
    for k in ("p", "call", "rate", "rate>="):
        passed[k] = passed.get(k, 0) + (abs(res[k] - 1) <= 0.25)
print("within 25%:", ", ".join(f"{k} {v} of {len(rounds[0]['points'])}" for k, v in passed.items()))
