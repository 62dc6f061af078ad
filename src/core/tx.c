/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The send side of a peer link (see tx.h), core layer. */
#define LOG_TAG "core"
#include "core/tx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/batch.h"
#include "core/core_int.h"
#include "core/gossip.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/transport.h"
#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"

/* A path is given up after this many probe timeouts in a row, and not
 * before this long without an acknowledgement. */
#define TX_FAIL_PTOS 5
#define TX_FAIL_MIN_US (2 * USEC_PER_SEC)
/* The window we advertise never closes entirely for the backlog, so
 * that a slow local client throttles its peers instead of stalling them;
 * only a hold on a peer closes its window (core_rx_account_hold). */
#define TX_MIN_RWND (16 * 1024)
/* Asking a closed window again: after a probe timeout, doubling up to
 * 2^TX_PERSIST_SHIFT_MAX of it, and never less often than every
 * TX_PERSIST_MAX_US unless one probe timeout is longer still. */
#define TX_PERSIST_SHIFT_MAX 6
#define TX_PERSIST_MAX_US USEC_PER_SEC

static void tx_flush_cb(evutil_socket_t fd, short what, void *cls);
static void tx_timer_cb(evutil_socket_t fd, short what, void *cls);

int
tx_peer_init(struct peer *p)
{
	struct core *core = p->core;

	p->flush_ev = event_new(core->base, -1, 0, tx_flush_cb, p);
	p->timer_ev = evtimer_new(core->base, tx_timer_cb, p);
	if (p->flush_ev == NULL || p->timer_ev == NULL)
		return -ENOMEM;
	cc_init(&p->cc, core->cc.initial_window, 1400, core->cc.recv_window,
	    CC_MAX_ACK_DELAY_US);
	return 0;
}

/* Releases the references a frame's record holds. */
static void
tx_release_items(struct sent_frame *sf)
{
	for (unsigned i = 0; i < sf->n_items; i++)
		outmsg_unref(sf->items[i].big);
	sf->n_items = 0;
}

static void
tx_drop_settled(void *cls, struct sent_frame *sf, bool acked)
{
	(void)cls;
	(void)acked;
	tx_release_items(sf);
}

/* Frames in flight to a peer that restarted: neither lost nor resent. */
static void
tx_abandon_settled(void *cls, struct sent_frame *sf, bool acked)
{
	struct peer *p = cls;

	(void)acked;
	for (unsigned i = 0; i < sf->n_items; i++) {
		struct outmsg *m = sf->items[i].big;

		if (m != NULL && outmsg_abandon(m))
			(*p->core->ctr.msgs_abandoned)++;
	}
	tx_release_items(sf);
}

/* Brings the queue gauge up to date with what p's queue holds now
 * (unsigned arithmetic: a fall adds its two's complement). */
static void
tx_gauge(struct peer *p)
{
	*p->core->ctr.queue_bytes += p->q.bytes - p->q_gauged;
	p->q_gauged = p->q.bytes;
}

void
tx_peer_done(struct peer *p)
{
	inflight_done(&p->fl, tx_drop_settled, NULL);
	/* What was still queued leaves the gauge with the queue. */
	sendq_done(&p->q);
	tx_gauge(p);
	if (p->flush_ev != NULL)
		event_free(p->flush_ev);
	if (p->timer_ev != NULL)
		event_free(p->timer_ev);
	p->flush_ev = p->timer_ev = NULL;
}

/* How long an ACK for a frame over t may wait for company: over mail an
 * ACK is a mail, so it waits long enough to cover many frames or to ride
 * along with data. */
static uint64_t
tx_ack_delay(const struct transport *t)
{
	return (t->api->caps & FERRY_TCAP_HIGH_LATENCY)
	    ? CC_MAX_ACK_DELAY_SLOW_US
	    : CC_MAX_ACK_DELAY_US;
}

