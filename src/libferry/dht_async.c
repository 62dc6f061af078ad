/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's asynchronous DHT requests (<ferry/client.h>): the daemon
 * answers the requests of one connection by req_id and takes up to 64 in
 * flight (ferry-client(7)), so an application that keeps many in flight
 * (a load generator, a transfer) needs no thread per request. Each is a
 * slot holding its reply's state until ferry_dht_next() hands it over;
 * the reply frames are the blocking calls' own (dht.c).
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/time.h"
#include "lib/wire.h"

/* One asynchronous request; req_id 0 marks a free slot. */
struct lf_async_op {
	uint32_t req_id;
	uint16_t op; /* FERRY_C_DHT_PUT, _GET or _FIND */
	bool ended;  /* status is final, waiting to be collected */
	int status;
	int64_t deadline; /* ms on the monotonic clock; -1: none */
	struct ferry_dht_key key;
	struct lf_dht_stored stored; /* PUT; its key points at key */
	struct lf_dht_block block;   /* GET */
	struct lf_dht_nodes nodes;   /* FIND */
};

static int64_t
lf_async_now_ms(void)
{
	return (int64_t)(time_mono_us() / 1000);
}

/* A free slot, allocating the table at first use; NULL if all are
 * taken (-EAGAIN) or on OOM (*ret_err says which). */
static struct lf_async_op *
lf_async_slot(struct ferry_client *c, int *ret_err)
{
	if (c->async == NULL) {
		c->async = calloc(FERRY_DHT_ASYNC_MAX, sizeof(*c->async));
		if (c->async == NULL) {
			*ret_err = -ENOMEM;
			return NULL;
		}
	}
	for (unsigned i = 0; i < FERRY_DHT_ASYNC_MAX; i++)
		if (c->async[i].req_id == 0)
			return &c->async[i];
	*ret_err = -EAGAIN;
	return NULL;
}

static void
lf_async_clear(struct lf_async_op *o)
{
	free(o->stored.receipts);
	free(o->block.data);
	free(o->nodes.ids);
	memset(o, 0, sizeof(*o));
}

/* Takes slot o for req_id, whose frames are queued: counts it and
 * writes what the socket takes now. */
static int
lf_async_begin(struct ferry_client *c, struct lf_async_op *o, uint32_t req_id,
    uint16_t op, uint32_t *ret_req_id)
{
	int64_t d = lf_deadline(c, LF_DHT_EXTRA_MS);
	int r;

	o->req_id = req_id;
	o->op = op;
	o->deadline = d;
	c->async_n++;
	*ret_req_id = req_id;
	/* A broken connection ends the request at the next
	 * ferry_dht_next(), as every other in flight. */
	r = lf_write_nowait(c);
	return r < 0 && r != c->dead ? r : 0;
}

int
ferry_dht_put_start(struct ferry_client *c, const void *data, size_t len,
    unsigned replication, uint64_t expiry, uint32_t *ret_req_id)
{
	struct lf_async_op *o;
	uint32_t req_id;
	int r = 0;

	if (c == NULL || data == NULL || len == 0 || ret_req_id == NULL ||
	    replication > FERRY_DHT_REPL_MAX)
		return -EINVAL;
	if (len > FERRY_DHT_BLOCK_MAX)
		return -EMSGSIZE;
	if (c->dead)
		return c->dead;
	o = lf_async_slot(c, &r);
	if (o == NULL)
		return r;
	r = ferry_dht_key_of(data, len, &o->key);
	if (r < 0)
		return r;
	req_id = lf_req_id_new(c);
	r = lf_dht_put_append(c, req_id, data, len, replication, expiry);
	if (r < 0)
		return r;
	o->stored.key = &o->key;
	return lf_async_begin(c, o, req_id, FERRY_C_DHT_PUT, ret_req_id);
}

