/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Seed 004 Fig. 5, SMTP row (issue 5, benchmark 1): 1000 sequential
 * messages of 11, 407 and 1221 bytes from a client of daemon A to a client
 * of daemon B, message i+1 sent once message i arrived, the daemons with
 * only SMTP loaded, through Postfix and procmail, with Maildir and with
 * FIFO inboxes. In the same run, the raw path (smtp_raw.h) carries as many
 * mails of the size ferry's mails had. Goals: <= 24 s per 1000 messages
 * (the paper: 24 s with qmail, 89-98 s with sendmail + procmail), and the
 * time per message within 1.5 x of the raw path's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smtp_bench.h"
#include "smtp_raw.h"

#define SQ_GOAL_S     24.0 /* per 1000 messages */
#define SQ_GOAL_RATIO 1.5  /* ferry / raw, per message */
#define SQ_STALL_MS   500  /* a message this late is a stall */

enum sq_path { SQ_FERRY, SQ_RAW, SQ_NPATH };
static const char *const sq_path_name[SQ_NPATH] = { "ferry", "raw" };

/* The paper's Fig. 5 (seconds per 1000), for the sizes it measured. */
static const struct {
	unsigned size;
	double purdue, rh80, qmail;
} sq_paper[] = { { 11, 781, 89, 24 }, { 407, 789, 98, 25 },
	{ 1221, 804, 98, 25 } };

/* One run of count sequential messages. */
struct sq_run {
	bool ok;                               /* first, for sb_runs_sum */
	double total_s;                        /* the count messages */
	double med_ms, p10_ms, p90_ms, max_ms; /* per message */
	double mail_bytes;           /* mean bytes of a mail carrying one */
	double mails_a;              /* mails A sent (ferry; raw: count) */
	double mails_b;              /* mails B sent back: ACKs (ferry) */
	double frames_lost;          /* A's core.frames_lost (ferry) */
	double stalls;               /* messages that took over SQ_STALL_MS */
	double stall_s;              /* the time they took together */
	struct smtp_postfix pf_data; /* mail to B (raw: to the raw user) */
	struct smtp_postfix pf_back; /* mail to A (ferry) */
	double *ms;                  /* per message, sorted after the run */
};

struct sb_seq {
	/* [inbox][size][path] -> reps runs */
	struct sq_run *run[SB_NINBOX][SB_MAX_SIZES][SQ_NPATH];
	bool done[SB_NINBOX];
	FILE *runs;
	FILE *timeline; /* every message of every run, in order */
};

static int
sq_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Per-message figures of a finished run; writes its timeline, then
 * sorts run->ms. */
static void
sq_stats(struct smtp_bench *x, int in, unsigned size, int path, unsigned rep,
    struct sq_run *run)
{
	unsigned n = x->so.count;
	FILE *tl = x->seq->timeline;
	double at = 0;

	run->stalls = run->stall_s = 0;
	for (unsigned i = 0; i < n; i++) {
		if (run->ms[i] > SQ_STALL_MS) {
			run->stalls++;
			run->stall_s += run->ms[i] / 1e3;
		}
		at += run->ms[i];
		if (tl != NULL)
			fprintf(tl, "%s,%s,%u,%u,%u,%.3f,%.3f\n",
			    sb_inbox_name[in], sq_path_name[path], size,
			    rep + 1, i, at / 1e3, run->ms[i]);
	}
	qsort(run->ms, n, sizeof(double), sq_cmp);
	run->med_ms =
	    n % 2 ? run->ms[n / 2] : (run->ms[n / 2 - 1] + run->ms[n / 2]) / 2;
	run->p10_ms = run->ms[n / 10];
	run->p90_ms = run->ms[n * 9 / 10 < n ? n * 9 / 10 : n - 1];
	run->max_ms = run->ms[n - 1];
}

/* Sends message i from ca and waits for it at cb. */
static int
sq_one(struct ferry_client *ca, struct ferry_client *cb,
    const struct ferry_peer_id *peer, uint8_t *buf, unsigned size, uint32_t i,
    int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	struct ferry_message m;
	int r;

	memcpy(buf, &i, size < 4 ? size : 4);
	r = ferry_send(ca, peer, BENCH_APP_TYPE, buf, size);
	if (r == 0)
		r = ferry_flush(ca);
	while (r == 0) {
		uint32_t seq = 0;
		uint64_t now = harness_now_ms();

		if (now >= end)
			return -ETIMEDOUT;
		r = ferry_receive(cb, &m, (int)(end - now));
		if (r < 0)
			break;
		memcpy(&seq, m.data, m.len < 4 ? m.len : 4);
		if (m.len == size && (size < 4 || seq == i))
			return 0;
	}
	return r;
}

