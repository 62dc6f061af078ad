/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's latency runs (see dht_bench.h): one request at a time,
 * PUTs from every daemon in turn, then a GET of each block from another
 * daemon, then (with leaves) from a leaf; the DHT's own counters, summed
 * over the network before and after each phase, give the mean lookup
 * length, and each origin's tell how a request's answers came.
 */
#include "dht_bench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#define DB_LAT_TRIES 256 /* draws of a block's bytes, at most */

/* Where a latency run keeps its requests. */
struct db_lat {
	const struct dbnet *net;
	struct ferry_client *c[DB_MAX_DAEMONS]; /* one per daemon */
	struct ferry_client *lc[DB_MAX_LEAVES]; /* one per leaf */
	size_t size;
	unsigned n;
	uint64_t seed;
	unsigned replication;      /* of the PUTs; 0 the default */
	uint8_t *buf;              /* the block of the moment */
	struct ferry_dht_key *key; /* n of them */
	uint32_t *fill;            /* the db_fill index of block j */
	unsigned *leaf;            /* the leaf that GETs block j */
	struct db_op *op[DB_OPS];  /* n of each */
	FILE *csv;
	const char *tag;
};

static const char *const db_lat_op_name[DB_OPS] = { "put", "get", "lget" };
static const char *const db_path_name[] = { "local", "direct", "routed" };

/* The daemon that gets block j: another than the one that put it. */
static unsigned
db_lat_getter(unsigned n_daemons, unsigned j)
{
	unsigned origin = j % n_daemons;
	unsigned g = (j * 7 + 3) % n_daemons;

	return g == origin ? (g + 1) % n_daemons : g;
}

static void
db_lat_note(struct db_lat *x, enum db_lat_op k, unsigned j,
    const struct db_op *o)
{
	if (x->csv != NULL)
		fprintf(x->csv, "%s,%s,%u,%u,%d,%s,%.4f,%d\n", x->tag,
		    db_lat_op_name[k], j, o->origin, o->hops,
		    o->path == DB_PATH_UNKNOWN ? "?" : db_path_name[o->path],
		    o->ms, o->status);
}

/* Whether id a is closer to key than id b (XOR distance). */
static bool
db_closer(const struct ferry_dht_key *key, const uint8_t *a, const uint8_t *b)
{
	for (size_t i = 0; i < sizeof(key->bytes); i++) {
		uint8_t da = a[i] ^ key->bytes[i], db = b[i] ^ key->bytes[i];

		if (da != db)
			return da < db;
	}
	return false;
}

/* Whether some leaf is among the m ids of the network closest to key. */
static bool
db_leaf_near(const struct dbnet *net, const struct ferry_dht_key *key,
    unsigned m)
{
	for (unsigned l = 0; l < net->n_leaves; l++) {
		const uint8_t *id = net->leaf[l]->id.bytes;
		unsigned closer = 0;

		for (unsigned i = 0; i < net->n; i++)
			closer += db_closer(key, net->d[i]->id.bytes, id);
		for (unsigned i = 0; i < net->n_leaves; i++)
			closer += i != l &&
			    db_closer(key, net->leaf[i]->id.bytes, id);
		if (closer < m)
			return true;
	}
	return false;
}

/* Fills x->buf with block j. With leaves, its bytes are drawn again
 * until no leaf is near its key and a leaf can GET it (dht_bench.h);
 * x->fill[j] and x->leaf[j] say which draw and which leaf. */
static void
db_lat_block(struct db_lat *x, unsigned j)
{
	const struct dbnet *net = x->net;
	unsigned repl = x->replication > 0 ? x->replication : 3;
	struct ferry_dht_key key;

	x->fill[j] = j * DB_LAT_TRIES;
	x->leaf[j] = 0;
	db_fill(x->buf, x->size, x->seed, x->fill[j]);
	if (net->n_leaves == 0)
		return;
	for (unsigned t = 0; t < DB_LAT_TRIES; t++) {
		x->fill[j] = j * DB_LAT_TRIES + t;
		db_fill(x->buf, x->size, x->seed, x->fill[j]);
		(void)ferry_dht_key_of(x->buf, x->size, &key);
		if (db_leaf_near(net, &key, repl + 2))
			continue;
		for (unsigned i = 0; i < net->n_leaves; i++) {
			unsigned l = (j + i) % net->n_leaves;

			if (db_closer(&key, net->d[net->entry[l]]->id.bytes,
			        net->leaf[l]->id.bytes)) {
				x->leaf[j] = l;
				return;
			}
		}
	}
	/* Never seen: kept as it is, its leaf GET may end at the leaf. */
}

