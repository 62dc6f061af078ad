/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT in the daemon (see dhtnode.h), dht layer: starts the block
 * store and the DHT, hands them the core's messages and link events,
 * ticks them, and keeps the routing table across restarts.
 */
#define LOG_TAG "dht"
#include "dht/dhtnode_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "dht/store.h"
#include "lib/buf.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"

#define DHTNODE_SAVE_US  (300u * 1000 * 1000) /* the table, every 5 min */
#define DHTNODE_TABLE_MAX (8u << 20)

/* The network of a peer's address as the core shows it: "a.b.c.d:port"
 * or "[v6]:port"; 0 for others (mail). */
static uint64_t
dhtnode_net_of(const char *address)
{
	const char *s = address, *end;
	char host[256];
	uint8_t a[16];

	if (*s == '[') {
		s++;
		end = strchr(s, ']');
	} else {
		end = strrchr(s, ':');
	}
	if (end == NULL || (size_t)(end - s) >= sizeof(host))
		return 0;
	memcpy(host, s, (size_t)(end - s));
	host[end - s] = '\0';
	if (inet_pton(AF_INET, host, a) == 1)
		return rtable_net_of(a, 4);
	if (inet_pton(AF_INET6, host, a) == 1)
		return rtable_net_of(a, 16);
	return 0;
}

static void
dhtnode_on_peer(void *cls, const struct ferry_peer_id *peer, bool up)
{
	struct dhtnode *n = cls;
	struct core_peer_info pi;
	struct dhtkey k;

	dhtkey_from_peer(peer, &k);
	if (!up) {
		dht_peer_down(n->dht, &k);
		return;
	}
	dht_peer_up(n->dht, &k,
	    core_peer_info(n->core, peer, &pi) == 0 ? dhtnode_net_of(pi.address)
						    : 0);
}

static void
dhtnode_on_message(void *cls, const struct ferry_peer_id *peer,
    uint16_t type, const void *data, size_t len)
{
	struct dhtnode *n = cls;
	struct dhtkey k;

	dhtkey_from_peer(peer, &k);
	dht_receive(n->dht, &k, type, data, len);
}

/* A send queue to peer has room again after refusing a message: BPCC's
 * requests waiting for it go on. */
static void
dhtnode_on_drain(void *cls, const struct ferry_peer_id *peer,
    enum core_class qclass)
{
	struct dhtnode *n = cls;
	struct dhtkey k;

	(void)qclass;
	dhtkey_from_peer(peer, &k);
	dht_drained(n->dht, &k);
}

static void
dhtnode_save(struct dhtnode *n)
{
	struct buf out;
	int r;

	buf_init(&out);
	r = rtable_encode(dht_rtable(n->dht), &out);
	if (r == 0)
		r = fs_write_atomic(n->table_path, buf_head(&out),
		    buf_size(&out), 0600);
	if (r < 0)
		log_warn_errno(r, "cannot save the routing table to %s",
		    n->table_path);
	buf_done(&out);
	n->saved_us = time_mono_us();
}

static void
dhtnode_load(struct dhtnode *n)
{
	uint8_t *data;
	size_t len;
	int r = fs_read_file(n->table_path, DHTNODE_TABLE_MAX, &data, &len);

	if (r == -ENOENT)
		return;
	if (r == 0)
		r = dht_load_table(n->dht, data, len);
	if (r == 0)
		free(data);
	else if (r != -ENOENT) {
		free(data);
		/* A table is only a head start: without it the DHT finds
		 * its peers again from the core's. */
		log_warn_errno(r, "ignoring the routing table in %s",
		    n->table_path);
	}
}

static int
dhtnode_counters_bind(struct dhtnode *n)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct dhtnode_counters, f)
		C(store_blocks), C(store_bytes), C(store_puts),
		C(store_commits), C(store_evicted), C(store_refused),
		C(store_expired), C(store_failed),
