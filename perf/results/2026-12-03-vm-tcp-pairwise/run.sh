#!/bin/bash
# Ring-pattern 4-rank tcp sendrecv vs two concurrent 2-rank pairs (Rabenseifner's pattern), same bytes.
# Usage: pw.sh BUILD OUTDIR ; run under flock /tmp/loom-measure.lock
B=$1; O=$2; mkdir -p $O
export LOOM_TRANSPORT=tcp
for S in 4194304 1048576; do
  M=$((S/2))
  for rep in 1 2 3; do
    $B/perf/sendrecv_perf --ranks 4 -b $S -e $S -n 60 -w 6 --msg-bytes $M -J $O/ring4-$S-$rep.json > $O/ring4-$S-$rep.txt 2>&1
    $B/perf/sendrecv_perf --ranks 2 -b $S -e $S -n 60 -w 6 --msg-bytes $M -J $O/pairA-$S-$rep.json > $O/pairA-$S-$rep.txt 2>&1 &
    $B/perf/sendrecv_perf --ranks 2 -b $S -e $S -n 60 -w 6 --msg-bytes $M -J $O/pairB-$S-$rep.json > $O/pairB-$S-$rep.txt 2>&1 &
    wait
    $B/perf/sendrecv_perf --ranks 2 -b $S -e $S -n 60 -w 6 --msg-bytes $M -J $O/pair1-$S-$rep.json > $O/pair1-$S-$rep.txt 2>&1
  done
done
