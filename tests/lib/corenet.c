/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Several cores in one process over real transports (see corenet.h). */
#include "corenet.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <check.h>
#include <sodium.h>

#include "core/core_cfg.h"
#include "harness.h"
#include "harness_int.h"
#include "lib/cfg.h"
#include "lib/stats.h"
#include "lib/time.h"

#define CORENET_WAKE_US 5000 /* the loop wakes up at least this often */

struct corenet {
	struct event_base *base;	     /* owned */
	struct event *wake;		     /* keeps EVLOOP_ONCE short */
	struct corenet_node *node[CORENET_MAX]; /* owned */
	size_t n;
};

static void
corenet_wake_cb(evutil_socket_t fd, short what, void *cls)
{
	(void)fd;
	(void)what;
	(void)cls;
}

struct corenet *
corenet_new(void)
{
	struct corenet *net = calloc(1, sizeof(*net));
	struct timeval tv;

	ck_assert_ptr_nonnull(net);
	ck_assert_int_ge(sodium_init(), 0);
	/* A peer's stream may close under a write. */
	(void)signal(SIGPIPE, SIG_IGN);
	net->base = event_base_new();
	ck_assert_ptr_nonnull(net->base);
	net->wake = event_new(net->base, -1, EV_PERSIST, corenet_wake_cb, net);
	ck_assert_ptr_nonnull(net->wake);
	time_us_to_tv(CORENET_WAKE_US, &tv);
	ck_assert_int_eq(event_add(net->wake, &tv), 0);
	return net;
}

void
corenet_free(struct corenet *net)
{
	const char *keep = getenv("FERRY_TEST_KEEP");

	if (net == NULL)
		return;
	for (size_t i = 0; i < net->n; i++) {
		struct corenet_node *n = net->node[i];

		core_free(n->core);
		stats_free(n->stats);
		cfg_free(n->cfg);
		if (keep == NULL || *keep == '\0')
			harness_rmtree(n->dir);
		else
			fprintf(stderr, "corenet: kept %s\n", n->dir);
		free(n);
	}
	event_free(net->wake);
	event_base_free(net->base);
	free(net);
}

/* The node whose core has identity id, or NULL. */
static struct corenet_node *
corenet_find(const struct corenet *net, const struct ferry_peer_id *id)
{
	for (size_t i = 0; i < net->n; i++)
		if (memcmp(&net->node[i]->id, id, sizeof(*id)) == 0)
			return net->node[i];
	return NULL;
}

static void
corenet_on_msg(void *cls, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	struct corenet_node *n = cls;
	struct corenet_node *from = corenet_find(n->net, peer);

	ck_assert_ptr_nonnull(from);
	ck_assert_uint_ge(len, 1);
	ck_assert_uint_eq(((const uint8_t *)data)[0], from->index);
	n->rx_msgs++;
	n->rx_from[from->index]++;
	if (type == n->rx_type) {
		n->rx_type_from[from->index]++;
		if (n->rx_when_type == 0)
			n->rx_when_type = n->rx_msgs;
	}
	if (n->on_msg != NULL)
		n->on_msg(n, from, type);
}

static void
corenet_on_drain(void *cls, const struct ferry_peer_id *peer,
    enum core_class qclass)
{
	struct corenet_node *n = cls;

	(void)peer;
	ck_assert_uint_lt(qclass, CORE_NCLASS);
	n->drains[qclass]++;
}

/* The node's configuration: the build's transports ($FERRY_PLUGIN_DIR,
 * as ctest sets it), bound to the node's own port, with loopback peers
 * allowed, then the test's text. */
static void
corenet_configure(struct corenet_node *n, const char *transports,
    const char *extra)
{
	const char *plugins = getenv("FERRY_PLUGIN_DIR");
	char *text;

	if (plugins == NULL || *plugins == '\0')
		plugins = FERRY_PLUGIN_DIR_DEFAULT;
	ck_assert_int_gt(asprintf(&text,
			     "[core]\nTRANSPORTS = %s\nPLUGIN_DIR = %s\n"
			     "[transport-udp]\nBIND_ADDRESS = 127.0.0.1\n"
			     "PORT = %u\nBLACKLIST =\n"
			     "[transport-tcp]\nBIND_ADDRESS = 127.0.0.1\n"
			     "PORT = %u\nBLACKLIST =\n%s",
			     transports, plugins, n->port, n->port,
			     extra != NULL ? extra : ""),
	    0);
	n->cfg = cfg_new();
	ck_assert_ptr_nonnull(n->cfg);
	ck_assert_int_eq(cfg_add_schema(n->cfg, core_cfg_keys), 0);
	ck_assert_int_eq(cfg_add_schema_prefix(n->cfg, "transport-"), 0);
	ck_assert_msg(cfg_load_buffer(n->cfg, "corenet", text, strlen(text)) ==
		0,
	    "%s",
	    cfg_error(n->cfg));
	free(text);
}

