/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libferry's DHT requests (ferry-client(7)): DHT_PUT in pieces, answered
 * with the storing peers' receipts; DHT_GET, its block reassembled and
 * checked against its key; DHT_FIND and DHT_STATUS; and the helpers for
 * keys and receipts, whose signatures ferry-protocol(7) specifies.
 */
#include "libferry/libferry_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/wire.h"

/* Data bytes per DHT_PUT frame. */
#define LF_DHT_PUT_PIECE      (FERRY_MSG_SIZE_MAX - FERRY_C_DHT_PUT_FIXED)
#define LF_DHT_RECEIPT_PREFIX "ferry dht receipt v1"

int
ferry_dht_key_of(const void *data, size_t len, struct ferry_dht_key *ret)
{
	if ((data == NULL && len > 0) || ret == NULL || sodium_init() < 0)
		return -EINVAL;
	(void)crypto_generichash(ret->bytes, FERRY_DHT_KEY_LEN, data, len, NULL,
	    0);
	return 0;
}

int
ferry_dht_receipt_verify(const struct ferry_dht_key *key,
    const struct ferry_dht_receipt *r)
{
	uint8_t id[FERRY_PEER_ID_LEN];
	uint8_t m[sizeof(LF_DHT_RECEIPT_PREFIX) + FERRY_DHT_KEY_LEN +
	    FERRY_PUBKEY_LEN + 8 + FERRY_DHT_HASH_LEN];
	uint8_t *p = m + sizeof(LF_DHT_RECEIPT_PREFIX);

	if (key == NULL || r == NULL || sodium_init() < 0)
		return -EINVAL;
	/* A peer id is the hash of its key: the receipt must be signed by
	 * the peer it names. */
	(void)crypto_generichash(id, sizeof(id), r->storer_pk, FERRY_PUBKEY_LEN,
	    NULL, 0);
	if (memcmp(id, r->storer.bytes, sizeof(id)) != 0)
		return -EBADMSG;
	/* prefix NUL || key || storer_pk || expiry || put_hash */
	memcpy(m, LF_DHT_RECEIPT_PREFIX, sizeof(LF_DHT_RECEIPT_PREFIX));
	memcpy(p, key->bytes, FERRY_DHT_KEY_LEN);
	memcpy(p + 32, r->storer_pk, FERRY_PUBKEY_LEN);
	wire_put64(p + 64, r->expiry);
	memcpy(p + 72, r->put_hash, FERRY_DHT_HASH_LEN);
	if (crypto_sign_verify_detached(r->sig, m, sizeof(m), r->storer_pk) !=
	    0)
		return -EBADMSG;
	return 0;
}

void
ferry_dht_key_format(const struct ferry_dht_key *key,
    char buf[FERRY_DHT_KEY_STRLEN + 1])
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < FERRY_DHT_KEY_LEN; i++) {
		buf[2 * i] = hex[key->bytes[i] >> 4];
		buf[2 * i + 1] = hex[key->bytes[i] & 0xf];
	}
	buf[FERRY_DHT_KEY_STRLEN] = '\0';
}

static int
lf_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
ferry_dht_key_parse(const char *s, struct ferry_dht_key *ret)
{
	struct ferry_dht_key key;
	struct ferry_peer_id id;
	int hi, lo;

	if (s == NULL || ret == NULL)
		return -EINVAL;
	if (strlen(s) != FERRY_DHT_KEY_STRLEN) {
		/* Peer ids and keys share one space. */
		if (ferry_peer_id_from_string(s, &id) < 0)
			return -EINVAL;
		memcpy(ret->bytes, id.bytes, FERRY_DHT_KEY_LEN);
		return 0;
	}
	for (size_t i = 0; i < FERRY_DHT_KEY_LEN; i++) {
		hi = lf_hex_digit(s[2 * i]);
		lo = lf_hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		key.bytes[i] = (uint8_t)(hi << 4 | lo);
	}
	*ret = key;
	return 0;
}

/* DHT_PUT: 4 req_id  8 replication  9 reserved  10 reserved16  12 expiry
 *         20 total_len  24 offset  28 data[]. All pieces are reserved at
 * once, so a failed allocation queues nothing rather than half a block. */
