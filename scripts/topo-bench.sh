#!/usr/bin/env bash
# Parse + classify benchmark: generates ibnetdiscover dumps of a 16,384-host Dragonfly+ and a
# 16,384-host 3-level fat-tree, then times `loom-topo --ib <dump>` (read, parse, classify).
# Usage: scripts/topo-bench.sh [build-dir]   (LOOM_TOPO_BIN overrides the loom-topo binary)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bin="${LOOM_TOPO_BIN:-$build/tools/loom-topo/loom-topo}"
[ -x "$bin" ] || { echo "loom-topo not found at $bin (build target loom-topo first)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
declare -A specs=(
  [dragonfly+]="dragonfly:groups=32,leavesPerGroup=16,spinesPerGroup=16,hostsPerLeaf=32,globalLinksPerSpine=16"
  [fat-tree-3]="fat-tree:levels=3,pods=16,leavesPerPod=32,spinesPerPod=32,cores=512,hostsPerLeaf=32"
)
echo "machine: $(nproc) cores, $(uname -sr), $(date -u +%Y-%m-%d), load average $(cut -d' ' -f1-3 /proc/loadavg)"
for name in dragonfly+ fat-tree-3; do
  "$bin" --no-node --generate "${specs[$name]}" --ibnet -o "$tmp/$name.txt"
  lines=$(wc -l < "$tmp/$name.txt")
  best=""; bestcpu=""
  for i in 1 2 3 4 5; do
    line=$("$bin" --no-node --ib "$tmp/$name.txt" --time -o /dev/null 2>&1)
    t=$(echo "$line" | sed -n 's/.*classified in \([0-9.]*\) s.*/\1/p')
    c=$(echo "$line" | sed -n 's/.*(cpu \([0-9.]*\) s).*/\1/p')
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    if [ -z "$bestcpu" ] || awk "BEGIN{exit !($c < $bestcpu)}"; then bestcpu=$c; fi
  done
  summary=$("$bin" --no-node --ib "$tmp/$name.txt" | sed -n '1,3p' | tr '\n' ' ')
  printf '%-11s %7d lines  parse+classify wall %ss, cpu %ss (best of 5)  | %s\n' \
    "$name" "$lines" "$best" "$bestcpu" "$summary"
done
