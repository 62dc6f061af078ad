/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One client of the ferry client socket, service layer: its credentials
 * and policy level, frames parsed in place from its connection's input
 * and dispatched through the request table, and the rule that a client
 * is not read while it is blocked by back-pressure (DESIGN.md, BPCC) or
 * has asked for shutdown. The socket, its bounds and its close are
 * conn.c's.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/wire.h"

static int client_process(void *cls);

static bool
client_paused(void *cls)
{
	struct client *c = cls;

	return c->blocked || c->shutdown_requested;
}

/* The answer to SHUTDOWN is written: now the daemon stops. */
static void
client_drained(void *cls)
{
	struct client *c = cls;

	if (c->shutdown_requested && !c->shutdown_done) {
		c->shutdown_done = true;
		c->svc->on_shutdown(c->svc->on_shutdown_cls);
	}
}

/* Cut off: what would queue more for it lets go of it. */
static void
client_stop(void *cls)
{
	struct client *c = cls;

	relay_client_gone(c);
	ping_client_gone(c);
	requests_dht_client_gone(c);
	requests_storage_client_gone(c);
}

static void
client_gone(void *cls)
{
	client_free(cls);
}

int
client_take_fd(struct client *c)
{
	int fd;

	if (c->n_fds == 0)
		return -1;
	fd = c->fds[0];
	memmove(c->fds, c->fds + 1, --c->n_fds * sizeof(c->fds[0]));
	return fd;
}

/* Files come as descriptors beside FILE_PUT and FILE_GET: the daemon
 * never opens a path a client names. Each such frame takes the oldest
 * one (requests_storage.c). */
static int
client_fds(void *cls, const int *fds, size_t n, bool truncated)
{
	struct client *c = cls;
	bool over = truncated;

	for (size_t i = 0; i < n; i++) {
		if (c->n_fds < SERVICE_FDS_MAX)
			c->fds[c->n_fds++] = fds[i];
		else {
			(void)close(fds[i]);
			over = true;
		}
	}
	if (over)
		return client_drop(c, 0, -EBADMSG,
		    "more file descriptors sent than requests to take them");
	return 0;
}

static const struct conn_ops client_conn_ops = {
	.process = client_process,
	.paused = client_paused,
	.drained = client_drained,
	.stop = client_stop,
	.fds = client_fds,
	.gone = client_gone,
};

int
client_new(struct service *svc, int fd, struct policy_cred *cred,
    enum policy_level level, struct client **ret)
{
	struct client *c = calloc(1, sizeof(*c));
	int r;

	if (c == NULL) {
		policy_cred_done(cred);
		(void)close(fd);
		return -ENOMEM;
	}
	c->svc = svc;
	c->cred = *cred;
	c->level = level;
	buf_init(&c->reasm);
	LIST_INIT(&c->pings);
	TAILQ_INSERT_TAIL(&svc->clients, c, link);
	svc->n_clients++;
	(*svc->c.clients_connected)++;
	(*svc->c.clients_accepted)++;
	r = conn_init(&c->conn, &svc->conns, fd, &client_conn_ops, c);
	if (r < 0) {
		client_free(c);
		return r;
	}
	log_debug("client fd %d (pid %ld, uid %lu, gid %lu) connected%s", fd,
	    (long)c->cred.pid, (unsigned long)c->cred.uid,
	    (unsigned long)c->cred.gid,
	    level == POLICY_ADMIN ? " with SHUTDOWN rights" : "");
	*ret = c;
	return 0;
}

void
client_free(struct client *c)
{
	struct service *svc;
	int fd;

	if (c == NULL)
		return;
	svc = c->svc;
	fd = c->conn.fd;
	client_stop(c);
	while (c->n_fds > 0)
		(void)close(client_take_fd(c));
	conn_done(&c->conn);
	policy_cred_done(&c->cred);
	buf_done(&c->reasm);
	TAILQ_REMOVE(&svc->clients, c, link);
	svc->n_clients--;
	(*svc->c.clients_connected)--;
	log_debug("client fd %d (pid %ld) disconnected", fd, (long)c->cred.pid);
	/* A client that asked for shutdown and left before its answer was
	 * written still gets the shutdown. */
	if (c->shutdown_requested && !c->shutdown_done)
		svc->on_shutdown(svc->on_shutdown_cls);
	free(c);
	service_client_gone(svc);
}

