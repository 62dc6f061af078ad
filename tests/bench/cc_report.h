/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht_cc's options, what it measured, and its report (cc_report.c):
 * the tables on stdout, CSV files, and the data files of plot_dhtcc.gp
 * (Fig. 4: throughput against offered load per scheme; Fig. 5: against
 * the cross-load per scheme and buffer).
 */
#ifndef FERRY_BENCH_CC_REPORT_H
#define FERRY_BENCH_CC_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cc_bench.h"

#define CC_TMPL_LEN 512

/* bench_dht_cc's own options. */
struct cc_opts {
	unsigned daemons;                           /* -N */
	unsigned lookups;                           /* -L, per peer and run */
	char scheme[CC_MAX_SCHEMES][CC_SCHEME_LEN]; /* -C */
	unsigned n_schemes;
	double rates[CC_MAX_RATES]; /* -R, per peer a second */
	unsigned n_rates;
	unsigned cross[CC_MAX_CROSS]; /* -x, % of the time paused */
	unsigned n_cross;
	double cross_rate;          /* -X: the offered load under cross-load */
	unsigned bufs[CC_MAX_BUFS]; /* -b, messages per peer */
	unsigned n_bufs;
	char tmpl[CC_MAX_SCHEMES][CC_TMPL_LEN]; /* -B, by scheme; "" none */
	unsigned split;    /* -Q: queues a buffer is split over (%q) */
	bool emulate;      /* -E off: plain loopback */
	unsigned delay_ms; /* -d: one-way delay of every peer */
	unsigned kbit;     /* -l: each peer's sending rate, kbit/s */
	unsigned k;        /* -K: bucket size; 0 the daemons' default */
	bool poisson;      /* -P */
	unsigned pause_ms; /* -m */
	size_t block;      /* -s: PUT size without emulation */
	bool do_collapse;  /* -w collapse */
	bool do_cross;     /* -w cross */
};

/* Everything bench_dht_cc measured. */
struct cc_ctx {
	struct bench_opts o;
	struct cc_opts p;
	char transport[32];
	/* experiment 1: [scheme][rate][rep] */
	struct cc_run fig4[CC_MAX_SCHEMES][CC_MAX_RATES][CC_MAX_REPS];
	/* experiment 2: [scheme][buffer][cross][rep] */
	struct cc_run fig5[CC_MAX_SCHEMES][CC_MAX_BUFS][CC_MAX_CROSS]
	                  [CC_MAX_REPS];
	double load0;      /* load average at the start */
	unsigned restarts; /* networks started again for lost entries */
	FILE *runs_csv;    /* every run */
	FILE *ctr_csv;     /* every run's counters that moved */
};

/* Opens the per-run CSV files. 0 or a negative errno. */
int cc_report_open(struct cc_ctx *x);
/* Notes a run: rate index ri for experiment 1 (buffer bi < 0), or
 * buffer bi and cross index ri for experiment 2 (written, logged). */
void cc_report_run(struct cc_ctx *x, unsigned si, int bi, unsigned ri,
    unsigned rep, const struct cc_run *run);
/* The tables, the collapse verdicts and the plot data. */
void cc_report(struct cc_ctx *x);
void cc_report_close(struct cc_ctx *x);

#endif /* FERRY_BENCH_CC_REPORT_H */
