# SPDX-License-Identifier: GPL-3.0-or-later
# Throughput in the style of seed 004 Fig. 6-7: the fraction of the
# messages received t ms after the first send (median run), raw UDP one
# message per datagram against ferry over UDP and TCP; and bar charts of
# messages/s and goodput against the raw baselines.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_throughput.gp
#        -> OUT/throughput.png, OUT/throughput_rates.png

if (!exists("dir")) dir = "bench-out"
places = ""
do for [p in "pinned unpinned"] {
    if (system("test -f " . dir . "/throughput_" . p . ".dat && echo y") eq "y") {
        places = places . " " . p
    }
}
n = words(places)
if (n == 0) { print "plot_throughput: no throughput_*.dat in " . dir; exit }
cairo = strstrt(GPVAL_TERMINALS, "pngcairo") > 0

# --- received over time (Fig. 6-7) -------------------------------------
if (cairo) { set terminal pngcairo size 1300,(n * 420) font ",10" } \
else { set terminal png size 1300,(n * 420) }
set output dir . "/throughput.png"
set datafile separator ","
s = dir . "/throughput_series.csv"
set xlabel "time since the first send (ms)"
set ylabel "fraction of messages received"
set yrange [0:1.05]
set xrange [0:*]
set grid
set key bottom right font ",9"
sel(p, k, z) = (strcol(1) eq p && strcol(2) eq k && $3 == z) ? $5 : 1/0
set multiplot layout n, 2 title \
    "100 000 messages sent as fast as accepted (seed 004 Fig. 6-7): received over time"
do for [i = 1:n] {
    p = word(places, i)
    do for [z in "1200 100"] {
        zz = z + 0
        set title sprintf("%s, %s-byte messages", p, z)
        plot s using 4:(sel(p, "raw-udp-def", zz)) with lines lw 2 dt 2 lc rgb "#bbbbbb" title "raw UDP, 1 msg/datagram, default buffers", \
             s using 4:(sel(p, "raw-udp", zz)) with lines lw 2 lc rgb "#777777" title "raw UDP, 1 msg/datagram, 4 MiB buffers", \
             s using 4:(sel(p, "ferry-udp", zz)) with lines lw 2 lc rgb "#08519c" title "ferry over UDP", \
             s using 4:(sel(p, "ferry-tcp", zz)) with lines lw 2 lc rgb "#a63603" title "ferry over TCP"
    }
}
unset multiplot
set datafile separator whitespace

# --- rates against the raw baselines ------------------------------------
if (cairo) { set terminal pngcairo size 1300,(n * 420) font ",10" } \
else { set terminal png size 1300,(n * 420) }
set output dir . "/throughput_rates.png"
set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
unset xrange
set xlabel ""
set key top right font ",9"
set grid ytics
set multiplot layout n, 2 title "Messages/s and goodput, median with min-max (raw baselines of the same run)"
do for [i = 1:n] {
    p = word(places, i)
    f = dir . "/throughput_" . p . ".dat"
    set title p . ": messages per second received (log)"
    set logscale y
    set yrange [1000:*]
    set ylabel "messages/s"
    plot f every ::0::1 using 29:30:31:xtic(1) title "raw UDP, default buffers" lc rgb "#dddddd", \
         '' every ::0::1 using 5:6:7 title "raw UDP" lc rgb "#aaaaaa", \
         '' every ::0::1 using 11:12:13 title "raw TCP" lc rgb "#666666", \
         '' every ::0::1 using 17:18:19 title "ferry UDP" lc rgb "#3182bd", \
         '' every ::0::1 using 23:24:25 title "ferry TCP" lc rgb "#e6550d"
    unset logscale y
    set yrange [0:*]
    set title p . ": goodput (MB/s)"
    set ylabel "MB/s (10^6 bytes)"
    plot f using 26:27:28:xtic(1) title "raw UDP, default buffers" lc rgb "#dddddd", \
         '' using 2:3:4 title "raw UDP" lc rgb "#aaaaaa", \
         '' using 8:9:10 title "raw TCP" lc rgb "#666666", \
         '' using 14:15:16 title "ferry UDP" lc rgb "#3182bd", \
         '' using 20:21:22 title "ferry TCP" lc rgb "#e6550d"
}
unset multiplot
