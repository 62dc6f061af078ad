/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Throughput and loss, seed 004 Fig. 6-7 (issue 4, benchmark 2): 100 000
 * messages of 1200 and of 100 bytes sent as fast as ferry_send() accepts
 * them, over UDP and TCP, client on daemon A to client on daemon B:
 * goodput, messages/s, loss (not there drain_ms after the sender
 * finished) and messages per datagram (daemon A's core.msg_out over its
 * <transport>.units_out). Baselines in the same run: raw UDP, one message
 * per datagram, and a raw TCP stream. Bulk: 64 KiB messages, 1 GiB, over
 * TCP against the raw TCP stream.
 * Goals: loss < 0.1 %; 100-byte messages >= 4 x the raw UDP message rate;
 * 1200-byte UDP goodput >= 50 % of raw UDP; bulk TCP >= 50 % of raw TCP.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "flow.h"
#include "raw.h"

#define TP_MAX_SIZES 4
#define TP_SERIES    200 /* points of a received-over-time curve */
#define TP_BULK_SIZE (64u * 1024)

/* The kinds of run, each a column group of the tables. */
enum tp_kind {
	TP_RAW_UDP, /* socket buffers as ferry's UDP transport sets them */
	TP_RAW_TCP,
	TP_FERRY_UDP,
	TP_FERRY_TCP,
	TP_RAW_UDP_DEF, /* the system's default socket buffers (seed Fig. 6) */
	TP_NKIND
};
static const char *const tp_kind_name[TP_NKIND] = { "raw-udp", "raw-tcp",
	"ferry-udp", "ferry-tcp", "raw-udp-def" };

/* One run's figures. */
struct tp_run {
	double secs;      /* first send to last arrival */
	double send_secs; /* first send to the sender being done */
	double goodput;   /* MB/s (10^6 bytes) received */
	double msgs;      /* messages/s received */
	double loss;      /* percent of count */
	double per_unit;  /* messages (or fragments of bulk ones) per
			    * datagram or TCP unit, daemon A's counters */
	double units_b;   /* units daemon B sent back (ACKs), ferry */
	double cpu[4];    /* CPU seconds: client A, daemon A, daemon B,
			    * client B (ferry runs) */
	double series[TP_SERIES + 1][2]; /* ms since start, fraction */
};

struct tp_opts {
	uint64_t count; /* -n */
	unsigned sizes[TP_MAX_SIZES];
	unsigned n_sizes;
	uint64_t bulk_mib; /* -b: 0 skips the bulk runs */
	unsigned drain_ms; /* -d */
	bool bulk_udp;     /* -U: bulk over UDP too (information) */
	uint64_t sockbuf;  /* -B: raw UDP socket buffers */
};

struct tp_ctx {
	struct bench_opts o;
	struct tp_opts to;
	struct bench_pair pair[2]; /* udp, tcp */
	bool have[2];
	FILE *runs;
	/* [place][size index, TP_MAX_SIZES: bulk][kind][rep] */
	struct tp_run *run[2][TP_MAX_SIZES + 1][TP_NKIND];
	bool done[2][TP_MAX_SIZES + 1][TP_NKIND];
};

static const char *const tp_tname[2] = { "udp", "tcp" };

