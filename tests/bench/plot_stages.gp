# SPDX-License-Identifier: GPL-3.0-or-later
# bench_stages (issue 13): seed 001 Fig. 3 for ferry's encoding, the time
# of each stage of the upload of the random file by chunk size, stacked as
# in the paper (every stage column of stages.csv, so a stage added to
# stages.c appears by itself; transmit, the blocks put into the DHT of two
# daemons, is wall-clock time where the others are CPU time, and absent
# where a sealed chunk is more than one DHT block); the pipeline's limit
# in MB/s on one and two threads; PBKDF2's cost per key by iteration
# count against what hashing and encrypting one chunk cost; and, when
# erasure.csv is there, ISA-L's erasure encode and decode rates by k + m
# against memcpy and the AEAD of the same data (issue 16).
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_stages.gp -> OUT/stages.png

if (!exists("dir")) dir = "bench-out"
f = dir . "/stages.csv"
if (system("test -f " . f . " && echo y") ne "y") {
    print "plot_stages: no " . f
    exit
}
ec = dir . "/erasure.csv"
have_ec = system("test -f " . ec . " && echo y") eq "y"
panels = have_ec ? 4 : 3
cairo = strstrt(GPVAL_TERMINALS, "pngcairo") > 0
if (cairo) { set terminal pngcairo size 500 * panels,520 font ",10" } \
else { set terminal png size 500 * panels,520 }
set output dir . "/stages.png"
set termoption noenhanced
set datafile separator ","
set datafile missing "nan"
ncol = system("head -n1 " . f . " | awk -F, '{ print NF }'") + 0
sz(x) = x >= 1048576 ? sprintf("%d MiB", x / 1048576) : sprintf("%d KiB", x / 1024)
set multiplot layout 1, panels title "ferry's encoding (bench_stages): seed 001 Fig. 3, pipeline limit, PBKDF2 cost, erasure coding"

set title "Time of each stage for the whole file (median; CPU, transmit by the clock)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set ylabel "ms"
set xlabel "chunk size"
set xtics rotate by -45 font ",9"
set grid ytics
set key top center font ",9"
plot for [i = 3:ncol] f using i:xtic(sz($1)) \
    title system(sprintf("head -n1 %s | cut -d, -f%d | sed 's/_ms$//; s/^transmit$/transmit (wall)/'", f, i))

unset style
set style data linespoints
p = dir . "/pipeline.csv"
set title "read, seal, write: MB/s (median, min-max)"
set ylabel "MB/s (10^6 bytes)"
set logscale x 2
set xtics ("8K" 8192, "32K" 32768, "128K" 131072, "512K" 524288, "2M" 2097152) norotate
set yrange [0:*]
th(t) = sprintf("< awk -F, 'NR > 1 && $2 == %d' %s", t, p)
plot th(1) using 1:3:4:5 with yerrorlines lw 2 title "1 thread", \
     th(2) using 1:3:4:5 with yerrorlines lw 2 title "2 threads"

k = dir . "/pbkdf2.csv"
s = dir . "/keyshare.csv"
set title "PBKDF2-HMAC-SHA512 per key against SHA-512 + AEAD per chunk"
set ylabel "us"
set xlabel "iterations"
set logscale xy
set xtics auto
set yrange [*:*]
set key top left font ",9"
he(c) = system(sprintf("awk -F, '$1 == %d { print $2 + $3 }' %s", c, s)) + 0
h32 = he(32768)
h256 = he(262144)
h1m = he(1048576)
plot k using 1:2 with linespoints lw 2 title "key (PBKDF2)", \
     h32 with lines dt 2 title "hash + encrypt, 32 KiB chunk", \
     h256 with lines dt 2 title "hash + encrypt, 256 KiB chunk", \
     h1m with lines dt 2 title "hash + encrypt, 1 MiB chunk"

if (have_ec) {
    set title "Erasure coding (ISA-L), 256 KiB blocks: MB/s of data"
    unset logscale
    set xlabel "k + m"
    set ylabel "MB/s a CPU second (10^6 bytes)"
    set xtics auto norotate
    set yrange [0:*]
    set key top right font ",9"
    set style data histograms
    set style histogram errorbars gap 1 lw 1
    set style fill solid 0.85 border -1
    set boxwidth 0.9
    plot ec skip 1 using 5:6:7:xtic(sprintf("%d+%d", $1, $2)) title "encode", \
         ec skip 1 using 8:9:10 title "decode (min(k,m) lost)", \
         ec skip 1 using 11:12:13 title "memcpy", \
         ec skip 1 using 14:15:16 title "AEAD"
}
unset multiplot
