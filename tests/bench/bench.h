/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the benchmark programs share (issue 4, "Benchmarks"): options,
 * pairs of real ferryd processes on loopback (through the test harness),
 * CPU placement, the daemons' counters, clocks, medians and CSV files.
 * Benchmarks are programs, never ctest tests: they measure, they do not
 * assert.
 */
#ifndef FERRY_BENCH_BENCH_H
#define FERRY_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <ferry/client.h>

#include "harness.h"

#define BENCH_APP_TYPE 0x4b42 /* the message type benchmarks exchange */
#define BENCH_LINK_MS  30000  /* to wait for a pair's link */
#define BENCH_CPU_ANY  (-1)   /* no placement: every CPU */

/* Where the processes of a run go. */
enum bench_place {
	BENCH_UNPINNED, /* wherever the scheduler puts them */
	BENCH_PINNED,   /* side A on CPU 0, side B on CPU 1 ("two hosts") */
};

/* Options every program takes. */
struct bench_opts {
	const char *out_dir; /* -o DIR: CSV files (default ./bench-out) */
	unsigned reps;       /* -r N: repetitions, median reported */
	bool quick;          /* -q: small counts for a smoke run */
	bool pinned;         /* -p on|off|both: run pinned */
	bool unpinned;       /* ... and/or unpinned */
	char transports[32]; /* -t udp,tcp */
	bool verbose;        /* -v: progress lines on stderr */
	char *extra_cfg;     /* -c FILE: appended to every daemon's config */
};

/* Two daemons linked over one transport; side A is d[0]. */
struct bench_pair {
	struct harness *h;
	struct harness_daemon *d[2];
	char transport[16];
};

/* A snapshot of a daemon's counters. */
struct bench_counters {
	struct ferry_stat *st;
	size_t n;
};

/* The summary of repeated measurements. */
struct bench_summary {
	unsigned n; /* values that were measured (NaN ones left out) */
	double median;
	double min;
	double max;
};

/* Sets defaults, then parses the common options from argv; a program's
 * own options are letters in extra ("m:s:"), handed to fn. Exits with a
 * usage message on an unknown option. */
typedef int bench_opt_fn(int opt, const char *arg, void *cls);
void bench_opts_parse(struct bench_opts *o, int argc, char **argv,
    const char *extra, bench_opt_fn *fn, void *cls, const char *usage);
/* True if transport t ("udp") was selected with -t. */
bool bench_want_transport(const struct bench_opts *o, const char *t);
/* Prepares the environment for the harness (plugin directory). */
void bench_env_init(void);
/* Progress line on stderr with -v. */
void bench_log(const struct bench_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Starts two daemons running only transport, with extra configuration
 * text (may be NULL) for both, then the -c file's text, B bootstrapping
 * from A's HELO, and waits until each sees the other. 0 or a negative
 * errno (logs dumped). */
int bench_pair_start(struct bench_pair *p, const char *name,
    const char *transport, const char *extra);
/* Stops both daemons and removes their directories. */
void bench_pair_free(struct bench_pair *p);
/* Writes the configuration of daemon side (0: A) before it starts. 0 or
 * a negative errno. */
typedef int bench_config_fn(struct harness_daemon *d, int side, void *cls);
/* How bench_pair_start links its pair, for pairs configured otherwise
 * (bench_smtp's, a user's mailbox each): makes d[0] and d[1] in h,
 * configured by fn, starts them, B bootstrapping from A's HELO, and
 * waits up to link_ms until each sees the other. 0 or a negative errno
 * (logs not dumped). */
int bench_pair_link(struct harness *h, struct harness_daemon *d[2],
    bench_config_fn *fn, void *cls, unsigned link_ms);
/* Places side A's daemon on CPU 0 and side B's on CPU 1 (or both
 * anywhere). 0 or a negative errno. */
int bench_pair_place(struct bench_pair *p, enum bench_place place);
/* The CPU a side's processes go to under place (side 0 or 1). */
int bench_side_cpu(enum bench_place place, int side);
/* Name of a placement for tables and CSV: "pinned" or "unpinned". */
const char *bench_place_name(enum bench_place place);

/* Sets the CPU affinity of every thread of pid (0: this process) to one
 * CPU, or to all with BENCH_CPU_ANY. 0 or a negative errno. */
int bench_pin(pid_t pid, int cpu);

/* A libferry client of d with a long timeout, registered for
 * BENCH_APP_TYPE if listen. 0 or a negative errno. */
int bench_client(const struct harness_daemon *d, bool listen,
    struct ferry_client **ret);
/* Takes a snapshot of d's counters. 0 or a negative errno. */
int bench_counters_get(const struct harness_daemon *d,
    struct bench_counters *ret);
/* A counter's value in a snapshot, 0 if absent. */
uint64_t bench_counter(const struct bench_counters *c, const char *name);
/* after - before for one counter. */
uint64_t bench_counter_delta(const struct bench_counters *before,
    const struct bench_counters *after, const char *name);
void bench_counters_free(struct bench_counters *c);

/* CPU time pid (0: this process) has used so far, all threads, in ns
 * (/proc/PID/task/TID/schedstat); 0 if unknown. */
uint64_t bench_cpu_ns(pid_t pid);

/* The kernel's count of UDP datagrams dropped because a socket's
 * receive buffer was full (RcvbufErrors in /proc/net/snmp, all
 * sockets of the host); 0 if unknown. */
uint64_t bench_udp_rcvbuf_errors(void);

/* Monotonic nanoseconds (one clock for all processes). */
uint64_t bench_now_ns(void);
/* Median, minimum and maximum of v[0..n), NaN values left out. */
void bench_summarize(const double *v, unsigned n, struct bench_summary *ret);
/* Shared memory that survives fork() (zeroed), or NULL. */
void *bench_shared(size_t size);
void bench_shared_free(void *p, size_t size);
/* Waits for a child; 0 if it exited with status 0, else -ECHILD. */
int bench_wait_child(pid_t pid);

/* Creates the output directory and opens NAME in it for writing, with a
 * header line. NULL (logged) on failure. */
FILE *bench_csv_open(const struct bench_opts *o, const char *name,
    const char *header);

#endif /* FERRY_BENCH_BENCH_H */
