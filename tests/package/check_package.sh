#!/usr/bin/env bash
# Usage: check_package.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --component Unspecified >/dev/null
mkdir -p "$tmp/proj"
cp "$src/consumer.c" "$tmp/proj/"
cat > "$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(loom REQUIRED)
add_executable(consumer consumer.c)
target_link_libraries(consumer PRIVATE loom::loom)
CM
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/proj/build" >/dev/null
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/proj/build/consumer"
libdir=$(ls -d "$tmp"/prefix/lib*/pkgconfig | head -1)
cc "$tmp/proj/consumer.c" $(PKG_CONFIG_PATH="$libdir" pkg-config --cflags --libs loom) -o "$tmp/pc"
LD_LIBRARY_PATH="$(dirname "$libdir")" "$tmp/pc"
echo "package: OK"
