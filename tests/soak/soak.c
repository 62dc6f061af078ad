/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The soak run (see soak.h): starts the daemons as a mesh, then for the
 * given duration kills a random one now and then and restarts it with the
 * same state, follows each restarted daemon until its links are back, and
 * keeps traffic and sampling going; at the end stops every daemon with
 * SIGTERM and hands over to the report (issue 6, "Soak and restarts").
 */
#include "soak.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#define SOAK_CHECK_MS    100   /* a reconnecting daemon's peers, this often */
#define SOAK_START_MS    20    /* a starting daemon's socket, this often */
#define SOAK_STOP_MS     60000 /* SIGTERM to exit, ASan's leak check included */
#define SOAK_POLL_MAX_MS 50    /* the loop looks around at least this often */

static bool soak_verbose;
static volatile sig_atomic_t soak_interrupted;

double
soak_t(const struct soak *s, uint64_t ms)
{
	return ((double)ms - (double)s->t0_ms) / 1000.0;
}

void
soak_event(struct soak *s, uint64_t now_ms, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->events != NULL)
		fprintf(s->events, "%9.3f %s\n", soak_t(s, now_ms), line);
	if (soak_verbose)
		fprintf(stderr, "soak: %9.3f %s\n", soak_t(s, now_ms), line);
}

/* xorshift64*: reproducible from --seed, unlike rand(). */
uint64_t
soak_rand(struct soak *s, uint64_t lo, uint64_t hi)
{
	uint64_t x = s->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	if (hi <= lo)
		return lo;
	return lo + (x * 0x2545F4914F6CDD1DULL) % (hi - lo + 1);
}

int
soak_grow(void **v, size_t *cap, size_t n, size_t sz)
{
	size_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	ncap = *cap != 0 ? *cap * 2 : 256;
	p = realloc(*v, ncap * sz);
	if (p == NULL)
		return -ENOMEM;
	*v = p;
	*cap = ncap;
	return 0;
}

bool
soak_available(const struct soak_daemon *d)
{
	return d->state == SOAK_UP && d->tx != NULL && d->rx != NULL;
}

static void
soak_span_open(struct soak *s, struct soak_daemon *d, uint64_t now_ms)
{
	if (d->n_spans > 0 && d->spans[d->n_spans - 1].to_ms == UINT64_MAX)
		return;
	if (soak_grow((void **)&d->spans, &d->cap_spans, d->n_spans,
	        sizeof(*d->spans)) < 0) {
		s->failed = true;
		return;
	}
	d->spans[d->n_spans].from_ms = now_ms;
	d->spans[d->n_spans].to_ms = UINT64_MAX;
	d->n_spans++;
}

static void
soak_span_close(struct soak_daemon *d, uint64_t now_ms)
{
	if (d->n_spans > 0 && d->spans[d->n_spans - 1].to_ms == UINT64_MAX)
		d->spans[d->n_spans - 1].to_ms = now_ms;
}

/* "A-B" or "A" in seconds (fractions allowed), as milliseconds. */
static int
soak_parse_range(const char *arg, unsigned *lo, unsigned *hi)
{
	char *end;
	double a, b;

	a = strtod(arg, &end);
	b = a;
	if (*end == '-')
		b = strtod(end + 1, &end);
	if (*end != '\0' || a < 0 || b < a || b > 86400)
		return -EINVAL;
	*lo = (unsigned)(a * 1000);
	*hi = (unsigned)(b * 1000);
	return 0;
}

static void
soak_usage(FILE *f)
{
	fprintf(f,
	    "usage: soak [-v] [-d SECONDS] [-n DAEMONS] [-o DIR] [-s SEED]\n"
	    "            [--stable N] [--kill-every S[-S]] [--down S[-S]]\n"
	    "            [--rate MSGS/S] [--big-every S] [--big-max BYTES]\n"
	    "            [--reconnect-limit S] [--min-delivery FRACTION]\n"
	    "            [--max-slope KIB/MIN] [--mesh-timeout S] [--label TEXT]\n"
	    "            [--per-source N]\n"
	    "Runs ferryd processes ($FERRYD) with traffic, kills and restarts;\n"
	    "writes summary.txt, rss.csv, reconnects.csv, delivery.csv,\n"
	    "counters.csv, events.log and logs/ into DIR. See tests/soak/README.\n");
}

