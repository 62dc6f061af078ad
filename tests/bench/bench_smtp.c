/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The SMTP transport's benchmarks (issue 5, "Benchmarks"), through the
 * real Postfix and procmail of tests/mta/setup-mta.sh, between two ferryd
 * with only SMTP loaded, each against the raw mail path measured in the
 * same run (smtp_raw.h):
 *   fig5  seed 004 Fig. 5, SMTP row: 1000 sequential messages of 11, 407
 *         and 1221 bytes, Maildir and FIFO inboxes (smtp_seq.c)
 *   fig8  seed 004 Fig. 8: 1200-byte messages as fast as the API takes
 *         them, batched into large mails (smtp_tput.c)
 * Needs root (the fixture makes users and runs Postfix); without it the
 * program says so and exits 77.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smtp_bench.h"
#include "smtp_raw.h"

const char *const sb_inbox_name[SB_NINBOX] = { "maildir", "fifo" };

/* Users per inbox kind: daemon A, daemon B, the raw path's reader. */
static const char *const sb_user_name[SB_NINBOX][SB_NUSER] = {
	{ "ferry-bench-ma", "ferry-bench-mb", "ferry-bench-mr" },
	{ "ferry-bench-fa", "ferry-bench-fb", "ferry-bench-fr" },
};

/* Parses "a,b,c" of unsigned numbers ("auto" is 0 if auto_ok). */
static int
sb_parse_list(const char *arg, uint64_t max, bool auto_ok, uint64_t *v,
    unsigned *n, unsigned cap)
{
	char *end;

	*n = 0;
	for (const char *s = arg; *s != '\0' && *n < cap;) {
		unsigned long long x;

		if (auto_ok && strncmp(s, "auto", 4) == 0) {
			x = 0;
			end = (char *)s + 4;
		} else {
			x = strtoull(s, &end, 10);
			if (end == s || x == 0 || x > max)
				return -1;
		}
		v[(*n)++] = x;
		if (*end != ',' && *end != '\0')
			return -1;
		s = *end == ',' ? end + 1 : end;
	}
	return *n > 0 ? 0 : -1;
}

/* sb_parse_list into unsigned v[]; v and *n change only if arg is good. */
static int
sb_parse_uints(const char *arg, unsigned max, bool auto_ok, unsigned *v,
    unsigned *n, unsigned cap)
{
	uint64_t x[SB_MAX_SIZES + SB_MAX_VARIANTS]; /* room for either */
	unsigned k;

	if (sb_parse_list(arg, max, auto_ok, x, &k, cap) < 0)
		return -1;
	for (unsigned i = 0; i < k; i++)
		v[i] = (unsigned)x[i];
	*n = k;
	return 0;
}

static int
sb_opt_lists(struct smtp_bench_opts *so, int opt, const char *arg)
{
	switch (opt) {
	case 's':
		return sb_parse_uints(arg, 60000, false, so->sizes,
		    &so->n_sizes, SB_MAX_SIZES);
	case 'M':
		return sb_parse_uints(arg, 64u << 20, true, so->mtus,
		    &so->n_mtus, SB_MAX_VARIANTS);
	case 'R':
		return sb_parse_list(arg, 7500000, false, so->payloads,
		    &so->n_payloads, SB_MAX_VARIANTS);
	default:
		return -1;
	}
}

