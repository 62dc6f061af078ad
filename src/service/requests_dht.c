/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's family of client requests, service layer (issue 12, "Client
 * side"): DHT_PUT (reassembled from pieces as SEND is), DHT_GET,
 * DHT_FIND and DHT_STATUS, handed to the DHT layer and its results
 * turned into frames (ferry-client(7)). The service borrows the DHT and
 * runs without one too. Answers come later, maybe after the client has
 * gone: each request is a small record that the client detaches from
 * when it leaves, as a PING's is.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dht/dht.h"
#include "dht/dhtkey.h"
#include "dht/dhtmsg.h"
#include "dht/rtable.h"
#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"

/* A DHT_PUT with expiry 0 is kept this long from now: one day. */
#define REQUESTS_DHT_LIFETIME_S  (24u * 60 * 60)
/* DHT requests one connection may have in flight. Each holds state in
 * the DHT until it ends, so a client may not start them without bound:
 * more are answered -EAGAIN. */
#define REQUESTS_DHT_PENDING_MAX 64
/* A reassembly buffer above this is freed, not kept, once used. */
#define REQUESTS_DHT_REASM_KEEP  (256u * 1024)
/* RESULT without a message: u32 req_id, i32 status. */
#define REQUESTS_DHT_RESULT_SIZE 12

/* The client protocol promises what the DHT layer does. */
_Static_assert(FERRY_DHT_KEY_LEN == DHTKEY_LEN, "key length");
_Static_assert(FERRY_DHT_HASH_LEN == DHTMSG_HASH_LEN, "put_hash length");
_Static_assert(FERRY_DHT_REPL_MAX == DHTMSG_REPL_MAX, "replication range");
_Static_assert(FERRY_DHT_FIND_MAX == DHTMSG_FIND_MAX, "FIND range");
_Static_assert(FERRY_DHT_BLOCK_MAX == DHTMSG_BLOCK_MAX, "block size");
_Static_assert(FERRY_DHT_CC_NONE == DHT_CC_NONE &&
        FERRY_DHT_CC_CSCC == DHT_CC_CSCC && FERRY_DHT_CC_BPCC == DHT_CC_BPCC,
    "congestion schemes");

/* One DHT request in flight. */
struct requests_dht_op {
	LIST_ENTRY(requests_dht_op) link; /* conn->ops while attached */
	struct client *client;            /* NULL once it has gone */
	uint32_t req_id;                  /* of the request */
	uint8_t replication;              /* PUT: storing peers asked for */
	uint16_t want;                    /* FIND: peers asked for */
};

/* A client's DHT state, made at its first DHT request. */
struct requests_dht_conn {
	LIST_HEAD(, requests_dht_op) ops; /* its requests in flight */
	unsigned n_ops;                   /* how many */
	struct buf reasm;                 /* a chunked DHT_PUT's bytes */
	int put_refused;   /* that PUT's verdict once known: 0 or -errno */
	bool put_reserved; /* a reserved field was set in one of its pieces */
};

static struct requests_dht_conn *
requests_dht_conn_of(struct client *c)
{
	if (c->dht == NULL) {
		c->dht = calloc(1, sizeof(*c->dht));
		if (c->dht == NULL)
			return NULL;
		LIST_INIT(&c->dht->ops);
		buf_init(&c->dht->reasm);
	}
	return c->dht;
}

void
requests_dht_client_gone(struct client *c)
{
	struct requests_dht_conn *dc = c->dht;
	struct requests_dht_op *op;

	if (dc == NULL)
		return;
	/* The DHT still holds the records and frees them when it ends the
	 * requests: a request cannot be taken back from it. */
	while ((op = LIST_FIRST(&dc->ops)) != NULL) {
		LIST_REMOVE(op, link);
		op->client = NULL;
	}
	buf_done(&dc->reasm);
	free(dc);
	c->dht = NULL;
}

