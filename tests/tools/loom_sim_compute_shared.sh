#!/bin/bash
# loom-sim --compute-shared / --host-cores / --core-gbps against closed forms. One host of 8 GPUs,
# ring all-reduce of S = 64 MiB, reductions at 5 GB/s: each rank reduces 7/8 S, so
#   one core per rank:            7/8 S / 5 GB/s            = 11.744 ms (+ pipeline fill)
#   8 ranks on 1 host core:       8 x that                  = 93.95 ms
#   CPU-moved transfers, 10 GB/s: each rank also sends and receives 2 x 7/8 S through its core,
#                                 8 x (11.744 + 2 x 11.744) = 281.85 ms
# and bad values are refused with the option named.
set -u
sim=$1
fabric="fat-tree:levels=2,leavesPerPod=1,spinesPerPod=1,hostsPerLeaf=1,rails=1,speed=NDR"
fail=0
check() {  # expected_us tolerance(fraction) args...
  local want=$1 tol=$2
  shift 2
  local got
  got=$("$sim" --fabric "$fabric" --algo ring --size 64M --reduce-gbps 5 -q "$@" | awk 'NR==2{print $4}')
  if ! awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN{exit !(g >= w*0.999 && g <= w*(1+t))}'; then
    echo "FAIL: $* -> ${got} us, closed form ${want} us (+${tol})"
    fail=1
  else
    echo "ok: $* -> ${got} us (closed form ${want} us)"
  fi
}
check 11744.05 0.02 --compute-shared
check 93952.41 0.01 --compute-shared --host-cores 1
check 281857.2 0.01 --compute-shared --host-cores 1 --core-gbps 10
# Unshared, the reductions of different chunks overlap freely: far below the shared time.
got=$("$sim" --fabric "$fabric" --algo ring --size 64M --reduce-gbps 5 -q | awk 'NR==2{print $4}')
awk -v g="$got" 'BEGIN{exit !(g < 11744.05 / 2)}' || { echo "FAIL: unshared $got us"; fail=1; }
for bad in "--compute-shared --host-cores -1" "--host-cores 2" "--compute-shared --core-gbps -3"; do
  # shellcheck disable=SC2086
  out=$("$sim" --fabric "$fabric" $bad 2>&1) && { echo "FAIL: accepted $bad"; fail=1; }
  opt=$(echo "$bad" | grep -o -- '--[a-z-]*' | tail -1)
  echo "$out" | grep -q -- "$opt" || { echo "FAIL: '$bad' error does not name $opt: $out"; fail=1; }
done
exit $fail
