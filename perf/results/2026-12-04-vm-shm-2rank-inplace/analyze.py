#!/usr/bin/env python3
"""2-rank shm, ring forced: out-of-place against in-place all-reduce per size, beside the ring
all-gather, ring reduce-scatter, sendrecv and membw_perf of the same session (run.sh, 3 repetitions,
medians). pred = what the reduction rates alone make of the gap: S/2 bytes reduced out of place
(membw_perf's dst = a + b) instead of in place (dst = dst + b)."""
import json
import os
import statistics as st
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(d, pfx):
    """{size: (out-of-place us, in-place us)}: medians over the repetitions of a driver's -J rows."""
    rows = {}
    for rep in (1, 2, 3):
        with open(os.path.join(d, f"{pfx}{rep}.jsonl")) as f:
            for line in f:
                r = json.loads(line)
                rows.setdefault(r["size"], []).append(
                    (r["oop"]["time_us"], (r.get("ip") or {}).get("time_us") or 0.0))
    return {s: (st.median(x[0] for x in v), st.median(x[1] for x in v)) for s, v in rows.items()}


def load_membw(d):
    """{size: (memcpy, reduce, reduce in place) GB/s}: medians over the repetitions."""
    mb = {}
    for rep in (1, 2, 3):
        with open(os.path.join(d, f"mb{rep}.txt")) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                c = line.split()
                mb.setdefault(int(c[0]), []).append((float(c[2]), float(c[6]), float(c[8])))
    return {s: tuple(st.median(x[i] for x in v) for i in range(3)) for s, v in mb.items()}


def main(d):
    ar, ag, rs, sr = (load(d, p) for p in ("ar", "ag", "rs", "sr"))
    mb = load_membw(d)
    print("| size | all-reduce out of place, us | in place, us | out / in | gap, us | gap from the "
          "reduction rates, us | all-gather out / in place, us | reduce-scatter out / in place, "
          "us | sendrecv, us | membw memcpy / reduce / reduce in place, GB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for s in sorted(ar):
        o, i = ar[s]
        m = mb[s]
        pred = (s / 2) * (1 / m[1] - 1 / m[2]) / 1e3
        print(f"| {s >> 10} KiB | {o:.1f} | {i:.1f} | {o / i:.2f} | {o - i:.1f} | {pred:.1f} | "
              f"{ag[s][0]:.1f} / {ag[s][1]:.1f} | {rs[s][0]:.1f} / {rs[s][1]:.1f} | "
              f"{sr[s][0]:.1f} | {m[0]:.1f} / {m[1]:.1f} / {m[2]:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