static void
soak_defaults(struct soak_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 16;
	o->duration_s = 120;
	o->stable = 4;
	o->kill_min_ms = 10000;
	o->kill_max_ms = 20000;
	o->down_min_ms = 1000;
	o->down_max_ms = 5000;
	o->small_per_s = 40;
	o->big_every_ms = 3000;
	o->small_max = 1000;
	o->big_min = 70 * 1024;
	o->big_max = 1024 * 1024;
	o->reconnect_limit_ms = 5000;
	o->reconnect_give_up_ms = 60000;
	o->msg_timeout_ms = 10000;
	o->sample_ms = 2000;
	o->interval_s = 10;
	o->mesh_timeout_s = 120;
	o->min_delivery = 0.999;
	o->max_slope = -1;
	o->warmup_s = 30;
	o->per_source = 0;
	o->seed = 0;
	o->out_dir = "soak-out";
	o->label = "";
}

static int
soak_parse_opts(int argc, char **argv, struct soak_opts *o)
{
	enum {
		O_STABLE = 256,
		O_KILL,
		O_DOWN,
		O_RATE,
		O_BIG,
		O_BIGMAX,
		O_RECONNECT,
		O_DELIVERY,
		O_SLOPE,
		O_LABEL,
		O_MESH,
		O_PER_SOURCE
	};
	static const struct option longs[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "daemons", required_argument, NULL, 'n' },
		{ "out", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "stable", required_argument, NULL, O_STABLE },
		{ "kill-every", required_argument, NULL, O_KILL },
		{ "down", required_argument, NULL, O_DOWN },
		{ "rate", required_argument, NULL, O_RATE },
		{ "big-every", required_argument, NULL, O_BIG },
		{ "big-max", required_argument, NULL, O_BIGMAX },
		{ "reconnect-limit", required_argument, NULL, O_RECONNECT },
		{ "min-delivery", required_argument, NULL, O_DELIVERY },
		{ "max-slope", required_argument, NULL, O_SLOPE },
		{ "label", required_argument, NULL, O_LABEL },
		{ "mesh-timeout", required_argument, NULL, O_MESH },
		{ "per-source", required_argument, NULL, O_PER_SOURCE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned lo, hi;
	int c;

	while ((c = getopt_long(argc, argv, "d:n:o:s:vh", longs, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->duration_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			o->n = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'v':
			soak_verbose = true;
			break;
		case O_STABLE:
			o->stable = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case O_KILL:
		case O_DOWN:
		case O_RECONNECT:
		case O_BIG:
			if (soak_parse_range(optarg, &lo, &hi) < 0)
				return -EINVAL;
			if (c == O_KILL) {
				o->kill_min_ms = lo;
				o->kill_max_ms = hi;
			} else if (c == O_DOWN) {
				o->down_min_ms = lo;
				o->down_max_ms = hi;
			} else if (c == O_RECONNECT) {
				o->reconnect_limit_ms = hi;
			} else {
				o->big_every_ms = hi;
			}
			break;
		case O_RATE:
			o->small_per_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case O_BIGMAX:
			o->big_max = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case O_DELIVERY:
			o->min_delivery = strtod(optarg, NULL);
			break;
		case O_SLOPE:
			o->max_slope = strtod(optarg, NULL);
			break;
		case O_LABEL:
			o->label = optarg;
			break;
		case O_MESH:
			o->mesh_timeout_s = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case O_PER_SOURCE:
			o->per_source = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'h':
			soak_usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || o->n < 2 || o->n > SOAK_MAX_DAEMONS ||
	    o->stable > o->n || o->duration_s == 0 ||
	    o->big_max > FERRY_APP_MSG_MAX || o->big_min > o->big_max ||
	    o->small_max < SOAK_HDR || o->big_min < SOAK_HDR ||
	    o->kill_min_ms == 0)
		return -EINVAL;
	if (o->seed == 0)
		o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return 0;
}

/* The daemon's HELO URI, or NULL. */
static char *
soak_hello(struct harness_daemon *hd)
{
	struct ferry_client *c;
	char *uri = NULL;

	if (harness_daemon_client(hd, &c) < 0)
		return NULL;
	if (ferry_hello(c, &uri) < 0)
		uri = NULL;
	ferry_client_close(c);
	return uri;
}

/* Makes and starts daemon i, bootstrapped from one or two of those
 * started before it (their URIs in uris). */
static int
soak_start_one(struct soak *s, unsigned i, char **uris)
{
	struct soak_daemon *d = &s->d[i];
	unsigned a, b;
	int r;

	r = harness_daemon_new(s->h, &d->hd);
	if (r < 0)
		return r;
	d->idx = i;
	d->stable = i < s->o.stable;
	r = harness_daemon_transports(d->hd, "udp tcp");
	/* Each daemon has its own address (harness.h), so the per-source
	 * limit applies per daemon as on a network; --per-source changes
	 * it for a look at the limit itself. */
	if (r == 0 && s->o.per_source > 0)
		r = harness_daemon_config(d->hd,
		    "[core]\nKX_RATE_PER_SOURCE = %u\n", s->o.per_source);
	/* Odd daemons prefer TCP, even ones UDP: both carry traffic, in
	 * either direction of a mixed pair. */
	if (r == 0 && i % 2 == 1)
		r = harness_daemon_config(d->hd,
		    "[transport-tcp]\nCOST = 1\n[transport-udp]\nCOST = 10\n");
	if (r == 0 && i > 0) {
		a = (unsigned)soak_rand(s, 0, i - 1);
		b = (unsigned)soak_rand(s, 0, i - 1);
		if (b == a || soak_rand(s, 0, 1) == 0)
			r = harness_daemon_config(d->hd,
			    "[core]\nBOOTSTRAP = %s\n", uris[a]);
		else
			r = harness_daemon_config(d->hd,
			    "[core]\nBOOTSTRAP = %s %s\n", uris[a], uris[b]);
	}
	if (r == 0)
		r = harness_daemon_start_ready(d->hd);
	if (r < 0)
		return r;
	uris[i] = soak_hello(d->hd);
	if (uris[i] == NULL)
		return -EPROTO;
	d->started_ms = d->ready_ms = d->instance_ms = harness_now_ms();
	return 0;
}

/* Connected peers of daemon d that are among the n daemons, as a bit
 * mask; -1 if d did not answer. */
static int64_t
soak_peer_mask(struct soak *s, struct ferry_client *c)
{
	struct ferry_peer_info *pi;
	int64_t mask = 0;
	size_t n;

	if (c == NULL || ferry_peers(c, &pi, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < s->o.n; j++)
			if (memcmp(&pi[i].id, &s->d[j].hd->id,
			        sizeof(pi[i].id)) == 0)
				mask |= (int64_t)1 << j;
	ferry_peers_free(pi);
	return mask;
}

static unsigned
soak_popcount(int64_t mask)
{
	return mask < 0 ? 0 : (unsigned)__builtin_popcountll((uint64_t)mask);
}

/* Lists the links each daemon lacks, for a mesh that did not form. */
static void
soak_show_missing(struct soak *s)
{
	for (unsigned i = 0; i < s->o.n; i++) {
		int64_t mask = soak_peer_mask(s, s->d[i].tx);

		if (soak_popcount(mask) == s->o.n - 1)
			continue;
		fprintf(stderr, "soak: d%u (%.8s) lacks", i,
		    s->d[i].hd->id_str);
		for (unsigned j = 0; j < s->o.n; j++)
			if (j != i && (mask < 0 || !(mask & (int64_t)1 << j)))
				fprintf(stderr, " d%u (%.8s)", j,
				    s->d[j].hd->id_str);
		fprintf(stderr, "\n");
	}
}

/* Starts all daemons and waits until each has every other as a peer. */
static int
soak_setup(struct soak *s)
{
	char *uris[SOAK_MAX_DAEMONS] = { NULL };
	uint64_t start = harness_now_ms(), end;
	int r = 0;

	for (unsigned i = 0; r == 0 && i < s->o.n; i++)
		r = soak_start_one(s, i, uris);
	for (unsigned i = 0; i < s->o.n; i++)
		free(uris[i]);
	if (r < 0) {
		fprintf(stderr, "soak: cannot start the daemons: %s\n",
		    strerror(-r));
		return r;
	}
	for (unsigned i = 0; r == 0 && i < s->o.n; i++) {
		r = soak_traffic_open(&s->d[i]);
		s->d[i].state = SOAK_UP;
	}
	if (r < 0)
		return r;
	end = start + (uint64_t)s->o.mesh_timeout_s * 1000;
	for (;;) {
		unsigned full = 0, links = 0;

		for (unsigned i = 0; i < s->o.n; i++) {
			unsigned k =
			    soak_popcount(soak_peer_mask(s, s->d[i].tx));

			links += k;
			full += k == s->o.n - 1;
		}
		if (full == s->o.n)
			break;
		if (harness_now_ms() > end || soak_interrupted) {
			fprintf(stderr,
			    "soak: no full mesh after %u s: %u of %u links\n",
			    s->o.mesh_timeout_s, links, s->o.n * (s->o.n - 1));
			soak_show_missing(s);
			return -ETIMEDOUT;
		}
		harness_sleep_ms(250);
	}
	s->mesh_ms = harness_now_ms() - start;
	return 0;
}

static void
soak_kill(struct soak *s, uint64_t now)
{
	unsigned cand[SOAK_MAX_DAEMONS], n = 0;
	struct soak_daemon *d;
	pid_t pid;

	for (unsigned i = 0; i < s->o.n; i++)
		if (!s->d[i].stable && s->d[i].state == SOAK_UP)
			cand[n++] = i;
	if (n == 0) {
		s->next_kill_ms = now + 1000;
		return;
	}
	d = &s->d[cand[soak_rand(s, 0, n - 1)]];
	pid = d->hd->pid;
	soak_traffic_close(d);
	(void)harness_daemon_kill(d->hd);
	d->kills++;
	d->killed_ms = now;
	d->state = SOAK_DOWN;
	d->restart_at_ms =
	    now + soak_rand(s, s->o.down_min_ms, s->o.down_max_ms);
	soak_span_open(s, d, now);
	soak_event(s, now, "kill d%u (pid %ld), restart in %.1f s", d->idx,
	    (long)pid, (double)(d->restart_at_ms - now) / 1000.0);
	s->next_kill_ms =
	    now + soak_rand(s, s->o.kill_min_ms, s->o.kill_max_ms);
}

static void
soak_restart(struct soak *s, struct soak_daemon *d, uint64_t now)
{
	int r = harness_daemon_start(d->hd);

	if (r < 0) {
		soak_event(s, now, "d%u: cannot restart: %s", d->idx,
		    strerror(-r));
		s->failed = true;
		d->restart_at_ms = now + 1000;
		return;
	}
	d->instance++;
	d->started_ms = now;
	d->state = SOAK_STARTING;
	soak_event(s, now, "restart d%u (pid %ld)", d->idx, (long)d->hd->pid);
}

static void
soak_record_reconnect(struct soak *s, struct soak_daemon *d, uint64_t now,
    bool done, unsigned have, unsigned want)
{
	struct soak_reconnect *rc;

	if (soak_grow((void **)&s->rec, &s->cap_rec, s->n_rec,
	        sizeof(*s->rec)) < 0) {
		s->failed = true;
		return;
	}
	rc = &s->rec[s->n_rec++];
	rc->daemon = d->idx;
	rc->instance = d->instance;
	rc->killed_ms = d->killed_ms;
	rc->started_ms = d->started_ms;
	rc->ready_ms = d->ready_ms;
	rc->done_ms = done ? now : 0;
	rc->have = have;
	rc->want = want;
}

/* A restarted daemon is back once it has a link to every daemon that is
 * up and steady now: with all addresses validated in its peer book and
 * loopback between them, nothing excuses a missing one. */
static void
soak_check_reconnect(struct soak *s, struct soak_daemon *d, uint64_t now)
{
	int64_t have = soak_peer_mask(s, d->tx), want = 0;
	char missing[256] = "";
	size_t off = 0;
	bool give_up;

	d->next_check_ms = now + SOAK_CHECK_MS;
	for (unsigned i = 0; i < s->o.n; i++)
		if (i != d->idx && s->d[i].state == SOAK_UP)
			want |= (int64_t)1 << i;
	give_up = now - d->started_ms > s->o.reconnect_give_up_ms;
	if (have >= 0 && (have & want) == want) {
		soak_record_reconnect(s, d, now, true, soak_popcount(have),
		    soak_popcount(want));
		soak_event(s, now,
		    "d%u reconnected: %u/%u peers %.3f s after restart "
		    "(ready after %.3f s)",
		    d->idx, soak_popcount(have & want), soak_popcount(want),
		    (double)(now - d->started_ms) / 1000.0,
		    (double)(d->ready_ms - d->started_ms) / 1000.0);
	} else if (give_up) {
		for (unsigned i = 0; i < s->o.n && off + 8 < sizeof(missing);
		     i++)
			if ((want & ~(have < 0 ? 0 : have)) & ((int64_t)1 << i))
				off += (size_t)snprintf(missing + off,
				    sizeof(missing) - off, " d%u", i);
		soak_record_reconnect(s, d, now, false,
		    soak_popcount(have & want), soak_popcount(want));
		soak_event(s, now,
		    "d%u NOT reconnected after %.1f s; missing:%s", d->idx,
		    (double)(now - d->started_ms) / 1000.0, missing);
	} else {
		return;
	}
	d->state = SOAK_UP;
	d->instance_ms = now;
	soak_span_close(d, now);
}

static void
soak_check_ready(struct soak *s, struct soak_daemon *d, uint64_t now)
{
	int r = harness_daemon_wait_ready(d->hd, 0);

	if (r == -ETIMEDOUT)
		return;
	if (r == 0)
		r = soak_traffic_open(d);
	if (r < 0) {
		/* An exit shows in soak_check_exits; anything else is
		 * retried. */
		if (r != -ECHILD)
			soak_event(s, now, "d%u: not ready: %s", d->idx,
			    strerror(-r));
		return;
	}
	d->ready_ms = harness_now_ms();
	d->state = SOAK_RECONNECTING;
	d->next_check_ms = d->ready_ms;
}

/* Exits nobody asked for: a crash. The daemon is restarted so that the
 * run goes on, and the soak fails. */
static void
soak_check_exits(struct soak *s, uint64_t now)
{
	for (unsigned i = 0; i < s->o.n; i++) {
		struct soak_daemon *d = &s->d[i];

		if (d->state == SOAK_DOWN || harness_daemon_running(d->hd))
			continue;
		soak_event(s, now, "d%u EXITED by itself with status %d",
		    d->idx, d->hd->exit_status);
		d->crashes++;
		s->n_crashes++;
		s->failed = true;
		soak_traffic_close(d);
		d->killed_ms = now;
		d->state = SOAK_DOWN;
		d->restart_at_ms = now + 1000;
		soak_span_open(s, d, now);
	}
}

/* Restarts, readiness and reconnection checks that are due. */
static void
soak_progress(struct soak *s, uint64_t now)
{
	for (unsigned i = 0; i < s->o.n; i++) {
		struct soak_daemon *d = &s->d[i];

		if (d->state == SOAK_DOWN && now >= d->restart_at_ms)
			soak_restart(s, d, now);
		else if (d->state == SOAK_STARTING)
			soak_check_ready(s, d, now);
		else if (d->state == SOAK_RECONNECTING &&
		    now >= d->next_check_ms)
			soak_check_reconnect(s, d, now);
	}
}

static uint64_t
soak_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static int
soak_wait_ms(const struct soak *s, uint64_t now, bool sending)
{
	uint64_t next = now + SOAK_POLL_MAX_MS;

	if (sending) {
		next = soak_min(next, s->next_small_ms);
		next = soak_min(next, s->next_big_ms);
		next = soak_min(next, s->next_kill_ms);
	}
	next = soak_min(next, s->next_sample_ms);
	for (unsigned i = 0; i < s->o.n; i++) {
		const struct soak_daemon *d = &s->d[i];

		if (d->state == SOAK_STARTING)
			next = soak_min(next, now + SOAK_START_MS);
		else if (d->state == SOAK_DOWN)
			next = soak_min(next, d->restart_at_ms);
		else if (d->state == SOAK_RECONNECTING)
			next = soak_min(next, d->next_check_ms);
	}
	return next > now ? (int)(next - now) : 0;
}

static bool
soak_all_up(const struct soak *s)
{
	for (unsigned i = 0; i < s->o.n; i++)
		if (s->d[i].state != SOAK_UP)
			return false;
	return true;
}

/* One turn of the loop; sending false during the final drain. */
static void
soak_turn(struct soak *s, bool sending)
{
	uint64_t now = harness_now_ms();

	soak_check_exits(s, now);
	if (sending && now >= s->next_kill_ms)
		soak_kill(s, now);
	soak_progress(s, now);
	if (sending)
		soak_traffic_send(s, now);
	now = harness_now_ms();
	if (now >= s->next_sample_ms) {
		soak_sample_all(s, now);
		s->next_sample_ms += s->o.sample_ms;
		if (s->next_sample_ms <= now)
			s->next_sample_ms = now + s->o.sample_ms;
	}
	soak_traffic_poll(s, soak_wait_ms(s, harness_now_ms(), sending));
}

/* A line on stderr each minute, for whoever watches a long run. */
static void
soak_progress_line(struct soak *s)
{
	static uint64_t next;
	unsigned kills = 0;
	uint64_t now = harness_now_ms();

	if (next == 0)
		next = s->t0_ms + 60000;
	if (now < next)
		return;
	next += 60000;
	for (unsigned i = 0; i < s->o.n; i++)
		kills += s->d[i].kills;
	fprintf(stderr,
	    "soak: %4.0f s: %u kills, %zu reconnects, %u crashes, "
	    "%zu messages\n",
	    soak_t(s, now), kills, s->n_rec, s->n_crashes, s->n_msgs);
}

static void
soak_run(struct soak *s)
{
	uint64_t drain_end;

	s->t0_ms = harness_now_ms();
	s->end_ms = s->t0_ms + (uint64_t)s->o.duration_s * 1000;
	s->next_kill_ms =
	    s->t0_ms + soak_rand(s, s->o.kill_min_ms, s->o.kill_max_ms);
	s->next_sample_ms = s->t0_ms;
	s->next_small_ms = s->t0_ms;
	s->next_big_ms =
	    s->o.big_every_ms > 0 ? s->t0_ms + s->o.big_every_ms : UINT64_MAX;
	soak_event(s, s->t0_ms, "run phase: %u daemons for %u s, seed %llu",
	    s->o.n, s->o.duration_s, (unsigned long long)s->o.seed);
	while (harness_now_ms() < s->end_ms && !soak_interrupted) {
		soak_turn(s, true);
		soak_progress_line(s);
	}
	/* Messages still on their way get their time, and daemons still
	 * down come back so that all of them end with SIGTERM. */
	drain_end = harness_now_ms() + s->o.msg_timeout_ms;
	soak_event(s, harness_now_ms(), "traffic stops; draining");
	while ((harness_now_ms() < drain_end || !soak_all_up(s)) &&
	    harness_now_ms() < drain_end + s->o.reconnect_give_up_ms &&
	    !soak_interrupted)
		soak_turn(s, false);
	soak_sample_all(s, harness_now_ms());
}

/* Every counter of every daemon, as they are before the final stop. */
static void
soak_dump_counters(struct soak *s)
{
	char path[PATH_MAX];
	struct ferry_stat *st;
	size_t n;
	FILE *f;

	(void)snprintf(path, sizeof(path), "%s/counters.csv", s->o.out_dir);
	f = fopen(path, "w");
	if (f == NULL)
		return;
	fprintf(f, "daemon,counter,value\n");
	for (unsigned i = 0; i < s->o.n; i++) {
		if (s->d[i].tx == NULL || ferry_stats(s->d[i].tx, &st, &n) < 0)
			continue;
		for (size_t k = 0; k < n; k++) {
			fprintf(f, "%u,%s,%llu\n", i, st[k].name,
			    (unsigned long long)st[k].value);
			for (size_t w = 0; soak_watch[w] != NULL; w++)
				if (strcmp(soak_watch[w], st[k].name) == 0)
					s->watch[w] += st[k].value;
		}
		ferry_stats_free(st, n);
	}
	(void)fclose(f);
}

/* SIGTERM to every daemon; each must exit with 0 (under ASan that
 * includes LeakSanitizer's verdict). */
static void
soak_stop_all(struct soak *s)
{
	for (unsigned i = 0; i < s->o.n; i++)
		soak_traffic_close(&s->d[i]);
	/* All at once, then collect: LSan's exit scan takes a while each. */
	for (unsigned i = 0; i < s->o.n; i++)
		if (harness_daemon_running(s->d[i].hd))
			(void)kill(s->d[i].hd->pid, SIGTERM);
	for (unsigned i = 0; i < s->o.n; i++) {
		struct soak_daemon *d = &s->d[i];
		int st = -1;

		if (harness_daemon_wait_exit(d->hd, SOAK_STOP_MS, &st) < 0) {
			(void)harness_daemon_kill(d->hd);
			st = -1;
		}
		if (st != 0) {
			soak_event(s, harness_now_ms(),
			    "d%u: exit status %d after SIGTERM", i, st);
			s->failed = true;
		}
		s->exit_status[i] = st;
	}
}

static void
soak_on_signal(int sig)
{
	(void)sig;
	soak_interrupted = 1;
}

int
main(int argc, char **argv)
{
	static struct soak s;
	char path[PATH_MAX];
	int r;

	soak_defaults(&s.o);
	if (soak_parse_opts(argc, argv, &s.o) < 0) {
		soak_usage(stderr);
		return 2;
	}
	if (sodium_init() < 0)
		return 2;
	s.rng = s.o.seed | 1;
	(void)signal(SIGINT, soak_on_signal);
	(void)signal(SIGTERM, soak_on_signal);
	(void)signal(SIGPIPE, SIG_IGN);
	(void)mkdir(s.o.out_dir, 0755);
	(void)snprintf(path, sizeof(path), "%s/events.log", s.o.out_dir);
	s.events = fopen(path, "w");
	s.buf = malloc(s.o.big_max);
	if (s.events == NULL || s.buf == NULL) {
		fprintf(stderr, "soak: cannot write %s\n", path);
		return 2;
	}
	setvbuf(s.events, NULL, _IOLBF, 0);
	r = harness_new("soak", &s.h);
	if (r < 0) {
		fprintf(stderr, "soak: harness: %s\n", strerror(-r));
		return 2;
	}
	fprintf(stderr, "soak: %u daemons in %s, seed %llu\n", s.o.n,
	    harness_dir(s.h), (unsigned long long)s.o.seed);
	if (soak_setup(&s) < 0) {
		s.failed = true;
	} else {
		fprintf(stderr, "soak: full mesh after %.1f s; running %u s\n",
		    (double)s.mesh_ms / 1000.0, s.o.duration_s);
		soak_run(&s);
	}
	soak_dump_counters(&s);
	soak_stop_all(&s);
	soak_report(&s);
	harness_free(s.h);
	(void)fclose(s.events);
	for (unsigned i = 0; i < s.o.n; i++)
		free(s.d[i].spans);
	free(s.msgs);
	free(s.rec);
	free(s.samples);
	free(s.buf);
	return s.failed || soak_interrupted ? 1 : 0;
}