int
lf_dht_put_append(struct ferry_client *c, uint32_t req_id, const uint8_t *data,
    size_t len, unsigned replication, uint64_t expiry)
{
	size_t pieces = (len + LF_DHT_PUT_PIECE - 1) / LF_DHT_PUT_PIECE;
	size_t off = 0, n;
	uint8_t *p;

	if (buf_reserve(&c->out, len + pieces * FERRY_C_DHT_PUT_FIXED) == NULL)
		return -ENOMEM;
	do {
		n = len - off < LF_DHT_PUT_PIECE ? len - off : LF_DHT_PUT_PIECE;
		p = buf_reserve(&c->out, FERRY_C_DHT_PUT_FIXED + n);
		wire_put_hdr(p, (uint16_t)(FERRY_C_DHT_PUT_FIXED + n),
		    FERRY_C_DHT_PUT);
		wire_put32(p + 4, req_id);
		p[8] = (uint8_t)replication;
		p[9] = 0;
		wire_put16(p + 10, 0);
		wire_put64(p + 12, expiry);
		wire_put32(p + 20, (uint32_t)len);
		wire_put32(p + 24, (uint32_t)off);
		memcpy(p + FERRY_C_DHT_PUT_FIXED, data + off, n);
		buf_commit(&c->out, FERRY_C_DHT_PUT_FIXED + n);
		off += n;
	} while (off < len);
	return 0;
}

/* One receipt of DHT_STORED: storer[32]  expiry  put_hash[32]
 * storer_pk[32]  sig[64] */
static void
lf_dht_receipt(const uint8_t *p, struct ferry_dht_receipt *r)
{
	memcpy(r->storer.bytes, p, FERRY_PEER_ID_LEN);
	r->expiry = wire_get64(p + 32);
	memcpy(r->put_hash, p + 40, FERRY_DHT_HASH_LEN);
	memcpy(r->storer_pk, p + 72, FERRY_PUBKEY_LEN);
	memcpy(r->sig, p + 104, FERRY_SIG_LEN);
}

/* DHT_STORED: 4 req_id  8 key[32]  40 count  41 replication
 *            42 reserved, then count receipts; RESULT follows. */
int
lf_dht_stored_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_dht_stored *st = ctx;
	size_t n;

	if (f->type != FERRY_C_DHT_STORED ||
	    f->size < FERRY_C_DHT_STORED_FIXED || st->got)
		return -EPROTO;
	n = f->p[40];
	if (n > FERRY_DHT_REPL_MAX ||
	    f->size !=
	        FERRY_C_DHT_STORED_FIXED + n * FERRY_C_DHT_RECEIPT_SIZE ||
	    memcmp(f->p + 8, st->key->bytes, FERRY_DHT_KEY_LEN) != 0)
		return -EPROTO;
	st->receipts = calloc(n > 0 ? n : 1, sizeof(*st->receipts));
	if (st->receipts == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		lf_dht_receipt(f->p + FERRY_C_DHT_STORED_FIXED +
		        i * FERRY_C_DHT_RECEIPT_SIZE,
		    &st->receipts[i]);
	st->n = n;
	st->got = true;
	return 0;
}

int
ferry_dht_put(struct ferry_client *c, const void *data, size_t len,
    unsigned replication, uint64_t expiry, struct ferry_dht_key *ret_key,
    struct ferry_dht_receipt **ret_receipts, size_t *ret_n)
{
	struct lf_dht_stored st;
	struct ferry_dht_key key;
	uint32_t req_id;
	int r;