struct corenet_node *
corenet_add(struct corenet *net, const char *transports, const char *extra)
{
	struct corenet_node *n = calloc(1, sizeof(*n));
	const char *tmp = getenv("TMPDIR");

	ck_assert_ptr_nonnull(n);
	ck_assert_uint_lt(net->n, CORENET_MAX);
	n->net = net;
	n->index = (unsigned)net->n;
	net->node[net->n++] = n;
	(void)snprintf(n->dir, sizeof(n->dir), "%s/ferry-corenet-XXXXXX",
	    tmp != NULL && *tmp == '/' ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(n->dir));
	ck_assert_int_eq(harness_free_port(&n->port), 0);
	corenet_configure(n, transports, extra);
	n->stats = stats_new();
	ck_assert_ptr_nonnull(n->stats);
	ck_assert_int_eq(core_new(net->base, n->cfg, n->stats, n->dir,
			     &n->core),
	    0);
	n->id = *core_identity(n->core);
	ck_assert_int_eq(core_handler_set(n->core, FERRY_MSG_DHT_MIN, 0xffff,
			     corenet_on_msg, n),
	    0);
	ck_assert_int_eq(core_drain_subscribe(n->core, &n->drain_sub,
	                     corenet_on_drain, n),
	    0);
	ck_assert_int_eq(core_start(n->core), 0);
	return n;
}

void
corenet_introduce(struct corenet_node *a, const struct corenet_node *b)
{
	char *uri;

	ck_assert_int_eq(core_hello_uri(b->core, &uri), 0);
	ck_assert_int_eq(core_add_uri(a->core, uri), 0);
	free(uri);
}

bool
corenet_run_until(struct corenet *net, corenet_cond_fn *fn, void *cls,
    int timeout_ms)
{
	uint64_t end = time_mono_us() + (uint64_t)timeout_ms * 1000;

	for (;;) {
		if (fn != NULL && fn(cls))
			return true;
		if (time_mono_us() >= end)
			return false;
		ck_assert_int_ge(event_base_loop(net->base, EVLOOP_ONCE), 0);
	}
}

void
corenet_run_ms(struct corenet *net, int ms)
{
	(void)corenet_run_until(net, NULL, NULL, ms);
}

struct corenet_seek {
	const struct ferry_peer_id *id; /* looked for */
	bool found;
};

static void
corenet_seek_one(void *cls, const struct core_peer_info *pi)
{
	struct corenet_seek *s = cls;

	if (memcmp(&pi->id, s->id, sizeof(pi->id)) == 0)
		s->found = true;
}

bool
corenet_linked(const struct corenet_node *a, const struct corenet_node *b)
{
	struct corenet_seek s = { &b->id, false };

	core_peers_foreach(a->core, corenet_seek_one, &s);
	return s.found;
}

struct corenet_pair {
	struct corenet_node *a, *b;
};

static bool
corenet_pair_linked(void *cls)
{
	struct corenet_pair *p = cls;

	return corenet_linked(p->a, p->b) && corenet_linked(p->b, p->a);
}

void
corenet_wait_linked(struct corenet_node *a, struct corenet_node *b,
    int timeout_ms)
{
	struct corenet_pair p = { a, b };

	ck_assert_msg(corenet_run_until(a->net, corenet_pair_linked, &p,
			  timeout_ms),
	    "nodes %u and %u did not link within %d ms", a->index, b->index,
	    timeout_ms);
}

uint64_t
corenet_stat(const struct corenet_node *n, const char *name)
{
	return stats_get(n->stats, name);
}

int
corenet_send(struct corenet_node *a, const struct corenet_node *b,
    enum core_class qclass, uint16_t type, size_t len)
{
	static uint8_t body[64 * 1024];

	ck_assert_uint_ge(len, 1);
	ck_assert_uint_le(len, sizeof(body));
	body[0] = (uint8_t)a->index;
	return core_send_class(a->core, &b->id, qclass, type, body, len);
}
