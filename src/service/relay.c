/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Application messages through the client socket, service layer: SEND
 * (reassembly of chunked messages, back-pressure by not reading the
 * client while the peer's queue is full, DESIGN.md BPCC), REGISTER, and
 * the fan-out of inbound messages as RECEIVE frames.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "core/core.h"
#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "service/registry.h"

/* Words of a client's bitmap of registered types. */
#define RELAY_TYPE_WORDS (65536 / 64)

/* A reassembly buffer above this is freed, not kept, once used. */
#define RELAY_REASM_KEEP (256u * 1024)

static void
relay_arm_retry(struct service *svc)
{
	struct timeval tv;

	if (evtimer_pending(svc->ev_retry, NULL))
		return;
	time_us_to_tv(SERVICE_RETRY_US, &tv);
	(void)evtimer_add(svc->ev_retry, &tv);
}

static void
relay_block(struct client *c, const struct ferry_peer_id *peer, uint16_t type,
    uint32_t req_id, bool from_reasm)
{
	c->blocked = true;
	c->blocked_reasm = from_reasm;
	c->blocked_peer = *peer;
	c->blocked_type = type;
	c->blocked_req_id = req_id;
	TAILQ_INSERT_TAIL(&c->svc->blocked, c, blink);
	(*c->svc->c.send_blocked)++;
	relay_arm_retry(c->svc);
}

static void
relay_count(struct service *svc, int r)
{
	switch (r) {
	case 0:
		(*svc->c.send_ok)++;
		break;
	case -ENOTCONN:
		(*svc->c.send_notconn)++;
		break;
	case -EAGAIN:
		(*svc->c.send_again)++;
		break;
	case -EINVAL:
		(*svc->c.send_inval)++;
		break;
	default:
		(*svc->c.send_other)++;
		break;
	}
}

/*
 * Hands one whole message to the core. 0 when done with it (answered if
 * req_id asks), 1 when it must wait for the peer's queue: only without a
 * req_id, since a client that asked for a verdict gets -EAGAIN instead.
 */
static int
relay_deliver(struct client *c, uint32_t req_id,
    const struct ferry_peer_id *peer, uint16_t type, const void *data,
    size_t len, bool from_reasm)
{
	const char *why = NULL;
	int r;

	if (type < FERRY_APP_TYPE_MIN) {
		r = -EINVAL;
		why = "reserved message type";
	} else if (c->reasm_flags != 0) {
		r = -EINVAL;
		why = "unknown SEND flags";
	} else if (memcmp(peer, core_identity(c->svc->core),
	               sizeof(*peer)) == 0) {
		r = -ENOTCONN;
		why = "that is this daemon's own peer id";
	} else {
		r = core_send(c->svc->core, peer, type, data, len);
	}
	if (r == -EAGAIN && req_id == 0) {
		relay_block(c, peer, type, req_id, from_reasm);
		return 1;
	}
	relay_count(c->svc, r);
	if (req_id != 0)
		return reply_result(c, req_id, r, why);
	return 0;
}

static void
relay_reasm_reset(struct client *c)
{
	if (c->reasm.cap > RELAY_REASM_KEEP)
		buf_done(&c->reasm);
	else
		buf_reset(&c->reasm);
}

int
relay_send(struct client *c, const struct msg_req *req)
{
	const struct msg_send *s = &req->u.send;
	int piece = msgparse_chunk(&c->chunks, s), r;

	if (piece < 0)
		return client_drop(c, s->req_id, piece,
		    "SEND piece out of sequence");
	if (piece == MSGPARSE_WHOLE || piece == MSGPARSE_FIRST)
		c->reasm_flags = 0;
	/* Flags this daemon does not know might change what the client
	 * means by the message: refused, never ignored. */
	c->reasm_flags |= s->flags;
	if (piece == MSGPARSE_WHOLE)
		return relay_deliver(c, s->req_id, &s->peer, s->app_type,
		    s->data, s->len, false);
	if (piece == MSGPARSE_FIRST)
		relay_reasm_reset(c);
	if (buf_append(&c->reasm, s->data, s->len) < 0) {
		log_warn(
		    "client fd %d: out of memory reassembling a message; disconnecting",
		    c->conn.fd);
		return -ENOMEM;
	}
	if (piece != MSGPARSE_LAST)
		return 0;
	r = relay_deliver(c, s->req_id, &s->peer, s->app_type,
	    buf_head(&c->reasm), buf_size(&c->reasm), true);
	if (r == 0)
		relay_reasm_reset(c);
	/* A blocked reassembled message waits in reasm, not in the input,
	 * so this frame is consumed either way. */
	return r < 0 ? r : 0;
}

/* Retries a blocked client's message and lets it go on. Negative: the
 * client must be freed. */
static int
relay_resume(struct client *c)
{
	int r = 0;

	c->blocked = false;
	if (c->blocked_reasm) {
		c->blocked_reasm = false;
		r = relay_deliver(c, c->blocked_req_id, &c->blocked_peer,
		    c->blocked_type, buf_head(&c->reasm), buf_size(&c->reasm),
		    true);
		if (r == 0)
			relay_reasm_reset(c);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	/* A message blocked in place is the input's first frame: parsing
	 * goes on from there. */
	return conn_work(&c->conn);
}

/* Resumes the blocked clients that match peer (NULL: all). */
static void
relay_resume_matching(struct service *svc, const struct ferry_peer_id *peer)
{
	TAILQ_HEAD(, client) ready = TAILQ_HEAD_INITIALIZER(ready);
	struct client *c, *next;

	/* Move them out first: a client that blocks again goes back onto
	 * svc->blocked and is not retried twice in one pass. */
	for (c = TAILQ_FIRST(&svc->blocked); c != NULL; c = next) {
		next = TAILQ_NEXT(c, blink);
		if (peer != NULL &&
		    memcmp(&c->blocked_peer, peer, sizeof(*peer)) != 0)
			continue;
		TAILQ_REMOVE(&svc->blocked, c, blink);
		TAILQ_INSERT_TAIL(&ready, c, blink);
	}
	while ((c = TAILQ_FIRST(&ready)) != NULL) {
		TAILQ_REMOVE(&ready, c, blink);
		c->blocked = false;
		if (relay_resume(c) < 0)
			conn_end(&c->conn);
	}
}

static void
relay_on_drain(void *cls, const struct ferry_peer_id *peer,
    enum core_class qclass)
{
	/* Clients' messages go in the bulk class (core_send). */
	if (qclass == CORE_CLASS_BULK)
		relay_resume_matching(cls, peer);
}

/* A drain callback may never come (the link went down meanwhile), so
 * blocked clients also retry on a timer and then see -ENOTCONN. */
static void
relay_on_retry(evutil_socket_t fd, short what, void *cls)
{
	struct service *svc = cls;

	(void)fd;
	(void)what;
	relay_resume_matching(svc, NULL);
	if (!TAILQ_EMPTY(&svc->blocked))
		relay_arm_retry(svc);
}

/* RECEIVE: 4 peer[32]  36 app_type  38 flags  40 total_len  44 offset
 *         48 data[] */
static void
relay_put_receive(struct client *c, const struct ferry_peer_id *peer,
    uint16_t type, const uint8_t *data, size_t len)
{
	size_t off = 0, n;
	uint8_t *p;

	do {
		n = len - off;
		if (n > MSGPARSE_RECEIVE_DATA_MAX)
			n = MSGPARSE_RECEIVE_DATA_MAX;
		/* Cannot fail: the caller reserved room for every piece. */
		p = reply_frame(c, FERRY_C_RECEIVE, FERRY_C_RECEIVE_FIXED + n);
		memcpy(p + 4, peer->bytes, FERRY_PEER_ID_LEN);
		wire_put16(p + 36, type);
		wire_put16(p + 38, 0);
		wire_put32(p + 40, (uint32_t)len);
		wire_put32(p + 44, (uint32_t)off);
		memcpy(p + FERRY_C_RECEIVE_FIXED, data + off, n);
		off += n;
	} while (off < len);
}

static void
relay_on_message(void *cls, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	struct service *svc = cls;
	struct client *const *clients;
	size_t n, pieces, need;

	clients = registry_lookup(svc->reg, type, &n);
	if (n == 0) {
		(*svc->c.recv_no_listener)++;
		return;
	}
	if (len > FERRY_APP_MSG_MAX) {
		(*svc->c.recv_dropped) += n;
		return;
	}
	pieces = len == 0
	    ? 1
	    : (len + MSGPARSE_RECEIVE_DATA_MAX - 1) / MSGPARSE_RECEIVE_DATA_MAX;
	need = len + pieces * FERRY_C_RECEIVE_FIXED;
	for (size_t i = 0; i < n; i++) {
		struct client *c = clients[i];

		/*
		 * A client is given a message while less than CLIENT_BUFFER
		 * waits for it, however large the message (conn_out_room).
		 * The whole message or nothing: reserving first means the
		 * pieces cannot be cut apart by a failed allocation.
		 */
		if (conn_out_room(&c->conn, need) < 0) {
			(*svc->c.recv_dropped)++;
			continue;
		}
		relay_put_receive(c, peer, type, data, len);
		(*svc->c.recv_delivered)++;
		conn_flush_later(&c->conn);
	}
}

static int
relay_add_type(struct client *c, uint16_t type)
{
	uint64_t bit = 1ull << (type % 64);

	/* A bitmap: a client may register all 64 Ki types, and each REGISTER
	 * then costs what it carries, not that times what came before. */
	if (c->types == NULL) {
		c->types = calloc(RELAY_TYPE_WORDS, sizeof(*c->types));
		if (c->types == NULL)
			return -ENOMEM;
	}
	if (c->types[type / 64] & bit)
		return 0;
	if (registry_add(c->svc->reg, type, c) < 0)
		return -ENOMEM;
	c->types[type / 64] |= bit;
	return 0;
}

int
relay_register(struct client *c, const struct msg_req *req)
{
	const struct msg_register *reg = &req->u.reg;
	int r;

	for (size_t i = 0; i < reg->n; i++)
		if (msgparse_register_type(reg, i) < FERRY_APP_TYPE_MIN)
			return reply_result(c, req->req_id, -EINVAL,
			    "types below 0x0400 are reserved");
	for (size_t i = 0; i < reg->n; i++) {
		r = relay_add_type(c, msgparse_register_type(reg, i));
		if (r < 0)
			return reply_result(c, req->req_id, r, NULL);
	}
	return reply_result(c, req->req_id, 0, NULL);
}

void
relay_client_gone(struct client *c)
{
	if (c->blocked)
		TAILQ_REMOVE(&c->svc->blocked, c, blink);
	c->blocked = false;
	for (size_t w = 0; c->types != NULL && w < RELAY_TYPE_WORDS; w++)
		for (uint64_t bits = c->types[w]; bits != 0; bits &= bits - 1)
			registry_remove(c->svc->reg,
			    (uint16_t)(w * 64 + (size_t)__builtin_ctzll(bits)), c);
	free(c->types);
	c->types = NULL;
}

int
relay_init(struct service *svc)
{
	int r;

	svc->ev_retry = evtimer_new(svc->base, relay_on_retry, svc);
	if (svc->ev_retry == NULL)
		return -ENOMEM;
	r = core_handler_set(svc->core, FERRY_APP_TYPE_MIN, 0xffff,
	    relay_on_message, svc);
	if (r < 0)
		return r;
	svc->handler_set = true;
	return core_drain_subscribe(svc->core, &svc->drain_sub, relay_on_drain,
	    svc);
}

void
relay_done(struct service *svc)
{
	/* Our subscription only: other layers' stay as they are. */
	core_unsubscribe(&svc->drain_sub);
	if (svc->handler_set)
		core_handler_unset(svc->core, FERRY_APP_TYPE_MIN, 0xffff);
	svc->handler_set = false;
	if (svc->ev_retry != NULL)
		event_free(svc->ev_retry);
	svc->ev_retry = NULL;
}
