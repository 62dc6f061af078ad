/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht_cc's load (see cc_bench.h): open loop. Each peer's requests
 * fall due at the offered rate, evenly spaced (a random phase per peer)
 * or with exponential gaps (-P), and each is sent at its due time on one
 * of the peer's client connections with room (libferry's asynchronous
 * requests, up to 64 in flight on one), whether or not the earlier ones
 * have ended: a slow network does not slow the offered load down, as it
 * would with a closed loop. One thread, epoll over every connection.
 * Cross-load (seed 002, 3.2): each peer is stopped with SIGSTOP for
 * exponential times of mean pause_ms, with running times between them
 * whose mean makes the stopped fraction cfg->cross.
 */
#include "cc_bench.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define CC_SWEEP_NS  (200ull * 1000 * 1000) /* ends timeouts, writes */
#define CC_CONNS_MAX 128  /* per peer; ferryd serves 256 clients */
#define CC_KEYS      4096 /* stored blocks the GETs of putget pick from */
#define CC_START_NS  (100ull * 1000 * 1000)

/* One client connection of a peer and the requests in flight on it. */
struct cc_conn {
	struct ferry_client *c;
	unsigned peer;
	unsigned n; /* in flight */
	uint32_t req_id[FERRY_DHT_ASYNC_MAX];
	uint32_t idx[FERRY_DHT_ASYNC_MAX]; /* into cc_load.due */
};

/* One peer's load and its pauses. */
struct cc_peer {
	unsigned conn0, n_conn, rr; /* its connections, the next to try */
	unsigned issued;            /* requests sent or refused */
	uint64_t next_ns;           /* the next due time */
	bool paused;
	uint64_t toggle_ns; /* the next SIGSTOP or SIGCONT; 0: none */
	uint64_t paused_since, paused_ns;
};

struct cc_load {
	const struct dbnet *net;
	const struct cc_load_cfg *cfg;
	struct cc_conn *conn;
	unsigned n_conn;
	struct cc_peer peer[DB_MAX_DAEMONS];
	int ep;
	uint64_t rng;
	uint64_t t0;
	uint64_t *due; /* per request: due time, ns after t0 */
	double *ms;    /* per successful request: its latency */
	uint64_t *end; /* and when it ended, ns after t0 */
	uint64_t n_ok, in_flight, last_ok_ns;
	struct ferry_dht_key keys[CC_KEYS]; /* putget: blocks stored */
	unsigned n_keys;
	uint8_t *block;
	struct cc_run *ret;
};

/* xorshift64*: the load's own random numbers. */
static uint64_t
cc_rand(struct cc_load *x)
{
	x->rng ^= x->rng >> 12;
	x->rng ^= x->rng << 25;
	x->rng ^= x->rng >> 27;
	return x->rng * 0x2545f4914f6cdd1dull;
}

/* Uniform in (0, 1]. */
static double
cc_unit(struct cc_load *x)
{
	return ((double)(cc_rand(x) >> 11) + 1.0) / 9007199254740992.0;
}

/* An exponential time of mean mean_ns. */
static uint64_t
cc_exp_ns(struct cc_load *x, double mean_ns)
{
	return (uint64_t)(-log(cc_unit(x)) * mean_ns);
}

static uint64_t
cc_gap_ns(struct cc_load *x)
{
	double mean = 1e9 / x->cfg->rate;

	return x->cfg->poisson ? cc_exp_ns(x, mean) : (uint64_t)mean;
}

/* The mean running time between pauses that makes the paused fraction
 * cfg->cross. */
static double
cc_run_mean_ns(const struct cc_load *x)
{
	double p = (double)x->cfg->pause_ms * 1e6;

	return p * (1.0 - x->cfg->cross) / x->cfg->cross;
}

