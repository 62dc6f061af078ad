/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The storage layer's family of client requests, service layer (issue
 * 13, "Client side"): FILE_PUT and FILE_GET, each with the file as a
 * descriptor the client sent beside the frame (client.c), answered with
 * FILE_PROGRESS frames while they run, then FILE_DONE and RESULT;
 * TRANSFERS and CANCEL (ferry-client(7)). A client that leaves stops its
 * transfers, which stay resumable.
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
#include "storage/xfer.h"

/* Transfers one connection may run at once. */
#define REQUESTS_STORAGE_MAX 16

/* One transfer a client started. */
struct requests_storage_op {
	LIST_ENTRY(requests_storage_op) link; /* conn->ops */
	struct client *client;
	uint32_t req_id;
	uint64_t id;  /* the transfer's */
	bool started; /* xfer_put/xfer_get returned 0 */
};

struct requests_storage_conn {
	LIST_HEAD(, requests_storage_op) ops;
	unsigned n_ops;
};

static struct requests_storage_conn *
requests_storage_conn_of(struct client *c)
{
	if (c->storage == NULL) {
		c->storage = calloc(1, sizeof(*c->storage));
		if (c->storage == NULL)
			return NULL;
		LIST_INIT(&c->storage->ops);
	}
	return c->storage;
}

static void
requests_storage_op_free(struct requests_storage_op *op)
{
	struct client *c = op->client;

	LIST_REMOVE(op, link);
	c->storage->n_ops--;
	free(op);
}

void
requests_storage_client_gone(struct client *c)
{
	struct requests_storage_conn *sc = c->storage;
	struct requests_storage_op *op;

	if (sc == NULL)
		return;
	while ((op = LIST_FIRST(&sc->ops)) != NULL) {
		/* The transfer stops, resumable; its callbacks are not
		 * called again. */
		if (op->started && c->svc->xfer != NULL)
			xfer_detach(c->svc->xfer, op->id);
		requests_storage_op_free(op);
	}
	free(sc);
	c->storage = NULL;
}

static void
requests_storage_progress(void *cls, const struct xfer_progress *pr)
{
	struct requests_storage_op *op = cls;
	struct client *c = op->client;
	uint8_t *p;

	/* Progress is worth less than a request's answers: none is queued
	 * for a client that does not read. */
	if (buf_size(&c->conn.out) >= c->svc->conns.lim.out_max / 2)
		return;
	p = reply_frame(c, FERRY_C_FILE_PROGRESS, FERRY_C_FILE_PROGRESS_SIZE);
	if (p == NULL)
		return;
	wire_put32(p + 4, op->req_id);
	wire_put64(p + 8, pr->id);
	wire_put64(p + 16, pr->bytes_done);
	wire_put64(p + 24, pr->bytes_total);
	wire_put64(p + 32, pr->blocks_done);
	wire_put64(p + 40, pr->blocks_total);
	wire_put64(p + 48, pr->rate);
	wire_put32(p + 56, pr->in_flight);
	wire_put32(p + 60, pr->window);
	wire_put32(p + 64, pr->peers);
	wire_put32(p + 68, 0);
	conn_flush_later(&c->conn);
}

static void
requests_storage_done(void *cls, const struct xfer_result *r)
{
	struct requests_storage_op *op = cls;
	struct client *c = op->client;
	size_t ulen = r->uri != NULL ? strnlen(r->uri, 1024) : 0;
	uint8_t *p;
	int status = r->status;

	if (status == 0) {
		p = reply_frame(c, FERRY_C_FILE_DONE,
		    FERRY_C_FILE_DONE_FIXED + ulen);
		if (p == NULL) {
			status = -ENOMEM;
		} else {
			wire_put32(p + 4, op->req_id);
			wire_put64(p + 8, r->id);
			wire_put64(p + 16, r->size);
			wire_put64(p + 24, r->blocks_sent);
			wire_put64(p + 32, r->blocks_skipped);
			memcpy(p + 40, r->xxh128, 16);
			memcpy(p + FERRY_C_FILE_DONE_FIXED, r->uri, ulen);
		}
	}
	(void)reply_result(c, op->req_id, status, status < 0 ? r->why : NULL);
	conn_flush_later(&c->conn);
	requests_storage_op_free(op);
}

/* A record for a transfer of c, not yet started. */
static int
requests_storage_op_new(struct client *c, uint32_t req_id,
    struct requests_storage_op **ret)
{
	struct requests_storage_conn *sc = requests_storage_conn_of(c);
	struct requests_storage_op *op;

	if (sc == NULL)
		return -ENOMEM;
	if (sc->n_ops >= REQUESTS_STORAGE_MAX)
		return -EAGAIN;
	op = calloc(1, sizeof(*op));
	if (op == NULL)
		return -ENOMEM;
	op->client = c;
	op->req_id = req_id;
	LIST_INSERT_HEAD(&sc->ops, op, link);
	sc->n_ops++;
	*ret = op;
	return 0;
}

/* Refuses a file request before the engine sees it; closes fd. */
static int
requests_storage_refuse(struct client *c, uint32_t req_id, int fd, int r,
    const char *why)
{
	char buf[96];

	if (fd >= 0)
		(void)close(fd);
	if (r == -EAGAIN && why == NULL) {
		(void)snprintf(buf, sizeof(buf),
		    "%u transfers of this connection are running already",
		    REQUESTS_STORAGE_MAX);
		why = buf;
	}
	return reply_result(c, req_id, r, why);
}

