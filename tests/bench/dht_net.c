/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's network (see dht_bench.h): real ferryd processes building
 * their DHT as test_dht's do, the counters summed over them, and the
 * small helpers the parts share.
 */
#include "dht_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* As tests/integration/test_dht.c: links left to the DHT, refreshes
 * every 2 s while the tables fill, and no bound per network, since all
 * daemons are in 127.0.0.0/24. */
#define DBNET_CFG                                                              \
	"[core]\nLINK_POLICY = manual\n"                                       \
	"[dht]\nREFRESH_INTERVAL = 2 s\nPER_NETWORK = 0\n"
/* Once the tables are full: no refresh lookups during the measurement,
 * so that dht.completed and dht.hops_total count ours alone. */
#define DBNET_CFG_QUIET "[dht]\nREFRESH_INTERVAL = 86400 s\n"

uint32_t
dbnet_table_size(const struct harness_daemon *d)
{
	struct ferry_dht_status *st;
	struct ferry_client *c;
	uint32_t n = 0;

	if (harness_daemon_client(d, &c) < 0)
		return 0;
	if (ferry_dht_status(c, &st) == 0) {
		n = st->entries;
		ferry_dht_status_free(st);
	}
	ferry_client_close(c);
	return n;
}

uint64_t
dbnet_blocks(const struct harness_daemon *d)
{
	struct ferry_dht_status *st;
	struct ferry_client *c;
	uint64_t n = 0;

	if (harness_daemon_client(d, &c) < 0)
		return 0;
	if (ferry_dht_status(c, &st) == 0) {
		n = st->blocks;
		ferry_dht_status_free(st);
	}
	ferry_client_close(c);
	return n;
}

static int
dbnet_spawn(struct dbnet *net, const char *transport, const char *extra)
{
	struct ferry_client *c;
	char *uri = NULL;
	int r = 0;

	for (unsigned i = 0; r == 0 && i < net->n; i++) {
		struct harness_daemon *d;

		r = harness_daemon_new(net->h, &net->d[i]);
		if (r < 0)
			break;
		d = net->d[i];
		r = harness_daemon_transports(d, transport);
		if (r == 0)
			r = harness_daemon_config(d, "%s", DBNET_CFG);
		if (r == 0 && net->delay_ms > 0)
			r = harness_daemon_config(d,
			    "[testing]\nENABLE = yes\nDELAY = %u ms\n",
			    net->delay_ms);
		if (r == 0 && extra != NULL)
			r = harness_daemon_config(d, "%s\n", extra);
		if (r == 0 && i > 0)
			r = harness_daemon_config(d, "[core]\nBOOTSTRAP = %s\n",
			    uri);
		if (r == 0)
			r = harness_daemon_start_ready(d);
		if (r == 0 && i == 0 &&
		    (r = harness_daemon_client(d, &c)) == 0) {
			r = ferry_hello(c, &uri);
			ferry_client_close(c);
		}
	}
	free(uri);
	return r;
}

/* The length of the prefix ids a and b share, in bits: the bucket of
 * the routing table one keeps the other in. */
static unsigned
dbnet_prefix(const uint8_t *a, const uint8_t *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return (unsigned)(i * 8) +
			    (unsigned)__builtin_clz((unsigned)(a[i] ^ b[i])) -
			    (unsigned)(8 * (sizeof(unsigned) - 1));
	return (unsigned)(len * 8);
}

/* How many of the other daemons d_i's table holds once full: every one
 * with buckets of k = 20 (16 daemons), else k per bucket at most (-K of
 * bench_dht_cc: tables as small as Chord's fingers, lookups of several
 * hops). */
static unsigned
dbnet_full_table(const struct dbnet *net, unsigned i, unsigned k)
{
	unsigned per[FERRY_PEER_ID_LEN * 8 + 1] = { 0 }, n = 0;

	for (unsigned j = 0; j < net->n; j++)
		if (j != i)
			per[dbnet_prefix(net->d[i]->id.bytes,
			    net->d[j]->id.bytes, FERRY_PEER_ID_LEN)]++;
	for (size_t b = 0; b < sizeof(per) / sizeof(per[0]); b++)
		n += per[b] < k ? per[b] : k;
	return n;
}

/* d's bucket size, 0 if it does not answer. */
static unsigned
dbnet_k(const struct harness_daemon *d)
{
	struct ferry_dht_status *st;
	struct ferry_client *c;
	unsigned k = 0;

	if (harness_daemon_client(d, &c) < 0)
		return 0;
	if (ferry_dht_status(c, &st) == 0) {
		k = st->k;
		ferry_dht_status_free(st);
	}
	ferry_client_close(c);
	return k;
}

