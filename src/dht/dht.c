/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT layer object (see dht.h), dht layer: its life, the events of
 * the node below it, and the choice of hops. Requests are handled in
 * dht_route.c, answers in dht_answer.c, our own requests in dht_ops.c.
 */
#include "dht/dht_int.h"
#include "dht/dht_bpcc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "dht/dht_cscc.h"
#define LOG_TAG "dht"
#include "lib/log.h"
#include "lib/map.h"
#include "lib/stats.h"

void
dht_cfg_default(struct dht_cfg *ret)
{
	memset(ret, 0, sizeof(*ret));
	/* Kademlia's k: in networks of up to a few hundred peers, the
	 * buckets near a node then hold every peer there is, so that the
	 * peer a request ends at knows the true closest. */
	ret->k = 20;
	ret->replication = 3;
	ret->per_net = 2;
	ret->hops_max = 32;
	ret->max_block = 1024 * 1024;
	ret->timeout_us = 10u * 1000 * 1000;
	ret->path_ttl_us = 30u * 1000 * 1000;
	ret->path_max = 65536;
	ret->max_fails = 3;
	ret->refresh_us = 60u * 1000 * 1000;
	ret->request_rate = 1000;
	ret->origin_quota = 256u * 1024 * 1024;
	ret->spare_links = 8;
	ret->link_grace_us = 60u * 1000 * 1000;
	/* Chosen by issue 14's experiments (tests/bench/README,
	 * bench_dht_cc): at saturation and under cross-load BPCC keeps
	 * the most lookups succeeding, with the lowest tail latency. */
	ret->congestion = DHT_CC_BPCC;
	ret->cc_queue = 1024;
	dht_cscc_cfg_default(&ret->cscc);
	ret->bpcc_queue = DHT_BPCC_QUEUE_DEFAULT;
	ret->bpcc_block_max_us = DHT_BPCC_BLOCK_MAX_DEFAULT_US;
	/* A topic lists up to one answer's worth; the total bounds the
	 * table (about 80 MiB at full values). A day is long enough for an
	 * announcement renewed hourly to survive its signer's restarts. */
	ret->records_per_topic = DHTMSG_RECORDS_MAX;
	ret->records_max = 65536;
	ret->record_lifetime_s = 24 * 3600;
}

static bool
dht_cfg_valid(const struct dht_cfg *c)
{
	return c->k >= 1 && c->k <= RTABLE_K_MAX && c->replication >= 1 &&
	    c->replication <= DHTMSG_REPL_MAX && c->hops_max >= 1 &&
	    c->hops_max <= DHTMSG_HOPS_MAX && c->max_block >= 1 &&
	    c->max_block <= DHTMSG_BLOCK_MAX && c->timeout_us > 0 &&
	    c->path_max > 0 && c->max_fails >= 1 &&
	    c->spare_links <= DHT_SPARE_LINKS_MAX &&
	    (unsigned)c->congestion < DHT_CC_COUNT &&
	    c->cc_queue <= DHT_CC_QUEUE_MAX && dht_cscc_cfg_valid(&c->cscc) &&
	    c->bpcc_queue >= 1 && c->bpcc_queue <= DHT_BPCC_QUEUE_MAX &&
	    c->bpcc_block_max_us > 0 && c->records_per_topic >= 1 &&
	    c->records_per_topic <= DHTMSG_RECORDS_MAX &&
	    c->records_max >= 1 && c->records_max <= DHT_RECORDS_MAX_MAX &&
	    c->record_lifetime_s >= 1;
}

static int
dht_counters_bind(struct dht *d)
{
	static const struct stats_slot slots[] = {
#define C(f) STATS_SLOT(struct dht_counters, f)
		C(requests_in),
		C(forwarded),
		C(duplicates),
		C(malformed),
		C(no_route),
		C(not_found),
		C(refused),
		C(stored),
		C(store_fails),
		C(served),
		C(answers_direct),
		C(answers_routed),
		C(routed_back),
		C(answers_lost),
		C(receipts_in),
		C(receipts_bad),
		C(blocks_bad),
		C(unsolicited),
		C(timeouts),
		C(requests_out),
		C(rate_limited),
		C(completed),
		C(hops_total),
		C(retries),
		C(busy_again),
		C(origin_refused),
		C(rate_fails),
		C(rate_fails_held),
		C(receipts_implausible),
		C(entries_failed),
		C(answers_in_direct),
		C(answers_in_routed),
		C(acks_sent),
		C(cc_drops),
		C(cc_duplicates),
		C(cc_waiting),
		C(cc_refused),
		C(cscc_credits),
		C(cscc_ssthresh),
		C(cscc_in_flight),
		C(cscc_rtt_us),
		C(cscc_rto_us),
		C(cscc_acks),
		C(cscc_losses),
		C(cscc_retransmits),
		C(records_stored),
		C(records_refused),
		C(records_stale),
		C(records_full),
		C(records_served),
		C(records_in),
		C(records_bad),
#undef C
	};

	return stats_bind(&d->c, slots, sizeof(slots) / sizeof(slots[0]),
	    d->env.stat, d->env.cls);
}

