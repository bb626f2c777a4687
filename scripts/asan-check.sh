#!/usr/bin/env bash
# Bad arguments and the multi-process collectives under AddressSanitizer + UBSan: builds the library
# and the API tests into build-asan and runs them. Called by run-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOOM_SANITIZE=ON -DLOOM_CUDA=OFF \
  -DLOOM_ONLY_TEST_DIRS="coll" >/dev/null
ninja -C build-asan -j"$(nproc)" api_errors_test coll_test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
./build-asan/tests/coll/api_errors_test
./build-asan/tests/coll/coll_test --gtest_filter='*shm_p3*:*tcp_p2*:*Split*:*NonBlocking*'
echo "asan-check: OK"
