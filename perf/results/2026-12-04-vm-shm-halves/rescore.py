"""Offline check (in sample; nothing measured) of validate_local.py's last column (cpu_gx) against
the host-set column it builds on (cpu_gw). Run at 2a0110d, the column then had two changes:
- over tcp, where the ring all-gather measured beside a point runs faster than the simulator
  prices it at the least latency and the core fitted to it, one flow's rate fitted to that
  all-gather too (dropped after this check: see summary.md);
- over shm above the cores, a Rabenseifner's reduction rate fitted to the recursive-halving
  reduce-scatter measured beside it, never below membw_perf's rate out of memory (kept: the
  "..., shm Rabenseifner's reductions from its reduce-scatter" column).

Usage: rescore.py BUILD OUTDIR RUNDIR/PART [RUNDIR/PART ...]. For each part it rescores a copy of
points.json with validate_local.py --rescore --cores 2, only those two columns (and "cpu", which
the summary needs) simulated, and prints both columns' ratios, the fitted flow rate and reduction
rate against the host-set column's (per round, where any differs), and the pass counts."""
import importlib.util, json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
VL = os.path.join(HERE, "..", "..", "sim", "validate_local.py")


def load():
    spec = importlib.util.spec_from_file_location("vl", VL)
    vl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vl)
    return vl


def main():
    build, outdir, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
    total = {"cpu_gw": 0, "cpu_gx": 0, "n": 0}
    for part in parts:
        vl = load()
        vl.CPU_COLUMNS = [c for c in vl.CPU_COLUMNS if c[0] in ("cpu", "cpu_gw", "cpu_gx")]
        rates = {}  # key -> [(fitted / host-set rate, fitted / host-set reduction rate) per round]
        orig = vl.cpu_round

        def cpu_round(a, r, key, above, orig=orig, vl=vl):
            x = orig(a, r, key, above)
            if x is not None and above == vl.CPU_COLUMNS[-1][1]:  # cpu_gx's
                base = orig(a, r, key, vl.HOST_SET)  # cpu_gw's
                rates.setdefault(key, []).append((x["rate"] / base["rate"],
                                                  x["red"] / base["red"]))
            return x
        vl.cpu_round = cpu_round
        name = part.rstrip("/").replace("/", "_")
        out = os.path.join(outdir, name)
        os.makedirs(out, exist_ok=True)
        shutil.copy(os.path.join(part, "points.json"), out)
        sys.argv = ["validate_local.py", "--build", build, "--rescore", out, "--cores", "2"]
        with open(os.devnull, "w") as null:
            so, sys.stdout = sys.stdout, null
            try:
                vl.main()
            finally:
                sys.stdout = so
        rows = json.load(open(os.path.join(out, "points-rescored.json")))["rows"]
        nw = sum(1 for r in rows if r.get("cpu_gw_pass"))
        nx = sum(1 for r in rows if r.get("cpu_gx_pass"))
        total["cpu_gw"] += nw
        total["cpu_gx"] += nx
        total["n"] += len(rows)
        print(f"## {part}: host set {nw} of {len(rows)}, cpu_gx {nx} of {len(rows)}")
        for r in rows:
            k = (r["transport"], r["algo"], r["ranks"], r["size"])
            f = rates.get(k, [])
            fr = ""
            if any(v[0] != 1 for v in f):
                fr += "rate x " + ",".join(f"{v[0]:.2f}" for v in f) + " "
            if any(v[1] != 1 for v in f):
                fr += "reduction x " + ",".join(f"{v[1]:.2f}" for v in f)
            w, x = r.get("cpu_gw_ratio"), r.get("cpu_gx_ratio")
            if w is None:
                continue
            flag = "" if r["cpu_gw_pass"] == r["cpu_gx_pass"] else (
                "  (now PASS)" if r["cpu_gx_pass"] else "  (now MISS)")
            print(f"  {k[0]} {k[1]:8s} p{k[2]} {k[3] >> 20:3d} MiB  {w:.2f} -> {x:.2f}  {fr}{flag}")
        sys.stdout.flush()
    print(f"# all parts: host set {total['cpu_gw']} of {total['n']}, "
          f"cpu_gx {total['cpu_gx']} of {total['n']}")


if __name__ == "__main__":
    main()
