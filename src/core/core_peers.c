/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The peer layer's lifecycle, its maintenance tick, and the parts of
 * core.h that deal with peers: sending, listing, HELO URIs and echo.
 */
#define LOG_TAG "core"
#include "core/core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/echo.h"
#include "core/gossip.h"
#include "core/handshake.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/linkemu.h"
#include "core/ownhelo.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/peerbook.h"
#include "core/transport.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/cfg.h"
#include "lib/crc32.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "lib/wire.h"

#define CORE_SAVE_DELAY_US USEC_PER_SEC
/* Unvalidated peers with nothing going on are forgotten after this. */
#define CORE_IDLE_PEER_US (10 * 60 * USEC_PER_SEC)

static int
core_counters_init(struct core *core)
{
	static const struct stats_slot slots[] = {
#define C(n) STATS_SLOT(struct core_counters, n)
		C(units_bad), C(helo_in), C(helo_bad), C(helo_expired),
		C(helo_refused), C(helo_no_transport), C(ping_sent),
		C(ping_in), C(ping_refused), C(ping_limited), C(pong_sent),
		C(pong_limited), C(pong_in), C(pong_bad), C(pong_unsolicited),
		C(validations), C(validation_failures), C(kx_sent), C(kx_in),
		C(kx_bad), C(kx_stale), C(kx_limited), C(kx_refused),
		C(key_changes), C(enc_in), C(enc_out), C(enc_bad),
		C(enc_replay), C(enc_unknown), C(msg_in), C(msg_out),
		C(msg_bytes_in), C(msg_bytes_out), C(msg_no_handler),
		C(msg_bad), C(send_no_link), C(send_queue_full),
		C(frames_lost), C(frag_out), C(frag_retx), C(frag_in),
		C(reasm_done), C(reasm_dropped), C(msgs_abandoned),
		C(acks_out), C(acks_in), C(window_updates),
		C(path_failures), C(peers_connected), C(peers_known),
		C(peers_evicted), C(peers_expired), C(emu_dropped),
		C(queue_bytes), C(peers_held), C(window_probes),
		C(link_refused), C(unlinks), C(byes_in), C(gossip_ignored),
#undef C
	};

	return stats_bind_prefix(core->stats, "core", &core->ctr, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static void core_tick_cb(evutil_socket_t fd, short what, void *cls);
static void core_save_cb(evutil_socket_t fd, short what, void *cls);
static void core_evict_cb(evutil_socket_t fd, short what, void *cls);

static void
core_apply_limits(struct core *core)
{
	ratelimit_init(&core->rl_kx, core->cc.kx_rate, core->cc.kx_rate);
	ratelimit_init(&core->rl_pong, core->cc.pong_rate, core->cc.pong_rate);
	core->reasm.limit = core->cc.reassembly_total;
}

int
core_peers_init(struct core *core)
{
	int r;

	TAILQ_INIT(&core->echos);
	TAILQ_INIT(&core->peers_by_age);
	core->peers = map_new();
	core->by_index = map_new();
	core->by_ts = map_new();
	core->challenges = map_new();
	core->ping_times = map_new();
	core->src_limits = map_new();
	core->pt_buf = malloc(FERRY_MSG_SIZE_MAX);
	core->rx_buf = malloc(FERRY_MSG_SIZE_MAX);
	core->txu = tx_unit_new();
	core->tick_ev = event_new(core->base, -1, EV_PERSIST, core_tick_cb,
	    core);
	core->save_ev = evtimer_new(core->base, core_save_cb, core);
	core->evict_ev = event_new(core->base, -1, 0, core_evict_cb, core);
	if (core->peers == NULL || core->by_index == NULL ||
	    core->by_ts == NULL || core->challenges == NULL ||
	    core->ping_times == NULL || core->src_limits == NULL ||
	    core->pt_buf == NULL || core->rx_buf == NULL ||
	    core->txu == NULL || core->tick_ev == NULL ||
	    core->save_ev == NULL || core->evict_ev == NULL)
		return log_err_errno(-ENOMEM, "core");
	r = core_counters_init(core);
	if (r < 0)
		return log_err_errno(r, "core counters");
	r = core_rx_init(core);
	if (r == 0)
		r = core_links_init(core);
	if (r < 0)
		return log_err_errno(r, "core");
	core_apply_limits(core);
	core->emu = linkemu_new(core->base, &core->cc.emu, core->cfg,
	    core->ctr.emu_dropped, &r);
	return r;
}

/* Hands the [core] BOOTSTRAP URIs to validation. */
static void
core_bootstrap(struct core *core)
{
	const char *list = cfg_get(core->cfg, "core", "BOOTSTRAP");
	const char *word;
	size_t len;
	int r;

	while (list != NULL && cfg_next_word(&list, &word, &len)) {
		char *uri = strndup(word, len);

		if (uri == NULL)
			return;
		/* Not pinned: every peer of a network may be given the same
		 * entry points, which then need not stay linked to all. */
		r = core_links_add_uri(core, uri, false);
		if (r < 0)
			log_warn_errno(r, "[core] BOOTSTRAP: cannot use %.40s...",
			    uri);
		free(uri);
	}
}

int
core_peers_start(struct core *core)
{
	struct timeval tv;

	if (ownhelo_refresh(core) == 0)
		log_notice("no transport advertises an address: others cannot contact this peer first");
	(void)peerbook_load(core);
	core_bootstrap(core);
	time_us_to_tv(CORE_TICK_US, &tv);
	return event_add(core->tick_ev, &tv) == 0 ? 0 : -EIO;
}

struct core_snapshot {
	struct peer **v;
	size_t n, cap;
};

static bool
core_snap_one(void *cls, const void *key, size_t len, void *value)
{
	struct core_snapshot *s = cls;

	(void)key;
	(void)len;
	if (s->n < s->cap)
		s->v[s->n++] = value;
	return true;
}

/* The peers as an array, so that a walk may free some of them. */
static int
core_snapshot(struct core *core, struct core_snapshot *s)
{
	s->cap = map_size(core->peers);
	s->n = 0;
	s->v = calloc(s->cap ? s->cap : 1, sizeof(*s->v));
	if (s->v == NULL)
		return -ENOMEM;
	map_foreach(core->peers, core_snap_one, s);
	return 0;
}

void
core_peers_stop(struct core *core)
{
	struct core_snapshot s;

	if (core->peers == NULL)
		return;
	core->stopping = true;
	if (core->tick_ev != NULL)
		(void)event_del(core->tick_ev);
	if (core->evict_ev != NULL)
		(void)event_del(core->evict_ev);
	if (core->unlink_ev != NULL)
		(void)event_del(core->unlink_ev);
	if (core->book_dirty)
		(void)peerbook_save(core);
	echo_shutdown(core);
	if (core_snapshot(core, &s) < 0)
		return;
	for (size_t i = 0; i < s.n; i++)
		peer_free(s.v[i]);
	free(s.v);
}

static bool
core_free_value(void *cls, const void *key, size_t len, void *value)
{
	(void)cls;
	(void)key;
	(void)len;
	free(value);
	return true;
}

void
core_peers_done(struct core *core)
{
	linkemu_free(core->emu);
	core_rx_done(core);
	core_links_done(core);
	if (core->ping_times != NULL)
		map_foreach(core->ping_times, core_free_value, NULL);
	if (core->src_limits != NULL)
		map_foreach(core->src_limits, core_free_value, NULL);
	map_free(core->peers);
	map_free(core->by_index);
	map_free(core->by_ts);
	map_free(core->challenges);
	map_free(core->ping_times);
	map_free(core->src_limits);
	free(core->pt_buf);
	free(core->rx_buf);
	free(core->txu);
	free(core->unit_buf);
	if (core->tick_ev != NULL)
		event_free(core->tick_ev);
	if (core->save_ev != NULL)
		event_free(core->save_ev);
	if (core->evict_ev != NULL)
		event_free(core->evict_ev);
}

void
core_peers_reconfigured(struct core *core)
{
	struct core_snapshot s;
	int r;

	core_apply_limits(core);
	linkemu_free(core->emu);
	core->emu = linkemu_new(core->base, &core->cc.emu, core->cfg,
	    core->ctr.emu_dropped, &r);
	(void)ownhelo_refresh(core);
	if (core_snapshot(core, &s) < 0)
		return;
	for (size_t i = 0; i < s.n; i++) {
		sendq_set_limit(&s.v[i]->q, SENDQ_CONTROL,
		    core->cc.control_queue_bytes);
		sendq_set_limit(&s.v[i]->q, SENDQ_BULK, core->cc.queue_bytes);
		/* New addresses (a new mail filter line, say) propagate. */
		if (s.v[i]->connected)
			gossip_link_up(s.v[i]);
	}
	free(s.v);
}

void
core_transport_detach(struct core *core, struct transport *t)
{
	struct core_snapshot s;

	if (core->emu != NULL)
		linkemu_forget_transport(core->emu, t);
	if (core->peers == NULL || core_snapshot(core, &s) < 0)
		return;
	for (size_t i = 0; i < s.n; i++) {
		struct peer *p = s.v[i];
		struct path *pa, *ptmp;
		struct addr *a, *atmp;

		for (pa = TAILQ_FIRST(&p->paths); pa != NULL; pa = ptmp) {
			ptmp = TAILQ_NEXT(pa, link);
			if (pa->t == t)
				path_free(pa, true);
		}
		for (a = TAILQ_FIRST(&p->addrs); a != NULL; a = atmp) {
			atmp = TAILQ_NEXT(a, link);
			if (a->t == t)
				validate_addr_free(a);
		}
	}
	free(s.v);
}

/* A half-open peer that has had LINK_TIMEOUT to link and is not even
 * validating an address: a stranger's single KX, say, that was answered
 * and never followed up. It would otherwise stay until its session's
 * end, holding a slot of the table. */
static bool
core_half_open_expired(const struct peer *p, uint64_t now)
{
	const struct addr *a;

	if (!peer_is_half_open(p) ||
	    now - p->created_us < p->core->cc.link_timeout_us)
		return false;
	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->state == ADDR_PINGING)
			return false;
	return true;
}

static void
core_tick_cb(evutil_socket_t fd, short what, void *cls)
{
	struct core *core = cls;
	uint64_t now = time_mono_us();
	struct core_snapshot s;

	(void)fd;
	(void)what;
	ownhelo_maybe_refresh(core);
	if (core_snapshot(core, &s) < 0)
		return;
	for (size_t i = 0; i < s.n; i++) {
		struct peer *p = s.v[i];

		validate_peer_tick(p, now);
		handshake_peer_tick(p, now);
		tx_peer_tick(p, now);
		gossip_peer_tick(p, now);
		*core->ctr.reasm_dropped += reasm_expire(&p->rs, &core->reasm,
		    now, core->cc.reassembly_timeout_us);
		if (peer_is_idle(p) && now - p->last_rx_us > CORE_IDLE_PEER_US)
			peer_free(p);
		else if (core_half_open_expired(p, now)) {
			(*core->ctr.peers_expired)++;
			peer_log(p, FERRY_LOG_DEBUG,
			    "no link within LINK_TIMEOUT; forgotten");
			peer_free(p);
		}
	}
	free(s.v);
}

static void
core_evict_cb(evutil_socket_t fd, short what, void *cls)
{
	(void)fd;
	(void)what;
	peer_evict_run(cls);
}

static void
core_save_cb(evutil_socket_t fd, short what, void *cls)
{
	(void)fd;
	(void)what;
	(void)peerbook_save(cls);
}

void
core_book_dirty(struct core *core)
{
	struct timeval tv;

	core->book_dirty = true;
	if (core->stopping || evtimer_pending(core->save_ev, NULL))
		return;
	time_us_to_tv(CORE_SAVE_DELAY_US, &tv);
	(void)evtimer_add(core->save_ev, &tv);
}

uint8_t *
core_unit_buf(struct core *core, size_t n)
{
	uint8_t *b;

	if (n <= core->unit_cap)
		return core->unit_buf;
	b = realloc(core->unit_buf, n);
	if (b == NULL)
		return NULL;
	core->unit_buf = b;
	core->unit_cap = n;
	return b;
}

struct transport *
core_transport_by_proto(const struct core *core, uint16_t protocol)
{
	for (size_t i = 0; i < core->n_transports; i++)
		if (core->transports[i]->api->protocol == protocol)
			return core->transports[i];
	return NULL;
}

int
core_unit_send(struct core *core, struct transport *t,
    struct ferry_tsession *ts, const uint8_t *unit, size_t len,
    bool is_encrypted)
{
	const struct ferry_transport_api *api = t->api;
	uint32_t crc = 0;
	int r;

	if (len > api->mtu)
		return -EMSGSIZE;
	if (api->caps & FERRY_TCAP_CRC)
		crc = crc32_update(0, unit, len);
	if (core->emu != NULL && linkemu_applies(core->emu, t))
		r = linkemu_send(core->emu, t, ts, unit, len, is_encrypted,
		    crc);
	else
		r = api->send(api->cls, ts, unit, len, is_encrypted, crc);
	if (r == 0) {
		(*t->stat_units_out)++;
		*t->stat_bytes_out += len;
	} else if (r == -EAGAIN) {
		(*t->stat_send_eagain)++;
	} else {
		(*t->stat_send_fail)++;
	}
	return r;
}

void
core_emu_forget(struct core *core, const struct ferry_tsession *ts)
{
	if (core->emu != NULL)
		linkemu_forget(core->emu, ts);
}

struct core_find_ts {
	const struct ferry_tsession *ts;
	struct addr *found;
};

static bool
core_find_addr_ts(void *cls, const void *key, size_t len, void *value)
{
	struct core_find_ts *f = cls;
	struct peer *p = value;
	struct addr *a;

	(void)key;
	(void)len;
	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->ts == f->ts && a->path == NULL) {
			f->found = a;
			return false;
		}
	return true;
}