/* The origin's dht.hops_total, dht.completed and how many answers came
 * to its requests straight and through other peers. */
struct db_lat_now {
	uint64_t hops, done, direct, routed;
};

static int
db_lat_now(struct ferry_client *c, struct db_lat_now *ret)
{
	struct ferry_stat *st;
	size_t n;
	int r = ferry_stats(c, &st, &n);

	if (r < 0)
		return r;
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, "dht.hops_total") == 0)
			ret->hops = st[i].value;
		else if (strcmp(st[i].name, "dht.completed") == 0)
			ret->done = st[i].value;
		else if (strcmp(st[i].name, "dht.answers_in_direct") == 0)
			ret->direct = st[i].value;
		else if (strcmp(st[i].name, "dht.answers_in_routed") == 0)
			ret->routed = st[i].value;
	ferry_stats_free(st, n);
	return 0;
}

/* Times one request of client c (put or get block j) and notes its
 * hops and how its answers came. */
static void
db_lat_timed(struct db_lat *x, struct ferry_client *c, struct db_op *o,
    bool get, unsigned j, uint8_t **ret_data, size_t *ret_len)
{
	struct db_lat_now a, b;
	int r0 = db_lat_now(c, &a);
	uint64_t t0;

	t0 = bench_now_ns();
	if (get)
		o->status = ferry_dht_get(c, &x->key[j], ret_data, ret_len);
	else
		o->status = ferry_dht_put(c, x->buf, x->size, x->replication, 0,
		    &x->key[j], NULL, NULL);
	o->ms = (double)(bench_now_ns() - t0) / 1e6;
	o->hops = -1;
	o->path = DB_PATH_UNKNOWN;
	if (r0 < 0 || db_lat_now(c, &b) < 0)
		return;
	if (b.done == a.done + 1)
		o->hops = (int)(b.hops - a.hops);
	o->path = b.routed > a.routed ? DB_PATH_ROUTED
	    : b.direct > a.direct     ? DB_PATH_DIRECT
	                              : DB_PATH_LOCAL;
}

static int
db_lat_puts(struct db_lat *x)
{
	for (unsigned j = 0; j < x->n; j++) {
		struct db_op *o = &x->op[DB_OP_PUT][j];

		o->origin = j % x->net->n;
		db_lat_block(x, j);
		db_lat_timed(x, x->c[o->origin], o, false, j, NULL, NULL);
		db_lat_note(x, DB_OP_PUT, j, o);
		/* A connection broken is the run's end, not a sample. */
		if (o->status == -ECONNRESET || o->status == -EPIPE)
			return o->status;
	}
	return 0;
}

/* The GETs of every block put, from another member (k DB_OP_GET) or
 * from a leaf (DB_OP_LGET). */
static int
db_lat_gets(struct db_lat *x, enum db_lat_op k)
{
	for (unsigned j = 0; j < x->n; j++) {
		struct db_op *o = &x->op[k][j];
		struct ferry_client *c;
		uint8_t *data = NULL;
		size_t len = 0;

		if (k == DB_OP_GET) {
			o->origin = db_lat_getter(x->net->n, j);
			c = x->c[o->origin];
		} else {
			o->origin = x->leaf[j];
			c = x->lc[o->origin];
		}
		if (x->op[DB_OP_PUT][j].status != 0) {
			o->status = -ENOENT;
			o->ms = NAN;
			o->hops = -1;
			o->path = DB_PATH_UNKNOWN;
			continue;
		}
		db_lat_timed(x, c, o, true, j, &data, &len);
		/* libferry checked the hash; the bytes must be ours too. */
		if (o->status == 0) {
			db_fill(x->buf, x->size, x->seed, x->fill[j]);
			if (len != x->size || memcmp(data, x->buf, len) != 0)
				o->status = -EBADMSG;
		}
		free(data);
		db_lat_note(x, k, j, o);
		if (o->status == -ECONNRESET || o->status == -EPIPE)
			return o->status;
	}
	return 0;
}

/* True if o counts in class c (-1: all successful requests). */
static bool
db_lat_in(const struct db_op *o, int c)
{
	if (o->status != 0)
		return false;
	if (c < 0)
		return true;
	if (c == DB_CLASS_DIRECT)
		return o->path == DB_PATH_DIRECT;
	if (c == DB_CLASS_ROUTED)
		return o->path == DB_PATH_ROUTED;
	if (c == DB_HOP_CLASSES - 1)
		return o->hops >= c;
	return o->hops == c;
}

