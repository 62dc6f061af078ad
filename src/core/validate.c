/* SPDX-License-Identifier: GPL-3.0-or-later */
/* HELO intake and PING/PONG address validation (see validate.h). */
#define LOG_TAG "core"
#include "core/validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/core_int.h"
#include "core/handshake.h"
#include "core/helo.h"
#include "core/ownhelo.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/pingpong.h"
#include "core/transport.h"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/time.h"
#include "lib/wire.h"

#define VALIDATE_MAX_ADDRS 16	  /* addresses kept per peer */
_Static_assert(VALIDATE_MAX_ADDRS * (FERRY_HELO_FIXED + FERRY_ADDR_MAX) <=
	CORE_PEER_HELOS_MAX && CORE_OWN_HELOS_MAX <= CORE_PEER_HELOS_MAX,
    "core_peer_helos promises CORE_PEER_HELOS_MAX");
#define VALIDATE_MAX_FAILURES 3	  /* unanswered PINGs before giving up */
#define VALIDATE_PING_TIMES_MAX 16384 /* addresses with a PING on record */
/* PINGs for one challenge to an address we chose ourselves: the first
 * and repeats at quarters of the timeout, so one lost datagram does not
 * cost a whole retry interval. Addresses others advertised get one. */
#define VALIDATE_LOCAL_TRIES 4

/* When we last pinged an address, whoever claimed it. */
struct ping_time {
	uint64_t last_us;
	uint16_t klen;
	uint8_t key[2 + FERRY_ADDR_MAX]; /* protocol, then address */
};

static uint64_t
validate_timeout(const struct core *core, const struct transport *t)
{
	return (t->api->caps & FERRY_TCAP_HIGH_LATENCY)
	    ? core->cc.validation_timeout_slow_us
	    : core->cc.validation_timeout_us;
}

struct evict_ctx {
	uint64_t before_us;
	struct ping_time *victim;
};

static bool
validate_find_stale(void *cls, const void *key, size_t len, void *value)
{
	struct evict_ctx *ctx = cls;
	struct ping_time *pt = value;

	(void)key;
	(void)len;
	if (pt->last_us < ctx->before_us) {
		ctx->victim = pt;
		return false;
	}
	return true;
}

/*
 * The per-address rule: true (and the time recorded) if no PING went to
 * this address within PING_INTERVAL. Entries younger than the interval are
 * never evicted, so a flood of addresses cannot buy a second PING to one.
 */
static bool
validate_slot(struct core *core, uint16_t proto, const uint8_t *addr,
    size_t len, uint64_t now_us)
{
	uint8_t key[2 + FERRY_ADDR_MAX];
	struct ping_time *pt;

	wire_put16(key, proto);
	memcpy(key + 2, addr, len);
	pt = map_get(core->ping_times, key, 2 + len);
	if (pt != NULL) {
		if (now_us - pt->last_us < core->cc.ping_interval_us)
			return false;
		pt->last_us = now_us;
		return true;
	}
	if (map_size(core->ping_times) >= VALIDATE_PING_TIMES_MAX) {
		struct evict_ctx ctx = { 0, NULL };

		if (now_us > core->cc.ping_interval_us)
			ctx.before_us = now_us - core->cc.ping_interval_us;
		map_foreach(core->ping_times, validate_find_stale, &ctx);
		if (ctx.victim == NULL)
			return false;
		(void)map_remove(core->ping_times, ctx.victim->key,
		    ctx.victim->klen);
		free(ctx.victim);
	}
	pt = malloc(sizeof(*pt));
	if (pt == NULL)
		return false;
	pt->last_us = now_us;
	pt->klen = (uint16_t)(2 + len);
	memcpy(pt->key, key, pt->klen);
	if (map_put(core->ping_times, pt->key, pt->klen, pt) < 0) {
		free(pt);
		return false;
	}
	return true;
}

/* The session to send to a, opening one if needed. */
static struct ferry_tsession *
validate_session(struct addr *a)
{
	const struct ferry_transport_api *api = a->t->api;
	int r;

	if (a->ts != NULL)
		return a->ts;
	r = api->connect(api->cls, a->bytes, a->len, &a->ts);
	if (r < 0) {
		peer_log(a->peer, FERRY_LOG_INFO, "%s connect failed: %s",
		    a->t->name, strerror(-r));
		a->ts = NULL;
	}
	return a->ts;
}

