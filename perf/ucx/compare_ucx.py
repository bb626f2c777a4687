#!/usr/bin/env python3
"""loom's ucx transport against UCX itself and against loom's other transports, in one run.

  p2p        sendrecv_perf over LOOM_TRANSPORT=ucx (2 forked ranks, each sends to and receives
             from the other at once) vs `ucx_perftest -t tag_bw` (one direction), same UCX_TLS,
             per size from --p2p-sizes
  allreduce  all_reduce_perf under mpirun: loom over ucx (per UCX_TLS), tcp and shm, and Open MPI
             with its UCX PML (--mca pml ucx, same UCX_TLS), per rank count, -b..-e sizes

Every program runs --reps times, interleaved (rep 1 of everything, then rep 2 ...), and each
figure is the median over the repetitions. Writes summary.md and all.jsonl under --out.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MIB = 1 << 20


def parse_size(text):
    t = text.strip().upper().replace("IB", "").rstrip("B")
    num = t.rstrip("KMG")
    return int(float(num) * {"": 1, "K": 1024, "M": MIB, "G": 1 << 30}[t[len(num):]])


def human(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1024)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return "%d B" % n


def args_():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--tls", default="tcp,sm", help="UCX_TLS values to compare (tcp,sm)")
    p.add_argument("--p2p-sizes", default="4M,16M,64M")
    p.add_argument("--p2p-iters", type=int, default=20)
    p.add_argument("--ranks", default="2,4", help="all-reduce rank counts (2,4)")
    p.add_argument("-b", default="8")
    p.add_argument("-e", default="64M")
    p.add_argument("-f", default="8", help="all-reduce size factor (8)")
    p.add_argument("-n", default="10", help="all-reduce timed iterations (10)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--skip", default="", help="comma list of parts to skip: p2p, allreduce")
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=int, default=600)
    return p.parse_args()


def run(cmd, env_extra, timeout):
    env = dict(os.environ, **env_extra)
    print("# " + " ".join("%s=%s" % kv for kv in env_extra.items()) + " " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        print("#   FAILED (%d): %s %s" % (r.returncode, r.stdout[-2000:], r.stderr[-2000:]), flush=True)
    return r


def loom_rows(cmd, env, timeout):
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    r = run(cmd + ["-J", path], env, timeout)
    rows = []
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    os.unlink(path)
    return rows if r.returncode == 0 else []


def best_gbs(row, key):
    c = [p for p in (row.get("oop"), row.get("ip")) if p and p.get("wrong", 0) == 0]
    return max(p[key] for p in c) if c else None


def perftest(size, iters, tls, port, timeout):
    """ucx_perftest tag_bw over localhost: bandwidth in GB/s (10^9), or None."""
    env = dict(os.environ, UCX_TLS=tls)
    common = ["-t", "tag_bw", "-s", str(size), "-n", str(iters), "-w", "2", "-p", str(port)]
    srv = subprocess.Popen(["ucx_perftest"] + common, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    try:
        r = run(["ucx_perftest", "127.0.0.1"] + common, {"UCX_TLS": tls}, timeout)
    finally:
        try:
            srv.wait(timeout=30)
        except subprocess.TimeoutExpired:
            srv.kill()
    m = re.search(r"^Final:\s+\d+\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", r.stdout, re.M)
    # Columns: 50%ile, average, overall overhead (us); average, overall bandwidth (MB/s = 2^20 B/s).
    return float(m.group(5)) * MIB / 1e9 if m else None


def measure(a, data):
    perf = os.path.join(a.build, "perf")
    tls_list = [t for t in a.tls.split(",") if t]
    skip = set(a.skip.split(","))
    port = 13500
    for rep in range(a.reps):
        if "p2p" not in skip:
            for tls in tls_list:
                for s in [parse_size(x) for x in a.p2p_sizes.split(",")]:
                    rows = loom_rows([os.path.join(perf, "sendrecv_perf"), "--ranks", "2", "-b", str(s),
                                      "-e", str(s), "-n", str(a.p2p_iters), "-w", "2", "-z", "1"],
                                     {"LOOM_TRANSPORT": "ucx", "UCX_TLS": tls}, a.timeout)
                    for row in rows:
                        data.append({"part": "p2p", "tls": tls, "who": "loom_ucx", "size": s, "rep": rep,
                                     "gbs": best_gbs(row, "algbw")})
                    port += 1
                    data.append({"part": "p2p", "tls": tls, "who": "ucx_perftest", "size": s, "rep": rep,
                                 "gbs": perftest(s, a.p2p_iters, tls, port, a.timeout)})
        if "allreduce" in skip:
            continue
        exe = os.path.join(perf, "all_reduce_perf")
        sweep = ["-b", a.b, "-e", a.e, "-f", a.f, "-n", a.n, "-w", "1", "-c", "1"]
        for n in [int(x) for x in a.ranks.split(",") if x]:
            mpirun = ["mpirun", "-np", str(n), "--allow-run-as-root", "--oversubscribe"]
            configs = [("loom_ucx_" + t, ["-x", "LOOM_TRANSPORT=ucx", "-x", "UCX_TLS=" + t], "loom")
                       for t in tls_list]
            configs += [("loom_tcp", ["-x", "LOOM_TRANSPORT=tcp"], "loom"),
                        ("loom_shm", ["-x", "LOOM_TRANSPORT=shm"], "loom")]
            # Open MPI 4.1's UCX PML takes only RDMA transports unless told otherwise.
            configs += [("mpi_ucx_" + t, ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any",
                                          "--mca", "pml_ucx_devices", "any", "-x", "UCX_TLS=" + t], "mpi")
                        for t in tls_list]
            for who, extra, backend in configs:
                z = ["-z", "1"] if backend == "loom" else []
                for row in loom_rows(mpirun + extra + [exe] + sweep + ["--backend", backend] + z, {}, a.timeout):
                    data.append({"part": "allreduce", "ranks": n, "who": who, "size": row["size"],
                                 "rep": rep, "gbs": best_gbs(row, "busbw")})


def med(data, **key):
    v = [d["gbs"] for d in data if d.get("gbs") is not None and all(d.get(k) == x for k, x in key.items())]
    return statistics.median(v) if v else None


def fmt(v, d=3):
    return "-" if v is None else "%.*f" % (d, v)


def summarize(a, data):
    out = ["# loom ucx transport: comparison", "",
           "Host %s, %d CPUs, %s; UCX %s. Medians of %d interleaved repetitions. The machine was "
           "shared with other builds and tests while this ran: absolute numbers are low and noisy, "
           "ratios within one run are what this measures." % (
               socket.gethostname(), os.cpu_count(), datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"),
               subprocess.run(["pkg-config", "--modversion", "ucx"], capture_output=True, text=True).stdout.strip(),
               a.reps), ""]
    p2p = [d for d in data if d["part"] == "p2p"]
    if p2p:
        out += ["## Point to point: sendrecv_perf over ucx vs ucx_perftest tag_bw", "",
                "loom: 2 ranks, each sending to and receiving from the other at once (GB/s per direction); "
                "ucx_perftest: one direction.", "",
                "| UCX_TLS | size | loom ucx GB/s | ucx_perftest GB/s | loom/perftest |", "|---|---|---|---|---|"]
        for tls in sorted({d["tls"] for d in p2p}):
            for s in sorted({d["size"] for d in p2p if d["tls"] == tls}):
                l, u = med(p2p, tls=tls, who="loom_ucx", size=s), med(p2p, tls=tls, who="ucx_perftest", size=s)
                out.append("| %s | %s | %s | %s | %s |" % (tls, human(s), fmt(l), fmt(u),
                                                           fmt(l / u if l and u else None, 2)))
        out.append("")
    ar = [d for d in data if d["part"] == "allreduce"]
    for n in sorted({d["ranks"] for d in ar}):
        rows = [d for d in ar if d["ranks"] == n]
        whos = sorted({d["who"] for d in rows}, key=lambda w: (not w.startswith("loom_ucx"), w))
        out += ["## All-reduce, %d ranks: bus bandwidth GB/s" % n, "",
                "| size | " + " | ".join(whos) + " |", "|---|" + "---|" * len(whos)]
        for s in sorted({d["size"] for d in rows}):
            out.append("| %s | " % human(s) + " | ".join(fmt(med(rows, who=w, size=s)) for w in whos) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def main():
    a = args_()
    if not shutil.which("ucx_perftest"):
        sys.exit("ucx_perftest not found (Debian: ucx-utils)")
    out = a.out or os.path.join(ROOT, "perf", "results", "ucx-" + datetime.datetime.utcnow().strftime("%Y%m%d-%H%M"))
    os.makedirs(out, exist_ok=True)
    data = []
    measure(a, data)
    with open(os.path.join(out, "all.jsonl"), "w") as f:
        for d in data:
            f.write(json.dumps(d) + "\n")
    text = summarize(a, data)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
