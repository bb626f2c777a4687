#!/usr/bin/env python3
# Largest relative difference between the makespans ("#   makespan S s", all digits) of two
# same_output.sh directories.   compare_makespans.py DIR_A DIR_B
import glob, os, sys
a_dir, b_dir = sys.argv[1], sys.argv[2]
worst, n = 0.0, 0
for fa in sorted(glob.glob(os.path.join(a_dir, "*.txt"))):
    fb = os.path.join(b_dir, os.path.basename(fa))
    get = lambda f: [float(l.split()[2]) for l in open(f) if l.startswith("#   makespan")]
    for x, y in zip(get(fa), get(fb)):
        n += 1
        d = abs(x - y) / max(abs(x), abs(y), 1e-300)
        worst = max(worst, d)
        if d > 0:
            print(f"{os.path.basename(fa)}: {x!r} vs {y!r} (relative {d:.2e})")
print(f"{n} makespans, largest relative difference {worst:.2e}")
