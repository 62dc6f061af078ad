/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receive side, core layer: what the transports call. A unit is split
 * into its outer messages (HELO, PING, PONG, KX, ENC), every length
 * checked before use; ENC frames are authenticated and their inner
 * messages dispatched (ACK, FRAG, ECHO, gossip, keepalive, or the layers
 * above). Anything malformed is counted and dropped, never trusted.
 */
#define LOG_TAG "core"
#include "core/rx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_int.h"
#include "core/echo.h"
#include "core/frag.h"
#include "core/gossip.h"
#include "core/handshake.h"
#include "core/link.h"
#include "core/path.h"
#include "core/peer.h"
#include "core/transport.h"
#include "core/tx.h"
#include "core/validate.h"
#include "lib/crc32.h"
#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"

int
rx_next(const uint8_t *buf, size_t len, size_t *off, uint16_t *ret_type,
    const uint8_t **ret_msg, size_t *ret_size)
{
	size_t size;

	if (*off == len)
		return 0;
	if (len - *off < FERRY_HDR_SIZE)
		return -EBADMSG;
	size = wire_get16(buf + *off);
	if (size < FERRY_HDR_SIZE || size > len - *off)
		return -EBADMSG;
	*ret_type = wire_get16(buf + *off + 2);
	*ret_msg = buf + *off;
	*ret_size = size;
	*off += size;
	return 1;
}

static void
rx_deliver(struct peer *p, uint16_t type, const uint8_t *data, size_t len)
{
	struct core *core = p->core;
	const struct core_handler *h = core_handler_find(core, type);

	if (h == NULL) {
		(*core->ctr.msg_no_handler)++;
		return;
	}
	(*core->ctr.msg_in)++;
	*core->ctr.msg_bytes_in += len;
	/* For storage or a client: the link carries what a client wants. */
	if (type >= FERRY_MSG_STORAGE_MIN)
		core_links_pin(p);
	h->fn(h->cls, &p->id, type, data, len);
}

/* A whole message, from one frame or reassembled. */
static void rx_inner(struct peer *p, uint16_t type, const uint8_t *msg,
    size_t size, bool whole_msg);

static void
rx_frag(struct peer *p, const uint8_t *msg, size_t size)
{
	struct core *core = p->core;
	struct frag f;
	uint8_t *buf;
	size_t len;
	uint16_t type;
	int r;

	if (frag_decode(msg, size, &f) < 0) {
		(*core->ctr.msg_bad)++;
		return;
	}
	(*core->ctr.frag_in)++;
	r = reasm_add(&p->rs, &core->reasm, core->cc.reassembly_per_peer, &f,
	    time_mono_us(), &buf, &len, &type);
	if (r < 0) {
		(*core->ctr.reasm_dropped)++;
		peer_log(p, FERRY_LOG_DEBUG, "fragment dropped: %s",
		    strerror(-r));
		/* Out of reassembly budget: the frame goes unacknowledged,
		 * so the sender resends the fragment (and slows down) until
		 * earlier messages complete and free their share. */
		if (r == -ENOSPC)
			core->rx_refused = true;
		return;
	}
	if (r == 0)
		return;
	(*core->ctr.reasm_done)++;
	rx_inner(p, type, buf, len, false);
	free(buf);
}

static void
rx_echo_req(struct peer *p, const uint8_t *body, size_t len)
{
	/* The answer mirrors the request; sizes are the requester's
	 * business and bounded by what it could send. */
	(void)tx_queue_ctrl(p, FERRY_MSG_ECHO_RESP, body, len);
}

/*
 * msg/size: with whole_msg false the body alone (a reassembled message),
 * else the framed message including its 4-byte header.
 */
static void
rx_inner(struct peer *p, uint16_t type, const uint8_t *msg, size_t size,
    bool whole_msg)
{
	const uint8_t *body = whole_msg ? msg + FERRY_HDR_SIZE : msg;
	size_t blen = whole_msg ? size - FERRY_HDR_SIZE : size;

	switch (type) {
	case FERRY_MSG_ACK:
		if (whole_msg)
			tx_on_ack(p, msg, size);
		break;
	case FERRY_MSG_FRAG:
		if (whole_msg)
			rx_frag(p, msg, size);
		break;
	case FERRY_MSG_ECHO_REQ:
		rx_echo_req(p, body, blen);
		break;
	case FERRY_MSG_ECHO_RESP:
		echo_on_resp(p, body, blen);
		break;
	case FERRY_MSG_HELO:
		if (whole_msg)
			gossip_on_helo(p, msg, size);
		break;
	case FERRY_MSG_BYE:
		core_links_on_bye(p);
		break;
	case FERRY_MSG_KEEPALIVE:
	case FERRY_MSG_PAD:
		break;
	default:
		if (type < FERRY_MSG_DHT_MIN) {
			(*p->core->ctr.msg_bad)++;
			break;
		}
		rx_deliver(p, type, body, blen);
		break;
	}
}