/* Sends request idx of peer p on one of its connections with room. */
static void
cc_issue(struct cc_load *x, unsigned p, uint32_t idx)
{
	struct cc_peer *pe = &x->peer[p];
	struct ferry_dht_key key;
	struct cc_conn *cn = NULL;
	uint32_t req_id;
	int r;

	for (unsigned k = 0; k < pe->n_conn && cn == NULL; k++) {
		struct cc_conn *t = &x->conn[pe->conn0 + pe->rr];

		pe->rr = (pe->rr + 1) % pe->n_conn;
		if (t->n < FERRY_DHT_ASYNC_MAX)
			cn = t;
	}
	if (cn == NULL) {
		x->ret->refused++;
		return;
	}
	if (x->cfg->putget && (idx % 2 == 0 || x->n_keys == 0)) {
		uint64_t u = ((uint64_t)p << 32) | idx;

		memcpy(x->block, &x->rng, 8);
		memcpy(x->block + 8, &u, 8);
		r = ferry_dht_put_start(cn->c, x->block, x->cfg->block, 1, 0,
		    &req_id);
	} else if (x->cfg->putget) {
		key = x->keys[cc_rand(x) % x->n_keys];
		r = ferry_dht_get_start(cn->c, &key, &req_id);
	} else {
		for (size_t i = 0; i < sizeof(key.bytes); i += 8) {
			uint64_t v = cc_rand(x);

			memcpy(key.bytes + i, &v, 8);
		}
		r = ferry_dht_find_start(cn->c, &key, 1, &req_id);
	}
	if (r < 0) {
		x->ret->other++;
		if (x->ret->first_other == 0)
			x->ret->first_other = r;
		return;
	}
	cn->req_id[cn->n] = req_id;
	cn->idx[cn->n] = idx;
	cn->n++;
	x->in_flight++;
}

/* A request of cn ended. */
static void
cc_ended(struct cc_load *x, struct cc_conn *cn, const struct ferry_dht_end *e)
{
	uint64_t now = bench_now_ns() - x->t0;
	unsigned k;

	for (k = 0; k < cn->n && cn->req_id[k] != e->req_id; k++)
		;
	if (k == cn->n)
		return; /* not ours: cannot happen, libferry names them */
	if (e->status == 0) {
		x->end[x->n_ok] = now;
		x->ms[x->n_ok++] = (double)(now - x->due[cn->idx[k]]) / 1e6;
		x->last_ok_ns = now;
		if (e->op == FERRY_C_DHT_PUT) {
			x->keys[x->n_keys < CC_KEYS ? x->n_keys++
			                            : cc_rand(x) % CC_KEYS] =
			    e->key;
		}
	} else if (e->status == -ETIMEDOUT) {
		x->ret->timeouts++;
	} else if (e->status == -EHOSTUNREACH) {
		x->ret->no_route++;
	} else {
		x->ret->other++;
		if (x->ret->first_other == 0)
			x->ret->first_other = e->status;
	}
	cn->n--;
	cn->req_id[k] = cn->req_id[cn->n];
	cn->idx[k] = cn->idx[cn->n];
	x->in_flight--;
}

/* Takes every end that has come on cn, and writes what waits. */
static void
cc_drain(struct cc_load *x, struct cc_conn *cn)
{
	struct ferry_dht_end e;

	while (cn->n > 0 && ferry_dht_next(cn->c, 0, &e) == 0) {
		cc_ended(x, cn, &e);
		ferry_dht_end_free(&e);
	}
}

/* Sends the requests that are due; the next due time of all in *next. */
static void
cc_issue_due(struct cc_load *x, uint64_t now, uint64_t *next)
{
	unsigned n = x->net->n, lookups = x->cfg->lookups;

	for (unsigned p = 0; p < n; p++) {
		struct cc_peer *pe = &x->peer[p];

		while (pe->issued < lookups && pe->next_ns <= now) {
			uint32_t idx = p * lookups + pe->issued;
			double late = (double)(now - pe->next_ns) / 1e6;

			if (late > x->ret->late_ms)
				x->ret->late_ms = late;
			x->due[idx] = pe->next_ns - x->t0;
			cc_issue(x, p, idx);
			pe->issued++;
			pe->next_ns += cc_gap_ns(x);
		}
		if (pe->issued < lookups && pe->next_ns < *next)
			*next = pe->next_ns;
	}
}