/* What the daemons' counters and Postfix's log say about a ferry run. */
static void
sq_ferry_account(struct smtp_bench *x, struct smtp_pair *p, long mark,
    const struct bench_counters c[4], struct sq_run *run)
{
	double bytes =
	    (double)bench_counter_delta(&c[0], &c[2], "smtp.tx_bytes");

	run->mails_a =
	    (double)bench_counter_delta(&c[0], &c[2], "smtp.tx_mails");
	run->mails_b =
	    (double)bench_counter_delta(&c[1], &c[3], "smtp.tx_mails");
	run->frames_lost =
	    (double)bench_counter_delta(&c[0], &c[2], "core.frames_lost");
	run->mail_bytes = run->mails_a > 0 ? bytes / run->mails_a : NAN;
	smtp_env_postfix(mark, p->u[1].mail, (unsigned)run->mails_a, 3000,
	    &run->pf_data);
	smtp_env_postfix(mark, p->u[0].mail, (unsigned)run->mails_b, 3000,
	    &run->pf_back);
	sb_log_counters(x, "ferry A", &c[0], &c[2]);
	sb_log_counters(x, "ferry B", &c[1], &c[3]);
}

/* count sequential messages through the pair. */
static int
sq_ferry(struct smtp_bench *x, struct smtp_pair *p, unsigned size,
    struct sq_run *run)
{
	const struct smtp_bench_opts *so = &x->so;
	const struct ferry_peer_id *peer = &p->d[1]->id;
	struct ferry_client *ca = NULL, *cb = NULL;
	struct bench_counters c[4];
	uint8_t *buf = calloc(1, size + 4);
	uint64_t t0, ts;
	long mark;
	int r;

	memset(c, 0, sizeof(c));
	if (buf == NULL)
		return -ENOMEM;
	r = bench_client(p->d[0], false, &ca);
	if (r == 0)
		r = bench_client(p->d[1], true, &cb);
	for (uint32_t i = 0; r == 0 && i < so->warmup; i++)
		r = sq_one(ca, cb, peer, buf, size, UINT32_MAX - i,
		    so->timeout_ms);
	if (r == 0)
		r = bench_counters_get(p->d[0], &c[0]);
	if (r == 0)
		r = bench_counters_get(p->d[1], &c[1]);
	mark = smtp_env_log_mark();
	t0 = bench_now_ns();
	for (uint32_t i = 0; r == 0 && i < so->count; i++) {
		ts = bench_now_ns();
		r = sq_one(ca, cb, peer, buf, size, i, so->timeout_ms);
		run->ms[i] = (double)(bench_now_ns() - ts) / 1e6;
	}
	run->total_s = (double)(bench_now_ns() - t0) / 1e9;
	if (r == 0)
		r = bench_counters_get(p->d[0], &c[2]);
	if (r == 0)
		r = bench_counters_get(p->d[1], &c[3]);
	if (r == 0)
		sq_ferry_account(x, p, mark, c, run);
	for (int k = 0; k < 4; k++)
		bench_counters_free(&c[k]);
	ferry_client_close(ca);
	ferry_client_close(cb);
	free(buf);
	return r;
}

/* The same number of mails of the size ferry's were, on the raw path. */
static int
sq_raw(struct smtp_bench *x, const struct smtp_user *u, double mail_bytes,
    struct sq_run *run)
{
	const struct smtp_bench_opts *so = &x->so;
	struct smtp_raw_path rp;
	uint64_t *ns = calloc(so->count, sizeof(uint64_t)), total = 0;
	long mark = smtp_env_log_mark();
	int r;

	if (ns == NULL)
		return -ENOMEM;
	sb_raw_path(u, &rp);
	r = smtp_raw_seq(&rp, (size_t)mail_bytes, so->count, so->warmup,
	    so->timeout_ms, ns, &total);
	for (unsigned i = 0; i < so->count; i++)
		run->ms[i] = (double)ns[i] / 1e6;
	run->total_s = (double)total / 1e9;
	run->mail_bytes = mail_bytes;
	run->mails_a = so->count;
	run->mails_b = run->frames_lost = NAN;
	if (r == 0)
		smtp_env_postfix(mark, u->mail, so->count + so->warmup, 3000,
		    &run->pf_data);
	memset(&run->pf_back, 0, sizeof(run->pf_back));
	run->pf_back.delay = NAN;
	free(ns);
	return r;
}

