/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's report (see dht_report.h): a table per part with medians
 * and min-max of the runs, the issue's goals judged beside the figures,
 * CSV files of every run and summary, and the data plot_dht.gp draws.
 */
#include "dht_report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const db_op_name[DB_OPS] = { "put", "get", "lget" };

/* A number for gnuplot's data files: "?" (missing) for NaN. */
static const char *
db_dat_num(double v, char *buf, size_t len)
{
	if (isnan(v))
		(void)snprintf(buf, len, "?");
	else
		(void)snprintf(buf, len, "%.4f", v);
	return buf;
}

static const char *
db_size_name(size_t size, char *buf, size_t len)
{
	if (size % (1024 * 1024) == 0)
		(void)snprintf(buf, len, "%zu MiB", size / (1024 * 1024));
	else if (size % 1024 == 0)
		(void)snprintf(buf, len, "%zu KiB", size / 1024);
	else
		(void)snprintf(buf, len, "%zu B", size);
	return buf;
}

int
db_report_open(struct db_ctx *x)
{
	x->ops_csv = bench_csv_open(&x->o, "dht_latency_ops.csv",
	    "delay_ms,size,run,op,j,origin,hops,path,ms,status");
	x->lat_csv = bench_csv_open(&x->o, "dht_latency_runs.csv",
	    "delay_ms,size,run,op,p50_ms,p99_ms,hops,failed,completed,"
	    "hops_total,requests_out,timeouts,retries,rate_limited,"
	    "answers_direct,answers_routed,frames_lost,put_to_get_p50_ms,"
	    "load1");
	x->tput_csv = bench_csv_open(&x->o, "dht_throughput_runs.csv",
	    "size,replication,op,run,jobs,ok,failed,first_error,secs,"
	    "blocks_s,mb_s,mb_s_x_r,p50_ms,p99_ms,cpu,completed,hops_total,"
	    "timeouts,retries,rate_limited,no_route,stored,store_failed,"
	    "frames_lost,load1");
	return x->ops_csv != NULL && x->lat_csv != NULL && x->tput_csv != NULL
	    ? 0
	    : -EIO;
}

void
db_report_close(struct db_ctx *x)
{
	FILE **f[] = { &x->ops_csv, &x->lat_csv, &x->tput_csv };

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (*f[i] != NULL) {
			(void)fclose(*f[i]);
			*f[i] = NULL;
		}
}

static void
db_lat_csv_row(struct db_ctx *x, unsigned di, unsigned si, unsigned rep, int g)
{
	const struct db_lat_run *run = &x->lat[di][si][rep];
	const struct db_lat_phase *ph = &run->op[g];
	const struct dbnet_counts *c = &ph->c;

	fprintf(x->lat_csv,
	    "%u,%zu,%u,%s,%.4f,%.4f,%.3f,%u,%llu,%llu,%llu,%llu,%llu,%llu,"
	    "%llu,%llu,%llu,%.4f,%.2f\n",
	    x->p.delays[di], x->p.sizes[si], rep + 1, db_op_name[g], ph->p50,
	    ph->p99, ph->hops, ph->fail, (unsigned long long)c->completed,
	    (unsigned long long)c->hops, (unsigned long long)c->requests_out,
	    (unsigned long long)c->timeouts, (unsigned long long)c->retries,
	    (unsigned long long)c->rate_limited, (unsigned long long)c->direct,
	    (unsigned long long)c->routed, (unsigned long long)c->frames_lost,
	    run->p2g_p50, db_load());
}

void
db_report_lat_run(struct db_ctx *x, unsigned di, unsigned si, unsigned rep)
{
	const struct db_lat_run *run = &x->lat[di][si][rep];
	char sz[32];

	x->lat_n[di][si] = rep + 1;
	for (int g = 0; g < DB_OPS; g++) {
		const struct db_lat_phase *ph = &run->op[g];

		if (ph->n == 0)
			continue;
		if (x->lat_csv != NULL)
			db_lat_csv_row(x, di, si, rep, g);
		bench_log(&x->o,
		    "latency %u ms %s run %u: %s p50 %.2f p99 %.2f hops %.2f "
		    "(%u failed; direct %u, routed %u); timeouts %llu "
		    "retries %llu rate-limited %llu",
		    x->p.delays[di],
		    db_size_name(x->p.sizes[si], sz, sizeof(sz)), rep + 1,
		    db_op_name[g], ph->p50, ph->p99, ph->hops, ph->fail,
		    ph->cls[DB_CLASS_DIRECT].n, ph->cls[DB_CLASS_ROUTED].n,
		    (unsigned long long)ph->c.timeouts,
		    (unsigned long long)ph->c.retries,
		    (unsigned long long)ph->c.rate_limited);
	}
}

