/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht_cc's report (see cc_report.h): per run a CSV row and its
 * counters; at the end the tables of Fig. 4 and Fig. 5 (medians of the
 * repetitions with their minimum and maximum), whether the throughput
 * collapses (falls past its peak), issue 14's goals where the sweep
 * reaches them, and the data files of plot_dhtcc.gp.
 */
#include "cc_report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define CC_GOAL_HOLD  0.95 /* of the no-control peak at 3 x its load */
#define CC_GOAL_CROSS 0.80 /* of the no-cross-load rate at 15 % */

int
cc_report_open(struct cc_ctx *x)
{
	x->runs_csv = bench_csv_open(&x->o, "dhtcc_runs.csv",
	    "experiment,scheme,buffer,rate,cross,rep,issued,ok,achieved,"
	    "achieved_in_window,"
	    "offered,success,p50_ms,p99_ms,retx_pct,timeouts,no_route,"
	    "refused,other,first_other,paused_pct,late_ms,span_s,cpu,load");
	x->ctr_csv = bench_csv_open(&x->o, "dhtcc_counters.csv",
	    "experiment,scheme,buffer,rate,cross,rep,counter,delta");
	return x->runs_csv != NULL && x->ctr_csv != NULL ? 0 : -EIO;
}

void
cc_report_close(struct cc_ctx *x)
{
	if (x->runs_csv != NULL)
		(void)fclose(x->runs_csv);
	if (x->ctr_csv != NULL)
		(void)fclose(x->ctr_csv);
	x->runs_csv = x->ctr_csv = NULL;
}

void
cc_report_run(struct cc_ctx *x, unsigned si, int bi, unsigned ri, unsigned rep,
    const struct cc_run *r)
{
	const struct cc_opts *p = &x->p;
	double rate = bi < 0 ? p->rates[ri] : p->cross_rate;
	unsigned cross = bi < 0 ? 0 : p->cross[ri];
	unsigned buf = bi < 0 ? 0 : p->bufs[bi];
	int e = bi < 0 ? 1 : 2;

	if (bi < 0)
		x->fig4[si][ri][rep] = *r;
	else
		x->fig5[si][bi][ri][rep] = *r;
	bench_log(&x->o,
	    "exp %d %s buf %u rate %.0f cross %u%% rep %u: %.1f/s per peer "
	    "(%.1f while offered %.1f), %.1f %% ok, p50 %.0f ms, p99 %.0f ms, retx "
	    "%.2f %%, paused %.1f %%, load %.2f",
	    e, p->scheme[si], buf, rate, cross, rep + 1, r->tput, r->tput_win,
	    r->offered, 100 * r->success, r->p50_ms, r->p99_ms, r->retx_pct,
	    r->paused_pct, r->load);
	if (r->other > 0)
		bench_log(&x->o, "  %llu failed otherwise, the first: %s",
		    (unsigned long long)r->other, strerror(-r->first_other));
	if (x->runs_csv != NULL) {
		fprintf(x->runs_csv,
		    "%d,%s,%u,%.2f,%u,%u,%llu,%llu,%.3f,%.3f,%.3f,%.4f,%.2f,"
		    "%.2f,"
		    "%.3f,%llu,%llu,%llu,%llu,%d,%.2f,%.2f,%.3f,%.3f,%.2f\n",
		    e, p->scheme[si], buf, rate, cross, rep + 1,
		    (unsigned long long)r->issued, (unsigned long long)r->ok,
		    r->tput, r->tput_win, r->offered, r->success, r->p50_ms,
		    r->p99_ms, r->retx_pct, (unsigned long long)r->timeouts,
		    (unsigned long long)r->no_route,
		    (unsigned long long)r->refused,
		    (unsigned long long)r->other, r->first_other, r->paused_pct,
		    r->late_ms, r->span_s, r->cpu, r->load);
		(void)fflush(x->runs_csv);
	}
	for (unsigned j = 0; x->ctr_csv != NULL && j < r->ctr.n; j++)
		if (r->ctr.value[j] != 0)
			fprintf(x->ctr_csv, "%d,%s,%u,%.2f,%u,%u,%s,%llu\n", e,
			    p->scheme[si], buf, rate, cross, rep + 1,
			    r->ctr.name[j],
			    (unsigned long long)r->ctr.value[j]);
	if (x->ctr_csv != NULL)
		(void)fflush(x->ctr_csv);
}

