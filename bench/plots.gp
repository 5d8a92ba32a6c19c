# plots.gp — drawn by bench/run.py in its output directory from throughput.dat and score.dat.
set terminal svg size 900,480 font "sans,11"
set output "throughput.svg"
set title "adaptmon and its ceilings (requests or segments per second, log scale)"
set style data histograms
set style fill solid 0.7 border -1
set boxwidth 0.8
set logscale y
set grid ytics
set xtics rotate by -30
unset key
plot "throughput.dat" using 2:xtic(1) linecolor rgb "#4477aa"

set output "score.svg"
set title "adaptmon score: wall time against segments (log-log; linear scaling = slope 1)"
unset style
set logscale xy
set xtics norotate
set xlabel "segments"
set ylabel "seconds"
plot "score.dat" using 1:2 with linespoints pointtype 7 linecolor rgb "#aa3377"