#undef C
	};

	return stats_bind_prefix(n->stats, "dht", &n->c, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static void
dhtnode_counters_update(struct dhtnode *n)
{
	struct store_stats st;

	store_stats(n->store, &st);
	*n->c.store_blocks = st.blocks;
	*n->c.store_bytes = st.bytes;
	*n->c.store_puts = st.puts;
	*n->c.store_commits = st.commits;
	*n->c.store_evicted = st.evicted;
	*n->c.store_refused = st.refused;
	*n->c.store_expired = st.expired;
	*n->c.store_failed = st.failed;
}

static void
dhtnode_tick_cb(evutil_socket_t fd, short what, void *cls)
{
	struct dhtnode *n = cls;

	(void)fd;
	(void)what;
	dht_tick(n->dht);
	dhtnode_tick_arm(n, dht_next_deadline_us(n->dht));
	dhtnode_counters_update(n);
	if (time_mono_us() - n->saved_us >= DHTNODE_SAVE_US)
		dhtnode_save(n);
}

static int
dhtnode_open(struct dhtnode *n, const struct dhtnode_cfg *c)
{
	struct dht_env env;
	int r;

	r = store_open(n->base, n->state_dir, core_identity(n->core)->bytes,
	    c->quota, &n->store);
	if (r < 0)
		return r; /* logged by the store, with its path */
	r = dhtnode_counters_bind(n);
	if (r < 0)
		return r;
	dhtnode_counters_update(n);
	/* Whom to link to is ours to say, unless LINK_POLICY = core. */
	n->links_chosen = core_links_claim(n->core) == 0;
	/* BPCC holds peers through an account of its own. */
	if (c->dht.congestion == DHT_CC_BPCC) {
		r = core_rx_account_new(n->core, &n->rx);
		if (r < 0)
			return r;
	}
	dhtnode_env_fill(n, &env);
	r = dht_new(&env, &c->dht, &n->dht);
	if (r < 0)
		return r;
	r = core_handler_set(n->core, FERRY_MSG_DHT_MIN,
	    FERRY_MSG_STORAGE_MIN - 1, dhtnode_on_message, n);
	if (r < 0)
		return r;
	n->handler_set = true;
	r = core_peer_subscribe(n->core, &n->peer_sub, dhtnode_on_peer, n);
	if (r < 0)
		return r;
	r = core_drain_subscribe(n->core, &n->drain_sub, dhtnode_on_drain, n);
	if (r < 0)
		return r;
	n->ev_tick = event_new(n->base, -1, EV_PERSIST, dhtnode_tick_cb, n);
	if (n->ev_tick == NULL || dhtnode_tick_arm(n, UINT64_MAX) < 0)
		return -ENOMEM;
	n->saved_us = time_mono_us();
	return 0;
}

int
dhtnode_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    struct core *core, const char *state_dir, struct dhtnode **ret)
{
	struct dhtnode_cfg c;
	struct dhtnode *n;
	int r = dhtnode_cfg_parse(cfg, &c);

	if (r < 0)
		return r;
	if (!c.enable) {
		log_notice("the DHT is off ([dht] ENABLE = no)");
		*ret = NULL;
		return 0;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	n->base = base;
	n->core = core;
	n->stats = stats;
	if (fs_path_join(n->state_dir, sizeof(n->state_dir), state_dir, "") <
	        0 ||
	    fs_path_join(n->table_path, sizeof(n->table_path), state_dir,
	        DHTNODE_TABLE_FILE) < 0) {
		free(n);
		return -ENAMETOOLONG;
	}
	r = dhtnode_open(n, &c);
	if (r < 0) {
		log_err_errno(r, "cannot start the DHT");
		dhtnode_free(n);
		return r;
	}
	*ret = n;
	return 0;
}

int
dhtnode_start(struct dhtnode *n)
{
	if (n != NULL)
		dhtnode_load(n);
	return 0;
}

int
dhtnode_reload(struct dhtnode *n, struct cfg *cfg)
{
	struct dhtnode_cfg c;
	int r = dhtnode_cfg_parse(cfg, &c);

	if (r < 0 || n == NULL)
		return r;
	if (!c.enable)
		log_notice("[dht] ENABLE takes effect after a restart");
	if (n->dht != NULL &&
	    c.dht.congestion != dht_config(n->dht)->congestion)
		log_notice("[dht] CONGESTION takes effect after a restart");
	return dht_set_cfg(n->dht, &c.dht);
}

void
dhtnode_free(struct dhtnode *n)
{
	if (n == NULL)
		return;
	if (n->ev_tick != NULL)
		event_free(n->ev_tick);
	core_unsubscribe(&n->peer_sub);
	core_unsubscribe(&n->drain_sub);
	if (n->handler_set)
		core_handler_unset(n->core, FERRY_MSG_DHT_MIN,
		    FERRY_MSG_STORAGE_MIN - 1);
	if (n->dht != NULL)
		dhtnode_save(n);
	/* The store goes first: its last callbacks answer through the DHT,
	 * which must still be there, and may not reach the store again. */
	n->store_closing = true;
	store_free(n->store);
	dht_free(n->dht);
	/* After the DHT, which lets go of its holds through it. */
	core_rx_account_free(n->rx);
	free(n);
}

struct dht *
dhtnode_dht(struct dhtnode *n)
{
	return n != NULL ? n->dht : NULL;
}

struct store *
dhtnode_store(struct dhtnode *n)
{
	return n != NULL ? n->store : NULL;
}
