set terminal pngcairo size 1000,600 noenhanced
set output 'perf/results/2026-11-30-vm-sim-scale-2/compare16k-tree/nonblocking/busbw.png'
set title "allreduce busbw, 16384 GPUs, fat-tree, spray"
set logscale x 2
set format x '%.0b%B'
set xlabel 'message size (bytes)'
set ylabel 'busbw (GB/s)'
set key left top
set grid
plot 'perf/results/2026-11-30-vm-sim-scale-2/compare16k-tree/nonblocking/busbw.dat' index 0 with linespoints title "tree"
