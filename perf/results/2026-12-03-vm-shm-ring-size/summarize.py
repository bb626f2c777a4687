#!/usr/bin/env python3
"""Medians of raw.txt (run.sh's output): per ranks, size and schedule, the out-of-place and
in-place times with 4 MiB and 1 MiB pair rings, 1 MiB / 4 MiB, and in how many repetitions the
1 MiB ring's out-of-place run was the faster of the pair measured back to back."""
import os
import statistics as st
import sys

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "raw.txt")
d = {}
for line in open(path):
    f = line.split()
    if len(f) < 7:
        continue
    _, p, s, algo, rb, o, i = f[:7]
    d.setdefault((int(p), s, algo), {}).setdefault(int(rb), []).append((float(o), float(i)))
mib = {"1M": 1, "4M": 4, "16M": 16, "64M": 64}
print("| ranks | size | schedule | out of place us, 4 MiB ring | 1 MiB ring | 1 MiB / 4 MiB | "
      "in place us, 4 MiB ring | 1 MiB ring | 1 MiB / 4 MiB | 1 MiB faster (oop) |")
print("|---" * 10 + "|")
for k in sorted(d, key=lambda k: (k[0], mib[k[1]], k[2])):
    a, b = d[k].get(4 << 20, []), d[k].get(1 << 20, [])
    if not a or not b:
        continue
    ao, bo = st.median(x[0] for x in a), st.median(x[0] for x in b)
    ai, bi = st.median(x[1] for x in a), st.median(x[1] for x in b)
    wins = sum(y[0] < x[0] for x, y in zip(a, b))
    print(f"| {k[0]} | {k[1]} | {k[2]} | {ao:.0f} | {bo:.0f} | {bo / ao:.2f} | {ai:.0f} | "
          f"{bi:.0f} | {bi / ai:.2f} | {wins} of {min(len(a), len(b))} |")
