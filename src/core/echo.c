/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Core-level round trips (see echo.h), core layer. */
#define LOG_TAG "core"
#include "core/echo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/core_int.h"
#include "core/peer.h"
#include "core/tx.h"
#include "lib/time.h"
#include "lib/wire.h"

struct echo_req {
	TAILQ_ENTRY(echo_req) link; /* in core->echos until reported */
	struct core *core;
	struct peer *peer;	    /* NULL once finished */
	uint32_t count;		    /* round trips asked for */
	uint16_t payload_len;
	uint64_t nonce;		    /* of the request in flight */
	uint64_t sent_ns;
	struct core_echo_result res;
	int status;
	core_echo_fn *fn;
	void *cls;
	struct event *ev; /* run timeout, then the deferred report */
};

static void echo_report_cb(evutil_socket_t fd, short what, void *cls);

static void
echo_free(struct echo_req *e)
{
	TAILQ_REMOVE(&e->core->echos, e, link);
	if (e->ev != NULL)
		event_free(e->ev);
	free(e);
}

/* Ends the run and reports from the event loop, never from the caller's
 * stack (core.h promises core_echo's callback is never synchronous). */
static void
echo_finish(struct echo_req *e, int status)
{
	if (e->peer == NULL)
		return;
	e->peer = NULL;
	e->status = status;
	(void)event_del(e->ev);
	event_active(e->ev, 0, 0);
}

static void
echo_report_cb(evutil_socket_t fd, short what, void *cls)
{
	struct echo_req *e = cls;

	(void)fd;
	if (e->peer != NULL) {
		/* The run's timeout fired. */
		(void)what;
		echo_finish(e, -ETIMEDOUT);
		return;
	}
	e->fn(e->cls, e->status, &e->res);
	echo_free(e);
}

static int
echo_send(struct echo_req *e)
{
	uint8_t body[8 + UINT16_MAX];

	/* Unique per run and round trip: a counter from a random start
	 * (no system call per round trip, unlike fresh random numbers). */
	e->nonce++;
	wire_put64(body, e->nonce);
	memset(body + 8, 0, e->payload_len);
	e->sent_ns = time_mono_ns();
	return tx_queue_ctrl(e->peer, FERRY_MSG_ECHO_REQ, body,
	    8 + (size_t)e->payload_len);
}

int
echo_start(struct peer *p, uint32_t count, uint16_t payload_len,
    uint32_t timeout_ms, core_echo_fn *fn, void *cls)
{
	struct echo_req *e = calloc(1, sizeof(*e));
	struct timeval tv;
	int r;

	if (e == NULL)
		return -ENOMEM;
	e->core = p->core;
	e->peer = p;
	e->count = count;
	e->payload_len = payload_len;
	e->fn = fn;
	e->cls = cls;
	e->res.min_ns = UINT64_MAX;
	e->nonce = ((uint64_t)randombytes_random() << 32) | randombytes_random();
	e->ev = evtimer_new(p->core->base, echo_report_cb, e);
	if (e->ev == NULL) {
		free(e);
		return -ENOMEM;
	}
	TAILQ_INSERT_TAIL(&p->core->echos, e, link);
	time_us_to_tv((uint64_t)timeout_ms * USEC_PER_MSEC, &tv);
	(void)evtimer_add(e->ev, &tv);
	r = echo_send(e);
	if (r < 0)
		echo_finish(e, r);
	return 0;
}

void
echo_on_resp(struct peer *p, const uint8_t *body, size_t len)
{
	struct echo_req *e;
	uint64_t nonce, rtt;

	if (len < 8)
		return;
	nonce = wire_get64(body);
	TAILQ_FOREACH(e, &p->core->echos, link)
		if (e->peer == p && e->nonce == nonce)
			break;
	if (e == NULL || len != 8 + (size_t)e->payload_len)
		return;
	rtt = time_mono_ns() - e->sent_ns;
	e->res.count++;
	e->res.total_ns += rtt;
	if (rtt < e->res.min_ns)
		e->res.min_ns = rtt;
	if (rtt > e->res.max_ns)
		e->res.max_ns = rtt;
	if (e->res.count == e->count || echo_send(e) < 0)
		echo_finish(e, e->res.count == e->count ? 0 : -ENOMEM);
}

void
echo_cancel_peer(struct peer *p, int status)
{
	struct echo_req *e;

	TAILQ_FOREACH(e, &p->core->echos, link)
		if (e->peer == p)
			echo_finish(e, status);
}

void
echo_shutdown(struct core *core)
{
	struct echo_req *e;

	/* Every run is reported exactly once, even now. */
	while ((e = TAILQ_FIRST(&core->echos)) != NULL) {
		if (e->peer != NULL)
			e->status = -ECANCELED;
		e->fn(e->cls, e->status, &e->res);
		echo_free(e);
	}
}