void
db_report_tput_run(struct db_ctx *x, unsigned si, unsigned ri, int g,
    unsigned rep)
{
	const struct db_tput_run *t = &x->tput[si][ri][g][rep];
	unsigned repl = x->p.repls[ri];
	char sz[32];

	x->tput_n[si][ri][g] = rep + 1;
	if (x->tput_csv != NULL)
		fprintf(x->tput_csv,
		    "%zu,%u,%s,%u,%u,%llu,%llu,%d,%.4f,%.1f,%.3f,%.3f,%.3f,"
		    "%.3f,%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,"
		    "%.2f\n",
		    x->p.sizes[si], repl, db_op_name[g], rep + 1, x->p.jobs,
		    (unsigned long long)t->ok, (unsigned long long)t->failed,
		    t->first_error, t->secs, t->blocks_s, t->mb_s,
		    g ? NAN : t->mb_s * repl, t->p50_ms, t->p99_ms, t->cpu,
		    (unsigned long long)t->c.completed,
		    (unsigned long long)t->c.hops,
		    (unsigned long long)t->c.timeouts,
		    (unsigned long long)t->c.retries,
		    (unsigned long long)t->c.rate_limited,
		    (unsigned long long)t->c.no_route,
		    (unsigned long long)t->c.stored,
		    (unsigned long long)t->c.store_failed,
		    (unsigned long long)t->c.frames_lost, t->load);
	bench_log(&x->o,
	    "throughput %s %s R=%u run %u: %.0f blocks/s, %.2f MB/s in "
	    "%.2f s, p50 %.2f ms, %llu failed (first: %s), cpu %.0f %%, "
	    "timeouts %llu, rate-limited %llu",
	    db_op_name[g], db_size_name(x->p.sizes[si], sz, sizeof(sz)), repl,
	    rep + 1, t->blocks_s, t->mb_s, t->secs, t->p50_ms,
	    (unsigned long long)t->failed,
	    t->failed ? strerror(-t->first_error) : "-", 100 * t->cpu,
	    (unsigned long long)t->c.timeouts,
	    (unsigned long long)t->c.rate_limited);
}

/* ---- latency ---------------------------------------------------------- */

/* A row of the latency table: every successful request of an operation
 * (h < 0), or those of one class (DB_CLASS_*: a lookup length, or the
 * way the answers came). */
struct db_lat_row {
	struct bench_summary p50, p99, hops, n;
	unsigned failed;
};

static const struct db_lat_class *
db_lat_class_of(const struct db_lat_run *r, int g, int h,
    struct db_lat_class *all)
{
	const struct db_lat_phase *ph = &r->op[g];

	if (h >= 0)
		return &ph->cls[h];
	all->n = ph->n > ph->fail ? 1 : 0;
	all->p50 = ph->p50;
	all->p99 = ph->p99;
	all->hops = ph->hops;
	return all;
}

/* Medians over the runs of delay di and size si; a run without requests
 * of that lookup length leaves it out. */
static void
db_lat_row(const struct db_ctx *x, unsigned di, unsigned si, int g, int h,
    struct db_lat_row *ret)
{
	double p50[DB_MAX_REPS], p99[DB_MAX_REPS], hops[DB_MAX_REPS];
	double n[DB_MAX_REPS];
	unsigned runs = x->lat_n[di][si];

	ret->failed = 0;
	for (unsigned i = 0; i < runs; i++) {
		const struct db_lat_run *r = &x->lat[di][si][i];
		struct db_lat_class all;
		const struct db_lat_class *c = db_lat_class_of(r, g, h, &all);

		p50[i] = c->n > 0 ? c->p50 : NAN;
		p99[i] = c->n > 0 ? c->p99 : NAN;
		hops[i] = c->n > 0 ? c->hops : NAN;
		n[i] = h >= 0 ? c->n : NAN;
		ret->failed += r->op[g].fail;
	}
	bench_summarize(p50, runs, &ret->p50);
	bench_summarize(p99, runs, &ret->p99);
	bench_summarize(hops, runs, &ret->hops);
	bench_summarize(n, runs, &ret->n);
}

