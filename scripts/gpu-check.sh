#!/usr/bin/env bash
# One command for a machine with an NVIDIA GPU (issue #49): builds loom with CUDA into build-gpu,
# runs the GPU tests (kernels bit for bit against the CPU, every collective on device memory with
# 2 and 4 processes on one GPU), measures the reduction kernel against a device-to-device copy,
# and prints a summary to paste into a note. Needs cmake, ninja, g++, GoogleTest and the CUDA
# toolkit (CUDACXX or /usr/local/cuda/bin/nvcc); under 8 minutes on 16 cores.
set -uo pipefail
cd "$(dirname "$0")/.."
log=build-gpu/gpu-check.log
mkdir -p build-gpu
: >"$log"
summary=()
step() {  # step NAME COMMAND...: runs it, logs it, records PASS/FAIL
  local name=$1
  shift
  echo "== $name: $*" | tee -a "$log"
  if "$@" >>"$log" 2>&1; then summary+=("PASS  $name"); else summary+=("FAIL  $name (see $log)"); fi
  tail -n 15 "$log" | sed 's/^/   /'
}
start=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$log"
step configure cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_CUDA=ON \
  -DLOOM_WITH_TORCH=OFF -DLOOM_ONLY_TEST_DIRS="coll;gpu"
step build ninja -C build-gpu cuda_kernels_test gpu_collectives_test device_staging_test cuda_stream_test \
  cuda_reduce_bw
step "kernels vs CPU" ./build-gpu/tests/gpu/cuda_kernels_test
step "collectives on device memory (2 and 4 ranks)" ./build-gpu/tests/gpu/gpu_collectives_test
step "staging and stream logic (fake driver)" sh -c "./build-gpu/tests/gpu/device_staging_test && ./build-gpu/tests/gpu/cuda_stream_test"
step "reduce kernel bandwidth" ./build-gpu/perf/gpu/cuda_reduce_bw 256
echo
echo "==== loom gpu-check summary ($(date -u +%F\ %H:%M) UTC, $(( $(date +%s) - start )) s) ===="
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/GPU: /'
printf '%s\n' "${summary[@]}"
grep -E "SKIPPED|Skipped|skipped:" "$log" | sort -u | head -5
grep -E "^(device|memcpy|reduce)" "$log"
! printf '%s\n' "${summary[@]}" | grep -q FAIL