/* The receive window we advertise to every peer not held. */
static uint32_t
tx_rwnd_open(const struct core *core)
{
	uint64_t w = core->cc.recv_window;

	w = core->rx_backlog < w ? w - core->rx_backlog : 0;
	if (w < TX_MIN_RWND)
		w = TX_MIN_RWND;
	return w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/* What the receive window we advertise to p is now. */
static uint32_t
tx_rwnd(const struct peer *p)
{
	return p->rx_held ? 0 : tx_rwnd_open(p->core);
}

/* True if p was told a window smaller than rwnd by a quarter of
 * RECV_WINDOW or more, or a closed one. */
static bool
tx_update_due(const struct peer *p, uint32_t rwnd)
{
	uint32_t told = p->rwnd_told;

	return told < rwnd &&
	    (told == 0 || rwnd - told >= p->core->cc.recv_window / 4);
}

/* Sends p an ACK with the window we have now (a window update), if it
 * runs over an unreliable path and ever sent us a frame. */
static void
tx_send_update(struct peer *p, uint64_t now)
{
	if (!p->connected || p->best == NULL || !path_unreliable(p->best))
		return;
	acktrack_force(&p->acks, now);
	if (!acktrack_pending(&p->acks))
		return;
	(*p->core->ctr.window_updates)++;
	tx_schedule(p);
}

/*
 * The window opened by a quarter or more since some ACK told it smaller:
 * each peer that was told so hears the new one at once. A sender learns
 * the window only from ACKs, and an idle link sends none, so without
 * this the next transfer after a local client drained its backlog would
 * stop at the old window and wait a round trip for the ACKs of its
 * first part (1 MiB after 1 MiB: 1.7 RTT instead of 0.6). Held peers
 * keep their closed window and are not in core->rwnd_told.
 */
void
tx_window_opened(struct core *core)
{
	uint32_t rwnd = tx_rwnd_open(core), least = UINT32_MAX;
	uint64_t now;
	struct peer *p;

	if (core->rwnd_told >= rwnd ||
	    rwnd - core->rwnd_told < core->cc.recv_window / 4)
		return;
	now = time_mono_us();
	TAILQ_FOREACH(p, &core->peers_by_age, age_link) {
		if (p->rx_held)
			continue;
		if (!tx_update_due(p, rwnd)) {
			if (p->rwnd_told < least)
				least = p->rwnd_told;
			continue;
		}
		tx_send_update(p, now);
	}
	core->rwnd_told = least < rwnd ? least : rwnd;
}

void
tx_peer_window_opened(struct peer *p)
{
	if (tx_update_due(p, tx_rwnd(p)))
		tx_send_update(p, time_mono_us());
}

enum sendq_class
tx_lane(enum core_class qclass)
{
	return qclass == CORE_CLASS_CONTROL ? SENDQ_CONTROL : SENDQ_BULK;
}

int
tx_queue_data(struct peer *p, enum core_class qclass, uint16_t type,
    const void *data, size_t len)
{
	size_t cap = FERRY_MSG_SIZE_MAX - FERRY_ENC_OVERHEAD;
	int r;

	r = sendq_push(&p->q, tx_lane(qclass), type, data, len,
	    FERRY_HDR_SIZE + len > cap, p->next_msg_id);
	if (r < 0)
		return r;
	if (FERRY_HDR_SIZE + len > cap)
		p->next_msg_id++;
	tx_gauge(p);
	tx_schedule(p);
	return 0;
}

int
tx_queue_ctrl(struct peer *p, uint16_t type, const void *data, size_t len)
{
	int r = sendq_push(&p->q, SENDQ_CTRL, type, data, len, false, 0);

	if (r == 0) {
		tx_gauge(p);
		tx_schedule(p);
	}
	return r;
}

void
tx_schedule(struct peer *p)
{
	struct timeval tv;

	if (p->core->cc.cork_us == 0) {
		event_active(p->flush_ev, 0, 0);
		return;
	}
	/* With a cork, a full frame's worth goes at once and less waits. */
	if (p->q.bytes >= p->cc.mss) {
		event_active(p->flush_ev, 0, 0);
	} else if (!event_pending(p->flush_ev, EV_TIMEOUT, NULL)) {
		time_us_to_tv(p->core->cc.cork_us, &tv);
		(void)event_add(p->flush_ev, &tv);
	}
}

/* A frame's record settled: feed the window, resend lost fragments. */
static void
tx_settled(void *cls, struct sent_frame *sf, bool acked)
{
	struct peer *p = cls;
	struct core *core = p->core;
	uint64_t now = time_mono_us();

	if (acked) {
		cc_on_acked(&p->cc, sf->bytes, sf->sent_us);
		tx_release_items(sf);
		return;
	}
	(*core->ctr.frames_lost)++;
	cc_on_lost(&p->cc, sf->sent_us, now);
	for (unsigned i = 0; i < sf->n_items; i++) {
		struct sent_item *it = &sf->items[i];

		(void)sendq_push_retx(&p->q, it->big, it->off, it->len);
	}
	tx_gauge(p);
	tx_release_items(sf);
}

/* The peer closed its window (it holds us: core_rx_account_hold), we
 * have something for it, and nothing in flight will bring the ACK that
 * reopens it. A lost window update would stall the link for good, so we
 * ask now and then (TCP's persist timer, RFC 9293 section 3.8.6.1). */
static bool
tx_window_closed(const struct peer *p)
{
	return p->cc.peer_rwnd == 0 && p->fl.eliciting == 0 &&
	    !sendq_empty(&p->q) && p->best != NULL &&
	    path_unreliable(p->best);
}

/* When to ask the closed window next: a probe timeout, doubled for each
 * time asked, at most TX_PERSIST_MAX_US (or one probe timeout). */
static uint64_t
tx_persist_at(const struct peer *p, uint64_t now)
{
	uint64_t pto = cc_pto(&p->cc), wait = pto;
	unsigned n = p->persist_n < TX_PERSIST_SHIFT_MAX
	    ? p->persist_n
	    : TX_PERSIST_SHIFT_MAX;

	wait <<= n;
	if (wait > TX_PERSIST_MAX_US)
		wait = pto > TX_PERSIST_MAX_US ? pto : TX_PERSIST_MAX_US;
	return now + wait;
}

static void
tx_arm_timer(struct peer *p)
{
	uint64_t now = time_mono_us(), at = 0;
	struct timeval tv;

	if (!tx_window_closed(p))
		p->persist_at_us = 0;
	else if (p->persist_at_us == 0)
		p->persist_at_us = tx_persist_at(p, now);
	at = p->persist_at_us;
	if (acktrack_pending(&p->acks) &&
	    (at == 0 || p->acks.deadline_us < at))
		at = p->acks.deadline_us;
	if (p->loss_at_us != 0 && (at == 0 || p->loss_at_us < at))
		at = p->loss_at_us;
	if (p->fl.eliciting > 0) {
		uint64_t pto = p->fl.pto_base_us + cc_pto(&p->cc);

		if (at == 0 || pto < at)
			at = pto;
	}
	if (at == 0) {
		if (p->timer_at_us != 0)
			(void)evtimer_del(p->timer_ev);
		p->timer_at_us = 0;
		return;
	}
	if (at == p->timer_at_us && evtimer_pending(p->timer_ev, NULL))
		return;
	p->timer_at_us = at;
	time_us_to_tv(at > now ? at - now : 0, &tv);
	(void)evtimer_add(p->timer_ev, &tv);
}

/* Puts the references of fragments in a unit that never left back in
 * the queue, and forgets the frames' records. */
static void
tx_requeue(struct peer *p, struct sent_frame *sfs, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		for (unsigned k = 0; k < sfs[i].n_items; k++) {
			struct sent_item *it = &sfs[i].items[k];

			(void)sendq_push_retx(&p->q, it->big, it->off,
			    it->len);
		}
		tx_release_items(&sfs[i]);
	}
	tx_gauge(p);
}