static int
sb_opt(int opt, const char *arg, void *cls)
{
	struct smtp_bench_opts *so = cls;
	char *end;

	switch (opt) {
	case 'f':
		so->fig5 = strstr(arg, "fig5") != NULL;
		so->fig8 = strstr(arg, "fig8") != NULL;
		return so->fig5 || so->fig8 ? 0 : -1;
	case 'i':
		so->inbox_on[SB_MAILDIR] = strstr(arg, "maildir") != NULL;
		so->inbox_on[SB_FIFO] = strstr(arg, "fifo") != NULL;
		return so->inbox_on[SB_MAILDIR] || so->inbox_on[SB_FIFO] ? 0
		                                                         : -1;
	case 'n':
		so->count = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && so->count > 0 ? 0 : -1;
	case 'w':
		so->warmup = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 'm':
		so->tput_count = strtoull(arg, &end, 10);
		return *end == '\0' && so->tput_count > 0 &&
		        so->tput_count < UINT32_MAX
		    ? 0
		    : -1;
	case 'd':
		so->drain_ms = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 'T':
		so->limit_s = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' && so->limit_s > 0 && so->limit_s < 86400
		    ? 0
		    : -1;
	case 'I':
		so->tput_inbox_on[SB_MAILDIR] = strstr(arg, "maildir") != NULL;
		so->tput_inbox_on[SB_FIFO] = strstr(arg, "fifo") != NULL;
		return so->tput_inbox_on[SB_MAILDIR] ||
		        so->tput_inbox_on[SB_FIFO]
		    ? 0
		    : -1;
	default:
		return sb_opt_lists(so, opt, arg);
	}
}

void
sb_runs_sum(const void *runs, size_t size, unsigned n, size_t off,
    struct bench_summary *ret)
{
	double v[1000];

	if (n > 1000)
		n = 1000;
	for (unsigned i = 0; i < n; i++) {
		const char *run = (const char *)runs + i * size;

		v[i] = *(const bool *)run ? *(const double *)(run + off) : NAN;
	}
	bench_summarize(v, n, ret);
}

const void *
sb_runs_median(const void *runs, size_t size, unsigned n, size_t off)
{
	const char *best = NULL;
	struct bench_summary s;

	sb_runs_sum(runs, size, n, off, &s);
	for (unsigned i = 0; i < n; i++) {
		const char *run = (const char *)runs + i * size;

		if (*(const bool *)run &&
		    (best == NULL ||
		        fabs(*(const double *)(run + off) - s.median) <
		            fabs(*(const double *)(best + off) - s.median)))
			best = run;
	}
	return best;
}

void
sb_raw_path(const struct smtp_user *u, struct smtp_raw_path *ret)
{
	ret->server = SMTP_ENV_SERVER;
	ret->rcpt = u->mail;
	ret->filter = u->filter;
	ret->inbox = u->inbox;
	ret->fifo = u->fifo;
}

void
sb_log_counters(const struct smtp_bench *x, const char *what,
    const struct bench_counters *b, const struct bench_counters *a)
{
	static const char *const names[] = { "smtp.tx_mails", "smtp.tx_bytes",
		"smtp.rx_mails", "smtp.tx_eagain", "smtp.tx_retries",
		"smtp.tx_failed", "smtp.tx_cap_dest", "smtp.tx_cap_total",
		"smtp.inbox_rescans", "core.msg_out", "core.enc_out",
		"core.acks_out", "core.acks_in", "core.frames_lost",
		"core.send_queue_full", "service.send_blocked",
		"service.recv_dropped", NULL };
	char line[1024];
	size_t off = 0;

	if (!x->o.verbose)
		return;
	for (int i = 0; names[i] != NULL && off < sizeof(line); i++) {
		uint64_t d = bench_counter_delta(b, a, names[i]);

		if (d != 0)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
			    " %s +%llu", names[i], (unsigned long long)d);
	}
	line[off < sizeof(line) ? off : sizeof(line) - 1] = '\0';
	bench_log(&x->o, "%s:%s", what, line);
}

/* Makes the users of the selected inbox kinds. */
static int
sb_users(struct smtp_bench *x)
{
	for (int in = 0; in < SB_NINBOX; in++) {
		if (!x->so.inbox_on[in])
			continue;
		for (int k = 0; k < SB_NUSER; k++) {
			int r = smtp_env_user(&x->user[in][k],
			    sb_user_name[in][k], in == SB_FIFO);

			if (r < 0)
				return r;
		}
		x->have[in] = true;
	}
	return 0;
}

