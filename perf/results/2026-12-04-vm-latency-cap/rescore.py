"""Offline check (in sample; nothing measured) of validate_local.py's column "..., latency no larger
than at the smallest size" (cpu_gz) against the shm-halves column it builds on (cpu_gx): on ranks
within the cores, the per-message latency fitted to the ring all-gather at a size is capped at
the one fitted at the round's smallest size on those ranks.

Usage: rescore.py BUILD OUTDIR RUNDIR/PART [RUNDIR/PART ...]. For each part it rescores a copy of
points.json with validate_local.py --rescore --cores 2, only those two columns (and "cpu", which
the summary needs) simulated, and prints both columns' ratios, the latencies (us, per round)
where they differ, and the pass counts."""
import importlib.util, json, os, shutil, sys

HERE = os.path.dirname(os.path.abspath(__file__))
VL = os.path.join(HERE, "..", "..", "sim", "validate_local.py")
BASE, NEW = "cpu_gx", "cpu_gz"


def load():
    spec = importlib.util.spec_from_file_location("vl", VL)
    vl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vl)
    return vl


def main():
    build, outdir, parts = sys.argv[1], sys.argv[2], sys.argv[3:]
    total = {BASE: 0, NEW: 0, "n": 0}
    for part in parts:
        vl = load()
        vl.CPU_COLUMNS = [c for c in vl.CPU_COLUMNS if c[0] in ("cpu", BASE, NEW)]
        above = {c[0]: c[1] for c in vl.CPU_COLUMNS}
        alphas = {}  # key -> [(base's latency, new latency) per round]
        orig = vl.cpu_round

        def cpu_round(a, r, key, col, orig=orig):
            x = orig(a, r, key, col)
            if x is not None and col == above[NEW]:
                base = orig(a, r, key, above[BASE])
                alphas.setdefault(key, []).append((base["alpha"], x["alpha"]))
            return x
        vl.cpu_round = cpu_round
        out = os.path.join(outdir, part.rstrip("/").replace("/", "_"))
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
        nb = sum(1 for r in rows if r.get(BASE + "_pass"))
        nn = sum(1 for r in rows if r.get(NEW + "_pass"))
        total[BASE] += nb
        total[NEW] += nn
        total["n"] += len(rows)
        print(f"## {part}: {BASE} {nb} of {len(rows)}, {NEW} {nn} of {len(rows)}")
        for r in rows:
            k = (r["transport"], r["algo"], r["ranks"], r["size"])
            b, n = r.get(BASE + "_ratio"), r.get(NEW + "_ratio")
            if b is None:
                continue
            al = alphas.get(k, [])
            fr = ("latency " + ",".join(f"{u:.0f}->{v:.0f}" for u, v in al)
                  if any(u != v for u, v in al) else "")
            flag = "" if r[BASE + "_pass"] == r[NEW + "_pass"] else (
                "  (now PASS)" if r[NEW + "_pass"] else "  (now MISS)")
            print(f"  {k[0]} {k[1]:8s} p{k[2]} {k[3] >> 20:3d} MiB  {b:.2f} -> {n:.2f}  {fr}{flag}")
        sys.stdout.flush()
    print(f"# all parts: {BASE} {total[BASE]} of {total['n']}, {NEW} {total[NEW]} of {total['n']}")


if __name__ == "__main__":
    main()