int
ferry_dht_get_start(struct ferry_client *c, const struct ferry_dht_key *key,
    uint32_t *ret_req_id)
{
	struct lf_async_op *o;
	uint32_t req_id;
	uint8_t *p;
	int r = 0;

	if (c == NULL || key == NULL || ret_req_id == NULL)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	o = lf_async_slot(c, &r);
	if (o == NULL)
		return r;
	p = lf_request_frame(c, FERRY_C_DHT_GET, FERRY_C_DHT_GET_SIZE, &req_id);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p + 8, key->bytes, FERRY_DHT_KEY_LEN);
	o->key = *key;
	return lf_async_begin(c, o, req_id, FERRY_C_DHT_GET, ret_req_id);
}

int
ferry_dht_find_start(struct ferry_client *c, const struct ferry_dht_key *key,
    unsigned want, uint32_t *ret_req_id)
{
	struct lf_async_op *o;
	uint32_t req_id;
	uint8_t *p;
	int r = 0;

	if (c == NULL || key == NULL || ret_req_id == NULL || want == 0 ||
	    want > FERRY_DHT_FIND_MAX)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	o = lf_async_slot(c, &r);
	if (o == NULL)
		return r;
	o->nodes.ids = calloc(want, sizeof(*o->nodes.ids));
	if (o->nodes.ids == NULL)
		return -ENOMEM;
	o->nodes.want = want;
	/* DHT_FIND: 4 req_id  8 key[32]  40 want  42 reserved */
	p = lf_request_frame(c, FERRY_C_DHT_FIND, FERRY_C_DHT_FIND_SIZE,
	    &req_id);
	if (p == NULL) {
		lf_async_clear(o);
		return -ENOMEM;
	}
	memcpy(p + 8, key->bytes, FERRY_DHT_KEY_LEN);
	wire_put16(p + 40, (uint16_t)want);
	wire_put16(p + 42, 0);
	o->key = *key;
	return lf_async_begin(c, o, req_id, FERRY_C_DHT_FIND, ret_req_id);
}

/* RESULT came: the checks the blocking calls make on what came before. */
static int
lf_async_result(struct lf_async_op *o, int status)
{
	struct ferry_dht_key got;

	switch (o->op) {
	case FERRY_C_DHT_PUT:
		if ((status == 0 || status == -EIO) && !o->stored.got)
			return -EPROTO;
		return status;
	case FERRY_C_DHT_GET:
		if (status < 0)
			return status;
		if (!o->block.started || o->block.have != o->block.total)
			return -EPROTO;
		if (ferry_dht_key_of(o->block.data, o->block.total, &got) < 0 ||
		    memcmp(got.bytes, o->key.bytes, FERRY_DHT_KEY_LEN) != 0)
			return -EBADMSG;
		return 0;
	default:
		return status;
	}
}

void
lf_async_frame(struct ferry_client *c, const struct lf_frame *f)
{
	struct lf_async_op *o = NULL;
	uint32_t req_id;
	int r;

	if (c->async_n == 0 || f->size < 8)
		return;
	req_id = wire_get32(f->p + 4);
	for (unsigned i = 0; req_id != 0 && i < FERRY_DHT_ASYNC_MAX; i++)
		if (c->async[i].req_id == req_id && !c->async[i].ended)
			o = &c->async[i];
	if (o == NULL)
		return; /* late: it timed out here */
	if (f->type == FERRY_C_RESULT) {
		o->status = lf_async_result(o, lf_result_status(f));
		o->ended = true;
		return;
	}
	switch (o->op) {
	case FERRY_C_DHT_PUT:
		r = lf_dht_stored_reply(&o->stored, f);
		break;
	case FERRY_C_DHT_GET:
		r = lf_dht_block_reply(&o->block, f);
		break;
	default:
		r = lf_dht_node_reply(&o->nodes, f);
		break;
	}
	if (r < 0) {
		o->status = r;
		o->ended = true;
	}
}