/* Answers a request the service refuses before the DHT sees it. */
static int
requests_dht_refuse(struct client *c, uint32_t req_id, int r)
{
	char why[96];

	switch (r) {
	case -ENOTCONN:
		return reply_result(c, req_id, r, "the DHT is not running");
	case -EAGAIN:
		(void)snprintf(why, sizeof(why),
		    "%u DHT requests of this connection are in flight already",
		    REQUESTS_DHT_PENDING_MAX);
		return reply_result(c, req_id, r, why);
	case -EMSGSIZE:
		(void)snprintf(why, sizeof(why),
		    "the block is over this daemon's largest, %zu bytes",
		    dht_config(c->svc->dht)->max_block);
		return reply_result(c, req_id, r, why);
	default:
		return reply_result(c, req_id, r, NULL);
	}
}

/* Answers with the status the DHT ended a request with. */
static int
requests_dht_verdict(struct client *c, uint32_t req_id, int status)
{
	const char *why = NULL;

	switch (status) {
	case -ENOENT:
		why = "no peer holds the block";
		break;
	case -EHOSTUNREACH:
		why = "no route toward the key";
		break;
	case -ETIMEDOUT:
		why = "no answer from the DHT in time";
		break;
	case -EIO:
		why = "fewer receipts than asked for";
		break;
	case -ENOSPC:
		why = "the storing peers are full";
		break;
	case -EAGAIN:
		why = "a peer refused: over its limit for this daemon";
		break;
	case -EDQUOT:
		why = "the storing peers hold all they take from this daemon";
		break;
	case -EBADMSG:
		why = "refused by the DHT";
		break;
	case -ECANCELED:
		why = "the DHT is shutting down";
		break;
	}
	return reply_result(c, req_id, status, why);
}

/* A record for a request of c, not yet attached. 0, -EAGAIN at the
 * limit, -ENOMEM. */
static int
requests_dht_op_new(struct client *c, uint32_t req_id,
    struct requests_dht_op **ret)
{
	struct requests_dht_conn *dc = requests_dht_conn_of(c);
	struct requests_dht_op *op;

	if (dc == NULL)
		return -ENOMEM;
	if (dc->n_ops >= REQUESTS_DHT_PENDING_MAX)
		return -EAGAIN;
	op = calloc(1, sizeof(*op));
	if (op == NULL)
		return -ENOMEM;
	op->client = c;
	op->req_id = req_id;
	*ret = op;
	return 0;
}

/* The DHT said r to the request of op: attaches op to its client if the
 * request started (the DHT calls back later, never from inside the call
 * that started it), else answers and frees op. */
static int
requests_dht_op_started(struct client *c, struct requests_dht_op *op, int r)
{
	uint32_t req_id = op->req_id;

	if (r < 0) {
		free(op);
		return reply_result(c, req_id, r, NULL);
	}
	LIST_INSERT_HEAD(&c->dht->ops, op, link);
	c->dht->n_ops++;
	return 0;
}

/* Detaches op from its client; returns the client, or NULL if it has
 * gone. The caller frees op. */
static struct client *
requests_dht_op_end(struct requests_dht_op *op)
{
	struct client *c = op->client;

	if (c != NULL) {
		LIST_REMOVE(op, link);
		c->dht->n_ops--;
	}
	return c;
}

/*
 * DHT_STORED: 4 req_id  8 key[32]  40 count  41 replication  42 reserved,
 * then count times: storer[32]  expiry  put_hash[32]  storer_pk[32]
 * sig[64]
 */
