/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the parts of bench_smtp share (issue 5, "Benchmarks"): its options,
 * the test users of each inbox kind, and the two benchmarks it runs:
 *   smtp_seq.c   seed 004 Fig. 5, SMTP row: 1000 sequential messages
 *   smtp_tput.c  seed 004 Fig. 8: throughput of 1200-byte messages
 * each against the raw mail path (smtp_raw.h) in the same run.
 */
#ifndef FERRY_BENCH_SMTP_BENCH_H
#define FERRY_BENCH_SMTP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "smtp_env.h"

#define SB_MAX_SIZES    8
#define SB_MAX_VARIANTS 8

/* The inbox kinds ferryd reads, and the users of each. */
enum sb_inbox { SB_MAILDIR, SB_FIFO, SB_NINBOX };
enum sb_user { SB_USER_A, SB_USER_B, SB_USER_RAW, SB_NUSER };

extern const char *const sb_inbox_name[SB_NINBOX];

struct smtp_bench_opts {
	bool fig5, fig8;              /* -f: which benchmarks */
	bool inbox_on[SB_NINBOX];     /* -i: which inbox kinds */
	unsigned count;               /* -n: sequential messages */
	unsigned warmup;              /* -w: untimed ones before */
	unsigned sizes[SB_MAX_SIZES]; /* -s: their sizes */
	unsigned n_sizes;
	int timeout_ms;                 /* one sequential message at most */
	uint64_t tput_count;            /* -m: 1200-byte messages per run */
	unsigned tput_size;             /* their size (1200) */
	unsigned mtus[SB_MAX_VARIANTS]; /* -M: ferry MTUs, 0 = auto */
	unsigned n_mtus;
	uint64_t payloads[SB_MAX_VARIANTS]; /* -R: raw bulk mail payloads */
	unsigned n_payloads;
	unsigned drain_ms;             /* -d: wait after the sender is done */
	unsigned limit_s;              /* -T: a ferry sender's time at most */
	bool tput_inbox_on[SB_NINBOX]; /* -I: inbox kinds of fig8 */
};

struct smtp_bench {
	struct bench_opts o;
	struct smtp_bench_opts so;
	struct smtp_user user[SB_NINBOX][SB_NUSER];
	bool have[SB_NINBOX]; /* users made */
	struct sb_seq *seq;   /* smtp_seq.c's results */
	struct sb_tput *tput; /* smtp_tput.c's results */
};

/* Runs Fig. 5 for every selected inbox kind. 0 or a negative errno
 * (failed runs are recorded as such and do not stop it). */
int sb_seq_run(struct smtp_bench *x);
/* Prints the table and writes smtp_fig5_*.csv and smtp_fig5.dat. */
void sb_seq_report(struct smtp_bench *x);
void sb_seq_free(struct smtp_bench *x);

/* Runs Fig. 8 for every selected inbox kind and MTU, and the raw bulk
 * baselines. */
int sb_tput_run(struct smtp_bench *x);
/* Prints the table and writes smtp_fig8_*.csv and smtp_fig8.dat. */
void sb_tput_report(struct smtp_bench *x);
void sb_tput_free(struct smtp_bench *x);

/*
 * The repetitions of one measurement: n runs of size bytes each, structs
 * that start with "bool ok" (false: the run failed and is left out).
 * sb_runs_sum summarises the double at offset off of each; sb_runs_median
 * is the run whose double at off is nearest their median, NULL if none
 * is ok.
 */
void sb_runs_sum(const void *runs, size_t size, unsigned n, size_t off,
    struct bench_summary *ret);
const void *sb_runs_median(const void *runs, size_t size, unsigned n,
    size_t off);

/* The raw path to a user's inbox. */
struct smtp_raw_path;
void sb_raw_path(const struct smtp_user *u, struct smtp_raw_path *ret);
/* Prints daemon counters that tell where the time went (-v). */
void sb_log_counters(const struct smtp_bench *x, const char *what,
    const struct bench_counters *before, const struct bench_counters *after);

#endif /* FERRY_BENCH_SMTP_BENCH_H */