/* Stops and starts the peers as their times come (cross-load). */
static void
cc_cross(struct cc_load *x, uint64_t now, uint64_t *next)
{
	for (unsigned p = 0; p < x->net->n; p++) {
		struct cc_peer *pe = &x->peer[p];

		if (pe->toggle_ns == 0)
			continue;
		if (pe->toggle_ns <= now) {
			pe->paused = !pe->paused;
			(void)kill(x->net->d[p]->pid,
			    pe->paused ? SIGSTOP : SIGCONT);
			if (pe->paused)
				pe->paused_since = now;
			else
				pe->paused_ns += now - pe->paused_since;
			pe->toggle_ns = now +
			    cc_exp_ns(x,
			        pe->paused ? (double)x->cfg->pause_ms * 1e6
			                   : cc_run_mean_ns(x));
		}
		if (pe->toggle_ns < *next)
			*next = pe->toggle_ns;
	}
}

/* The load is all sent: every peer runs again, for the answers. */
static void
cc_cross_end(struct cc_load *x, uint64_t now)
{
	for (unsigned p = 0; p < x->net->n; p++) {
		struct cc_peer *pe = &x->peer[p];

		if (pe->paused) {
			(void)kill(x->net->d[p]->pid, SIGCONT);
			pe->paused_ns += now - pe->paused_since;
			pe->paused = false;
		}
		pe->toggle_ns = 0;
	}
}

static int
cc_connect(struct cc_load *x)
{
	double secs = (double)(x->cfg->client_ms + 5000) / 1000.0;
	unsigned per =
	    (unsigned)ceil(x->cfg->rate * secs / FERRY_DHT_ASYNC_MAX) + 1;
	int r = 0;

	if (per > CC_CONNS_MAX)
		per = CC_CONNS_MAX;
	if (per > x->cfg->lookups / FERRY_DHT_ASYNC_MAX + 1)
		per = x->cfg->lookups / FERRY_DHT_ASYNC_MAX + 1;
	x->conn = calloc((size_t)per * x->net->n, sizeof(*x->conn));
	if (x->conn == NULL)
		return -ENOMEM;
	for (unsigned p = 0; r == 0 && p < x->net->n; p++) {
		x->peer[p].conn0 = x->n_conn;
		x->peer[p].n_conn = per;
		for (unsigned k = 0; r == 0 && k < per; k++) {
			struct cc_conn *cn = &x->conn[x->n_conn];
			struct epoll_event ev = { .events = EPOLLIN };

			r = harness_daemon_client(x->net->d[p], &cn->c);
			if (r < 0)
				break;
			x->n_conn++;
			cn->peer = p;
			ferry_client_set_timeout(cn->c, (int)x->cfg->client_ms);
			ev.data.ptr = cn;
			if (epoll_ctl(x->ep, EPOLL_CTL_ADD,
			        ferry_client_fd(cn->c), &ev) < 0)
				r = -errno;
		}
	}
	return r;
}

/* Starts the clock, the due times and the pauses. */
static void
cc_begin(struct cc_load *x)
{
	x->t0 = bench_now_ns() + CC_START_NS;
	for (unsigned p = 0; p < x->net->n; p++) {
		struct cc_peer *pe = &x->peer[p];

		pe->next_ns = x->t0 +
		    (x->cfg->poisson
		            ? cc_gap_ns(x)
		            : (uint64_t)(cc_unit(x) * 1e9 / x->cfg->rate));
		/* Each peer starts as it would be at any moment of a long
		 * run: stopped with probability cross (pauses are
		 * memoryless, so the rest of one is as long as a whole);
		 * starting them all running made the stopped fraction of
		 * a 20 s run half the one asked for. */
		if (x->cfg->cross > 0)
			pe->toggle_ns = cc_unit(x) <= x->cfg->cross
			    ? x->t0
			    : x->t0 + cc_exp_ns(x, cc_run_mean_ns(x));
	}
}

/* The loop: send what is due, pause and resume peers, take the ends,
 * until everything has ended. */
