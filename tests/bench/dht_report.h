/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's options, what it measured, and its report (dht_report.c):
 * tables on stdout, the goals of issue 12 judged, CSV files and the data
 * files of plot_dht.gp.
 */
#ifndef FERRY_BENCH_DHT_REPORT_H
#define FERRY_BENCH_DHT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dht_bench.h"

#define DB_MAX_SIZES  4
#define DB_MAX_DELAYS 4
#define DB_MAX_REPLS  4
#define DB_MAX_REPS   25

/* The goals (issue 12, "Benchmark"). */
#define DB_GOAL_PUT_P50_MS  2.5 /* OpenDHT 2.4, 16 dhtnodes, loopback */
#define DB_GOAL_PUT_P99_MS  4.9
#define DB_GOAL_GET_P50_MS  2.2
#define DB_GNUNET_P2G_MS    20.0          /* GNUnet put-to-get, two peers */
#define DB_GOAL_P2G_MS      5.0           /* "far better": 4x below GNUnet's */
#define DB_GOAL_DELAY_SLACK 1.10          /* (hops + 1) x delay + 10 % */
#define DB_GOAL_BULK_FRAC   0.5           /* PUT goodput x R / bulk */
#define DB_GOAL_IDLE_KIB    (10e6 / 1024) /* 10 MB */

/* bench_dht's own options. */
struct db_opts {
	unsigned daemons;           /* -N */
	unsigned ops;               /* -n */
	unsigned lat_repl;          /* -L: 0 the daemons' default */
	unsigned leaves;            /* -V: leaves for the latency runs */
	size_t sizes[DB_MAX_SIZES]; /* -s */
	unsigned n_sizes;
	unsigned delays[DB_MAX_DELAYS]; /* -l, ms */
	unsigned n_delays;
	unsigned jobs;                 /* -j */
	uint64_t counts[DB_MAX_SIZES]; /* -k, per size */
	unsigned repls[DB_MAX_REPLS];  /* -R */
	unsigned n_repls;
	unsigned bulk_mib;            /* -b */
	uint64_t rss_blocks;          /* -S */
	bool do_lat, do_tput, do_rss; /* -w */
};

/* Memory figures, KiB of VmRSS. */
struct db_rss {
	unsigned long idle[DB_MAX_DAEMONS]; /* the first network, idle */
	unsigned idle_n;                    /* 0: not measured */
	unsigned idle_delay;
	unsigned long after[DB_MAX_DAEMONS]; /* after the throughput runs */
	uint64_t after_blocks[DB_MAX_DAEMONS];
	bool after_done;
	unsigned long alone_idle; /* one daemon, no peers, idle */
	unsigned long many;       /* the same holding many blocks */
	unsigned long many_hwm;   /* its VmHWM then */
	uint64_t many_blocks;
	unsigned long restarted; /* after a restart with them */
	uint64_t restarted_blocks;
	bool many_done;
	struct db_tput_run fill; /* how the blocks went in */
	double load[2];          /* before, after */
};

/* Everything bench_dht measured. */
struct db_ctx {
	struct bench_opts o;
	struct db_opts p;
	char transport[32];
	struct db_lat_run lat[DB_MAX_DELAYS][DB_MAX_SIZES][DB_MAX_REPS];
	unsigned lat_n[DB_MAX_DELAYS][DB_MAX_SIZES];
	double lat_load[DB_MAX_DELAYS][2]; /* before, after */
	double bulk[DB_MAX_REPS];          /* MB/s */
	double bulk_loss[DB_MAX_REPS];     /* % */
	/* [size][replication][0 put, 1 get][rep] */
	struct db_tput_run tput[DB_MAX_SIZES][DB_MAX_REPLS][2][DB_MAX_REPS];
	unsigned tput_n[DB_MAX_SIZES][DB_MAX_REPLS][2];
	double tput_load[2];
	unsigned tput_delay;
	struct db_rss rss;
	FILE *ops_csv;  /* every latency request */
	FILE *lat_csv;  /* every latency run */
	FILE *tput_csv; /* every throughput phase */
};

/* Opens the per-run CSV files. 0 or a negative errno. */
int db_report_open(struct db_ctx *x);
/* Notes latency run rep of delay di, size si (written, logged). */
void db_report_lat_run(struct db_ctx *x, unsigned di, unsigned si,
    unsigned rep);
/* Notes throughput phase rep of size si, replication ri, g (0 put). */
void db_report_tput_run(struct db_ctx *x, unsigned si, unsigned ri, int g,
    unsigned rep);
/* The tables, the goals and the summary files. */
void db_report(struct db_ctx *x);
void db_report_close(struct db_ctx *x);

#endif /* FERRY_BENCH_DHT_REPORT_H */
