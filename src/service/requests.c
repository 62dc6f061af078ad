/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client requests that ask the daemon about itself, service layer:
 * STATUS, SHUTDOWN, PEERS, HELLO, CONNECT and STATS, the message layer's
 * family of requests (relay.c and ping.c hold its other handlers), and
 * the list of every family (requests.h).
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "lib/wire.h"

/* STATUS: 4 req_id  8 id[32]  40 uptime_ms  48 n_transports
 *        50 version_len  52 version, then the transports. */
static int
requests_status(struct client *c, const struct msg_req *req)
{
	struct core *core = c->svc->core;
	size_t n = core_transport_count(core), vlen = strlen(FERRY_VERSION);
	size_t size = FERRY_C_STATUS_FIXED + vlen, off;
	struct core_transport_info ti;
	uint8_t *p;

	for (size_t i = 0; i < n; i++) {
		core_transport_info(core, i, &ti);
		size += FERRY_C_STATUS_TRANSPORT_FIXED + strnlen(ti.name, 255);
	}
	if (FERRY_BUG(size > FERRY_MSG_SIZE_MAX))
		return reply_result(c, req->req_id, -EMSGSIZE, NULL);
	p = reply_frame(c, FERRY_C_STATUS, size);
	if (p == NULL)
		return -ENOMEM;
	wire_put32(p + 4, req->req_id);
	memcpy(p + 8, core_identity(core)->bytes, FERRY_PEER_ID_LEN);
	wire_put64(p + 40, (time_mono_us() - c->svc->started_us) / 1000);
	wire_put16(p + 48, (uint16_t)n);
	wire_put16(p + 50, (uint16_t)vlen);
	memcpy(p + 52, FERRY_VERSION, vlen);
	off = FERRY_C_STATUS_FIXED + vlen;
	for (size_t i = 0; i < n; i++) {
		size_t nlen;

		core_transport_info(core, i, &ti);
		nlen = strnlen(ti.name, 255);
		wire_put16(p + off, ti.protocol);
		wire_put16(p + off + 2, (uint16_t)nlen);
		wire_put32(p + off + 4, ti.mtu);
		wire_put32(p + off + 8, ti.cost);
		memcpy(p + off + 12, ti.name, nlen);
		off += FERRY_C_STATUS_TRANSPORT_FIXED + nlen;
	}
	return 0;
}

static int
requests_shutdown(struct client *c, const struct msg_req *req)
{
	log_info("client fd %d (pid %ld, uid %lu) asks for shutdown", c->conn.fd,
	    (long)c->cred.pid, (unsigned long)c->cred.uid);
	/* on_shutdown runs once the answer is written (client_drained). */
	c->shutdown_requested = true;
	return reply_result(c, req->req_id, 0, NULL);
}

struct requests_walk {
	struct client *c;
	uint32_t req_id;
	int r; /* first failure */
};

/* PEER: 4 req_id  8 id[32]  40 age_ms  48 protocol  50 transport_len
 *      52 transport  address[] */
static void
requests_peer_visit(void *cls, const struct core_peer_info *pi)
{
	struct requests_walk *w = cls;
	const char *tname = pi->transport != NULL ? pi->transport : "";
	size_t tlen = strnlen(tname, 255);
	size_t alen = strnlen(pi->address, sizeof(pi->address));
	uint8_t *p;

	if (w->r < 0)
		return;
	p = reply_frame(w->c, FERRY_C_PEER, FERRY_C_PEER_FIXED + tlen + alen);
	if (p == NULL) {
		w->r = -ENOMEM;
		return;
	}
	wire_put32(p + 4, w->req_id);
	memcpy(p + 8, pi->id.bytes, FERRY_PEER_ID_LEN);
	wire_put64(p + 40, pi->age_ms);
	wire_put16(p + 48, pi->protocol);
	wire_put16(p + 50, (uint16_t)tlen);
	memcpy(p + 52, tname, tlen);
	memcpy(p + 52 + tlen, pi->address, alen);
}

static int
requests_peers(struct client *c, const struct msg_req *req)
{
	struct requests_walk w = { c, req->req_id, 0 };

	core_peers_foreach(c->svc->core, requests_peer_visit, &w);
	if (w.r < 0)
		return w.r;
	return reply_result(c, req->req_id, 0, NULL);
}

static int
requests_hello(struct client *c, const struct msg_req *req)
{
	char *uri = NULL;
	size_t len;
	uint8_t *p;
	int r = core_hello_uri(c->svc->core, &uri);

	if (r < 0)
		return reply_result(c, req->req_id, r,
		    r == -ENOENT ? "no transport advertises an address" : NULL);
	len = strlen(uri);
	if (len > FERRY_MSG_SIZE_MAX - MSGPARSE_REQ_ID_SIZE) {
		free(uri);
		return reply_result(c, req->req_id, -EMSGSIZE, NULL);
	}
	p = reply_frame(c, FERRY_C_HELLO, MSGPARSE_REQ_ID_SIZE + len);
	if (p != NULL) {
		wire_put32(p + 4, req->req_id);
		memcpy(p + 8, uri, len);
	}
	free(uri);
	return p != NULL ? 0 : -ENOMEM;
}