static int
cc_loop(struct cc_load *x)
{
	struct epoll_event ev[256];
	uint64_t sweep = 0, sent_at = 0;
	bool sent = false;

	cc_begin(x);
	while (!sent || x->in_flight > 0) {
		uint64_t now = bench_now_ns(), next = now + CC_SWEEP_NS;
		int n, ms;

		cc_issue_due(x, now, &next);
		if (!sent) {
			sent = true;
			for (unsigned p = 0; p < x->net->n; p++)
				sent = sent &&
				    x->peer[p].issued == x->cfg->lookups;
			if (sent) {
				sent_at = now;
				cc_cross_end(x, now);
			}
		}
		if (!sent)
			cc_cross(x, now, &next);
		if (now >= sweep) {
			for (unsigned k = 0; k < x->n_conn; k++)
				cc_drain(x, &x->conn[k]);
			sweep = now + CC_SWEEP_NS;
		}
		if (sent &&
		    now - sent_at >
		        ((uint64_t)x->cfg->client_ms + 30000) * 1000000) {
			fprintf(stderr,
			    "bench_dht_cc: %llu requests never "
			    "ended\n",
			    (unsigned long long)x->in_flight);
			return -ETIMEDOUT;
		}
		ms = next > now ? (int)((next - now) / 1000000) : 0;
		n = epoll_wait(x->ep, ev, 256, ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < n; i++)
			cc_drain(x, ev[i].data.ptr);
	}
	x->ret->window_s = 0;
	for (unsigned p = 0; p < x->net->n; p++) {
		uint32_t last = p * x->cfg->lookups + x->cfg->lookups - 1;

		if ((double)x->due[last] / 1e9 > x->ret->window_s)
			x->ret->window_s = (double)x->due[last] / 1e9;
	}
	return 0;
}

static void
cc_result(struct cc_load *x, struct cc_run *ret)
{
	unsigned n = x->net->n;
	double paused = 0;
	uint64_t in_win = 0;

	for (uint64_t i = 0; i < x->n_ok; i++)
		in_win += (double)x->end[i] / 1e9 <= ret->window_s;
	ret->tput_win =
	    ret->window_s > 0 ? (double)in_win / ret->window_s / n : NAN;
	ret->issued = (uint64_t)n * x->cfg->lookups;
	ret->ok = x->n_ok;
	ret->span_s = (double)x->last_ok_ns / 1e9;
	if (ret->span_s < ret->window_s)
		ret->span_s = ret->window_s;
	ret->tput = ret->span_s > 0 ? (double)ret->ok / ret->span_s / n : NAN;
	ret->offered =
	    ret->window_s > 0 ? (double)ret->issued / ret->window_s / n : NAN;
	ret->success = (double)ret->ok / (double)ret->issued;
	ret->p50_ms = db_quantile(x->ms, x->n_ok, 0.50);
	ret->p99_ms = db_quantile(x->ms, x->n_ok, 0.99);
	for (unsigned p = 0; p < n; p++)
		paused += (double)x->peer[p].paused_ns;
	ret->paused_pct =
	    ret->window_s > 0 ? 100.0 * paused / 1e9 / ret->window_s / n : 0;
}

static void
cc_load_free(struct cc_load *x)
{
	for (unsigned k = 0; k < x->n_conn; k++)
		ferry_client_close(x->conn[k].c);
	free(x->conn);
	if (x->ep >= 0)
		(void)close(x->ep);
	free(x->due);
	free(x->ms);
	free(x->end);
	free(x->block);
}

/* CPU time of the network's daemons, ns. */
static uint64_t
cc_cpu_ns(const struct dbnet *net)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < net->n; i++)
		t += bench_cpu_ns(net->d[i]->pid);
	return t;
}

int
cc_load_run(const struct dbnet *net, const struct cc_load_cfg *cfg,
    struct cc_run *ret)
{
	uint64_t total = (uint64_t)net->n * cfg->lookups, cpu0;
	struct cc_ctrs before, after;
	struct cc_load x;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r;