#define TX_UNIT_FRAMES 256 /* frames in one unit at most (mail) */

struct tx_unit {
	size_t used;			    /* bytes of the unit built */
	unsigned n;			    /* frames in it */
	struct sent_frame sf[TX_UNIT_FRAMES]; /* their records */
};

/* Writes the ACK p is owed, if any, at the start of the core's
 * plaintext scratch (at most cap bytes) as the first piece of iov, with
 * the window we advertise to p. Returns its size, 0 if none. */
static size_t
tx_put_ack(struct peer *p, size_t cap, uint64_t now, struct batch_iov *iov)
{
	struct core *core = p->core;
	uint32_t rwnd;
	size_t n;

	if (!acktrack_pending(&p->acks))
		return 0;
	rwnd = tx_rwnd(p);
	n = acktrack_write(&p->acks, core->pt_buf, cap, rwnd, now);
	if (n == 0)
		return 0;
	(*core->ctr.acks_out)++;
	iov->v[iov->n++] = (struct iovec){ core->pt_buf, n };
	iov->len = n;
	p->rwnd_told = rwnd;
	if (rwnd < core->rwnd_told && !p->rx_held)
		core->rwnd_told = rwnd;
	return n;
}

/*
 * Seals one frame into the unit being built. Returns false when nothing
 * more can go into this unit.
 */
