#!/usr/bin/env bash
# Validation run 21 (VM D: 2-vCPU AMD EPYC under Firecracker). Decided before measuring: the
# 1 MiB points get 9 rounds, the others 3, because a 1 MiB driver run is short (well under a
# second) and this VM switches between fast and slow spells seconds apart (run 20 and
# perf/results/2026-12-02-vm-d-noise: identical 1 MiB runs 370-843 us), so three rounds of a
# 1 MiB point can all fall in one spell. Everything else as in run 20: calibration runs sized by
# --calib-moved (1 GiB, up to 2000 iterations; the 8 B latency 2000); above the cores also a
# p-rank chunked sendrecv per point, streamed and in lock-step; a driver run that lost more than
# 2% of the CPU time to the hypervisor's steal runs again after 15 s of rest, doubling, up to 3
# more times, the least-stolen try kept; each round under /tmp/loom-measure.lock.
set -euo pipefail
B=${1:-build-sim}
OUT=$(dirname "$0")
for t in shm tcp; do
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t" --transports "$t" \
    --sizes 4M,16M,64M --rounds 3
  python3 perf/sim/validate_local.py --build "$B" --out "$OUT/$t-1m" --transports "$t" \
    --sizes 1M --rounds 9
done