static void
validate_forget_challenge(struct addr *a)
{
	struct core *core = a->peer->core;

	if (map_get(core->challenges, a->challenge, FERRY_CHALLENGE_LEN) == a)
		(void)map_remove(core->challenges, a->challenge,
		    FERRY_CHALLENGE_LEN);
}

/*
 * Sends the PING for a's current challenge. Our HELOs go in front only
 * where the peer needs them to answer (a transport without replies on
 * the inbound session, where it must reverse the connection) or where
 * we chose the address ourselves: to an address a stranger advertised,
 * the PING goes bare, smaller than the HELO that named it.
 */
static int
validate_send_ping(struct addr *a)
{
	struct core *core = a->peer->core;
	size_t mtu = a->t->api->mtu, plen = pingpong_size(a->len), off = 0;
	struct ferry_tsession *ts = validate_session(a);
	uint8_t *unit = core_unit_buf(core, mtu);
	int r;

	if (ts == NULL || unit == NULL || plen > mtu)
		return -EIO;
	if (a->local || !(a->t->api->caps & FERRY_TCAP_INBOUND_REPLY))
		off = ownhelo_fill(core, unit, mtu - plen);
	r = ping_build(unit + off, mtu - off, &a->peer->id, a->challenge,
	    a->t->api->protocol, a->bytes, a->len);
	if (r < 0)
		return r;
	r = core_unit_send(core, a->t, ts, unit, off + (size_t)r, false);
	if (r < 0 && r != -EAGAIN)
		return r;
	(*core->ctr.ping_sent)++;
	a->tries++;
	return 0;
}

/* Starts validating a with a fresh challenge. -EDQUOT if the advertiser's
 * limit says no, -EAGAIN if the address was pinged too recently. */
static int
validate_ping(struct addr *a, struct peer *advertiser, uint64_t now_us)
{
	struct core *core = a->peer->core;
	int r;

	if (advertiser != NULL &&
	    !ratelimit_take(&advertiser->rl_pings, now_us, 1)) {
		(*core->ctr.ping_limited)++;
		return -EDQUOT;
	}
	/* The per-address rule protects strangers' addresses; one we chose
	 * ourselves is ours to retry, but its PINGs are still recorded. */
	if (!validate_slot(core, a->t->api->protocol, a->bytes, a->len,
		now_us) &&
	    !a->local) {
		/* Someone pinged it lately; ask again when that has aged. */
		(*core->ctr.ping_limited)++;
		a->retry_at_us = now_us + core->cc.ping_interval_us;
		return -EAGAIN;
	}
	validate_forget_challenge(a);
	randombytes_buf(a->challenge, sizeof(a->challenge));
	if (map_put(core->challenges, a->challenge, FERRY_CHALLENGE_LEN, a) <
	    0)
		return -ENOMEM;
	a->tries = 0;
	r = validate_send_ping(a);
	if (r < 0) {
		validate_forget_challenge(a);
		return r;
	}
	a->ping_sent_us = now_us;
	if (a->state == ADDR_VALID)
		a->revalidating = true;
	else
		a->state = ADDR_PINGING;
	return 0;
}

void
validate_addr_free(struct addr *a)
{
	struct peer *p = a->peer;

	validate_forget_challenge(a);
	if (a->path != NULL)
		path_free(a->path, true);
	else if (a->ts != NULL)
		(void)a->t->api->disconnect(a->t->api->cls, a->ts);
	TAILQ_REMOVE(&p->addrs, a, link);
	p->n_addrs--;
	free(a->helo);
	free(a);
}

static struct addr *
validate_addr_find(struct peer *p, uint16_t proto, const uint8_t *bytes,
    size_t len)
{
	struct addr *a;

	TAILQ_FOREACH(a, &p->addrs, link)
		if (a->t->api->protocol == proto && a->len == len &&
		    memcmp(a->bytes, bytes, len) == 0)
			return a;
	return NULL;
}

/* Points a at a new copy of its HELO. */
static int
validate_set_helo(struct addr *a, const struct helo *h)
{
	uint8_t *copy = malloc(h->raw_len);

	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, h->raw, h->raw_len);
	free(a->helo);
	a->helo = copy;
	a->helo_len = h->raw_len;
	a->bytes = copy + (h->addr - h->raw);
	a->len = h->addr_len;
	a->mtu = h->mtu;
	a->expiry_s = h->expiry;
	return 0;
}

