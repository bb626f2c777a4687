#!/usr/bin/env bash
# The test command: installs the Debian packages loom needs, builds, and runs the default suite
# (unit, multi-process over shm and tcp, faults, ibsim, mpirun, perf smoke). Opt-in labels: long.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd build
ctest -L default -j2 --output-on-failure --timeout 900 "$@"
cd ..
# Bad arguments and collectives under AddressSanitizer/UBSan (separate build in build-asan).
bash scripts/asan-check.sh
# The topology parsers under libFuzzer (clang, ASan/UBSan), a bounded time per target.
bash scripts/topo-fuzz.sh 15 build-fuzz