static double
db_lat_p2g(const struct db_ctx *x, unsigned di, unsigned si,
    struct bench_summary *ret)
{
	double v[DB_MAX_REPS];

	for (unsigned i = 0; i < x->lat_n[di][si]; i++)
		v[i] = x->lat[di][si][i].p2g_p50;
	bench_summarize(v, x->lat_n[di][si], ret);
	return ret->median;
}

static void
db_goal(FILE *f, const char *part, const char *what, double value,
    double target, bool lower_is_better)
{
	bool ok = lower_is_better ? value <= target : value >= target;

	if (f != NULL)
		fprintf(f, "%s,%s,%.4f,%.4f,%s\n", part, what, value, target,
		    isnan(value) ? "n/a"
		        : ok     ? "met"
		                 : "MISSED");
}

static const char *
db_verdict(double value, double target, bool lower_is_better)
{
	if (isnan(value))
		return "n/a";
	return (lower_is_better ? value <= target : value >= target) ? "met"
	                                                             : "MISSED";
}

/* The goals of a row: p50 (and p99) targets, a label, NaN if none. */
static void
db_lat_goal(const struct db_ctx *x, unsigned di, int g, int h,
    const struct db_lat_row *row, double *t50, double *t99, char *label,
    size_t len)
{
	unsigned delay = x->p.delays[di];

	*t50 = *t99 = NAN;
	label[0] = '\0';
	if (delay > 0) {
		*t50 = (row->hops.median + 1) * delay * DB_GOAL_DELAY_SLACK;
		(void)snprintf(label, len, "p50<=%.1f (%.2f+1)x%u", *t50,
		    row->hops.median, delay);
	} else if (h >= 0 || g == DB_OP_LGET) {
		return; /* the OpenDHT figures are for all requests, of the
			 * network's members */
	} else if (g == DB_OP_PUT) {
		*t50 = DB_GOAL_PUT_P50_MS;
		*t99 = DB_GOAL_PUT_P99_MS;
		(void)snprintf(label, len, "p50<=%.1f p99<=%.1f", *t50, *t99);
	} else {
		*t50 = DB_GOAL_GET_P50_MS;
		(void)snprintf(label, len, "p50<=%.1f", *t50);
	}
}

static void
db_lat_print_row(struct db_ctx *x, unsigned di, unsigned si, int g, int h,
    FILE *sum, FILE *goals, FILE *dat)
{
	unsigned delay = x->p.delays[di];
	char sz[32], hn[8], label[64], what[96];
	const char *v50 = "", *v99 = "";
	struct db_lat_row row;
	double t50, t99;

	db_lat_row(x, di, si, g, h, &row);
	if (row.p50.n == 0)
		return;
	db_size_name(x->p.sizes[si], sz, sizeof(sz));
	if (h < 0)
		(void)snprintf(hn, sizeof(hn), "all");
	else if (h == DB_CLASS_DIRECT)
		(void)snprintf(hn, sizeof(hn), "dir");
	else if (h == DB_CLASS_ROUTED)
		(void)snprintf(hn, sizeof(hn), "rtd");
	else
		(void)snprintf(hn, sizeof(hn),
		    h == DB_HOP_CLASSES - 1 ? "%d+" : "%d", h);
	db_lat_goal(x, di, g, h, &row, &t50, &t99, label, sizeof(label));
	if (!isnan(t50))
		v50 = db_verdict(row.p50.median, t50, true);
	if (!isnan(t99))
		v99 = db_verdict(row.p99.median, t99, true);
	printf("%-7s %-4s %-4s| %7.2f [%7.2f-%7.2f] | %7.2f [%7.2f-%7.2f] | "
	       "%4.2f | %4.0f | %-23s| %s%s%s\n",
	    h < 0 ? sz : "", h < 0 ? db_op_name[g] : "", hn, row.p50.median,
	    row.p50.min, row.p50.max, row.p99.median, row.p99.min, row.p99.max,
	    row.hops.median, h < 0 ? (double)row.failed : row.n.median, label,
	    v50, *v99 ? ", p99 " : "", v99);
	if (sum != NULL)
		fprintf(sum,
		    "%u,%zu,%s,%s,%u,%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f,"
		    "%u,%.4f,%.4f,%s,%s,%.2f,%.2f\n",
		    delay, x->p.sizes[si], db_op_name[g], hn, row.p50.n,
		    row.n.median, row.p50.median, row.p50.min, row.p50.max,
		    row.p99.median, row.p99.min, row.p99.max, row.hops.median,
		    row.failed, t50, t99, v50, v99, x->lat_load[di][0],
		    x->lat_load[di][1]);
	(void)snprintf(what, sizeof(what), "%s %u ms %s hops %s p50",
	    db_op_name[g], delay, sz, hn);
	if (!isnan(t50))
		db_goal(goals, "latency", what, row.p50.median, t50, true);
	(void)snprintf(what, sizeof(what), "%s %u ms %s hops %s p99",
	    db_op_name[g], delay, sz, hn);
	if (!isnan(t99))
		db_goal(goals, "latency", what, row.p99.median, t99, true);
	/* The plot: every request, and by the way answers came. */
	if (dat != NULL && (h < 0 || h >= DB_HOP_CLASSES)) {
		char goal[32];

		db_dat_num(t50, goal, sizeof(goal));
		fprintf(dat, "\"%s %s%s%s\" %.4f %.4f %.4f %.4f %.4f %.4f %s\n",
		    sz, db_op_name[g], h < 0 ? "" : " ", h < 0 ? "" : hn,
		    row.p50.median, row.p50.min, row.p50.max, row.p99.median,
		    row.p99.min, row.p99.max, goal);
	}
}

