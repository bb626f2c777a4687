#!/usr/bin/env bash
# An emulated oversubscribed fabric on one machine, and loom's all-reduce measured on it:
# rank-order ring vs topology-ordered ring vs the planner's free choice, next to the planner's
# predicted times for the same Topology JSON. See perf/fabric-emu/README.md.
#
#   perf/fabric-emu/run.sh [--build DIR] [--rate MBIT] [--oversub N] [--sizes 1m,4m,16m]
#                          [--iters N] [--reps N] [--modes "rank topo auto [ALGO...]"] [--out DIR]
#                          [--min-speedup X]
#
# Fabric: 8 hosts (a network namespace and a UTS namespace each, hostname emu-h<r>, one loom rank
# each) on 2 leaves (Linux bridges in a fabric namespace), 4 hosts per leaf; the leaves are joined
# by one veth pair, the uplink. tc tbf caps every host link at RATE in both directions and the
# uplink at 4 x RATE / OVERSUB per direction (4:1 by default: the uplink carries RATE while its
# 4 hosts could send 4 x RATE). Rank r is on leaf r % 2 (a scattered job), so the rank-order ring
# crosses the uplink at every hop and the topology-ordered ring once per direction.
# Exit: 0 ok, 1 failure (or measured speed-up below --min-speedup), 77 skipped (no root/netns).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build rate=100 oversub=4 sizes=1m,4m,16m iters=2 reps=1 out="" minSpeedup=""
modes="rank topo auto"
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2 ;; --rate) rate=$2 ;; --oversub) oversub=$2 ;; --sizes) sizes=$2 ;;
    --iters) iters=$2 ;; --reps) reps=$2 ;; --modes) modes=$2 ;; --out) out=$2 ;;
    --min-speedup) minSpeedup=$2 ;;
    *) echo "run.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift 2 || { echo "run.sh: $1 needs a value" >&2; exit 2; }