/* Waits until every table holds every daemon its buckets have room for
 * (all the others with k = 20 and 16 daemons), as test_dht does. */
static int
dbnet_wait_tables(const struct dbnet *net, unsigned wait_ms)
{
	uint64_t end = harness_now_ms() + wait_ms;

	for (unsigned i = 0; i < net->n; i++) {
		unsigned want = dbnet_full_table(net, i, dbnet_k(net->d[i]));

		while (dbnet_table_size(net->d[i]) < want) {
			if (harness_now_ms() > end) {
				fprintf(stderr,
				    "bench_dht: d%u's table holds %u of %u "
				    "peers after %u ms\n",
				    i, dbnet_table_size(net->d[i]), want,
				    wait_ms);
				return -ETIMEDOUT;
			}
			harness_sleep_ms(100);
		}
	}
	return 0;
}

bool
dbnet_tables_full(const struct dbnet *net)
{
	for (unsigned i = 0; i < net->n; i++)
		if (dbnet_table_size(net->d[i]) <
		    dbnet_full_table(net, i, dbnet_k(net->d[i])))
			return false;
	return true;
}

/* Waits until no daemon starts a request for a second: the lookups of
 * the refreshes before the reload are over. */
static int
dbnet_wait_quiet(const struct dbnet *net)
{
	uint64_t end = harness_now_ms() + 20000;
	struct dbnet_counts a, b;
	int r = dbnet_counts(net, -1, &a);

	while (r == 0 && harness_now_ms() < end) {
		harness_sleep_ms(1000);
		r = dbnet_counts(net, -1, &b);
		if (r == 0 && b.requests_out == a.requests_out &&
		    b.completed + b.timeouts == a.completed + a.timeouts)
			break;
		a = b;
	}
	return r;
}

int
dbnet_start(struct dbnet *net, const char *name, unsigned n,
    const char *transport, unsigned delay_ms, const char *extra,
    unsigned wait_ms)
{
	int r;

	memset(net, 0, sizeof(*net));
	if (n < 1 || n > DB_MAX_DAEMONS)
		return -EINVAL;
	net->n = n;
	net->delay_ms = delay_ms;
	r = harness_new(name, &net->h);
	if (r < 0)
		return r;
	r = dbnet_spawn(net, transport, extra);
	if (r == 0)
		r = dbnet_wait_tables(net, wait_ms);
	for (unsigned i = 0; r == 0 && i < n; i++) {
		r = harness_daemon_config(net->d[i], "%s", DBNET_CFG_QUIET);
		if (r == 0)
			r = harness_daemon_reload(net->d[i]);
	}
	if (r == 0)
		r = dbnet_wait_quiet(net);
	if (r < 0) {
		fprintf(stderr, "bench_dht: the network did not form: %s\n",
		    strerror(-r));
		harness_dump_logs(net->h);
		dbnet_free(net);
	}
	return r;
}

/* The ferry:// URI of member i. 0 or a negative errno; *ret to free. */
static int
dbnet_uri(const struct dbnet *net, unsigned i, char **ret)
{
	struct ferry_client *c;
	int r = harness_daemon_client(net->d[i], &c);

	if (r < 0)
		return r;
	r = ferry_hello(c, ret);
	ferry_client_close(c);
	return r;
}

int
dbnet_add_leaves(struct dbnet *net, unsigned n, const char *transport,
    const char *extra)
{
	uint64_t end = harness_now_ms() + 60000;
	char *uri = NULL;
	int r = 0;

	if (n > DB_MAX_LEAVES)
		return -EINVAL;
	for (unsigned i = 0; r == 0 && i < n; i++) {
		struct harness_daemon *d;

		net->entry[i] = i * net->n / n;
		r = dbnet_uri(net, net->entry[i], &uri);
		if (r == 0)
			r = harness_daemon_new(net->h, &net->leaf[i]);
		if (r < 0)
			break;
		net->n_leaves = i + 1;
		d = net->leaf[i];
		r = harness_daemon_transports(d, transport);
		/* One link: the one it makes to its entry. The peers that
		 * answer its requests cannot link to it. */
		if (r == 0)
			r = harness_daemon_config(d,
			    "%s%s[core]\nMAX_PEERS = 1\nBOOTSTRAP = %s\n",
			    DBNET_CFG, DBNET_CFG_QUIET, uri);
		if (r == 0 && net->delay_ms > 0)
			r = harness_daemon_config(d,
			    "[testing]\nENABLE = yes\nDELAY = %u ms\n",
			    net->delay_ms);
		if (r == 0 && extra != NULL)
			r = harness_daemon_config(d, "%s\n", extra);
		if (r == 0)
			r = harness_daemon_start_ready(d);
		free(uri);
		uri = NULL;
	}
	for (unsigned i = 0; r == 0 && i < net->n_leaves; i++)
		while (dbnet_table_size(net->leaf[i]) < 1) {
			if (harness_now_ms() > end) {
				fprintf(stderr,
				    "bench_dht: leaf %u has no link to d%u\n",
				    i, net->entry[i]);
				r = -ETIMEDOUT;
				break;
			}
			harness_sleep_ms(50);
		}
	if (r < 0) {
		fprintf(stderr, "bench_dht: the leaves did not start: %s\n",
		    strerror(-r));
		harness_dump_logs(net->h);
	}
	return r;
}