static int
requests_dht_stored(struct client *c, const struct requests_dht_op *op,
    const struct dht_result *res)
{
	unsigned n = res->receipts;
	uint8_t *p, *q;

	if (FERRY_BUG(n > FERRY_DHT_REPL_MAX))
		return -EPROTO;
	p = reply_frame(c, FERRY_C_DHT_STORED,
	    FERRY_C_DHT_STORED_FIXED + n * FERRY_C_DHT_RECEIPT_SIZE);
	if (p == NULL)
		return -ENOMEM;
	wire_put32(p + 4, op->req_id);
	memcpy(p + 8, res->key.b, FERRY_DHT_KEY_LEN);
	p[40] = (uint8_t)n;
	p[41] = op->replication;
	wire_put16(p + 42, 0);
	q = p + FERRY_C_DHT_STORED_FIXED;
	for (unsigned i = 0; i < n; i++) {
		const struct dhtmsg_receipt *rc = &res->receipt[i];

		memcpy(q, res->storer[i].b, FERRY_DHT_KEY_LEN);
		wire_put64(q + 32, rc->expiry);
		memcpy(q + 40, rc->put_hash, FERRY_DHT_HASH_LEN);
		memcpy(q + 72, rc->storer_pk, FERRY_PUBKEY_LEN);
		memcpy(q + 104, rc->sig, FERRY_SIG_LEN);
		q += FERRY_C_DHT_RECEIPT_SIZE;
	}
	return 0;
}

static void
requests_dht_put_done(void *cls, const struct dht_result *res)
{
	struct requests_dht_op *op = cls;
	struct client *c = requests_dht_op_end(op);
	int status = res->status;

	if (c != NULL) {
		/* The receipts that came, also when fewer than asked. */
		if ((status == 0 || status == -EIO) &&
		    requests_dht_stored(c, op, res) < 0)
			status = -ENOMEM;
		(void)requests_dht_verdict(c, op->req_id, status);
		/* Written from the event loop, never from inside the DHT's
		 * callback; an answer lost to OOM shows as a timeout. */
		conn_flush_later(&c->conn);
	}
	free(op);
}

/* The last piece of a DHT_PUT is in (data is the whole block): judges
 * the request and hands the block to the DHT. */
static int
requests_dht_put_end(struct client *c, const struct requests_dht_conn *dc,
    uint32_t req_id, const struct msg_dht_put *m, const uint8_t *data,
    size_t len)
{
	uint64_t now = time_real_s(), expiry = m->expiry;
	unsigned repl = m->replication;
	struct requests_dht_op *op;
	struct dhtkey key;
	int r;

	if (dc->put_refused != 0)
		return requests_dht_refuse(c, req_id, dc->put_refused);
	/* Refused rather than ignored: a later version may give them a
	 * meaning. */
	if (dc->put_reserved)
		return reply_result(c, req_id, -EINVAL, "reserved field not 0");
	if (len == 0)
		return reply_result(c, req_id, -EINVAL, "the block is empty");
	if (repl > FERRY_DHT_REPL_MAX)
		return reply_result(c, req_id, -EINVAL, "replication above 16");
	if (expiry == 0)
		expiry = now + REQUESTS_DHT_LIFETIME_S;
	else if (expiry <= now)
		return reply_result(c, req_id, -EINVAL,
		    "expiry not in the future");
	if (repl == 0)
		repl = dht_config(c->svc->dht)->replication;
	r = requests_dht_op_new(c, req_id, &op);
	if (r < 0)
		return requests_dht_refuse(c, req_id, r);
	op->replication = (uint8_t)repl;
	r = dht_put(c->svc->dht, data, len, expiry, repl, requests_dht_put_done,
	    op, &key);
	return requests_dht_op_started(c, op, r);
}

static void
requests_dht_reasm_reset(struct requests_dht_conn *dc)
{
	if (dc->reasm.cap > REQUESTS_DHT_REASM_KEEP)
		buf_done(&dc->reasm);
	else
		buf_reset(&dc->reasm);
}

/* A new DHT_PUT starts: what can be judged from its first piece is, so
 * that the pieces of a refused one are not kept. */
static void
requests_dht_put_begin(struct client *c, struct requests_dht_conn *dc,
    const struct msg_dht_put *m)
{
	dc->put_refused = 0;
	dc->put_reserved = false;
	requests_dht_reasm_reset(dc);
	if (c->svc->dht == NULL)
		dc->put_refused = -ENOTCONN;
	else if (m->total_len > dht_config(c->svc->dht)->max_block)
		dc->put_refused = -EMSGSIZE;
}