done
for v in rate oversub iters reps; do
  [[ ${!v} =~ ^[0-9]+$ ]] && [ "${!v}" -gt 0 ] || { echo "run.sh: --$v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
bin=$build/perf/fabric-emu/emu_allreduce plan=$build/tools/loom-plan/loom-plan
topogen=$build/tools/loom-topo/loom-topo
for b in "$bin" "$plan" "$topogen"; do
  [ -x "$b" ] || { echo "run.sh: $b not built (ninja -C $build emu_allreduce loom-plan loom-topo)" >&2; exit 2; }
done
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v tc >/dev/null ||
   ! command -v unshare >/dev/null || ! command -v python3 >/dev/null; then
  echo "SKIP: needs root, ip, tc, unshare and python3"; exit 77
fi

H=8 PER_LEAF=4
upRate=$(( PER_LEAF * rate / oversub ))
sfx=$$
fab=loomfab$sfx
tmp=$(mktemp -d)
[ -n "$out" ] || out=$tmp/out
mkdir -p "$out"
rankPids=()  # the ranks of the run in progress (each a `timeout` that passes signals on)
cleanup() {
  for p in "${rankPids[@]}"; do kill "$p" 2>/dev/null; done
  for r in $(seq 0 $((H - 1))); do ip netns del "loomh$r.$sfx" 2>/dev/null; done
  ip netns del "$fab" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tbf: RATE mbit; burst two 64 KiB GSO segments; queue 50 ms.
shape() {  # ns dev mbit
  ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$3mbit" burst 128kb latency 50ms
}
ip netns add "$fab" || { echo "SKIP: cannot create network namespaces (ip netns add failed)"; exit 77; }
ip -n "$fab" link set lo up
for l in 0 1; do
  ip -n "$fab" link add "leaf$l" type bridge || { echo "SKIP: no bridge support"; exit 77; }
  ip -n "$fab" link set "leaf$l" up
done
# The uplink: one veth pair between the two leaf bridges, capped per direction.
ip -n "$fab" link add up0 type veth peer name up1 || { echo "SKIP: no veth support"; exit 77; }
ip -n "$fab" link set up0 master leaf0 up
ip -n "$fab" link set up1 master leaf1 up
shape "$fab" up0 "$upRate" && shape "$fab" up1 "$upRate" || { echo "SKIP: tc tbf not available"; exit 77; }
for r in $(seq 0 $((H - 1))); do
  ns=loomh$r.$sfx
  ip netns add "$ns" || exit 1
  ip -n "$ns" link set lo up
  ip link add "eh$r.$sfx" netns "$ns" type veth peer name "port$r" netns "$fab" || exit 1
  ip -n "$ns" link set "eh$r.$sfx" name emu0
  ip -n "$ns" addr add "10.232.0.$((r + 1))/24" dev emu0
  ip -n "$ns" link set emu0 up
  ip -n "$fab" link set "port$r" master "leaf$((r % 2))" up
  shape "$ns" emu0 "$rate" && shape "$fab" "port$r" "$rate" || exit 1  # host tx and host rx
done

# The same fabric for loom: a generated 2-leaf fat-tree (1 spine) with host i renamed emu-h<r> and
# moved to index r (rank r on leaf r % 2), links in GB/s of the tc rates (leaf-spine link = uplink).
"$topogen" --generate "fat-tree:levels=2,leavesPerPod=2,spinesPerPod=1,hostsPerLeaf=$PER_LEAF" \
  --json > "$tmp/gen.json" || exit 1
python3 - "$tmp/gen.json" "$out/fabric.json" "$rate" "$upRate" <<'EOF' || exit 1
import json, sys
src, dst, rate, up = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
t = json.load(open(src))
n = len(t["hosts"])
old = [(r % 2) * (n // 2) + r // 2 for r in range(n)]  # new index r <- generated host old[r]
new_of = {o: r for r, o in enumerate(old)}
t["hosts"] = [t["hosts"][o] for o in old]
for r, h in enumerate(t["hosts"]):
    h["name"] = "emu-h%d" % r
    for nic in h["nics"]:
        nic["portGBps"] = rate / 8e3
for node in t["fabric"]["nodes"]:
    if node["kind"] == "ca":
        node["host"] = new_of[node["host"]]
        node["desc"] = "emu-h%d %s" % (node["host"], node["desc"].split()[-1])
for lk in t["fabric"]["links"]:
    lk["gbps"] = (rate if lk["level"] == 0 else up) / 8e3
t["classification"]["type"] = "none"  # classified again from the rewritten links
json.dump(t, open(dst, "w"), indent=1)
EOF

echo "# emulated fabric: $H hosts, 2 leaves x $PER_LEAF, host links $rate Mbit/s, uplink $upRate Mbit/s" \
  "per direction ($((PER_LEAF * rate / upRate)):1), rank r on leaf r%2; $(date -u +%F' '%H:%M) UTC, $(nproc) cores" |
  tee "$out/summary.txt"

# CPU seconds used by this script's finished children (the ranks), and wall time.
# (`times` in this shell, not in a $(...) subshell, which has no children of its own.)
childCpu() {
  times > "$tmp/times"
  awk 'NR==2{split($1,u,"[ms]");split($2,s,"[ms]");print u[1]*60+u[2]+s[1]*60+s[2]}' "$tmp/times"
}
algoFor() {  # mode -> LOOM_ALGO value
  case $1 in
    rank) echo "allreduce:ring/rank" ;; topo) echo "allreduce:ring/topo" ;; auto) echo "" ;;
    *) echo "allreduce:$1" ;;  # any other all-reduce algorithm, e.g. hier, tree, rabenseifner
  esac
}
runMode() {  # mode rep
  local mode=$1 rep=$2 r rc=0
  rm -f "$tmp/id"
  local c0 w0 c1 w1
  childCpu > "$tmp/c0"; w0=$(date +%s.%N)
  for r in $(seq 0 $((H - 1))); do
    ip netns exec "loomh$r.$sfx" unshare --uts sh -c "hostname emu-h$r; exec env LOOM_RANK=$r \
      LOOM_NRANKS=$H ID_FILE=$tmp/id LOOM_SOCKET_IFNAME==emu0 LOOM_TOPO_FILE=$out/fabric.json \
      LOOM_ALGO='$(algoFor "$mode")' LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=PLAN \
      LOOM_TIMEOUT_MS=120000 timeout 600 $bin $sizes $iters" > "$tmp/out$r" 2> "$tmp/err$r" &
    rankPids+=($!)
  done
  for p in "${rankPids[@]}"; do wait "$p" || rc=1; done
  rankPids=()
  childCpu > "$tmp/c1"; w1=$(date +%s.%N) c0=$(cat "$tmp/c0") c1=$(cat "$tmp/c1")
  if [ $rc -ne 0 ]; then
    echo "FAIL: mode $mode: a rank failed" >&2
    for r in $(seq 0 $((H - 1))); do tail -3 "$tmp/err$r" "$tmp/out$r" >&2; done
    return 1
  fi
  local cpu
  # Cores the 8 ranks kept busy on average, in % of one core (the machine has $(nproc)).
  cpu=$(awk -v a="$c0" -v b="$c1" -v c="$w0" -v d="$w1" 'BEGIN{printf "%.0f", 100*(b-a)/(d-c)}')
  # Rank 0's result lines, and the plan it ran (its PLAN log line for that size).
  while read -r _ bytes _ us _ _ _ bus _ wrong; do
    local human=$bytes' B' plan pred
    [ $((bytes % 1024)) -eq 0 ] && human="$((bytes >> 10)) KiB"
    [ $((bytes % 1048576)) -eq 0 ] && human="$((bytes >> 20)) MiB"
    plan=$(grep -a "allreduce $human float32 on $H ranks:" "$tmp/err0" | head -1)
    pred=$(sed -n 's/.* predicted \([0-9.e+]*\) us.*/\1/p' <<< "$plan")
    plan=$(sed -n 's/.* ranks: \(.*\) predicted .*/\1/p' <<< "$plan")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$rep" "$bytes" "$us" "$bus" "$wrong" \
      "$cpu" "$pred" "$plan" >> "$out/results.tsv"
  done < "$tmp/out0"
}

