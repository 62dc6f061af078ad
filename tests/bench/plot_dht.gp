# SPDX-License-Identifier: GPL-3.0-or-later
# bench_dht (issue 12): PUT and GET latency of 1 KiB and 256 KiB blocks
# between 16 daemons, without and with emulated one-way delay (p50 and
# p99, median and min-max of the runs, for all requests and by the way
# their answers came, with the p50 goal), GETs from leaves whose answers
# come back along the path among them; and throughput from one client
# with many requests in flight against ferry's own bulk link in the same
# run.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_dht.gp
#        -> OUT/dht_latency.png, OUT/dht_throughput.png

if (!exists("dir")) dir = "bench-out"
cairo = strstrt(GPVAL_TERMINALS, "pngcairo") > 0
set datafile missing "?"

# --- latency: one panel per delay -----------------------------------------
files = system("ls " . dir . "/dht_latency_*ms.dat 2>/dev/null | sort -t_ -k3 -n")
n = words(files)
if (n > 0) {
    if (cairo) { set terminal pngcairo size 1400,(n * 460) font ",10" } \
    else { set terminal png size 1400,(n * 460) }
    set output dir . "/dht_latency.png"
    set style data histograms
    set style histogram errorbars gap 2 lw 1
    set style fill solid 0.85 border -1
    set boxwidth 0.9
    set logscale y
    set format y "%g"
    set yrange [0.05:*]
    set ylabel "ms (log)"
    set grid ytics
    set xtics rotate by -30 font ",9"
    set key top left font ",9"
    set multiplot layout n, 1 title \
        "DHT latency, one request at a time: median and min-max of the runs' p50 and p99 (dir: answers straight from the peers that gave them, rtd: back along the path; lget: GETs from leaves)"
    do for [i = 1:n] {
        f = word(files, i)
        d = system("basename " . f . " | sed 's/dht_latency_//; s/ms.dat//'")
        set title (d eq "0" ? "no emulated delay (goal: OpenDHT 2.4, put p50 2.5 ms, get p50 2.2 ms)" \
                             : sprintf("%s ms one-way delay on every link (goal: p50 <= (hops + 1) x delay + 10 %%)", d))
        plot f using 2:3:4:xtic(1) title "p50" lc rgb "#3182bd", \
             '' using 5:6:7 title "p99" lc rgb "#e6550d", \
             '' using 8:8:8 title "goal p50" lc rgb "#bbbbbb"
    }
    unset multiplot
    unset logscale y
    set xtics norotate font ",10"
} else {
    print "plot_dht: no dht_latency_*ms.dat in " . dir
}

# --- throughput -----------------------------------------------------------
f = dir . "/dht_throughput.dat"
if (system("test -f " . f . " && echo y") eq "y") {
    if (cairo) { set terminal pngcairo size 1400,520 font ",10" } \
    else { set terminal png size 1400,520 }
    set output dir . "/dht_throughput.png"
    set style data histograms
    set style histogram errorbars gap 2 lw 1
    set style fill solid 0.85 border -1
    set boxwidth 0.9
    set grid ytics
    set key below font ",9"
    set multiplot layout 1, 2 title \
        "DHT throughput from one client, many requests in flight through one daemon: median, min-max"
    set title "MB/s of unique block data (PUT x replication) against the bulk link"
    set ylabel "MB/s (10^6 bytes)"
    set yrange [0:*]
    plot f using 2:3:4:xtic(1) title "PUT x R" lc rgb "#3182bd", \
         '' using 8:9:10 title "GET" lc rgb "#31a354", \
         '' using 0:14 with lines lw 2 lc rgb "#444444" title "ferry bulk link, this run", \
         '' using 0:($14 / 2) with lines lw 2 dt 2 lc rgb "#444444" title "goal: half of it"
    set title "blocks per second (log)"
    set ylabel "blocks/s"
    set logscale y
    set yrange [10:*]
    plot f using 5:6:7:xtic(1) title "PUT" lc rgb "#3182bd", \
         '' using 11:12:13 title "GET" lc rgb "#31a354"
    unset multiplot
    unset logscale y
} else {
    print "plot_dht: no " . f
}