static int
requests_dht_put(struct client *c, const struct msg_req *req)
{
	const struct msg_dht_put *m = &req->u.dht_put;
	int piece = msgparse_put_chunk(&c->chunks, m), r;
	struct requests_dht_conn *dc;

	if (piece < 0)
		return client_drop(c, req->req_id, piece,
		    "DHT_PUT piece out of sequence");
	dc = requests_dht_conn_of(c);
	if (dc == NULL) {
		log_warn(
		    "client fd %d: out of memory for a DHT_PUT; disconnecting",
		    c->conn.fd);
		return -ENOMEM;
	}
	if (piece == MSGPARSE_WHOLE || piece == MSGPARSE_FIRST)
		requests_dht_put_begin(c, dc, m);
	dc->put_reserved |= m->reserved8 != 0 || m->reserved16 != 0;
	if (piece == MSGPARSE_WHOLE)
		return requests_dht_put_end(c, dc, req->req_id, m, m->data,
		    m->len);
	if (dc->put_refused == 0 &&
	    buf_append(&dc->reasm, m->data, m->len) < 0) {
		dc->put_refused = -ENOMEM;
		buf_done(&dc->reasm);
	}
	if (piece != MSGPARSE_LAST)
		return 0;
	r = requests_dht_put_end(c, dc, req->req_id, m, buf_head(&dc->reasm),
	    buf_size(&dc->reasm));
	requests_dht_reasm_reset(dc);
	return r;
}

/*
 * DHT_BLOCK: 4 req_id  8 total_len  12 offset  16 data[], in pieces, then
 * RESULT 0. Queued whole while less than CLIENT_BUFFER waits for the
 * client, as a RECEIVE is, and never in part: reserving first means the
 * pieces cannot be cut apart by a failed allocation. Otherwise RESULT
 * -ENOBUFS.
 */
static void
requests_dht_block(struct client *c, uint32_t req_id, const uint8_t *data,
    size_t len)
{
	size_t pieces = len == 0
	    ? 1
	    : (len + MSGPARSE_BLOCK_DATA_MAX - 1) / MSGPARSE_BLOCK_DATA_MAX;
	size_t need =
	    len + pieces * FERRY_C_DHT_BLOCK_FIXED + REQUESTS_DHT_RESULT_SIZE;
	size_t off = 0, n;
	uint8_t *p;

	if (conn_out_room(&c->conn, need) < 0) {
		(void)reply_result(c, req_id, -ENOBUFS,
		    "CLIENT_BUFFER bytes of answers wait for this client");
		return;
	}
	do {
		n = len - off;
		if (n > MSGPARSE_BLOCK_DATA_MAX)
			n = MSGPARSE_BLOCK_DATA_MAX;
		/* Cannot fail: the room for every piece is reserved. */
		p = reply_frame(c, FERRY_C_DHT_BLOCK,
		    FERRY_C_DHT_BLOCK_FIXED + n);
		wire_put32(p + 4, req_id);
		wire_put32(p + 8, (uint32_t)len);
		wire_put32(p + 12, (uint32_t)off);
		if (n > 0)
			memcpy(p + FERRY_C_DHT_BLOCK_FIXED, data + off, n);
		off += n;
	} while (off < len);
	(void)reply_result(c, req_id, 0, NULL);
}

static void
requests_dht_get_done(void *cls, const struct dht_result *res)
{
	struct requests_dht_op *op = cls;
	struct client *c = requests_dht_op_end(op);

	if (c != NULL) {
		if (res->status == 0)
			requests_dht_block(c, op->req_id, res->block,
			    res->block_len);
		else
			(void)requests_dht_verdict(c, op->req_id, res->status);
		conn_flush_later(&c->conn);
	}
	free(op);
}