/* The summary of field f over the runs of one point. */
enum cc_field {
	CC_TPUT,
	CC_TPUT_WIN,
	CC_OFFERED,
	CC_SUCCESS,
	CC_P50,
	CC_P99,
	CC_RETX,
	CC_PAUSED,
	CC_LATE,
	CC_CPU,
	CC_LOAD
};

static double
cc_field(const struct cc_run *r, enum cc_field f)
{
	switch (f) {
	case CC_TPUT:
		return r->tput;
	case CC_TPUT_WIN:
		return r->tput_win;
	case CC_OFFERED:
		return r->offered;
	case CC_SUCCESS:
		return 100 * r->success;
	case CC_P50:
		return r->p50_ms;
	case CC_P99:
		return r->p99_ms;
	case CC_RETX:
		return r->retx_pct;
	case CC_PAUSED:
		return r->paused_pct;
	case CC_LATE:
		return r->late_ms;
	case CC_CPU:
		return 100 * r->cpu;
	default:
		return r->load;
	}
}

static void
cc_sum(const struct cc_run *runs, unsigned reps, enum cc_field f,
    struct bench_summary *ret)
{
	double v[CC_MAX_REPS] = { 0 };

	for (unsigned i = 0; i < reps; i++)
		v[i] = runs[i].done ? cc_field(&runs[i], f) : NAN;
	bench_summarize(v, reps, ret);
}

static double
cc_med(const struct cc_run *runs, unsigned reps, enum cc_field f)
{
	struct bench_summary s;

	cc_sum(runs, reps, f, &s);
	return s.n > 0 ? s.median : NAN;
}

/* failures of the runs of a point, summed: timeouts, no route, refused
 * by the generator, others. */
static void
cc_fails(const struct cc_run *runs, unsigned reps, uint64_t ret[4])
{
	memset(ret, 0, 4 * sizeof(ret[0]));
	for (unsigned i = 0; i < reps; i++) {
		ret[0] += runs[i].timeouts;
		ret[1] += runs[i].no_route;
		ret[2] += runs[i].refused;
		ret[3] += runs[i].other;
	}
}

static void
cc_row(const struct cc_run *runs, unsigned reps)
{
	struct bench_summary t;
	uint64_t f[4];

	cc_sum(runs, reps, CC_TPUT, &t);
	cc_fails(runs, reps, f);
	printf("%7.1f [%6.1f,%6.1f] %7.1f %6.1f %8.0f %8.0f %6.2f %7llu "
	       "%7llu %6llu %5llu %7.0f %4.0f %5.2f\n",
	    t.median, t.min, t.max, cc_med(runs, reps, CC_TPUT_WIN),
	    cc_med(runs, reps, CC_SUCCESS), cc_med(runs, reps, CC_P50),
	    cc_med(runs, reps, CC_P99), cc_med(runs, reps, CC_RETX),
	    (unsigned long long)f[0], (unsigned long long)f[1],
	    (unsigned long long)f[2], (unsigned long long)f[3],
	    cc_med(runs, reps, CC_LATE), cc_med(runs, reps, CC_CPU),
	    cc_med(runs, reps, CC_LOAD));
}

static const char cc_cols[] =
    "achieved/s [  min,   max] in-load  ok %  p50 ms  p99 ms retx %  "
    "tmout noroute refused other late ms cpu%  load";

/* The counters that moved in run r, on one line. */
static void
cc_print_ctrs(const char *what, const struct cc_run *r)
{
	printf("    %s:", what);
	for (unsigned j = 0; j < r->ctr.n; j++)
		if (r->ctr.value[j] != 0)
			printf(" %s=%llu", r->ctr.name[j],
			    (unsigned long long)r->ctr.value[j]);
	printf("\n");
}

/* The peak of scheme si's medians: its rate index. */
static int
cc_peak(const struct cc_ctx *x, unsigned si, double *ret_tput)
{
	int best = -1;

	*ret_tput = NAN;
	for (unsigned ri = 0; ri < x->p.n_rates; ri++) {
		double t = cc_med(x->fig4[si][ri], x->o.reps, CC_TPUT);

		if (!isnan(t) && (best < 0 || t > *ret_tput)) {
			best = (int)ri;
			*ret_tput = t;
		}
	}
	return best;
}

/* The same judged on the requests that ended while the load was
 * offered: a short run (-L small) ends with its slowest answers, and
 * the rate to the last of them can fall where the network did not. */