static void
sq_log_run(struct smtp_bench *x, int in, unsigned size, int path, unsigned rep,
    int r, const struct sq_run *run)
{
	const struct smtp_postfix *d = &run->pf_data;

	if (r < 0)
		fprintf(stderr,
		    "bench_smtp: fig5 %s %s %u B rep %u failed: "
		    "%s\n",
		    sb_inbox_name[in], sq_path_name[path], size, rep + 1,
		    strerror(-r));
	if (x->seq->runs != NULL && r == 0)
		fprintf(x->seq->runs,
		    "%s,%s,%u,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%.0f,%.0f,"
		    "%.0f,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%u,%.3f,%.0f,%.3f\n",
		    sb_inbox_name[in], sq_path_name[path], size, rep + 1,
		    x->so.count, run->total_s, run->med_ms, run->p10_ms,
		    run->p90_ms, run->max_ms, run->mail_bytes, run->mails_a,
		    run->mails_b, run->frames_lost, d->n, d->delay,
		    d->before_qmgr, d->in_qmgr, d->conn, d->xmit,
		    run->pf_back.n, run->pf_back.delay, run->stalls,
		    run->stall_s);
	if (r == 0)
		bench_log(&x->o,
		    "fig5 %s %s %u B rep %u: %.2f s per %u, median %.2f ms "
		    "[p10 %.2f p90 %.2f max %.1f], %.0f stalls %.1f s, mail "
		    "%.0f B, mails A %.0f B %.0f; postfix to B: %.3f s = "
		    "%.3f+%.3f+%.3f+%.3f",
		    sb_inbox_name[in], sq_path_name[path], size, rep + 1,
		    run->total_s, x->so.count, run->med_ms, run->p10_ms,
		    run->p90_ms, run->max_ms, run->stalls, run->stall_s,
		    run->mail_bytes, run->mails_a, run->mails_b, d->delay,
		    d->before_qmgr, d->in_qmgr, d->conn, d->xmit);
}

/* One repetition of every size over one inbox kind, each on a new pair
 * of daemons: nothing a run leaves behind (frames in flight, queued
 * mail) weighs on the next. */
static void
sq_rep(struct smtp_bench *x, int in, unsigned rep)
{
	for (unsigned si = 0; si < x->so.n_sizes; si++) {
		unsigned size = x->so.sizes[si];
		struct sq_run *f = &x->seq->run[in][si][SQ_FERRY][rep];
		struct sq_run *w = &x->seq->run[in][si][SQ_RAW][rep];
		struct smtp_pair p;
		double mail;
		int r;

		smtp_env_lock();
		r = smtp_pair_start(&p, "smtp-seq", &x->user[in][SB_USER_A],
		    &x->user[in][SB_USER_B], NULL, x->o.extra_cfg);
		if (r == 0) {
			r = sq_ferry(x, &p, size, f);
			smtp_pair_free(&p);
		}
		f->ok = r == 0;
		if (f->ok)
			sq_stats(x, in, size, SQ_FERRY, rep, f);
		sq_log_run(x, in, size, SQ_FERRY, rep, r, f);
		/* A mail as large as ferry's; a guess if ferry failed. */
		mail = f->ok && !isnan(f->mail_bytes) ? f->mail_bytes
		                                      : 1600 + size * 4 / 3;
		r = sq_raw(x, &x->user[in][SB_USER_RAW], mail, w);
		w->ok = r == 0;
		if (w->ok)
			sq_stats(x, in, size, SQ_RAW, rep, w);
		sq_log_run(x, in, size, SQ_RAW, rep, r, w);
		smtp_env_unlock();
	}
	x->seq->done[in] = true;
}