static int
requests_dht_get(struct client *c, const struct msg_req *req)
{
	struct requests_dht_op *op;
	struct dhtkey key;
	int r;

	if (c->svc->dht == NULL)
		return requests_dht_refuse(c, req->req_id, -ENOTCONN);
	r = requests_dht_op_new(c, req->req_id, &op);
	if (r < 0)
		return requests_dht_refuse(c, req->req_id, r);
	memcpy(key.b, req->u.dht_get.key, DHTKEY_LEN);
	r = dht_get(c->svc->dht, &key, requests_dht_get_done, op);
	return requests_dht_op_started(c, op, r);
}

/* DHT_NODE: 4 req_id  8 id[32], one per peer, closest first; RESULT 0. */
static void
requests_dht_find_done(void *cls, const struct dht_result *res)
{
	struct requests_dht_op *op = cls;
	struct client *c = requests_dht_op_end(op);
	int status = res->status;
	uint8_t *p;

	if (c == NULL) {
		free(op);
		return;
	}
	/* No more than asked, whatever the peer that answered sent. */
	for (size_t i = 0; status == 0 && i < res->n_nodes && i < op->want;
	     i++) {
		p = reply_frame(c, FERRY_C_DHT_NODE, FERRY_C_DHT_NODE_SIZE);
		if (p == NULL) {
			status = -ENOMEM;
			break;
		}
		wire_put32(p + 4, op->req_id);
		memcpy(p + 8, res->nodes[i].id.b, FERRY_PEER_ID_LEN);
	}
	(void)requests_dht_verdict(c, op->req_id, status);
	conn_flush_later(&c->conn);
	free(op);
}

static int
requests_dht_find(struct client *c, const struct msg_req *req)
{
	const struct msg_dht_find *m = &req->u.dht_find;
	struct requests_dht_op *op;
	struct dhtkey key;
	int r;

	if (c->svc->dht == NULL)
		return requests_dht_refuse(c, req->req_id, -ENOTCONN);
	if (m->reserved != 0)
		return reply_result(c, req->req_id, -EINVAL,
		    "reserved field not 0");
	if (m->want == 0 || m->want > FERRY_DHT_FIND_MAX)
		return reply_result(c, req->req_id, -EINVAL,
		    "want must be 1 to 32");
	r = requests_dht_op_new(c, req->req_id, &op);
	if (r < 0)
		return requests_dht_refuse(c, req->req_id, r);
	op->want = m->want;
	memcpy(key.b, m->key, DHTKEY_LEN);
	r = dht_find(c->svc->dht, &key, m->want, requests_dht_find_done, op);
	return requests_dht_op_started(c, op, r);
}

/* Entries per bucket of a routing table, a bucket being the length of
 * the prefix its peers share with this node. */
struct requests_dht_buckets {
	const struct dhtkey *self;
	uint16_t entries[DHTKEY_BITS];
};

static void
requests_dht_bucket_visit(void *cls, const struct rtable_entry *e)
{
	struct requests_dht_buckets *b = cls;
	unsigned prefix = dhtkey_common_prefix(b->self, &e->id);

	if (prefix < DHTKEY_BITS && b->entries[prefix] < UINT16_MAX)
		b->entries[prefix]++;
}