static bool
tx_build_frame(struct peer *p, struct path *pa, struct tx_unit *u,
    uint64_t *room, uint64_t now)
{
	struct core *core = p->core;
	size_t mtu = path_mtu(pa), cap, n = 0, frame_cap;
	struct sent_frame *sf = &u->sf[u->n];
	struct batch_counts cnt = { 0 };
	struct batch_iov iov = { .n = 0, .len = 0 };
	uint64_t ctr;
	int sealed;

	if (u->n == TX_UNIT_FRAMES || mtu - u->used <= FERRY_ENC_OVERHEAD + 8)
		return false;
	cap = mtu - u->used;
	if (cap > FERRY_MSG_SIZE_MAX)
		cap = FERRY_MSG_SIZE_MAX;
	cap -= FERRY_ENC_OVERHEAD;
	frame_cap = (mtu < FERRY_MSG_SIZE_MAX ? mtu : FERRY_MSG_SIZE_MAX) -
	    FERRY_ENC_OVERHEAD;
	memset(sf, 0, sizeof(*sf));
	n = tx_put_ack(p, cap, now, &iov);
	/* Asking a closed window sends control messages only: no data
	 * goes where it was refused. */
	if (*room > 0 || p->probe || p->persist)
		(void)batch_fill(&p->q, core->pt_buf + n, cap - n, frame_cap,
		    &p->next_msg_id, sf, &cnt, &iov,
		    *room == 0 && !p->probe);
	if (iov.len == 0)
		return false;
	sealed = link_sealv(&p->link, iov.v, iov.n, core->unit_buf + u->used,
	    &ctr);
	if (sealed < 0) {
		tx_requeue(p, sf, 1);
		return false;
	}
	sf->counter = ctr;
	sf->sent_us = now;
	sf->bytes = (uint32_t)sealed;
	u->used += (size_t)sealed;
	u->n++;
	(*core->ctr.enc_out)++;
	*core->ctr.msg_out += cnt.msgs;
	*core->ctr.frag_out += cnt.frags;
	*core->ctr.frag_retx += cnt.retx;
	*core->ctr.msg_bytes_out += cnt.payload;
	tx_gauge(p);
	if (sf->eliciting) {
		p->probe = false;
		p->persist = false;
		*room = *room > (uint64_t)sealed ? *room - (uint64_t)sealed : 0;
	}
	return true;
}

/* Records sent frames (unreliable paths) or lets go of their fragments
 * (reliable paths: the transport now owns delivery). */
static void
tx_commit(struct peer *p, struct path *pa, struct tx_unit *u)
{
	bool track = path_unreliable(pa);

	for (unsigned i = 0; i < u->n; i++) {
		struct sent_frame *sf = &u->sf[i];

		if (track && sf->eliciting && inflight_add(&p->fl, sf) == 0)
			continue;
		tx_release_items(sf);
	}
}

/* Tells the layers of each class of p's queue that has room again after
 * refusing a message. */
static void
tx_drained(struct peer *p)
{
	struct core *core = p->core;

	for (int c = 0; c < CORE_NCLASS; c++)
		if (sendq_drained(&p->q, tx_lane((enum core_class)c)))
			subs_emit(&core->drain_subs, &p->id, false,
			    (enum core_class)c);
}

static bool
tx_wants_to_send(const struct peer *p, uint64_t room, uint64_t now)
{
	if (acktrack_pending(&p->acks) && p->acks.deadline_us <= now)
		return true;
	return !sendq_empty(&p->q) && (room > 0 || p->probe || p->persist);
}