static void
cc_verdict_win(const struct cc_ctx *x, unsigned si)
{
	const struct cc_opts *p = &x->p;
	unsigned lr = p->n_rates - 1, pk = 0;
	double peak = NAN, last;

	for (unsigned ri = 0; ri < p->n_rates; ri++) {
		double t = cc_med(x->fig4[si][ri], x->o.reps, CC_TPUT_WIN);

		if (!isnan(t) && (isnan(peak) || t > peak)) {
			peak = t;
			pk = ri;
		}
	}
	if (isnan(peak))
		return;
	last = cc_med(x->fig4[si][lr], x->o.reps, CC_TPUT_WIN);
	printf("    while offered: peak %.1f/s at offered %.0f; at offered "
	       "%.0f: %.1f/s, %.0f %% of it: %s\n",
	    peak, p->rates[pk], p->rates[lr], last, 100 * last / peak,
	    pk < lr && last < CC_GOAL_HOLD * peak ? "COLLAPSE" : "no collapse");
}

static void
cc_verdicts(const struct cc_ctx *x)
{
	const struct cc_opts *p = &x->p;
	double none_peak = NAN, none_rate = NAN;

	for (unsigned si = 0; si < p->n_schemes; si++) {
		double peak, last;
		int pk = cc_peak(x, si, &peak);
		unsigned lr = p->n_rates - 1;

		if (pk < 0)
			continue;
		last = cc_med(x->fig4[si][lr], x->o.reps, CC_TPUT);
		printf("  %s: peak %.1f/s per peer (%.0f for all) at "
		       "offered %.0f; at offered %.0f: %.1f/s, %.0f %% of the "
		       "peak: %s\n",
		    p->scheme[si], peak, peak * p->daemons, p->rates[pk],
		    p->rates[lr], last, 100 * last / peak,
		    (unsigned)pk < lr && last < CC_GOAL_HOLD * peak
		        ? "COLLAPSE (falls past its peak)"
		        : "no collapse");
		cc_verdict_win(x, si);
		cc_print_ctrs("counters at the peak, run 1",
		    &x->fig4[si][pk][0]);
		if ((unsigned)pk != lr)
			cc_print_ctrs("counters at the highest load, run 1",
			    &x->fig4[si][lr][0]);
		if (strcmp(p->scheme[si], "none") == 0) {
			none_peak = peak;
			none_rate = p->rates[pk];
		}
	}
	if (isnan(none_peak))
		return;
	for (unsigned si = 0; si < p->n_schemes; si++) {
		double peak;

		if (strcmp(p->scheme[si], "none") == 0 ||
		    cc_peak(x, si, &peak) < 0)
			continue;
		printf("  goal %s: peak %.1f = %.2f x none's (goal cscc >= "
		       "0.75, bpcc >= 0.95)",
		    p->scheme[si], peak, peak / none_peak);
		for (unsigned ri = 0; ri < p->n_rates; ri++) {
			double t;

			if (p->rates[ri] < 3 * none_rate)
				continue;
			t = cc_med(x->fig4[si][ri], x->o.reps, CC_TPUT);
			printf("; at offered %.0f (>= 3 x %.0f): %.1f/s = %.0f "
			       "%% of none's peak (goal >= %.0f %%)",
			    p->rates[ri], none_rate, t, 100 * t / none_peak,
			    100 * CC_GOAL_HOLD);
			break;
		}
		printf("\n");
	}
}

static void
cc_table4(const struct cc_ctx *x)
{
	const struct cc_opts *p = &x->p;

	printf("\nExperiment 1 (seed 002 Fig. 4): %u peers, %u %s each, "
	       "offered open-loop (%s), %u runs: median [min, max]\n",
	    p->daemons, p->lookups,
	    p->emulate ? "lookups (FIND)" : "requests (50/50 PUT/GET)",
	    p->poisson ? "Poisson" : "evenly spaced", x->o.reps);
	printf("%-8s %8s %s\n", "scheme", "offered", cc_cols);
	for (unsigned si = 0; si < p->n_schemes; si++)
		for (unsigned ri = 0; ri < p->n_rates; ri++) {
			printf("%-8s %8.1f ", p->scheme[si],
			    cc_med(x->fig4[si][ri], x->o.reps, CC_OFFERED));
			cc_row(x->fig4[si][ri], x->o.reps);
		}
	cc_verdicts(x);
}