int
sb_seq_run(struct smtp_bench *x)
{
	x->seq = calloc(1, sizeof(*x->seq));
	if (x->seq == NULL)
		return -ENOMEM;
	for (int in = 0; in < SB_NINBOX; in++)
		for (unsigned si = 0; si < x->so.n_sizes; si++)
			for (int k = 0; k < SQ_NPATH; k++) {
				struct sq_run *v =
				    calloc(x->o.reps, sizeof(*v));

				if (v == NULL)
					return -ENOMEM;
				for (unsigned i = 0; i < x->o.reps; i++) {
					v[i].ms =
					    calloc(x->so.count, sizeof(double));
					if (v[i].ms == NULL)
						return -ENOMEM;
				}
				x->seq->run[in][si][k] = v;
			}
	x->seq->runs = bench_csv_open(&x->o, "smtp_fig5_runs.csv",
	    "inbox,path,size,rep,count,total_s,median_ms,p10_ms,p90_ms,"
	    "max_ms,mail_bytes,mails_a,mails_b,frames_lost_a,pf_n,"
	    "pf_delay_s,pf_before_qmgr_s,pf_in_qmgr_s,pf_conn_s,pf_xmit_s,"
	    "pf_back_n,pf_back_delay_s,stalls,stall_s");
	x->seq->timeline = bench_csv_open(&x->o, "smtp_fig5_timeline.csv",
	    "inbox,path,size,rep,msg,at_s,ms");
	for (int in = 0; in < SB_NINBOX; in++) {
		if (!x->so.inbox_on[in] || !x->have[in])
			continue;
		/* Repetitions outermost: drift hits every cell alike. */
		for (unsigned rep = 0; rep < x->o.reps; rep++)
			sq_rep(x, in, rep);
	}
	if (x->seq->runs != NULL)
		(void)fclose(x->seq->runs);
	if (x->seq->timeline != NULL)
		(void)fclose(x->seq->timeline);
	x->seq->runs = x->seq->timeline = NULL;
	return 0;
}

/* Summary over the repetitions of one field of a cell's runs. */
static void
sq_sum(struct smtp_bench *x, int in, unsigned si, int path, size_t off,
    struct bench_summary *ret)
{
	sb_runs_sum(x->seq->run[in][si][path], sizeof(struct sq_run), x->o.reps,
	    off, ret);
}

/* Median and spread of ferry / raw of a field, run by run. */
static void
sq_ratio(struct smtp_bench *x, int in, unsigned si, size_t off,
    struct bench_summary *ret)
{
	double v[1000];
	unsigned n = x->o.reps < 1000 ? x->o.reps : 1000;

	for (unsigned i = 0; i < n; i++) {
		const struct sq_run *f = &x->seq->run[in][si][SQ_FERRY][i];
		const struct sq_run *w = &x->seq->run[in][si][SQ_RAW][i];

		v[i] = f->ok && w->ok
		    ? *(const double *)((const char *)f + off) /
		        *(const double *)((const char *)w + off)
		    : NAN;
	}
	bench_summarize(v, n, ret);
}

/* The run of a cell whose total is the median one. */
static const struct sq_run *
sq_median_run(struct smtp_bench *x, int in, unsigned si, int path)
{
	return sb_runs_median(x->seq->run[in][si][path], sizeof(struct sq_run),
	    x->o.reps, offsetof(struct sq_run, total_s));
}

static const char *
sq_verdict(bool ok)
{
	return ok ? "met" : "MISSED";
}

