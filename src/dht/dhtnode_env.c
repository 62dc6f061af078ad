/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the DHT needs of the daemon (struct dht_env), dht layer: the
 * core's links and messages, its identity, the block store and the
 * counters. The simulator of a later issue fills the same struct with a
 * network of its own.
 */
#include "dht/dhtnode_int.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "dht/store.h"
#include "dht/store_records.h"
#include "lib/stats.h"
#include "lib/time.h"

/* Requests and small answers overtake bulk data queued to the same
 * peer; blocks travel as bulk, behind the ACK sent ahead of them. */
#define DHTNODE_CONTROL_MAX DHTMSG_ACK_OVER

static struct ferry_peer_id
dhtnode_id(const struct dhtkey *k)
{
	struct ferry_peer_id id;

	dhtkey_to_peer(k, &id);
	return id;
}

static int
dhtnode_send(void *cls, const struct dhtkey *peer, uint16_t type,
    const void *body, size_t len)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);

	enum core_class qclass =
	    len <= DHTNODE_CONTROL_MAX ? CORE_CLASS_CONTROL : CORE_CLASS_BULK;
	int r = core_send_class(n->core, &id, qclass, type, body, len);

	/* An answer never waits for requests (BPCC, seed 002 section 3.3):
	 * when requests fill the control class, it goes as bulk, which the
	 * core serves however many requests wait. */
	if (r == -EAGAIN && qclass == CORE_CLASS_CONTROL &&
	    dhtmsg_is_answer(type))
		r = core_send_class(n->core, &id, CORE_CLASS_BULK, type, body,
		    len);
	return r;
}

static bool
dhtnode_linked(void *cls, const struct dhtkey *peer)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);
	uint64_t bytes;

	return core_peer_queue_bytes(n->core, &id, CORE_CLASS_CONTROL,
	           &bytes) == 0;
}

static int
dhtnode_link(void *cls, const struct dhtkey *peer, const void *helo,
    size_t helo_len)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);
	int r;

	if (helo_len > 0) {
		r = core_learn_helo(n->core, NULL, helo, helo_len);
		if (r < 0)
			return r;
	}
	return core_link(n->core, &id);
}

static int
dhtnode_unlink(void *cls, const struct dhtkey *peer)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);

	return core_unlink(n->core, &id);
}

static bool
dhtnode_may_unlink(void *cls, const struct dhtkey *peer)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);
	struct core_peer_info pi;

	return core_peer_info(n->core, &id, &pi) == 0 && pi.asked &&
	    !pi.pinned;
}

static size_t
dhtnode_helos(struct dhtnode *n, const struct ferry_peer_id *id,
    uint8_t *buf, size_t size)
{
	size_t len;

	return core_peer_helos(n->core, id, buf, size, &len) == 0 ? len : 0;
}

static size_t
dhtnode_own_helo(void *cls, uint8_t *buf, size_t size)
{
	struct dhtnode *n = cls;

	return dhtnode_helos(n, core_identity(n->core), buf, size);
}

static size_t
dhtnode_peer_helo(void *cls, const struct dhtkey *peer, uint8_t *buf,
    size_t size)
{
	struct ferry_peer_id id = dhtnode_id(peer);

	return dhtnode_helos(cls, &id, buf, size);
}

static uint64_t
dhtnode_now(void *cls)
{
	(void)cls;
	return time_mono_us();
}

static uint64_t
dhtnode_wall(void *cls)
{
	(void)cls;
	return (uint64_t)time(NULL);
}

static bool
dhtnode_has(void *cls, const struct dhtkey *key)
{
	struct dhtnode *n = cls;

	return !n->store_closing && store_has(n->store, key->b);
}

static int
dhtnode_put(void *cls, const struct dhtkey *key, const void *data,
    size_t len, uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct dhtnode *n = cls;

	if (n->store_closing)
		return -ECANCELED;
	return store_put(n->store, key->b, data, len, expiry, done, arg);
}

static int
dhtnode_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got,
    void *arg)
{
	struct dhtnode *n = cls;

	if (n->store_closing)
		return -ECANCELED;
	return store_get(n->store, key->b, got, arg);
}

