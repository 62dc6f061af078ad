/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * PING through the core's echo round trips, service layer. The answer
 * comes later, maybe after the client has gone: each request is a small
 * record that the client detaches from when it leaves.
 */
#include "service/service_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "lib/wire.h"

struct svc_ping {
	LIST_ENTRY(svc_ping) link; /* client->pings while attached */
	struct client *client;     /* NULL once the client has gone */
	uint32_t req_id;           /* of the PING request */
};

/* PONG: 4 req_id  8 count  12 total_ns  20 min_ns  28 max_ns */
static void
ping_on_done(void *cls, int status, const struct core_echo_result *res)
{
	struct svc_ping *ping = cls;
	struct client *c = ping->client;
	uint8_t *p;

	if (c == NULL) {
		free(ping);
		return;
	}
	LIST_REMOVE(ping, link);
	if (status == 0) {
		p = reply_frame(c, FERRY_C_PONG, FERRY_C_PONG_SIZE);
		if (p != NULL) {
			wire_put32(p + 4, ping->req_id);
			wire_put32(p + 8, res->count);
			wire_put64(p + 12, res->total_ns);
			wire_put64(p + 20, res->min_ns);
			wire_put64(p + 28, res->max_ns);
		}
	} else {
		(void)reply_result(c, ping->req_id, status, NULL);
	}
	/* Written from the event loop, never freed from inside the core's
	 * callback. A reply lost to OOM shows as the client's timeout. */
	conn_flush_later(&c->conn);
	free(ping);
}

int
ping_request(struct client *c, const struct msg_req *req)
{
	const struct msg_ping *m = &req->u.ping;
	struct svc_ping *ping;
	int r;

	/* Refused rather than ignored: a later version may give the field
	 * a meaning, and a count of 0 or a timeout of 0 asks for nothing. */
	if (m->reserved != 0)
		return reply_result(c, req->req_id, -EINVAL,
		    "reserved field not 0");
	if (m->count == 0 || m->timeout_ms == 0)
		return reply_result(c, req->req_id, -EINVAL,
		    "count and timeout_ms must not be 0");
	ping = calloc(1, sizeof(*ping));
	if (ping == NULL)
		return reply_result(c, req->req_id, -ENOMEM, NULL);
	ping->client = c;
	ping->req_id = req->req_id;
	r = core_echo(c->svc->core, &m->peer, m->count, m->payload_len,
	    m->timeout_ms, ping_on_done, ping);
	if (r < 0) {
		free(ping);
		return reply_result(c, req->req_id, r, NULL);
	}
	LIST_INSERT_HEAD(&c->pings, ping, link);
	return 0;
}

void
ping_client_gone(struct client *c)
{
	struct svc_ping *ping;

	while ((ping = LIST_FIRST(&c->pings)) != NULL) {
		LIST_REMOVE(ping, link);
		ping->client = NULL;
	}
}