struct addr *
core_addr_by_ts(struct core *core, const struct ferry_tsession *ts)
{
	struct core_find_ts f = { ts, NULL };

	map_foreach(core->peers, core_find_addr_ts, &f);
	return f.found;
}

/* core.h */

int
core_send_class(struct core *core, const struct ferry_peer_id *peer,
    enum core_class qclass, uint16_t type, const void *data, size_t len)
{
	struct peer *p;
	int r;

	if (type < FERRY_MSG_DHT_MIN || (unsigned)qclass >= CORE_NCLASS)
		return -EINVAL;
	if (len > FERRY_APP_MSG_MAX)
		return -EMSGSIZE;
	p = peer_find(core, peer);
	if (p == NULL || !p->connected || p->unlinking) {
		(*core->ctr.send_no_link)++;
		return -ENOTCONN;
	}
	r = tx_queue_data(p, qclass, type, data, len);
	if (r == -EAGAIN)
		(*core->ctr.send_queue_full)++;
	/* Storage and clients' messages: a link a local client uses. */
	if (r == 0 && type >= FERRY_MSG_STORAGE_MIN)
		core_links_pin(p);
	return r;
}

int
core_send(struct core *core, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	return core_send_class(core, peer, CORE_CLASS_BULK, type, data, len);
}