/* Walks the plaintext of a frame; false if it is malformed. */
static bool
rx_walk(struct peer *p, const uint8_t *pt, size_t len, bool *ret_eliciting)
{
	const uint8_t *msg;
	uint16_t type;
	size_t off = 0, size;
	int r;

	*ret_eliciting = false;
	while ((r = rx_next(pt, len, &off, &type, &msg, &size)) > 0) {
		if (type != FERRY_MSG_ACK && type != FERRY_MSG_PAD)
			*ret_eliciting = true;
		rx_inner(p, type, msg, size, true);
		if (p->dying)
			return true;
	}
	return r == 0;
}

static void
rx_enc(struct core *core, struct transport *t,
    const struct ferry_message_pack *mp, const uint8_t *msg, size_t size)
{
	struct path *pa;
	struct peer *p;
	uint32_t idx;
	uint64_t ctr, now = time_mono_us();
	size_t ptlen;
	bool eliciting;
	int r;

	(*core->ctr.enc_in)++;
	if (link_frame_index(msg, size, &idx) < 0) {
		(*core->ctr.units_bad)++;
		return;
	}
	p = peer_by_index(core, idx);
	if (p == NULL) {
		(*core->ctr.enc_unknown)++;
		return;
	}
	/* Decrypted straight out of the transport's buffer. */
	r = link_open_to(&p->link, msg, size, core->rx_buf, now, &ptlen, &ctr);
	if (r < 0) {
		(*(r == -EALREADY  ? core->ctr.enc_replay
			: r == -ENOKEY ? core->ctr.enc_unknown
				       : core->ctr.enc_bad))++;
		return;
	}
	p->last_rx_us = now;
	pa = mp->ts != NULL ? path_by_ts(core, mp->ts) : NULL;
	if (pa != NULL && pa->peer == p) {
		pa->last_rx_us = now;
		if (pa->failed) {
			pa->failed = false;
			path_choose(p);
		}
	} else if (mp->ts != NULL &&
	    (t->api->caps & FERRY_TCAP_INBOUND_REPLY) &&
	    t->api->associate(t->api->cls, mp->ts) == 0) {
		/* An authentic frame proves the sender is behind this
		 * session (WireGuard's roaming rule). */
		pa = path_add(p, t, mp->ts, NULL);
	}
	if (r == LINK_KX_NEWKEYS) {
		(*core->ctr.key_changes)++;
		peer_update_state(p);
	}
	core->rx_refused = false;
	if (!rx_walk(p, core->rx_buf, ptlen, &eliciting)) {
		(*core->ctr.msg_bad)++;
		peer_log(p, FERRY_LOG_INFO, "malformed frame contents");
	}
	if (!p->dying && !core->rx_refused)
		tx_on_frame(p, t, ctr, eliciting);
}

static void
rx_unit(void *cls, struct transport *t, const struct ferry_message_pack *mp)
{
	struct core *core = cls;
	const uint8_t *unit = mp->msg, *msg;
	size_t off = 0, size;
	uint16_t type;
	int r;

	if ((t->api->caps & FERRY_TCAP_CRC) && mp->crc != 0 &&
	    crc32_update(0, mp->msg, mp->len) != mp->crc) {
		(*core->ctr.units_bad)++;
		return;
	}
	while ((r = rx_next(unit, mp->len, &off, &type, &msg, &size)) > 0) {
		switch (type) {
		case FERRY_P2P_HELO:
			/* The sender's own HELOs: it advertises itself. */
			(void)validate_learn(core, msg, size, NULL, false,
			    mp->src, mp->src_len);
			break;
		case FERRY_P2P_PING:
			validate_on_ping(core, t, mp, msg, size);
			break;
		case FERRY_P2P_PONG:
			validate_on_pong(core, msg, size);
			break;
		case FERRY_P2P_KX:
			handshake_on_kx(core, t, mp, msg, size);
			break;
		case FERRY_P2P_ENC:
			rx_enc(core, t, mp, msg, size);
			break;
		default:
			(*core->ctr.units_bad)++;
			return;
		}
	}
	if (r < 0)
		(*core->ctr.units_bad)++;
}

static void
rx_session_gone(void *cls, struct transport *t, struct ferry_tsession *ts)
{
	struct core *core = cls;
	struct path *pa = path_by_ts(core, ts);
	struct peer *p;
	struct addr *a;

	(void)t;
	core_emu_forget(core, ts);
	if (pa != NULL) {
		path_free(pa, false);
		return;
	}
	/* A session opened for validation only. */
	a = core_addr_by_ts(core, ts);
	if (a != NULL) {
		p = a->peer;
		a->ts = NULL;
		peer_log(p, FERRY_LOG_DEBUG, "%s session closed", t->name);
	}
}

static void
rx_send_ready(void *cls, struct transport *t, struct ferry_tsession *ts)
{
	struct path *pa = path_by_ts(cls, ts);

	(void)t;
	if (pa != NULL)
		path_on_ready(pa);
}

const struct transport_hooks core_transport_hooks_impl = {
	rx_unit,
	rx_session_gone,
	rx_send_ready,
};