static void
cc_table5(const struct cc_ctx *x)
{
	const struct cc_opts *p = &x->p;

	printf("\nExperiment 2 (seed 002 Fig. 5): %u peers, offered %.0f/s "
	       "per peer, %u %s each, pauses of mean %u ms (SIGSTOP), %u "
	       "runs\n",
	    p->daemons, p->cross_rate, p->lookups,
	    p->emulate ? "lookups" : "requests", p->pause_ms, x->o.reps);
	printf("%-8s %6s %5s %7s %s\n", "scheme", "buffer", "cross", "paused",
	    cc_cols);
	for (unsigned si = 0; si < p->n_schemes; si++)
		for (unsigned bi = 0; bi < p->n_bufs; bi++) {
			double t0 = NAN, tl = NAN;

			for (unsigned ci = 0; ci < p->n_cross; ci++) {
				const struct cc_run *r = x->fig5[si][bi][ci];
				double t = cc_med(r, x->o.reps, CC_TPUT);

				if (p->cross[ci] == 0)
					t0 = t;
				tl = t;
				printf("%-8s %6u %4u%% %6.1f%% ", p->scheme[si],
				    p->bufs[bi], p->cross[ci],
				    cc_med(r, x->o.reps, CC_PAUSED));
				cc_row(r, x->o.reps);
			}
			if (!isnan(t0) && p->n_cross > 1)
				printf("  %s, buffer %u: at %u %% cross-load "
				       "%.0f %% of its rate without (goal for "
				       "bpcc at 15 %%, 400: >= %.0f %%)\n",
				    p->scheme[si], p->bufs[bi],
				    p->cross[p->n_cross - 1], 100 * tl / t0,
				    100 * CC_GOAL_CROSS);
		}
}

/* Gnuplot data: one block per line of the figure, its title first. */
static void
cc_plot_data(const struct cc_ctx *x)
{
	const struct cc_opts *p = &x->p;
	struct bench_summary s;
	FILE *f;

	if (p->do_collapse &&
	    (f = bench_csv_open(&x->o, "dhtcc_fig4.dat",
	         "# offered achieved min max achieved-while-offered, per "
	         "peer a second")) != NULL) {
		for (unsigned si = 0; si < p->n_schemes; si++) {
			fprintf(f, "%s\"%s\"\n", si > 0 ? "\n\n" : "",
			    p->scheme[si]);
			for (unsigned ri = 0; ri < p->n_rates; ri++) {
				cc_sum(x->fig4[si][ri], x->o.reps, CC_TPUT, &s);
				if (s.n > 0)
					fprintf(f, "%.2f %.3f %.3f %.3f %.3f\n",
					    p->rates[ri], s.median, s.min,
					    s.max,
					    cc_med(x->fig4[si][ri], x->o.reps,
					        CC_TPUT_WIN));
			}
		}
		(void)fclose(f);
	}
	if (p->do_cross &&
	    (f = bench_csv_open(&x->o, "dhtcc_fig5.dat",
	         "# cross-load% achieved min max, per peer a second")) !=
	        NULL) {
		unsigned blk = 0;

		for (unsigned si = 0; si < p->n_schemes; si++)
			for (unsigned bi = 0; bi < p->n_bufs; bi++) {
				fprintf(f, "%s\"%s, %u msgs\"\n",
				    blk++ > 0 ? "\n\n" : "", p->scheme[si],
				    p->bufs[bi]);
				for (unsigned ci = 0; ci < p->n_cross; ci++) {
					cc_sum(x->fig5[si][bi][ci], x->o.reps,
					    CC_TPUT, &s);
					if (s.n > 0)
						fprintf(f,
						    "%u %.3f %.3f %.3f\n",
						    p->cross[ci], s.median,
						    s.min, s.max);
				}
			}
		(void)fclose(f);
	}
}

void
cc_report(struct cc_ctx *x)
{
	const struct cc_opts *p = &x->p;

	printf("bench_dht_cc: %u daemons over %s, %s; K %u; schemes",
	    p->daemons, x->transport,
	    p->emulate ? "emulated links" : "plain loopback (no emulation)",
	    p->k);
	for (unsigned si = 0; si < p->n_schemes; si++)
		printf(" %s", p->scheme[si]);
	if (p->emulate)
		printf("; each peer sends at %u kbit/s, %u ms one-way", p->kbit,
		    p->delay_ms);
	printf("; load average at the start %.2f, at the end %.2f; networks "
	       "started again for tables that lost entries: %u\n",
	    x->load0, db_load(), x->restarts);
	if (p->do_collapse)
		cc_table4(x);
	if (p->do_cross)
		cc_table5(x);
	cc_plot_data(x);
	(void)fflush(stdout);
}