int
dht_new(const struct dht_env *env, const struct dht_cfg *cfg,
    struct dht **ret)
{
	struct dht *d;

	if (!dht_cfg_valid(cfg))
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	d->env = *env;
	d->cfg = *cfg;
	d->deadline_told_us = UINT64_MAX;
	TAILQ_INIT(&d->ops);
	ratelog_init(&d->log, 1.0, 5.0);
	dhtkey_from_peer(&env->ident->id, &d->self);
	d->rt = rtable_new(&d->self, cfg->k, cfg->per_net);
	d->paths = pathcache_new(cfg->path_max, cfg->path_ttl_us);
	d->op_by_id = map_new();
	if (d->rt == NULL || d->paths == NULL || d->op_by_id == NULL ||
	    dht_limit_init(d) < 0 || dht_counters_bind(d) < 0 ||
	    dht_links_new(d) < 0 || dht_bpcc_new(d) < 0 ||
	    dht_cc_init(d) < 0) {
		dht_free(d);
		return -ENOMEM;
	}
	*ret = d;
	return 0;
}

void
dht_free(struct dht *d)
{
	if (d == NULL)
		return;
	d->cc.closing = true;
	if (d->op_by_id != NULL && d->cc.scheme != NULL)
		dht_ops_cancel_all(d);
	dht_cc_done(d);
	map_free(d->op_by_id);
	dht_bpcc_free(d);
	dht_limit_done(d);
	dht_links_free(d);
	pathcache_free(d->paths);
	rtable_free(d->rt);
	free(d);
}

/* A line of dht_log_drop() into buf, through its rate limit: false if
 * held back. */