static int
requests_connect(struct client *c, const struct msg_req *req)
{
	char *uri = malloc(req->u.uri.len + 1);
	int r;

	if (uri == NULL)
		return reply_result(c, req->req_id, -ENOMEM, NULL);
	memcpy(uri, req->u.uri.s, req->u.uri.len);
	uri[req->u.uri.len] = '\0';
	r = core_add_uri(c->svc->core, uri);
	free(uri);
	return reply_result(c, req->req_id, r, NULL);
}

/* STAT: 4 req_id  8 value  16 name[] */
static void
requests_stat_visit(void *cls, const char *name, uint64_t value)
{
	struct requests_walk *w = cls;
	size_t len = strnlen(name, 1024);
	uint8_t *p;

	if (w->r < 0)
		return;
	p = reply_frame(w->c, FERRY_C_STAT, FERRY_C_STAT_FIXED + len);
	if (p == NULL) {
		w->r = -ENOMEM;
		return;
	}
	wire_put32(p + 4, w->req_id);
	wire_put64(p + 8, value);
	memcpy(p + 16, name, len);
}

static int
requests_stats(struct client *c, const struct msg_req *req)
{
	struct requests_walk w = { c, req->req_id, 0 };

	stats_foreach(c->svc->stats, requests_stat_visit, &w);
	if (w.r < 0)
		return w.r;
	return reply_result(c, req->req_id, 0, NULL);
}

/* The message layer's family: the requests of issues 2 to 6. SHUTDOWN
 * is for admins: any local user let in could otherwise stop the daemon
 * for all. */
static const struct request_kind requests_base[] = {
	{ FERRY_C_STATUS_REQ, "STATUS", msgparse_req_only, requests_status,
	    POLICY_CLIENT },
	{ FERRY_C_SHUTDOWN, "SHUTDOWN", msgparse_req_only, requests_shutdown,
	    POLICY_ADMIN },
	{ FERRY_C_REGISTER, "REGISTER", msgparse_register, relay_register,
	    POLICY_CLIENT },
	{ FERRY_C_SEND, "SEND", msgparse_send, relay_send, POLICY_CLIENT },
	{ FERRY_C_PEERS_REQ, "PEERS", msgparse_req_only, requests_peers,
	    POLICY_CLIENT },
	{ FERRY_C_HELLO_REQ, "HELLO", msgparse_req_only, requests_hello,
	    POLICY_CLIENT },
	{ FERRY_C_CONNECT, "CONNECT", msgparse_uri, requests_connect,
	    POLICY_CLIENT },
	{ FERRY_C_PING, "PING", msgparse_ping, ping_request, POLICY_CLIENT },
	{ FERRY_C_STATS_REQ, "STATS", msgparse_req_only, requests_stats,
	    POLICY_CLIENT },
};

static const struct request_family requests_base_family = {
	.name = "base",
	.kinds = requests_base,
	.n = sizeof(requests_base) / sizeof(requests_base[0]),
};

static const struct request_family *const requests_families[] = {
	&requests_base_family,
	&requests_dht_family,
	&requests_storage_family,
};

size_t
requests_family_count(void)
{
	return sizeof(requests_families) / sizeof(requests_families[0]);
}

const struct request_family *
requests_family(size_t i)
{
	return i < requests_family_count() ? requests_families[i] : NULL;
}

const struct request_kind *
requests_kind(uint16_t type)
{
	for (size_t f = 0; f < requests_family_count(); f++)
		for (size_t i = 0; i < requests_families[f]->n; i++)
			if (requests_families[f]->kinds[i].type == type)
				return &requests_families[f]->kinds[i];
	return NULL;
}

int
requests_decode(const struct msg_frame *f,
    const struct request_kind **ret_kind, struct msg_req *ret)
{
	const struct request_kind *kind = requests_kind(f->type);
	int r;

	if (kind == NULL)
		return -EOPNOTSUPP;
	r = msgparse_decode(kind->decode, f, ret);
	if (r < 0)
		return r;
	if (ret_kind != NULL)
		*ret_kind = kind;
	return 0;
}

int
requests_refuse(struct client *c, const struct request_kind *kind,
    const struct msg_req *req)
{
	(*c->svc->c.requests_denied)++;
	conn_set_log(&c->svc->conns,
	    "refused %s from uid %lu gid %lu pid %ld: not root, the daemon's user, nor in [service] ADMIN_USERS or ADMIN_GROUPS",
	    kind->name, (unsigned long)c->cred.uid,
	    (unsigned long)c->cred.gid, (long)c->cred.pid);
	return reply_result(c, req->req_id, -EPERM,
	    "only root, the daemon's user, ADMIN_USERS and ADMIN_GROUPS may ask this");
}