	if (c == NULL || data == NULL || len == 0 || ret_key == NULL ||
	    (ret_receipts != NULL && ret_n == NULL) ||
	    replication > FERRY_DHT_REPL_MAX)
		return -EINVAL;
	if (len > FERRY_DHT_BLOCK_MAX)
		return -EMSGSIZE;
	if (c->dead)
		return c->dead;
	r = ferry_dht_key_of(data, len, &key);
	if (r < 0)
		return r;
	req_id = lf_req_id_new(c);
	r = lf_dht_put_append(c, req_id, data, len, replication, expiry);
	if (r < 0)
		return r;
	memset(&st, 0, sizeof(st));
	st.key = &key;
	r = lf_request_wait(c, req_id, lf_dht_stored_reply, &st,
	    LF_DHT_EXTRA_MS);
	/* The receipts come before RESULT 0, and before -EIO too. */
	if ((r == 0 || r == -EIO) && !st.got)
		r = -EPROTO;
	if (r != 0 && r != -EIO) {
		free(st.receipts);
		return r;
	}
	*ret_key = key;
	if (ret_receipts != NULL) {
		*ret_receipts = st.receipts;
		*ret_n = st.n;
	} else {
		free(st.receipts);
		if (ret_n != NULL)
			*ret_n = st.n;
	}
	return r;
}

/* DHT_BLOCK: 4 req_id  8 total_len  12 offset  16 data[]; pieces in
 * order, none empty unless the block is; RESULT 0 follows. */
int
lf_dht_block_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_dht_block *b = ctx;
	uint32_t total, offset;
	size_t len;

	if (f->type != FERRY_C_DHT_BLOCK || f->size < FERRY_C_DHT_BLOCK_FIXED)
		return -EPROTO;
	total = wire_get32(f->p + 8);
	offset = wire_get32(f->p + 12);
	len = (size_t)f->size - FERRY_C_DHT_BLOCK_FIXED;
	if (!b->started) {
		if (offset != 0 || total > FERRY_DHT_BLOCK_MAX)
			return -EPROTO;
		b->data = malloc(total > 0 ? total : 1);
		if (b->data == NULL)
			return -ENOMEM;
		b->total = total;
		b->started = true;
	}
	if (total != b->total || offset != b->have || len > total - offset ||
	    (len == 0 && total > 0))
		return -EPROTO;
	if (len > 0)
		memcpy(b->data + offset, f->p + FERRY_C_DHT_BLOCK_FIXED, len);
	b->have += len;
	return 0;
}

int
ferry_dht_get(struct ferry_client *c, const struct ferry_dht_key *key,
    uint8_t **ret_data, size_t *ret_len)
{
	struct lf_dht_block b;
	struct ferry_dht_key got;
	uint32_t req_id;
	uint8_t *p;
	int r;

	if (c == NULL || key == NULL || ret_data == NULL || ret_len == NULL)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	p = lf_request_frame(c, FERRY_C_DHT_GET, FERRY_C_DHT_GET_SIZE, &req_id);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p + 8, key->bytes, FERRY_DHT_KEY_LEN);
	memset(&b, 0, sizeof(b));
	r = lf_request_wait(c, req_id, lf_dht_block_reply, &b, LF_DHT_EXTRA_MS);
	if (r == 0 && (!b.started || b.have != b.total))
		r = -EPROTO; /* RESULT 0 without the whole block */
	/* The daemon checked it; so does whoever relies on it. */
	if (r == 0 &&
	    (ferry_dht_key_of(b.data, b.total, &got) < 0 ||
	        memcmp(got.bytes, key->bytes, FERRY_DHT_KEY_LEN) != 0))
		r = -EBADMSG;
	if (r < 0) {
		free(b.data);
		return r;
	}
	*ret_data = b.data;
	*ret_len = b.total;
	return 0;
}

/* DHT_NODE: 4 req_id  8 id[32]; one per peer, then RESULT 0. */
int
lf_dht_node_reply(void *ctx, const struct lf_frame *f)
{
	struct lf_dht_nodes *nd = ctx;

	if (f->type != FERRY_C_DHT_NODE || f->size != FERRY_C_DHT_NODE_SIZE ||
	    nd->n >= nd->want)
		return -EPROTO;
	memcpy(nd->ids[nd->n++].bytes, f->p + 8, FERRY_PEER_ID_LEN);
	return 0;
}

