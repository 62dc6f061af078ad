/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Seed 004 Fig. 8 (issue 5, benchmark 2): 1200-byte messages sent by a
 * client of daemon A with ferry_send() as fast as it returns, to a client
 * of daemon B, over SMTP only; the core packs them into frames and several
 * frames into one mail up to the transport's MTU. For each MTU (the
 * paper's 12000-byte mails, 1 MiB, and the default derived from Postfix's
 * size limit) a new pair. Reported: payload received per second (each
 * message counted once; nothing may be lost: the service blocks the
 * sender when the core's queue is full), mails sent, messages per mail.
 * Baseline in the same run: the raw mail path's rate with mails of
 * 12000 bytes, 1 MB and 7 MB of payload. Goal: >= 2 MB/s of payload.
 * Paper: 6 kbit/s, 13 kbit/s with 12000-byte mails, 51 kbit/s with the
 * spool on a RAM disk.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow.h"
#include "smtp_bench.h"
#include "smtp_raw.h"

#define TV_SERIES    200         /* points of a received-over-time curve */
#define TV_GOAL_MBPS 2.0         /* payload, 10^6 bytes/s */
#define TV_RAW_MIN   16          /* raw mails per run at least */
#define TV_RAW_MAX   2000        /* and at most */
#define TV_RAW_BYTES (64u << 20) /* raw payload per run at least */
#define TV_MAX       (SB_NINBOX * 2 * SB_MAX_VARIANTS)

/* The paper's Fig. 8, kbit/s. */
static const struct {
	const char *label;
	double kbits;
} tv_paper[] = { { "paper 1200 B mails", 6 }, { "paper 12000 B mails", 13 },
	{ "paper RAM-disk spool", 51 } };

enum tv_kind { TV_FERRY, TV_RAW };

struct tv_run {
	bool ok;                  /* first, for sb_runs_sum */
	double secs;              /* first send to last arrival */
	double send_secs;         /* until the sender was done */
	double mbps;              /* payload, 10^6 bytes/s */
	double kbits;             /* the same in kbit/s, as the paper */
	double loss;              /* percent of those sent that never came */
	double sent;              /* messages (mails) handed over */
	double cut;               /* 1 if the time limit stopped the sender */
	double mails_a;           /* mails A sent (raw: mails submitted) */
	double mails_b;           /* mails B sent back: ACKs */
	double per_mail;          /* messages per mail (core.msg_out / mails) */
	double mail_bytes;        /* mean bytes of a mail A sent */
	double frames_lost;       /* A's core.frames_lost */
	double cpu_a, cpu_b;      /* CPU seconds of the daemons */
	double pf_delay, pf_xmit; /* Postfix: median delay, procmail part */
	double series[TV_SERIES + 1][2]; /* ms since start, fraction */
};

/* One bar of the figure: a ferry MTU or a raw payload, per inbox. */
struct tv_variant {
	int inbox;
	enum tv_kind kind;
	uint64_t param; /* MTU (0: auto) or payload bytes */
	char label[48];
	struct tv_run *runs; /* reps */
	bool done;
};

struct sb_tput {
	struct tv_variant v[TV_MAX];
	unsigned n;
	FILE *runs;
};

static void
tv_rate(struct tv_run *run, uint64_t payload, uint64_t start_ns,
    uint64_t send_end_ns, uint64_t last_ns)
{
	run->secs = flow_seconds(start_ns, last_ns);
	run->send_secs = flow_seconds(start_ns, send_end_ns);
	run->mbps = run->secs > 0 ? (double)payload / run->secs / 1e6 : 0;
	run->kbits = run->mbps * 8000;
}

/* What the counters and Postfix's log say about a ferry run. */
static void
tv_ferry_account(struct smtp_bench *x, struct smtp_pair *p, long mark,
    const struct bench_counters c[4], struct tv_run *run)
{
	struct smtp_postfix pf;
	double msgs = (double)bench_counter_delta(&c[0], &c[2], "core.msg_out");

	run->mails_a =
	    (double)bench_counter_delta(&c[0], &c[2], "smtp.tx_mails");
	run->mails_b =
	    (double)bench_counter_delta(&c[1], &c[3], "smtp.tx_mails");
	run->per_mail = run->mails_a > 0 ? msgs / run->mails_a : NAN;
	run->mail_bytes = run->mails_a > 0
	    ? (double)bench_counter_delta(&c[0], &c[2], "smtp.tx_bytes") /
	        run->mails_a
	    : NAN;
	run->frames_lost =
	    (double)bench_counter_delta(&c[0], &c[2], "core.frames_lost");
	smtp_env_postfix(mark, p->u[1].mail, (unsigned)run->mails_a, 3000, &pf);
	run->pf_delay = pf.delay;
	run->pf_xmit = pf.xmit;
	sb_log_counters(x, "ferry A", &c[0], &c[2]);
	sb_log_counters(x, "ferry B", &c[1], &c[3]);
}

/*
 * The flow of one ferry run: so->tput_count messages from a client of A
 * to one of B, for at most so->limit_s seconds (a flow over mail that
 * crawls still ends and says how far it got); the receiver waits
 * so->drain_ms after the sender is done. 0 (also when cut short) or a
 * negative errno; *ret_f (flow_free) keeps the arrival times.
 */
static int
tv_flow(const struct smtp_bench_opts *so, struct smtp_pair *p,
    struct flow **ret_f, struct flow_result *ret)
{
	uint64_t limit_ns = (uint64_t)so->limit_s * 1000000000u;
	struct ferry_client *c = NULL;
	int r;

	r = flow_new(p->d[1], FLOW_CPU_KEEP, so->tput_size, so->tput_count,
	    so->drain_ms,
	    limit_ns + (uint64_t)so->drain_ms * 1000000u + 60000000000ull,
	    ret_f);
	if (r == 0)
		r = bench_client(p->d[0], false, &c);
	if (r == 0) {
		ferry_client_set_timeout(c, (int)(so->limit_s * 1000));
		r = flow_send(*ret_f, c, &p->d[1]->id,
		    bench_now_ns() + limit_ns, ret);
	}
	/* Closed before the receiver drains (flow_run keeps it open): a
	 * sender that was cut short has given up. */
	ferry_client_close(c);
	if (r == 0)
		r = flow_wait(*ret_f, ret);
	return r;
}

static int
tv_ferry(struct smtp_bench *x, struct smtp_pair *p, struct tv_run *run)
{
	struct bench_counters c[4];
	struct flow_result fr;
	struct flow *f = NULL;
	uint64_t cpu0[2], cpu1[2];
	long mark = smtp_env_log_mark();
	int r;

	memset(c, 0, sizeof(c));
	r = bench_counters_get(p->d[0], &c[0]);
	if (r == 0)
		r = bench_counters_get(p->d[1], &c[1]);
	cpu0[0] = bench_cpu_ns(p->d[0]->pid);
	cpu0[1] = bench_cpu_ns(p->d[1]->pid);
	if (r == 0)
		r = tv_flow(&x->so, p, &f, &fr);
	cpu1[0] = bench_cpu_ns(p->d[0]->pid);
	cpu1[1] = bench_cpu_ns(p->d[1]->pid);
	if (r == 0)
		r = bench_counters_get(p->d[0], &c[2]);
	if (r == 0)
		r = bench_counters_get(p->d[1], &c[3]);
	if (r == 0) {
		tv_rate(run, fr.bytes, fr.start_ns, fr.send_end_ns, fr.last_ns);
		run->sent = (double)fr.sent;
		run->cut = fr.cut;
		run->loss = fr.sent > 0
		    ? 100.0 * (double)(fr.sent - fr.received) / (double)fr.sent
		    : NAN;
		run->cpu_a = (double)(cpu1[0] - cpu0[0]) / 1e9;
		run->cpu_b = (double)(cpu1[1] - cpu0[1]) / 1e9;
		flow_series(fr.arrival_ns, fr.received, fr.count, fr.start_ns,
		    TV_SERIES, run->series);
		tv_ferry_account(x, p, mark, c, run);
		if (fr.bad > 0)
			fprintf(stderr, "bench_smtp: %llu bad messages\n",
			    (unsigned long long)fr.bad);
	}
	for (int k = 0; k < 4; k++)
		bench_counters_free(&c[k]);
	flow_free(f);
	return r;
}

static int
tv_raw(struct smtp_bench *x, const struct tv_variant *v, struct tv_run *run)
{
	uint64_t total = x->so.tput_count * x->so.tput_size;
	uint64_t n = (total > TV_RAW_BYTES ? total : TV_RAW_BYTES) / v->param;
	const struct smtp_user *u = &x->user[v->inbox][SB_USER_RAW];
	struct smtp_raw_path rp;
	struct smtp_raw_bulk rb;
	struct smtp_postfix pf;
	long mark = smtp_env_log_mark();
	int r;

	n = n < TV_RAW_MIN ? TV_RAW_MIN : n > TV_RAW_MAX ? TV_RAW_MAX : n;
	sb_raw_path(u, &rp);
	r = smtp_raw_bulk(&rp, v->param, (unsigned)n, x->so.drain_ms, &rb);
	if (r < 0)
		return r;
	tv_rate(run, rb.payload, rb.start_ns, rb.send_end_ns, rb.last_ns);
	run->loss = rb.sent > 0
	    ? 100.0 * (double)(rb.sent - rb.received) / (double)rb.sent
	    : NAN;
	run->sent = (double)rb.sent;
	run->cut = 0;
	run->mails_a = (double)rb.sent;
	run->mails_b = run->frames_lost = run->cpu_a = run->cpu_b = NAN;
	run->per_mail = NAN;
	run->mail_bytes = (double)rb.mail_bytes;
	run->series[0][0] = NAN;
	smtp_env_postfix(mark, u->mail, rb.sent, 3000, &pf);
	run->pf_delay = pf.delay;
	run->pf_xmit = pf.xmit;
	return 0;
}

static void
tv_log_run(struct smtp_bench *x, const struct tv_variant *v, unsigned rep,
    int r, const struct tv_run *run)
{
	if (r < 0) {
		fprintf(stderr, "bench_smtp: fig8 %s %s rep %u failed: %s\n",
		    sb_inbox_name[v->inbox], v->label, rep + 1, strerror(-r));
		return;
	}
	if (x->tput->runs != NULL)
		fprintf(x->tput->runs,
		    "%s,%s,%s,%llu,%u,%.3f,%.3f,%.4f,%.2f,%.0f,%.0f,%.4f,%.0f,"
		    "%.0f,%.2f,%.0f,%.0f,%.3f,%.3f,%.3f,%.3f\n",
		    sb_inbox_name[v->inbox],
		    v->kind == TV_FERRY ? "ferry" : "raw", v->label,
		    (unsigned long long)v->param, rep + 1, run->secs,
		    run->send_secs, run->mbps, run->kbits, run->sent, run->cut,
		    run->loss, run->mails_a, run->mails_b, run->per_mail,
		    run->mail_bytes, run->frames_lost, run->cpu_a, run->cpu_b,
		    run->pf_delay, run->pf_xmit);
	bench_log(&x->o,
	    "fig8 %s %s rep %u: %.2f MB/s (%.0f kbit/s) in %.2f s (sender "
	    "%.2f s), sent %.0f%s, undelivered %.3f %%, mails A %.0f B %.0f, "
	    "%.1f msg/mail, %.0f B/mail, frames lost %.0f, CPU A %.2f B "
	    "%.2f s, postfix "
	    "delay %.2f s (procmail %.2f)",
	    sb_inbox_name[v->inbox], v->label, rep + 1, run->mbps, run->kbits,
	    run->secs, run->send_secs, run->sent, run->cut ? " (cut)" : "",
	    run->loss, run->mails_a, run->mails_b, run->per_mail,
	    run->mail_bytes, run->frames_lost, run->cpu_a, run->cpu_b,
	    run->pf_delay, run->pf_xmit);
}

/* Every repetition of one ferry MTU, each over a new pair: a run cut
 * short leaves messages queued that must not count in the next. */
static void
tv_ferry_variant(struct smtp_bench *x, struct tv_variant *v)
{
	char extra[96] = "";
	struct smtp_pair p;
	int r;

	if (v->param != 0)
		(void)snprintf(extra, sizeof(extra),
		    "[transport-smtp]\nMTU = %llu\n",
		    (unsigned long long)v->param);
	for (unsigned rep = 0; rep < x->o.reps; rep++) {
		smtp_env_lock();
		r = smtp_pair_start(&p, "smtp-tput",
		    &x->user[v->inbox][SB_USER_A],
		    &x->user[v->inbox][SB_USER_B], extra, x->o.extra_cfg);
		if (r == 0) {
			r = tv_ferry(x, &p, &v->runs[rep]);
			smtp_pair_free(&p);
		}
		smtp_env_unlock();
		v->runs[rep].ok = r == 0;
		tv_log_run(x, v, rep, r, &v->runs[rep]);
	}
	v->done = true;
}

static int
tv_add(struct smtp_bench *x, int inbox, enum tv_kind kind, uint64_t param)
{
	struct tv_variant *v = &x->tput->v[x->tput->n];

	v->inbox = inbox;
	v->kind = kind;
	v->param = param;
	if (kind == TV_RAW)
		(void)snprintf(v->label, sizeof(v->label), "raw %llu B mails",
		    (unsigned long long)param);
	else if (param == 0)
		(void)snprintf(v->label, sizeof(v->label), "ferry MTU auto");
	else
		(void)snprintf(v->label, sizeof(v->label), "ferry MTU %llu",
		    (unsigned long long)param);
	v->runs = calloc(x->o.reps, sizeof(*v->runs));
	if (v->runs == NULL)
		return -ENOMEM;
	x->tput->n++;
	return 0;
}

static int
tv_plan(struct smtp_bench *x)
{
	int r = 0;

	for (int in = 0; in < SB_NINBOX; in++) {
		if (!x->so.tput_inbox_on[in] || !x->have[in])
			continue;
		for (unsigned i = 0; r == 0 && i < x->so.n_mtus; i++)
			r = tv_add(x, in, TV_FERRY, x->so.mtus[i]);
		for (unsigned i = 0; r == 0 && i < x->so.n_payloads; i++)
			r = tv_add(x, in, TV_RAW, x->so.payloads[i]);
	}
	return r;
}

int
sb_tput_run(struct smtp_bench *x)
{
	int r;

	x->tput = calloc(1, sizeof(*x->tput));
	if (x->tput == NULL)
		return -ENOMEM;
	r = tv_plan(x);
	if (r < 0)
		return r;
	x->tput->runs = bench_csv_open(&x->o, "smtp_fig8_runs.csv",
	    "inbox,kind,variant,param,rep,secs,send_secs,payload_MBps,kbitps,"
	    "sent,cut,undelivered_pct,mails_a,mails_b,msgs_per_mail,mail_bytes,"
	    "frames_lost_a,"
	    "cpu_daemon_a,cpu_daemon_b,pf_delay_s,pf_xmit_s");
	for (unsigned i = 0; i < x->tput->n; i++) {
		struct tv_variant *v = &x->tput->v[i];

		if (v->kind == TV_FERRY) {
			tv_ferry_variant(x, v);
			continue;
		}
		for (unsigned rep = 0; rep < x->o.reps; rep++) {
			smtp_env_lock();
			r = tv_raw(x, v, &v->runs[rep]);
			smtp_env_unlock();
			v->runs[rep].ok = r == 0;
			tv_log_run(x, v, rep, r, &v->runs[rep]);
		}
		v->done = true;
	}
	if (x->tput->runs != NULL)
		(void)fclose(x->tput->runs);
	x->tput->runs = NULL;
	return 0;
}

static void
tv_sum(struct smtp_bench *x, const struct tv_variant *v, size_t off,
    struct bench_summary *ret)
{
	sb_runs_sum(v->runs, sizeof(*v->runs), x->o.reps, off, ret);
}

/* The raw variant of the same inbox whose payload is nearest to what
 * ferry's mails carried (on a log scale). */
static const struct tv_variant *
tv_nearest_raw(struct smtp_bench *x, const struct tv_variant *v,
    double mail_bytes)
{
	const struct tv_variant *best = NULL;
	double bd = INFINITY;

	for (unsigned i = 0; i < x->tput->n; i++) {
		const struct tv_variant *w = &x->tput->v[i];
		double d;

		if (w->kind != TV_RAW || w->inbox != v->inbox || !w->done)
			continue;
		d = fabs(log((double)w->param * 4 / 3) - log(mail_bytes));
		if (d < bd) {
			bd = d;
			best = w;
		}
	}
	return best;
}

static void
tv_report_row(struct smtp_bench *x, const struct tv_variant *v, FILE *f)
{
	enum { MB, KB, LOSS, SENT, CUT, MA, MBK, PER, BYTES, SECS, LOST, N };
	static const size_t off[N] = { offsetof(struct tv_run, mbps),
		offsetof(struct tv_run, kbits), offsetof(struct tv_run, loss),
		offsetof(struct tv_run, sent), offsetof(struct tv_run, cut),
		offsetof(struct tv_run, mails_a),
		offsetof(struct tv_run, mails_b),
		offsetof(struct tv_run, per_mail),
		offsetof(struct tv_run, mail_bytes),
		offsetof(struct tv_run, secs),
		offsetof(struct tv_run, frames_lost) };
	struct bench_summary s[N], rs;
	const struct tv_variant *raw = NULL;
	double vs_raw = NAN;
	bool met;

	for (int k = 0; k < N; k++)
		tv_sum(x, v, off[k], &s[k]);
	if (v->kind == TV_FERRY && !isnan(s[BYTES].median))
		raw = tv_nearest_raw(x, v, s[BYTES].median);
	if (raw != NULL) {
		tv_sum(x, raw, offsetof(struct tv_run, mbps), &rs);
		vs_raw = s[MB].median / rs.median;
	}
	/* Loss and cuts are judged by the worst run. */
	met =
	    s[MB].median >= TV_GOAL_MBPS && s[LOSS].max == 0 && s[CUT].max == 0;
	printf("%-7s %-22s | %7.3f [%7.3f-%7.3f] | %8.0f | %7.0f %3.0f | "
	       "%6.3f | %6.0f | %6.0f | %7.1f | %9.0f | %6.1f | %5.0f | %6.3f "
	       "%-14s| %s\n",
	    sb_inbox_name[v->inbox], v->label, s[MB].median, s[MB].min,
	    s[MB].max, s[KB].median, s[SENT].median, s[CUT].max * 100,
	    s[LOSS].max, s[MA].median, s[MBK].median, s[PER].median,
	    s[BYTES].median, s[SECS].median, s[LOST].median, vs_raw,
	    raw != NULL ? raw->label + 4 : "",
	    v->kind != TV_FERRY ? ""
	        : met           ? "met"
	                        : "MISSED");
	if (f != NULL)
		fprintf(f,
		    "%s,%s,%s,%llu,%u,%.4f,%.4f,%.4f,%.1f,%.0f,%.0f,%.4f,%.4f,"
		    "%.0f,%.0f,%.2f,%.0f,%.3f,%.0f,%.4f,%s\n",
		    sb_inbox_name[v->inbox],
		    v->kind == TV_FERRY ? "ferry" : "raw", v->label,
		    (unsigned long long)v->param, x->o.reps, s[MB].median,
		    s[MB].min, s[MB].max, s[KB].median, s[SENT].median,
		    s[CUT].max, s[LOSS].median, s[LOSS].max, s[MA].median,
		    s[MBK].median, s[PER].median, s[BYTES].median,
		    s[SECS].median, s[LOST].median, vs_raw,
		    v->kind != TV_FERRY ? ""
		        : met           ? "met"
		                        : "MISSED");
}

/* The bar chart's data: the paper's bars, then every variant: label,
 * kbit/s median, min, max, and a colour class (0 paper, 1 ferry, 2 raw,
 * +2 for FIFO inboxes). */
static void
tv_write_dat(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig8.dat",
	    "# label kbit/s {median,min,max} class");

	if (f == NULL)
		return;
	for (size_t i = 0; i < sizeof(tv_paper) / sizeof(tv_paper[0]); i++)
		fprintf(f, "\"%s\" %.1f %.1f %.1f 0\n", tv_paper[i].label,
		    tv_paper[i].kbits, tv_paper[i].kbits, tv_paper[i].kbits);
	for (unsigned i = 0; i < x->tput->n; i++) {
		const struct tv_variant *v = &x->tput->v[i];
		struct bench_summary s;

		if (!v->done)
			continue;
		tv_sum(x, v, offsetof(struct tv_run, kbits), &s);
		fprintf(f, "\"%s (%s)\" %.1f %.1f %.1f %d\n", v->label,
		    sb_inbox_name[v->inbox], s.median, s.min, s.max,
		    (v->kind == TV_FERRY ? 1 : 2) +
		        (v->inbox == SB_FIFO ? 2 : 0));
	}
	(void)fclose(f);
}