static uint32_t
requests_dht_u32(size_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t
requests_dht_u32_64(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The BPCC section of DHT_STATUS (<ferry/proto.h>): its size, and with p
 * its bytes there; 0 when BPCC is off. peers holds n neighbours. */
static size_t
requests_dht_bpcc(struct dht *dht, const struct dht_bpcc_peer *peers, size_t n,
    uint8_t *p)
{
	struct dht_bpcc_status st;
	size_t len = FERRY_C_DHT_BPCC_FIXED + n * FERRY_C_DHT_BPCC_PEER_SIZE;

	dht_bpcc_get_status(dht, &st);
	if (!st.on)
		return 0;
	if (p == NULL)
		return FERRY_C_DHT_SECTION_HDR + len;
	memset(p, 0, FERRY_C_DHT_SECTION_HDR + len);
	wire_put16(p, FERRY_C_DHT_SECTION_BPCC);
	wire_put16(p + 2, (uint16_t)len);
	p += FERRY_C_DHT_SECTION_HDR;
	wire_put32(p, st.queue);
	wire_put32(p + 4, requests_dht_u32_64(st.block_max_us / 1000));
	wire_put32(p + 8, requests_dht_u32(st.depth));
	wire_put32(p + 12, requests_dht_u32(st.blocked));
	wire_put32(p + 16, requests_dht_u32(st.held));
	wire_put64(p + 24, st.holds);
	wire_put64(p + 32, st.releases);
	wire_put64(p + 40, st.block_timeouts);
	wire_put64(p + 48, st.failed_over);
	wire_put64(p + 56, st.fails);
	wire_put64(p + 64, st.overflow);
	wire_put16(p + 72, (uint16_t)n);
	p += FERRY_C_DHT_BPCC_FIXED;
	for (size_t i = 0; i < n; i++, p += FERRY_C_DHT_BPCC_PEER_SIZE) {
		const struct dht_bpcc_peer *v = &peers[i];

		memcpy(p, v->id.b, DHTKEY_LEN);
		wire_put32(p + 32, v->depth);
		wire_put32(p + 36, requests_dht_u32_64(v->blocked_us / 1000));
		p[40] = (uint8_t)((v->blocked ? FERRY_DHT_BPCC_BLOCKED : 0) |
		    (v->stalled ? FERRY_DHT_BPCC_STALLED : 0) |
		    (v->held ? FERRY_DHT_BPCC_HELD : 0));
	}
	return FERRY_C_DHT_SECTION_HDR + len;
}

/* A figure in a u32 field, in units of 1/scale, at most UINT32_MAX. */
static uint32_t
requests_dht_u32_of(double v, double scale)
{
	double x = v * scale;

	return x >= (double)UINT32_MAX ? UINT32_MAX : x <= 0 ? 0 : (uint32_t)x;
}

/* The congestion control's section of DHT_STATUS (<ferry/proto.h>) at
 * p; its size. */
static size_t
requests_dht_cc(struct dht *dht, uint8_t *p)
{
	struct dht_status st;
	const struct dht_cc_status *cc = &st.cc;

	if (p == NULL)
		return FERRY_C_DHT_SECTION_HDR + FERRY_C_DHT_CC_SIZE;
	dht_get_status(dht, &st);
	memset(p, 0, FERRY_C_DHT_SECTION_HDR + FERRY_C_DHT_CC_SIZE);
	wire_put16(p, FERRY_C_DHT_SECTION_CC);
	wire_put16(p + 2, FERRY_C_DHT_CC_SIZE);
	p += FERRY_C_DHT_SECTION_HDR;
	p[0] = (uint8_t)cc->scheme;
	wire_put32(p + 4, requests_dht_u32_64(cc->waiting));
	wire_put32(p + 8, requests_dht_u32_64(cc->in_flight));
	wire_put32(p + 12, requests_dht_u32_of(cc->credits, 1000));
	wire_put32(p + 16, requests_dht_u32_of(cc->ssthresh, 1000));
	wire_put32(p + 20, requests_dht_u32_64(cc->rtt_us));
	wire_put32(p + 24, requests_dht_u32_64(cc->rto_us));
	wire_put64(p + 32, cc->retransmits);
	wire_put64(p + 40, cc->losses);
	wire_put64(p + 48, cc->drops);
	wire_put64(p + 56, cc->duplicates);
	wire_put64(p + 64, cc->refused);
	return FERRY_C_DHT_SECTION_HDR + FERRY_C_DHT_CC_SIZE;
}

/*
 * DHT_STATUS: 4 req_id  8 k  10 replication  12 entries  16 cached
 *   20 buckets_used  24 blocks  32 bytes  40 quota  48 n  50 reserved,
 *   then n times: prefix, entries (the buckets that hold any, in order),
 *   then the sections (the congestion control's, BPCC's)
 */
static int
requests_dht_status(struct client *c, const struct msg_req *req)
{
	struct dht *dht = c->svc->dht;
	struct requests_dht_buckets b;
	struct dht_store_usage use;
	struct rtable_stats st;
	const struct rtable *rt;
	size_t n = 0, off = FERRY_C_DHT_STATUS_FIXED, n_bpcc, bpcc_len;
	struct dht_bpcc_peer *bp;
	uint8_t *p;

	if (dht == NULL)
		return requests_dht_refuse(c, req->req_id, -ENOTCONN);
	bp = calloc(FERRY_C_DHT_BPCC_PEERS_MAX, sizeof(*bp));
	if (bp == NULL)
		return -ENOMEM;
	n_bpcc = dht_bpcc_get_peers(dht, bp, FERRY_C_DHT_BPCC_PEERS_MAX);
	bpcc_len = requests_dht_bpcc(dht, bp, n_bpcc, NULL);
	rt = dht_rtable(dht);
	memset(&b, 0, sizeof(b));
	b.self = rtable_self(rt);
	rtable_foreach(rt, requests_dht_bucket_visit, &b);
	rtable_get_stats(rt, &st);
	dht_store_usage(dht, &use);
	for (size_t i = 0; i < DHTKEY_BITS; i++)
		n += b.entries[i] != 0;
	p = reply_frame(c, FERRY_C_DHT_STATUS,
	    FERRY_C_DHT_STATUS_FIXED + n * FERRY_C_DHT_BUCKET_SIZE +
	        requests_dht_cc(dht, NULL) + bpcc_len);
	if (p == NULL) {
		free(bp);
		return -ENOMEM;
	}
	wire_put32(p + 4, req->req_id);
	wire_put16(p + 8, (uint16_t)rtable_k(rt));
	wire_put16(p + 10, (uint16_t)dht_config(dht)->replication);
	wire_put32(p + 12, requests_dht_u32(st.entries));
	wire_put32(p + 16, requests_dht_u32(st.cached));
	wire_put32(p + 20, requests_dht_u32(st.buckets));
	wire_put64(p + 24, use.blocks);
	wire_put64(p + 32, use.bytes);
	wire_put64(p + 40, use.quota);
	wire_put16(p + 48, (uint16_t)n);
	wire_put16(p + 50, 0);
	for (size_t i = 0; i < DHTKEY_BITS; i++) {
		if (b.entries[i] == 0)
			continue;
		wire_put16(p + off, (uint16_t)i);
		wire_put16(p + off + 2, b.entries[i]);
		off += FERRY_C_DHT_BUCKET_SIZE;
	}
	/* Sections after the buckets: the congestion control's, and BPCC's
	 * when it runs. */
	off += requests_dht_cc(dht, p + off);
	(void)requests_dht_bpcc(dht, bp, n_bpcc, p + off);
	free(bp);
	return 0;
}

/* Any client the policy lets in may use the DHT. */
static const struct request_kind requests_dht[] = {
	{ FERRY_C_DHT_PUT, "DHT_PUT", msgparse_dht_put, requests_dht_put,
	    POLICY_CLIENT },
	{ FERRY_C_DHT_GET, "DHT_GET", msgparse_dht_get, requests_dht_get,
	    POLICY_CLIENT },
	{ FERRY_C_DHT_FIND, "DHT_FIND", msgparse_dht_find, requests_dht_find,
	    POLICY_CLIENT },
	{ FERRY_C_DHT_STATUS_REQ, "DHT_STATUS", msgparse_req_only,
	    requests_dht_status, POLICY_CLIENT },
};

const struct request_family requests_dht_family = {
	.name = "dht",
	.kinds = requests_dht,
	.n = sizeof(requests_dht) / sizeof(requests_dht[0]),
};
