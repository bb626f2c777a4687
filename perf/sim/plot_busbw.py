#!/usr/bin/env python3
"""busbw against size per fabric, merged from several loom-sim outputs (compare16k.sh runs split by
size or algorithm). Reads the "## <fabric>: ..." headers and the "healthy <algo> <size> ..." rows;
a later row for the same (fabric, algo, size) replaces an earlier one. Writes
OUTDIR/allreduce_<GPUS>gpu_<fabric>_busbw.png (gnuplot) and prints the table.
    perf/sim/plot_busbw.py OUTDIR GPUS run1.txt [run2.txt ...]
"""
import os
import subprocess
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def size_bytes(s):
    for u in ("KiB", "MiB", "GiB", "B"):
        if s.endswith(u):
            return int(float(s[: -len(u)]) * UNITS[u])
    raise ValueError(f"size '{s}'")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out, gpus, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = {}  # fabric -> algo -> size -> busbw
    for path in files:
        fabric = None
        with open(path) as f:
            for line in f:
                if line.startswith("## "):
                    fabric = line[3:].split(":")[0].strip()
                    continue
                w = line.split()
                if fabric and len(w) >= 6 and w[0] == "healthy":
                    data.setdefault(fabric, {}).setdefault(w[1], {})[size_bytes(w[2])] = float(w[5])
    os.makedirs(out, exist_ok=True)
    for fabric, algos in data.items():
        base = os.path.join(out, f"allreduce_{gpus}gpu_{fabric}_busbw")
        with open(base + ".dat", "w") as d:
            for algo, pts in algos.items():
                d.write(f"# {algo}\n")
                for sz in sorted(pts):
                    d.write(f"{sz} {pts[sz]}\n")
                d.write("\n\n")
        plots = ", ".join(f"'{base}.dat' index {i} with linespoints title \"{a}\""
                          for i, a in enumerate(algos))
        gp = "\n".join([
            "set terminal pngcairo size 1000,600 noenhanced",
            f"set output '{base}.png'",
            f"set title \"allreduce busbw, {gpus} GPUs, {fabric}, spray\"",
            "set logscale x 2", "set format x '%.0b%B'", "set xlabel 'message size (bytes)'",
            "set ylabel 'busbw (GB/s)'", "set key left top", "set grid", "plot " + plots, ""])
        with open(base + ".gp", "w") as g:
            g.write(gp)
        subprocess.run(["gnuplot", base + ".gp"], check=True)
        os.remove(base + ".dat")
        os.remove(base + ".gp")
        print(f"## {fabric}")
        for algo, pts in algos.items():
            print(f"{algo:14s} " + "  ".join(f"{sz >> 20:>5d}MiB {bw:8.2f}" for sz, bw in sorted(pts.items())))


if __name__ == "__main__":
    main()
