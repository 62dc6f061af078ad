# SPDX-License-Identifier: GPL-3.0-or-later
# Round trips in the style of seed 004 Fig. 5: time for 1000 sequential
# messages per size, raw / core / whole stack / raw chain shaped like the
# stack, UDP and TCP, medians with min-max bars; one panel per CPU
# placement measured.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_rtt.gp  -> OUT/rtt.png

if (!exists("dir")) dir = "bench-out"
places = ""
do for [p in "pinned unpinned"] {
    if (system("test -f " . dir . "/rtt_fig5_" . p . ".dat && echo y") eq "y") {
        places = places . " " . p
    }
}
n = words(places)
if (n == 0) { print "plot_rtt: no rtt_fig5_*.dat in " . dir; exit }

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size (n * 800),600 font ",10"
} else {
    set terminal png size (n * 800),600
}
set output dir . "/rtt.png"

set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set ylabel "ms per 1000 round trips (= us per round trip)"
set xlabel "message size (bytes)"
set key top left reverse Left font ",9"
set yrange [0:*]

set multiplot layout 1, n title \
    "Round trips, 1000 sequential messages (seed 004 Fig. 5): median, min-max"
do for [i = 1:n] {
    p = word(places, i)
    f = dir . "/rtt_fig5_" . p . ".dat"
    set title p . (p eq "pinned" ? \
        " (daemon A + clients on CPU 0, daemon B + client B on CPU 1)" : \
        " (scheduler's choice)")
    plot f using 2:3:4:xtic(1) title "UDP raw" lc rgb "#c6dbef", \
         '' using 5:6:7 title "UDP core" lc rgb "#6baed6", \
         '' using 8:9:10 title "UDP stack" lc rgb "#08519c", \
         '' using 11:12:13 title "UDP chain (raw, stack-shaped)" lc rgb "#cccccc", \
         '' using 14:15:16 title "TCP raw" lc rgb "#fdd0a2", \
         '' using 17:18:19 title "TCP core" lc rgb "#fd8d3c", \
         '' using 20:21:22 title "TCP stack" lc rgb "#a63603", \
         '' using 23:24:25 title "TCP chain (raw, stack-shaped)" lc rgb "#888888"
}
unset multiplot