/* One row of the main table and of smtp_fig5_summary.csv. */
static void
sq_report_row(struct smtp_bench *x, int in, unsigned si, FILE *f)
{
	struct bench_summary t[SQ_NPATH], m[SQ_NPATH], rm, rt, mb, ma, bb;
	struct bench_summary st, ss;

	for (int k = 0; k < SQ_NPATH; k++) {
		sq_sum(x, in, si, k, offsetof(struct sq_run, total_s), &t[k]);
		sq_sum(x, in, si, k, offsetof(struct sq_run, med_ms), &m[k]);
	}
	sq_ratio(x, in, si, offsetof(struct sq_run, med_ms), &rm);
	sq_ratio(x, in, si, offsetof(struct sq_run, total_s), &rt);
	sq_sum(x, in, si, SQ_FERRY, offsetof(struct sq_run, mail_bytes), &mb);
	sq_sum(x, in, si, SQ_FERRY, offsetof(struct sq_run, mails_a), &ma);
	sq_sum(x, in, si, SQ_FERRY, offsetof(struct sq_run, mails_b), &bb);
	sq_sum(x, in, si, SQ_FERRY, offsetof(struct sq_run, stalls), &st);
	sq_sum(x, in, si, SQ_FERRY, offsetof(struct sq_run, stall_s), &ss);
	/* per 1000, whatever -n was */
	for (int k = 0; k < SQ_NPATH; k++) {
		double s = 1000.0 / x->so.count;

		t[k].median *= s;
		t[k].min *= s;
		t[k].max *= s;
	}
	printf("%-7s %5u | %6.2f [%6.2f-%6.2f] %-6s | %6.2f [%6.2f-%6.2f] | "
	       "%6.2f [%6.2f-%6.2f] | %6.2f [%6.2f-%6.2f] | %5.2f [%5.2f-%5.2f]"
	       " %-6s | %5.2f | %5.0f | %4.0f/%4.0f | %3.0f %6.1f\n",
	    sb_inbox_name[in], x->so.sizes[si], t[SQ_FERRY].median,
	    t[SQ_FERRY].min, t[SQ_FERRY].max,
	    sq_verdict(t[SQ_FERRY].median <= SQ_GOAL_S), t[SQ_RAW].median,
	    t[SQ_RAW].min, t[SQ_RAW].max, m[SQ_FERRY].median, m[SQ_FERRY].min,
	    m[SQ_FERRY].max, m[SQ_RAW].median, m[SQ_RAW].min, m[SQ_RAW].max,
	    rm.median, rm.min, rm.max, sq_verdict(rm.median <= SQ_GOAL_RATIO),
	    rt.median, mb.median, ma.median, bb.median, st.median, ss.median);
	if (f == NULL)
		return;
	fprintf(f,
	    "%s,%u,%u,%u,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
	    "%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%.0f,%.0f,%.0f,%.3f,%s,%s\n",
	    sb_inbox_name[in], x->so.sizes[si], x->so.count, x->o.reps,
	    t[SQ_FERRY].median, t[SQ_FERRY].min, t[SQ_FERRY].max,
	    t[SQ_RAW].median, t[SQ_RAW].min, t[SQ_RAW].max, m[SQ_FERRY].median,
	    m[SQ_FERRY].min, m[SQ_FERRY].max, m[SQ_RAW].median, m[SQ_RAW].min,
	    m[SQ_RAW].max, rm.median, rm.min, rm.max, rt.median, mb.median,
	    ma.median, bb.median, st.median, ss.median,
	    sq_verdict(t[SQ_FERRY].median <= SQ_GOAL_S),
	    sq_verdict(rm.median <= SQ_GOAL_RATIO));
}

/* Where a message's time went, by Postfix's delays= (median run). */
static void
sq_report_postfix(struct smtp_bench *x, int in, unsigned si)
{
	for (int k = 0; k < SQ_NPATH; k++) {
		const struct sq_run *run = sq_median_run(x, in, si, k);
		const struct smtp_postfix *d;

		if (run == NULL)
			continue;
		d = &run->pf_data;
		printf("%-7s %5u %-5s | %5u | %6.1f | %6.1f | %6.1f | %6.1f | "
		       "%6.1f | %8.2f | %8.2f | %8.2f",
		    sb_inbox_name[in], x->so.sizes[si], sq_path_name[k], d->n,
		    d->delay * 1e3, d->before_qmgr * 1e3, d->in_qmgr * 1e3,
		    d->conn * 1e3, d->xmit * 1e3, run->p10_ms, run->med_ms,
		    run->p90_ms);
		if (k == SQ_FERRY)
			printf(" | %5u mails back, %.1f ms; %u deferred",
			    run->pf_back.n, run->pf_back.delay * 1e3,
			    d->deferred + run->pf_back.deferred);
		printf("\n");
	}
}

/* The per-message distribution of each cell's median run, sorted: the
 * plot's CDF. */
static void
sq_write_series(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig5_series.csv",
	    "inbox,path,size,fraction,ms");

	if (f == NULL)
		return;
	for (int in = 0; in < SB_NINBOX; in++)
		for (unsigned si = 0; x->seq->done[in] && si < x->so.n_sizes;
		     si++)
			for (int k = 0; k < SQ_NPATH; k++) {
				const struct sq_run *run =
				    sq_median_run(x, in, si, k);

				for (unsigned i = 0;
				     run != NULL && i < x->so.count; i++)
					fprintf(f, "%s,%s,%u,%.4f,%.3f\n",
					    sb_inbox_name[in], sq_path_name[k],
					    x->so.sizes[si],
					    (double)(i + 1) / x->so.count,
					    run->ms[i]);
				fprintf(f, "\n\n");
			}
	(void)fclose(f);
}

/* The bar chart's data: a row per size; per inbox kind ferry and raw
 * (median, min, max of seconds per 1000), then the paper's three. */
