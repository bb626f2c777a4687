#!/usr/bin/env python3
"""In-sample comparison of two of validate_local.py's CPU columns on stored runs (nothing
measured): each part's points.json is rescored (validate_local.py --rescore --cores 2) with only
those two columns and "cpu" (the summary needs it) simulated, and for each point both columns'
ratios are printed, with the calibration each round used where the two differ (per round,
before -> after: the flow rate and a core's rate in bytes/us, the reduction rate in GB/s, the
fitted latency in us), and each part's and all parts' pass counts.

Usage: compare_columns.py BUILD OUTDIR BASE NEW RUNDIR/PART [RUNDIR/PART ...]
  BASE, NEW: row-key prefixes of validate_local.py's CPU_COLUMNS, e.g. cpu_gw cpu_gx.
The rescored copies are written under OUTDIR."""
import importlib.util, json, os, shutil, sys

VL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_local.py")
FIELDS = (("rate", "rate", "{:.0f}"), ("core", "core", "{:.0f}"), ("red", "reduction", "{:.2f}"),
          ("alpha", "latency", "{:.0f}"))


def load():
    spec = importlib.util.spec_from_file_location("vl", VL)
    vl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vl)
    return vl


def rescore_part(build, outdir, base, new, part):
    """(rows of points-rescored.json, {point key: [(base's calibration, new's) per round]})."""
    vl = load()
    cols = [c for c in vl.CPU_COLUMNS if c[0] in ("cpu", base, new)]
    if {c[0] for c in cols} != {"cpu", base, new}:
        sys.exit(f"compare_columns: {base} or {new} is not one of validate_local's CPU columns")
    vl.CPU_COLUMNS = cols
    above = {c[0]: c[1] for c in cols}
    calib = {}
    orig = vl.cpu_round
    depth = [0]  # cpu_round calls itself for the smallest size's point: record only the outer call

    def cpu_round(a, r, key, col):
        depth[0] += 1
        try:
            x = orig(a, r, key, col)
            if x is not None and col == above[new] and depth[0] == 1:
                calib.setdefault(key, []).append((orig(a, r, key, above[base]), x))
            return x
        finally:
            depth[0] -= 1
    vl.cpu_round = cpu_round
    out = os.path.join(outdir, part.strip("/").replace("/", "_"))
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(part, "points.json"), out)
    sys.argv = ["validate_local.py", "--build", build, "--rescore", out, "--cores", "2"]
    with open(os.devnull, "w") as null:
        so, sys.stdout = sys.stdout, null
        try:
            vl.main()
        finally:
            sys.stdout = so
    return json.load(open(os.path.join(out, "points-rescored.json")))["rows"], calib


def moved(pairs):
    """The calibration fields that differ in any round, as 'name b->n,b->n'."""
    out = []
    for f, name, fmt in FIELDS:
        if any(b is not None and b[f] != n[f] for b, n in pairs):
            out.append(name + " " + ",".join(f"{fmt.format(b[f])}->{fmt.format(n[f])}"
                                             for b, n in pairs))
    return "  ".join(out)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    build, outdir, base, new, parts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], \
        sys.argv[5:]
    total = {base: 0, new: 0, "n": 0}
    for part in parts:
        rows, calib = rescore_part(build, outdir, base, new, part)
        nb = sum(1 for r in rows if r.get(base + "_pass"))
        nn = sum(1 for r in rows if r.get(new + "_pass"))
        total[base] += nb
        total[new] += nn
        total["n"] += len(rows)
        print(f"## {part}: {base} {nb} of {len(rows)}, {new} {nn} of {len(rows)}")
        for r in rows:
            k = (r["transport"], r["algo"], r["ranks"], r["size"])
            b, n = r.get(base + "_ratio"), r.get(new + "_ratio")
            if b is None or n is None:
                continue
            flag = "" if r[base + "_pass"] == r[new + "_pass"] else (
                "  (now PASS)" if r[new + "_pass"] else "  (now MISS)")
            print(f"  {k[0]} {k[1]:8s} p{k[2]} {k[3] >> 20:3d} MiB  {b:.2f} -> {n:.2f}  "
                  f"{moved(calib.get(k, []))}{flag}".rstrip())
        sys.stdout.flush()
    print(f"# all parts: {base} {total[base]} of {total['n']}, {new} {total[new]} of {total['n']}")


if __name__ == "__main__":
    main()
