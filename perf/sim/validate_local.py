#!/usr/bin/env python3
"""Simulator vs loom on this machine: does the flow simulator, with calibrated parameters,
predict loom's own shm and tcp all-reduce times within 25%?

Each of --rounds rounds (each under /tmp/loom-measure.lock, flock, on its own: a round stays well
under the 6 minutes a locked command may take) measures, per transport (shm, tcp loopback):
  1. the calibration, on 2 ranks, per size: the transfer rate of one flow (sendrecv_perf: both
     ranks send and receive S at once, no reduction), the per-message latency (sendrecv at 8 B)
     and one core's reduction and copy rates at that size (membw_perf: loom-red, memcpy; the
     size's own working set, so in or out of cache as the all-reduce of that size);
  2. all_reduce_perf for 2, 4, 8 ranks at 1, 4, 16, 64 MiB (float32 sum, out of place), with the
     ring forced and with the planner's choice, LOOM_PLAN_PARAMS = the calibrated parameters of
     that size, so loom and loom-plan make the same decision (with the message latency as
     waiting, not CPU work of the shared cores: --alpha-cpu, 0 since run 26).
  3. sendrecv_perf on each validated rank count above --cores (every rank sends S to the next
     and receives S from the one before, no reduction): how much slower the transfers get when
     more processes than cores take turns (oversubscription), beyond the max-min share of the
     cores that the model gives them.
Every quantity is the median over the rounds. Then, calibrated once (the medians), it simulates
each point with `loom-plan --simulate --sim-always --sim-cores N`: the ranks are processes sharing
N cores max-min (sim::SimOptions::computeShared): a byte sent or received costs a core
1 / (2 x the flow rate), a byte reduced on receipt 1 / the reduction rate, and a pair of ranks moves
at most the flow rate; it prints measured and simulated times with the ratio, PASS when within
--tolerance (25%). A second column simulates with the oversubscription calibration (3.): on p
ranks above the cores, a core moves f x as many bytes per second, f = the model's time for the
p-rank sendrecv (p / cores x the 2-rank transfer time) over the measured one (the reductions keep
their rate; loom-plan --sim-core-gbps). A third column calibrates point by point: right after
each validated all-reduce, in the same round, sendrecv_perf --msg-bytes moves the same S in
messages of the size the schedule loom just ran sends (message_bytes: a ring's or tree's chunk,
Rabenseifner's halves, recursive doubling's whole vector), on 2 ranks (the flow rate); above the
cores f is that round's (3.). That round's all-reduce is simulated with it, and the ratio is the
median over the rounds of simulated / measured. Loopback TCP moves a 16 MiB message much slower
than a stream of 2 MiB ones (socket buffers), and the machine drifts between rounds: both hit the
calibration and the point alike. A fourth column ("cpu") calibrates
each cost by what it is (simulate_cpu): a core's cost per byte from the CPU time (the drivers'
cpu_us) the same chunked sendrecv spent, not its wall time; above the cores, from the p-rank
sendrecv of the same messages (not the wall-time f: a core that sits idle while its ranks wait on
each other is not a dearer byte, and the schedule's own waits are the simulator's to find); the
per-message latency from the p-rank sendrecv of 8 B; over tcp, the reduction rate at one
message's working set (tcp reduces each message as it arrives, from the staging buffer its receive
just filled). A fifth ("cpu, p-rank") takes, above the cores, a core's cost per byte from the
p-rank sendrecv of the same messages; a sixth ("cpu, lock-step") from the p-rank sendrecv of the
same messages in lock-step (each message done before the next, as a schedule's steps), and the
per-message latency from the time its cores sat idle per message (simulate_cpu). A seventh
("cpu, all-gather") is the p-rank one with the per-message latency fitted, on every rank count,
so that the simulator prices the ring all-gather of the same S on the same ranks (measured right
after each point) at its measured time: a ring of steps that wait for each other inside one call,
as the all-reduce's do, but a different collective from the one validated (fit_alpha). An
eighth ("cpu, all-gather at the smallest size") fits that latency only at the smallest size the
run measured on those ranks, where the all-gather is the most latency-bound, and uses it at every
size. A ninth ("cpu, + reduce-scatter") is the seventh with the reduction rate fitted too, so
that the simulator prices the ring reduce-scatter of the same S on the same ranks (measured right
after the all-gather) at its measured time (fit_reduce). A tenth ("cpu, all-gather, cheaper
core", since run 29) is the seventh with, above the cores, a core's cost per byte from whichever
of the fifth's and sixth's sendrecvs spent less CPU time per byte (simulate_cpu). An eleventh
("cpu, all-gather, pair-ring footprint", since run 32) takes the tenth's cheaper core over shm
only where the schedule writes about as much of its pair rings as the lock-step sendrecv does
(ring_footprint), else the seventh's. Later ones (pairwise, own all-gather, own halves, tcp
reduction by CPU and its capped form: runs 40-43) change the tenth for Rabenseifner above the cores, or over tcp the
price of a reduction (simulate_cpu lists each).
Since run 36 (2026-12-03) membw_perf also measures the in-place reduction (dst = dst + x) and the
CPU columns price every reduction whose local operand is its destination at that rate
(loom-plan --sim-reduce-ip-gbps: an out-of-place Rabenseifner's steps after its first), and
simulate the in-place call too (--sim-in-place), against the drivers' in-place time
(inplace_text).
Since session 22 (2026-12-03) the CPU columns also hold an shm pair's handoff longer while its
receiver reduces out of the ring (loom-plan --sim-pair-copy-gbps, membw_perf's memcpy at the
same working set): such a byte costs the pair 1 / the reduction rate - 1 / the memcpy rate more
than a copied one (the 2-rank sendrecv that gives the pair's rate copies on both sides). On 2
ranks, where the pair and not the shared cores is the limit, this is what a reduce-scatter step
adds over an all-gather step; above the cores it changes little. --pair-copy 0 leaves it out (the
model of runs 26-37).
Since session 28 (2026-12-04) a last column ("..., shm reductions at the host's working set",
cpu_gw) is the ring-core one with, over shm, every reduction priced at membw_perf's rate for the
working set of all the host's ranks, which share its last-level cache (host_set_bytes), rather
than one rank's: chosen after an in-sample rescore of runs 44-52
(perf/results/2026-12-04-vm-host-footprint), so first scored held out in the run after.
Since session 29 (2026-12-04) the last column ("..., shm Rabenseifner's reductions from its
reduce-scatter", cpu_gx) is the host-set one with, over shm above the cores, a Rabenseifner's
reduction rate fitted to loom's recursive-halving reduce-scatter measured beside the point but
never below membw_perf's rate out of memory (SHM_HALVES): in sample on runs 44-56
(perf/results/2026-12-04-vm-shm-halves), where a tcp flow rate fitted to the ring all-gather,
tried beside it, gained 2 points and lost 2 and was dropped. After run 58 one more column
("..., latency no larger than at the smallest size", cpu_gz, LATENCY_CAP): the shm-halves one
with, on ranks within the cores, the fitted latency capped at the one fitted at the round's
smallest size on those ranks (in sample on runs 44-58, perf/results/2026-12-04-vm-latency-cap).
After run 60 (session 30, 2026-12-05) one more ("..., tcp flow rate from the all-gather", cpu_gy,
FLOW_RATE): the latency-cap one with, over tcp on ranks within the cores, one flow's rate fitted
to the ring all-gather where the least latency and the fitted core still price it slower (the
change dropped in session 29, now that the drivers pin 2 ranks: in sample on runs 52-60,
perf/results/2026-12-05-vm-tcp-flow-pinned). After run 63 (session 31) one more ("..., shm
ring's reductions from its reduce-scatter", cpu_gq, SHM_RING_RED): the flow-rate one with, over
shm above the cores, the ring's reduction rate fitted to the ring reduce-scatter measured beside
the point, floored at membw_perf's rate out of memory (in sample on runs 52-63,
perf/results/2026-12-05-vm-shm-ring-reductions). And one more ("..., that latency cap for
pairwise schedules above the cores too", cpu_gu, PAIRWISE_CAP): that one with the latency cap
also above the cores for Rabenseifner (same in-sample directory). During run 65 one more
("..., local copies at membw's memcpy rate", cpu_gd, COPY_MEMCPY): that one with the validated
schedule's local copies (recursive doubling's) priced at membw_perf's memcpy rate (in sample on
runs 48-64, perf/results/2026-12-05-vm-rd-copy). During run 68 (session 32) one more ("..., shm
flow rate from the ring reduce-scatter within the cores", cpu_gs, SHM_RS_RATE; in sample on runs
52-66, perf/results/2026-12-05-vm-shm-rs-rate), and during run 72 (session 33) one more ("...,
host set with the rings, rounded up", cpu_ge, HOST_SET_UP): that one with the host's shm working
set counting the pair rings and priced at the smallest swept membw size that holds it (in sample
on runs 52-71, perf/results/2026-12-05-vm-host-set-up), and after run 72 that column only above
the cores ("..., that only above the cores", cpu_gb, HOST_SET_UP_ABOVE: same directory).
During run 78 (session 34) one more ("..., tcp ring's reductions from its reduce-scatter above
the cores", cpu_gv, TCP_RING_RED): that one with, over tcp above the cores, the ring's reductions
fitted to the ring reduce-scatter beside the point (in sample on the tcp parts of runs 68-73 and
78, perf/results/2026-12-05-vm-tcp-ring-red).
The summary also counts single rounds (rounds_text): how many lie within the tolerance of their
point's median (the measurement's own spread), and per CPU column how many rounds' own
simulated / measured do; and states the repeatability (repeat_text): where the planner ran the
very schedule of the forced ring beside it (always on 2 ranks), the two medians measure one thing
twice, and their ratio is how far the measurement agrees with itself
(perf/sim/repeatability.py gathers it over runs).

  perf/sim/validate_local.py --build build --rescore perf/results/<run>/tcp
simulates an earlier run's points.json again (all columns, nothing measured) into
summary-rescored.md and points-rescored.json beside it; with --first-rounds N only its first N
rounds, into summary-first-N.md and points-first-N.json (a run measured with more rounds than
earlier ones, scored as they would have scored it).

  perf/sim/validate_local.py --build build --out perf/results/<date>-<host>-sim-vs-loom
"""
import argparse
import fcntl
import json
import math
import os
import platform
import re
import subprocess
import sys
import time

MIB = 1 << 20


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


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


def human_msg(b):
    """Message size rounded to KiB: 349525 -> '341 KiB'."""
    return human(b) if b % 1024 == 0 or b < 1024 else f"{round(b / 1024)} KiB"