static int
requests_storage_file(struct client *c, const struct msg_req *req, bool put)
{
	struct requests_storage_op *op;
	struct xfer_req xr;
	char text[FERRY_C_FILE_URI_MAX + 1];
	const char *why = NULL;
	int fd = client_take_fd(c), r;

	if (fd < 0)
		return client_drop(c, req->req_id, -EBADMSG,
		    put ? "FILE_PUT without a file descriptor"
		        : "FILE_GET without a file descriptor");
	if (c->svc->xfer == NULL)
		return requests_storage_refuse(c, req->req_id, fd, -ENOTCONN,
		    "the DHT is not running");
	memset(&xr, 0, sizeof(xr));
	if (put) {
		const struct msg_file_put *m = &req->u.file_put;

		if (m->reserved8 != 0 || m->reserved16 != 0)
			return requests_storage_refuse(c, req->req_id, fd,
			    -EINVAL, "reserved field not 0");
		if (m->replication > FERRY_DHT_REPL_MAX)
			return requests_storage_refuse(c, req->req_id, fd,
			    -EINVAL, "replication above 16");
		memcpy(text, m->label, m->label_len);
		text[m->label_len] = '\0';
		xr.label = text;
		xr.replication = m->replication;
		xr.progress_ms = m->progress_ms;
	} else {
		const struct msg_file_get *m = &req->u.file_get;

		if (m->reserved != 0)
			return requests_storage_refuse(c, req->req_id, fd,
			    -EINVAL, "reserved field not 0");
		memcpy(text, m->uri, m->uri_len);
		text[m->uri_len] = '\0';
		xr.uri = text;
		xr.progress_ms = m->progress_ms;
	}
	r = requests_storage_op_new(c, req->req_id, &op);
	if (r < 0)
		return requests_storage_refuse(c, req->req_id, fd, r, NULL);
	xr.fd = fd;
	xr.uid = c->cred.uid;
	xr.progress = requests_storage_progress;
	xr.done = requests_storage_done;
	xr.cls = op;
	r = put ? xfer_put(c->svc->xfer, &xr, &op->id, &why)
	        : xfer_get(c->svc->xfer, &xr, &op->id, &why);
	if (r < 0) {
		requests_storage_op_free(op);
		return reply_result(c, req->req_id, r, why);
	}
	op->started = true;
	return 0;
}

static int
requests_storage_put(struct client *c, const struct msg_req *req)
{
	return requests_storage_file(c, req, true);
}

static int
requests_storage_get(struct client *c, const struct msg_req *req)
{
	return requests_storage_file(c, req, false);
}

struct requests_storage_walk {
	struct client *c;
	uint32_t req_id;
	int r;
};

static void
requests_storage_visit(void *cls, const struct xfer_info *info)
{
	struct requests_storage_walk *w = cls;
	size_t len = strnlen(info->label, FERRY_C_FILE_URI_MAX);
	uint8_t *p;

	if (w->r < 0)
		return;
	p = reply_frame(w->c, FERRY_C_TRANSFER, FERRY_C_TRANSFER_FIXED + len);
	if (p == NULL) {
		w->r = -ENOMEM;
		return;
	}
	wire_put32(p + 4, w->req_id);
	wire_put64(p + 8, info->id);
	p[16] = info->kind == XFER_PUT ? FERRY_XFER_PUT : FERRY_XFER_GET;
	p[17] = info->state == XFER_RUNNING ? FERRY_XFER_RUNNING
	                                    : FERRY_XFER_RESUMABLE;
	wire_put16(p + 18, 0);
	wire_put32(p + 20, (uint32_t)info->uid);
	wire_put64(p + 24, info->bytes_done);
	wire_put64(p + 32, info->bytes_total);
	wire_put64(p + 40, info->updated_s);
	memcpy(p + FERRY_C_TRANSFER_FIXED, info->label, len);
}

static int
requests_storage_transfers(struct client *c, const struct msg_req *req)
{
	struct requests_storage_walk w = { c, req->req_id, 0 };

	if (c->svc->xfer == NULL)
		return reply_result(c, req->req_id, -ENOTCONN,
		    "the DHT is not running");
	xfer_list(c->svc->xfer, c->cred.uid, c->level >= POLICY_ADMIN,
	    requests_storage_visit, &w);
	if (w.r < 0)
		return w.r;
	return reply_result(c, req->req_id, 0, NULL);
}

static int
requests_storage_cancel(struct client *c, const struct msg_req *req)
{
	int r;

	if (c->svc->xfer == NULL)
		return reply_result(c, req->req_id, -ENOTCONN,
		    "the DHT is not running");
	r = xfer_cancel(c->svc->xfer, req->u.cancel.id, c->cred.uid,
	    c->level >= POLICY_ADMIN);
	return reply_result(c, req->req_id, r,
	    r == -ENOENT ? "no such transfer of this user" : NULL);
}

/* Any client may store and fetch files; each sees and cancels only its
 * own user's transfers, an admin everyone's. */
static const struct request_kind requests_storage[] = {
	{ FERRY_C_FILE_PUT, "FILE_PUT", msgparse_file_put, requests_storage_put,
	    POLICY_CLIENT },
	{ FERRY_C_FILE_GET, "FILE_GET", msgparse_file_get, requests_storage_get,
	    POLICY_CLIENT },
	{ FERRY_C_TRANSFERS_REQ, "TRANSFERS", msgparse_req_only,
	    requests_storage_transfers, POLICY_CLIENT },
	{ FERRY_C_CANCEL, "CANCEL", msgparse_cancel, requests_storage_cancel,
	    POLICY_CLIENT },
};

const struct request_family requests_storage_family = {
	.name = "storage",
	.kinds = requests_storage,
	.n = sizeof(requests_storage) / sizeof(requests_storage[0]),
};
