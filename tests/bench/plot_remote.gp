# SPDX-License-Identifier: GPL-3.0-or-later
# Thin client against full peer in the style of seed 001 Fig. 5 and
# Fig. 6: time to put 1 MB against the client's round-trip time, by a
# full ferry peer over emulated links (Fig. 5's DHT client) and by the
# thin client through the intermediary over a delaying TCP relay (Fig.
# 6's hybrid), cold and warm; the goals (5 RTT + transmission for the
# full peer, 1.6 s cold and 0.6 s warm at 200 ms for the intermediary)
# and the paper's points. Right: the same medians in round trips.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_remote.gp -> OUT/remote.png

if (!exists("dir")) dir = "bench-out"
f = dir . "/remote_fig.dat"
if (system("test -f " . f . " && echo y") ne "y") {
    print "plot_remote: no " . f; exit
}
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1300,640 font ",10"
} else {
    set terminal png size 1300,640
}
set output dir . "/remote.png"

# Columns: 1 rtt; then median, min, max, RTTs of peer-cold 2-5,
# peer-warm 6-9, imd-cold 10-13, imd-cold-lib 14-17, imd-warm 18-21,
# imd-warm-idle 22-25; 26-31 the same series' times at RTT 0.
stats f using 27 nooutput
txpeer = STATS_max
$paper_udp << EOD
10 5.24
200 78
EOD
$paper_hybrid << EOD
10 0.36
200 2
EOD
$goal_imd << EOD
200 1.6
200 0.6
EOD

set multiplot layout 1, 2 title \
    "1 MB put at a client round-trip time (seed 001 Fig. 5-6): median, min-max"
set xlabel "client round-trip time (ms)"
set ylabel "seconds until the URI, every block's receipts in (log)"
set logscale y
set format y "%g"
set xrange [-10:320]
set yrange [0.02:100]
set grid
set key outside bottom center horizontal maxrows 5 font ",9"
set title "time from the start to the URI"
plot $paper_udp using 1:2 with linespoints pt 7 ps 1.5 lc rgb "#999999" title "paper: DHT client over UDP (Fig. 5)", \
     $paper_hybrid using 1:2 with linespoints pt 5 ps 1.5 lc rgb "#555555" title "paper: hybrid, TCP to its intermediary (Fig. 6)", \
     5 * x / 1000 + txpeer with lines dt 2 lw 2 lc rgb "#2ca02c" title "goal, full peer: 5 RTT + transmission", \
     $goal_imd using 1:2 with points pt 3 ps 2.5 lc rgb "#2ca02c" title "goal, intermediary at 200 ms: 1.6 s cold, 0.6 s warm", \
     f using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb "#a63603" title "full peer, cold (restarted)", \
     f using 1:6:7:8 with yerrorlines lw 2 dt 3 pt 6 lc rgb "#a63603" title "full peer, warm (links up)", \
     f using 1:10:11:12 with yerrorlines lw 2 pt 9 lc rgb "#08519c" title "thin client, cold (ferry remote put)", \
     f using 1:14:15:16 with yerrorlines lw 1 dt 4 pt 8 lc rgb "#6baed6" title "thin client, cold (library, new handle)", \
     f using 1:18:19:20 with yerrorlines lw 2 dt 3 pt 5 lc rgb "#08519c" title "thin client, warm (connection reused)", \
     f using 1:22:23:24 with yerrorlines lw 1 dt 2 pt 4 lc rgb "#756bb1" title "thin client, warm after 1 s idle"

unset logscale y
set ylabel "round trips"
set yrange [0:*]
set xrange [0:320]
set title "the same in round-trip times (medians)"
plot 5 with lines dt 2 lw 2 lc rgb "#2ca02c" title "5 RTT", \
     f using 1:5 with linespoints lw 2 pt 7 lc rgb "#a63603" title "full peer, cold", \
     f using 1:9 with linespoints lw 2 dt 3 pt 6 lc rgb "#a63603" title "full peer, warm", \
     f using 1:13 with linespoints lw 2 pt 9 lc rgb "#08519c" title "thin client, cold (command)", \
     f using 1:17 with linespoints lw 1 dt 4 pt 8 lc rgb "#6baed6" title "thin client, cold (library)", \
     f using 1:21 with linespoints lw 2 dt 3 pt 5 lc rgb "#08519c" title "thin client, warm", \
     f using 1:25 with linespoints lw 1 dt 2 pt 4 lc rgb "#756bb1" title "thin client, warm after idle"
unset multiplot
