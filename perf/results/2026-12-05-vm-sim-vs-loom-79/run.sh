#!/usr/bin/env bash
# Validation run 79 (VM F: 2-vCPU AMD EPYC under KVM, 2 MiB L2 per core, 32 MiB L3): run 78
# (full) repeated at bbad116 (session 34): the first held-out run of the tcp-ring-reductions column
# (cpu_gv), beside cpu_gb; with twice the rounds on shm: 18 at 1 MiB, 10 at 4-64 MiB (tcp as
# before, 9 and 5). Over runs 52-77 the spread of a
# point's median across runs matches what independent rounds give (bootstrap over the pooled
# per-round ratios), so doubling the rounds halves the variance of each shm median; scored also
# on its first 9 / 5 shm rounds (--rescore --first-rounds), as runs 72-78 were.
# tcp 1 MiB, shm 1 MiB, tcp 4-64 MiB, shm 4-64 MiB. Runs from a copy taken at the start.
set -euo pipefail
B=${1:-build-sim}
S=${2:-perf/sim/validate_local.py}
OUT=$(dirname "$0")
python3 "$S" --build "$B" --out "$OUT/tcp-1m" --transports tcp --sizes 1M --rounds 9
python3 "$S" --build "$B" --out "$OUT/shm-1m" --transports shm --sizes 1M --rounds 18
python3 "$S" --build "$B" --out "$OUT/tcp" --transports tcp --sizes 4M,16M,64M --rounds 5
python3 "$S" --build "$B" --out "$OUT/shm" --transports shm --sizes 4M,16M,64M --rounds 10