static int
dhtnode_record_put(void *cls, const struct dhtrec *rec, uint64_t now,
    uint64_t per_topic, uint64_t total_max, dht_store_done_fn *done,
    void *arg)
{
	struct dhtnode *n = cls;

	if (n->store_closing)
		return -ECANCELED;
	return store_record_put(n->store, rec, now, per_topic, total_max, done,
	    arg);
}

static int
dhtnode_record_list(void *cls, const struct dhtkey *topic, uint64_t now,
    size_t max, dht_records_got_fn *got, void *arg)
{
	struct dhtnode *n = cls;

	if (n->store_closing)
		return -ECANCELED;
	return store_record_list(n->store, topic, now, max, got, arg);
}

static void
dhtnode_usage(void *cls, struct dht_store_usage *ret)
{
	struct dhtnode *n = cls;
	struct store_stats st;

	memset(&st, 0, sizeof(st));
	if (!n->store_closing)
		store_stats(n->store, &st);
	ret->blocks = st.blocks;
	ret->bytes = st.bytes;
	ret->quota = st.quota;
}

/* The tick's event run now, once (EV_READ rather than EV_TIMEOUT: the
 * run re-arms it for its next deadline, dhtnode_tick_arm). */
static void
dhtnode_wake(void *cls)
{
	struct dhtnode *n = cls;

	if (n->ev_tick != NULL && !n->store_closing)
		event_active(n->ev_tick, EV_READ, 1);
}

int
dhtnode_tick_arm(struct dhtnode *n, uint64_t at_us)
{
	uint64_t now = time_mono_us(), wait = DHTNODE_TICK_US;
	struct timeval tv;

	if (at_us <= now)
		wait = 0;
	else if (at_us - now < wait)
		wait = at_us - now;
	n->tick_at_us = now + wait;
	tv.tv_sec = (time_t)(wait / 1000000);
	tv.tv_usec = (suseconds_t)(wait % 1000000);
	return event_add(n->ev_tick, &tv) == 0 ? 0 : -ENOMEM;
}

/* An attempt's deadline before the tick's next run: the tick runs then
 * (an answer lost costs the attempt's time, not up to a tick more). */
static void
dhtnode_schedule(void *cls, uint64_t at_us)
{
	struct dhtnode *n = cls;

	if (n->ev_tick != NULL && !n->store_closing && at_us < n->tick_at_us)
		(void)dhtnode_tick_arm(n, at_us);
}

static uint64_t
dhtnode_srtt(void *cls, const struct dhtkey *peer)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);
	uint64_t us;

	/* No sample yet, or TCP (which carries no acknowledgements): the
	 * DHT falls back on what its requests take. */
	return core_peer_srtt_us(n->core, &id, &us) == 0 ? us : 0;
}

static uint64_t *
dhtnode_stat(void *cls, const char *name)
{
	struct dhtnode *n = cls;
	uint64_t *p = stats_counter2(n->stats, "dht", name);

	return p != NULL ? p : &n->sink;
}

/* BPCC: the core stops reading peer (dht_bpcc.c). */
static int
dhtnode_hold(void *cls, const struct dhtkey *peer, bool hold)
{
	struct dhtnode *n = cls;
	struct ferry_peer_id id = dhtnode_id(peer);

	return core_rx_account_hold(n->rx, &id, hold);
}

void
dhtnode_env_fill(struct dhtnode *n, struct dht_env *env)
{
	memset(env, 0, sizeof(*env));
	env->cls = n;
	env->ident = core_ident(n->core);
	env->send = dhtnode_send;
	env->linked = dhtnode_linked;
	env->link = dhtnode_link;
	if (n->links_chosen) {
		env->unlink = dhtnode_unlink;
		env->may_unlink = dhtnode_may_unlink;
	}
	env->own_helo = dhtnode_own_helo;
	env->peer_helo = dhtnode_peer_helo;
	env->now_us = dhtnode_now;
	env->wall_s = dhtnode_wall;
	env->store_has = dhtnode_has;
	env->store_put = dhtnode_put;
	env->store_get = dhtnode_get;
	env->record_put = dhtnode_record_put;
	env->record_list = dhtnode_record_list;
	env->store_usage = dhtnode_usage;
	env->stat = dhtnode_stat;
	env->wake = dhtnode_wake;
	env->srtt_us = dhtnode_srtt;
	env->schedule = dhtnode_schedule;
	if (n->rx != NULL)
		env->hold = dhtnode_hold;
}
