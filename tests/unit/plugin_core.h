/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A small core for transport plugin tests: the core side of the ABI in
 * include/ferry/transport.h, with its own event loop, config table,
 * counters and a record of what the plugin delivered. test_udp.c and
 * test_tcp.c load the real libtransport_*.so from $FERRY_PLUGIN_DIR with
 * it. Included by one test file each, hence static functions.
 */
#ifndef FERRY_TESTS_PLUGIN_CORE_H
#define FERRY_TESTS_PLUGIN_CORE_H

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <check.h>

#include <ferry/transport.h>

#define PC_CFG_MAX	24
#define PC_STATS_MAX	48
#define PC_GONE_MAX	64
#define PC_UNIT_MAX	(1024 * 1024 + 64)

struct pc;
typedef void pc_receive_fn(struct pc *pc, const struct ferry_message_pack *mp);

struct pc {
	struct ferry_core_api api;	  /* what the plugin sees */
	struct ferry_peer_id id;	  /* this core's identity */
	int log_level;			  /* *api.log_level */
	const char *cfg[PC_CFG_MAX][2];	  /* key, value */
	size_t n_cfg;
	struct {
		char name[48];
		uint64_t value;
	} stats[PC_STATS_MAX];
	size_t n_stats;
	char log[2048];			  /* every line, '\n'-separated */
	void *dl;			  /* dlopen handle */
	done_transport_fn *done;
	struct ferry_transport_api *t;	  /* the plugin's API */
	/* what arrived */
	unsigned n_rx;
	uint64_t rx_bytes;
	struct ferry_tsession *last_ts;
	uint8_t *last;			  /* last unit's bytes */
	size_t last_len;
	bool last_has_sender;
	struct ferry_peer_id last_sender;
	uint8_t last_src[16];
	size_t last_src_len;
	pc_receive_fn *on_receive;	  /* optional hook, after recording */
	struct ferry_tsession *gone[PC_GONE_MAX];
	unsigned n_gone;
	unsigned n_ready;
	struct ferry_tsession *ready_ts;
};

static void
pc_receive(void *cls, const struct ferry_message_pack *mp)
{
	struct pc *pc = cls;

	ck_assert_ptr_nonnull(mp->ts);
	ck_assert_uint_le(mp->len, PC_UNIT_MAX);
	pc->n_rx++;
	pc->rx_bytes += mp->len;
	pc->last_ts = mp->ts;
	memcpy(pc->last, mp->msg, mp->len);
	pc->last_len = mp->len;
	pc->last_has_sender = mp->sender != NULL;
	if (mp->sender != NULL)
		pc->last_sender = *mp->sender;
	ck_assert_uint_le(mp->src_len, sizeof(pc->last_src));
	memcpy(pc->last_src, mp->src, mp->src_len);
	pc->last_src_len = mp->src_len;
	if (pc->on_receive != NULL)
		pc->on_receive(pc, mp);
}

static void
pc_session_gone(void *cls, struct ferry_tsession *ts)
{
	struct pc *pc = cls;

	ck_assert_uint_lt(pc->n_gone, PC_GONE_MAX);
	pc->gone[pc->n_gone++] = ts;
}

static void
pc_send_ready(void *cls, struct ferry_tsession *ts)
{
	struct pc *pc = cls;

	pc->n_ready++;
	pc->ready_ts = ts;
}

static const char *
pc_cfg_get(void *cls, const char *key)
{
	struct pc *pc = cls;

	for (size_t i = 0; i < pc->n_cfg; i++)
		if (strcmp(pc->cfg[i][0], key) == 0)
			return pc->cfg[i][1];
	return NULL;
}

