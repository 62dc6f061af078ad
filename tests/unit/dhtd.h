/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A daemon with a DHT, in a child process, for the tests of the DHT's
 * client side (test_service_dht.c, test_cli_dht.c) while ferryd itself
 * runs none: a core without transports, a one-node DHT whose block store
 * is in memory and whose timeout is short, and the service, on a socket
 * in a scratch directory. dhtd_setup() starts it and connects dhtd.fc;
 * dhtd_teardown() asks it to shut down and fails the test unless it then
 * exits cleanly (no crash, nothing ASan or valgrind saw in it). Included
 * by one test file each, hence static functions.
 */
#ifndef FERRY_TESTS_DHTD_H
#define FERRY_TESTS_DHTD_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <event2/event.h>

#include <ferry/client.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "core/core.h"
#include "core/core_cfg.h"
#include "core/identity.h"
#include "dht/dht.h"
#include "service/service.h"
#include "unit.h"

#define DHTD_BLOCKS_MAX 128
#define DHTD_QUOTA      (64ull << 20)
#define DHTD_TIMEOUT_US (1000u * 1000) /* the DHT's, for -EIO; 300 ms was
					 * too short under valgrind on a loaded
					 * machine (a first PUT timed out) */
#define DHTD_SEED       0x5d

/* A block the child's store holds. */
struct dhtd_block {
	struct dhtkey key; /* BLAKE2b-256 of data */
	uint8_t *data;     /* owned */
	size_t len;
	uint64_t expiry; /* the latest put's */
};

/* The child: a daemon's layers in one process. */
struct dhtd_node {
	struct event_base *base;
	struct cfg *cfg;
	struct stats *stats;
	struct core *core;      /* no transports: the service needs one */
	struct identity *ident; /* the DHT's, from DHTD_SEED */
	struct dht *dht;
	struct service *svc;
	struct event *tick;                        /* dht_tick, every 50 ms */
	struct dhtd_block blocks[DHTD_BLOCKS_MAX]; /* the block store */
	size_t n_blocks;
	uint64_t sink; /* a counter stats could not make */
};

/* A store callback, run from the loop as the real store's are. */
struct dhtd_call {
	struct dhtd_node *td;
	struct dhtkey key;
	dht_store_done_fn *done; /* a put's, or NULL for a get */
	dht_store_got_fn *got;   /* a get's */
	void *arg;
};

/* The test's side. */
static struct {
	char dir[256];               /* scratch directory */
	char socket[256];            /* the daemon's socket in it */
	pid_t pid;                   /* of the child */
	struct ferry_client *fc;     /* connected by dhtd_setup() */
	struct ferry_peer_id dht_id; /* the DHT's identity */
	int keep_fd; /* a raw client left connected at the shutdown, or -1 */
} dhtd;

static int
dhtd_send(void *cls, const struct dhtkey *peer, uint16_t type, const void *body,
    size_t len)
{
	(void)cls;
	(void)peer;
	(void)type;
	(void)body;
	(void)len;
	return -ENOTCONN;
}

static bool
dhtd_linked(void *cls, const struct dhtkey *peer)
{
	(void)cls;
	(void)peer;
	return false;
}

static int
dhtd_link(void *cls, const struct dhtkey *peer, const void *helo, size_t len)
{
	(void)cls;
	(void)peer;
	(void)helo;
	(void)len;
	return -ENOTCONN;
}

static size_t
dhtd_own_helo(void *cls, uint8_t *buf, size_t size)
{
	(void)cls;
	(void)buf;
	(void)size;
	return 0;
}

static size_t
dhtd_peer_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	(void)peer;
	return dhtd_own_helo(cls, buf, size);
}

static uint64_t
dhtd_now(void *cls)
{
	(void)cls;
	return time_mono_us();
}

static uint64_t
dhtd_wall(void *cls)
{
	(void)cls;
	return time_real_s();
}

static struct dhtd_block *
dhtd_find(struct dhtd_node *td, const struct dhtkey *key)
{
	for (size_t i = 0; i < td->n_blocks; i++)
		if (dhtkey_equal(&td->blocks[i].key, key))
			return &td->blocks[i];
	return NULL;
}