def iters_for(size, floor, moved, cap=400):
    """Timed iterations at `size`: at least `floor`, and enough that about `moved` bytes pass
    (1 MiB runs a few hundred microseconds: ten of them are noise), at most `cap`."""
    return max(floor, min(cap, moved // max(1, size)))


def calib_iters(a, sizes):
    """Timed iterations of the calibration runs (sendrecv_perf) per size: about --calib-moved
    bytes, at most 2000. A 2-rank sendrecv of 1 MiB takes ~0.2 ms: at the all-reduce's 256
    iterations a run lasted 50 ms and one scheduler hiccup moved it by 20% (run 11: the same
    calibration 197 us in one round, 235-237 in the two others)."""
    return {s: iters_for(s, a.iters, a.calib_moved, 2000) for s in sizes}


LATENCY_ITERS = 2000  # the 8 B sendrecv: 200 iterations on 8 ranks lasted ~3 ms


# The hypervisor's steal time (/proc/stat, as the drivers' JSON steal_pct reports it for each
# timed loop): on a VM whose host runs other guests, a run whose vCPUs waited for the host measured
# the neighbours as much as loom (2026-12-02 08:00 UTC, 63 runs of two 4-8 rank shm all-reduces:
# time and steal correlate 0.5-0.6; runs with steal >= 2% were 13-18% slower than those under 1%).
# A driver run whose timed loops lost more than STEAL["max"] percent runs again, up to
# STEAL["retries"] more times, and the try with the least steal is kept (main: --max-steal,
# --steal-retries). Every run's tries land in STEAL["log"] (measure_round keeps a round's).
# Before each retry it waits STEAL["wait"] seconds, doubling: on VM C the steal is not random but
# comes after minutes of both vCPUs busy (run 18, 2026-12-02 07:40-08:15 UTC: in each of three
# tcp rounds, 0-1% until the 8-rank 16 and 64 MiB sendrecvs, then 20-56% for the next 8-10 runs,
# about 2 minutes, then back under 2%), as a host that caps the guest's CPU time would; retrying
# at once ran into the same cap.
STEAL = {"max": 2.0, "retries": 3, "wait": 15.0, "log": []}


def driver_times(build, driver, ranks, transport, lo, hi, iters, extra=(), env=None, log=None,
                 cpu=None, steal=None, inplace=None):
    """{size: out-of-place time in us} from a perf driver's -J output (`log`: list that gets the
    driver's output; `cpu`: dict that gets {size: all ranks' CPU time per iteration in us}, the
    JSON's cpu_us; `steal`: dict that gets {size: steal_pct}; `inplace`: dict that gets {size:
    the in-place time in us}, the driver's second column, where it has one). Warm-up: a tenth of
    the timed iterations, at least 3. Re-run while the steal of any size's timed loop exceeds
    STEAL["max"] (at most STEAL["retries"] more times); the try with the least steal is kept."""
    jfile = f"/tmp/validate_local_{os.getpid()}.jsonl"
    cmd = [os.path.join(build, "perf", driver), "--ranks", str(ranks), "-b", str(lo), "-e", str(hi),
           "-f", "4", "-n", str(iters), "-w", str(max(3, iters // 10)), "-J", jfile, *extra]
    e = {"LOOM_TRANSPORT": transport}
    e.update(env or {})
    best, tries = None, []
    for i in range(1 + STEAL["retries"]):
        if i:
            time.sleep(STEAL["wait"] * 2 ** (i - 1))
        if os.path.exists(jfile):
            os.remove(jfile)
        txt = run(cmd, env=e)
        rows, ips = {}, {}
        with open(jfile) as f:
            for line in f:
                r = json.loads(line)
                rows[r["size"]] = r["oop"]
                if (r.get("ip") or {}).get("time_us") is not None:
                    ips[r["size"]] = r["ip"]["time_us"]
        os.remove(jfile)
        # Drivers built before steal_pct reported none, and -1 is unknown: 0, nothing to re-run.
        stolen = {s: max(0.0, o.get("steal_pct", 0.0)) for s, o in rows.items()}
        worst = max(stolen.values())
        tries.append(round(worst, 2))
        if best is None or worst < best[0]:
            best = (worst, txt, rows, stolen, ips)
        if worst <= STEAL["max"]:
            break
    STEAL["log"].append({"run": f"{driver} {ranks} {transport} {lo}-{hi} {' '.join(extra)}".strip(),
                         "steal_pct": tries})
    _, txt, rows, stolen, ips = best
    if log is not None:
        log.append(txt)
    if cpu is not None:
        cpu.update({s: o["cpu_us"] for s, o in rows.items()})
    if steal is not None:
        steal.update(stolen)
    if inplace is not None:
        inplace.update(ips)
    return {s: o["time_us"] for s, o in rows.items()}


def membw(build, sizes, ranks=(2,)):
    """{size: (memcpy GB/s, loom reduce GB/s, loom reduce in place GB/s)} on one core
    (membw_perf: dst = a + b, and dst = dst + b; runs before run 36, 2026-12-03, have no in-place
    rate). The sweep reaches the host-set column's largest working set too (host_set_bytes of the
    most ranks at the largest size, up to 256 MiB; since run 53, which swept only to twice the
    largest size and so priced its 8-rank 4 MiB points at 8 MiB's rate)."""
    hi = max(max(sizes) * 2, min(host_set_bytes(max(ranks), max(sizes)), 256 << 20))
    hi = 1 << math.ceil(math.log2(hi))
    txt = run([os.path.join(build, "perf", "membw_perf"), "-b", str(min(sizes) // 4), "-e",
               str(hi), "-f", "2", "-n", "10", "-w", "2"])
    out = {}
    for line in txt.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = line.split()
        out[int(cols[0])] = (float(cols[2]), float(cols[6]), float(cols[8]))
    return out


def calibrate_round(build, transport, sizes, iters, ranks, cores):
    """One round's raw calibration of `transport`: latency (us, sendrecv of 8 B) on 2 ranks and
    on each of `ranks`; sendrecv time and CPU time per size (us) on 2 ranks, and on each of
    `ranks` above `cores`. `iters`: size -> timed iterations (one driver run per size, each with
    its own warm-up)."""
    alpha_p = {p: driver_times(build, "sendrecv_perf", p, transport, 8, 8, LATENCY_ITERS)[8]
               for p in sorted(set(ranks) | {2})}
    cpu, cpu_p = {}, {}
    t = {s: driver_times(build, "sendrecv_perf", 2, transport, s, s, iters[s], cpu=cpu)[s]
         for s in sizes}
    over = {}
    for p in (q for q in ranks if q > cores):
        cpu_p[p] = {}
        over[p] = {s: driver_times(build, "sendrecv_perf", p, transport, s, s, iters[s],
                                   cpu=cpu_p[p])[s] for s in sizes}
    # Filled point by point (measure_round): sendrecv of S in messages of m, "p:S:m" -> us, and
    # its CPU time.
    return {"alpha_us": alpha_p[2], "alpha_p_us": alpha_p, "sendrecv_us": t, "sendrecv_p_us": over,
            "sendrecv_cpu_us": cpu, "sendrecv_p_cpu_us": cpu_p, "chunked_us": {},
            "chunked_cpu_us": {}, "lockstep_us": {}, "lockstep_cpu_us": {}, "pairwise_us": {},
            "pairwise_cpu_us": {}, "allgather_us": {}, "allgather_cpu_us": {},
            "allgather_rd_us": {}, "allgather_rd_cpu_us": {}, "reducescatter_us": {},
            "reducescatter_cpu_us": {}, "reducescatter_halving_us": {},
            "reducescatter_halving_cpu_us": {}}


def message_bytes(decision, size, ranks):
    """Bytes-weighted mean size of the messages the schedule of `decision` (loom-plan's
    describe(): "ring(order=rank,chunk=2 MiB)") sends on `ranks` ranks for an all-reduce of `size`
    bytes: what a flow's rate depends on over loopback TCP (a message that fits the socket buffers
    moves faster than one the sender must wait to drain). ring: segments of size / p cut into
    chunks; tree: each half cut into chunks; Rabenseifner: size / 2, size / 4, ... size / p';
    recursive doubling: the whole vector; others (one-host hier, direct): size / p."""
    name = decision.split("(")[0]
    chunk = size
    if "chunk=" in decision:
        num, unit = decision.split("chunk=")[1].split(")")[0].split(",")[0].split()
        chunk = int(float(num) * {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}[unit])
    if name == "ring":
        loops = -(-size // (chunk * ranks))
        return max(1, size // (loops * ranks))
    if name == "tree":
        chunks = -(-size // (2 * chunk))
        return max(1, size // (2 * chunks))
    if name == "rabenseifner":
        steps, q = [], 2
        while q <= ranks:
            steps.append(size // q)
            q *= 2
        return max(1, sum(x * x for x in steps) // max(1, sum(steps)))
    if name == "rd":
        return size
    return max(1, size // ranks)


# Schedules whose every step exchanges with one partner both ways (loom-plan's describe() names).
PAIRWISE = ("rabenseifner", "rd")


def part_dirs(dirs, name="points.json"):
    """The validate_local results directories among `dirs`: each one holding `name` itself, or a
    run's directory whose parts (tcp-1m, shm-1m, tcp, shm) hold one each."""
    out = []
    for d in dirs:
        if os.path.exists(os.path.join(d, name)):
            out.append(d)
        elif os.path.isdir(d):
            out += sorted(os.path.join(d, x) for x in os.listdir(d)
                          if os.path.exists(os.path.join(d, x, name)))
    return out


def is_pairwise(ran):
    """Whether the schedule `ran` (describe(): "rabenseifner(order=rank)") is PAIRWISE."""
    return ran.split("(")[0] in PAIRWISE


def calibrate_point(a, transport, ranks, size, msg, iters, calib, params, ran=""):
    """The chunked calibration of one validated point, run right after it: sendrecv of `size` in
    messages of `msg` bytes on 2 ranks (sendrecv_perf --msg-bytes: the bytes and messages of the
    schedule's transfers, in and out of cache as they are), and on `ranks` when they are more
    than the cores (the cpu column takes a core's cost per byte there from its CPU time). Kept in
    calib["chunked_us"] and calib["chunked_cpu_us"] under "p:size:msg" (once per round). (A first
    version took the wall-time f from the p-rank one: at 1 MiB on 4-8 ranks over tcp that f
    counted every small message's wake-ups among p processes and the simulation came out
    1.25-1.45x slow; the 1-message p-rank sendrecv gives f.) Above the cores, also the p-rank
    sendrecv of the same messages in lock-step (--lockstep 1: each message sent and received
    before the next is posted, as a schedule's steps wait for the step before), in
    calib["lockstep_us"] and calib["lockstep_cpu_us"] under the same key. And on `ranks`, the
    ring all-gather of `size` bytes in all (all_gather_perf -a ring, LOOM_PLAN_PARAMS=`params`,
    the point's own: the same chunks): p - 1 steps, each sending to the next rank what the step
    before received, all in one call, as a ring all-reduce's steps go; in calib["allgather_us"]
    and calib["allgather_cpu_us"] under "p:size" (the "cpu, all-gather" column fits the
    per-message latency to it, simulate_cpu). Then the ring reduce-scatter of the same `size`
    (reduce_scatter_perf -a ring, the same parameters): the same p - 1 steps and messages, each
    reducing what it receives into the rank's own block, in calib["reducescatter_us"] and
    calib["reducescatter_cpu_us"] (the "cpu, + reduce-scatter" column fits the reduction rate to
    it). Over tcp above the cores, where the schedule `ran` exchanges with one partner per step
    (PAIRWISE), also the p-rank sendrecv of the same messages with that pattern (--pairwise 1:
    each rank with rank ^ 1), in calib["pairwise_us"] and calib["pairwise_cpu_us"] under
    "p:size:msg" (the "pairwise" column's core). And above the cores, where `ran` is PAIRWISE,
    loom's recursive-doubling all-gather of `size` (all_gather_perf -a rd: Rabenseifner's
    all-gather half, the same partners and message sizes), in calib["allgather_rd_us"] and
    calib["allgather_rd_cpu_us"] under "p:size" (the "own all-gather" column fits a core's cost
    per byte to it), and loom's recursive-halving reduce-scatter of the same `size`
    (reduce_scatter_perf -a halving: its reduce-scatter half), in
    calib["reducescatter_halving_us"] and calib["reducescatter_halving_cpu_us"] (the "own
    halves" column fits the reduction rate to it)."""
    def timed(name, key, driver, p, extra, env=None):
        # calib[name_us][key] and calib[name_cpu_us][key], once per round.
        if key not in calib[f"{name}_us"]:
            cpu = {}
            calib[f"{name}_us"][key] = driver_times(a.build, driver, p, transport, size, size,
                                                    iters, extra, env, cpu=cpu)[size]
            calib[f"{name}_cpu_us"][key] = cpu[size]

    plan_env = {"LOOM_PLAN_PARAMS": params}
    kg, km = f"{ranks}:{size}", f"{ranks}:{size}:{msg}"
    timed("allgather", kg, "all_gather_perf", ranks, ["-a", "ring"], plan_env)
    timed("reducescatter", kg, "reduce_scatter_perf", ranks, ["-a", "ring"], plan_env)
    for p in [2] + ([ranks] if ranks > a.cores else []):
        timed("chunked", f"{p}:{size}:{msg}", "sendrecv_perf", p, ["--msg-bytes", str(msg)])
        if p > a.cores:
            timed("lockstep", f"{p}:{size}:{msg}", "sendrecv_perf", p,
                  ["--msg-bytes", str(msg), "--lockstep", "1"])
    if ranks > a.cores and is_pairwise(ran):
        timed("allgather_rd", kg, "all_gather_perf", ranks, ["-a", "rd"], plan_env)
        timed("reducescatter_halving", kg, "reduce_scatter_perf", ranks, ["-a", "halving"],
              plan_env)
        if transport == "tcp" and ranks % 2 == 0:
            timed("pairwise", km, "sendrecv_perf", ranks,
                  ["--msg-bytes", str(msg), "--pairwise", "1"])


def oversub_factor(alpha, t2, tp, p, cores):
    """f: how many times the bytes per second a core moves on p ranks, against the model's share.
    The model's p-rank sendrecv (each rank moves S out and S in through the shared cores) takes
    p / cores x the 2-rank transfer time; measured it takes tp - alpha."""
    return (p / cores) * max(1e-3, t2 - alpha) / max(1e-3, tp - alpha)


# The fraction of a message's latency the cost model counts as CPU work of the shared cores
# (CostParams shmAlphaCpu / tcpAlphaCpu), in the parameters loom runs the planner's points with and
# loom-plan prices: --alpha-cpu, stored in points.json as "alpha_cpu"; runs before run 26
# (2026-12-03) used the model's 1, and a re-score of them keeps it.
ALPHA_CPU = {"value": 0.0}


def params_line(transport, alpha, gbps, red, cores):
    """CostParams text: one flow's latency and rate, one core's reduction rate, the cores (and the
    CPU share of the latency, ALPHA_CPU, where it is not the model's default 1)."""
    pre = "shm" if transport == "shm" else "tcp"
    share = ALPHA_CPU["value"]
    # hostMemGBps: not the limit here (the cores are, `cores`); reduce: one core, per size.
    return (f"{pre}AlphaUs={alpha:.3f},{pre}GBps={gbps:.4f},hostMemGBps=1000,"
            f"reduceGBps={red:.4f},cores={cores}" +
            (f",{pre}AlphaCpu={share:g}" if share != 1 else ""))


def params_of(transport, alpha, sendrecv_us, red, cores):
    """Per size CostParams text from (median) calibration numbers."""
    return {s: params_line(transport, alpha, s / max(1e-3, us - alpha) / 1e3, red[s], cores)
            for s, us in sendrecv_us.items()}


def plan_args(transport, ranks):
    if transport == "shm":
        return ["--hosts", "1", "--ranks-per-host", str(ranks)]
    return ["--hosts", str(ranks), "--ranks-per-host", "1", "--transport", "tcp"]


def simulate(build, transport, ranks, size, params, algo, cores, core_gbps=0.0, coll="allreduce",
             red_ip=0.0, inplace=False, pair_copy=0.0, copy_gbps=0.0):
    """(decision, model us, simulated us) of loom-plan --simulate for one point (core_gbps > 0:
    --sim-core-gbps) of collective `coll` (loom-plan --coll); red_ip > 0: the in-place reduction
    rate (--sim-reduce-ip-gbps); inplace: the in-place call (--sim-in-place); pair_copy > 0: the
    memcpy rate a reduction out of an shm pair ring is held against (--sim-pair-copy-gbps);
    copy_gbps > 0: a local copy step's rate (--sim-copy-gbps; else the core's transfer rate)."""
    cmd = [os.path.join(build, "tools", "loom-plan", "loom-plan"), *plan_args(transport, ranks),
           "--params", params, "--simulate", "--sim-always", "--sim-cores", str(cores),
           "--min", str(size), "--max", str(size), "--coll", coll]
    if core_gbps > 0:
        cmd += ["--sim-core-gbps", f"{core_gbps:.4f}"]
    if red_ip > 0:
        cmd += ["--sim-reduce-ip-gbps", f"{red_ip:.4f}"]
    if inplace:
        cmd += ["--sim-in-place"]
    if pair_copy > 0:
        cmd += ["--sim-pair-copy-gbps", f"{pair_copy:.4f}"]
    if copy_gbps > 0:
        cmd += ["--sim-copy-gbps", f"{copy_gbps:.4f}"]
    if algo != "planner":
        cmd += ["--algo", f"{coll}:{algo.split('(')[0]}"]
    for line in run(cmd).splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 5 or line.startswith("#") or parts[0] in ("", "size"):
            continue
        model = parts[1].rsplit(None, 1)
        # The model's choice is what loom runs (same parameters): its simulated time.
        return model[0], float(model[1]), float(parts[2])
    sys.exit(f"validate_local: no row in loom-plan output for {transport} {ranks} {size}")


def measure_round(a, transports, ranks, sizes, algos):
    """One round under the lock: membw, calibration and every all-reduce point."""
    lock = open(a.lock, "w") if a.lock else None  # "": the caller holds it (flock(1))
    if lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
    iters = {s: iters_for(s, a.iters, a.moved) for s in sizes}
    citers = calib_iters(a, sizes)
    STEAL["log"] = []
    try:
        r = {"started": time.strftime("%H:%M:%S", time.gmtime()),
             "membw": membw(a.build, sizes, ranks),
             "calib": {t: calibrate_round(a.build, t, sizes, citers, ranks, a.cores)
                       for t in transports},
             "points": {}, "point_steal": {}, "point_ip": {}}
        red = {s: r["membw"][s][1] for s in sizes}
        for t in transports:
            # The planner's parameters for this round's loom runs: this round's calibration.
            params = params_of(t, r["calib"][t]["alpha_us"], r["calib"][t]["sendrecv_us"], red,
                               a.cores)
            # One all-reduce run of the first point, discarded: the first run after the
            # calibration measured slow (runs 22-26: the forced 2-rank shm ring at 1 MiB took
            # 1.06-1.25x the planner's run of the same schedule beside it; alternated, 2026-12-03
            # 03:10 UTC, the two were equal).
            first = [] if algos[0] == "planner" else ["-a", algos[0]]
            driver_times(a.build, "all_reduce_perf", ranks[0], t, sizes[0], sizes[0],
                         iters[sizes[0]], first, {"LOOM_PLAN_PARAMS": params[sizes[0]]})
            r["warmup_run"] = True
            for p in ranks:
                for algo in algos:
                    for s in sizes:
                        extra = [] if algo == "planner" else ["-a", algo]
                        env = {"LOOM_PLAN_PARAMS": params[s], "LOOM_DEBUG": "INFO",
                               "LOOM_DEBUG_SUBSYS": "PLAN"}
                        log, steal, ip = [], {}, {}
                        us = driver_times(a.build, "all_reduce_perf", p, t, s, s, iters[s], extra,
                                          env, log, steal=steal, inplace=ip)[s]
                        ran = loom_decision(log[0])
                        r["points"][(t, algo, p, s)] = (us, ran)
                        r["point_steal"][(t, algo, p, s)] = steal[s]
                        if s in ip:
                            r["point_ip"][(t, algo, p, s)] = ip[s]
                        sched = algo if ran == "?" else ran
                        calibrate_point(a, t, p, s, message_bytes(sched, s, p), citers[s],
                                        r["calib"][t], params[s], sched)
        r["ended"] = time.strftime("%H:%M:%S", time.gmtime())
        r["steal_runs"] = STEAL["log"]
        return r
    finally:
        if lock:
            fcntl.flock(lock, fcntl.LOCK_UN)


def simulate_by_message(a, rounds, key):
    """Per round: the schedule loom ran at this point, simulated with the calibration measured
    right after it (calibrate_point): a flow's rate from the 2-rank sendrecv of the same bytes in
    messages of the schedule's size, and above the cores that round's oversubscription factor f
    (oversub_factor: p-rank against 2-rank sendrecv of S in one message). The ratio is the median over the rounds of simulated /
    measured in the same round, so a drift of the machine between rounds hits both alike."""
    t, algo, p, s = key
    ratios, sims, msgs, same = [], [], [], True
    for r in rounds:
        us, ran = r["points"][key]
        c = r["calib"][t]
        if ran == "?":
            ran = algo
        m = message_bytes(ran, s, p)
        t2 = c["chunked_us"][f"2:{s}:{m}"]
        rate = s / max(1e-3, t2 - c["alpha_us"])  # bytes/us
        params = params_line(t, c["alpha_us"], rate / 1e3, r["membw"][s][1], a.cores)
        core_gbps = 0.0
        if p > a.cores:
            f = oversub_factor(c["alpha_us"], c["sendrecv_us"][s], c["sendrecv_p_us"][p][s], p,
                               a.cores)
            core_gbps = 2 * rate / 1e3 * f
        dec, _, sim_us = simulate(a.build, t, p, s, params, ran, a.cores, core_gbps)
        same = same and dec == ran
        ratios.append(sim_us / us)
        sims.append(sim_us)
        msgs.append(m)
    return {"bytes": median(msgs), "sim_us": median(sims), "ratio": median(ratios), "same": same}


def reduce_at(membw, m, col=1):
    """One core's reduction rate (GB/s) at the working set of one message of m bytes: membw_perf's
    loom-red (col 2: in place) at the swept size nearest m (log scale). loom's tcp reduces each
    message as it arrives, from the staging buffer its receive just filled, so the data it reads
    is a message's worth in this core's cache, not the whole vector."""
    return membw[min(membw, key=lambda x: abs(math.log2(x / max(1, m))))][col]


# The "host set" column's `above`: the ring-core column, but over shm every reduction priced at
# membw_perf's rate for the working set of all the host's ranks (host_set_bytes), not one rank's.
# Added 2026-12-04 after an in-sample rescore of runs 44-52
# (perf/results/2026-12-04-vm-host-footprint): first scored held out in the run after.
HOST_SET = "all-gather, own all-gather, receipt, capped, ring core, host set"

# The "shm halves" column's `above`: the host-set column, but over shm, above the cores, for a
# PAIRWISE schedule (Rabenseifner), the reduction rate fitted to loom's recursive-halving
# reduce-scatter measured beside the point (as the own-halves column does), never below
# membw_perf's rate out of memory. In sample on runs 44-56 (perf/results/2026-12-04-vm-shm-halves):
# the 4-rank shm Rabenseifner at 4 MiB, priced 0.70-0.80 by the host-set column on VM F, 0.78-0.98;
# the own-halves column, unfloored, priced the 64 MiB ones 1.85-2.11. First scored held out in
# the run after.
SHM_HALVES = HOST_SET + ", shm halves"

# The "latency cap" column's `above`: the shm-halves column, but on ranks within the cores the
# latency fitted to the ring all-gather at a size no larger than the one fitted at the smallest
# size of the round on those ranks. A latency does not grow with the message: what the all-gather
# costs beyond the model at a larger size is bandwidth (VM F, runs 48-57, shm on 2 ranks at
# 64 MiB: the all-gather of 32 MiB each way took 4.4-9.1 ms, about the 2-rank sendrecv of all
# 64 MiB, and its fitted "latency" of 1.4-2.2 ms a message priced the 2-rank Rabenseifner there at
# 1.17-1.52). Above the cores the fitted latency also carries the scheduler's wake-ups, which do
# grow with the bytes, and is left as fitted. Added 2026-12-04 after run 58, in sample on runs
# 44-58 (perf/results/2026-12-04-vm-latency-cap); first scored held out in the run after.
LATENCY_CAP = SHM_HALVES + ", latency cap"

# The "tcp flow rate" column's `above`: the latency-cap column, but over tcp on ranks within the
# cores, where the ring all-gather measured beside the point still runs faster than the simulator
# prices it at the least latency and the core fitted to it (the flow, not a core, bounds it), one
# flow's rate fitted to that all-gather too (fit_rate). The flow rate comes from the 2-rank
# sendrecv of all of S in the schedule's messages at once, and over loopback TCP the bytes in
# flight set the rate: a ring step on 2 ranks has one message in flight (VM F, 2 ranks at 4 MiB:
# the sendrecv of 4 MiB each way in 2 MiB messages took ~1,100-1,250 us, the ring all-gather's
# one 2 MiB step ~360-640 us). Tried in sample on runs 44-56 (perf/results/2026-12-04-vm-shm-halves)
# it gained 2 points and lost 2, both lost in runs 50-51; since run 52 the forked drivers pin 2
# ranks to a core each (--bind auto, as mpirun --bind-to core does), and the 2-rank tcp ring at
# 4 MiB has run faster (780-1,000 us, against 1,100-1,500 before) while its sendrecv has not: of
# the pinned runs then stored (52, 55, 56) the rate fit moved every 2-rank 4 MiB point to
# 0.83-1.15. Added 2026-12-05 after run 60, in sample on runs 52-60
# (perf/results/2026-12-05-vm-tcp-flow-pinned); first scored held out in the run after.
FLOW_RATE = LATENCY_CAP + ", tcp flow rate"

# The "shm ring reductions" column's `above`: the flow-rate column, but over shm, above the cores,
# for a schedule that is not PAIRWISE (the ring), the reduction rate fitted to loom's ring
# reduce-scatter measured beside the point (fit_reduce), never dearer than membw_perf's rate out
# of memory nor cheaper than the host-set rate the column had: as the shm-halves column does for
# Rabenseifner. With more ranks than cores a ring step that reduces waits longer than one that
# copies (VM F, run 62, 4 ranks at 1 MiB: the ring reduce-scatter 79-177 us per round, the ring
# all-gather 76-135), and the ring all-reduce is half reduce-scatter, where the flow-rate column
# fitted nothing and priced the 4- and 8-rank shm rings at 1-4 MiB 0.68-0.88 in runs 61-63. The
# unfloored fit (the "+ reduce-scatter" column, cpu_gr) priced them 0.84-1.08 there but the ones
# at 64 MiB 1.96-2.27 (the reduce-scatter reduces into scratch partials out of cache). Added
# 2026-12-05 after run 63, in sample on runs 52-63 (perf/results/2026-12-05-vm-shm-ring-reductions);
# first scored held out in the run after.
SHM_RING_RED = FLOW_RATE + ", shm ring reductions"

# The "pairwise latency cap" column's `above`: the shm-ring-reductions column, but the latency cap
# also above the cores for a PAIRWISE schedule (Rabenseifner, recursive doubling): its latency no
# larger than the one fitted at the round's smallest size on those ranks (the ring's point there),
# and then its core fitted to its own recursive-doubling all-gather at that latency, as before.
# Rabenseifner sends few large messages, and the latency fitted to the ring all-gather at a large
# size carries what its many steps wait on the cores (VM F, run 61, 4 ranks over shm at 64 MiB:
# 0.8-3.5 ms per message; the shm Rabenseifner there priced 1.33). The ring keeps the latency as
# fitted. In sample on runs 52-63 (perf/results/2026-12-05-vm-shm-ring-reductions): the 4- and
# 8-rank shm Rabenseifner at 64 MiB from 1.03-1.33 to 1.00-1.15, the tcp ones within 0.03. Added
# 2026-12-05 after run 63; first scored held out in the run after.
PAIRWISE_CAP = SHM_RING_RED + ", pairwise latency cap"

# The "copies at memcpy" column's `above`: the pairwise-latency-cap column, but the validated
# schedule's local copies priced at membw_perf's memcpy rate at the vector's size, measured in the
# same round (loom-plan --sim-copy-gbps), not at the core's transfer rate, loom-plan's default;
# the fits to the all-gathers keep the default (their one copy stands in for a cost per call, see
# fit_alpha). Of the all-reduces validated only recursive doubling copies: its input into the
# output, all S, before its first exchange. The planner ran it on 2 tcp ranks at 1 MiB in some
# rounds of runs 48-64 on VM F, and there the default priced the copy at ~95 us (11 GB/s), a
# memcpy of 1 MiB ~18 us (59 GB/s): the simulator priced recursive doubling at 1.44x the
# planner's closed form at the same parameters (304 against 209 us; the ring 228 against 228),
# and its rounds at 1.1-1.95 of their measured time (run 64: the point 1.29 in every column).
# Added 2026-12-05 during run 65, in sample on runs 48-64
# (perf/results/2026-12-05-vm-rd-copy); first scored held out in run 67.
COPY_MEMCPY = PAIRWISE_CAP + ", copies at memcpy"

# The "shm rate from the reduce-scatter" column's `above`: the copies-at-memcpy column, but over shm
# on ranks within the cores, for the ring (and on 2 ranks for Rabenseifner, the same one exchange
# of halves there), where the ring reduce-scatter measured beside the point runs faster than the
# simulator prices it at the latency and core fitted to the ring all-gather, one flow's rate raised
# (fit_rate, to at most 4x) until it prices that reduce-scatter at its measured time. The flow rate
# comes from the 2-rank sendrecv of S in the schedule's messages, and the ring's steps move faster
# than it: VM F, runs 62-66, 2 ranks at 16 MiB, the reduce-scatter ran 621-1115 us against the
# all-gather's 722-1498 beside it (the all-gather also copies its own half), the simulator priced
# it 1.2-1.4x, and the all-reduce (no copy: a reduce-scatter then an all-gather) 1.18-1.29x, in
# every fitted column, the all-reduce at 0.85-0.9x the two halves measured. The all-gather stays
# priced as fitted: its core, not the flow, bounds it there. Added 2026-12-05 during run 68, in
# sample on runs 52-66 (perf/results/2026-12-05-vm-shm-rs-rate); first scored held out in the
# run after.
SHM_RS_RATE = COPY_MEMCPY + ", shm rate from reduce-scatter"

# The "host set rounded up" column's `above`: the shm-rate one, but over shm the host's working set
# (host_set_up_bytes) counts the pair rings too and is priced at the smallest swept membw size whose
# own working set (3n: dst, a, b) holds it, not the nearest on a log scale: a host set just past the
# cache's edge streams from memory. VM F's membw_perf is at its in-cache rate up to 4 MiB (12 MiB
# touched) and at its memory rate from 8 MiB (24 MiB touched) on a 32 MiB L3; the nearest size put
# 8 ranks at 1 MiB (16 MiB of buffers and 8 MiB of rings) and 2 ranks at 4 MiB (16 MiB and 2 MiB)
# in cache, and every fitted column priced both low in held-out runs 61-72 (the 8-rank shm points
# at 1 MiB at a median 0.82-0.84). Added 2026-12-05 (session 33) during run 72, in sample on runs
# 52-72 (perf/results/2026-12-05-vm-host-set-up); first scored held out in the run after.
HOST_SET_UP = SHM_RS_RATE + ", host set rounded up"

# The "host set rounded up above the cores" column's `above`: the host-set-up one, but on ranks
# within the cores the host set priced as before (the nearest size). There the shm-rate column
# fits one flow's rate to the ring reduce-scatter after the reductions are priced, so a dearer
# reduction only raises that rate, which the all-gather half then shares: in run 72 the 2-rank shm
# ring at 4 MiB went 0.96 -> 0.79 under the host-set-up column (the rate raised to its 4x cap in
# 2 of 5 rounds). Every point the host-set-up column gained in sample (runs 52-71) was on 4 or 8
# ranks. Added 2026-12-05 (session 33) after run 72, before anything of run 73 was read.
HOST_SET_UP_ABOVE = HOST_SET_UP + ", above the cores"

# The "tcp ring reductions" column's `above`: the host-set-up-above one, but over tcp above the
# cores, for a ring schedule (not a tree, nor a PAIRWISE one), the reduction rate fitted to loom's ring
# reduce-scatter measured beside the point, between membw_perf's rate out of memory and the
# receipt rate the column had (as the shm-ring-reductions one does over shm). Over runs 61-78 the
# 4-8 rank tcp rings were the only tcp points every fitted column priced systematically low (the
# 8-rank ring at 1 MiB at a median 0.78, run 73 0.76; the 4-rank ring at 4 MiB 0.80), where the
# ring reduce-scatter beside the point ran slower than the receipt rate priced it. In sample on
# the tcp parts of runs 68-73 and run 78's tcp 1 MiB (perf/results/2026-12-05-vm-tcp-ring-red): every
# 4-8 rank tcp ring point 0.02-0.09 higher (the 8-rank ring at 1 MiB 0.76-0.80 -> 0.80-0.86),
# no other point moved, no point lost. Added 2026-12-05 (session 34) during run 78, before its tcp
# 4-64 MiB part was read; first scored held out in run 79.
TCP_RING_RED = HOST_SET_UP_ABOVE + ", tcp ring reductions"


def host_set_bytes(p, s):
    """The swept membw size whose rate prices an shm reduction in the host-set column: p ranks of an
    out-of-place all-reduce of S together touch about 2pS bytes (each its send and receive
    buffers) and share the host's last-level cache, and membw_perf's reduction of n bytes touches
    about 3n (dst, a, b): n = 2pS/3 (on 2 ranks, nearest S: the one-rank price)."""
    return 2 * p * s / 3


def host_set_up_bytes(membw, p, s):
    """The host-set-rounded-up column's swept membw size: the p ranks' send and receive buffers
    (2pS) and the shm pair rings they receive on (p x SHM_RING["bytes"]) together, priced at the
    smallest swept size n whose membw working set 3n holds them (the largest where none does)."""
    need = 2 * p * s + p * SHM_RING["bytes"]
    fits = [n for n in membw if 3 * n >= need]
    return min(fits) if fits else max(membw)


RING_CORE_NAME = ("cpu, all-gather, cheaper core, own all-gather, tcp reduction by CPU at most "
                  "membw's, ring's core from the all-gather")

# The CPU-time columns: (row key prefix, simulate_cpu's `above`, the summary's name).
CPU_COLUMNS = [("cpu", "1-message", "cpu"), ("cpu_p", "p-rank", "cpu, p-rank"),
               ("cpu_l", "lock-step", "cpu, lock-step"), ("cpu_g", "all-gather", "cpu, all-gather"),
               ("cpu_g0", "all-gather, smallest", "cpu, all-gather at the smallest size"),
               ("cpu_gr", "reduce-scatter", "cpu, + reduce-scatter"),
               ("cpu_gm", "all-gather, cheaper core", "cpu, all-gather, cheaper core"),
               ("cpu_gf", "all-gather, footprint", "cpu, all-gather, pair-ring footprint"),
               ("cpu_gp", "all-gather, pairwise", "cpu, all-gather, cheaper core, pairwise"),
               ("cpu_go", "all-gather, own all-gather",
                "cpu, all-gather, cheaper core, own all-gather"),
               ("cpu_gh", "all-gather, own halves", "cpu, all-gather, cheaper core, own halves"),
               ("cpu_gt", "all-gather, own all-gather, receipt",
                "cpu, all-gather, cheaper core, own all-gather, tcp reduction by CPU"),
               ("cpu_gc", "all-gather, own all-gather, receipt, capped",
                "cpu, all-gather, cheaper core, own all-gather, tcp reduction by CPU at most "
                "membw's"),
               ("cpu_gk", "all-gather, own all-gather, receipt, capped, shm ring core",
                "cpu, all-gather, cheaper core, own all-gather, tcp reduction by CPU at most "
                "membw's, shm ring's core from the all-gather"),
               ("cpu_ga", "all-gather, own all-gather, receipt, capped, ring core", RING_CORE_NAME)]


def _chained(name, links):
    """CPU_COLUMNS from the host-set column on: each column is the one before it with one more
    change, and its summary name the one before's plus that change's (", " + suffix)."""
    out = []
    for key, above, suffix in links:
        name = f"{name}, {suffix}"
        out.append((key, above, name))
    return out


# From the host-set column on, each column's `above` is the one before it plus its one change.
CHAIN = [
    ("cpu_gw", HOST_SET, "shm reductions at the host's working set"),
    ("cpu_gx", SHM_HALVES, "shm Rabenseifner's reductions from its reduce-scatter"),
    ("cpu_gz", LATENCY_CAP, "latency no larger than at the smallest size"),
    ("cpu_gy", FLOW_RATE, "tcp flow rate from the all-gather"),
    ("cpu_gq", SHM_RING_RED, "shm ring's reductions from its reduce-scatter"),
    ("cpu_gu", PAIRWISE_CAP, "that latency cap for pairwise schedules above the cores too"),
    ("cpu_gd", COPY_MEMCPY, "local copies at membw's memcpy rate"),
    ("cpu_gs", SHM_RS_RATE, "shm flow rate from the ring reduce-scatter within the cores"),
    ("cpu_ge", HOST_SET_UP, "host set with the rings, rounded up"),
    ("cpu_gb", HOST_SET_UP_ABOVE, "that only above the cores"),
    ("cpu_gv", TCP_RING_RED, "tcp ring's reductions from its reduce-scatter above the cores")]
CPU_COLUMNS += _chained(RING_CORE_NAME, CHAIN)
# The chained columns' `above`s: each fits the latency to the ring all-gather and, for pairwise
# schedules above the cores, the core to the schedule's own all-gather (OWN_ALLGATHER,
# ALPHA_FITTED), as the ring-core column it extends does.
CHAINED = tuple(above for _, above, _ in CHAIN)

# How the summary's count line describes each CPU column after the first (listed only where every
# row has the column: runs stored before its calibration lack it).
SUMMARY_TEXT = {
    "cpu_p": "with the same but, above the cores, a core's cost per byte from the CPU time of the "
             "p-rank sendrecv of the same messages",
    "cpu_l": "with the same but, above the cores, both a core's cost per byte and the latency from "
             "the p-rank sendrecv of the same messages in lock-step (its CPU time; its idle time "
             "per message)",
    "cpu_g": "with the p-rank one but the latency fitted so that the simulator prices the ring "
             "all-gather of the same S on the same ranks, measured right after the point, at its "
             "measured time (all rank counts)",
    "cpu_g0": "with the all-gather one but the latency it fits at the smallest size of the run on "
              "those ranks, at every size",
    "cpu_gr": "with the all-gather one and the reduction rate fitted so that the simulator prices "
              "the ring reduce-scatter of the same S on the same ranks, measured right after the "
              "all-gather, at its measured time",
    "cpu_gm": "with the all-gather one but, above the cores, a core's cost per byte from whichever "
              "p-rank sendrecv of the same messages, streamed or in lock-step, spent less CPU time "
              "per byte",
    "cpu_gf": "with the all-gather one but, over shm above the cores, the cheaper core only where "
              "the schedule touches pair rings more like the lock-step sendrecv than the streamed "
              "one",
    "cpu_gp": "with the cheaper-core one but, over tcp above the cores, a schedule that exchanges "
              "with one partner per step (Rabenseifner, recursive doubling) takes a core's cost "
              "per byte from the p-rank sendrecv of the same messages in that pattern (each rank "
              "with rank ^ 1) where it spent less CPU time per byte",
    "cpu_go": "with the cheaper-core one but, above the cores, a schedule that exchanges with one "
              "partner per step takes a core's cost per byte fitted so that the simulator prices "
              "loom's recursive-doubling all-gather of the same S on the same ranks (Rabenseifner's "
              "all-gather half), measured right after the point, at its measured time",
    "cpu_gh": "with the own-all-gather one and then the reduction rate fitted so that the "
              "simulator prices loom's recursive-halving reduce-scatter of the same S on the same "
              "ranks (Rabenseifner's other half), measured beside it, at its measured time",
    "cpu_gt": "with the own-all-gather one but, over tcp, a reducing receive's cost beyond a plain "
              "one from the CPU time the ring reduce-scatter of the same S on the same ranks spent "
              "beyond the ring all-gather's (both measured right after the point)",
    "cpu_gc": "with the tcp-reduction-by-CPU one but a reduction never priced dearer than at "
              "membw_perf's rate (the old price, an upper bound)",
    "cpu_gk": "with the capped one but, over shm, where the ring all-gather measured beside the "
              "point runs faster than the simulator prices it even at the least latency (the "
              "8 B one), a ring schedule's core cost per byte fitted so that it prices that "
              "all-gather at its measured time",
    "cpu_ga": "with the shm-ring-core one but over tcp too",
    "cpu_gw": "with the ring-core one but, over shm, every reduction priced at membw_perf's rate "
              "for the working set of all the host's ranks (the swept size nearest 2pS/3), not "
              "one rank's (S)",
    "cpu_gx": "with the host-set one but, over shm above the cores, a Rabenseifner's reduction "
              "rate fitted as the own-halves one's (to loom's recursive-halving reduce-scatter "
              "measured beside the point) but never below membw_perf's rate out of memory",
    "cpu_gz": "with the shm-halves one but, on ranks within the cores, the latency fitted to the "
              "ring all-gather no larger than the one fitted at the round's smallest size on "
              "those ranks",
    "cpu_gy": "with the latency-cap one but, over tcp on ranks within the cores, where the ring "
              "all-gather measured beside the point runs faster than the simulator prices it even "
              "at the least latency and the core fitted to it, one flow's rate fitted so that it "
              "prices that all-gather at its measured time",
    "cpu_gq": "with the flow-rate one but, over shm above the cores, the ring's reduction rate "
              "fitted to the ring reduce-scatter measured beside the point, between membw_perf's "
              "rate out of memory and the host-set rate",
    "cpu_gu": "with the shm-ring-reductions one but the latency cap also above the cores for "
              "a pairwise schedule (Rabenseifner): its latency no larger than the one fitted at "
              "the round's smallest size on those ranks",
    "cpu_gd": "with the pairwise-latency-cap one but the schedule's local copies (recursive "
              "doubling's copy of its input) priced at membw_perf's memcpy rate, not the core's "
              "transfer rate",
    "cpu_gs": "with the memcpy-copy one but, over shm on ranks within the cores, for the ring (and "
              "Rabenseifner on 2 ranks), where the ring reduce-scatter measured beside the point "
              "runs faster than the simulator prices it, one flow's rate raised (at most 4x) so "
              "that it prices that reduce-scatter at its measured time",
    "cpu_ge": "with the shm-rate one but, over shm, the host's working set counting the pair "
              "rings too (2pS + p rings) and priced at the smallest swept membw size that holds "
              "it (3n at least), not the nearest",
    "cpu_gb": "with the host-set-up one but on ranks within the cores the host set priced at the "
              "nearest size, as before",
    "cpu_gv": "with the host-set-up-above one but, over tcp above the cores, the ring's reduction "
              "rate fitted to the ring reduce-scatter measured beside the point, no dearer than "
              "membw_perf's rate out of memory"}


FITTED = {}  # fit_alpha's results by its inputs

# The columns that fit a PAIRWISE schedule's core to loom's recursive-doubling all-gather.
OWN_ALLGATHER = ("all-gather, own all-gather", "all-gather, own halves",
                 "all-gather, own all-gather, receipt",
                 "all-gather, own all-gather, receipt, capped",
                 "all-gather, own all-gather, receipt, capped, shm ring core",
                 "all-gather, own all-gather, receipt, capped, ring core") + CHAINED

# A reduction no dearer than this is priced as this (loom-plan needs a rate; at 1000 GB/s a MiB
# costs 1 us): where the ring reduce-scatter spent no more CPU than the all-gather.
RED_FREE_GBPS = 1000.0


def receipt_reduce_gbps(p, s, rs_cpu_us, ag_cpu_us):
    """The "tcp reduction by CPU" column's reduction rate (GB/s): over tcp loom reduces each piece
    as it arrives, out of a 64 KiB staging buffer the receive just filled (in cache), where a plain
    receive writes the destination; what a reducing receive costs beyond a plain one is what the
    ring reduce-scatter of S on p ranks spent in CPU time (all ranks) beyond the ring all-gather of
    S: the same steps and bytes, plus (p - 1) S bytes reduced. The simulator adds 1 / rate per byte
    to a receive's cost over tcp (loom-plan's onReceipt). At most RED_FREE_GBPS (2026-12-03, runs
    40-41, tcp, 2 ranks at 4 MiB: the reduce-scatter spent 0.89-1.02 of the all-gather's CPU)."""
    extra_ns = (rs_cpu_us - ag_cpu_us) * 1e3
    return RED_FREE_GBPS if extra_ns <= 0 else min(RED_FREE_GBPS, (p - 1) * s / extra_ns)

# The columns (simulate_cpu's `above`) whose latency fit_alpha fits, at each size, to the ring
# all-gather measured beside the point; "all-gather, smallest" takes it from the smallest size.
ALPHA_FITTED = ("all-gather", "reduce-scatter", "all-gather, cheaper core",
                "all-gather, footprint", "all-gather, pairwise", "all-gather, own all-gather",
                "all-gather, own halves", "all-gather, own all-gather, receipt",
                "all-gather, own all-gather, receipt, capped",
                "all-gather, own all-gather, receipt, capped, shm ring core",
                "all-gather, own all-gather, receipt, capped, ring core") + CHAINED

# The shm pair ring's size in bytes (LOOM_SHM_BUFFER_BYTES), as the run measured with it
# (shm_ring_bytes): stored in points.json as "shm_ring_bytes"; runs before run 32 (2026-12-03)
# stored none and ran with the default of then, 4 MiB.
SHM_RING_BEFORE_32 = 4 << 20
SHM_RING = {"bytes": SHM_RING_BEFORE_32}


def shm_ring_bytes(build):
    """The pair ring the drivers run with: loom-info's current LOOM_SHM_BUFFER_BYTES (the
    environment's, else loom's default)."""
    txt = run([os.path.join(build, "tools", "loom-info", "loom-info"), "--params"])
    m = re.search(r"^LOOM_SHM_BUFFER_BYTES\s.*\bcurrent\s+(\d+)", txt, re.M)
    if not m:
        sys.exit("validate_local: loom-info --params lists no LOOM_SHM_BUFFER_BYTES")
    return int(m.group(1))


def ring_footprint(decision, size, ranks):
    """Bytes of shm pair rings that one rank writes in one all-reduce of `size` on `ranks` ranks
    under `decision` (as message_bytes reads it). A message that finds its pair ring empty starts
    at the ring's start (transports/shm/transport.h, "Rewinding"), so a partner's ring is touched
    up to min(ring, the largest message to it): ring (and the one-host hier): one partner,
    messages of message_bytes; tree (and hier_tree): two trees of p - 1 edges, each used up and
    down, 4 (p - 1) / p partners a rank on average, messages of a chunk; Rabenseifner: the partner
    of step k gets size / 2^k both ways; recursive doubling: log2 p partners, the whole vector;
    others (direct): p - 1 partners, size / p."""
    name = decision.split("(")[0]
    ring = SHM_RING["bytes"]
    m = message_bytes(decision, size, ranks)
    if name in ("ring", "hier"):
        return min(ring, m)
    if name in ("tree", "hier_tree"):
        return 4 * (ranks - 1) / ranks * min(ring, m)
    if name == "rabenseifner":
        out, q = 0, 2
        while q <= ranks:
            out, q = out + min(ring, size // q), q * 2
        return out
    if name == "rd":
        return math.log2(ranks) * min(ring, size)
    return (ranks - 1) * min(ring, max(1, size // ranks))


def fit_alpha(a, t, p, s, rate, red, core, alpha0, target_us):
    """The per-message latency (us) at which loom-plan --simulate prices the ring all-gather of s
    bytes on p ranks (rate: one flow, bytes/us; core: a core's bytes/us on one side) at
    target_us, the measured one; alpha0 when even alpha0 is priced slower. Bisection: the
    simulated time grows with the latency (every step waits for its message). Its one local copy
    (its own block into the output) costs what loom-plan charges by default, the core's transfer
    rate: over tcp ~9x a memcpy's. Pricing it at membw_perf's memcpy rate instead (loom-plan
    --sim-copy-gbps) was tried after run 22's 1 MiB points and scored worse on its held-out 4-64
    MiB ones (tcp 16 of 18 against 18): the dear copy stands in for a cost the all-gather pays
    once per call, which a cheap copy leaves to the fitted per-message latency."""
    memo = (t, p, s, rate, red, core, alpha0, target_us)  # several columns fit the same
    if memo in FITTED:
        return FITTED[memo]

    def sim(alpha):
        return simulate(a.build, t, p, s, params_line(t, alpha, rate / 1e3, red, a.cores), "ring",
                        a.cores, core / 1e3, coll="allgather")[2]
    if sim(alpha0) >= target_us:
        FITTED[memo] = alpha0
        return alpha0
    lo, hi = alpha0, alpha0 + target_us  # one message alone then takes longer than the target
    for _ in range(14):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sim(mid) < target_us else (lo, mid)
    FITTED[memo] = (lo + hi) / 2
    return FITTED[memo]


def log_bisect(sim, lo, hi, target_us, steps):
    """The rate within lo .. hi at which sim(rate), a simulated time that falls as the rate grows,
    is target_us: `steps` bisections on a log scale, then the geometric middle of what is left."""
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if sim(mid) > target_us else (lo, mid)
    return math.sqrt(lo * hi)


def fit_core(a, t, p, s, rate, red, core, alpha, target_us, algo="rd"):
    """A core's bytes/us (one side) at which loom-plan --simulate prices loom's recursive-doubling
    all-gather (algo "ring": its ring all-gather) of s bytes on p ranks (the other costs as
    fit_alpha's, `alpha` the latency fitted there) at target_us, the measured one. Bisection on a
    log scale within core / 4 .. 4 core (the bound where even it misses): the simulated time falls
    as the core's rate grows."""
    def sim(k):
        return simulate(a.build, t, p, s, params_line(t, alpha, rate / 1e3, red, a.cores), algo,
                        a.cores, k / 1e3, coll="allgather")[2]
    lo, hi = core / 4, core * 4
    if sim(hi) >= target_us:
        return hi
    if sim(lo) <= target_us:
        return lo
    return log_bisect(sim, lo, hi, target_us, 12)


def fit_rate(a, t, p, s, rate, red, core, alpha, target_us, coll="allgather", pair_copy=0.0,
             unbound_at_most=False):
    """One flow's bytes/us at which loom-plan --simulate prices the ring all-gather (coll
    "reducescatter": the ring reduce-scatter, its reductions held against `pair_copy` as
    fit_reduce's) of s bytes on p ranks (the other costs as fit_core's: `core` the core fitted
    there, `alpha` the latency) at target_us, the measured one; `rate` where even it is priced no
    slower. Where even 4 x rate is priced slower, the flow is not what bounds it: `rate` kept, or
    with unbound_at_most 4 x rate (the collective ran faster than the flow allows, so the flow
    bounds it nowhere below that). Bisection on a log scale within rate .. 4 x rate: the
    simulated time falls as the rate grows."""
    def sim(k):
        return simulate(a.build, t, p, s, params_line(t, alpha, k / 1e3, red, a.cores), "ring",
                        a.cores, core / 1e3, coll=coll, pair_copy=pair_copy)[2]
    lo, hi = rate, rate * 4
    if sim(lo) <= target_us:
        return rate
    if sim(hi) >= target_us:
        return hi if unbound_at_most else rate
    return log_bisect(sim, lo, hi, target_us, 12)


def fit_reduce(a, t, p, s, rate, red, core, alpha, target_us, pair_copy=0.0, algo="ring"):
    """The reduction rate (GB/s) at which loom-plan --simulate prices the reduce-scatter of s
    bytes on p ranks by `algo` (loom's ring, or "halving": recursive halving; the other costs as
    fit_alpha's, `alpha` the latency fitted there) at target_us, the measured one; `red` (the calibrated rate) when even that is priced slower.
    Bisection on a log scale down to red / 64: the simulated time falls as the rate grows."""
    def sim(r):
        return simulate(a.build, t, p, s, params_line(t, alpha, rate / 1e3, r, a.cores), algo,
                        a.cores, core / 1e3, coll="reducescatter", pair_copy=pair_copy)[2]
    if sim(red) >= target_us:
        return red
    lo, hi = red / 64, red
    return log_bisect(sim, lo, hi, target_us, 14)


def within_membw(r, red, fitted):
    """A reduction rate (GB/s) fitted to a reduce-scatter measured beside the point, kept within
    membw_perf's rates of round r: never cheaper than `red`, the rate the column had, and never
    dearer than the rate out of memory (membw's largest size), as no reduction streams slower
    than that (at 64 MiB the shm halving reduce-scatter ran ~2x slower than the all-reduce's half
    of it, runs 48-55; the unbounded own-halves column priced those points 1.85-2.11)."""
    return min(red, max(fitted, r["membw"][max(r["membw"])][1]))


def simulate_cpu(a, rounds, key, above="1-message"):
    """Per round: the schedule loom ran at this point, simulated with a calibration of what each
    cost is, by CPU time, not by wall time alone ("cpu" column). It differs from the chunked one
    (simulate_by_message) in three ways:
    - a core's cost per byte: the CPU time (user + system, all ranks: the drivers' cpu_us) that
      the 2-rank sendrecv of the same bytes in messages of the schedule's size spent per byte
      moved, not its wall time (--sim-core-gbps = 4 S / that CPU time: the sendrecv moves 2 S,
      each byte costs a core 1 / core-gbps on each side). Above the cores it is multiplied by
      the p-rank over the 2-rank CPU cost per byte of the 1-message sendrecv; with `above`
      "p-rank" (the "cpu, p-rank" column) it comes instead from the p-rank sendrecv of the same
      messages (calibrate_point; 2 p S / its CPU time): with more processes than cores no core goes idle
      between messages, while on a VM a 2-rank exchange of small messages may pay the idle
      cores' wake-ups in CPU time too (run 12, tcp, 1 MiB in 128 KiB messages: 1.2 ms of CPU on
      2 ranks against 0.56 ms in 512 KiB ones; run 13's VM: 1.2 ms in both). None where a round
      lacks it (runs before 2026-12-02). Either way the time a core sits idle while its ranks
      wait is not a cost per byte, so it is not charged per byte;
    - the per-message latency: the p-rank sendrecv of 8 B (with more ranks than cores, a message
      waits for its receiver to be scheduled);
    - `above` "lock-step" (the "cpu, lock-step" column): above the cores, both from the p-rank
      sendrecv of the same messages in lock-step (calibrate_point): a core's cost per byte from
      its CPU time (2 p S / cpu_us), and the latency = the time per message the cores sat idle
      in it, (wall - cpu_us / cores) / messages, at least the 8 B one. A schedule's step waits
      for the step before; with more processes than cores, each step waits for processes to be
      woken and scheduled in turn, and the streaming sendrecv never waits so (run 13-14, tcp,
      4 ranks: a ring step took ~60% longer than a streamed message). The fluid core sharing
      has no such turns, so the idle time is charged per message, as latency;
    - `above` "all-gather" (the "cpu, all-gather" column): a core's cost per byte as "p-rank",
      and the per-message latency fitted (fit_alpha) so that the simulator prices the ring
      all-gather of the same S on the same p ranks, measured right after the point
      (calibrate_point), at its measured wall time; on every rank count, not only above the
      cores. Its steps wait for each other inside one call as the all-reduce's do, which neither
      the streamed sendrecv (no step waits) nor the lock-step one (a group call and a stream
      synchronise per message, each receive posted late) does (2026-12-02, tcp, 4 ranks, 1 MiB:
      538-581 us per all-gather step, 553-616 per ring all-reduce step, 333-478 per streamed
      message). A different collective from the validated one, so the fit is not circular;
    - `above` "all-gather, smallest" (the "cpu, all-gather at the smallest size" column): as
      "all-gather", but the latency is the one fitted at the smallest size this round ran on p
      ranks (the forced ring's point), used at every size. At large sizes the all-gather runs
      slower than simulated for reasons of rate, and a latency fitted there (tcp, 64 MiB: 3.7-16
      ms in run 22) overprices schedules of few large messages (Rabenseifner 1.11-1.49); the
      p-rank CPU costs carry the rate. Read as a cost per call, or as a factor on the rates, the
      all-gather's gap did worse on run 22 (split_fits.py beside it: 37 and 35 of 48 against 44);
    - `above` "reduce-scatter" (the "cpu, + reduce-scatter" column): the all-gather one, and then
      the reduction rate fitted (fit_reduce) so that the simulator prices the ring reduce-scatter
      of the same S on the same p ranks, measured right after the all-gather, at its measured
      time: the same steps and messages, each also reducing what it received, so what they cost
      beyond the all-gather's is the reductions' (2026-12-02 21:00 UTC, tcp, 4 ranks, 1 MiB: 1066
      us against the all-gather's 995, and run 23's ring all-reduce step 305 us against its
      all-gather step 272, where the calibrated rate gives 11 us per 256 KiB reduced). With both
      fitted, a ring all-reduce (its reduce-scatter, then its all-gather) is priced at about the
      two collectives' sum; the tree, Rabenseifner and recursive doubling are the test;
    - `above` "all-gather, cheaper core" (the "cpu, all-gather, cheaper core" column, added
      after run 28 and first held out in run 29): the all-gather one, but above the cores a
      core's cost per byte is the lower of the two p-rank sendrecvs' of the same messages,
      streamed ("p-rank") and in lock-step ("lock-step"), by CPU time; the p-rank one alone where
      a round lacks the lock-step. Each overstates the cost per byte in its own way: the
      streamed one has every rank's bytes in flight at once, past the caches (shm, 8 ranks, 4
      MiB in 512 KiB messages, 2026-12-03 05:50 UTC: 4.6-4.7 ms streamed against 3.8-4.0 in
      lock-step), where a pipelined schedule reads each chunk back while it is cached; the
      lock-step one pays the processes' turns on the cores for every message (1 MiB in 128 KiB
      messages: 0.57-0.70 ms streamed against 1.06-1.18 in lock-step). The cheaper of the two is
      the nearer. Scored on runs 22-28 before it was added (in-sample): 43, 42, 42, 41, 46, 48,
      47 of 48 against the all-gather column's 44, 41, 43, 44, 46, 47, 45;
    - `above` "all-gather, footprint" (the "cpu, all-gather, pair-ring footprint" column, added
      after run 31 and before run 32's results were read): over shm above the cores, the
      cheaper core of "all-gather, cheaper core" where the schedule touches pair rings more like
      the lock-step sendrecv than the streamed one (footprint_nearer_lockstep; ring_footprint),
      else the streamed p-rank one, as "all-gather". The lock-step sendrecv is cheaper per byte
      at 4 MiB on 8 ranks because each rank rewrites one ring's first 512 KiB, where the
      streamed one fills 4 MiB of it; Rabenseifner writes three rings, 3.5 MiB (2026-12-03
      07:48 UTC: with 256 KiB pair rings its 8-rank 4 MiB all-reduce went from 8.3-9.2 ms to
      6.1-6.3, the ring's from 6.4-6.5 to 7.4-8.2). The cheaper core had priced Rabenseifner
      there at 0.72 (run 31). Over tcp it is the all-gather one;
    - `above` "all-gather, pairwise" (the "cpu, all-gather, cheaper core, pairwise" column, added
      before run 40): the cheaper-core one, but over tcp above the cores a schedule that exchanges
      with one partner per step (PAIRWISE: Rabenseifner, recursive doubling) takes a core's cost
      per byte from the p-rank sendrecv of the same messages in that pattern (--pairwise 1) where
      it spent less CPU per byte than the ring-pattern ones (2026-12-03 18:20 UTC, tcp, 1 MiB in
      512 KiB messages on 8 ranks: 0.24-0.27 ms of CPU per MiB against 0.34-0.46; at 4 MiB about
      the same). The latency is still fitted to the ring all-gather at the ring pattern's core;
    - `above` "all-gather, own all-gather" (added after run 40, before run 41): the cheaper-core
      one, but above the cores a PAIRWISE schedule takes a core's cost per byte fitted (fit_core)
      so that the simulator prices loom's recursive-doubling all-gather of the same S on the same
      ranks, measured right after the point, at its measured time: Rabenseifner's all-gather
      half, the same partners and shrinking message sizes, which no one-size sendrecv reproduces
      (run 40, tcp, 8 ranks, 4 MiB: Rabenseifner took 11.3 ms and was priced 1.30x with every
      sendrecv-derived core);
    - `above` "all-gather, own halves": the own-all-gather one, and then the reduction rate
      fitted (fit_reduce, "halving") so that the simulator prices loom's recursive-halving
      reduce-scatter of the same S (Rabenseifner's other half), measured beside it, at its time;
    - `above` "all-gather, own all-gather, receipt" (the "... own all-gather, tcp reduction by
      CPU" column, added after run 41, before run 42): the own-all-gather one, but over tcp the
      reduction rate from CPU time (receipt_reduce_gbps): what the ring reduce-scatter of the
      same S on the same ranks, measured right after the point, spent beyond the ring
      all-gather's, per byte reduced. loom's tcp reduces each piece out of its 64 KiB staging
      buffer as it arrives, and a receive into that hot buffer is cheaper than one into the
      destination, so a reducing receive costs little more than a plain one (runs 40-41, 2 ranks
      at 4 MiB: the reduce-scatter spent 0.89-1.02 of the all-gather's CPU; 1.1-1.3 elsewhere,
      1.6 on 4 ranks at 64 MiB), where membw_perf's rate at a message's working set (9 GB/s at 2
      MiB) charged the 2-rank ring at 4 MiB ~230 us more (run 41: 1.30; rescored, 1.18);
    - `above` "all-gather, own all-gather, receipt, capped" (added after run 42, before run 43):
      that one, but the reduction never priced dearer than membw_perf's rate (the other
      columns' price): the ring reduce-scatter reduces into scratch partials and sends from
      there, which the all-reduce does not, and on 4 tcp ranks at 64 MiB it spent 1.6x the
      all-gather's CPU (runs 40-42), which priced the ring all-reduce there at 1.11-1.26;
    - `above` "..., capped, shm ring core" (the "... shm ring's core from the all-gather" column,
      added after run 43, before run 44): the capped one, but over shm, for a schedule that is
      not PAIRWISE (the ring), where even the least latency (the p-rank 8 B one, fit_alpha's
      floor) prices the ring all-gather measured beside the point slower than it ran, a core's
      cost per byte fitted (fit_core, "ring") so that it prices it at its measured time. The
      sendrecvs overstate what a byte costs the ring there (runs 42-43, shm, 8 ranks at 1 MiB:
      the all-gather ran in 446-737 us and was priced 655-760 at the floor; the all-reduce, about
      the all-gather plus the reduce-scatter as measured, was priced 1.26-1.28x; 4 ranks
      1.07-1.12x). `above` "..., capped, ring core": the same over tcp too (in-sample on runs
      41-43 it priced the 8-rank tcp ring at 1 MiB at 0.76-0.81, the capped one 1.11-1.17);
    - over tcp, the reduction rate at one message's working set (reduce_at), not the whole vector's.
    The ratio is the median over the rounds of simulated / measured in the same round. None when
    a round lacks the CPU numbers (runs stored before the drivers reported cpu_us)."""
    t, algo, p, s = key
    ratios, sims, alphas, reds, ip_ratios = [], [], [], [], []
    for r in rounds:
        x = cpu_round(a, r, key, above)
        if x is None:
            return None
        if above in ALPHA_FITTED or above == "all-gather, smallest":
            alphas.append(x["alpha"])
        if above == "reduce-scatter":
            reds.append(x["red"])
        params = params_line(t, x["alpha"], x["rate"] / 1e3, x["red"], a.cores)
        sim_us = simulate(a.build, t, p, s, params, x["ran"], a.cores, x["core"] / 1e3,
                          red_ip=x["red_ip"], pair_copy=x["pair_copy"], copy_gbps=x["copy"])[2]
        ratios.append(sim_us / r["points"][key][0])
        sims.append(sim_us)
        ip_us = r.get("point_ip", {}).get(key)
        if x["red_ip"] > 0 and ip_us:
            ip_ratios.append(simulate(a.build, t, p, s, params, x["ran"], a.cores,
                                      x["core"] / 1e3, red_ip=x["red_ip"], inplace=True,
                                      pair_copy=x["pair_copy"], copy_gbps=x["copy"])[2] /
                             ip_us)
    return {"sim_us": median(sims), "ratio": median(ratios), "ratios": ratios,
            **({"alpha_us": median(alphas)} if alphas else {}),
            **({"reduce_gbps": median(reds)} if reds else {}),
            **({"ip_ratio": median(ip_ratios), "ip_ratios": ip_ratios}
               if len(ip_ratios) == len(rounds) else {})}


def footprint_nearer_lockstep(ran, s, p, m):
    """The "cpu, all-gather, pair-ring footprint" column's choice (shm, above the cores): whether
    the schedule `ran` (s bytes on p ranks, messages of m) touches pair rings more like the
    lock-step sendrecv of its messages (each message done before the next, so each rank writes
    min(ring, m) of its one ring) than like the streamed one (all messages in flight, min(ring,
    s)): nearer on a log scale, and less than the streamed one's."""
    fx, fs, fl = (p * ring_footprint(ran, s, p), p * min(SHM_RING["bytes"], s),
                  p * min(SHM_RING["bytes"], m))
    return fx < fs and abs(math.log(fx / fl)) <= abs(math.log(fx / fs))


def smallest_point(r, key):
    """The point of round r at the smallest size it ran on key's transport and ranks: the forced
    ring's where the round has it, else key's algorithm's."""
    t, algo, p, _ = key
    s0 = min(q[3] for q in r["points"] if q[0] == t and q[2] == p)
    return next(q for q in ((t, "ring", p, s0), (t, algo, p, s0)) if q in r["points"])


def cpu_round(a, r, key, above):
    """simulate_cpu's calibration of one point in one round r: {"ran": the schedule, "rate": one
    flow's bytes/us, "core": a core's bytes/us on one side, "red": the reduction GB/s, "alpha":
    the per-message latency us}; None when the round lacks what `above` needs."""
    t, algo, p, s = key
    c = r["calib"][t]
    ran = r["points"][key][1]
    ran = algo if ran == "?" else ran
    m = message_bytes(ran, s, p)
    k = f"2:{s}:{m}"
    if "chunked_cpu_us" not in c or k not in c["chunked_cpu_us"]:
        return None
    alpha = c["alpha_p_us"][p]
    rate = s / max(1e-3, c["chunked_us"][k] - c["alpha_us"])  # bytes/us, one flow
    core = 4 * s / max(1e-3, c["chunked_cpu_us"][k])  # bytes/us, one core, one side
    kp = f"{p}:{s}:{m}"
    if p > a.cores and above == "lock-step":
        if kp not in c["lockstep_cpu_us"]:
            return None
        wall, cpu = c["lockstep_us"][kp], c["lockstep_cpu_us"][kp]
        core = 2 * p * s / max(1e-3, cpu)
        alpha = max(alpha, (wall - cpu / a.cores) / max(1, -(-s // m)))
    elif p > a.cores and above != "1-message":
        if kp not in c["chunked_cpu_us"]:
            return None
        # The p-rank sendrecv of the same messages: p S sent, each byte paid on both sides.
        core = 2 * p * s / max(1e-3, c["chunked_cpu_us"][kp])
        cheaper = kp in c.get("lockstep_cpu_us", {}) and (
            above in ("all-gather, cheaper core", "all-gather, pairwise", *OWN_ALLGATHER) or
            (above == "all-gather, footprint" and t == "shm" and
             footprint_nearer_lockstep(ran, s, p, m)))
        if cheaper:
            core = max(core, 2 * p * s / max(1e-3, c["lockstep_cpu_us"][kp]))
    elif p > a.cores:
        cp, c2 = c["sendrecv_p_cpu_us"][p][s], c["sendrecv_cpu_us"][s]
        core *= (c2 / (2 * s)) / (cp / (p * s))
    # tcp reduces from its own staging buffer, just filled by the receive (reduce_at); shm
    # straight out of the shared ring, lines another core wrote: at the whole vector's rate,
    # as in the other columns (run 10: a message's in-cache rate put shm's 2-rank ring at
    # 1 MiB at 0.72-0.74, and a rate measured on an operand another core wrote, 14 GB/s at
    # 512 KiB, did not help).
    def red_at(col):
        if t == "tcp":
            return reduce_at(r["membw"], m, col)
        # The reductions, not the pair copy:
        if above.startswith(HOST_SET_UP) and col in (1, 2) and not (
                above.startswith(HOST_SET_UP_ABOVE) and p <= a.cores):
            return r["membw"][host_set_up_bytes(r["membw"], p, s)][col]
        if above.startswith(HOST_SET) and col in (1, 2):
            return reduce_at(r["membw"], host_set_bytes(p, s), col)
        return r["membw"][s][col]
    red = red_at(1)
    # The in-place reduction rate (dst = dst + x), at the same working set; 0 where the round has
    # none (runs before run 36): then every reduction is priced at `red`.
    red_ip = red_at(2) if all(len(v) > 2 for v in r["membw"].values()) else 0.0
    # shm: the memcpy rate at the same working set, against which a reduction out of the pair
    # ring holds the pair's handoff (--sim-pair-copy-gbps; loom-plan leaves it out over tcp).
    pair_copy = red_at(0) if t == "shm" and a.pair_copy else 0.0
    kg = f"{p}:{s}"
    if above == "all-gather, smallest":
        # The latency the all-gather column fits at the smallest size this round ran on p ranks
        # (the ring's point where the ring was forced), where the all-gather is the most
        # latency-bound.
        x = cpu_round(a, r, smallest_point(r, key), "all-gather")
        if x is None:
            return None
        alpha = x["alpha"]
    elif above in ALPHA_FITTED:
        if kg not in c.get("allgather_us", {}):
            return None
        alpha0, alpha = alpha, fit_alpha(a, t, p, s, rate, red, core, alpha, c["allgather_us"][kg])
        if "ring core" in above and (t == "shm" or "shm ring core" not in above) \
                and not is_pairwise(ran) and alpha == alpha0:
            # The latency at its floor and the ring all-gather still priced slower than it ran:
            # the core is dearer than the sendrecvs said; its cost per byte from that all-gather.
            core = fit_core(a, t, p, s, rate, red, core, alpha, c["allgather_us"][kg], "ring")
            if above.startswith(FLOW_RATE) and t == "tcp" and p <= a.cores:
                # Still priced slower at that core: one flow's rate from that all-gather.
                rate = fit_rate(a, t, p, s, rate, red, core, alpha, c["allgather_us"][kg])
        if above.startswith(LATENCY_CAP) and (p <= a.cores or (
                above.startswith(PAIRWISE_CAP) and is_pairwise(ran))):
            # No larger than the latency fitted at the smallest size of the round on p ranks (the
            # ring's point there, as "all-gather, smallest" takes it), where it is fitted.
            k0 = smallest_point(r, key)
            if k0[3] < s:
                x0 = cpu_round(a, r, k0, above)
                if x0 is None:
                    return None
                alpha = min(alpha, x0["alpha"])
    if above == "all-gather, pairwise" and t == "tcp" and p > a.cores and is_pairwise(ran):
        # After the latency's fit (to the ring all-gather, at the ring pattern's core): the
        # schedule's own pattern, where its sendrecv spent less CPU per byte.
        if kp not in c.get("pairwise_cpu_us", {}):
            return None
        core = max(core, 2 * p * s / max(1e-3, c["pairwise_cpu_us"][kp]))
    if above in OWN_ALLGATHER and p > a.cores and is_pairwise(ran):
        # After the latency's fit: a core's cost per byte at which the schedule's own pattern,
        # the recursive-doubling all-gather measured beside the point, is priced as it ran.
        if kg not in c.get("allgather_rd_us", {}):
            return None
        core = fit_core(a, t, p, s, rate, red, core, alpha, c["allgather_rd_us"][kg])
        floored = above.startswith(SHM_HALVES) and t == "shm"
        if above == "all-gather, own halves" or floored:
            if kg not in c.get("reducescatter_halving_us", {}):
                return None
            fitted = fit_reduce(a, t, p, s, rate, red, core, alpha,
                                c["reducescatter_halving_us"][kg], pair_copy, "halving")
            if floored:
                fitted = within_membw(r, red, fitted)
            red_ip, red = red_ip * fitted / red, fitted  # the in-place rate scaled alike
    if above.startswith("all-gather, own all-gather, receipt") and t == "tcp":
        if kg not in c.get("reducescatter_cpu_us", {}) or kg not in c.get("allgather_cpu_us", {}):
            return None
        fitted = receipt_reduce_gbps(p, s, c["reducescatter_cpu_us"][kg],
                                     c["allgather_cpu_us"][kg])
        if "capped" in above:
            # The reduce-scatter's surplus includes what its partials cost (it reduces into
            # scratch and sends from there; the all-reduce reduces into its output): at most
            # membw_perf's rate, the price of a reduction from memory, is charged.
            fitted = max(fitted, red)
        red_ip, red = min(RED_FREE_GBPS, red_ip * fitted / red), fitted
    if p > a.cores and (
            (t == "shm" and above.startswith(SHM_RING_RED) and not is_pairwise(ran)) or
            (t == "tcp" and above.startswith(TCP_RING_RED) and ran.split("(")[0] == "ring")):
        # After the latency's and the core's fits (over tcp, the receipt rate): the ring's
        # reductions priced as its own reduce-scatter beside the point ran, within membw_perf's
        # rates (as the shm-halves one).
        if kg not in c.get("reducescatter_us", {}):
            return None
        fitted = fit_reduce(a, t, p, s, rate, red, core, alpha, c["reducescatter_us"][kg],
                            pair_copy)
        fitted = within_membw(r, red, fitted)
        red_ip, red = red_ip * fitted / red, fitted  # the in-place rate scaled alike
    if above == "reduce-scatter":
        if kg not in c.get("reducescatter_us", {}):
            return None
        fitted = fit_reduce(a, t, p, s, rate, red, core, alpha, c["reducescatter_us"][kg],
                            pair_copy)
        red_ip, red = red_ip * fitted / red, fitted  # the in-place rate scaled alike
    if above.startswith(SHM_RS_RATE) and t == "shm" and p <= a.cores and (
            not is_pairwise(ran) or (p == 2 and ran.startswith("rabenseifner"))):
        # After the latency's and the core's fits to the all-gather: one flow's rate from the ring
        # reduce-scatter beside the point, where it ran faster than priced (never slower).
        if kg not in c.get("reducescatter_us", {}):
            return None
        rate = fit_rate(a, t, p, s, rate, red, core, alpha, c["reducescatter_us"][kg],
                        "reducescatter", pair_copy, unbound_at_most=True)
    # The schedule's own local copies (not the fits'): a memcpy of the vector, src and dst.
    copy = reduce_at(r["membw"], s, 0) if above.startswith(COPY_MEMCPY) else 0.0
    return {"ran": ran, "rate": rate, "core": core, "red": red, "alpha": alpha, "red_ip": red_ip,
            "pair_copy": pair_copy, "copy": copy}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", help="results directory (required unless --rescore)")
    ap.add_argument("--rescore", metavar="DIR",
                    help="measure nothing: simulate DIR/points.json (an earlier run) again, all "
                    "columns, into DIR/summary-rescored.md and DIR/points-rescored.json")
    ap.add_argument("--first-rounds", type=int, default=None, metavar="N",
                    help="with --rescore: only the run's first N rounds, into "
                    "DIR/summary-first-N.md and DIR/points-first-N.json (a run measured with "
                    "more rounds scored as a shorter one would have been)")
    ap.add_argument("--ranks", default="2,4,8")
    ap.add_argument("--sizes", default="1M,4M,16M,64M")
    ap.add_argument("--transports", default="shm,tcp")
    ap.add_argument("--algos", default="ring,planner", help="forced algorithms and/or 'planner'")
    ap.add_argument("--iters", type=int, default=10, help="timed iterations per run, at least")
    ap.add_argument("--moved", type=size_arg, default=256 * MIB,
                    help="smaller sizes run more iterations, about this many bytes (at most 400)")
    ap.add_argument("--calib-moved", type=size_arg, default=1024 * MIB,
                    help="calibration runs (sendrecv_perf) run about this many bytes (at most "
                    "2000 iterations; the 8 B latency runs %d)" % LATENCY_ITERS)
    ap.add_argument("--rounds", type=int, default=3,
                    help="measurement rounds, each under the lock on its own (medians are kept)")
    ap.add_argument("--cores", type=int, default=None,
                    help="cores the ranks share (default: this machine's; --rescore: the stored "
                    "run's, else this machine's)")
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--pair-copy", type=int, choices=(0, 1), default=1,
                    help="CPU columns: hold an shm pair's handoff longer while its receiver "
                    "reduces out of the ring (loom-plan --sim-pair-copy-gbps at membw_perf's "
                    "memcpy rate; 0: not, the model of runs 26-37)")
    ap.add_argument("--alpha-cpu", type=float, default=None,
                    help="the fraction of a message's latency that the cost model counts as CPU "
                    "work of the shared cores (shmAlphaCpu / tcpAlphaCpu in the parameters the "
                    "planner's points run with; default 0, latency as waiting, as the simulator "
                    "models it; --rescore: the stored run's, 1 before run 26)")
    ap.add_argument("--max-steal", type=float, default=STEAL["max"],
                    help="percent of the host's CPU time the hypervisor may steal during a "
                    "driver run's timed loop before the run is repeated (default %(default)s)")
    ap.add_argument("--steal-retries", type=int, default=STEAL["retries"],
                    help="at most this many repeats of a run that lost too much to steal; the try "
                    "with the least steal is kept (default %(default)s)")
    ap.add_argument("--steal-wait", type=float, default=STEAL["wait"],
                    help="seconds to rest before the first repeat of a stolen run, doubled before "
                    "each next one (default %(default)s)")
    ap.add_argument("--lock", default="/tmp/loom-measure.lock",
                    help="held during each round ('' when run under flock(1) on it)")
    a = ap.parse_args()
    STEAL.update({"max": a.max_steal, "retries": a.steal_retries, "wait": a.steal_wait})
    ranks = [int(x) for x in a.ranks.split(",")]
    sizes = [size_arg(x) for x in a.sizes.split(",")]
    transports = a.transports.split(",")
    algos = a.algos.split(",")
    for t in transports:
        if t not in ("shm", "tcp"):
            sys.exit(f"validate_local: --transports: '{t}' is not shm or tcp")
    if sorted(sizes) != [min(sizes) * 4 ** k for k in range(len(sizes))]:
        sys.exit("validate_local: --sizes must be x4 steps (the drivers' -f 4)")
    if a.steal_retries < 0 or a.max_steal < 0 or a.steal_wait < 0:
        sys.exit("validate_local: --steal-retries, --max-steal and --steal-wait must be >= 0")
    if a.rounds < 1:
        sys.exit("validate_local: --rounds must be >= 1")
    if a.alpha_cpu is not None and not 0 <= a.alpha_cpu <= 1:
        sys.exit("validate_local: --alpha-cpu must be between 0 and 1")
    if a.first_rounds is not None and (not a.rescore or a.first_rounds < 1):
        sys.exit("validate_local: --first-rounds needs --rescore and must be >= 1")
    if a.rescore:
        if not os.path.isfile(os.path.join(a.rescore, "points.json")):
            sys.exit(f"validate_local: --rescore: no points.json in '{a.rescore}'")
        rescore(a)
        return
    a.cores = a.cores or os.cpu_count()
    ALPHA_CPU["value"] = 0.0 if a.alpha_cpu is None else a.alpha_cpu
    SHM_RING["bytes"] = shm_ring_bytes(a.build)
    if not a.out:
        sys.exit("validate_local: --out DIR is required (or --rescore DIR)")
    os.makedirs(a.out, exist_ok=True)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rounds = []
    for i in range(a.rounds):
        print(f"validate_local: round {i + 1} of {a.rounds} (waiting for {a.lock or 'nothing'})",
              flush=True)
        rounds.append(measure_round(a, transports, ranks, sizes, algos))
        print(f"validate_local: round {i + 1}: {rounds[-1]['started']}-{rounds[-1]['ended']} UTC",
              flush=True)
    score(a, rounds, transports, ranks, sizes, algos, started, platform.node(), a.out,
          "summary.md", "points.json", calib_text(a, sizes),
          {k: STEAL[k] for k in ("max", "retries", "wait")})


def rescore(a):
    """--rescore DIR: the points.json of an earlier run simulated again with this build (every
    column; the cpu one only where the run stored CPU times), nothing measured; written beside it
    under new names."""
    with open(os.path.join(a.rescore, "points.json")) as f:
        d = json.load(f)
    # Runs stored before 2026-12-02 01:00 UTC lack "cores" (all ran on the 2-vCPU VMs).
    a.cores = a.cores or d.get("cores") or os.cpu_count()
    # Runs before run 26 (2026-12-03) ran the planner with the model's default share, 1.
    ALPHA_CPU["value"] = d.get("alpha_cpu", 1.0) if a.alpha_cpu is None else a.alpha_cpu
    # Runs before run 32 (2026-12-03) ran with loom's default pair ring of then.
    SHM_RING["bytes"] = d.get("shm_ring_bytes", SHM_RING_BEFORE_32)
    if a.first_rounds is not None and a.first_rounds > len(d["rounds"]):
        sys.exit(f"validate_local: --first-rounds {a.first_rounds}: the run has "
                 f"{len(d['rounds'])} rounds")
    rounds = []
    for r in d["rounds"][:a.first_rounds]:
        by_int = lambda d: {int(k): v for k, v in d.items()}
        # The CPU numbers (cpu column) are absent from runs stored before the drivers had cpu_us.
        calib = {t: {"alpha_us": c["alpha_us"], "alpha_p_us": by_int(c.get("alpha_p_us", {})),
                     "sendrecv_us": by_int(c["sendrecv_us"]),
                     "sendrecv_p_us": {int(q): by_int(m) for q, m in c["sendrecv_p_us"].items()},
                     "sendrecv_cpu_us": by_int(c.get("sendrecv_cpu_us", {})),
                     "sendrecv_p_cpu_us": {int(q): by_int(m) for q, m in
                                           c.get("sendrecv_p_cpu_us", {}).items()},
                     "chunked_us": c["chunked_us"],
                     "chunked_cpu_us": c.get("chunked_cpu_us", {}),
                     # Runs before 2026-12-02 02:40 UTC (run 15) lack the lock-step sendrecv.
                     "lockstep_us": c.get("lockstep_us", {}),
                     "lockstep_cpu_us": c.get("lockstep_cpu_us", {}),
                     # Runs before run 40 (2026-12-03) lack the pairwise sendrecv.
                     "pairwise_us": c.get("pairwise_us", {}),
                     "pairwise_cpu_us": c.get("pairwise_cpu_us", {}),
                     # Runs before run 41 (2026-12-03) lack the recursive-doubling all-gather.
                     "allgather_rd_us": c.get("allgather_rd_us", {}),
                     "allgather_rd_cpu_us": c.get("allgather_rd_cpu_us", {}),
                     "reducescatter_halving_us": c.get("reducescatter_halving_us", {}),
                     "reducescatter_halving_cpu_us": c.get("reducescatter_halving_cpu_us", {}),
                     # Runs before 2026-12-02 17:00 UTC (run 22) lack the ring all-gather.
                     "allgather_us": c.get("allgather_us", {}),
                     "allgather_cpu_us": c.get("allgather_cpu_us", {}),
                     # Runs before 2026-12-02 21:30 UTC (run 24) lack the ring reduce-scatter.
                     "reducescatter_us": c.get("reducescatter_us", {}),
                     "reducescatter_cpu_us": c.get("reducescatter_cpu_us", {})}
                 for t, c in r["calib"].items()}
        rounds.append({"started": r["started"], "ended": r["ended"], "calib": calib,
                       "membw": {int(k): tuple(v) for k, v in r["membw"].items()},
                       "points": {tuple(p["key"]): (p["us"], p["loom_ran"])
                                  for p in r["points"]},
                       # Runs before 2026-12-02 08:30 UTC (run 18) recorded no steal.
                       "point_steal": {tuple(p["key"]): p["steal_pct"] for p in r["points"]
                                       if "steal_pct" in p},
                       # Runs before run 34 (2026-12-03) kept no in-place time.
                       "point_ip": {tuple(p["key"]): p["ip_us"] for p in r["points"]
                                    if "ip_us" in p},
                       "steal_runs": r.get("steal_runs", []),
                       # Runs before run 27 (2026-12-03) had no discarded first run.
                       "warmup_run": r.get("warmup_run", False)})
    a.rounds = len(rounds)  # as the summary states it
    keys = list(rounds[0]["points"])
    uniq = lambda i: list(dict.fromkeys(k[i] for k in keys))
    score(a, rounds, uniq(0), sorted(uniq(2)), sorted(uniq(3)), uniq(1),
          d["started"] + f" (re-scored {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
          d["host"], a.rescore, *(("summary-rescored.md", "points-rescored.json")
                                  if a.first_rounds is None else
                                  (f"summary-first-{a.first_rounds}.md",
                                   f"points-first-{a.first_rounds}.json")),
          # Runs before the calibration had its own iterations (run 12) ran it as the all-reduce.
          d.get("calib_iters", "as the all-reduce runs (the 8 B latency 200)"),
          # Run 18, the first with steal, retried at once, at most twice.
          d.get("steal", {"max": 2.0, "retries": 2, "wait": 0.0}))


def rounds_text(rows, tol):
    """The summary's line on single rounds: how many of the rows' rounds lie within `tol` of their
    point's median (the measurement's own spread: the yardstick a median over a few rounds is
    held to), and per CPU column how many rounds' own simulated / measured (the column's ratio is
    their median) lie within `tol`."""
    within = lambda x: abs(x - 1) <= tol
    total = sum(len(r["runs_us"]) for r in rows)
    own = sum(within(u / r["measured_us"]) for r in rows for u in r["runs_us"])
    cols = [(name, sum(within(x) for r in rows for x in r[f"{c}_ratios"]))
            for c, _, name in CPU_COLUMNS if all(r[f"{c}_ratios"] for r in rows)]
    return [f"- Single rounds ({total}: {len(rows)} points x their rounds): {own} lie within "
            f"{tol:.0%} of their point's median (the measurement's own spread); each round's "
            "simulated / measured within it, by column: " +
            ("; ".join(f"{n}: {k}" for n, k in cols) if cols else "no column has every round")]


def same_schedule_pairs(rows):
    """The points measured twice: (forced ring row, planner row, planner / forced of their
    medians) on the same transport, ranks and size where the planner ran the very schedule the
    forced ring ran (on 2 ranks it always does) in every round. The medians differ by the
    measurement alone."""
    ring = {(r["transport"], r["ranks"], r["size"]): r for r in rows if r["algo"] == "ring"}
    return [(ring[k], r, r["measured_us"] / ring[k]["measured_us"])
            for r in rows if r["algo"] == "planner"
            for k in [(r["transport"], r["ranks"], r["size"])]
            if k in ring and r["loom_ran"].count("(") == 1 and r["loom_ran"] == ring[k]["loom_ran"]]


def repeat_text(rows, tol):
    """The summary's line on the measurement's repeatability: for each point measured twice (the
    forced ring and the planner running the same schedule, same_schedule_pairs), planner /
    forced of the medians, and how many of those lie within `tol` (a model that priced one of
    the two exactly would miss the other where they do not). [] when no pair exists."""
    q = [(x, f) for f, _, x in same_schedule_pairs(rows)]
    if not q:
        return []
    ok = sum(abs(x - 1) <= tol for x, _ in q)
    return [f"- Repeatability: {len(q)} point{'s' * (len(q) != 1)} ran the same schedule twice "
            "in each round (the forced ring and the planner's choice); planner / forced of their "
            "medians: " +
            ", ".join(f"{f['ranks']}r {human(f['size'])} {x:.2f}" for x, f in q) +
            f"; {ok} of {len(q)} within {tol:.0%} of each other"]


def inplace_text(rows, tol):
    """The summary's line on the driver's in-place column (measured in the same runs as the
    out-of-place one; every column simulates the out-of-place call): in-place / out-of-place of
    the medians, by transport and ranks, and per CPU column how many points' simulated / in-place
    (median over the rounds, the round's simulated time = its ratio x its out-of-place time) lie
    within `tol`. [] for runs that kept no in-place time."""
    rows = [r for r in rows if r.get("runs_ip_us")]
    if not rows:
        return []
    groups = {}
    for r in rows:
        groups.setdefault((r["transport"], r["ranks"]), []).append(
            r["measured_ip_us"] / r["measured_us"])
    cols, priced = [], []
    for c, _, name in CPU_COLUMNS:
        if not all(r[f"{c}_ratios"] for r in rows):
            continue
        ok = sum(abs(median([x * u / i for x, u, i in zip(r[f"{c}_ratios"], r["runs_us"],
                                                         r["runs_ip_us"])]) - 1) <= tol
                 for r in rows)
        cols.append(f"{name}: {ok}")
        if all(r.get(f"{c}_ip_ratio") is not None for r in rows):
            ok = sum(abs(r[f"{c}_ip_ratio"] - 1) <= tol for r in rows)
            priced.append(f"{name}: {ok}")
    out = [f"- In place (the driver's second column, same runs): in-place / out-of-place of the "
           "medians, median by transport and ranks: " +
           "; ".join(f"{t} {p}r {median(v):.2f}" for (t, p), v in groups.items()) +
           f". The out-of-place simulation within {tol:.0%} of the in-place time, of {len(rows)} "
           "points, by column: " + ("; ".join(cols) if cols else "no column has every round")]
    if priced:
        out.append(f"- **In place, simulated in place** (loom-plan --sim-in-place: the in-place "
                   "schedule, its reductions at membw_perf's in-place rate, dst = dst + x; the "
                   "column's other calibration as out of place): simulated / in-place of the "
                   f"rounds' median within {tol:.0%}, of {len(rows)} points, by column: " +
                   "; ".join(priced))
    return out


def steal_text(rounds, cfg):
    """The summary's lines on the hypervisor's steal time (cfg: the run's STEAL settings, "max",
    "retries", "wait"): how many driver runs ran again, how many kept runs still lost more than
    the limit, and the validated points' kept steal. [] for runs that recorded none."""
    runs = [x for r in rounds for x in r["steal_runs"]]
    pts = [v for r in rounds for v in r["point_steal"].values()]
    if not runs:
        return []
    again = sum(len(x["steal_pct"]) > 1 for x in runs)
    over = [min(x["steal_pct"]) for x in runs if min(x["steal_pct"]) > cfg["max"]]
    most, key = max((v, k) for r in rounds for k, v in r["point_steal"].items())
    return [f"- Steal (the hypervisor's, /proc/stat, over each timed loop): {again} of {len(runs)} "
            f"driver runs ran again for losing more than {cfg['max']:g}% (up to "
            f"{cfg['retries']} more tries after {cfg['wait']:g} s of rest, doubling, the try "
            f"with the least steal kept); {len(over)} kept "
            f"runs still lost more" + (f" (at most {max(over):.1f}%)" if over else "") +
            f". The validated all-reduces' kept steal: median {median(pts):.1f}%, most "
            f"{most:.1f}% ({' '.join(str(x) for x in key)})."]


def calib_text(a, sizes):
    """The calibration runs' iterations, as the summary states them."""
    return ", ".join(f"{human(s)} {n}" for s, n in calib_iters(a, sizes).items()) + \
        f" (the 8 B latency {LATENCY_ITERS})"


def score(a, rounds, transports, ranks, sizes, algos, started, host, out_dir, summary_name,
          points_name, calib_iters_text, steal_cfg):
    """Simulates every point of `rounds` in the four columns and writes the summary and the raw
    numbers (out_dir/summary_name, out_dir/points_name). `calib_iters_text`: the calibration
    runs' iterations (calib_text), stored and stated."""
    # Calibrated once: the medians over the rounds.
    swept = sorted(rounds[0]["membw"])
    red = {s: median([r["membw"][s][1] for r in rounds]) for s in swept}
    mcpy = {s: median([r["membw"][s][0] for r in rounds]) for s in swept}
    calib = {}
    for t in transports:
        alpha = median([r["calib"][t]["alpha_us"] for r in rounds])
        sr = {s: median([r["calib"][t]["sendrecv_us"][s] for r in rounds]) for s in sizes}
        over = {p: {s: median([r["calib"][t]["sendrecv_p_us"][p][s] for r in rounds])
                    for s in sizes} for p in ranks if p > a.cores}
        calib[t] = {"alpha_us": alpha, "sendrecv_us": sr, "sendrecv_p_us": over,
                    "params": params_of(t, alpha, sr, red, a.cores),
                    "oversub_f": {p: {s: oversub_factor(alpha, sr[s], over[p][s], p, a.cores)
                                      for s in sizes} for p in over}}

    rows = []
    for t in transports:
        for algo in algos:
            for p in ranks:
                for s in sizes:
                    k = (t, algo, p, s)
                    runs = [r["points"][k][0] for r in rounds]
                    ran = sorted({r["points"][k][1] for r in rounds})
                    m = median(runs)
                    dec, model_us, sim_us = simulate(a.build, t, p, s, calib[t]["params"][s],
                                                     algo, a.cores)
                    f = calib[t]["oversub_f"].get(p, {}).get(s, 1.0)
                    sim_o = sim_us
                    if p > a.cores:
                        rate = s / max(1e-3, calib[t]["sendrecv_us"][s] - calib[t]["alpha_us"])
                        sim_o = simulate(a.build, t, p, s, calib[t]["params"][s], algo, a.cores,
                                         2 * rate / 1e3 * f)[2]
                    msg = simulate_by_message(a, rounds, k)
                    row = {"transport": t, "algo": algo, "ranks": p, "size": s,
                           "msg_bytes": msg["bytes"], "msg_sim_us": msg["sim_us"],
                           "msg_ratio": msg["ratio"], "msg_same": msg["same"],
                           "msg_pass": abs(msg["ratio"] - 1) <= a.tolerance}
                    for c, above, _ in CPU_COLUMNS:
                        res = simulate_cpu(a, rounds, k, above)
                        for fitted in ("alpha_us", "reduce_gbps"):
                            if res and fitted in res:
                                row[f"{c}_{fitted}"] = res[fitted]
                        if res and "ip_ratios" in res:
                            row.update({f"{c}_ip_ratio": res["ip_ratio"],
                                        f"{c}_ip_ratios": res["ip_ratios"]})
                        row.update({f"{c}_sim_us": res and res["sim_us"],
                                    f"{c}_ratio": res and res["ratio"],
                                    f"{c}_ratios": res and res["ratios"],
                                    f"{c}_pass": bool(res) and
                                    abs(res["ratio"] - 1) <= a.tolerance})
                    rows.append(row)
                    row.update({"decision": dec, "loom_ran": ",".join(ran), "measured_us": m,
                                "runs_us": runs, "simulated_us": sim_us, "model_us": model_us,
                                "ratio": sim_us / m, "pass": abs(sim_us / m - 1) <= a.tolerance,
                                "oversub_f": f, "simulated_oversub_us": sim_o,
                                "ratio_oversub": sim_o / m,
                                "pass_oversub": abs(sim_o / m - 1) <= a.tolerance})
                    ips = [r["point_ip"].get(k) for r in rounds]
                    if all(x is not None for x in ips):
                        row.update({"runs_ip_us": ips, "measured_ip_us": median(ips)})

    out = ["| transport | schedule | ranks | size | decision (simulated) | loom ran | "
           "measured us (median) | rounds min-max | simulated us | sim/measured | | "
           "oversub. f | simulated us, f | sim/measured, f | | message | simulated us, "
           "chunked | sim/measured per round, chunked | | " +
           " ".join(f"simulated us, {name} | sim/measured per round, {name} | |"
                    for _, _, name in CPU_COLUMNS),
           "|---" * (19 + 3 * len(CPU_COLUMNS)) + "|"]
    for r in rows:
        same = r["loom_ran"] == r["decision"]
        out.append(f"| {r['transport']} | {r['algo']} | {r['ranks']} | {human(r['size'])} | "
                   f"{r['decision']} | {'same' if same else r['loom_ran']} | "
                   f"{r['measured_us']:.0f} | {min(r['runs_us']):.0f}-{max(r['runs_us']):.0f} | "
                   f"{r['simulated_us']:.0f} | {r['ratio']:.2f} | "
                   f"{'PASS' if r['pass'] else 'MISS'} | {r['oversub_f']:.2f} | "
                   f"{r['simulated_oversub_us']:.0f} | {r['ratio_oversub']:.2f} | "
                   f"{'PASS' if r['pass_oversub'] else 'MISS'} | {human_msg(r['msg_bytes'])}"
                   f"{'' if r['msg_same'] else ' (chunk differs)'} | {r['msg_sim_us']:.0f} | "
                   f"{r['msg_ratio']:.2f} | {'PASS' if r['msg_pass'] else 'MISS'} | "
                   + " ".join(f"{r[c + '_sim_us']:.0f} | {r[c + '_ratio']:.2f} | "
                             f"{'PASS' if r[c + '_pass'] else 'MISS'} |" if r[c + "_ratio"] else
                             "n/a | n/a | |" for c, _, _ in CPU_COLUMNS))
    n = sum(r["pass"] for r in rows)
    n_o = sum(r["pass_oversub"] for r in rows)
    n_m = sum(r["msg_pass"] for r in rows)
    n_c = sum(r["cpu_pass"] for r in rows)
    lines = [f"# Simulator vs loom on this machine ({host}, {os.cpu_count()} CPUs), {started}", "",
             "float32 sum all-reduce, out of place, iterations per run: " + ", ".join(
                 f"{human(s)} {iters_for(s, a.iters, a.moved)}" for s in sizes) + " (warm-up a "
             f"tenth, at least 3; each size its own run" +
             ("; each transport's points after one discarded run of its first point"
              if all(r.get("warmup_run") for r in rounds) else "") + "), calibration runs "
             f"{calib_iters_text}, median of "
             f"{a.rounds} rounds (each round under the measurement lock: "
             + ", ".join(f"{r['started']}-{r['ended']}" for r in rounds) + " UTC); loom's own "
             "decision under LOOM_PLAN_PARAMS (column 'loom ran'); simulated with `loom-plan "
             f"--simulate --sim-always --sim-cores {a.cores}`: the ranks are processes sharing "
             f"{a.cores} cores max-min (a byte sent or received costs a core 1 / (2 x the flow "
             "rate), a byte reduced on receipt 1 / the reduction rate, reductions and copies of "
             "all ranks share the same cores as flows share a link; a pair of ranks moves at most "
             f"the flow rate). PASS: simulated within {a.tolerance:.0%} of measured.", "",
             "Calibrated once, from the medians of measurements apart from the validated runs: per "
             "size, sendrecv_perf on 2 ranks (both send and receive S at once: one flow's rate; "
             "8 B: the latency) and membw_perf's loom-red (one core's reduction rate at that "
             "size's working set).", ""]
    lines += out + ["", f"**{n} of {len(rows)} points within {a.tolerance:.0%}** (2-rank "
                    f"calibration); **{n_o} of {len(rows)}** with the oversubscription "
                    "calibration (f: p-rank sendrecv, applied to the cores' transfer rate); "
                    f"**{n_m} of {len(rows)}** with the point-by-point chunked calibration (each "
                    "round's schedule simulated with the 2-rank sendrecv of the same bytes in "
                    "messages of the schedule's size, run right after it, and that round's f; "
                    f"median over the rounds of simulated / measured); **{n_c} of {len(rows)}** "
                    "with the CPU-time calibration (the same messages, but a core's cost per byte "
                    "from the sendrecv's CPU time, not its wall time; the latency from the p-rank "
                    "sendrecv of 8 B; over tcp, the reduction rate at one message's working "
                    "set" + ("; over shm, a pair's handoff held 1 / the reduction rate - 1 / "
                             "membw_perf's memcpy rate longer per byte its receiver reduces out "
                             "of the ring, --sim-pair-copy-gbps" if a.pair_copy else "") +
                    ")" + "".join(f"; **{sum(r[f'{c}_pass'] for r in rows)} of {len(rows)}** "
                                     f"{SUMMARY_TEXT[c]}" for c, _, _ in CPU_COLUMNS[1:]
                                     if all(r[f"{c}_ratio"] for r in rows)) +
                    ".", ""]
    lines += rounds_text(rows, a.tolerance)
    lines += repeat_text(rows, a.tolerance)
    lines += inplace_text(rows, a.tolerance)

    def by_key(t, name):
        """"p:S:m: us; ..." of calib[name] (median of the rounds that ran each), "" if none."""
        ds = [r["calib"][t][name] for r in rounds]
        keys = sorted({k for d in ds for k in d}, key=lambda k: [int(x) for x in k.split(":")])
        return "; ".join(f"{k}: {median([d[k] for d in ds if k in d]):.0f}" for k in keys)

    for t in transports:
        lines.append(f"- {t}: sendrecv of S in messages of m on p ranks, us (median of the rounds "
                     "that ran it), p:S:m: " + by_key(t, "chunked_us"))
        if by_key(t, "lockstep_us"):
            lines.append(f"- {t}: the same in lock-step, us: " + by_key(t, "lockstep_us"))
        if by_key(t, "allgather_rd_us"):
            lines.append(f"- {t}: loom's recursive-doubling all-gather of S on p ranks "
                         "(pairwise schedules' points), us, p:S: " + by_key(t, "allgather_rd_us") +
                         "; its recursive-halving reduce-scatter, us: " +
                         by_key(t, "reducescatter_halving_us"))
        if by_key(t, "pairwise_us"):
            lines.append(f"- {t}: the same, each rank with rank ^ 1 (pairwise schedules' points), "
                         "us: " + by_key(t, "pairwise_us") + "; its CPU time, us: " +
                         by_key(t, "pairwise_cpu_us"))
        if by_key(t, "allgather_us"):
            lines.append(f"- {t}: ring all-gather of S on p ranks, us, p:S: " +
                         by_key(t, "allgather_us") + "; its fitted latency, us: " + "; ".join(
                             f"{r['ranks']}:{r['size']} {r['algo']}: {r['cpu_g_alpha_us']:.0f}"
                             for r in rows if r["transport"] == t and "cpu_g_alpha_us" in r))
        if by_key(t, "reducescatter_us"):
            lines.append(f"- {t}: ring reduce-scatter of S on p ranks, us, p:S: " +
                         by_key(t, "reducescatter_us") + "; its fitted reduction rate, GB/s: " +
                         "; ".join(f"{r['ranks']}:{r['size']} {r['algo']}: "
                                   f"{r['cpu_gr_reduce_gbps']:.2f}" for r in rows
                                   if r["transport"] == t and "cpu_gr_reduce_gbps" in r))
    for t in transports:
        lines.append(f"- {t}: latency {calib[t]['alpha_us']:.1f} us; " + "; ".join(
            f"{human(s)}: {calib[t]['params'][s]}" for s in sizes))
        for q, fs in calib[t]["oversub_f"].items():
            lines.append(f"- {t}: sendrecv on {q} ranks, us (f): " + "; ".join(
                f"{human(s)}: {calib[t]['sendrecv_p_us'][q][s]:.0f} ({fs[s]:.2f})" for s in sizes))
    lines += steal_text(rounds, steal_cfg)
    red_ip = ({s: median([r["membw"][s][2] for r in rounds]) for s in swept}
              if all(len(v) > 2 for r in rounds for v in r["membw"].values()) else {})
    lines += ["", "One core (membw_perf, median): " + "; ".join(
        f"{human(s)}: memcpy {mcpy[s]:.2f}, loom-red {red[s]:.2f}" +
        (f", in place {red_ip[s]:.2f}" if s in red_ip else "") + " GB/s" for s in swept), ""]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, summary_name), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, points_name), "w") as f:
        json.dump({"rows": rows, "calibration": calib, "reduce_gbps": red, "memcpy_gbps": mcpy,
                   "rounds": [{"started": r["started"], "ended": r["ended"], "membw": r["membw"],
                               "calib": r["calib"],
                               "points": [dict({"key": list(k), "us": v[0], "loom_ran": v[1]},
                                               **({"steal_pct": r["point_steal"][k]}
                                                  if k in r["point_steal"] else {}),
                                               **({"ip_us": r["point_ip"][k]}
                                                  if k in r["point_ip"] else {}))
                                          for k, v in r["points"].items()],
                               "steal_runs": r["steal_runs"],
                               **({"warmup_run": True} if r.get("warmup_run") else {})}
                              for r in rounds],
                   "started": started, "host": host, "calib_iters": calib_iters_text,
                   "cores": a.cores, "steal": steal_cfg, "alpha_cpu": ALPHA_CPU["value"],
                   "shm_ring_bytes": SHM_RING["bytes"]}, f,
                  indent=1, default=str)
    print(text)


if __name__ == "__main__":
    main()
