/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's latency runs (see dht_bench.h): one request at a time,
 * PUTs from every daemon in turn, then a GET of each block from another
 * daemon; the DHT's own counters, summed over the network before and
 * after each phase, give the mean lookup length.
 */
#include "dht_bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

/* Where a latency run keeps its requests. */
struct db_lat {
	const struct dbnet *net;
	struct ferry_client *c[DB_MAX_DAEMONS]; /* one per daemon */
	size_t size;
	unsigned n;
	uint64_t seed;
	unsigned replication;      /* of the PUTs; 0 the default */
	uint8_t *buf;              /* the block of the moment */
	struct ferry_dht_key *key; /* n of them */
	struct db_op *put, *get;   /* n of each */
	FILE *csv;
	const char *tag;
};

/* The daemon that gets block j: another than the one that put it. */
static unsigned
db_lat_getter(unsigned n_daemons, unsigned j)
{
	unsigned origin = j % n_daemons;
	unsigned g = (j * 7 + 3) % n_daemons;

	return g == origin ? (g + 1) % n_daemons : g;
}

static void
db_lat_note(struct db_lat *x, const char *op, unsigned j, const struct db_op *o)
{
	if (x->csv != NULL)
		fprintf(x->csv, "%s,%s,%u,%u,%d,%.4f,%d\n", x->tag, op, j,
		    o->origin, o->hops, o->ms, o->status);
}

/* The origin's dht.hops_total and dht.completed now. */
static int
db_lat_hops_now(struct ferry_client *c, uint64_t *ret_hops, uint64_t *ret_done)
{
	struct ferry_stat *st;
	size_t n;
	int r = ferry_stats(c, &st, &n);

	if (r < 0)
		return r;
	*ret_hops = *ret_done = 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, "dht.hops_total") == 0)
			*ret_hops = st[i].value;
		else if (strcmp(st[i].name, "dht.completed") == 0)
			*ret_done = st[i].value;
	ferry_stats_free(st, n);
	return 0;
}

/* Times one request of o->origin's (put or get block j) and notes its
 * hops. */
static void
db_lat_timed(struct db_lat *x, struct db_op *o, bool get, unsigned j,
    uint8_t **ret_data, size_t *ret_len)
{
	struct ferry_client *c = x->c[o->origin];
	uint64_t h0 = 0, n0 = 0, h1 = 0, n1 = 0, t0;
	int r0 = db_lat_hops_now(c, &h0, &n0);

	t0 = bench_now_ns();
	if (get)
		o->status = ferry_dht_get(c, &x->key[j], ret_data, ret_len);
	else
		o->status = ferry_dht_put(c, x->buf, x->size, x->replication, 0,
		    &x->key[j], NULL, NULL);
	o->ms = (double)(bench_now_ns() - t0) / 1e6;
	o->hops = -1;
	if (r0 == 0 && db_lat_hops_now(c, &h1, &n1) == 0 && n1 == n0 + 1)
		o->hops = (int)(h1 - h0);
}

static int
db_lat_puts(struct db_lat *x)
{
	for (unsigned j = 0; j < x->n; j++) {
		struct db_op *o = &x->put[j];

		o->origin = j % x->net->n;
		db_fill(x->buf, x->size, x->seed, j);
		db_lat_timed(x, o, false, j, NULL, NULL);
		db_lat_note(x, "put", j, o);
		/* A connection broken is the run's end, not a sample. */
		if (o->status == -ECONNRESET || o->status == -EPIPE)
			return o->status;
	}
	return 0;
}

static int
db_lat_gets(struct db_lat *x)
{
	for (unsigned j = 0; j < x->n; j++) {
		struct db_op *o = &x->get[j];
		uint8_t *data = NULL;
		size_t len = 0;

		o->origin = db_lat_getter(x->net->n, j);
		if (x->put[j].status != 0) {
			o->status = -ENOENT;
			o->ms = NAN;
			o->hops = -1;
			continue;
		}
		db_lat_timed(x, o, true, j, &data, &len);
		/* libferry checked the hash; the bytes must be ours too. */
		if (o->status == 0) {
			db_fill(x->buf, x->size, x->seed, j);
			if (len != x->size || memcmp(data, x->buf, len) != 0)
				o->status = -EBADMSG;
		}
		free(data);
		db_lat_note(x, "get", j, o);
		if (o->status == -ECONNRESET || o->status == -EPIPE)
			return o->status;
	}
	return 0;
}

/* True if ops[j] counts in class h (-1: all successful requests). */
static bool
db_lat_in(const struct db_op *o, int h)
{
	if (o->status != 0)
		return false;
	if (h < 0)
		return true;
	if (h == DB_HOP_CLASSES - 1)
		return o->hops >= h;
	return o->hops == h;
}