static void pc_vlog(void *cls, int level, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void
pc_vlog(void *cls, int level, const char *fmt, va_list ap)
{
	struct pc *pc = cls;
	size_t used = strlen(pc->log);
	char line[512];

	(void)vsnprintf(line, sizeof(line), fmt, ap);
	if (getenv("FERRY_TEST_VERBOSE") != NULL)
		fprintf(stderr, "[%d] %s\n", level, line);
	(void)snprintf(pc->log + used, sizeof(pc->log) - used, "%s\n", line);
}

static uint64_t *
pc_stat(void *cls, const char *name)
{
	struct pc *pc = cls;

	for (size_t i = 0; i < pc->n_stats; i++)
		if (strcmp(pc->stats[i].name, name) == 0)
			return &pc->stats[i].value;
	ck_assert_uint_lt(pc->n_stats, PC_STATS_MAX);
	(void)snprintf(pc->stats[pc->n_stats].name,
	    sizeof(pc->stats[0].name), "%s", name);
	return &pc->stats[pc->n_stats++].value;
}

/* Value of a counter, 0 if the plugin never made it. */
static inline uint64_t
pc_get(const struct pc *pc, const char *name)
{
	for (size_t i = 0; i < pc->n_stats; i++)
		if (strcmp(pc->stats[i].name, name) == 0)
			return pc->stats[i].value;
	return 0;
}

/* A core on base (NULL base: stub mode, no receive). id_byte fills id. */
static inline void
pc_init(struct pc *pc, struct event_base *base, uint8_t id_byte)
{
	memset(pc, 0, sizeof(*pc));
	pc->last = malloc(PC_UNIT_MAX);
	ck_assert_ptr_nonnull(pc->last);
	memset(&pc->id, id_byte, sizeof(pc->id));
	pc->log_level = FERRY_LOG_DEBUG;
	pc->api.abi_version = FERRY_TRANSPORT_ABI_VERSION;
	pc->api.size = sizeof(pc->api);
	pc->api.cls = pc;
	pc->api.my_identity = &pc->id;
	pc->api.base = base;
	pc->api.receive = base != NULL ? pc_receive : NULL;
	pc->api.session_gone = base != NULL ? pc_session_gone : NULL;
	pc->api.send_ready = base != NULL ? pc_send_ready : NULL;
	pc->api.cfg_get = pc_cfg_get;
	pc->api.vlog = pc_vlog;
	pc->api.stat = pc_stat;
	pc->api.log_level = &pc->log_level;
}

/* Sets a key of the transport's section (value borrowed). */
static inline void
pc_set(struct pc *pc, const char *key, const char *value)
{
	for (size_t i = 0; i < pc->n_cfg; i++) {
		if (strcmp(pc->cfg[i][0], key) == 0) {
			pc->cfg[i][1] = value;
			return;
		}
	}
	ck_assert_uint_lt(pc->n_cfg, PC_CFG_MAX);
	pc->cfg[pc->n_cfg][0] = key;
	pc->cfg[pc->n_cfg][1] = value;
	pc->n_cfg++;
}

/* Loads $FERRY_PLUGIN_DIR/libtransport_<name>.so and calls its
 * init_transport. Returns pc->t (NULL if init failed). */
static inline struct ferry_transport_api *
pc_load(struct pc *pc, const char *name)
{
	const char *dir = getenv("FERRY_PLUGIN_DIR");
	init_transport_fn *init;
	char path[512];

	ck_assert_msg(dir != NULL, "FERRY_PLUGIN_DIR is not set");
	(void)snprintf(path, sizeof(path), "%s/libtransport_%s.so", dir,
	    name);
	pc->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(pc->dl != NULL, "dlopen %s: %s", path, dlerror());
	*(void **)&init = dlsym(pc->dl, "init_transport");
	*(void **)&pc->done = dlsym(pc->dl, "done_transport");
	ck_assert_ptr_nonnull(init);
	ck_assert_ptr_nonnull(pc->done);
	pc->t = init(&pc->api);
	return pc->t;
}

/* done_transport, dlclose, and the core's own memory. */
static inline void
pc_unload(struct pc *pc)
{
	if (pc->t != NULL)
		pc->done(pc->t);
	pc->t = NULL;
	if (pc->dl != NULL)
		(void)dlclose(pc->dl);
	pc->dl = NULL;
	free(pc->last);
	pc->last = NULL;
}

/* The transport's HELO address (create_helo must succeed). */
static inline size_t
pc_helo(struct pc *pc, uint8_t *addr, size_t max)
{
	size_t len = 0;

	ck_assert_int_eq(pc->t->create_helo(pc->t->cls, addr, max, &len), 0);
	return len;
}

typedef bool pc_cond_fn(void *arg);

static void
pc_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Runs base until cond(arg) holds or timeout_ms pass. */
static inline bool
pc_run_until(struct event_base *base, pc_cond_fn *cond, void *arg,
    int timeout_ms)
{
	struct timespec start, now;
	struct timeval tick = { 0, 5000 };
	struct event *ev = event_new(base, -1, EV_PERSIST, pc_tick, NULL);
	bool ok = false;

	ck_assert_ptr_nonnull(ev);
	(void)event_add(ev, &tick); /* bounds each EVLOOP_ONCE round */
	(void)clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (cond(arg)) {
			ok = true;
			break;
		}
		(void)clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 +
		    (now.tv_nsec - start.tv_nsec) / 1000000 > timeout_ms)
			break;
		(void)event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(ev);
	return ok;
}

/* Runs base for ms milliseconds. */
static inline void
pc_run_for(struct event_base *base, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	(void)event_base_loopexit(base, &tv);
	(void)event_base_dispatch(base);
}

/* Open descriptors of this process. */
static inline int
pc_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	(void)closedir(d);
	return n;
}

/* Whether the log holds s. */
static inline bool
pc_logged(const struct pc *pc, const char *s)
{
	return strstr(pc->log, s) != NULL;
}

/* Writes a HELO address for a text address such as "127.0.0.1:9". */
static inline size_t
pc_addr(struct pc *pc, const char *text, uint8_t *out)
{
	/* The plugin reads its own form back: build it by hand. */
	unsigned a, b, c, d, port;

	(void)pc;
	ck_assert_int_eq(sscanf(text, "%u.%u.%u.%u:%u", &a, &b, &c, &d,
	    &port), 5);
	out[0] = 4;
	out[1] = (uint8_t)a;
	out[2] = (uint8_t)b;
	out[3] = (uint8_t)c;
	out[4] = (uint8_t)d;
	out[5] = (uint8_t)(port >> 8);
	out[6] = (uint8_t)port;
	return 7;
}

#endif /* FERRY_TESTS_PLUGIN_CORE_H */