static bool
dhtd_has(void *cls, const struct dhtkey *key)
{
	return dhtd_find(cls, key) != NULL;
}

static void
dhtd_call_run(evutil_socket_t fd, short what, void *arg)
{
	struct dhtd_call *call = arg;
	struct dhtd_block *b = dhtd_find(call->td, &call->key);

	(void)fd;
	(void)what;
	if (call->done != NULL)
		call->done(call->arg, 0);
	else if (b != NULL)
		call->got(call->arg, 0, b->data, b->len, b->expiry);
	else
		call->got(call->arg, -ENOENT, NULL, 0, 0);
	free(call);
}

static int
dhtd_defer(struct dhtd_node *td, const struct dhtkey *key,
    dht_store_done_fn *done, dht_store_got_fn *got, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct dhtd_call *call = calloc(1, sizeof(*call));

	if (call == NULL)
		return -ENOMEM;
	*call = (struct dhtd_call){ td, *key, done, got, arg };
	if (event_base_once(td->base, -1, EV_TIMEOUT, dhtd_call_run, call,
	        &now) < 0) {
		free(call);
		return -ENOMEM;
	}
	return 0;
}

static int
dhtd_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct dhtd_node *td = cls;
	struct dhtd_block *b = dhtd_find(td, key);

	if (b == NULL) {
		if (td->n_blocks == DHTD_BLOCKS_MAX)
			return -ENOSPC;
		b = &td->blocks[td->n_blocks];
		b->data = malloc(len);
		if (b->data == NULL)
			return -ENOMEM;
		memcpy(b->data, data, len);
		b->key = *key;
		b->len = len;
		td->n_blocks++;
	}
	if (expiry > b->expiry)
		b->expiry = expiry;
	return dhtd_defer(td, key, done, NULL, arg);
}

static int
dhtd_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got, void *arg)
{
	return dhtd_defer(cls, key, NULL, got, arg);
}

static uint64_t *
dhtd_stat(void *cls, const char *name)
{
	struct dhtd_node *td = cls;
	uint64_t *p = stats_counter2(td->stats, "dht", name);

	return p != NULL ? p : &td->sink;
}

static void
dhtd_usage(void *cls, struct dht_store_usage *ret)
{
	struct dhtd_node *td = cls;

	ret->blocks = td->n_blocks;
	ret->bytes = 0;
	for (size_t i = 0; i < td->n_blocks; i++)
		ret->bytes += td->blocks[i].len;
	ret->quota = DHTD_QUOTA;
}

static void
dhtd_on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	dht_tick(arg);
}

static void
dhtd_on_shutdown(void *cls)
{
	struct dhtd_node *td = cls;

	(void)event_base_loopexit(td->base, NULL);
}

static int
dhtd_dht_new(struct dhtd_node *td)
{
	struct dht_env env = {
		.cls = td,
		.send = dhtd_send,
		.linked = dhtd_linked,
		.link = dhtd_link,
		.own_helo = dhtd_own_helo,
		.peer_helo = dhtd_peer_helo,
		.now_us = dhtd_now,
		.wall_s = dhtd_wall,
		.store_has = dhtd_has,
		.store_put = dhtd_put,
		.store_get = dhtd_get,
		.stat = dhtd_stat,
		.store_usage = dhtd_usage,
	};
	struct dht_cfg cfg;
	uint8_t seed[32];

	memset(seed, DHTD_SEED, sizeof(seed));
	if (identity_from_seed(seed, &td->ident) < 0)
		return -1;
	env.ident = td->ident;
	dht_cfg_default(&cfg);
	cfg.timeout_us = DHTD_TIMEOUT_US;
	/* Its requests go through CSCC's window (all answered here: none
	 * acknowledged by a peer, the credits come back as they end). */
	cfg.congestion = DHT_CC_CSCC;
	return dht_new(&env, &cfg, &td->dht);
}