/* The rows of one delay: put and get of every size, each for all its
 * requests and by lookup length; then put-to-get. */
static void
db_lat_table(struct db_ctx *x, unsigned di, FILE *sum, FILE *goals, FILE *dat)
{
	printf("%-7s %-4s %-4s| %-25s | %-25s | %4s | %4s | %-23s| %s\n",
	    "size", "op", "hops", "p50 ms", "p99 ms", "hops", "fail", "goal",
	    "verdict");
	for (unsigned si = 0; si < x->p.n_sizes; si++) {
		struct bench_summary p2g;
		char sz[32], what[64];

		if (x->lat_n[di][si] == 0)
			continue;
		for (int g = 0; g < DB_OPS; g++)
			for (int h = -1; h < DB_CLASSES; h++)
				if (x->lat[di][si][0].op[g].n > 0)
					db_lat_print_row(x, di, si, g, h, sum,
					    goals, dat);
		if (x->p.delays[di] > 0)
			continue;
		db_size_name(x->p.sizes[si], sz, sizeof(sz));
		db_lat_p2g(x, di, si, &p2g);
		printf("%-7s %-4s %-4s| %7.2f [%7.2f-%7.2f] | %-25s | %4s | "
		       "%4s | %-23s| %s (%.1fx below GNUnet)\n",
		    sz, "p2g", "all", p2g.median, p2g.min, p2g.max, "", "", "",
		    "p50<=5 (GNUnet: 20)",
		    db_verdict(p2g.median, DB_GOAL_P2G_MS, true),
		    DB_GNUNET_P2G_MS / p2g.median);
		(void)snprintf(what, sizeof(what), "put-to-get 0 ms %s p50",
		    sz);
		db_goal(goals, "latency", what, p2g.median, DB_GOAL_P2G_MS,
		    true);
	}
}

