/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The soak's figures (see soak.h): RSS and peer samples, the distribution
 * of reconnect times, delivery per interval, the RSS slope per daemon,
 * exit statuses and what the daemons' logs say; CSV files for plots and a
 * summary with the verdict.
 */
#include "soak.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "procstat.h"

#define SOAK_LOST_SHOWN  20 /* lost messages listed in the summary */
#define SOAK_LINES_SHOWN 10 /* offending log lines listed */

/* What fails a soak when a daemon's log says it. */
static const char *const soak_bad[] = {
	"AddressSanitizer",
	"LeakSanitizer",
	"UndefinedBehaviorSanitizer",
	"runtime error:",
	"Assertion `",
	"assertion failed",
	" ERROR ",
	" CRIT ",
	" ALERT ",
	" EMERG ",
	NULL,
};

const char *const soak_watch[] = {
	"core.units_bad",
	"core.msg_bad",
	"core.enc_bad",
	"core.enc_replay",
	"core.enc_unknown",
	"core.kx_bad",
	"core.kx_stale",
	"core.kx_limited",
	"core.kx_refused",
	"core.pong_limited",
	"core.validation_failures",
	"core.path_failures",
	"core.frames_lost",
	"core.frag_retx",
	"core.reasm_dropped",
	"core.send_queue_full",
	"core.send_no_link",
	"core.key_changes",
	"service.send_blocked",
	"service.recv_dropped",
	"udp.drop_table_full",
	"udp.sessions_evicted",
	"tcp.refused",
	NULL,
};

