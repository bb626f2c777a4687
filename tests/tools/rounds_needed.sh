#!/bin/bash
# perf/sim/rounds_needed.py on stored runs 74-77 (VM F, shm only, 24 points each): one row per
# point with its 4 runs and their rounds (9 at 1 MiB, 5 above), the chances of a miss falling as
# the rounds grow for every point, the same output twice (seeded), and a clear error for a
# column no run has and for a bad --times.
set -u
src=$1
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=()
for n in 74 75 76 77; do runs+=("$src/perf/results/2026-12-05-vm-sim-vs-loom-$n"); done
tool="$src/perf/sim/rounds_needed.py"
python3 "$tool" --draws 400 "${runs[@]}" > "$tmp/a.txt" 2>&1 || { echo "FAIL: exit $?"; cat "$tmp/a.txt"; exit 1; }
python3 "$tool" --draws 400 "${runs[@]}" > "$tmp/b.txt" 2>&1
cmp -s "$tmp/a.txt" "$tmp/b.txt" || { echo "FAIL: two runs with the same seed differ"; fail=1; }
python3 - "$tmp/a.txt" <<'PY' || { echo "FAIL: rounds_needed.py's table:"; cat "$tmp/a.txt"; fail=1; }
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l.strip("|").split("|") for l in lines if l.startswith("| shm ")]
ok = len(rows) == 24
for r in rows:
    f = [x.strip() for x in r]
    rounds = 9 if f[0].endswith(" 1 MiB") else 5
    miss = [float(x) for x in f[6:10]]
    ok = ok and f[1] == "4" and f[2] == str(rounds) and all(0 <= m <= 1 for m in miss)
    ok = ok and miss[3] <= miss[0]
last = re.match(r"Chance every one of the 24 points lies within 25%, column cpu_gb: "
                r"1x rounds ([01]\.\d+), 2x rounds ([01]\.\d+), 3x rounds [01]\.\d+, "
                r"4x rounds ([01]\.\d+)$", lines[-1])
ok = ok and last is not None and float(last.group(3)) >= float(last.group(1))
sys.exit(0 if ok else 1)
PY
for bad in "--column nope" "--times 0,2"; do
  # shellcheck disable=SC2086
  if python3 "$tool" $bad "${runs[@]}" > "$tmp/bad.txt" 2>&1 || ! grep -q "rounds_needed: " "$tmp/bad.txt"; then
    echo "FAIL: rounds_needed.py $bad: expected a clear error"; cat "$tmp/bad.txt"; fail=1
  fi
done
exit $fail