static void
db_report_latency(struct db_ctx *x, FILE *goals)
{
	FILE *sum = bench_csv_open(&x->o, "dht_latency_summary.csv",
	    "delay_ms,size,op,hops_class,runs,requests,p50_ms,p50_min,"
	    "p50_max,p99_ms,p99_min,p99_max,hops,failed,goal_p50_ms,"
	    "goal_p99_ms,p50_verdict,p99_verdict,load_before,load_after");
	char repl[32];

	if (x->p.lat_repl > 0)
		(void)snprintf(repl, sizeof(repl), "%u", x->p.lat_repl);
	else
		(void)snprintf(repl, sizeof(repl), "the default (3)");
	for (unsigned di = 0; di < x->p.n_delays; di++) {
		char name[64];
		FILE *dat;

		if (x->lat_n[di][0] == 0)
			continue;
		(void)snprintf(name, sizeof(name), "dht_latency_%ums.dat",
		    x->p.delays[di]);
		dat = bench_csv_open(&x->o, name,
		    "# label p50 p50_min p50_max p99 p99_min p99_max goal_p50"
		    " (ms)");
		printf("\nDHT latency, %u daemons over %s: one request at "
		       "a time, %u PUTs then %u GETs per run and size, "
		       "replication %s; median [min-max] of %u runs "
		       "(load %.2f before, %.2f after)\n",
		    x->p.daemons, x->transport, x->p.ops, x->p.ops, repl,
		    x->lat_n[di][0], x->lat_load[di][0], x->lat_load[di][1]);
		if (x->p.delays[di] > 0)
			printf("one-way delay %u ms on every link ([testing] "
			       "DELAY); goal: p50 <= (hops + 1) x delay + "
			       "10 %%\n",
			    x->p.delays[di]);
		else
			printf("no emulated delay; goals: OpenDHT 2.4 (16 "
			       "dhtnodes on loopback: put p50 2.5 ms, p99 "
			       "4.9 ms; get p50 2.2 ms), and put-to-get far "
			       "below GNUnet's 20 ms\n");
		db_lat_table(x, di, sum, goals, dat);
		if (dat != NULL)
			(void)fclose(dat);
	}
	printf("(hops: mean lookup length of the requests, each measured as "
	       "its origin's dht.hops_total before and after it; rows 0, 1, "
	       "2+: the requests of that many hops, dir and rtd: those whose "
	       "answers all came straight from the peers that gave them, and "
	       "those with one or more back along the path (fail column: "
	       "requests per run); lget: GETs from leaves, daemons linked to "
	       "one member only, which the peers that answer cannot link to; "
	       "p2g: a block's PUT plus its GET from another member)\n");
	if (sum != NULL)
		(void)fclose(sum);
}

/* ---- throughput ------------------------------------------------------- */

enum db_tp_field { TF_BLOCKS, TF_MB, TF_P50, TF_P99, TF_CPU, TF_FAIL };

static void
db_tput_sum(const struct db_ctx *x, unsigned si, unsigned ri, int g,
    enum db_tp_field f, struct bench_summary *ret)
{
	double v[DB_MAX_REPS];
	unsigned n = x->tput_n[si][ri][g];

	for (unsigned i = 0; i < n; i++) {
		const struct db_tput_run *t = &x->tput[si][ri][g][i];

		v[i] = f == TF_BLOCKS ? t->blocks_s
		    : f == TF_MB      ? t->mb_s
		    : f == TF_P50     ? t->p50_ms
		    : f == TF_P99     ? t->p99_ms
		    : f == TF_CPU     ? t->cpu
		                      : (double)t->failed;
	}
	bench_summarize(v, n, ret);
}

static void
db_tput_row(struct db_ctx *x, unsigned si, unsigned ri, int g,
    const struct bench_summary *bulk, FILE *sum, FILE *goals, FILE *dat)
{
	struct bench_summary bl, mb, p50, p99, cpu, fail;
	unsigned repl = x->p.repls[ri];
	double xr, ratio = NAN;
	char sz[32], what[64], xrs[48];
	const char *v = "";

	db_tput_sum(x, si, ri, g, TF_BLOCKS, &bl);
	db_tput_sum(x, si, ri, g, TF_MB, &mb);
	db_tput_sum(x, si, ri, g, TF_P50, &p50);
	db_tput_sum(x, si, ri, g, TF_P99, &p99);
	db_tput_sum(x, si, ri, g, TF_CPU, &cpu);
	db_tput_sum(x, si, ri, g, TF_FAIL, &fail);
	db_size_name(x->p.sizes[si], sz, sizeof(sz));
	xr = mb.median * repl;
	if (g == 0 && bulk->n > 0) {
		ratio = xr / bulk->median;
		v = db_verdict(ratio, DB_GOAL_BULK_FRAC, false);
		(void)snprintf(what, sizeof(what), "put %s R=%u x R / bulk", sz,
		    repl);
		db_goal(goals, "throughput", what, ratio, DB_GOAL_BULK_FRAC,
		    false);
	}
	if (g == 0)
		(void)snprintf(xrs, sizeof(xrs), "%7.2f | %5.2f", xr, ratio);
	else
		(void)snprintf(xrs, sizeof(xrs), "%7s | %5s", "", "");
	printf("%-4s %-7s %2u | %8.0f [%6.0f-%6.0f] | %7.2f [%6.2f-%6.2f] "
	       "| %s | %6.1f %7.1f | %3.0f | %5.0f | %s\n",
	    db_op_name[g], sz, repl, bl.median, bl.min, bl.max, mb.median,
	    mb.min, mb.max, xrs, p50.median, p99.median, 100 * cpu.median,
	    fail.median, v);
	if (sum != NULL)
		fprintf(sum,
		    "%zu,%u,%s,%u,%u,%.1f,%.1f,%.1f,%.3f,%.3f,%.3f,%.3f,%.4f,"
		    "%.3f,%.3f,%.3f,%.0f,%s\n",
		    x->p.sizes[si], repl, db_op_name[g], bl.n, x->p.jobs,
		    bl.median, bl.min, bl.max, mb.median, mb.min, mb.max,
		    g == 0 ? xr : NAN, ratio, p50.median, p99.median,
		    cpu.median, fail.median, v);
	if (dat != NULL && g == 0)
		fprintf(dat, "\"%s R%u\" %.3f %.3f %.3f %.3f %.3f %.3f ", sz,
		    repl, xr, mb.min * repl, mb.max * repl, bl.median, bl.min,
		    bl.max);
	else if (dat != NULL)
		fprintf(dat, "%.3f %.3f %.3f %.3f %.3f %.3f %.3f\n", mb.median,
		    mb.min, mb.max, bl.median, bl.min, bl.max, bulk->median);
}