static bool dht_log_format(struct dht *d, char *buf, size_t size,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static bool
dht_log_format(struct dht *d, char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	bool ok;

	va_start(ap, fmt);
	ok = ratelog_vformat(&d->log, dht_now(d), buf, size, fmt, ap);
	va_end(ap);
	return ok;
}

void
dht_log_drop(struct dht *d, const struct dhtkey *peer, const char *what)
{
	char hex[2 * DHTKEY_LEN + 1], line[256];

	dhtkey_hex(peer, hex);
	if (dht_log_format(d, line, sizeof(line), "peer %.16s: %s, dropped",
	        hex, what))
		log_info("%s", line);
}

uint64_t
dht_now(const struct dht *d)
{
	return d->env.now_us(d->env.cls);
}

void
dht_peer_up(struct dht *d, const struct dhtkey *peer, uint64_t net)
{
	uint8_t helo[RTABLE_HELO_MAX];
	size_t len;

	(void)rtable_seen(d->rt, peer, net, dht_now(d));
	dht_links_up(d, peer);
	dht_attempts_link_up(d);
	/* Kept with the entry, to hand on and to find it after a restart. */
	len = d->env.peer_helo(d->env.cls, peer, helo, sizeof(helo));
	if (len > 0)
		(void)rtable_set_helo(d->rt, peer, helo, len);
	dht_answer_vouch(d, peer);
	/* The first neighbour is the way in: asking it for our own
	 * neighbourhood fills the nearest buckets (Kademlia's join). */
	if (!d->looked_up_self) {
		d->looked_up_self = true;
		dht_ops_lookup(d, &d->self);
	}
}

void
dht_peer_down(struct dht *d, const struct dhtkey *peer)
{
	/* A link that went down is no proof the peer left for good: it
	 * stays a candidate, and failures are what remove it (a link asked
	 * for again that does not come counts as one). Routing skips it
	 * while it is unlinked. */
	dht_links_down(d, peer);
	dht_cc_peer_down(d, peer);
}

/* What a next hop may not be, for rtable_closest_match. */
struct dht_hop_filter {
	struct dht *d;
	const struct dhtkey *avoid;
	size_t n_avoid;
};

static bool
dht_hop_ok(void *cls, const struct rtable_entry *e)
{
	const struct dht_hop_filter *f = cls;

	for (size_t i = 0; i < f->n_avoid; i++)
		if (dhtkey_equal(&e->id, &f->avoid[i]))
			return false;
	if (dht_bpcc_stalled(f->d, &e->id))
		return false;
	return f->d->env.linked(f->d->env.cls, &e->id);
}

int
dht_next_hop(struct dht *d, const struct dhtkey *key,
    const struct dhtkey *avoid, size_t n_avoid, bool anywhere,
    struct dhtkey *ret)
{
	struct dht_hop_filter f = { .d = d, .avoid = avoid, .n_avoid = n_avoid };
	const struct rtable_entry *e =
	    rtable_closest_match(d->rt, key, !anywhere, dht_hop_ok, &f);

	if (e == NULL)
		return -ENOENT;
	*ret = e->id;
	return 0;
}

/* A linked peer other than the one cls points to. */
static bool
dht_other_linked(void *cls, const struct rtable_entry *e)
{
	const struct dht_hop_filter *f = cls;

	return !dhtkey_equal(&e->id, f->avoid) &&
	    f->d->env.linked(f->d->env.cls, &e->id);
}

/*
 * Silence is taken for death only while someone else is there to route
 * through. A node linked to one peer alone (two daemons that link by
 * mail, a node whose other links went down) whose attempts to it time
 * out is more likely seeing it slow than dead: it answers late, over a
 * loaded machine or a mail queue. Dropping it would leave the node
 * knowing nobody, and its requests would end at home at once: a GET
 * "not found" for the blocks that peer holds, a PUT stored here alone,
 * away from where the other looks for it (test_dht_net's
 * test_only_neighbour_stays). Kademlia (section 4.1) keeps a stale
 * contact for as long as no replacement is there. A dead peer's link
 * times out in the core, and routing skips it from then.
 */
bool
dht_entry_failed(struct dht *d, const struct dhtkey *peer)
{
	struct dht_hop_filter f = { .d = d, .avoid = peer, .n_avoid = 1 };

	if (d->env.linked(d->env.cls, peer) &&
	    rtable_closest_match(d->rt, peer, false, dht_other_linked, &f) ==
	        NULL)
		return false;
	if (!rtable_failed(d->rt, peer, d->cfg.max_fails))
		return false;
	(*d->c.entries_failed)++;
	return true;
}

size_t
dht_closest_with_self(struct dht *d, const struct dhtkey *key, size_t n,
    struct dhtkey *ret)
{
	const struct rtable_entry *c[2 * RTABLE_K_MAX + DHTMSG_FIND_MAX];
	size_t got = 0, cand;
	bool self_in = false;

	cand = rtable_closest(d->rt, key, 2 * d->cfg.k + n, c);
	for (size_t i = 0; i < cand && got < n; i++) {
		if (!d->env.linked(d->env.cls, &c[i]->id))
			continue;
		if (!self_in && dhtkey_closer(key, &d->self, &c[i]->id) < 0) {
			ret[got++] = d->self;
			self_in = true;
			if (got == n)
				break;
		}
		ret[got++] = c[i]->id;
	}
	if (!self_in && got < n)
		ret[got++] = d->self;
	return got;
}

/* A request from a neighbour over its REQUEST_RATE: its requester hears
 * of it now, rather than at its timeout, unless the FAILs are over their
 * own allowance. The FAIL goes straight to a linked requester, else back
 * to the neighbour, which passes it on along the path; no link is asked
 * for, whatever HELOs the request carries. */
static void
dht_refuse_over_rate(struct dht *d, const struct dhtkey *from,
    const struct dhtmsg_req *req, enum dht_limit_verdict verdict)
{
	struct dhtmsg_ans a;

	if (verdict == DHT_LIMIT_DROP) {
		(*d->c.rate_fails_held)++;
		return;
	}
	(*d->c.rate_fails)++;
	dht_answer_init(d, req, FERRY_MSG_DHT_FAIL, &a);
	a.code = DHTMSG_RATE;
	dht_answer_send(d, &a, from, NULL, 0);
}

void
dht_receive(struct dht *d, const struct dhtkey *from, uint16_t type,
    const void *body, size_t len)
{
	enum dht_limit_verdict verdict;
	struct dhtmsg_req req;

	dht_links_used(d, from);
	if (dhtmsg_is_answer(type)) {
		/* Alive: whatever failures it had in a row are forgiven (an
		 * answer that came after its attempt gave up too). */
		(void)rtable_seen(d->rt, from, 0, dht_now(d));
		dht_answer_receive(d, from, type, body, len);
		return;
	}
	if (dhtmsg_req_decode(type, body, len, &req) < 0) {
		(*d->c.malformed)++;
		dht_log_drop(d, from, "malformed DHT request");
		return;
	}
	verdict = dht_limit_take(d, from);
	if (verdict != DHT_LIMIT_TAKEN) {
		(*d->c.rate_limited)++;
		dht_log_drop(d, from, "DHT request over REQUEST_RATE");
		dht_refuse_over_rate(d, from, &req, verdict);
		return;
	}
	(*d->c.requests_in)++;
	(void)rtable_seen(d->rt, from, 0, dht_now(d));
	dht_route_request(d, from, &req);
}

void
dht_tick(struct dht *d)
{
	uint64_t now = dht_now(d);
	struct dhtkey target;
	unsigned prefix;

	dht_attempts_tick(d);
	dht_cc_tick(d);
	pathcache_expire(d->paths, now);
	dht_links_tick(d);
	/* One stale bucket a tick: a lookup of a random key in its range
	 * finds the peers that belong there. */
	if (d->looked_up_self &&
	    rtable_stale_bucket(d->rt, now, d->cfg.refresh_us, &prefix) == 0) {
		rtable_touch(d->rt, prefix, now);
		dhtkey_random_in_bucket(&d->self, prefix, &target);
		dht_ops_lookup(d, &target);
	}
}

const struct rtable *
dht_rtable(const struct dht *d)
{
	return d->rt;
}

void
dht_get_status(struct dht *d, struct dht_status *ret)
{
	struct dht_store_usage use;
	struct rtable_stats rs;
	struct dht_op *op;

	memset(ret, 0, sizeof(*ret));
	rtable_get_stats(d->rt, &rs);
	ret->k = d->cfg.k;
	ret->replication = d->cfg.replication;
	ret->entries = rs.entries;
	ret->cached = rs.cached;
	ret->buckets = rs.buckets;
	dht_store_usage(d, &use);
	ret->blocks = use.blocks;
	ret->bytes = use.bytes;
	ret->quota = use.quota;
	TAILQ_FOREACH(op, &d->ops, link)
		ret->requests++;
	dht_cc_status(d, &ret->cc);
}

int
dht_set_cfg(struct dht *d, const struct dht_cfg *cfg)
{
	if (!dht_cfg_valid(cfg))
		return -EINVAL;
	/* The table's k and bounds and the path cache were sized at
	 * start. */
	d->cfg.replication = cfg->replication;
	d->cfg.timeout_us = cfg->timeout_us;
	d->cfg.refresh_us = cfg->refresh_us;
	d->cfg.hops_max = cfg->hops_max;
	d->cfg.max_block = cfg->max_block;
	d->cfg.request_rate = cfg->request_rate;
	d->cfg.origin_quota = cfg->origin_quota;
	d->cfg.spare_links = cfg->spare_links;
	d->cfg.link_grace_us = cfg->link_grace_us;
	/* The scheme and its constants need a restart; the bounds do not
	 * (requests waiting beyond a smaller CC_QUEUE stay). */
	d->cfg.cc_queue = cfg->cc_queue;
	d->cfg.bpcc_queue = cfg->bpcc_queue;
	d->cfg.bpcc_block_max_us = cfg->bpcc_block_max_us;
	d->cfg.records_per_topic = cfg->records_per_topic;
	d->cfg.records_max = cfg->records_max;
	d->cfg.record_lifetime_s = cfg->record_lifetime_s;
	return 0;
}

static void
dht_relink(void *cls, const struct rtable_entry *e)
{
	struct dht *d = cls;

	if (e->helo_len > 0)
		(void)dht_links_ask(d, &e->id, e->helo, e->helo_len);
}

int
dht_load_table(struct dht *d, const void *data, size_t len)
{
	int r = rtable_decode(d->rt, data, len, dht_now(d));

	if (r == 0)
		rtable_foreach(d->rt, dht_relink, d);
	return r;
}

const struct dht_cfg *
dht_config(const struct dht *d)
{
	return &d->cfg;
}

const struct dhtkey *
dht_self(const struct dht *d)
{
	return &d->self;
}

void
dht_store_usage(const struct dht *d, struct dht_store_usage *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (d->env.store_usage != NULL)
		d->env.store_usage(d->env.cls, ret);
}
