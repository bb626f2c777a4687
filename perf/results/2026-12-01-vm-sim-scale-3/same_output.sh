#!/bin/bash
# Same answers before/after: runs loom-sim BIN on 11 configurations and saves its full output
# (wall-clock column replaced by WALL) in OUTDIR, to diff two builds.
#   same_output.sh BIN OUTDIR
B=$1; O=$2; mkdir -p $O
FT2="fat-tree:levels=2,leavesPerPod=4,spinesPerPod=32,hostsPerLeaf=32,rails=8,speed=NDR"
FT3="fat-tree:levels=3,pods=2,leavesPerPod=8,spinesPerPod=32,cores=2048,hostsPerLeaf=32,rails=8,speed=NDR"
FT2T="fat-tree:levels=2,leavesPerPod=8,spinesPerPod=4,hostsPerLeaf=8,rails=8,speed=NDR"
DF="dragonfly:groups=4,leavesPerGroup=8,spinesPerGroup=4,hostsPerLeaf=4,globalLinksPerSpine=4,speed=NDR"
run() { name=$1; shift; nice -n 5 $B "$@" 2>&1 | sed -E 's/ +[0-9]+\.[0-9]+( +[0-9]+)$/ WALL\1/' > $O/$name.txt; echo "$name rc=$?"; }
run tree1k-spray --fabric $FT2 --algo tree,hier_tree --size 256M --ranks 1024 --routing spray
run tree1k-ecmp --fabric $FT2 --algo tree,hier_tree --size 64M --ranks 1024 --routing ecmp
run tree1k-fail --fabric $FT2 --algo tree,hier_tree --size 64M --ranks 1024 --routing spray --fail spines:3,links:5
run ft3-sweep --fabric $FT3 --algo tree,ring,hier,rabenseifner --sweep 1M:16M:4 --ranks 4096 --routing spray
run taper-sweep --fabric $FT2T --algo all --sweep 1M:64M:8 --routing spray
run taper-ecmp --fabric $FT2T --algo tree,ring,hier,rabenseifner,hier_tree --size 32M --routing ecmp --seeds 2
run df-valiant --fabric $DF --algo tree,hier_tree,ring,rabenseifner --size 32M --routing valiant
run df-ugal --fabric $DF --algo tree,hier_tree,ring --size 16M --routing ugal
run df-minimal-fail --fabric $DF --algo tree,hier,ring --size 16M --routing spray --fail global:2
run compute --fabric $FT2T --algo tree,ring,rabenseifner --size 8M --ranks 64 --compute-shared --host-cores 4 --core-gbps 20
run planner --fabric $FT2T --algo planner --sweep 1M:256M:16 --routing spray --fail spines:2