static void
db_report_throughput(struct db_ctx *x, FILE *goals)
{
	struct bench_summary bulk, loss;
	FILE *sum, *dat;

	bench_summarize(x->bulk, x->p.bulk_mib > 0 ? x->o.reps : 0, &bulk);
	bench_summarize(x->bulk_loss, x->p.bulk_mib > 0 ? x->o.reps : 0, &loss);
	sum = bench_csv_open(&x->o, "dht_throughput_summary.csv",
	    "size,replication,op,runs,jobs,blocks_s,blocks_s_min,"
	    "blocks_s_max,mb_s,mb_s_min,mb_s_max,mb_s_x_r,x_r_over_bulk,"
	    "p50_ms,p99_ms,cpu,failed,verdict");
	dat = bench_csv_open(&x->o, "dht_throughput.dat",
	    "# label put_mb_s_x_r min max put_blocks_s min max get_mb_s min "
	    "max get_blocks_s min max bulk_mb_s");
	printf("\nDHT throughput from one client through d0: %u requests in "
	       "flight (a thread and connection each), %u daemons over %s, "
	       "%u ms delay; median [min-max] of %u runs (load %.2f before, "
	       "%.2f after)\n",
	    x->p.jobs, x->p.daemons, x->transport, x->tput_delay,
	    x->tput_n[0][0][0], x->tput_load[0], x->tput_load[1]);
	printf("baseline, ferry's bulk link d0 -> d1 (64 KiB messages over "
	       "%s, %u MiB): %.1f MB/s [%.1f-%.1f], %.3f %% lost\n",
	    x->transport, x->p.bulk_mib, bulk.median, bulk.min, bulk.max,
	    loss.median);
	printf("goal: PUT goodput x R >= %.1f x bulk; MB/s: 10^6 bytes of "
	       "unique block data\n",
	    DB_GOAL_BULK_FRAC);
	printf("%-4s %-7s %2s | %-24s | %-23s | %7s | %5s | %6s %7s | %3s | "
	       "%5s | %s\n",
	    "op", "size", "R", "blocks/s", "MB/s", "MB/s xR", "/bulk", "p50 ms",
	    "p99 ms", "cpu", "fail", "verdict");
	for (unsigned si = 0; si < x->p.n_sizes; si++)
		for (unsigned ri = 0; ri < x->p.n_repls; ri++)
			for (int g = 0; g < 2; g++)
				if (x->tput_n[si][ri][g] > 0)
					db_tput_row(x, si, ri, g, &bulk, sum,
					    goals, dat);
	printf("(cpu: %% of all CPUs used by the %u daemons and the client "
	       "during the phase)\n",
	    x->p.daemons);
	if (sum != NULL)
		(void)fclose(sum);
	if (dat != NULL)
		(void)fclose(dat);
}

/* ---- memory ----------------------------------------------------------- */

static double
db_mib(unsigned long kib)
{
	return (double)kib / 1024;
}

