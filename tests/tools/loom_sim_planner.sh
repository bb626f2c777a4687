#!/bin/bash
# loom-sim --algo planner (and, with --fail, 'replanned'): the planner's own choice simulated.
# 16 hosts x 8 GPUs on a 2-level fat-tree, 16 MiB all-reduce, two of four spines failed:
#   - the healthy fabric's plan is printed and simulated; where it is a plain rank-order algorithm
#     its time equals that algorithm's own row;
#   - 'planner' on the failed fabric keeps the healthy plan (same prediction), 'replanned' plans
#     for the failed fabric: its prediction sees the lost uplinks (longer than the healthy one);
#   - an unknown --algo name is refused, naming it.
set -u
sim=$1
fabric="fat-tree:levels=2,leavesPerPod=4,spinesPerPod=4,hostsPerLeaf=4,rails=8,speed=NDR"
out=$("$sim" --fabric "$fabric" --algo planner,rabenseifner --size 16M --fail spines:2 --top 0) || {
  echo "FAIL: loom-sim exited $?"; echo "$out"; exit 1; }
echo "$out" | grep -v "solver\|folded"
fail=0
t() { echo "$out" | awk -v f="$1" -v a="$2" '$1==f && $2==a {print $4}'; }
pred() { echo "$out" | awk -v a="$1" -v f="$2" '$1=="#" && $2==a {n++; if (n==f) {sub(/ us.*/, ""); print $NF}}'; }
dec=$(echo "$out" | awk '$1=="#" && $2=="planner" {print $4; exit}')
[ -n "$dec" ] || { echo "FAIL: no planner decision printed"; fail=1; }
if [ "$dec" = "rabenseifner(order=rank)," ]; then
  [ "$(t healthy planner)" = "$(t healthy rabenseifner)" ] ||
    { echo "FAIL: planner's rabenseifner $(t healthy planner) us != forced $(t healthy rabenseifner) us"; fail=1; }
fi
healthy=$(pred planner 1) kept=$(pred planner 2) replanned=$(pred replanned 1)
echo "predicted: healthy $healthy us, kept on failed $kept us, replanned $replanned us"
[ -n "$replanned" ] || { echo "FAIL: no replanned rows"; fail=1; }
[ "$healthy" = "$kept" ] || { echo "FAIL: the kept plan's prediction changed"; fail=1; }
awk -v h="$healthy" -v r="$replanned" 'BEGIN{exit !(r > h)}' ||
  { echo "FAIL: replanning does not see the failed spines ($replanned <= $healthy)"; fail=1; }
bad=$("$sim" --fabric "$fabric" --algo plannerx 2>&1) && { echo "FAIL: accepted plannerx"; fail=1; }
echo "$bad" | grep -q -- "--algo plannerx" || { echo "FAIL: error does not name --algo: $bad"; fail=1; }
exit $fail