/* DHT_FIND: 4 req_id  8 key[32]  40 want  42 reserved */
int
ferry_dht_find(struct ferry_client *c, const struct ferry_dht_key *key,
    unsigned want, struct ferry_peer_id **ret, size_t *ret_n)
{
	struct lf_dht_nodes nd = { NULL, 0, want };
	uint32_t req_id;
	uint8_t *p;
	int r;

	if (c == NULL || key == NULL || ret == NULL || ret_n == NULL ||
	    want == 0 || want > FERRY_DHT_FIND_MAX)
		return -EINVAL;
	if (c->dead)
		return c->dead;
	nd.ids = calloc(want, sizeof(*nd.ids));
	if (nd.ids == NULL)
		return -ENOMEM;
	p = lf_request_frame(c, FERRY_C_DHT_FIND, FERRY_C_DHT_FIND_SIZE,
	    &req_id);
	if (p == NULL) {
		free(nd.ids);
		return -ENOMEM;
	}
	memcpy(p + 8, key->bytes, FERRY_DHT_KEY_LEN);
	wire_put16(p + 40, (uint16_t)want);
	wire_put16(p + 42, 0);
	r = lf_request_wait(c, req_id, lf_dht_node_reply, &nd, LF_DHT_EXTRA_MS);
	if (r < 0) {
		free(nd.ids);
		return r;
	}
	*ret = nd.ids;
	*ret_n = nd.n;
	return 0;
}

void
ferry_dht_status_free(struct ferry_dht_status *st)
{
	if (st == NULL)
		return;
	if (st->bpcc != NULL)
		free(st->bpcc->peers);
	free(st->bpcc);
	free(st->cc);
	free(st->buckets);
	free(st);
}

/* The BPCC section (<ferry/proto.h>), len bytes at p, into st. 0,
 * -EPROTO, -ENOMEM. */
static int
lf_dht_status_bpcc(struct ferry_dht_status *st, const uint8_t *p, size_t len)
{
	struct ferry_dht_bpcc *b;
	size_t m;

	if (len < FERRY_C_DHT_BPCC_FIXED || st->bpcc != NULL)
		return -EPROTO;
	m = wire_get16(p + 72);
	if (len != FERRY_C_DHT_BPCC_FIXED + m * FERRY_C_DHT_BPCC_PEER_SIZE)
		return -EPROTO;
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	st->bpcc = b;
	b->peers = calloc(m > 0 ? m : 1, sizeof(*b->peers));
	if (b->peers == NULL)
		return -ENOMEM;
	b->queue = wire_get32(p);
	b->block_max_ms = wire_get32(p + 4);
	b->depth = wire_get32(p + 8);
	b->blocked = wire_get32(p + 12);
	b->held = wire_get32(p + 16);
	b->holds = wire_get64(p + 24);
	b->releases = wire_get64(p + 32);
	b->block_timeouts = wire_get64(p + 40);
	b->failed_over = wire_get64(p + 48);
	b->fails = wire_get64(p + 56);
	b->overflow = wire_get64(p + 64);
	b->n_peers = m;
	p += FERRY_C_DHT_BPCC_FIXED;
	for (size_t i = 0; i < m; i++, p += FERRY_C_DHT_BPCC_PEER_SIZE) {
		memcpy(b->peers[i].id.bytes, p, FERRY_PEER_ID_LEN);
		b->peers[i].depth = wire_get32(p + 32);
		b->peers[i].blocked_ms = wire_get32(p + 36);
		b->peers[i].flags = p[40];
	}
	return 0;
}

/* The congestion control's section (<ferry/proto.h>), len bytes at p,
 * into st. 0, -EPROTO, -ENOMEM. */
static int
lf_dht_status_cc(struct ferry_dht_status *st, const uint8_t *p, size_t len)
{
	struct ferry_dht_cc *cc;

	if (len != FERRY_C_DHT_CC_SIZE || st->cc != NULL)
		return -EPROTO;
	cc = calloc(1, sizeof(*cc));
	if (cc == NULL)
		return -ENOMEM;
	st->cc = cc;
	cc->scheme = p[0];
	cc->waiting = wire_get32(p + 4);
	cc->in_flight = wire_get32(p + 8);
	cc->credits = wire_get32(p + 12) / 1000.0;
	cc->ssthresh = wire_get32(p + 16) / 1000.0;
	cc->rtt_us = wire_get32(p + 20);
	cc->rto_us = wire_get32(p + 24);
	cc->retransmits = wire_get64(p + 32);
	cc->losses = wire_get64(p + 40);
	cc->drops = wire_get64(p + 48);
	cc->duplicates = wire_get64(p + 56);
	cc->refused = wire_get64(p + 64);
	return 0;
}

