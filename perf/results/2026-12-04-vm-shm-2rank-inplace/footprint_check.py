#!/usr/bin/env python3
"""A check, not a model in loom: could a working-set price explain the out-of-place gap of
summary.md? On 2 ranks the ring all-reduce's critical path is three copies of S/2 (into the pair
ring, out of it) and one reduction of S/2. Price each copy at membw_perf's memcpy rate at the
call's working set per rank (out of place: send + receive buffer + the pair ring it writes, 2S +
min(ring, S); in place: S + min(ring, S); membw_perf's memcpy of x bytes has a working set of 2x)
and the reduction at membw_perf's out-of-place rate (working set 3x) or in-place rate (2x), each
interpolated on a log scale at the call's working set. Prints the predicted gap beside the
measured one."""
import math
import os
import sys

from analyze import load, load_membw

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
RING = 1 << 20  # loom's default shm pair ring
mb = load_membw(d)


def at(ws, col, per):
    """membw_perf column col (GB/s) at working set ws, where a size x has working set per * x."""
    x = ws / per
    xs = sorted(mb)
    if x <= xs[0]:
        return mb[xs[0]][col]
    if x >= xs[-1]:
        return mb[xs[-1]][col]
    lo = max(s for s in xs if s <= x)
    hi = min(s for s in xs if s >= x)
    if lo == hi:
        return mb[lo][col]
    t = math.log(x / lo) / math.log(hi / lo)
    return mb[lo][col] * (1 - t) + mb[hi][col] * t


ar = load(d, "ar")
print("| size | measured gap, us | predicted: copies, us | predicted: reduction, us | predicted, us |")
print("|---|---|---|---|---|")
for s in sorted(ar):
    o, i = ar[s]
    wo, wi = 2 * s + min(RING, s), s + min(RING, s)
    h = s / 2
    cp = 3 * h * (1 / at(wo, 0, 2) - 1 / at(wi, 0, 2)) / 1e3
    rd = h * (1 / at(wo, 1, 3) - 1 / at(wi, 2, 2)) / 1e3
    print(f"| {s >> 10} KiB | {o - i:.1f} | {cp:.1f} | {rd:.1f} | {cp + rd:.1f} |")