void
dbnet_stop_leaves(struct dbnet *net)
{
	for (unsigned i = 0; i < net->n_leaves; i++)
		if (net->leaf[i] != NULL)
			(void)harness_daemon_stop(net->leaf[i], 5000, NULL);
}

void
dbnet_free(struct dbnet *net)
{
	harness_free(net->h);
	memset(net, 0, sizeof(*net));
}

static void
dbnet_counts_add(struct dbnet_counts *c, const struct bench_counters *s)
{
	c->completed += bench_counter(s, "dht.completed");
	c->hops += bench_counter(s, "dht.hops_total");
	c->requests_out += bench_counter(s, "dht.requests_out");
	c->timeouts += bench_counter(s, "dht.timeouts");
	c->retries += bench_counter(s, "dht.retries");
	c->rate_limited += bench_counter(s, "dht.rate_limited");
	c->no_route += bench_counter(s, "dht.no_route");
	c->direct += bench_counter(s, "dht.answers_direct");
	c->routed += bench_counter(s, "dht.answers_routed");
	c->stored += bench_counter(s, "dht.stored");
	c->store_failed += bench_counter(s, "dht.store_fails");
	c->answers_lost += bench_counter(s, "dht.answers_lost");
	c->frames_lost += bench_counter(s, "core.frames_lost");
}

int
dbnet_counts(const struct dbnet *net, int i, struct dbnet_counts *ret)
{
	struct bench_counters s;
	int r;

	memset(ret, 0, sizeof(*ret));
	for (unsigned k = 0; k < net->n; k++) {
		if (i >= 0 && (unsigned)i != k)
			continue;
		r = bench_counters_get(net->d[k], &s);
		if (r < 0)
			return r;
		dbnet_counts_add(ret, &s);
		bench_counters_free(&s);
		ret->cpu_ns += bench_cpu_ns(net->d[k]->pid);
	}
	return 0;
}

void
dbnet_counts_sub(const struct dbnet_counts *after,
    const struct dbnet_counts *before, struct dbnet_counts *ret)
{
	const uint64_t *a = (const uint64_t *)after;
	const uint64_t *b = (const uint64_t *)before;
	uint64_t *d = (uint64_t *)ret;

	/* The struct is uint64_t fields only. */
	for (size_t i = 0; i < sizeof(*ret) / sizeof(uint64_t); i++)
		d[i] = a[i] - b[i];
}

double
dbnet_mean_hops(const struct dbnet_counts *delta)
{
	return delta->completed > 0
	    ? (double)delta->hops / (double)delta->completed
	    : NAN;
}

double
db_load(void)
{
	double l = NAN;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f == NULL)
		return NAN;
	if (fscanf(f, "%lf", &l) != 1)
		l = NAN;
	(void)fclose(f);
	return l;
}

/* splitmix64: fast, and distinct streams for distinct (seed, idx). */
static uint64_t
db_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void
db_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t idx)
{
	uint64_t s = seed ^ (idx * 0xd1b54a32d192ed03ull);
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v = db_mix(&s);

		memcpy(buf + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = db_mix(&s);

		memcpy(buf + i, &v, len - i);
	}
}

uint64_t
db_seed(void)
{
	uint64_t s = bench_now_ns() ^ ((uint64_t)getpid() << 32);
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		uint64_t v;

		if (read(fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			s ^= v;
		(void)close(fd);
	}
	return s;
}

static int
db_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
db_quantile(double *v, size_t n, double q)
{
	size_t rank;

	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), db_cmp);
	rank = (size_t)ceil(q * (double)n);
	if (rank < 1)
		rank = 1;
	return v[rank - 1];
}
