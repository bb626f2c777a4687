#!/usr/bin/env bash
# Builds loom's topology parser fuzz targets (fuzz/*.cc, libFuzzer) with clang + ASan + UBSan and
# runs each for a bounded time from the seed corpus in fuzz/corpus/<target>/.
# Usage: scripts/topo-fuzz.sh [seconds-per-target (20)] [build-dir (build-fuzz)]
# Exit status is non-zero when a target crashes, leaks or hangs; the reproducer is written to the
# build dir (crash-*/timeout-*/leak-*) and the libFuzzer log is printed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
secs="${1:-20}"
out="${2:-$root/build-fuzz}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cxx="${CXX_FUZZ:-clang++}"
command -v "$cxx" >/dev/null || { echo "$cxx not found (Debian: clang)" >&2; exit 1; }
flags=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
       -fno-sanitize-recover=undefined -I"$root/src" -I"$root" -I"$root/include")
libs=(-lpthread -ldl)
if pkg-config --exists hwloc; then
  flags+=(-DLOOM_HAVE_HWLOC=1 $(pkg-config --cflags hwloc))
  libs+=($(pkg-config --libs hwloc))
fi
mkdir -p "$out/obj"
srcs=("$root"/src/core/*.cc "$root"/src/topo/*.cc "$root"/src/topo/synth/*.cc)
echo "compiling ${#srcs[@]} library sources with $cxx (sanitizers) into $out"
jobs_max="$(nproc)"
for src in "${srcs[@]}"; do
  obj="$out/obj/$(echo "${src#$root/}" | tr / _).o"
  [ "$obj" -nt "$src" ] && continue
  "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
done
wait
status=0
for src in "$root"/fuzz/fuzz_*.cc; do
  name="$(basename "$src" .cc)"
  target="${name#fuzz_}"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer "$src" "$out"/obj/*.o "${libs[@]}" -o "$out/$name"
  mkdir -p "$out/corpus/$target"
  extra=()
  # libhwloc 2.9 itself leaks objects when it rejects some malformed XML (reproduced with the
  # plain hwloc_topology_set_xmlbuffer/load/destroy calls), so leaks are not checked there.
  asan="${ASAN_OPTIONS:-}"
  [ "$target" = hwloc_xml ] && { extra+=(-detect_leaks=0); asan="detect_leaks=0${asan:+:$asan}"; }
  echo "== $name: ${secs}s"
  if ! (cd "$out" && ASAN_OPTIONS="$asan" "./$name" "${extra[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
        -max_len=200000 -print_final_stats=1 "corpus/$target" "$root/fuzz/corpus/$target" \
        > "$out/$name.log" 2>&1); then
    echo "!! $name failed; log: $out/$name.log"
    tail -40 "$out/$name.log"
    status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$out/$name.log" | tail -2
  fi
done
exit $status
