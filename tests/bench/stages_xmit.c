/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transmit stage of seed 001's Fig. 3 for bench_stages (see
 * stages_bench.h and tests/bench/README): the file's sealed blocks put
 * into the DHT of two real ferryd, each on its own 127.0.0.N and linked
 * over UDP, from clients of the first, with replication 2: each block is
 * stored, durably, by both daemons, one of them across the link, and its
 * put ends with both receipts, as a put of the transfer engine's does. A
 * window of blocks in flight, each on a client connection of its own
 * (threads), as the engine keeps several in flight; a put that fails is
 * put again, as the engine does (a loaded disk can hold a receipt past
 * the DHT's attempts, which then drop the slow peer from the table until
 * a refresh finds it again), and counted. Timed by the clock: this stage
 * waits on the link, the other daemon and two block stores, not on this
 * process's CPU.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ferry/client.h>
#include <ferry/proto.h>

#include "dht_bench.h"
#include "stages_bench.h"

/* Blocks of up to the largest a DHT message carries; every run's blocks
 * kept, for an hour (each run puts blocks of its own: stages.c salts
 * them apart); the tables refreshed, which dbnet_start turns off. */
#define SG_XMIT_CFG                                                            \
	"[dht]\nMAX_BLOCK = 4 MiB\nQUOTA = 64 GiB\nORIGIN_QUOTA = 0\n"
#define SG_XMIT_REFRESH "[dht]\nREFRESH_INTERVAL = 2 s\n"
#define SG_XMIT_LIFE_S  3600
#define SG_XMIT_TRIES   8             /* puts of one block, at most */
#define SG_XMIT_PAUSE   (250u * 1000) /* us between them */

struct sg_xmit {
	struct dbnet net;
	unsigned window;
};

/* What the window's threads share. */
struct sg_xmit_run {
	const struct sg_xmit *x;
	const struct sg_blocks *b;
	atomic_size_t next;  /* the next block to put */
	atomic_int status;   /* the first failure, or 0 */
	atomic_uint retries; /* puts again after a failure */
	uint64_t expiry;
};

int
sg_xmit_start(unsigned window, struct sg_xmit **ret)
{
	struct sg_xmit *x = calloc(1, sizeof(*x));
	int r;

	if (x == NULL)
		return -ENOMEM;
	x->window = window;
	r = dbnet_start(&x->net, "bench-stages", 2, "udp", 0, SG_XMIT_CFG,
	    60000);
	if (r < 0) {
		free(x);
		return r;
	}
	for (unsigned i = 0; r == 0 && i < 2; i++) {
		r = harness_daemon_config(x->net.d[i], "%s", SG_XMIT_REFRESH);
		if (r == 0)
			r = harness_daemon_reload(x->net.d[i]);
	}
	if (r < 0) {
		sg_xmit_stop(x);
		return r;
	}
	*ret = x;
	return 0;
}

void
sg_xmit_stop(struct sg_xmit *x)
{
	if (x == NULL)
		return;
	dbnet_free(&x->net);
	free(x);
}

static void *
sg_xmit_thread(void *arg)
{
	struct sg_xmit_run *run = arg;
	struct ferry_client *c;
	struct ferry_dht_key key;
	size_t i;
	int r = ferry_client_open(run->x->net.d[0]->socket, &c);

	if (r < 0) {
		atomic_store(&run->status, r);
		return NULL;
	}
	while (atomic_load(&run->status) == 0 &&
	    (i = atomic_fetch_add(&run->next, 1)) < run->b->n) {
		for (unsigned t = 0; t < SG_XMIT_TRIES; t++) {
			if (t > 0) {
				atomic_fetch_add(&run->retries, 1);
				(void)usleep(SG_XMIT_PAUSE);
			}
			r = ferry_dht_put(c, run->b->data[i], run->b->len[i], 2,
			    run->expiry, &key, NULL, NULL);
			if (r != -EHOSTUNREACH && r != -ETIMEDOUT &&
			    r != -EIO && r != -EAGAIN)
				break;
		}
		if (r < 0) {
			int none = 0;

			(void)atomic_compare_exchange_strong(&run->status,
			    &none, r);
		}
	}
	ferry_client_close(c);
	return NULL;
}

int
sg_xmit_run(struct sg_xmit *x, const struct sg_blocks *b, double *ret_secs,
    unsigned *ret_retries)
{
	pthread_t th[SG_XMIT_WINDOW_MAX];
	struct sg_xmit_run run = { .x = x, .b = b };
	struct timespec t0, t1;
	unsigned n = 0;

	atomic_init(&run.next, 0);
	atomic_init(&run.status, 0);
	atomic_init(&run.retries, 0);
	run.expiry = (uint64_t)time(NULL) + SG_XMIT_LIFE_S;
	(void)clock_gettime(CLOCK_MONOTONIC, &t0);
	for (; n < x->window; n++)
		if (pthread_create(&th[n], NULL, sg_xmit_thread, &run) != 0) {
			atomic_store(&run.status, -EAGAIN);
			break;
		}
	for (unsigned i = 0; i < n; i++)
		(void)pthread_join(th[i], NULL);
	(void)clock_gettime(CLOCK_MONOTONIC, &t1);
	*ret_secs = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	*ret_retries = atomic_load(&run.retries);
	return atomic_load(&run.status);
}
