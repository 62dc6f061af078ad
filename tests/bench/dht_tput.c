/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_dht's throughput phases (see dht_bench.h): one client process
 * keeps many DHT requests in flight through one daemon. libferry blocks
 * on each request, so each of `jobs` threads has a connection of its own
 * and one request in flight on it (the daemon takes up to 64 per
 * connection; ferry-client(7) would let one connection pipeline them by
 * req_id, and these threads are the same load through the library
 * applications use). Blocks are a unique header on shared random bytes,
 * so that making them costs the client nothing.
 */
#include "dht_bench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the threads of a phase share. */
struct db_tput {
	const struct harness_daemon *d;
	size_t size;
	uint64_t count;
	unsigned replication;
	bool get;
	uint64_t seed;
	const uint8_t *base;       /* size random bytes */
	struct ferry_dht_key *key; /* count of them */
	uint8_t *stored;           /* count of them: PUT ok */
	double *ms;                /* per request; NaN when it failed */
	atomic_uint_fast64_t next; /* the next request to make */
	atomic_uint_fast64_t ok, failed;
	atomic_int first_error;
	atomic_int ready;  /* threads connected */
	atomic_int go;     /* set once all are */
	atomic_int broken; /* a thread could not connect */
};

static void
db_tput_fail(struct db_tput *t, int status)
{
	int zero = 0;

	(void)atomic_compare_exchange_strong(&t->first_error, &zero, status);
	atomic_fetch_add(&t->failed, 1);
}

static int
db_tput_one(struct db_tput *t, struct ferry_client *c, uint8_t *buf, uint64_t i)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int r;

	if (!t->get) {
		/* A header no other block of this run has. */
		memcpy(buf, &t->seed, 8);
		memcpy(buf + 8, &i, 8);
		r = ferry_dht_put(c, buf, t->size, t->replication, 0,
		    &t->key[i], NULL, NULL);
		t->stored[i] = r == 0;
		return r;
	}
	if (!t->stored[i])
		return -ENOENT; /* its PUT failed: not asked for */
	r = ferry_dht_get(c, &t->key[i], &data, &len);
	if (r == 0 && len != t->size)
		r = -EBADMSG; /* the hash matched: the length must too */
	free(data);
	return r;
}

static void *
db_tput_thread(void *arg)
{
	struct db_tput *t = arg;
	struct ferry_client *c = NULL;
	uint8_t *buf = malloc(t->size);
	uint64_t i;
	int r;

	r = buf != NULL ? bench_client(t->d, false, &c) : -ENOMEM;
	if (r < 0)
		atomic_store(&t->broken, -r);
	else
		memcpy(buf, t->base, t->size);
	atomic_fetch_add(&t->ready, 1);
	while (!atomic_load(&t->go))
		harness_sleep_ms(1);
	while (r == 0 && (i = atomic_fetch_add(&t->next, 1)) < t->count) {
		uint64_t t0 = bench_now_ns();
		int s = db_tput_one(t, c, buf, i);

		if (s == 0) {
			t->ms[i] = (double)(bench_now_ns() - t0) / 1e6;
			atomic_fetch_add(&t->ok, 1);
		} else {
			t->ms[i] = NAN;
			db_tput_fail(t, s);
		}
	}
	ferry_client_close(c);
	free(buf);
	return NULL;
}

/* Runs the threads; the phase's time in *ret_secs. */
static int
db_tput_threads(struct db_tput *t, unsigned jobs, double *ret_secs)
{
	pthread_t th[DB_MAX_JOBS];
	unsigned started = 0;
	uint64_t t0 = 0;
	int r = 0;

	for (; started < jobs; started++) {
		r = -pthread_create(&th[started], NULL, db_tput_thread, t);
		if (r < 0)
			break;
	}
	while (atomic_load(&t->ready) < (int)started)
		harness_sleep_ms(1);
	if (r == 0 && atomic_load(&t->broken) != 0) {
		r = -atomic_load(&t->broken);
		atomic_store(&t->next, t->count); /* nothing to do */
	}
	t0 = bench_now_ns();
	atomic_store(&t->go, 1);
	for (unsigned k = 0; k < started; k++)
		(void)pthread_join(th[k], NULL);
	*ret_secs = (double)(bench_now_ns() - t0) / 1e9;
	return r;
}

static void
db_tput_result(struct db_tput *t, double secs, struct db_tput_run *ret)
{
	double *v = malloc((t->count + 1) * sizeof(*v));
	uint64_t k = 0;

	ret->ok = atomic_load(&t->ok);
	ret->failed = atomic_load(&t->failed);
	ret->first_error = atomic_load(&t->first_error);
	ret->secs = secs;
	ret->blocks_s = secs > 0 ? (double)ret->ok / secs : NAN;
	ret->mb_s =
	    secs > 0 ? (double)ret->ok * (double)t->size / secs / 1e6 : NAN;
	ret->p50_ms = ret->p99_ms = NAN;
	if (v == NULL)
		return;
	for (uint64_t i = 0; i < t->count; i++)
		if (!isnan(t->ms[i]))
			v[k++] = t->ms[i];
	ret->p50_ms = db_quantile(v, k, 0.50);
	ret->p99_ms = db_quantile(v, k, 0.99);
	free(v);
}

int
db_tput_run(const struct dbnet *net, unsigned entry, size_t size,
    uint64_t count, unsigned replication, unsigned jobs, bool get,
    struct db_keys *keys, struct db_tput_run *ret)
{
	struct dbnet_counts c0, c1;
	uint64_t self0, self1;
	struct db_tput *t;
	uint8_t *base;
	double secs = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (jobs == 0 || jobs > DB_MAX_JOBS || size < DB_HDR_LEN ||
	    (get && keys->n < count))
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	base = malloc(size);
	if (t == NULL || base == NULL) {
		free(t);
		free(base);
		return -ENOMEM;
	}
	t->d = net->d[entry];
	t->size = size;
	t->count = count;
	t->replication = replication;
	t->get = get;
	t->seed = db_seed();
	db_fill(base, size, t->seed, UINT64_MAX);
	t->base = base;
	t->ms = calloc(count + 1, sizeof(*t->ms));
	if (!get) {
		db_keys_free(keys);
		keys->k = calloc(count + 1, sizeof(*keys->k));
		keys->ok = calloc(count + 1, 1);
		keys->n = count;
	}
	t->key = keys->k;
	t->stored = keys->ok;
	r = t->ms != NULL && t->key != NULL && t->stored != NULL ? 0 : -ENOMEM;
	if (r == 0)
		r = dbnet_counts(net, -1, &c0);
	self0 = bench_cpu_ns(0);
	if (r == 0)
		r = db_tput_threads(t, jobs, &secs);
	self1 = bench_cpu_ns(0);
	if (r == 0)
		r = dbnet_counts(net, -1, &c1);
	if (r == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		dbnet_counts_sub(&c1, &c0, &ret->c);
		db_tput_result(t, secs, ret);
		ret->cpu = (double)(ret->c.cpu_ns + (self1 - self0)) / 1e9 /
		    ((cpus > 0 ? (double)cpus : 1.0) * secs);
	}
	free(t->ms);
	free(t);
	free(base);
	return r;
}

void
db_keys_free(struct db_keys *keys)
{
	free(keys->k);
	free(keys->ok);
	memset(keys, 0, sizeof(*keys));
}