/* The idle daemons of the first network, and the goal. */
static void
db_report_rss_idle(const struct db_rss *m, FILE *f, FILE *goals)
{
	double v[DB_MAX_DAEMONS];
	struct bench_summary idle;

	for (unsigned i = 0; i < m->idle_n; i++) {
		v[i] = (double)m->idle[i];
		if (f != NULL)
			fprintf(f, "idle,%u,0,%lu\n", i, m->idle[i]);
	}
	bench_summarize(v, m->idle_n, &idle);
	printf("  idle, %u daemons with full tables, %u ms delay: median "
	       "%.2f MiB [%.2f-%.2f]: %s\n",
	    m->idle_n, m->idle_delay, db_mib((unsigned long)idle.median),
	    db_mib((unsigned long)idle.min), db_mib((unsigned long)idle.max),
	    db_verdict(idle.max, DB_GOAL_IDLE_KIB, true));
	db_goal(goals, "memory", "idle RSS KiB (largest daemon)", idle.max,
	    DB_GOAL_IDLE_KIB, true);
}

/* The network's daemons after the throughput runs. */
static void
db_report_rss_after(const struct db_rss *m, unsigned n, FILE *f)
{
	unsigned long big = 0;
	unsigned most = 0;

	for (unsigned i = 0; i < n; i++) {
		if (m->after_blocks[i] > m->after_blocks[most])
			most = i;
		if (m->after[i] > big)
			big = m->after[i];
		if (f != NULL)
			fprintf(f, "after_throughput,%u,%llu,%lu\n", i,
			    (unsigned long long)m->after_blocks[i],
			    m->after[i]);
	}
	printf("  after the throughput runs: d%u holds the most, %llu "
	       "blocks, %.2f MiB; the largest RSS %.2f MiB\n",
	    most, (unsigned long long)m->after_blocks[most],
	    db_mib(m->after[most]), db_mib(big));
}

/* The daemon alone: idle, with many blocks, restarted with them. */
static void
db_report_rss_alone(const struct db_rss *m, FILE *f)
{
	printf("  one daemon alone (no peers; load %.2f before, %.2f after): "
	       "idle %.2f MiB\n",
	    m->load[0], m->load[1], db_mib(m->alone_idle));
	if (f != NULL)
		fprintf(f, "alone_idle,0,0,%lu\n", m->alone_idle);
	if (!m->many_done)
		return;
	printf("  with %llu blocks of 1 KiB put into it (%.0f blocks/s, %llu "
	       "failed): %.2f MiB, peak (VmHWM) %.2f MiB; restarted with "
	       "%llu blocks: %.2f MiB\n",
	    (unsigned long long)m->many_blocks, m->fill.blocks_s,
	    (unsigned long long)m->fill.failed, db_mib(m->many),
	    db_mib(m->many_hwm), (unsigned long long)m->restarted_blocks,
	    db_mib(m->restarted));
	if (f != NULL)
		fprintf(f,
		    "alone_many,0,%llu,%lu\nalone_many_hwm,0,%llu,%lu\n"
		    "alone_restarted,0,%llu,%lu\n",
		    (unsigned long long)m->many_blocks, m->many,
		    (unsigned long long)m->many_blocks, m->many_hwm,
		    (unsigned long long)m->restarted_blocks, m->restarted);
}

static void
db_report_rss(struct db_ctx *x, FILE *goals)
{
	const struct db_rss *m = &x->rss;
	FILE *f =
	    bench_csv_open(&x->o, "dht_rss.csv", "what,daemon,blocks,rss_kib");

	printf("\nDHT memory (VmRSS; goal: idle <= 10 MB = %.2f MiB)\n",
	    DB_GOAL_IDLE_KIB / 1024);
	if (m->idle_n > 0)
		db_report_rss_idle(m, f, goals);
	if (m->after_done)
		db_report_rss_after(m, x->p.daemons, f);
	if (m->many_done || m->alone_idle > 0)
		db_report_rss_alone(m, f);
	if (f != NULL)
		(void)fclose(f);
}

void
db_report(struct db_ctx *x)
{
	FILE *goals = bench_csv_open(&x->o, "dht_goals.csv",
	    "part,what,value,target,verdict");

	if (x->p.do_lat)
		db_report_latency(x, goals);
	if (x->p.do_tput && x->tput_n[0][0][0] > 0)
		db_report_throughput(x, goals);
	if (x->p.do_rss)
		db_report_rss(x, goals);
	if (goals != NULL)
		(void)fclose(goals);
}