static void
tx_flush(struct peer *p)
{
	struct core *core = p->core;
	uint64_t now = time_mono_us();
	struct path *pa;

	while (p->link_ok && link_ready(&p->link) && (pa = p->best) != NULL &&
	    !pa->blocked) {
		uint64_t room = path_unreliable(pa)
		    ? cc_room(&p->cc, p->fl.bytes)
		    : UINT64_MAX;
		struct tx_unit *u;
		int r;

		if (!tx_wants_to_send(p, room, now))
			break;
		if (core_unit_buf(core, path_mtu(pa)) == NULL)
			break;
		u = core->txu;
		u->used = 0;
		u->n = 0;
		while (tx_build_frame(p, pa, u, &room, now))
			if (!tx_wants_to_send(p, room, now) &&
			    !acktrack_pending(&p->acks))
				break;
		if (u->n == 0)
			break;
		r = path_send(pa, core->unit_buf, u->used, true);
		if (r < 0) {
			tx_requeue(p, u->sf, u->n);
			(*pa->t->stat_send_fail)++;
			path_fail(pa);
			/* No other path to try: wait for the timers rather than
			 * spin on a transport that keeps refusing. */
			if (p->best == pa)
				break;
			continue;
		}
		tx_commit(p, pa, u);
		p->last_tx_us = now;
	}
	tx_arm_timer(p);
	tx_drained(p);
}

static void
tx_flush_cb(evutil_socket_t fd, short what, void *cls)
{
	(void)fd;
	(void)what;
	tx_flush(cls);
}

static void
tx_timer_cb(evutil_socket_t fd, short what, void *cls)
{
	struct peer *p = cls;
	uint64_t now = time_mono_us();

	(void)fd;
	(void)what;
	p->timer_at_us = 0;
	if (p->persist_at_us != 0 && now >= p->persist_at_us) {
		p->persist_at_us = 0;
		if (tx_window_closed(p)) {
			/* A keepalive makes the frame ask for an ACK even
			 * when no other control message waits. */
			(void)tx_queue_ctrl(p, FERRY_MSG_KEEPALIVE, NULL, 0);
			p->persist = true;
			p->persist_n++;
			(*p->core->ctr.window_probes)++;
		}
	}
	p->loss_at_us = inflight_detect(&p->fl, now, cc_loss_delay(&p->cc),
	    tx_settled, p);
	if (p->fl.eliciting > 0 &&
	    now >= p->fl.pto_base_us + cc_pto(&p->cc)) {
		p->cc.pto_count++;
		p->fl.pto_base_us = now;
		if (p->cc.pto_count >= TX_FAIL_PTOS &&
		    now - p->last_ack_us >= TX_FAIL_MIN_US && p->best != NULL) {
			inflight_lose_all(&p->fl, tx_settled, p);
			cc_collapse(&p->cc);
			p->cc.pto_count = 0;
			path_fail(p->best);
		} else {
			/* A probe past the window: its ACK tells what of the
			 * frames before it arrived. */
			p->probe = true;
			(void)tx_queue_ctrl(p, FERRY_MSG_KEEPALIVE, NULL, 0);
		}
	}
	tx_flush(p);
}

int
tx_send_bye(struct peer *p)
{
	uint8_t msg[FERRY_HDR_SIZE], unit[FERRY_HDR_SIZE + FERRY_ENC_OVERHEAD];
	uint64_t ctr;
	int n;

	if (!p->link_ok || !link_ready(&p->link) || p->best == NULL)
		return -ENOTCONN;
	wire_put_hdr(msg, FERRY_HDR_SIZE, FERRY_MSG_BYE);
	n = link_seal(&p->link, msg, sizeof(msg), unit, &ctr);
	if (n < 0)
		return n;
	(*p->core->ctr.enc_out)++;
	return path_send(p->best, unit, (size_t)n, true);
}

void
tx_link_up(struct peer *p)
{
	/* Send something at once: our first frame under the new keys is
	 * what confirms them to the peer if our KX did not. */
	(void)tx_queue_ctrl(p, FERRY_MSG_KEEPALIVE, NULL, 0);
	gossip_link_up(p);
}