/* p50 and p99 of the successful requests of ops of class c (-1: all),
 * into *ret; how many requests failed. */
static unsigned
db_lat_summarize(const struct db_op *ops, unsigned n, int c,
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
		} else if (db_lat_in(&ops[j], c)) {
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

	for (int g = 0; g < DB_OPS; g++) {
		struct db_lat_phase *ph = &ret->op[g];
		struct db_lat_class all;

		if (ph->n == 0)
			continue;
		ph->fail = db_lat_summarize(x->op[g], x->n, -1, &all);
		ph->p50 = all.p50;
		ph->p99 = all.p99;
		if (!isnan(all.hops))
			ph->hops = all.hops;
		for (int c = 0; c < DB_CLASSES; c++)
			(void)db_lat_summarize(x->op[g], x->n, c, &ph->cls[c]);
	}
	ret->p2g_p50 = NAN;
	if (sum == NULL)
		return;
	for (unsigned j = 0; j < x->n; j++)
		if (x->op[DB_OP_PUT][j].status == 0 &&
		    x->op[DB_OP_GET][j].status == 0)
			sum[k++] =
			    x->op[DB_OP_PUT][j].ms + x->op[DB_OP_GET][j].ms;
	ret->p2g_p50 = db_quantile(sum, k, 0.50);
	free(sum);
}

static void
db_lat_free(struct db_lat *x)
{
	for (unsigned i = 0; i < DB_MAX_DAEMONS; i++)
		ferry_client_close(x->c[i]);
	for (unsigned i = 0; i < DB_MAX_LEAVES; i++)
		ferry_client_close(x->lc[i]);
	free(x->buf);
	free(x->key);
	free(x->fill);
	free(x->leaf);
	for (int g = 0; g < DB_OPS; g++)
		free(x->op[g]);
}

static int
db_lat_clients(struct db_lat *x)
{
	const struct dbnet *net = x->net;
	int r = 0;

	for (unsigned i = 0; r == 0 && i < net->n; i++) {
		r = bench_client(net->d[i], false, &x->c[i]);
		if (r == 0)
			ferry_client_set_timeout(x->c[i], 30000);
	}
	for (unsigned i = 0; r == 0 && i < net->n_leaves; i++) {
		r = bench_client(net->leaf[i], false, &x->lc[i]);
		if (r == 0)
			ferry_client_set_timeout(x->lc[i], 30000);
	}
	return r;
}

int
db_latency_run(const struct dbnet *net, size_t size, unsigned n,
    unsigned replication, FILE *ops_csv, const char *tag,
    struct db_lat_run *ret)
{
	struct dbnet_counts c[DB_OPS + 1];
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
	x.fill = calloc(n, sizeof(*x.fill));
	x.leaf = calloc(n, sizeof(*x.leaf));
	for (int g = 0; g < DB_OPS; g++) {
		x.op[g] = calloc(n, sizeof(*x.op[g]));
		if (x.op[g] == NULL)
			r = -ENOMEM;
	}
	if (x.buf == NULL || x.key == NULL || x.fill == NULL || x.leaf == NULL)
		r = -ENOMEM;
	if (r == 0)
		r = db_lat_clients(&x);
	if (r == 0)
		r = dbnet_counts(net, -1, &c[0]);
	if (r == 0)
		r = db_lat_puts(&x);
	if (r == 0)
		r = dbnet_counts(net, -1, &c[1]);
	if (r == 0)
		r = db_lat_gets(&x, DB_OP_GET);
	if (r == 0)
		r = dbnet_counts(net, -1, &c[2]);
	c[3] = c[2];
	if (r == 0 && net->n_leaves > 0) {
		r = db_lat_gets(&x, DB_OP_LGET);
		if (r == 0)
			r = dbnet_counts(net, -1, &c[3]);
		ret->op[DB_OP_LGET].n = n;
	}
	if (r == 0) {
		ret->op[DB_OP_PUT].n = ret->op[DB_OP_GET].n = n;
		for (int g = 0; g < DB_OPS; g++) {
			dbnet_counts_sub(&c[g + 1], &c[g], &ret->op[g].c);
			ret->op[g].hops = dbnet_mean_hops(&ret->op[g].c);
		}
		db_lat_result(&x, ret);
	}
	db_lat_free(&x);
	return r;
}
