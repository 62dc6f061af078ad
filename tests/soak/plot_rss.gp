# SPDX-License-Identifier: GPL-3.0-or-later
# RSS of every daemon over a soak run (tests/soak/soak.sh draws it):
#   gnuplot -e "dat='rss.dat'; png='rss.png'; n=16; stable=4" plot_rss.gp
# rss.dat has one block per daemon (t_s rss_mib peers), a blank line
# where a restart breaks the line; n is the number of daemons, and the
# first `stable` ones, never killed, are drawn thick.

if (!exists("stable")) stable = 4
if (!exists("n")) n = 16
set terminal pngcairo size 1200,700 font ",10"
set output png
set key outside right top title "daemon"
set xlabel "time since the run phase began (s)"
set ylabel "RSS (MiB)"
set grid
plot for [i=0:n-1] dat index i using 1:2 with lines \
    linewidth (i < stable ? 2.5 : 1) title sprintf("d%d", i)