void
tx_peer_restarted(struct peer *p)
{
	uint64_t bytes;

	inflight_lose_all(&p->fl, tx_abandon_settled, p);
	*p->core->ctr.msgs_abandoned += sendq_drop_started(&p->q, &bytes);
	tx_gauge(p);
	/* The old session's silence says nothing about the path. */
	p->cc.pto_count = 0;
	/* A flush also tells held-back senders if the queue has room now. */
	tx_schedule(p);
}

void
tx_path_changed(struct peer *p)
{
	struct path *pa = p->best;
	bool unordered;
	size_t mtu;

	if (pa == NULL)
		return;
	mtu = path_mtu(pa) < FERRY_MSG_SIZE_MAX ? path_mtu(pa)
						: FERRY_MSG_SIZE_MAX;
	/* What is in flight went over the old path: give it up (its
	 * fragments are sent again over the new one), so that a probe
	 * timeout never blames the new path for the old one's silence. A
	 * new path has its own capacity: its window starts afresh. */
	inflight_lose_all(&p->fl, tx_settled, p);
	cc_init(&p->cc, p->core->cc.initial_window, mtu, p->cc.peer_rwnd,
	    tx_ack_delay(pa->t));
	/* Mail keeps no order: no frame is lost for being overtaken. */
	unordered = (pa->t->api->caps & FERRY_TCAP_HIGH_LATENCY) != 0;
	p->cc.unordered = unordered;
	p->fl.packet_threshold = unordered ? 0 : LOSS_PACKET_THRESHOLD;
	tx_schedule(p);
}

void
tx_on_ack(struct peer *p, const uint8_t *msg, size_t len)
{
	struct core *core = p->core;
	uint64_t now = time_mono_us(), rtt;
	struct ack_msg a;
	uint64_t before = p->fl.bytes;

	if (ack_decode(msg, len, &a) < 0) {
		(*core->ctr.msg_bad)++;
		return;
	}
	(*core->ctr.acks_in)++;
	p->cc.peer_rwnd = a.rwnd;
	if (a.rwnd > 0)
		p->persist_n = 0;
	inflight_on_ack(&p->fl, &a, now, cc_loss_delay(&p->cc), tx_settled, p,
	    &rtt);
	if (rtt > 0)
		cc_on_rtt(&p->cc, rtt, a.delay_us);
	if (p->fl.bytes < before) {
		p->last_ack_us = now;
		p->cc.pto_count = 0;
		p->fl.pto_base_us = now;
	}
	p->loss_at_us = inflight_detect(&p->fl, now, cc_loss_delay(&p->cc),
	    tx_settled, p);
	tx_schedule(p);
}

void
tx_on_frame(struct peer *p, const struct transport *t, uint64_t counter,
    bool eliciting)
{
	if (t->api->caps & FERRY_TCAP_RELIABLE)
		return;
	acktrack_on_frame(&p->acks, counter, eliciting, time_mono_us(),
	    tx_ack_delay(t));
	if (acktrack_pending(&p->acks)) {
		if (p->acks.deadline_us <= time_mono_us())
			tx_schedule(p);
		else
			tx_arm_timer(p);
	}
}

void
tx_peer_tick(struct peer *p, uint64_t now_us)
{
	struct core *core = p->core;
	bool slow;

	if (!p->connected || p->best == NULL)
		return;
	/* Over mail a keepalive would be a mail: none, and no timeout. */
	slow = (p->best->t->api->caps & FERRY_TCAP_HIGH_LATENCY) != 0;
	if (slow)
		return;
	if (now_us - p->last_tx_us >= core->cc.keepalive_us)
		(void)tx_queue_ctrl(p, FERRY_MSG_KEEPALIVE, NULL, 0);
	/* A held peer's streams are not read: its silence is ours. */
	if (!p->rx_held && now_us - p->last_rx_us >= core->cc.link_timeout_us)
		peer_link_lost(p);
}

struct tx_unit *
tx_unit_new(void)
{
	return calloc(1, sizeof(struct tx_unit));
}