/* The sections after the buckets, len bytes at p: known kinds are read,
 * others skipped. 0, -EPROTO (one runs past the frame), -ENOMEM. */
static int
lf_dht_status_sections(struct ferry_dht_status *st, const uint8_t *p,
    size_t len)
{
	size_t off = 0, n;
	int r;

	while (off < len) {
		if (len - off < FERRY_C_DHT_SECTION_HDR)
			return -EPROTO;
		n = wire_get16(p + off + 2);
		if (len - off - FERRY_C_DHT_SECTION_HDR < n)
			return -EPROTO;
		r = 0;
		if (wire_get16(p + off) == FERRY_C_DHT_SECTION_BPCC)
			r = lf_dht_status_bpcc(st,
			    p + off + FERRY_C_DHT_SECTION_HDR, n);
		else if (wire_get16(p + off) == FERRY_C_DHT_SECTION_CC)
			r = lf_dht_status_cc(st,
			    p + off + FERRY_C_DHT_SECTION_HDR, n);
		if (r < 0)
			return r;
		off += FERRY_C_DHT_SECTION_HDR + n;
	}
	return 0;
}

/* DHT_STATUS: 4 req_id  8 k  10 replication  12 entries  16 cached
 *   20 buckets_used  24 blocks  32 bytes  40 quota  48 n  50 reserved,
 *   then n times: prefix, entries; then sections (kind, len, bytes) */
static int
lf_dht_status_reply(void *ctx, const struct lf_frame *f)
{
	struct ferry_dht_status **ret = ctx, *st;
	const uint8_t *p = f->p;
	size_t n, off;
	int r;

	if (f->type != FERRY_C_DHT_STATUS ||
	    f->size < FERRY_C_DHT_STATUS_FIXED || *ret != NULL)
		return -EPROTO;
	n = wire_get16(p + 48);
	if (f->size < FERRY_C_DHT_STATUS_FIXED + n * FERRY_C_DHT_BUCKET_SIZE)
		return -EPROTO;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	st->buckets = calloc(n > 0 ? n : 1, sizeof(*st->buckets));
	if (st->buckets == NULL) {
		free(st);
		return -ENOMEM;
	}
	st->k = wire_get16(p + 8);
	st->replication = wire_get16(p + 10);
	st->entries = wire_get32(p + 12);
	st->cached = wire_get32(p + 16);
	st->buckets_used = wire_get32(p + 20);
	st->blocks = wire_get64(p + 24);
	st->bytes = wire_get64(p + 32);
	st->quota = wire_get64(p + 40);
	st->n_buckets = n;
	for (size_t i = 0; i < n; i++) {
		p = f->p + FERRY_C_DHT_STATUS_FIXED +
		    i * FERRY_C_DHT_BUCKET_SIZE;
		st->buckets[i].prefix = wire_get16(p);
		st->buckets[i].entries = wire_get16(p + 2);
	}
	off = FERRY_C_DHT_STATUS_FIXED + n * FERRY_C_DHT_BUCKET_SIZE;
	r = lf_dht_status_sections(st, f->p + off, f->size - off);
	if (r < 0) {
		ferry_dht_status_free(st);
		return r;
	}
	*ret = st;
	return 1;
}

int
ferry_dht_status(struct ferry_client *c, struct ferry_dht_status **ret)
{
	struct ferry_dht_status *st = NULL;
	int r;

	if (c == NULL || ret == NULL)
		return -EINVAL;
	r = lf_request_simple(c, FERRY_C_DHT_STATUS_REQ, lf_dht_status_reply,
	    &st);
	if (r == 0 && st == NULL)
		r = -EPROTO; /* RESULT 0 instead of DHT_STATUS */
	if (r < 0) {
		ferry_dht_status_free(st);
		return r;
	}
	*ret = st;
	return 0;
}