bool
core_can_send(struct core *core, const struct ferry_peer_id *peer)
{
	struct peer *p = peer_find(core, peer);

	return p != NULL && p->connected &&
	    sendq_cost(&p->q, SENDQ_BULK) < p->q.lane[SENDQ_BULK].limit;
}

int
core_peer_queue_bytes(struct core *core, const struct ferry_peer_id *peer,
    enum core_class qclass, uint64_t *ret_bytes)
{
	struct peer *p = peer_find(core, peer);

	if ((unsigned)qclass >= CORE_NCLASS)
		return -EINVAL;
	if (p == NULL || !p->connected || p->unlinking)
		return -ENOTCONN;
	*ret_bytes = p->q.lane[tx_lane(qclass)].bytes;
	return 0;
}

int
core_peer_srtt_us(struct core *core, const struct ferry_peer_id *peer,
    uint64_t *ret_us)
{
	struct peer *p = peer_find(core, peer);

	if (p == NULL || !p->connected)
		return -ENOTCONN;
	/* Reliable paths send no ACKs: cc.c has nothing to estimate from. */
	if (!p->cc.have_rtt || !path_unreliable(p->best))
		return -ENODATA;
	*ret_us = p->cc.srtt_us;
	return 0;
}

struct core_visit {
	core_peer_visit_fn *fn;
	void *cls;
	uint64_t now;
};

