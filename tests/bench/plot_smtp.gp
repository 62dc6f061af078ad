# SPDX-License-Identifier: GPL-3.0-or-later
# The SMTP transport's benchmarks (bench_smtp) in the style of seed 004:
#   smtp_fig5.png  Fig. 5, SMTP row: seconds per 1000 sequential messages
#                  per size, ferry and the raw mail path, Maildir and FIFO
#                  inboxes, next to the paper's qmail, sendmail + procmail
#                  and Purdue figures (log scale); and the distribution of
#                  the time per message of each median run.
#   smtp_fig8.png  Fig. 8: payload throughput in kbit/s (log scale) of
#                  ferry per MTU and of the raw path per mail size, next to
#                  the paper's 6, 13 and 51 kbit/s; and ferry's messages
#                  received over time.
# Usage: gnuplot -e "dir='OUT'" tests/bench/plot_smtp.gp

if (!exists("dir")) dir = "bench-out"
cairo = strstrt(GPVAL_TERMINALS, "pngcairo") > 0
have5 = system("test -f " . dir . "/smtp_fig5.dat && echo y") eq "y"
have8 = system("test -f " . dir . "/smtp_fig8.dat && echo y") eq "y"
if (!have5 && !have8) { print "plot_smtp: no smtp_fig5.dat or smtp_fig8.dat in " . dir; exit }

# --- Fig. 5 -----------------------------------------------------------------
if (have5) {
    if (cairo) { set terminal pngcairo size 1500,600 font ",10" } \
    else { set terminal png size 1500,600 }
    set output dir . "/smtp_fig5.png"
    set multiplot layout 1, 2 title \
        "1000 sequential messages over SMTP through Postfix + procmail (seed 004 Fig. 5, SMTP row): median, min-max"
    f = dir . "/smtp_fig5.dat"
    set style data histograms
    set style histogram errorbars gap 2 lw 1
    set style fill solid 0.85 border -1
    set boxwidth 0.9
    set logscale y
    set yrange [1:2000]
    set grid ytics
    set ylabel "seconds per 1000 messages (log)"
    set xlabel "message size (bytes)"
    set key top left font ",9" maxrows 4
    set title "time for 1000 messages; goal 24 s (dashed)"
    # A column with no figure at all (an inbox kind not measured) would
    # stop a histogram: plot only those with data.
    has(c) = system(sprintf("awk '!/^#/ && $%d != \"nan\" { f = 1 } END { print f + 0 }' %s", c, f)) + 0
    names = "ferry,_Maildir raw_path,_Maildir ferry,_FIFO raw_path,_FIFO"
    colours = "#08519c #9ecae1 #a63603 #fdae6b"
    cmd = "plot 24 with lines dt 2 lw 2 lc rgb '#000000' notitle"
    do for [k = 0:3] {
        c = 2 + 3 * k
        if (has(c)) {
            cmd = cmd . sprintf(", f using %d:%d:%d:xtic(1) title '%s' lc rgb '%s'", \
                c, c + 1, c + 2, system("echo " . word(names, k + 1) . " | tr _ ' '"), word(colours, k + 1))
        }
    }
    cmd = cmd . ", f using 14:14:14:xtic(1) title 'paper: qmail' lc rgb '#31a354'"
    cmd = cmd . ", f using 15:15:15:xtic(1) title 'paper: RH 8.0 sendmail + procmail' lc rgb '#a1d99b'"
    cmd = cmd . ", f using 16:16:16:xtic(1) title 'paper: Purdue sendmail + filters' lc rgb '#bbbbbb'"
    eval cmd
    unset logscale y
    set style data lines
    set datafile separator ","
    s = dir . "/smtp_fig5_series.csv"
    set title "time per message, median run of each (CDF)"
    set logscale x
    set xrange [1:*]
    set yrange [0:1.02]
    set xlabel "ms from ferry_send() (raw: submission) to arrival (log)" noenhanced
    set ylabel "fraction of messages"
    set key bottom right font ",9" maxrows 12
    sel(in, p, z) = (strcol(1) eq in && strcol(2) eq p && $3 == z) ? $5 : 1/0
    zs = "11 407 1221"
    plot for [i = 1:3] s using (sel("maildir", "ferry", word(zs, i) + 0)):4 lw 2 lc rgb "#08519c" dt i title "ferry, Maildir, " . word(zs, i) . " B", \
         for [i = 1:3] s using (sel("maildir", "raw", word(zs, i) + 0)):4 lw 2 lc rgb "#9ecae1" dt i title "raw, Maildir, " . word(zs, i) . " B", \
         for [i = 1:3] s using (sel("fifo", "ferry", word(zs, i) + 0)):4 lw 2 lc rgb "#a63603" dt i title "ferry, FIFO, " . word(zs, i) . " B", \
         for [i = 1:3] s using (sel("fifo", "raw", word(zs, i) + 0)):4 lw 2 lc rgb "#fdae6b" dt i title "raw, FIFO, " . word(zs, i) . " B"
    unset multiplot
    unset logscale
    set datafile separator whitespace
    unset xrange
    unset yrange
}

# --- Fig. 8 -----------------------------------------------------------------
if (have8) {
    if (cairo) { set terminal pngcairo size 1500,650 font ",10" } \
    else { set terminal png size 1500,650 }
    set output dir . "/smtp_fig8.png"
    set multiplot layout 1, 2 title \
        "Throughput over SMTP, 1200-byte messages batched into mails (seed 004 Fig. 8): median, min-max"
    f = dir . "/smtp_fig8.dat"
    set style data boxes
    set style fill solid 0.85 border -1
    set boxwidth 0.7
    set logscale y
    set yrange [1:*]
    set grid ytics
    set ylabel "payload kbit/s (log)"
    set xlabel ""
    set xtics rotate by 30 right font ",8"
    set key top left font ",9"
    set title "goal 2 MB/s = 16000 kbit/s (dashed)"
    colour(c) = c == 0 ? 0x31a354 : c == 1 ? 0x08519c : c == 2 ? 0x9ecae1 : c == 3 ? 0xa63603 : 0xfdae6b
    plot f using 0:2:(colour($5)):xtic(1) with boxes lc rgb variable notitle, \
         '' using 0:2:3:4 with yerrorbars lc rgb "#000000" pt 0 notitle, \
         16000 with lines dt 2 lw 2 lc rgb "#000000" notitle, \
         NaN with boxes lc rgb "#31a354" title "paper (sendmail)", \
         NaN with boxes lc rgb "#08519c" title "ferry, Maildir", \
         NaN with boxes lc rgb "#9ecae1" title "raw path, Maildir", \
         NaN with boxes lc rgb "#a63603" title "ferry, FIFO", \
         NaN with boxes lc rgb "#fdae6b" title "raw path, FIFO"
    unset logscale y
    set xtics norotate font ",10"
    set style data lines
    set datafile separator ","
    s = dir . "/smtp_fig8_series.csv"
    set title "ferry: messages received over time (median run)"
    set xrange [0:*]
    set yrange [0:1.05]
    set xlabel "seconds since the first ferry_send()" noenhanced
    set ylabel "fraction of the messages"
    set key bottom right font ",9"
    sel8(in, v) = (strcol(1) eq in && strcol(2) eq v) ? $3 / 1000 : 1/0
    plot for [in in "maildir fifo"] for [v in "12000 1048576 auto"] s using (sel8(in, "MTU " . v)):4 lw 2 title "MTU " . v . ", " . in
    unset multiplot
}
