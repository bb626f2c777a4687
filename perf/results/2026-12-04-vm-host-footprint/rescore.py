"""Offline check of one hypothesis (in sample; nothing measured): over shm, price the reductions of
the "... ring's core from the all-gather" column (cpu_ga) at membw_perf's rate for the working set
of ALL the host's ranks, not one rank's. membw_perf's reduction at size n touches about 3n bytes
(dst, a, b); p ranks of an out-of-place all-reduce of S touch about 2pS (each its send and receive
buffers), so the rate is taken at the swept size nearest 2pS/3 (on 2 ranks: S, as before).

Usage: rescore.py BUILD OUTDIR RUNDIR/shm [RUNDIR/shm-1m ...]. For each part it rescores a copy of
points.json twice with validate_local.py --rescore --cores 2, as is and with the rate patched into
cpu_round, and prints the cpu_ga ratios and pass counts of both."""
import copy, importlib.util, json, math, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
VL = os.path.join(HERE, "..", "..", "sim", "validate_local.py")
GA = "all-gather, own all-gather, receipt, capped, ring core"


def load():
    spec = importlib.util.spec_from_file_location("vl", VL)
    vl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vl)
    return vl


def host_rate(membw, p, s, col):
    n = 2 * p * s / 3
    return membw[min(membw, key=lambda z: abs(math.log2(z / n)))][col]


def rescore(build, src, out, patched):
    vl = load()
    if patched:
        orig = vl.cpu_round

        def cpu_round(a, r, key, above):
            x = orig(a, r, key, above)
            if x is None or key[0] != "shm" or above != GA:
                return x
            p, s = key[2], key[3]
            x = dict(x)
            x["red"] = host_rate(r["membw"], p, s, 1)
            if x["red_ip"]:
                x["red_ip"] = host_rate(r["membw"], p, s, 2)
            return x
        vl.cpu_round = cpu_round
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(src, "points.json"), out)
    sys.argv = ["validate_local.py", "--build", build, "--rescore", out, "--cores", "2"]
    vl.main()
    rows = json.load(open(os.path.join(out, "points-rescored.json")))["rows"]
    return {(r["transport"], r["algo"], r["ranks"], r["size"]): (r.get("cpu_ga_ratio"),
            r.get("cpu_ga_pass")) for r in rows}


def main():
    build, outdir, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
    for part in parts:
        name = part.rstrip("/").replace("/", "_")
        base = rescore(build, part, os.path.join(outdir, name, "as-is"), False)
        host = rescore(build, part, os.path.join(outdir, name, "host"), True)
        nb = sum(1 for v in base.values() if v[1])
        nh = sum(1 for v in host.values() if v[1])
        print(f"## {part}: cpu_ga passes {nb} as is, {nh} with the host's working set")
        for k in sorted(base):
            b, h = base[k], host[k]
            if b[0] is None:
                continue
            print(f"  {k[0]} {k[1]:8s} p{k[2]} {k[3] >> 20:3d} MiB  {b[0]:.2f} -> {h[0]:.2f}"
                  f"{'' if b[1] == h[1] else ('  (now PASS)' if h[1] else '  (now MISS)')}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