	memset(ret, 0, sizeof(*ret));
	if (cfg->rate <= 0 || cfg->lookups == 0 || cfg->cross < 0 ||
	    cfg->cross >= 1 || (cfg->putget && cfg->block < DB_HDR_LEN))
		return -EINVAL;
	memset(&x, 0, sizeof(x));
	x.net = net;
	x.cfg = cfg;
	x.ret = ret;
	x.rng = db_seed() | 1;
	x.ep = epoll_create1(EPOLL_CLOEXEC);
	x.due = calloc(total, sizeof(*x.due));
	x.ms = calloc(total + 1, sizeof(*x.ms));
	x.end = calloc(total + 1, sizeof(*x.end));
	x.block = cfg->putget ? malloc(cfg->block) : NULL;
	r = x.ep >= 0 && x.due != NULL && x.ms != NULL && x.end != NULL &&
	        (!cfg->putget || x.block != NULL)
	    ? 0
	    : -ENOMEM;
	if (r == 0 && cfg->putget)
		db_fill(x.block, cfg->block, x.rng, UINT64_MAX);
	if (r == 0)
		r = cc_connect(&x);
	if (r == 0)
		r = cc_ctrs_get(net, &before);
	cpu0 = cc_cpu_ns(net);
	if (r == 0)
		r = cc_loop(&x);
	/* Whatever happened, no daemon stays stopped. */
	cc_cross_end(&x, bench_now_ns());
	if (r == 0)
		r = cc_ctrs_get(net, &after);
	if (r == 0) {
		cc_result(&x, ret);
		cc_ctrs_sub(&after, &before, &ret->ctr);
		ret->retx_pct = 100.0 * (double)cc_ctr_retx(&ret->ctr) /
		    (double)ret->issued;
		ret->cpu = (double)(cc_cpu_ns(net) - cpu0) / 1e9 /
		    ((cpus > 0 ? (double)cpus : 1.0) * ret->span_s);
		ret->load = db_load();
		ret->done = true;
	}
	cc_load_free(&x);
	return r;
}

int
cc_ctrs_get(const struct dbnet *net, struct cc_ctrs *ret)
{
	struct bench_counters s;
	int r;

	memset(ret, 0, sizeof(*ret));
	for (unsigned i = 0; i < net->n; i++) {
		r = bench_counters_get(net->d[i], &s);
		if (r < 0)
			return r;
		for (size_t k = 0; k < s.n; k++) {
			const char *name = s.st[k].name;
			unsigned j;

			if (strncmp(name, "dht.", 4) != 0 &&
			    strcmp(name, "core.emu_dropped") != 0 &&
			    strcmp(name, "core.frames_lost") != 0)
				continue;
			for (j = 0; j < ret->n && strcmp(ret->name[j], name);
			     j++)
				;
			if (j == ret->n) {
				if (j == CC_MAX_COUNTERS ||
				    strlen(name) >= CC_CTR_NAME)
					continue;
				(void)snprintf(ret->name[j], CC_CTR_NAME, "%s",
				    name);
				ret->n++;
			}
			ret->value[j] += s.st[k].value;
		}
		bench_counters_free(&s);
	}
	return 0;
}

void
cc_ctrs_sub(const struct cc_ctrs *after, const struct cc_ctrs *before,
    struct cc_ctrs *ret)
{
	*ret = *after;
	for (unsigned j = 0; j < ret->n; j++)
		ret->value[j] -= cc_ctr(before, ret->name[j]);
}

uint64_t
cc_ctr(const struct cc_ctrs *c, const char *name)
{
	for (unsigned j = 0; j < c->n; j++)
		if (strcmp(c->name[j], name) == 0)
			return c->value[j];
	return 0;
}

uint64_t
cc_ctr_retx(const struct cc_ctrs *c)
{
	uint64_t n = 0;

	for (unsigned j = 0; j < c->n; j++)
		if (strcmp(c->name[j], "dht.retries") == 0 ||
		    strstr(c->name[j], "retrans") != NULL)
			n += c->value[j];
	return n;
}