/* What core.h shows of p, a connected peer. */
static void
core_peer_fill(const struct peer *p, uint64_t now, struct core_peer_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->id = p->id;
	pi->age_ms = (now - p->up_since_us) / USEC_PER_MSEC;
	pi->transport = p->best->t->name;
	pi->protocol = p->best->t->api->protocol;
	path_address_string(p->best, pi->address, sizeof(pi->address));
	pi->asked = p->asked;
	pi->pinned = now < p->pinned_until_us;
}

static bool
core_visit_one(void *cls, const void *key, size_t len, void *value)
{
	struct core_visit *v = cls;
	struct peer *p = value;
	struct core_peer_info pi;

	(void)key;
	(void)len;
	if (!p->connected)
		return true;
	core_peer_fill(p, v->now, &pi);
	v->fn(v->cls, &pi);
	return true;
}

void
core_peers_foreach(struct core *core, core_peer_visit_fn *fn, void *cls)
{
	struct core_visit v = { fn, cls, time_mono_us() };

	map_foreach(core->peers, core_visit_one, &v);
}

int
core_peer_info(struct core *core, const struct ferry_peer_id *peer,
    struct core_peer_info *ret)
{
	struct peer *p = peer_find(core, peer);

	if (p == NULL || !p->connected || p->unlinking)
		return -ENOTCONN;
	core_peer_fill(p, time_mono_us(), ret);
	return 0;
}

int
core_hello_uri(struct core *core, char **ret_uri)
{
	ownhelo_maybe_refresh(core);
	if (core->own_helos_len == 0)
		return -ENOENT;
	return helo_uri_encode(&core->ident->id, core->own_helos,
	    core->own_helos_len, ret_uri);
}

int
core_echo(struct core *core, const struct ferry_peer_id *peer,
    uint32_t count, uint16_t payload_len, uint32_t timeout_ms,
    core_echo_fn *fn, void *cls)
{
	struct peer *p = peer_find(core, peer);

	if (count == 0 || fn == NULL)
		return -EINVAL;
	if (p == NULL || !p->connected)
		return -ENOTCONN;
	core_links_pin(p); /* a client's ferry ping */
	return echo_start(p, count, payload_len, timeout_ms, fn, cls);
}
