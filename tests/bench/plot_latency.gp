# SPDX-License-Identifier: GPL-3.0-or-later
# Latency in the style of seed 001 Fig. 5-6: time to move 1 MB over UDP
# against the emulated round-trip time, as 128 x 8 KiB and as 1 x 1 MiB,
# on a cold and a warm link; the goal 5 RTT + transmission time; the
# paper's measurements (UDP stop-and-wait, its TCP relay) as reference
# points. Right: the same times in round trips.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_latency.gp -> OUT/latency.png

if (!exists("dir")) dir = "bench-out"
f = dir . "/latency_fig.dat"
if (system("test -f " . f . " && echo y") ne "y") {
    print "plot_latency: no " . f; exit
}
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1300,640 font ",10"
} else {
    set terminal png size 1300,640
}
set output dir . "/latency.png"

# Columns: 1 rtt; 8k cold 2-5, 8k warm 6-9, 1m cold 10-13, 1m warm 14-17
# (median, min, max, RTTs); 18 tx 8k, 19 tx 1m.
stats f using 18 nooutput
tx8 = STATS_max
$paper_udp << EOD
10 5.24
200 78
EOD
$paper_tcp << EOD
10 0.36
200 2
EOD

set multiplot layout 1, 2 title \
    "1 MB over UDP with emulated round-trip time (seed 001 Fig. 5-6): median, min-max"
set xlabel "round-trip time (ms)"
set ylabel "seconds (log)"
set logscale y
set format y "%g"
set xrange [0:320]
set grid
set key outside bottom center horizontal maxrows 4 font ",9"
set title "time from the first send to the last byte received"
plot $paper_udp using 1:2 with linespoints pt 7 ps 1.5 lc rgb "#999999" title "paper: UDP stop-and-wait (8 KB)", \
     $paper_tcp using 1:2 with linespoints pt 5 ps 1.5 lc rgb "#555555" title "paper: TCP relay (8 KB)", \
     5 * x / 1000 + tx8 with lines dt 2 lw 2 lc rgb "#2ca02c" title "goal: 5 RTT + transmission", \
     '+' using (200):(1.2) every ::0::0 with points pt 3 ps 2.5 lc rgb "#2ca02c" title "goal: < 1.2 s at 200 ms", \
     f using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb "#08519c" title "ferry 128 x 8 KiB, cold link", \
     f using 1:6:7:8 with yerrorlines lw 2 dt 3 pt 6 lc rgb "#08519c" title "ferry 128 x 8 KiB, warm link", \
     f using 1:10:11:12 with yerrorlines lw 2 pt 9 lc rgb "#a63603" title "ferry 1 x 1 MiB, cold link", \
     f using 1:14:15:16 with yerrorlines lw 2 dt 3 pt 8 lc rgb "#a63603" title "ferry 1 x 1 MiB, warm link"

unset logscale y
set ylabel "round trips"
set yrange [0:*]
set title "the same in round-trip times (medians)"
plot 5 with lines dt 2 lw 2 lc rgb "#2ca02c" title "5 RTT", \
     f using 1:5 with linespoints lw 2 pt 7 lc rgb "#08519c" title "128 x 8 KiB, cold", \
     f using 1:9 with linespoints lw 2 dt 3 pt 6 lc rgb "#08519c" title "128 x 8 KiB, warm", \
     f using 1:13 with linespoints lw 2 pt 9 lc rgb "#a63603" title "1 x 1 MiB, cold", \
     f using 1:17 with linespoints lw 2 dt 3 pt 8 lc rgb "#a63603" title "1 x 1 MiB, warm"
unset multiplot
