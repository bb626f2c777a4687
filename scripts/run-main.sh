#!/usr/bin/env bash
# The main job: installs what is needed, builds, then runs a 4-rank float32 all-reduce sweep on
# this machine (8 B to 64 MiB, nccl-tests format, correctness checked) and prints the table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/perf/all_reduce_perf --ranks 4 -b 8 -e 64M -f 4 -c 1 "$@"
