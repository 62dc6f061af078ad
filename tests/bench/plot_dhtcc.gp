# SPDX-License-Identifier: GPL-3.0-or-later
# bench_dht_cc (issue 14): the seed's Fig. 4, throughput achieved per peer
# against the offered load, one line per congestion scheme (median of the
# runs, min-max error bars; dotted, the requests that ended while the load
# was offered, over that time; the line achieved = offered for reference),
# and Fig. 5, throughput against the cross-load (% of the time each peer
# is stopped), one line per scheme and buffer.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_dhtcc.gp
#        -> OUT/dhtcc_fig4.png, OUT/dhtcc_fig5.png

if (!exists("dir")) dir = "bench-out"
cairo = strstrt(GPVAL_TERMINALS, "pngcairo") > 0

f4 = dir . "/dhtcc_fig4.dat"
if (system("test -s " . f4 . " && echo y") eq "y") {
    if (cairo) { set terminal pngcairo size 900,600 font ",10" } \
    else { set terminal png size 900,600 }
    set output dir . "/dhtcc_fig4.png"
    set title "DHT congestion collapse (seed 002 Fig. 4): lookups achieved against offered, per peer"
    set xlabel "offered load (lookups/s per peer)"
    set ylabel "achieved throughput (lookups/s per peer)"
    set grid
    set key top left
    set xrange [0:*]
    set yrange [0:*]
    plot for [i = 0:*] f4 index i using 1:2:3:4 with yerrorlines \
            lw 2 pt 7 lc (i + 1) title columnheader(1), \
         for [i = 0:*] f4 index i using 1:5 with linespoints \
            dt 3 lw 1 pt 6 lc (i + 1) notitle, \
         x with lines dt 2 lc rgb "gray" title "achieved = offered", \
         NaN with linespoints dt 3 pt 6 lc rgb "black" \
            title "dotted: ended while the load was offered"
    unset output
}

f5 = dir . "/dhtcc_fig5.dat"
if (system("test -s " . f5 . " && echo y") eq "y") {
    if (cairo) { set terminal pngcairo size 900,600 font ",10" } \
    else { set terminal png size 900,600 }
    set output dir . "/dhtcc_fig5.png"
    set title "DHT under cross-load (seed 002 Fig. 5): peers stopped a fraction of the time"
    set xlabel "cross-load (% of the time each peer is stopped)"
    set ylabel "achieved throughput (lookups/s per peer)"
    set grid
    set key top right
    set xrange [-0.5:*]
    set yrange [0:*]
    plot for [i = 0:*] f5 index i using 1:2:3:4 with yerrorlines \
            lw 2 pt 7 title columnheader(1)
    unset output
}