static void
sq_write_dat(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig5.dat",
	    "# size {maildir,fifo} x {ferry,raw} x {median,min,max} s per "
	    "1000, paper qmail, RH 8.0 sendmail+procmail, Purdue");

	if (f == NULL)
		return;
	for (unsigned si = 0; si < x->so.n_sizes; si++) {
		double qm = NAN, rh = NAN, pu = NAN;

		fprintf(f, "%u", x->so.sizes[si]);
		for (int in = 0; in < SB_NINBOX; in++)
			for (int k = 0; k < SQ_NPATH; k++) {
				struct bench_summary s;
				double sc = 1000.0 / x->so.count;

				sq_sum(x, in, si, k,
				    offsetof(struct sq_run, total_s), &s);
				if (!x->seq->done[in])
					s.median = s.min = s.max = NAN;
				fprintf(f, " %.3f %.3f %.3f", s.median * sc,
				    s.min * sc, s.max * sc);
			}
		for (size_t i = 0; i < sizeof(sq_paper) / sizeof(sq_paper[0]);
		     i++)
			if (sq_paper[i].size == x->so.sizes[si]) {
				qm = sq_paper[i].qmail;
				rh = sq_paper[i].rh80;
				pu = sq_paper[i].purdue;
			}
		fprintf(f, " %.0f %.0f %.0f\n", qm, rh, pu);
	}
	(void)fclose(f);
}

void
sb_seq_report(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig5_summary.csv",
	    "inbox,size,count,reps,ferry_s_per_1000,ferry_min,ferry_max,"
	    "raw_s_per_1000,raw_min,raw_max,ferry_ms_per_msg,ferry_ms_min,"
	    "ferry_ms_max,raw_ms_per_msg,raw_ms_min,raw_ms_max,ratio_ms,"
	    "ratio_min,ratio_max,ratio_total,mail_bytes,mails_a,mails_b,"
	    "stalls,stall_s,goal_24s,goal_ratio");

	printf("\nSequential messages over SMTP (seed 004 Fig. 5, SMTP row): "
	       "%u per run, message i+1 sent when i arrived; median of %u "
	       "runs [min-max]\n",
	    x->so.count, x->o.reps);
	printf("%-7s %5s | %-29s | %-22s | %-22s | %-22s | %-25s | %5s | "
	       "%5s | %-9s | %s\n",
	    "inbox", "bytes", "ferry s/1000 (goal 24)", "raw s/1000",
	    "ferry ms/msg (median)", "raw ms/msg (median)",
	    "ratio ms/msg (goal 1.5)", "tot.r", "mail", "mails A/B",
	    "stalls s");
	for (int in = 0; in < SB_NINBOX; in++)
		for (unsigned si = 0; x->seq->done[in] && si < x->so.n_sizes;
		     si++)
			sq_report_row(x, in, si, f);
	printf("(ratio ms/msg: ferry's median time per message over the raw "
	       "path's, run by run; tot.r: the same for the totals; mail: "
	       "mean bytes of ferry's data mail, the raw path's mail size; "
	       "mails A/B: mails daemon A sent (data) and daemon B sent "
	       "back (ACKs); stalls: ferry's messages over 500 ms and their "
	       "seconds. Paper: qmail 24-25 s, RH 8.0 sendmail + "
	       "procmail 89-98 s, Purdue 781-804 s)\n");
	printf("\nWhere a message's time goes (median run; Postfix's delays= "
	       "for the mails to the receiver, medians in ms at Postfix's "
	       "10 ms resolution; then the end-to-end times in ms)\n");
	printf("%-7s %5s %-5s | %5s | %6s | %6s | %6s | %6s | %6s | %8s | "
	       "%8s | %8s\n",
	    "inbox", "bytes", "path", "mails", "delay", "pre-q", "in-q", "conn",
	    "procm", "e2e p10", "e2e p50", "e2e p90");
	for (int in = 0; in < SB_NINBOX; in++)
		for (unsigned si = 0; x->seq->done[in] && si < x->so.n_sizes;
		     si++)
			sq_report_postfix(x, in, si);
	if (f != NULL)
		(void)fclose(f);
	sq_write_series(x);
	sq_write_dat(x);
}

void
sb_seq_free(struct smtp_bench *x)
{
	if (x->seq == NULL)
		return;
	for (int in = 0; in < SB_NINBOX; in++)
		for (unsigned si = 0; si < SB_MAX_SIZES; si++)
			for (int k = 0; k < SQ_NPATH; k++) {
				struct sq_run *v = x->seq->run[in][si][k];

				for (unsigned i = 0; v != NULL && i < x->o.reps;
				     i++)
					free(v[i].ms);
				free(v);
			}
	free(x->seq);
	x->seq = NULL;
}
