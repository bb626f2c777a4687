#!/usr/bin/env bash
# Renders a generated Dragonfly+ fabric to docs/topology-dragonfly.png with Graphviz (the README's
# picture). Usage: scripts/topo-render.sh [build-dir]   (loom-topo from <build-dir>/tools/loom-topo;
# LOOM_TOPO_BIN overrides). Needs graphviz (dot/neato).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bin="${LOOM_TOPO_BIN:-$build/tools/loom-topo/loom-topo}"
[ -x "$bin" ] || { echo "loom-topo not found at $bin (build target loom-topo first)" >&2; exit 1; }
command -v dot >/dev/null || { echo "graphviz 'dot' not installed" >&2; exit 1; }
spec="dragonfly:groups=6,leavesPerGroup=4,spinesPerGroup=3,hostsPerLeaf=8,globalLinksPerSpine=5"
mkdir -p "$root/docs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$bin" --no-node --generate "$spec" > "$tmp/summary.txt"
"$bin" --no-node --generate "$spec" --dot > "$tmp/fabric.dot"
# fdp keeps each group's cluster together and draws global links between the clusters.
fdp -Tpng -Gdpi=110 -o "$root/docs/topology-dragonfly.png" "$tmp/fabric.dot"
cat "$tmp/summary.txt"
echo "wrote $root/docs/topology-dragonfly.png"