/* p50 and p99 of the successful requests of ops of class h (-1: all),
 * into *ret; how many requests failed. */
static unsigned
db_lat_summarize(const struct db_op *ops, unsigned n, int h,
    struct db_lat_class *ret)
{
	double *v = calloc(n + 1, sizeof(*v));
	unsigned k = 0, failed = 0, known = 0;
	double hops = 0;

	ret->n = 0;
	ret->p50 = ret->p99 = ret->hops = NAN;
	if (v == NULL)
		return n;
	for (unsigned j = 0; j < n; j++) {
		if (ops[j].status != 0) {
			failed++;
		} else if (db_lat_in(&ops[j], h)) {
			v[k++] = ops[j].ms;
			if (ops[j].hops >= 0) {
				hops += ops[j].hops;
				known++;
			}
		}
	}
	ret->n = k;
	if (known > 0)
		ret->hops = hops / known;
	ret->p50 = db_quantile(v, k, 0.50);
	ret->p99 = db_quantile(v, k, 0.99);
	free(v);
	return failed;
}

static void
db_lat_result(struct db_lat *x, struct db_lat_run *ret)
{
	double *sum = calloc(x->n + 1, sizeof(*sum));
	unsigned k = 0;

	struct db_lat_class all;

	ret->put_fail = db_lat_summarize(x->put, x->n, -1, &all);
	ret->put_p50 = all.p50;
	ret->put_p99 = all.p99;
	if (!isnan(all.hops))
		ret->put_hops = all.hops;
	ret->get_fail = db_lat_summarize(x->get, x->n, -1, &all);
	ret->get_p50 = all.p50;
	ret->get_p99 = all.p99;
	if (!isnan(all.hops))
		ret->get_hops = all.hops;
	for (int h = 0; h < DB_HOP_CLASSES; h++) {
		(void)db_lat_summarize(x->put, x->n, h, &ret->put_h[h]);
		(void)db_lat_summarize(x->get, x->n, h, &ret->get_h[h]);
	}
	ret->p2g_p50 = NAN;
	if (sum == NULL)
		return;
	for (unsigned j = 0; j < x->n; j++)
		if (x->put[j].status == 0 && x->get[j].status == 0)
			sum[k++] = x->put[j].ms + x->get[j].ms;
	ret->p2g_p50 = db_quantile(sum, k, 0.50);
	free(sum);
}

static void
db_lat_free(struct db_lat *x)
{
	for (unsigned i = 0; i < DB_MAX_DAEMONS; i++)
		ferry_client_close(x->c[i]);
	free(x->buf);
	free(x->key);
	free(x->put);
	free(x->get);
}

int
db_latency_run(const struct dbnet *net, size_t size, unsigned n,
    unsigned replication, FILE *ops_csv, const char *tag,
    struct db_lat_run *ret)
{
	struct dbnet_counts c0, c1, c2;
	struct db_lat x;
	int r = 0;

	memset(&x, 0, sizeof(x));
	memset(ret, 0, sizeof(*ret));
	x.net = net;
	x.size = size;
	x.n = n;
	x.seed = db_seed();
	x.replication = replication;
	x.csv = ops_csv;
	x.tag = tag;
	x.buf = malloc(size);
	x.key = calloc(n, sizeof(*x.key));
	x.put = calloc(n, sizeof(*x.put));
	x.get = calloc(n, sizeof(*x.get));
	if (x.buf == NULL || x.key == NULL || x.put == NULL || x.get == NULL)
		r = -ENOMEM;
	for (unsigned i = 0; r == 0 && i < net->n; i++) {
		r = bench_client(net->d[i], false, &x.c[i]);
		if (r == 0)
			ferry_client_set_timeout(x.c[i], 30000);
	}
	if (r == 0)
		r = dbnet_counts(net, -1, &c0);
	if (r == 0)
		r = db_lat_puts(&x);
	if (r == 0)
		r = dbnet_counts(net, -1, &c1);
	if (r == 0)
		r = db_lat_gets(&x);
	if (r == 0)
		r = dbnet_counts(net, -1, &c2);
	if (r == 0) {
		dbnet_counts_sub(&c1, &c0, &ret->put_c);
		dbnet_counts_sub(&c2, &c1, &ret->get_c);
		ret->put_hops = dbnet_mean_hops(&ret->put_c);
		ret->get_hops = dbnet_mean_hops(&ret->get_c);
		db_lat_result(&x, ret);
	}
	db_lat_free(&x);
	return r;
}
