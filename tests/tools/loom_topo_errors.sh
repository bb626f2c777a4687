#!/usr/bin/env bash
# loom-topo: an empty fabric file is an error (it used to print "fabric: none" and exit 0), and
# --expect with an ibsim net file (named nodes, no GUIDs) compares by name.
set -euo pipefail
TOPO=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
: >"$d/empty.txt"
if "$TOPO" --no-node --ib "$d/empty.txt" >"$d/out" 2>"$d/err"; then
  echo "FAIL: empty --ib file accepted: $(cat "$d/out")"; exit 1
fi
grep -q "no switches or CAs" "$d/err" || { echo "FAIL: message: $(cat "$d/err")"; exit 1; }
if "$TOPO" --generate dragonfly:groups=3 --expect "$d/empty.txt" >"$d/out" 2>"$d/err"; then
  echo "FAIL: empty --expect file accepted"; exit 1
fi
grep -q -- "--expect" "$d/err" || { echo "FAIL: message: $(cat "$d/err")"; exit 1; }
printf 'Switch 8 "SwA"\n[1] "HcaA"[1]\n[2] "SwB"[1]\n\nSwitch 8 "SwB"\n[1] "SwA"[2]\n[2] "HcaB"[1]\n\nHca 1 "HcaA"\n[1] "SwA"[1]\n\nHca 1 "HcaB"\n[1] "SwB"[2]\n' >"$d/net.txt"
"$TOPO" --no-node --ib "$d/net.txt" --expect "$d/net.txt" >"$d/out" 2>/dev/null
grep -q "matched by node name): 0 links missing, 0 links not expected" "$d/out" ||
  { echo "FAIL: $(cat "$d/out")"; exit 1; }
# A net file whose nodes share a name cannot be matched: refused, naming the name.
printf 'Switch 8 "Dup"\n[1] "HcaA"[1]\n\nHca 1 "HcaA"\n[1] "Dup"[1]\n\nHca 1 "HcaA2"\n# x\n' >"$d/dup.txt"
sed -i 's/"HcaA2"/"Dup"/' "$d/dup.txt"
if "$TOPO" --no-node --ib "$d/net.txt" --expect "$d/dup.txt" >"$d/out" 2>"$d/err"; then
  echo "FAIL: ambiguous names accepted: $(cat "$d/out")"; exit 1
fi
grep -q "not unique" "$d/err" || grep -q "twice" "$d/err" || { echo "FAIL: message: $(cat "$d/err")"; exit 1; }
echo "ok"