# Predicted by loom-plan for the same Topology JSON, inter-host tcp, default cost parameters (as the
# communicators' planner, which logs the same numbers: results.tsv's predicted_us).
printf 'mode\tbytes\tpredicted_us\tplan\n' > "$out/predicted.tsv"
for s in ${sizes//,/ }; do
  case $s in *[kK]) b=$(( ${s%?} << 10 )) ;; *[mM]) b=$(( ${s%?} << 20 )) ;; *) b=$s ;; esac
  for mode in $modes; do
    a=$(algoFor "$mode") f=$out/loom-plan-$mode-$s.txt
    "$plan" --topo "$out/fabric.json" --transport tcp ${a:+--algo "$a"} --explain "$s" > "$f" || exit 1
    sed -n "s/^chosen: \(.*\) (.*), predicted \([0-9.e+]*\) us.*/$mode\t$b\t\2\t\1/p" "$f" >> "$out/predicted.tsv"
  done
done

printf 'mode\trep\tbytes\ttime_us\tbusbw_GBps\twrong\tcpu_pct\tpredicted_us\tplan\n' > "$out/results.tsv"
for rep in $(seq 1 "$reps"); do
  for mode in $modes; do
    runMode "$mode" "$rep" || exit 1
  done
done


python3 - "$out" "$rate" "$upRate" "${minSpeedup:-0}" "$modes" <<'EOF' | tee -a "$out/summary.txt"
import collections, sys
out, rate, up, need = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = [l.rstrip("\n").split("\t") for l in open(out + "/results.tsv")][1:]
predicted = {}
for l in list(open(out + "/predicted.tsv"))[1:]:
    mode, b, us, plan = l.rstrip("\n").split("\t")
    predicted[(mode, int(b))] = float(us)
best = collections.defaultdict(lambda: None)
info = {}
for mode, rep, b, us, bus, wrong, cpu, pred, plan in rows:
    k = (mode, int(b))
    if int(wrong):
        print("FAIL: %s %s: %s wrong elements" % (mode, b, wrong)); sys.exit(1)
    if best[k] is None or float(us) < best[k]:
        best[k] = float(us)
    p = predicted.get(k, float("nan"))
    if pred and abs(float(pred) - p) > 0.01 * p:
        print("note: %s %s: the communicator's planner predicted %s us, loom-plan %.0f us" % (mode, b, pred, p))
    info[k] = (p, plan, max(int(cpu), info.get(k, (0, 0, 0))[2]))
sizes = sorted({b for _, b in best})
modes = [m for m in sys.argv[5].split() if any(k[0] == m for k in best)]
print("| size | " + " | ".join("%s: measured / predicted ms (busbw MB/s)" % m for m in modes) +
      " | measured rank/topo | predicted rank/topo | planner's choice | ranks' CPU |")
print("|---" * (len(modes) + 5) + "|")
ok = True
for b in sizes:
    cells = []
    for m in modes:
        t, (p, plan, cpu) = best[(m, b)], info[(m, b)]
        busbw = b / (t * 1e-6) * 2 * 7 / 8 / 1e6
        cells.append("%.0f / %.0f (%.1f)" % (t / 1e3, p / 1e3, busbw))
    line = "| %d MiB | %s" % (b >> 20, " | ".join(cells))
    if ("rank", b) in best and ("topo", b) in best:
        meas = best[("rank", b)] / best[("topo", b)]
        predr = info[("rank", b)][0] / info[("topo", b)][0]
        line += " | %.2fx | %.2fx" % (meas, predr)
        ok = ok and meas >= need
    else:
        line += " | - | -"
    line += " | %s | %d |" % (info.get(("auto", b), (0, "-", 0))[1],
                              max(info[(m, b)][2] for m in modes))
    print(line)
print("(best of the repetitions; busbw = size x 2(n-1)/n / time; host link %.0f Mbit/s = %.1f MB/s "
      "raw, uplink %.0f Mbit/s; ranks' CPU: highest over the modes of the 8 ranks' CPU time / wall "
      "time of a run, in %% of one core)" % (rate, rate / 8, up))
if need > 0:
    print("speed-up check (measured rank/topo >= %.2f at every size): %s" % (need, "PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
EOF