int
client_drop(struct client *c, uint32_t req_id, int status, const char *why)
{
	(*c->svc->c.malformed)++;
	conn_set_log(&c->svc->conns,
	    "client fd %d (pid %ld, uid %lu): %s; disconnecting", c->conn.fd,
	    (long)c->cred.pid, (unsigned long)c->cred.uid, why);
	/* Told why, so that a client under development need not read the
	 * daemon's log; a RESULT that cannot be queued is not worth more
	 * than the disconnect itself. */
	(void)reply_result(c, req_id, status, why);
	conn_linger(&c->conn);
	return status;
}

/* Why a frame whose decoder said -EMSGSIZE is refused: only a SEND or a
 * DHT_PUT says so, and only with its fixed part whole. */
static void
client_why_oversize(const struct msg_frame *f, char *why, size_t size)
{
	if (f->type == FERRY_C_DHT_PUT)
		(void)snprintf(why, size,
		    "DHT_PUT of a block of %lu bytes, over FERRY_DHT_BLOCK_MAX",
		    (unsigned long)wire_get32(f->p + 20));
	else
		(void)snprintf(why, size,
		    "SEND of a message of %lu bytes, over FERRY_APP_MSG_MAX",
		    (unsigned long)wire_get32(f->p + 44));
}

/* One frame: 0 consumed, 1 blocked (leave it), negative: cut off. */
static int
client_frame(struct client *c, const struct msg_frame *f)
{
	const struct request_kind *kind;
	struct msg_req req;
	char why[96];
	int r;

	if (!msgparse_chunk_allows(&c->chunks, f->type)) {
		(void)snprintf(why, sizeof(why),
		    "request interleaved with a chunked %s",
		    requests_kind(c->chunks.type)->name);
		return client_drop(c, msgparse_req_id(f), -EBADMSG, why);
	}
	r = requests_decode(f, &kind, &req);
	if (r == -EOPNOTSUPP) {
		(*c->svc->c.unknown_type)++;
		return reply_result(c, msgparse_req_id(f), -EOPNOTSUPP,
		    "unknown request type");
	}
	if (r == -EMSGSIZE) {
		client_why_oversize(f, why, sizeof(why));
		return client_drop(c, msgparse_req_id(f), r, why);
	}
	if (r < 0) {
		(void)snprintf(why, sizeof(why),
		    "malformed %s request (type 0x%04x, %u bytes)",
		    requests_kind(f->type)->name, f->type, f->size);
		return client_drop(c, msgparse_req_id(f), r, why);
	}
	if (c->level < kind->level)
		return requests_refuse(c, kind, &req);
	return kind->handle(c, &req);
}

/* Parses and handles buffered frames until they run out, the client
 * blocks or its output is full (conn.h, process). */
static int
client_process(void *cls)
{
	struct client *c = cls;
	struct buf *in = &c->conn.in;
	struct msg_frame f;
	int r;

	while (!client_paused(c) && !conn_out_full(&c->conn)) {
		r = msgparse_frame(buf_head(in), buf_size(in), &f);
		if (r == 0)
			break;
		if (r < 0)
			return client_drop(c, 0, r, "frame size field below 4");
		r = client_frame(c, &f);
		if (r < 0)
			return r;
		if (r > 0)
			break;
		(*c->svc->c.frames_in)++;
		buf_consume(in, f.size);
	}
	/* A descriptor arrives with the first byte of its frame: one left
	 * when no frame is half read came with a frame that takes none. */
	if (c->n_fds > 0 && buf_size(in) == 0)
		return client_drop(c, 0, -EBADMSG,
		    "file descriptor sent with a request that takes none");
	return 0;
}