/* Hands the first ended request to *ret and frees its slot. */
static bool
lf_async_collect(struct ferry_client *c, struct ferry_dht_end *ret)
{
	struct lf_async_op *o = NULL;

	for (unsigned i = 0; i < FERRY_DHT_ASYNC_MAX && o == NULL; i++)
		if (c->async[i].req_id != 0 && c->async[i].ended)
			o = &c->async[i];
	if (o == NULL)
		return false;
	memset(ret, 0, sizeof(*ret));
	ret->req_id = o->req_id;
	ret->op = o->op;
	ret->status = o->status;
	ret->key = o->key;
	if (o->status == 0 && o->op == FERRY_C_DHT_GET) {
		ret->data = o->block.data;
		ret->len = o->block.total;
		o->block.data = NULL;
	} else if (o->status == 0 && o->op == FERRY_C_DHT_FIND) {
		ret->peers = o->nodes.ids;
		ret->n_peers = o->nodes.n;
		o->nodes.ids = NULL;
	} else if (o->op == FERRY_C_DHT_PUT) {
		ret->receipts = o->stored.n;
		/* Who signed, not only how many: a caller that audits the
		 * storing peers later needs each receipt. */
		if (o->stored.n > 0) {
			ret->receipt_list = o->stored.receipts;
			o->stored.receipts = NULL;
		}
	}
	lf_async_clear(o);
	c->async_n--;
	return true;
}

/* Ends the requests whose time is up (or all, with why, when the
 * connection broke); the earliest deadline of the others in *next. */
static void
lf_async_expire(struct ferry_client *c, int why, int64_t *next)
{
	int64_t now = lf_async_now_ms();

	for (unsigned i = 0; i < FERRY_DHT_ASYNC_MAX; i++) {
		struct lf_async_op *o = &c->async[i];

		if (o->req_id == 0 || o->ended)
			continue;
		if (why < 0 || (o->deadline >= 0 && o->deadline <= now)) {
			o->status = why < 0 ? why : -ETIMEDOUT;
			o->ended = true;
		} else if (o->deadline >= 0 &&
		    (*next < 0 || o->deadline < *next)) {
			*next = o->deadline;
		}
	}
}

/* Takes every whole frame of the input. 0 or a connection error. */
static int
lf_async_read(struct ferry_client *c)
{
	struct lf_frame f;
	int r;

	while ((r = lf_next_frame(c, &f)) > 0) {
		if (f.type == FERRY_C_RECEIVE) {
			r = lf_rx_frame(c, &f);
			if (r < 0)
				return lf_fail(c, r);
		} else {
			lf_async_frame(c, &f);
		}
		lf_consume(c, &f);
	}
	return r;
}

int
ferry_dht_next(struct ferry_client *c, int timeout_ms,
    struct ferry_dht_end *ret)
{
	int64_t deadline = timeout_ms < 0 ? -1 : lf_async_now_ms() + timeout_ms;
	int64_t next;
	int r;

	if (c == NULL || ret == NULL)
		return -EINVAL;
	for (;;) {
		if (c->async_n == 0)
			return -ENOENT;
		next = deadline;
		lf_async_expire(c, c->dead, &next);
		if (lf_async_collect(c, ret))
			return 0;
		r = lf_write_nowait(c);
		if (r == 0)
			r = lf_async_read(c);
		if (r < 0) {
			lf_async_expire(c, r, &next);
			continue;
		}
		if (lf_async_collect(c, ret))
			return 0;
		r = lf_wait(c, buf_size(&c->out) > 0, next);
		if (r == -ETIMEDOUT) {
			if (deadline >= 0 && lf_async_now_ms() >= deadline)
				return -ETIMEDOUT;
		} else if (r < 0) {
			lf_async_expire(c, r, &next);
		}
	}
}

void
ferry_dht_end_free(struct ferry_dht_end *e)
{
	if (e == NULL)
		return;
	free(e->data);
	free(e->peers);
	free(e->receipt_list);
	e->data = NULL;
	e->peers = NULL;
	e->receipt_list = NULL;
}

unsigned
ferry_dht_pending(const struct ferry_client *c)
{
	return c != NULL ? c->async_n : 0;
}

void
lf_async_free(struct ferry_client *c)
{
	if (c->async == NULL)
		return;
	for (unsigned i = 0; i < FERRY_DHT_ASYNC_MAX; i++)
		lf_async_clear(&c->async[i]);
	free(c->async);
	c->async = NULL;
	c->async_n = 0;
}
