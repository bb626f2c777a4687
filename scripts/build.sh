#!/usr/bin/env bash
# Configures and builds loom into ./build (Release with debug info).
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
# ccache, when present, makes rebuilds in several checkouts cheap.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "$@"
ninja -C build -j"$(nproc)"