static int
tp_opt(int opt, const char *arg, void *cls)
{
	struct tp_opts *to = cls;
	char *end;

	switch (opt) {
	case 'n':
		to->count = strtoull(arg, &end, 10);
		return *end == '\0' && to->count > 0 && to->count < UINT32_MAX
		    ? 0
		    : -1;
	case 'b':
		to->bulk_mib = strtoull(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 'd':
		to->drain_ms = (unsigned)strtoul(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 'U':
		to->bulk_udp = true;
		return 0;
	case 'B':
		to->sockbuf = strtoull(arg, &end, 10);
		return *end == '\0' ? 0 : -1;
	case 's':
		to->n_sizes = 0;
		for (const char *s = arg;
		     *s != '\0' && to->n_sizes < TP_MAX_SIZES;) {
			unsigned long v = strtoul(s, &end, 10);

			if (end == s || v < 4 || v > 65000)
				return -1;
			to->sizes[to->n_sizes++] = (unsigned)v;
			if (*end != ',' && *end != '\0')
				return -1;
			s = *end == ',' ? end + 1 : end;
		}
		return to->n_sizes > 0 ? 0 : -1;
	default:
		return -1;
	}
}

static void
tp_fill(struct tp_run *run, uint64_t count, uint64_t received, uint64_t bytes,
    uint64_t start_ns, uint64_t send_end_ns, uint64_t last_ns)
{
	run->secs = flow_seconds(start_ns, last_ns);
	run->send_secs = flow_seconds(start_ns, send_end_ns);
	run->goodput = run->secs > 0 ? (double)bytes / run->secs / 1e6 : 0;
	run->msgs = run->secs > 0 ? (double)received / run->secs : 0;
	run->loss = 100.0 * (double)(count - received) / (double)count;
	run->per_unit = NAN;
	run->units_b = NAN;
	for (int i = 0; i < 4; i++)
		run->cpu[i] = NAN;
}

static void
tp_log_run(struct tp_ctx *x, int place, const char *what, const char *kind,
    unsigned size, uint64_t count, unsigned rep, const struct tp_run *run)
{
	if (x->runs != NULL)
		fprintf(x->runs,
		    "%s,%s,%s,%u,%llu,%u,%.6f,%.6f,%.3f,%.1f,%.4f,"
		    "%.3f,%.0f,%.4f,%.4f,%.4f,%.4f\n",
		    bench_place_name(place), what, kind, size,
		    (unsigned long long)count, rep + 1, run->secs,
		    run->send_secs, run->goodput, run->msgs, run->loss,
		    run->per_unit, run->units_b, run->cpu[0], run->cpu[1],
		    run->cpu[2], run->cpu[3]);
	bench_log(&x->o,
	    "%s %s %s %u B rep %u: %.3f s, %.1f MB/s, %.0f msg/s, "
	    "loss %.3f %%, %.2f msg/unit, CPU s: cliA %.3f dA %.3f dB %.3f "
	    "cliB %.3f",
	    bench_place_name(place), what, kind, size, rep + 1, run->secs,
	    run->goodput, run->msgs, run->loss, run->per_unit, run->cpu[0],
	    run->cpu[1], run->cpu[2], run->cpu[3]);
}

/* Says where the messages of a lossy run went: daemon A's queue, lost
 * frames, daemon B's client buffer, the host's UDP socket buffers. */
static void
tp_explain_loss(int t, unsigned size, double loss,
    const struct bench_counters *a0, const struct bench_counters *a1,
    const struct bench_counters *b0, const struct bench_counters *b1,
    uint64_t rcvbuf_errors)
{
	fprintf(stderr,
	    "bench_throughput: %s %u B: %.3f %% lost; A: "
	    "core.send_queue_full +%llu, service.send_blocked +%llu, "
	    "core.frames_lost +%llu; B: service.recv_dropped +%llu; host: "
	    "UDP RcvbufErrors +%llu\n",
	    tp_tname[t], size, loss,
	    (unsigned long long)bench_counter_delta(a0, a1,
	        "core.send_queue_full"),
	    (unsigned long long)bench_counter_delta(a0, a1,
	        "service.send_blocked"),
	    (unsigned long long)bench_counter_delta(a0, a1, "core.frames_lost"),
	    (unsigned long long)bench_counter_delta(b0, b1,
	        "service.recv_dropped"),
	    (unsigned long long)rcvbuf_errors);
}

/* A ferry flow of count messages of size bytes over pair t. */
static int
tp_ferry(struct tp_ctx *x, int place, int t, unsigned size, uint64_t count,
    struct tp_run *run)
{
	struct bench_pair *p = &x->pair[t];
	struct bench_counters a0, a1, b0, b1;
	struct ferry_client *c = NULL;
	struct flow_result fr;
	struct flow *f = NULL;
	uint64_t cpu0[3], cpu1[3], rcvbuf0, rcvbuf1;
	char name[32];
	int r;

	memset(&a0, 0, sizeof(a0));
	a1 = b0 = b1 = a0;
	r = flow_new(p->d[1], bench_side_cpu(place, 1), size, count,
	    x->to.drain_ms, FLOW_MAX_NS, &f);
	if (r == 0)
		r = bench_client(p->d[0], false, &c);
	if (r == 0)
		r = bench_counters_get(p->d[0], &a0);
	if (r == 0)
		r = bench_counters_get(p->d[1], &b0);
	rcvbuf0 = bench_udp_rcvbuf_errors();
	cpu0[0] = bench_cpu_ns(0);
	cpu0[1] = bench_cpu_ns(p->d[0]->pid);
	cpu0[2] = bench_cpu_ns(p->d[1]->pid);
	if (r == 0)
		r = flow_run(f, c, &p->d[1]->id, &fr);
	cpu1[0] = bench_cpu_ns(0);
	cpu1[1] = bench_cpu_ns(p->d[0]->pid);
	cpu1[2] = bench_cpu_ns(p->d[1]->pid);
	rcvbuf1 = bench_udp_rcvbuf_errors();
	if (r == 0)
		r = bench_counters_get(p->d[0], &a1);
	if (r == 0)
		r = bench_counters_get(p->d[1], &b1);
	if (r == 0) {
		uint64_t msgs, units;

		tp_fill(run, count, fr.received, fr.bytes, fr.start_ns,
		    fr.send_end_ns, fr.last_ns);
		flow_series(fr.arrival_ns, fr.received, count, fr.start_ns,
		    TP_SERIES, run->series);
		(void)snprintf(name, sizeof(name), "%s.units_out", tp_tname[t]);
		msgs = bench_counter_delta(&a0, &a1, "core.msg_out") +
		    bench_counter_delta(&a0, &a1, "core.frag_out");
		units = bench_counter_delta(&a0, &a1, name);
		run->per_unit = units > 0 ? (double)msgs / (double)units : 0;
		run->units_b = (double)bench_counter_delta(&b0, &b1, name);
		for (int i = 0; i < 3; i++)
			run->cpu[i] = (double)(cpu1[i] - cpu0[i]) / 1e9;
		run->cpu[3] = (double)fr.recv_cpu_ns / 1e9;
		if (fr.bad > 0)
			fprintf(stderr, "bench_throughput: %llu bad messages\n",
			    (unsigned long long)fr.bad);
		if (run->loss > 0.1)
			tp_explain_loss(t, size, run->loss, &a0, &a1, &b0, &b1,
			    rcvbuf1 - rcvbuf0);
	}
	bench_counters_free(&a0);
	bench_counters_free(&a1);
	bench_counters_free(&b0);
	bench_counters_free(&b1);
	ferry_client_close(c);
	flow_free(f);
	return r;
}

static void
tp_fail(struct tp_run *run, const char *what, int r)
{
	fprintf(stderr, "bench_throughput: %s failed: %s\n", what,
	    strerror(-r));
	run->secs = run->goodput = run->msgs = run->loss = NAN;
	run->per_unit = run->units_b = NAN;
	run->series[0][0] = NAN;
}

/* Every kind of run for one message size (si == n_sizes: bulk). */
static void
tp_size(struct tp_ctx *x, int place, unsigned si, unsigned rep,
    uint64_t *arrival)
{
	bool bulk = si == x->to.n_sizes;
	unsigned size = bulk ? TP_BULK_SIZE : x->to.sizes[si];
	uint64_t count =
	    bulk ? x->to.bulk_mib * 1024 * 1024 / TP_BULK_SIZE : x->to.count;
	const char *what = bulk ? "bulk" : "msgs";
	unsigned slot = bulk ? TP_MAX_SIZES : si;
	struct raw_flow rf;
	int r;

	for (int k = 0; k < TP_NKIND; k++) {
		struct tp_run *run = &x->run[place][slot][k][rep];
		bool raw_udp = k == TP_RAW_UDP || k == TP_RAW_UDP_DEF;
		int t = raw_udp || k == TP_FERRY_UDP ? 0 : 1;

		if (!x->have[t] ||
		    (bulk && t == 0 && (raw_udp || !x->to.bulk_udp)))
			continue;
		if (raw_udp) {
			r = raw_udp_blast(size, count, x->to.drain_ms,
			    k == TP_RAW_UDP ? x->to.sockbuf : 0, place, arrival,
			    &rf);
		} else if (k == TP_RAW_TCP) {
			r = raw_tcp_stream(size, count, place, &rf);
		} else {
			r = tp_ferry(x, place, t, size, count, run);
		}
		if (r < 0) {
			tp_fail(run, tp_kind_name[k], r);
			continue;
		}
		if (raw_udp || k == TP_RAW_TCP) {
			tp_fill(run, count, rf.received, rf.bytes, rf.start_ns,
			    rf.send_end_ns, rf.last_ns);
			flow_series(raw_udp ? arrival : NULL, rf.received,
			    count, rf.start_ns, TP_SERIES, run->series);
		}
		x->done[place][slot][k] = true;
		tp_log_run(x, place, what, tp_kind_name[k], size, count, rep,
		    run);
	}
}

static int
tp_place(struct tp_ctx *x, enum bench_place place, uint64_t *arrival)
{
	int r;

	(void)bench_pin(0, bench_side_cpu(place, 0));
	for (int t = 0; t < 2; t++)
		if (x->have[t] &&
		    (r = bench_pair_place(&x->pair[t], place)) < 0)
			return r;
	for (unsigned rep = 0; rep < x->o.reps; rep++) {
		for (unsigned si = 0; si < x->to.n_sizes; si++)
			tp_size(x, place, si, rep, arrival);
		if (x->to.bulk_mib > 0)
			tp_size(x, place, x->to.n_sizes, rep, arrival);
	}
	return 0;
}

/* Summary of one field over the repetitions. */
static void
tp_sum(struct tp_ctx *x, int pl, unsigned slot, int k, size_t field,
    struct bench_summary *ret)
{
	double v[1000];
	unsigned n = x->o.reps < 1000 ? x->o.reps : 1000;

	for (unsigned i = 0; i < n; i++)
		v[i] = *(const double *)((const char *)&x->run[pl][slot][k][i] +
		    field);
	bench_summarize(v, n, ret);
}

/* Median over repetitions of the ratio a/b of one field. */
static void
tp_ratio(struct tp_ctx *x, int pl, unsigned slot, int ka, int kb, size_t field,
    struct bench_summary *ret)
{
	double v[1000];
	unsigned n = x->o.reps < 1000 ? x->o.reps : 1000;

	for (unsigned i = 0; i < n; i++) {
		const char *a = (const char *)&x->run[pl][slot][ka][i];
		const char *b = (const char *)&x->run[pl][slot][kb][i];

		v[i] =
		    *(const double *)(a + field) / *(const double *)(b + field);
	}
	bench_summarize(v, n, ret);
}

/* Writes the received-over-time curve of the median run. */
static void
tp_write_series(struct tp_ctx *x, FILE *f, int pl, unsigned slot, int k,
    unsigned size)
{
	struct bench_summary s;
	unsigned best = 0;
	double bestd = INFINITY;

	tp_sum(x, pl, slot, k, offsetof(struct tp_run, secs), &s);
	for (unsigned i = 0; i < x->o.reps; i++) {
		double d = fabs(x->run[pl][slot][k][i].secs - s.median);

		if (!isnan(d) && d < bestd) {
			bestd = d;
			best = i;
		}
	}
	if (isnan(x->run[pl][slot][k][best].series[0][0]))
		return;
	for (unsigned j = 0; j <= TP_SERIES; j++)
		fprintf(f, "%s,%s,%u,%.3f,%.5f\n", bench_place_name(pl),
		    tp_kind_name[k], size,
		    x->run[pl][slot][k][best].series[j][0],
		    x->run[pl][slot][k][best].series[j][1]);
	fprintf(f, "\n\n");
}

static const char *
tp_verdict(bool ok)
{
	return ok ? "met" : "MISSED";
}

static void
tp_goals(struct tp_ctx *x, int pl, FILE *g)
{
	const size_t gp = offsetof(struct tp_run, goodput);
	const size_t ms = offsetof(struct tp_run, msgs);
	struct bench_summary s;

	for (unsigned si = 0; si < x->to.n_sizes; si++) {
		unsigned size = x->to.sizes[si];

		for (int k = TP_FERRY_UDP; k <= TP_FERRY_TCP; k++) {
			if (!x->done[pl][si][k])
				continue;
			/* Loss is judged by the worst run, not the median. */
			tp_sum(x, pl, si, k, offsetof(struct tp_run, loss), &s);
			printf("  %-8s loss %-9s %5u B: %7.3f %% [%.3f-%.3f] "
			       "(goal < 0.1 %% in every run) %s\n",
			    bench_place_name(pl), tp_kind_name[k], size,
			    s.median, s.min, s.max, tp_verdict(s.max < 0.1));
			fprintf(g, "%s,loss,%s,%u,%.4f,%.4f,%.4f,0.1,%s\n",
			    bench_place_name(pl), tp_kind_name[k], size,
			    s.median, s.min, s.max, tp_verdict(s.max < 0.1));
		}
		if (x->done[pl][si][TP_FERRY_UDP] &&
		    x->done[pl][si][TP_RAW_UDP]) {
			bool small = size <= 100;
			double goal = small ? 4.0 : 0.5;

			tp_ratio(x, pl, si, TP_FERRY_UDP, TP_RAW_UDP,
			    small ? ms : gp, &s);
			printf("  %-8s udp %5u B %s ferry/raw: %.2f "
			       "[%.2f-%.2f] (goal >= %.1f) %s\n",
			    bench_place_name(pl), size,
			    small ? "msg/s" : "goodput", s.median, s.min, s.max,
			    goal, tp_verdict(s.median >= goal));
			fprintf(g, "%s,%s,udp,%u,%.4f,%.4f,%.4f,%.1f,%s\n",
			    bench_place_name(pl),
			    small ? "msgrate_vs_raw" : "goodput_vs_raw", size,
			    s.median, s.min, s.max, goal,
			    tp_verdict(s.median >= goal));
			if (!x->done[pl][si][TP_RAW_UDP_DEF])
				continue;
			tp_ratio(x, pl, si, TP_FERRY_UDP, TP_RAW_UDP_DEF,
			    small ? ms : gp, &s);
			printf("  %-8s udp %5u B %s ferry/raw with default "
			       "socket buffers: %.2f [%.2f-%.2f] (information)"
			       "\n",
			    bench_place_name(pl), size,
			    small ? "msg/s" : "goodput", s.median, s.min,
			    s.max);
		}
	}
	if (x->to.bulk_mib > 0 && x->done[pl][TP_MAX_SIZES][TP_FERRY_TCP]) {
		tp_sum(x, pl, TP_MAX_SIZES, TP_FERRY_TCP,
		    offsetof(struct tp_run, loss), &s);
		printf("  %-8s loss ferry-tcp bulk: %7.3f %% [%.3f-%.3f] "
		       "(goal < 0.1 %% in every run) %s\n",
		    bench_place_name(pl), s.median, s.min, s.max,
		    tp_verdict(s.max < 0.1));
		fprintf(g, "%s,loss,ferry-tcp,%u,%.4f,%.4f,%.4f,0.1,%s\n",
		    bench_place_name(pl), TP_BULK_SIZE, s.median, s.min, s.max,
		    tp_verdict(s.max < 0.1));
	}
	if (x->to.bulk_mib > 0 && x->done[pl][TP_MAX_SIZES][TP_FERRY_TCP] &&
	    x->done[pl][TP_MAX_SIZES][TP_RAW_TCP]) {
		tp_ratio(x, pl, TP_MAX_SIZES, TP_FERRY_TCP, TP_RAW_TCP, gp, &s);
		printf("  %-8s bulk tcp ferry/raw goodput: %.2f [%.2f-%.2f] "
		       "(goal >= 0.5) %s\n",
		    bench_place_name(pl), s.median, s.min, s.max,
		    tp_verdict(s.median >= 0.5));
		fprintf(g, "%s,bulk_vs_raw,tcp,%u,%.4f,%.4f,%.4f,0.5,%s\n",
		    bench_place_name(pl), TP_BULK_SIZE, s.median, s.min, s.max,
		    tp_verdict(s.median >= 0.5));
	}
}

/* The bar charts' data, one file per placement: a row per message size
 * (then bulk), for each kind the median, min and max of goodput (MB/s)
 * and of messages/s; NaN where a kind did not run. */
static void
tp_write_dat(struct tp_ctx *x, const bool *places)
{
	for (int pl = 0; pl < 2; pl++) {
		char name[64];
		FILE *f;

		if (!places[pl])
			continue;
		(void)snprintf(name, sizeof(name), "throughput_%s.dat",
		    bench_place_name(pl));
		f = bench_csv_open(&x->o, name,
		    "# label {raw-udp,raw-tcp,ferry-udp,ferry-tcp,raw-udp-def} "
		    "x {goodput MB/s, msgs/s} x {median,min,max}");
		if (f == NULL)
			continue;
		for (unsigned slot = 0; slot <= TP_MAX_SIZES; slot++) {
			bool bulk = slot == TP_MAX_SIZES;

			if ((!bulk && slot >= x->to.n_sizes) ||
			    (bulk && x->to.bulk_mib == 0))
				continue;
			if (bulk)
				fprintf(f, "\"bulk 64K\"");
			else
				fprintf(f, "\"%u B\"", x->to.sizes[slot]);
			for (int k = 0; k < TP_NKIND; k++) {
				struct bench_summary g, m;

				tp_sum(x, pl, slot, k,
				    offsetof(struct tp_run, goodput), &g);
				tp_sum(x, pl, slot, k,
				    offsetof(struct tp_run, msgs), &m);
				if (!x->done[pl][slot][k])
					g.median = g.min = g.max = m.median =
					    m.min = m.max = NAN;
				fprintf(f, " %.3f %.3f %.3f %.1f %.1f %.1f",
				    g.median, g.min, g.max, m.median, m.min,
				    m.max);
			}
			fprintf(f, "\n");
		}
		(void)fclose(f);
	}
}

/* One row of the table and of throughput_summary.csv. */
static void
tp_report_row(struct tp_ctx *x, int pl, unsigned slot, int k, FILE *f,
    FILE *ser)
{
	bool bulk = slot == TP_MAX_SIZES;
	unsigned size = bulk ? TP_BULK_SIZE : x->to.sizes[slot];
	struct bench_summary sg, sm, sl, su, ss, st, cpu[4];
	double busy = NAN;

	tp_sum(x, pl, slot, k, offsetof(struct tp_run, goodput), &sg);
	tp_sum(x, pl, slot, k, offsetof(struct tp_run, msgs), &sm);
	tp_sum(x, pl, slot, k, offsetof(struct tp_run, loss), &sl);
	tp_sum(x, pl, slot, k, offsetof(struct tp_run, per_unit), &su);
	tp_sum(x, pl, slot, k, offsetof(struct tp_run, send_secs), &ss);
	tp_sum(x, pl, slot, k, offsetof(struct tp_run, secs), &st);
	for (int i = 0; i < 4; i++)
		tp_sum(x, pl, slot, k,
		    offsetof(struct tp_run, cpu) + (size_t)i * sizeof(double),
		    &cpu[i]);
	if ((k == TP_FERRY_UDP || k == TP_FERRY_TCP) && st.median > 0)
		busy = 100 *
		    (cpu[0].median + cpu[1].median + cpu[2].median +
		        cpu[3].median) /
		    (2 * st.median);
	printf(
	    "%-8s %-4s %-11s %6u | %7.1f [%6.1f-%6.1f] | %8.0f [%7.0f-%7.0f] "
	    "| %6.3f [%.2f-%.2f] | %8.2f | %6.3f | %3.0f %%\n",
	    bench_place_name(pl), bulk ? "bulk" : "msgs", tp_kind_name[k], size,
	    sg.median, sg.min, sg.max, sm.median, sm.min, sm.max, sl.median,
	    sl.min, sl.max, su.median, ss.median, busy);
	if (f != NULL)
		fprintf(f,
		    "%s,%s,%s,%u,%llu,%u,%.6f,%.3f,%.3f,%.3f,%.1f,%.1f,%.1f,"
		    "%.4f,%.4f,%.4f,%.3f,%.6f,%.4f,%.4f,%.4f,%.4f\n",
		    bench_place_name(pl), bulk ? "bulk" : "msgs",
		    tp_kind_name[k], size,
		    (unsigned long long)(bulk ? x->to.bulk_mib * 16
		                              : x->to.count),
		    x->o.reps, st.median, sg.median, sg.min, sg.max, sm.median,
		    sm.min, sm.max, sl.median, sl.min, sl.max, su.median,
		    ss.median, cpu[0].median, cpu[1].median, cpu[2].median,
		    cpu[3].median);
	if (ser != NULL && !bulk)
		tp_write_series(x, ser, pl, slot, k, size);
}

static void
tp_report(struct tp_ctx *x, const bool *places)
{
	FILE *f = bench_csv_open(&x->o, "throughput_summary.csv",
	    "place,what,kind,size,count,reps,secs,goodput_MBps,"
	    "goodput_min,goodput_max,msgs_per_s,msgs_min,msgs_max,"
	    "loss_pct,loss_min,loss_max,msgs_per_unit,send_secs,"
	    "cpu_client_a,cpu_daemon_a,cpu_daemon_b,cpu_client_b");
	FILE *ser = bench_csv_open(&x->o, "throughput_series.csv",
	    "place,kind,size,ms,fraction");
	FILE *g = bench_csv_open(&x->o, "throughput_goals.csv",
	    "place,goal,kind,size,median,min,max,target,verdict");

	printf("\nThroughput and loss (seed 004 Fig. 6-7): %llu messages per "
	       "run, median of %u runs [min-max]\n",
	    (unsigned long long)x->to.count, x->o.reps);
	printf("%-8s %-4s %-11s %6s | %-24s | %-26s | %-20s | %8s | %6s | %s\n",
	    "place", "what", "kind", "bytes", "goodput MB/s", "messages/s",
	    "loss %", "msg/unit", "send s", "CPU");
	for (int pl = 0; pl < 2; pl++) {
		if (!places[pl])
			continue;
		for (unsigned slot = 0; slot <= TP_MAX_SIZES; slot++) {
			if (slot < TP_MAX_SIZES && slot >= x->to.n_sizes)
				continue;
			for (int k = 0; k < TP_NKIND; k++)
				if (x->done[pl][slot][k])
					tp_report_row(x, pl, slot, k, f, ser);
		}
	}
	printf("\nGoals:\n");
	for (int pl = 0; pl < 2; pl++)
		if (places[pl] && g != NULL)
			tp_goals(x, pl, g);
	printf("(raw-udp: one message per datagram, send()/recv(), 4 MiB "
	       "socket buffers as ferry's UDP transport has (-B), raw-udp-def: "
	       "the same with the system's default buffers; raw-tcp: "
	       "one write() per message. msg/unit: daemon A's messages (or "
	       "fragments) per datagram or TCP unit. send s: until the last "
	       "ferry_send() returned. CPU: both clients' and daemons' CPU "
	       "time over 2 CPUs x elapsed)\n");
	if (f != NULL)
		(void)fclose(f);
	if (ser != NULL)
		(void)fclose(ser);
	if (g != NULL)
		(void)fclose(g);
	tp_write_dat(x, places);
}

int
main(int argc, char **argv)
{
	static struct tp_ctx x;
	uint64_t *arrival;
	bool places[2];
	int r = 0;

	x.to = (struct tp_opts){ .count = 100000,
		.sizes = { 1200, 100 },
		.n_sizes = 2,
		.bulk_mib = 1024,
		.drain_ms = 2000,
		.sockbuf = 4u << 20 };
	bench_opts_parse(&x.o, argc, argv, "n:s:b:d:UB:", tp_opt, &x.to,
	    " [-n COUNT] [-s SIZES] [-b MIB] [-d MS] [-U] [-B BYTES]\n"
	    "  -n COUNT  messages per run (default 100000)\n"
	    "  -s LIST   message sizes (default 1200,100)\n"
	    "  -b MIB    bulk TCP volume in 64 KiB messages (default 1024; "
	    "0: none)\n"
	    "  -d MS     drain timeout after the sender is done (default "
	    "2000)\n"
	    "  -U        bulk over UDP too (for information)\n"
	    "  -B BYTES  raw UDP socket buffers (default 4194304, as ferry's "
	    "UDP transport;\n"
	    "            0: the system default)");
	if (x.o.quick) {
		x.to.count = 10000;
		if (x.to.bulk_mib > 64)
			x.to.bulk_mib = 64;
		if (x.o.reps > 2)
			x.o.reps = 2;
	}
	bench_env_init();
	places[BENCH_UNPINNED] = x.o.unpinned;
	places[BENCH_PINNED] = x.o.pinned;
	arrival = bench_shared(x.to.count * sizeof(uint64_t));
	for (int pl = 0; pl < 2; pl++)
		for (unsigned s = 0; s <= TP_MAX_SIZES; s++)
			for (int k = 0; k < TP_NKIND; k++)
				x.run[pl][s][k] =
				    calloc(x.o.reps, sizeof(struct tp_run));
	for (int t = 0; t < 2; t++) {
		if (!bench_want_transport(&x.o, tp_tname[t]))
			continue;
		r = bench_pair_start(&x.pair[t], "tput", tp_tname[t], NULL);
		if (r < 0)
			goto out;
		x.have[t] = true;
	}
	x.runs = bench_csv_open(&x.o, "throughput_runs.csv",
	    "place,what,kind,size,count,rep,secs,send_secs,goodput_MBps,"
	    "msgs_per_s,loss_pct,msgs_per_unit,units_from_b,"
	    "cpu_client_a,cpu_daemon_a,cpu_daemon_b,cpu_client_b");
	for (int pl = BENCH_PINNED; r == 0 && pl >= 0; pl--)
		if (places[pl])
			r = tp_place(&x, (enum bench_place)pl, arrival);
	if (x.runs != NULL)
		(void)fclose(x.runs);
	if (r == 0)
		tp_report(&x, places);
out:
	for (int t = 0; t < 2; t++)
		if (x.have[t])
			bench_pair_free(&x.pair[t]);
	if (r < 0)
		fprintf(stderr, "bench_throughput: %s\n", strerror(-r));
	return r < 0 ? 1 : 0;
}
