#!/usr/bin/env bash
# Installs every Debian package loom's build, tests and perf scripts need (Debian 12).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ca-certificates \
  libgtest-dev libgmock-dev libbenchmark-dev \
  nlohmann-json3-dev libcli11-dev \
  libhwloc-dev hwloc \
  libopenmpi-dev openmpi-bin \
  libgloo-dev \
  libucx-dev ucx-utils \
  infiniband-diags ibsim-utils libumad2sim0 \
  iproute2 procps \
  python3 python3-numpy gnuplot-nox graphviz \
  python3-dev python3-torch libtorch-dev pybind11-dev \
  clang libclang-rt-14-dev util-linux stress-ng