static struct addr *
validate_addr_new(struct peer *p, struct transport *t, const struct helo *h)
{
	struct addr *a, *old = NULL;

	if (p->n_addrs >= VALIDATE_MAX_ADDRS) {
		/* Make room by forgetting an address that never worked. */
		TAILQ_FOREACH(a, &p->addrs, link)
			if (a->state == ADDR_NEW || a->state == ADDR_FAILED)
				old = a;
		if (old == NULL)
			return NULL;
		validate_addr_free(old);
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->peer = p;
	a->t = t;
	a->state = ADDR_NEW;
	if (validate_set_helo(a, h) < 0) {
		free(a);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&p->addrs, a, link);
	p->n_addrs++;
	return a;
}

/* Common checks of a HELO; fills h and *ret_t. 0, -EBADMSG (malformed
 * or forged), -ESTALE (expired), -ENOENT (transport not loaded), -EPERM
 * (the transport refuses the address). Each is counted. */
static int
validate_check_helo(struct core *core, const uint8_t *msg, size_t len,
    struct helo *h, struct transport **ret_t)
{
	const struct ferry_transport_api *api;
	struct transport *t;
	int r;

	(*core->ctr.helo_in)++;
	if (helo_decode(msg, len, h) < 0) {
		(*core->ctr.helo_bad)++;
		return -EBADMSG;
	}
	t = core_transport_by_proto(core, h->protocol);
	if (t == NULL) {
		(*core->ctr.helo_no_transport)++;
		return -ENOENT;
	}
	api = t->api;
	if (api->verify_helo(api->cls, h->addr, h->addr_len) < 0) {
		(*core->ctr.helo_refused)++;
		return -EPERM;
	}
	r = helo_verify(h, time_real_s());
	if (r < 0) {
		(*(r == -ESTALE ? core->ctr.helo_expired : core->ctr.helo_bad))++;
		return r;
	}
	*ret_t = t;
	return 0;
}

/*
 * Records the address a HELO names for its peer: checks the HELO, finds
 * the peer (creating it) and finds the address, or adds it (*ret_new).
 * A newer HELO of a known address replaces the stored one. A new address
 * heard from the network source src (NULL: none to charge) costs that
 * source a PING token before any state is made, so a flood from one
 * source neither grows the table nor pushes other peers out of it.
 * -EALREADY for one of our own HELOs, -EDQUOT when src's budget is spent,
 * else validate_check_helo's errors or -ENOSPC.
 */
static int
validate_intake(struct core *core, const uint8_t *msg, size_t len,
    const void *src, size_t src_len, struct addr **ret, bool *ret_new)
{
	struct transport *t;
	struct helo h;
	struct peer *p;
	struct addr *a = NULL;
	int r;

	r = validate_check_helo(core, msg, len, &h, &t);
	if (r < 0)
		return r;
	if (memcmp(&h.id, &core->ident->id, sizeof(h.id)) == 0)
		return -EALREADY;
	p = peer_find(core, &h.id);
	if (p != NULL)
		a = validate_addr_find(p, h.protocol, h.addr, h.addr_len);
	if (a == NULL && src != NULL &&
	    !core_src_allow_ping(core, src, src_len)) {
		(*core->ctr.ping_limited)++;
		return -EDQUOT;
	}
	if (p == NULL && (p = peer_get(core, &h.id)) == NULL)
		return -ENOSPC;
	memcpy(p->pk, h.pk, sizeof(p->pk));
	*ret_new = false;
	if (a != NULL) {
		if (h.expiry > a->expiry_s)
			(void)validate_set_helo(a, &h);
	} else {
		a = validate_addr_new(p, t, &h);
		if (a == NULL)
			return -ENOSPC;
		*ret_new = true;
		peer_log(p, FERRY_LOG_DEBUG, "learnt a %s address", t->name);
	}
	*ret = a;
	return 0;
}

int
validate_learn(struct core *core, const uint8_t *msg, size_t len,
    struct peer *advertiser, bool local, const void *src, size_t src_len)
{
	struct addr *a;
	bool added;
	int r;

	/* Outside a link, the advertiser is whoever signed the HELO, a new
	 * identity per HELO if the sender likes: the network source it came
	 * from pays instead. */
	if (local || advertiser != NULL || src_len == 0)
		src = NULL;
	r = validate_intake(core, msg, len, src, src_len, &a, &added);
	if (r == -EALREADY)
		return 0; /* our own, passed back to us */
	if (r < 0)
		return r;
	if (!added) {
		a->local |= local;
		return 0;
	}
	a->local = local;
	if (local)
		advertiser = NULL;
	else if (advertiser == NULL)
		advertiser = a->peer; /* it advertises itself */
	/* An address whose first PING its advertiser may not buy is not
	 * kept either: retrying it later would sidestep the limit. */
	if (validate_ping(a, advertiser, time_mono_us()) == -EDQUOT) {
		validate_addr_free(a);
		return -EDQUOT;
	}
	return 0;
}

int
validate_restore(struct core *core, const uint8_t *msg, size_t len,
    uint64_t valid_until_s)
{
	struct peer *p;
	struct addr *a;
	bool added;
	int r;

	if (valid_until_s <= time_real_s())
		return -ESTALE;
	r = validate_intake(core, msg, len, NULL, 0, &a, &added);
	if (r < 0)
		return r;
	p = a->peer;
	a->state = ADDR_VALID;
	a->valid_until_s = valid_until_s;
	a->local = true;
	a->ever_valid = true;
	/* When a layer above chooses links, it says whom to link to
	 * (core_link opens the session then); until it does, the address
	 * costs no session and no PING. But one that runs (it claimed the
	 * choice) gets the peers of the book linked again, as under
	 * LINK_POLICY = core: peers linked to our previous run hold links
	 * that only our new key exchange resets, and until then they would
	 * send into the void (LINK_TIMEOUT long). It drops the links it does
	 * not need (they count as ours), and MAX_PEERS bounds them. */
	if (core_links_manual(core) && !core->links_claimed)
		return 0;
	if (validate_session(a) == NULL)
		return -EIO;
	if (a->path == NULL && path_add(p, a->t, a->ts, a) == NULL)
		a->ts = NULL; /* path_add released the reference */
	p->want_link = true;
	p->asked = true;
	/* Our disk says it worked; check that it still does. */
	(void)validate_ping(a, NULL, time_mono_us());
	return 0;
}

/* Where to send the PONG when the PING's session cannot carry a reply:
 * the pinger's cheapest address among the HELOs it put before the PING. */
static struct addr *
validate_reply_addr(struct core *core, const struct ferry_message_pack *mp,
    const uint8_t *ping_msg)
{
	const uint8_t *unit = mp->msg;
	struct addr *best = NULL;
	size_t off = 0;

	while (unit + off < ping_msg) {
		size_t size = wire_get16(unit + off);
		struct helo h;
		struct peer *p;
		struct addr *a;

		if (helo_decode(unit + off, size, &h) == 0 &&
		    (p = peer_find(core, &h.id)) != NULL &&
		    (a = validate_addr_find(p, h.protocol, h.addr,
			 h.addr_len)) != NULL &&
		    (best == NULL || a->t->api->cost < best->t->api->cost))
			best = a;
		off += size;
	}
	return best;
}

static bool
validate_src_ok(struct core *core, const struct ferry_message_pack *mp);

void
validate_on_ping(struct core *core, struct transport *t,
    const struct ferry_message_pack *mp, const uint8_t *msg, size_t len)
{
	uint8_t pong[FERRY_PONG_FIXED + FERRY_ADDR_MAX];
	struct ferry_tsession *ts = mp->ts;
	struct transport *rt = t;
	uint64_t now = time_mono_us();
	struct ping ping;
	int r;

	(*core->ctr.ping_in)++;
	if (ping_decode(msg, len, &ping) < 0 ||
	    memcmp(&ping.target, &core->ident->id, sizeof(ping.target)) != 0 ||
	    !ownhelo_has(core, ping.protocol, ping.addr, ping.addr_len)) {
		(*core->ctr.ping_refused)++;
		return;
	}
	/* The source's own budget first, as for handshakes. */
	if (!validate_src_ok(core, mp) ||
	    !ratelimit_take(&core->rl_pong, now, 1)) {
		(*core->ctr.pong_limited)++;
		return;
	}
	if (ts == NULL || !(t->api->caps & FERRY_TCAP_INBOUND_REPLY)) {
		struct addr *a = validate_reply_addr(core, mp, msg);

		if (a == NULL || (ts = validate_session(a)) == NULL) {
			(*core->ctr.ping_refused)++;
			return;
		}
		rt = a->t;
	}
	r = pong_build(pong, sizeof(pong), core->ident, ping.challenge,
	    ping.protocol,
	    time_real_s() + core->cc.validation_lifetime_us / USEC_PER_SEC,
	    ping.addr, ping.addr_len);
	/* The PONG is as large as the PING at most (pingpong_size). */
	if (r > 0 && core_unit_send(core, rt, ts, pong, (size_t)r, false) == 0)
		(*core->ctr.pong_sent)++;
}

void
validate_on_pong(struct core *core, const uint8_t *msg, size_t len)
{
	uint64_t now_s = time_real_s(), until;
	struct pong po;
	struct addr *a;
	struct peer *p;

	(*core->ctr.pong_in)++;
	if (pong_decode(msg, len, &po) < 0) {
		(*core->ctr.pong_bad)++;
		return;
	}
	a = map_get(core->challenges, po.challenge, FERRY_CHALLENGE_LEN);
	if (a == NULL) {
		(*core->ctr.pong_unsolicited)++;
		return;
	}
	p = a->peer;
	/* The challenge alone is not proof: the PONG must come from the
	 * advertised peer and vouch for exactly the address pinged. */
	if (po.protocol != a->t->api->protocol || po.addr_len != a->len ||
	    memcmp(po.addr, a->bytes, a->len) != 0 ||
	    pong_verify(&po, p->pk, now_s) < 0) {
		(*core->ctr.pong_bad)++;
		peer_log(p, FERRY_LOG_INFO, "rejected a forged or mismatched PONG");
		return;
	}
	validate_forget_challenge(a);
	until = now_s + core->cc.validation_lifetime_us / USEC_PER_SEC;
	a->valid_until_s = po.expiry < until ? po.expiry : until;
	a->state = ADDR_VALID;
	a->ever_valid = true;
	a->revalidating = false;
	a->failures = 0;
	(*core->ctr.validations)++;
	peer_log(p, FERRY_LOG_INFO, "validated a %s address", a->t->name);
	core_book_dirty(core);
	if (core_links_manual(core) && !p->want_link) {
		/* Nobody wants this link (yet): keep no session open for it.
		 * core_link opens one over the address. */
		if (a->path == NULL && a->ts != NULL) {
			(void)a->t->api->disconnect(a->t->api->cls, a->ts);
			a->ts = NULL;
		}
		return;
	}
	if (a->path == NULL && a->ts != NULL &&
	    path_add(p, a->t, a->ts, a) == NULL)
		a->ts = NULL;
	handshake_want(p);
}

void
validate_peer_wanted(struct peer *p)
{
	uint64_t now = time_mono_us();
	struct addr *a;

	TAILQ_FOREACH(a, &p->addrs, link) {
		if (a->state == ADDR_VALID && a->path == NULL) {
			if (validate_session(a) != NULL &&
			    path_add(p, a->t, a->ts, a) == NULL)
				a->ts = NULL; /* path_add released it */
		} else if (a->state == ADDR_NEW || a->state == ADDR_FAILED) {
			(void)validate_ping(a, NULL, now);
		}
	}
}

/* A PING that got no PONG in time. */
static void
validate_failed(struct addr *a, uint64_t now_us)
{
	struct core *core = a->peer->core;

	(*core->ctr.validation_failures)++;
	validate_forget_challenge(a);
	a->failures++;
	a->revalidating = false;
	a->state = ADDR_FAILED;
	a->retry_at_us = now_us + (core->cc.ping_interval_us << a->failures);
	if (a->path != NULL)
		path_free(a->path, true);
	else if (a->ts != NULL) {
		(void)a->t->api->disconnect(a->t->api->cls, a->ts);
		a->ts = NULL;
	}
	peer_log(a->peer, FERRY_LOG_INFO, "%s address did not answer",
	    a->t->name);
}

void
validate_peer_tick(struct peer *p, uint64_t now_us)
{
	struct core *core = p->core;
	uint64_t now_s = time_real_s();
	uint64_t life_s = core->cc.validation_lifetime_us / USEC_PER_SEC;
	struct addr *a, *tmp;

	for (a = TAILQ_FIRST(&p->addrs); a != NULL; a = tmp) {
		tmp = TAILQ_NEXT(a, link);
		/* An address someone else advertised gets one PING per
		 * advertisement (seed 004, II-C); ours, and those that
		 * answered once, are worth retrying a few times. */
		if (a->expiry_s <= now_s ||
		    (a->state == ADDR_FAILED &&
			(a->failures >= VALIDATE_MAX_FAILURES ||
			    (!a->local && !a->ever_valid)))) {
			validate_addr_free(a);
			continue;
		}
		if ((a->state == ADDR_PINGING || a->revalidating) &&
		    now_us - a->ping_sent_us > validate_timeout(core, a->t)) {
			validate_failed(a, now_us);
			continue;
		}
		if ((a->state == ADDR_PINGING || a->revalidating) && a->local &&
		    a->tries < VALIDATE_LOCAL_TRIES &&
		    now_us - a->ping_sent_us >= a->tries *
			    (validate_timeout(core, a->t) /
				VALIDATE_LOCAL_TRIES))
			(void)validate_send_ping(a);
		if (a->state == ADDR_VALID && a->valid_until_s <= now_s) {
			a->state = ADDR_NEW;
			if (a->path != NULL)
				path_free(a->path, true);
		}
		if ((a->state == ADDR_VALID && !a->revalidating &&
			a->valid_until_s <= now_s + life_s / 10) ||
		    ((a->state == ADDR_NEW || a->state == ADDR_FAILED) &&
			now_us >= a->retry_at_us))
			(void)validate_ping(a, NULL, now_us);
	}
}

/* Per-source limits on work a sender can cause: signatures (PONGs,
 * handshakes) and PINGs for addresses in HELOs it sent. */
struct src_limit {
	struct ratelimit rl;
	struct ratelimit rl_pings;
	uint16_t len;
	uint8_t key[64];
};

#define VALIDATE_SRC_MAX 4096

static bool
validate_src_drop_any(void *cls, const void *key, size_t len, void *value)
{
	struct src_limit **victim = cls;

	(void)key;
	(void)len;
	*victim = value;
	return false;
}

/* The limits of src, created full; NULL on OOM. */
static struct src_limit *
validate_src_get(struct core *core, const void *src, size_t len)
{
	struct src_limit *sl;

	if (len > sizeof(sl->key))
		len = sizeof(sl->key);
	sl = map_get(core->src_limits, src, len);
	if (sl == NULL) {
		if (map_size(core->src_limits) >= VALIDATE_SRC_MAX) {
			struct src_limit *victim = NULL;

			/* Any entry will do: a full bucket is what a new one
			 * would get anyway. */
			map_foreach(core->src_limits, validate_src_drop_any,
			    &victim);
			(void)map_remove(core->src_limits, victim->key,
			    victim->len);
			free(victim);
		}
		sl = malloc(sizeof(*sl));
		if (sl == NULL)
			return NULL;
		ratelimit_init(&sl->rl, core->cc.kx_rate_per_source,
		    core->cc.kx_rate_per_source);
		ratelimit_init(&sl->rl_pings,
		    (double)core->cc.pings_per_peer * 1e6 /
			(double)core->cc.ping_interval_us,
		    core->cc.pings_per_peer);
		sl->len = (uint16_t)len;
		memcpy(sl->key, src, len);
		if (map_put(core->src_limits, sl->key, sl->len, sl) < 0) {
			free(sl);
			return NULL;
		}
	}
	return sl;
}

bool
core_src_allow(struct core *core, const void *src, size_t len)
{
	struct src_limit *sl;

	if (src == NULL || len == 0)
		return true;
	sl = validate_src_get(core, src, len);
	return sl != NULL && ratelimit_take(&sl->rl, time_mono_us(), 1);
}

bool
core_src_allow_ping(struct core *core, const void *src, size_t len)
{
	struct src_limit *sl;

	if (src == NULL || len == 0)
		return true;
	sl = validate_src_get(core, src, len);
	return sl != NULL && ratelimit_take(&sl->rl_pings, time_mono_us(), 1);
}

static bool
validate_src_ok(struct core *core, const struct ferry_message_pack *mp)
{
	return core_src_allow(core, mp->src, mp->src_len);
}