/* Builds the child's layers; 0, or -1 (said on stderr). */
static int
dhtd_start(struct dhtd_node *td)
{
	static const struct timeval every = { 0, 50 * 1000 };
	char state[300];

	(void)snprintf(state, sizeof(state), "%.256s/state", dhtd.dir);
	td->base = event_base_new();
	td->cfg = cfg_new();
	td->stats = stats_new();
	if (td->base == NULL || td->cfg == NULL || td->stats == NULL ||
	    mkdir(state, 0700) < 0 ||
	    cfg_add_schema(td->cfg, core_cfg_keys) < 0 ||
	    cfg_add_schema(td->cfg, service_cfg_keys) < 0 ||
	    cfg_set(td->cfg, "core", "TRANSPORTS", "") < 0 ||
	    cfg_set(td->cfg, "service", "SOCKET", dhtd.socket) < 0 ||
	    cfg_set(td->cfg, "service", "CLIENT_BUFFER", "64 KiB") < 0 ||
	    core_new(td->base, td->cfg, td->stats, state, &td->core) < 0 ||
	    dhtd_dht_new(td) < 0)
		return -1;
	td->tick = event_new(td->base, -1, EV_PERSIST, dhtd_on_tick, td->dht);
	if (td->tick == NULL || event_add(td->tick, &every) < 0)
		return -1;
	return service_new(td->base, td->cfg, td->stats, td->core, td->dht, NULL,
	    dhtd.dir, dhtd_on_shutdown, td, &td->svc);
}

/* The child's life: up, ready said on ready_fd, serve until SHUTDOWN,
 * down in the daemon's order (the service before the DHT below it). */
static int
dhtd_run(int ready_fd)
{
	static struct dhtd_node td;
	int r;

	log_set_level(FERRY_LOG_ERR);
	r = dhtd_start(&td);
	if (r == 0 && write(ready_fd, "r", 1) != 1)
		r = -1;
	(void)close(ready_fd);
	if (r == 0)
		r = event_base_dispatch(td.base) < 0 ? -1 : 0;
	service_free(td.svc);
	if (td.tick != NULL)
		event_free(td.tick);
	dht_free(td.dht);
	core_free(td.core);
	identity_free(td.ident);
	for (size_t i = 0; i < td.n_blocks; i++)
		free(td.blocks[i].data);
	stats_free(td.stats);
	cfg_free(td.cfg);
	if (td.base != NULL)
		event_base_free(td.base);
	return r;
}

static void
dhtd_setup(void)
{
	uint8_t seed[32];
	struct identity *ident;
	int pipefd[2];
	char c;

	memset(&dhtd, 0, sizeof(dhtd));
	dhtd.keep_fd = -1;
	unit_tmpdir(dhtd.dir, sizeof(dhtd.dir));
	ck_assert_int_lt(snprintf(dhtd.socket, sizeof(dhtd.socket),
	                     "%.200s/ferryd.sock", dhtd.dir),
	    (int)sizeof(dhtd.socket));
	memset(seed, DHTD_SEED, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &ident), 0);
	dhtd.dht_id = ident->id;
	identity_free(ident);
	ck_assert_int_eq(pipe(pipefd), 0);
	dhtd.pid = fork();
	ck_assert_int_ge(dhtd.pid, 0);
	if (dhtd.pid == 0) {
		(void)close(pipefd[0]);
		_exit(dhtd_run(pipefd[1]) == 0 ? 0 : 3);
	}
	(void)close(pipefd[1]);
	ck_assert_msg(read(pipefd[0], &c, 1) == 1, "the daemon did not start");
	(void)close(pipefd[0]);
	ck_assert_int_eq(ferry_client_open(dhtd.socket, &dhtd.fc), 0);
}

/* SHUTDOWN, then the child must exit 0: no crash, no failed check. */
static void
dhtd_teardown(void)
{
	int status = 0;

	ck_assert_int_eq(ferry_shutdown(dhtd.fc), 0);
	ferry_client_close(dhtd.fc);
	ck_assert_int_eq(waitpid(dhtd.pid, &status, 0), dhtd.pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "the daemon ended with status 0x%x", (unsigned)status);
	if (dhtd.keep_fd >= 0)
		(void)close(dhtd.keep_fd);
	unit_rmtree(dhtd.dir);
}

#endif /* FERRY_TESTS_DHTD_H */