/* One counter of a daemon, 0 if absent or it did not answer. */
static uint64_t
soak_stat(struct ferry_client *c, const char *name)
{
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	if (ferry_stats(c, &st, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	return v;
}

void
soak_sample_all(struct soak *s, uint64_t now_ms)
{
	for (unsigned i = 0; i < s->o.n; i++) {
		struct soak_daemon *d = &s->d[i];
		struct ferry_peer_info *pi;
		struct soak_sample *sm;
		size_t n = 0;
		uint32_t rss;

		/* A process that has not answered yet may not even be
		 * ferryd yet (exec): its RSS means nothing. */
		if (d->state == SOAK_DOWN || d->state == SOAK_STARTING ||
		    d->hd->pid <= 0)
			continue;
		rss = (uint32_t)procstat_kib(d->hd->pid, "VmRSS");
		if (rss == 0)
			continue;
		if (soak_grow((void **)&s->samples, &s->cap_samples,
		        s->n_samples, sizeof(*s->samples)) < 0)
			return;
		sm = &s->samples[s->n_samples++];
		sm->t_ms =
		    now_ms > s->t0_ms ? (uint32_t)(now_ms - s->t0_ms) : 0;
		sm->daemon = (uint16_t)i;
		sm->instance = (uint16_t)d->instance;
		sm->rss_kib = rss;
		sm->state = (uint8_t)d->state;
		sm->peers = -1;
		sm->queue = 0;
		if (d->tx != NULL && ferry_peers(d->tx, &pi, &n) == 0) {
			sm->peers = (int16_t)n;
			ferry_peers_free(pi);
		}
		if (d->tx != NULL)
			sm->queue = soak_stat(d->tx, "core.queue_bytes");
	}
}

static int
soak_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The p-quantile (0..1) of n sorted values. */
static uint64_t
soak_quantile(const uint64_t *v, size_t n, double p)
{
	size_t i;

	if (n == 0)
		return 0;
	i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static FILE *
soak_open_out(const struct soak *s, const char *name)
{
	char path[PATH_MAX];

	(void)snprintf(path, sizeof(path), "%s/%s", s->o.out_dir, name);
	return fopen(path, "w");
}

/* Prints to the summary and notes a failed criterion. */
static void soak_fail(struct soak *s, FILE *out, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
soak_fail(struct soak *s, FILE *out, const char *fmt, ...)
{
	va_list ap;

	s->failed = true;
	fprintf(out, "  FAIL: ");
	va_start(ap, fmt);
	vfprintf(out, fmt, ap);
	va_end(ap);
	fprintf(out, "\n");
}

static void
soak_dist(FILE *out, const char *what, uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), soak_cmp_u64);
	fprintf(out,
	    "  %s (s), n=%zu: min %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
	    what, n, (double)soak_quantile(v, n, 0) / 1000.0,
	    (double)soak_quantile(v, n, 0.5) / 1000.0,
	    (double)soak_quantile(v, n, 0.9) / 1000.0,
	    (double)soak_quantile(v, n, 0.99) / 1000.0,
	    (double)soak_quantile(v, n, 1) / 1000.0);
}

static void
soak_report_reconnects(struct soak *s, FILE *out)
{
	uint64_t *rt = calloc(s->n_rec + 1, sizeof(*rt));
	uint64_t *ready = calloc(s->n_rec + 1, sizeof(*ready));
	FILE *csv = soak_open_out(s, "reconnects.csv");
	size_t n = 0, slow = 0, never = 0;
	unsigned kills = 0;

	for (unsigned i = 0; i < s->o.n; i++)
		kills += s->d[i].kills;
	fprintf(out,
	    "\nKills and restarts\n  kills %u, restarts %zu, "
	    "crashes (exits the soak did not cause) %u\n",
	    kills, s->n_rec, s->n_crashes);
	if (csv != NULL)
		fprintf(csv,
		    "daemon,instance,killed_s,down_s,ready_s,"
		    "reconnect_s,peers,wanted,ok\n");
	for (size_t i = 0; rt != NULL && ready != NULL && i < s->n_rec; i++) {
		const struct soak_reconnect *rc = &s->rec[i];
		uint64_t t = rc->done_ms - rc->started_ms;

		ready[i] = rc->ready_ms - rc->started_ms;
		if (rc->done_ms == 0)
			never++;
		else
			rt[n++] = t;
		if (rc->done_ms != 0 && t > s->o.reconnect_limit_ms)
			slow++;
		if (csv != NULL)
			fprintf(csv, "%u,%u,%.3f,%.3f,%.3f,%.3f,%u,%u,%d\n",
			    rc->daemon, rc->instance, soak_t(s, rc->killed_ms),
			    (double)(rc->started_ms - rc->killed_ms) / 1000.0,
			    (double)ready[i] / 1000.0,
			    rc->done_ms != 0 ? (double)t / 1000.0 : -1.0,
			    rc->have, rc->want,
			    rc->done_ms != 0 && t <= s->o.reconnect_limit_ms);
	}
	if (csv != NULL)
		(void)fclose(csv);
	if (rt != NULL && ready != NULL) {
		soak_dist(out,
		    "reconnect, from exec to a link with every "
		    "steady daemon",
		    rt, n);
		soak_dist(out, "socket ready, from exec", ready, s->n_rec);
	}
	free(rt);
	free(ready);
	if (s->n_crashes > 0)
		soak_fail(s, out, "%u daemon exit(s) nobody caused",
		    s->n_crashes);
	if (slow > 0)
		soak_fail(s, out, "%zu reconnect(s) took longer than %.1f s",
		    slow, (double)s->o.reconnect_limit_ms / 1000.0);
	if (never > 0)
		soak_fail(s, out,
		    "%zu restarted daemon(s) never got all links "
		    "back (see events.log)",
		    never);
}

struct soak_iv {
	unsigned sent, eligible, delivered, late, corrupt, refused;
};

/* Seconds d had been up (since the end of its last reconnection) at
 * ms; negative if it has run since before the run phase. */
static double
soak_up_for(const struct soak_daemon *d, uint64_t ms)
{
	uint64_t last = 0;

	for (size_t i = 0; i < d->n_spans; i++)
		if (d->spans[i].to_ms <= ms)
			last = d->spans[i].to_ms;
	return last == 0 ? -1.0 : (double)(ms - last) / 1000.0;
}

static const char *
soak_status_name(const struct soak_msg *m)
{
	switch (m->status) {
	case SOAK_MSG_REFUSED:
		return "refused";
	case SOAK_MSG_CORRUPT:
		return "corrupt";
	case SOAK_MSG_DELIVERED:
		return "late";
	default:
		return "lost";
	}
}

/* Every lost message in lost.csv, the first few in the summary. */
static void
soak_list_lost(struct soak *s, FILE *out)
{
	FILE *csv = soak_open_out(s, "lost.csv");
	unsigned shown = 0;

	if (csv != NULL)
		fprintf(csv, "seq,sent_s,src,dst,len,status,latency_s,"
		    "src_up_s,dst_up_s\n");
	for (size_t i = 0; i < s->n_msgs; i++) {
		const struct soak_msg *m = &s->msgs[i];
		bool on_time = m->status == SOAK_MSG_DELIVERED &&
		    m->recv_ms - m->sent_ms <= s->o.msg_timeout_ms;
		double lat = m->recv_ms != 0
		    ? (double)(m->recv_ms - m->sent_ms) / 1000.0
		    : -1.0;
		double src_up = soak_up_for(&s->d[m->src], m->sent_ms);
		double dst_up = soak_up_for(&s->d[m->dst], m->sent_ms);

		if (on_time || !soak_msg_eligible(s, m))
			continue;
		if (csv != NULL)
			fprintf(csv, "%zu,%.3f,%u,%u,%u,%s,%.3f,%.1f,%.1f\n", i,
			    soak_t(s, m->sent_ms), m->src, m->dst, m->len,
			    soak_status_name(m), lat, src_up, dst_up);
		if (shown++ >= SOAK_LOST_SHOWN)
			continue;
		fprintf(out, "    #%zu at %.3f s: d%u -> d%u, %u bytes, %s",
		    i, soak_t(s, m->sent_ms), m->src, m->dst, m->len,
		    soak_status_name(m));
		if (m->status == SOAK_MSG_REFUSED)
			fprintf(out, " (%s)", strerror(-m->send_err));
		if (m->status == SOAK_MSG_DELIVERED)
			fprintf(out, " by %.1f s", lat);
		fprintf(out, "; ends up for %.0f / %.0f s\n",
		    src_up < 0 ? soak_t(s, m->sent_ms) : src_up,
		    dst_up < 0 ? soak_t(s, m->sent_ms) : dst_up);
	}
	if (csv != NULL)
		(void)fclose(csv);
}

static void
soak_report_delivery(struct soak *s, FILE *out)
{
	size_t n_iv = s->o.duration_s / s->o.interval_s + 2, below = 0;
	struct soak_iv *iv = calloc(n_iv, sizeof(*iv)), all = { 0 };
	uint64_t *lat_small = calloc(s->n_msgs + 1, sizeof(uint64_t));
	uint64_t *lat_big = calloc(s->n_msgs + 1, sizeof(uint64_t));
	uint64_t *ratios = calloc(n_iv, sizeof(uint64_t));
	size_t n_small = 0, n_big = 0, n_ratios = 0, n_big_sent = 0;
	FILE *csv = soak_open_out(s, "delivery.csv");
	double overall;

	if (iv == NULL || lat_small == NULL || lat_big == NULL ||
	    ratios == NULL) {
		s->failed = true;
		goto out;
	}
	for (size_t i = 0; i < s->n_msgs; i++) {
		const struct soak_msg *m = &s->msgs[i];
		size_t k = (size_t)((m->sent_ms - s->t0_ms) /
		    (s->o.interval_s * 1000ULL));
		struct soak_iv *v = &iv[k < n_iv ? k : n_iv - 1];
		uint64_t lat = m->recv_ms - m->sent_ms;

		v->sent++;
		n_big_sent += m->len >= s->o.big_min;
		if (!soak_msg_eligible(s, m))
			continue;
		v->eligible++;
		if (m->status == SOAK_MSG_REFUSED)
			v->refused++;
		else if (m->status == SOAK_MSG_CORRUPT)
			v->corrupt++;
		else if (m->status == SOAK_MSG_DELIVERED &&
		    lat > s->o.msg_timeout_ms)
			v->late++;
		else if (m->status == SOAK_MSG_DELIVERED)
			v->delivered++;
		if (m->status != SOAK_MSG_DELIVERED)
			continue;
		if (m->len >= s->o.big_min)
			lat_big[n_big++] = lat;
		else
			lat_small[n_small++] = lat;
	}
	if (csv != NULL)
		fprintf(csv,
		    "start_s,sent,eligible,delivered,late,corrupt,"
		    "refused,lost,ratio\n");
	for (size_t k = 0; k < n_iv; k++) {
		struct soak_iv *v = &iv[k];

		all.sent += v->sent;
		all.eligible += v->eligible;
		all.delivered += v->delivered;
		all.late += v->late;
		all.corrupt += v->corrupt;
		all.refused += v->refused;
		if (v->eligible == 0)
			continue;
		ratios[n_ratios++] = v->delivered * 1000000ULL / v->eligible;
		below += v->delivered < v->eligible;
		if (csv != NULL)
			fprintf(csv, "%zu,%u,%u,%u,%u,%u,%u,%u,%.5f\n",
			    k * s->o.interval_s, v->sent, v->eligible,
			    v->delivered, v->late, v->corrupt, v->refused,
			    v->eligible - v->delivered,
			    (double)v->delivered / v->eligible);
	}
	qsort(ratios, n_ratios, sizeof(*ratios), soak_cmp_u64);
	overall = all.eligible > 0 ? (double)all.delivered / all.eligible : 0;
	fprintf(out,
	    "\nDelivery (counted when both ends stayed up for the message's "
	    "%.0f s, or it arrived)\n"
	    "  sent %u (%zu large), eligible %u, delivered %u, lost %u "
	    "(refused %u, late %u, corrupt %u), duplicates %llu, strays %llu\n"
	    "  overall %.5f; per %u-s interval: min %.5f, median %.5f; "
	    "intervals below 1: %zu of %zu\n",
	    (double)s->o.msg_timeout_ms / 1000.0, all.sent, n_big_sent,
	    all.eligible, all.delivered, all.eligible - all.delivered,
	    all.refused, all.late, all.corrupt, (unsigned long long)s->dups,
	    (unsigned long long)s->strays, overall, s->o.interval_s,
	    (double)soak_quantile(ratios, n_ratios, 0) / 1e6,
	    (double)soak_quantile(ratios, n_ratios, 0.5) / 1e6, below,
	    n_ratios);
	soak_dist(out, "latency of small messages", lat_small, n_small);
	soak_dist(out, "latency of large messages", lat_big, n_big);
	if (all.eligible > all.delivered) {
		fprintf(out, "  lost messages (first %d, all in lost.csv; how "
		    "long each end had been up):\n", SOAK_LOST_SHOWN);
		soak_list_lost(s, out);
	}
	if (all.eligible == 0 || overall < s->o.min_delivery)
		soak_fail(s, out, "delivery %.5f is below %.5f", overall,
		    s->o.min_delivery);
	if (all.corrupt > 0 || s->dups > 0 || s->strays > 0)
		soak_fail(s, out, "corrupt, duplicate or stray messages");
out:
	if (csv != NULL)
		(void)fclose(csv);
	free(iv);
	free(lat_small);
	free(lat_big);
	free(ratios);
}

struct soak_fit {
	double sxx, sxy;      /* within-instance sums */
	unsigned n;           /* samples used */
	uint32_t first, last; /* RSS of the first and last sample */
	uint32_t max;         /* the largest in the fitted half */
};

/* Slope of RSS against time over the second half of the run for one
 * daemon: one line per instance with a common slope (each restart has
 * its own intercept), skipping each restarted instance's warm-up. */
static void
soak_fit_daemon(const struct soak *s, unsigned daemon, struct soak_fit *f)
{
	uint32_t half = s->o.duration_s * 500, warm = s->o.warmup_s * 1000;

	memset(f, 0, sizeof(*f));
	for (unsigned inst = 0; inst <= s->d[daemon].instance; inst++) {
		double st = 0, sr = 0, t0 = -1;
		unsigned n = 0;

		for (size_t i = 0; i < s->n_samples; i++) {
			const struct soak_sample *sm = &s->samples[i];

			if (sm->daemon != daemon || sm->instance != inst)
				continue;
			if (t0 < 0)
				t0 = inst == 0 ? -1e9 : sm->t_ms;
			if (sm->t_ms < half || sm->t_ms < t0 + warm)
				continue;
			st += sm->t_ms;
			sr += sm->rss_kib;
			n++;
		}
		if (n < 2)
			continue;
		st /= n;
		sr /= n;
		for (size_t i = 0; i < s->n_samples; i++) {
			const struct soak_sample *sm = &s->samples[i];

			if (sm->daemon != daemon || sm->instance != inst ||
			    sm->t_ms < half || sm->t_ms < t0 + warm)
				continue;
			f->sxx += (sm->t_ms - st) * (sm->t_ms - st);
			f->sxy += (sm->t_ms - st) * (sm->rss_kib - sr);
			if (sm->rss_kib > f->max)
				f->max = sm->rss_kib;
		}
		f->n += n;
	}
	for (size_t i = 0; i < s->n_samples; i++) {
		if (s->samples[i].daemon != daemon)
			continue;
		if (f->first == 0)
			f->first = s->samples[i].rss_kib;
		f->last = s->samples[i].rss_kib;
	}
}

/* rss.dat for gnuplot: one block per daemon (its index), a blank line
 * where a restart breaks its line. */
static void
soak_write_dat(const struct soak *s)
{
	FILE *f = soak_open_out(s, "rss.dat");

	if (f == NULL)
		return;
	for (unsigned d = 0; d < s->o.n; d++) {
		int inst = -1;

		fprintf(f, "# d%u: t_s rss_mib peers\n", d);
		for (size_t i = 0; i < s->n_samples; i++) {
			const struct soak_sample *sm = &s->samples[i];

			if (sm->daemon != d)
				continue;
			if (inst >= 0 && sm->instance != inst)
				fprintf(f, "\n");
			inst = sm->instance;
			fprintf(f, "%.3f %.3f %d\n", sm->t_ms / 1000.0,
			    sm->rss_kib / 1024.0, sm->peers);
		}
		fprintf(f, "\n\n");
	}
	(void)fclose(f);
}

static void
soak_report_rss(struct soak *s, FILE *out)
{
	FILE *csv = soak_open_out(s, "rss.csv");

	if (csv != NULL) {
		fprintf(csv, "t_s,daemon,instance,state,rss_kib,peers,"
		    "queue_bytes\n");
		for (size_t i = 0; i < s->n_samples; i++) {
			const struct soak_sample *sm = &s->samples[i];

			fprintf(csv, "%.3f,%u,%u,%u,%u,%d,%llu\n",
			    sm->t_ms / 1000.0, sm->daemon, sm->instance,
			    sm->state, sm->rss_kib, sm->peers,
			    (unsigned long long)sm->queue);
		}
		(void)fclose(csv);
	}
	soak_write_dat(s);
	fprintf(out,
	    "\nRSS (KiB); slope of a linear fit over the second half, one "
	    "intercept per\ninstance, the first %u s of a restarted one "
	    "left out\n"
	    "  daemon  killed  first    last     max(2nd half)  "
	    "slope KiB/min  samples\n",
	    s->o.warmup_s);
	for (unsigned i = 0; i < s->o.n; i++) {
		struct soak_fit f;
		double slope;

		soak_fit_daemon(s, i, &f);
		slope = f.sxx > 0 ? f.sxy / f.sxx * 60000.0 : 0;
		if (s->d[i].stable)
			fprintf(out, "  d%-2u     never   ", i);
		else
			fprintf(out, "  d%-2u     %-6u  ", i, s->d[i].kills);
		fprintf(out, "%-8u %-8u %-14u ", f.first, f.last, f.max);
		if (f.sxx > 0)
			fprintf(out, "%+-14.1f %u\n", slope, f.n);
		else
			fprintf(out, "%-14s %u\n", "n/a", f.n);
		if (s->d[i].stable && s->o.max_slope >= 0 && f.sxx > 0 &&
		    slope > s->o.max_slope)
			soak_fail(s, out, "d%u grows by %.1f KiB/min (> %.1f)",
			    i, slope, s->o.max_slope);
	}
}

/* Copies d's log to logs/d<i>.log and counts its bad and warning lines. */
static void
soak_scan_log(struct soak *s, unsigned i, FILE *out, unsigned *ret_bad,
    unsigned *ret_warn, unsigned *shown)
{
	char *log = harness_daemon_log(s->d[i].hd), *line, *next;
	char name[64];
	FILE *f;

	*ret_bad = *ret_warn = 0;
	if (log == NULL)
		return;
	(void)snprintf(name, sizeof(name), "logs/d%u.log", i);
	f = soak_open_out(s, name);
	if (f != NULL) {
		fputs(log, f);
		(void)fclose(f);
	}
	for (line = log; *line != '\0'; line = next) {
		bool bad = false;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		for (size_t k = 0; soak_bad[k] != NULL && !bad; k++)
			bad = strstr(line, soak_bad[k]) != NULL;
		if (bad)
			(*ret_bad)++;
		else if (strstr(line, " WARN ") != NULL)
			(*ret_warn)++;
		if ((bad || strstr(line, " WARN ") != NULL) &&
		    (*shown)++ < SOAK_LINES_SHOWN)
			fprintf(out, "    d%u: %.200s\n", i, line);
	}
	free(log);
}

static void
soak_report_exits(struct soak *s, FILE *out)
{
	unsigned bad = 0, warn = 0, shown = 0, nonzero = 0;
	char dir[PATH_MAX];

	fprintf(out, "\nExit status after the final SIGTERM:");
	for (unsigned i = 0; i < s->o.n; i++)
		if (s->exit_status[i] != 0) {
			fprintf(out, " d%u=%d", i, s->exit_status[i]);
			nonzero++;
		}
	fprintf(out, nonzero == 0 ? " 0 for all\n" : "\n");
	(void)snprintf(dir, sizeof(dir), "%s/logs", s->o.out_dir);
	(void)mkdir(dir, 0755);
	fprintf(out, "Logs (copied to logs/):\n");
	for (unsigned i = 0; i < s->o.n; i++) {
		unsigned b, w;

		soak_scan_log(s, i, out, &b, &w, &shown);
		bad += b;
		warn += w;
	}
	fprintf(out, "  %u error or sanitizer line(s), %u warning(s)\n", bad,
	    warn);
	if (nonzero > 0)
		soak_fail(s, out, "%u daemon(s) did not exit with 0", nonzero);
	if (bad > 0)
		soak_fail(s, out, "errors or sanitizer reports in the logs");
}

void
soak_report(struct soak *s)
{
	char *text = NULL;
	size_t len = 0;
	double load[3] = { 0, 0, 0 };
	FILE *out = open_memstream(&text, &len);
	FILE *f;

	if (out == NULL)
		return;
	(void)getloadavg(load, 3);
	fprintf(out,
	    "ferry soak%s%s: %u daemons (%u never killed), %u s, "
	    "seed %llu\n  ferryd: %s\n  kill every %.1f-%.1f s, down for "
	    "%.1f-%.1f s; %u small msg/s, a large one every %.1f s;\n"
	    "  KX_RATE_PER_SOURCE %u (0: default)\n"
	    "  full mesh at the start after %.1f s; load average at the end "
	    "%.2f %.2f %.2f\n",
	    *s->o.label != '\0' ? " - " : "", s->o.label, s->o.n, s->o.stable,
	    s->o.duration_s, (unsigned long long)s->o.seed,
	    harness_ferryd_path(), s->o.kill_min_ms / 1000.0,
	    s->o.kill_max_ms / 1000.0, s->o.down_min_ms / 1000.0,
	    s->o.down_max_ms / 1000.0, s->o.small_per_s,
	    s->o.big_every_ms / 1000.0, s->o.per_source,
	    (double)s->mesh_ms / 1000.0, load[0], load[1], load[2]);
	if (s->t0_ms != 0) {
		soak_report_reconnects(s, out);
		soak_report_delivery(s, out);
		soak_report_rss(s, out);
	}
	fprintf(out,
	    "\nCounters summed over the daemons at the end (a "
	    "restarted daemon's since\nits last start; all in counters.csv):"
	    "\n ");
	for (size_t w = 0, col = 1; soak_watch[w] != NULL; w++) {
		char item[96];
		int n = snprintf(item, sizeof(item), " %s %llu", soak_watch[w],
		    (unsigned long long)s->watch[w]);

		if (col + (size_t)n > 78) {
			fprintf(out, "\n ");
			col = 1;
		}
		fputs(item, out);
		col += (size_t)n;
	}
	fprintf(out, "\n");
	soak_report_exits(s, out);
	fprintf(out, "\nVerdict: %s\n", s->failed ? "FAIL" : "PASS");
	(void)fclose(out);
	fputs(text, stdout);
	f = soak_open_out(s, "summary.txt");
	if (f != NULL) {
		fputs(text, f);
		(void)fclose(f);
	}
	free(text);
}