static void
sb_defaults(struct smtp_bench *x)
{
	x->so = (struct smtp_bench_opts){ .fig5 = true,
		.fig8 = true,
		.inbox_on = { true, true },
		.count = 1000,
		.warmup = 10,
		.sizes = { 11, 407, 1221 },
		.n_sizes = 3,
		.timeout_ms = 60000,
		.tput_count = 100000,
		.tput_size = 1200,
		.mtus = { 12000, 1048576, 0 },
		.n_mtus = 3,
		.payloads = { 12000, 1000000, 7000000 },
		.n_payloads = 3,
		.drain_ms = 30000,
		.limit_s = 120,
		.tput_inbox_on = { true, false } };
}

static const char sb_usage[] =
    " [-f fig5,fig8] [-i maildir,fifo] [-n COUNT] [-w N] [-s SIZES]\n"
    "       [-m COUNT] [-M MTUS] [-R PAYLOADS] [-d MS] [-T SECS] "
    "[-I LIST]\n"
    "  -f LIST   benchmarks (default fig5,fig8)\n"
    "  -i LIST   inbox kinds (default maildir,fifo)\n"
    "  -n COUNT  fig5: sequential messages per run (default 1000)\n"
    "  -w N      fig5: untimed ones before each run (default 10)\n"
    "  -s LIST   fig5: message sizes (default 11,407,1221)\n"
    "  -m COUNT  fig8: 1200-byte messages per run (default 100000)\n"
    "  -M LIST   fig8: ferry's SMTP MTUs, bytes or auto (default "
    "12000,1048576,auto)\n"
    "  -R LIST   fig8: raw mail payloads, bytes (default "
    "12000,1000000,7000000)\n"
    "  -d MS     fig8: wait for mail after the sender is done (default "
    "30000)\n"
    "  -T SECS   fig8: stop a ferry sender after this long (default 120)\n"
    "  -I LIST   fig8: inbox kinds (default maildir)\n"
    "  (-p and -t do not apply: the MTA's processes are not placed)";

int
main(int argc, char **argv)
{
	static struct smtp_bench x;
	bool reps_given = false;
	int r;

	sb_defaults(&x);
	bench_opts_parse(&x.o, argc, argv, "f:i:n:w:s:m:M:R:d:T:I:", sb_opt,
	    &x.so, sb_usage);
	/* Mail is slow: 3 repetitions unless -r says otherwise. */
	for (int i = 1; i < argc; i++)
		if (strncmp(argv[i], "-r", 2) == 0)
			reps_given = true;
	if (!reps_given)
		x.o.reps = 3;
	if (x.o.quick) {
		x.so.count = 100;
		x.so.warmup = 3;
		x.so.tput_count = 5000;
		x.so.limit_s = 30;
		x.so.drain_ms = 10000;
		if (x.o.reps > 2)
			x.o.reps = 2;
	}
	bench_env_init();
	r = smtp_env_prepare();
	if (r == SMTP_ENV_SKIP) {
		fprintf(stderr,
		    "bench_smtp: no test MTA here (needs root and "
		    "Postfix or apt-get): skipped\n");
		return SMTP_ENV_SKIP;
	}
	if (r != 0)
		return 1;
	r = sb_users(&x);
	if (r == 0 && x.so.fig5)
		r = sb_seq_run(&x);
	if (r == 0 && x.so.fig8)
		r = sb_tput_run(&x);
	if (r == 0 && x.so.fig5)
		sb_seq_report(&x);
	if (r == 0 && x.so.fig8)
		sb_tput_report(&x);
	sb_seq_free(&x);
	sb_tput_free(&x);
	if (r < 0)
		fprintf(stderr, "bench_smtp: %s\n", strerror(-r));
	return r < 0 ? 1 : 0;
}