/* Received-over-time of each ferry variant's median run. */
static void
tv_write_series(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig8_series.csv",
	    "inbox,variant,ms,fraction");

	if (f == NULL)
		return;
	for (unsigned i = 0; i < x->tput->n; i++) {
		const struct tv_variant *v = &x->tput->v[i];
		const struct tv_run *best;

		if (!v->done || v->kind != TV_FERRY)
			continue;
		best = sb_runs_median(v->runs, sizeof(*v->runs), x->o.reps,
		    offsetof(struct tv_run, secs));
		for (unsigned k = 0; best != NULL && k <= TV_SERIES; k++)
			if (!isnan(best->series[k][0]))
				fprintf(f, "%s,%s,%.3f,%.5f\n",
				    sb_inbox_name[v->inbox], v->label + 6,
				    best->series[k][0], best->series[k][1]);
		fprintf(f, "\n\n");
	}
	(void)fclose(f);
}

void
sb_tput_report(struct smtp_bench *x)
{
	FILE *f = bench_csv_open(&x->o, "smtp_fig8_summary.csv",
	    "inbox,kind,variant,param,reps,payload_MBps,MBps_min,MBps_max,"
	    "kbitps,sent,cut_any,undelivered_pct,undelivered_max,mails_a,"
	    "mails_b,msgs_per_mail,mail_bytes,secs,frames_lost_a,vs_raw,"
	    "goal_2MBps");

	printf("\nThroughput over SMTP (seed 004 Fig. 8): %llu messages of "
	       "%u bytes per ferry run, sent as fast as ferry_send() "
	       "returns; median of %u runs [min-max]\n",
	    (unsigned long long)x->so.tput_count, x->so.tput_size, x->o.reps);
	printf("%-7s %-22s | %-25s | %8s | %-11s | %6s | %6s | %6s | %7s | "
	       "%9s | %6s | %5s | %-21s| %s\n",
	    "inbox", "variant", "payload MB/s", "kbit/s", "sent cut%", "undlv%",
	    "mailsA", "mailsB", "msg/mail", "B/mail", "secs", "lost",
	    "vs raw (mails)", "goal 2 MB/s");
	for (unsigned i = 0; i < x->tput->n; i++)
		if (x->tput->v[i].done)
			tv_report_row(x, &x->tput->v[i], f);
	printf("(payload: message bytes received (ferry) or the raw mails' "
	       "payload before base64, over first send to last arrival; "
	       "sent: messages ferry_send() took (raw: mails), cut%%: runs "
	       "the %u s limit stopped; undlv%%: the worst run's share of "
	       "those that never arrived (queued when it ended, or lost); "
	       "mailsA: mails daemon A sent, mailsB: mails B sent back "
	       "(ACKs); msg/mail: A's core.msg_out per mail; lost: A's "
	       "core.frames_lost; vs raw: over the raw path with the "
	       "payload nearest ferry's mails. Paper: 6 kbit/s with 1200-"
	       "byte mails, 13 with 12000-byte mails, 51 with a RAM-disk "
	       "spool; MTA caps raised to %u mails per hour)\n",
	    x->so.limit_s, SMTP_ENV_CAP);
	if (f != NULL)
		(void)fclose(f);
	tv_write_dat(x);
	tv_write_series(x);
}

void
sb_tput_free(struct smtp_bench *x)
{
	if (x->tput == NULL)
		return;
	for (unsigned i = 0; i < x->tput->n; i++)
		free(x->tput->v[i].runs);
	free(x->tput);
	x->tput = NULL;
}
