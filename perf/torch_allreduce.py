#!/usr/bin/env python3
"""float32 all-reduce from PyTorch: the loom backend vs the Gloo backend vs loom's C API (ctypes,
blocking call, no stream), interleaved in one run, 8 B to 64 MiB.

    PYTHONPATH=build/python /usr/bin/python3 perf/torch_allreduce.py [--np 2 4] [--reps 5]
        [--max-bytes 67108864] [--out perf/results/torch-allreduce/summary.md]

For every size and repetition each path runs `iters` calls back to back after a barrier, in turn
(loom, gloo, C API), so load changes hit all three alike; the table shows the median per-call time
over the repetitions on rank 0 and the bus bandwidth 2(p-1)/p * bytes / time (as nccl-tests).
A benchmark, not a test: nothing is asserted.
"""
import argparse
import ctypes
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def lib_path():
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.environ.get("LOOM_LIB", ""), os.path.join(here, "..", "build", "libloom.so")):
        if p and os.path.exists(p):
            return p
    return "libloom.so"


class CApi:
    """loom's C API through ctypes: one communicator bootstrapped through the torch store."""

    def __init__(self, store, rank, world):
        self.lib = ctypes.CDLL(lib_path())
        class UniqueId(ctypes.Structure):  # loomUniqueId, passed by value
            _fields_ = [("internal", ctypes.c_ubyte * 128)]

        uid = UniqueId()
        if rank == 0:
            assert self.lib.loomGetUniqueId(ctypes.byref(uid)) == 0
            store.set("perf_c_api_id", bytes(uid.internal))
        else:
            ctypes.memmove(ctypes.addressof(uid), store.get("perf_c_api_id"), 128)
        self.comm = ctypes.c_void_p()
        self.lib.loomCommInitRank.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                              UniqueId, ctypes.c_int]
        r = self.lib.loomCommInitRank(ctypes.byref(self.comm), world, uid, rank)
        assert r == 0, f"loomCommInitRank -> {r}"
        self.lib.loomAllReduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                           ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                           ctypes.c_void_p]

    def all_reduce(self, t):
        p = t.data_ptr()
        r = self.lib.loomAllReduce(p, p, t.numel(), 7, 0, self.comm, None)  # float32, sum
        if r != 0:
            raise RuntimeError(f"loomAllReduce -> {r}")


def worker(rank, world, init, args):
    import torch
    import torch.distributed as dist
    import loom_torch  # noqa: F401

    torch.set_num_threads(1)
    dist.init_process_group("loom", init_method=init, rank=rank, world_size=world,
                            timeout=datetime.timedelta(minutes=10))
    gloo = dist.new_group(backend="gloo")
    capi = CApi(dist.distributed_c10d._get_default_store(), rank, world)
    paths = {
        "loom": lambda t: dist.all_reduce(t),
        "gloo": lambda t: dist.all_reduce(t, group=gloo),
        "C API": capi.all_reduce,
    }
    sizes = []
    b = 8
    while b <= args.max_bytes:
        sizes.append(b)
        b *= 8 if b < 1024 else 4
    rows = []
    for nbytes in sizes:
        t = torch.ones(nbytes // 4)
        iters = max(2, min(200, (32 << 20) // (nbytes * 8)))
        times = {k: [] for k in paths}
        for fn in paths.values():  # warm up (connections, schedules)
            fn(t)
        for _ in range(args.reps):
            for name, fn in paths.items():
                dist.barrier(group=gloo)
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn(t)
                times[name].append((time.perf_counter() - t0) / iters)
        med = {k: statistics.median(v) for k, v in times.items()}
        rows.append((nbytes, iters, med))
    dist.barrier(group=gloo)
    if rank == 0:
        with open(args.result, "w") as f:
            for nbytes, iters, med in rows:
                f.write(f"{nbytes} {iters} {med['loom']} {med['gloo']} {med['C API']}\n")
    dist.destroy_process_group()


def fmt_bytes(b):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= k:
            return f"{b // k} {unit}"
    return f"{b} B"


def table(world, lines):
    out = [f"### {world} processes\n",
           "| size | loom us | gloo us | C API us | loom busbw GB/s | gloo busbw GB/s | "
           "loom/gloo busbw | loom - C API us |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    f = 2 * (world - 1) / world
    for line in lines:
        nbytes, _, tl, tg, tc = line.split()
        nbytes, tl, tg, tc = int(nbytes), float(tl), float(tg), float(tc)
        bl, bg = f * nbytes / tl / 1e9, f * nbytes / tg / 1e9
        out.append(f"| {fmt_bytes(nbytes)} | {tl * 1e6:.1f} | {tg * 1e6:.1f} | {tc * 1e6:.1f} | "
                   f"{bl:.3f} | {bg:.3f} | {bl / bg:.1f}x | {(tl - tc) * 1e6:+.1f} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--np", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--max-bytes", type=int, default=64 << 20)
    ap.add_argument("--out", default="")
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(int(args.worker[0]), int(args.worker[1]), args.worker[2], args)
        return
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines()
                  if l.startswith("Model name")), platform.processor())
    head = (f"# float32 all-reduce from PyTorch: loom backend vs Gloo backend vs loom C API\n\n"
            f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {model}, {os.cpu_count()} CPUs, "
            f"torch {__import__('torch').__version__}; `perf/torch_allreduce.py --reps "
            f"{args.reps}`; median per-call time on rank 0 of {args.reps} interleaved "
            f"repetitions; busbw = 2(p-1)/p x bytes / time. C API = ctypes call of loomAllReduce "
            f"(blocking, no stream); loom = `dist.all_reduce` (queued on the group's loom stream, "
            f"then waited).\n\n")
    text = head
    for world in args.np:
        tmp = tempfile.mkdtemp(prefix="loom-perf-")
        result = os.path.join(tmp, "result.txt")
        init = f"file://{tmp}/rdv"
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", str(r),
                                   str(world), init, "--reps", str(args.reps), "--max-bytes",
                                   str(args.max_bytes), "--result", result])
                 for r in range(world)]
        rcs = [p.wait() for p in procs]
        if any(rcs):
            sys.exit(f"world {world}: worker exit codes {rcs}")
        with open(result) as f:
            t = table(world, f.read().splitlines())
        shutil.rmtree(tmp, ignore_errors=True)
        print(t, flush=True)
        text += t + "\n"
    if args.out:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
