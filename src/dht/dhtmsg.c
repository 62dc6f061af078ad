/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's wire messages (see dhtmsg.h for the layouts), dht layer.
 * Decoders read a field only after checking it lies in the body, and
 * refuse every value outside its documented range, so that what they
 * accept encodes back to the same bytes.
 */
#include "dht/dhtmsg.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"
#include "lib/wire.h"

#define DHTMSG_PUT_PREFIX     "ferry dht put v1"
#define DHTMSG_RECEIPT_PREFIX "ferry dht receipt v1"
/* key || replication || expiry: what a PUT's signature covers. */
#define DHTMSG_PUT_SIGNED     (DHTKEY_LEN + 1 + 8)
/* key || storer_pk || expiry || put_hash: what a receipt's covers. */
#define DHTMSG_RECEIPT_SIGNED \
	(DHTKEY_LEN + FERRY_PUBKEY_LEN + 8 + DHTMSG_HASH_LEN)

bool
dhtmsg_is_request(uint16_t type)
{
	return type == FERRY_MSG_DHT_PUT || type == FERRY_MSG_DHT_GET ||
	    type == FERRY_MSG_DHT_FIND || type == FERRY_MSG_DHT_RPUT ||
	    type == FERRY_MSG_DHT_RGET;
}

bool
dhtmsg_is_answer(uint16_t type)
{
	return type == FERRY_MSG_DHT_RECEIPT || type == FERRY_MSG_DHT_BLOCK ||
	    type == FERRY_MSG_DHT_NODES || type == FERRY_MSG_DHT_FAIL ||
	    type == FERRY_MSG_DHT_ACK || type == FERRY_MSG_DHT_RECORDS;
}

/* PUT's tail from p (len bytes left). */
static int
dhtmsg_put_decode(const uint8_t *p, size_t len, struct dhtmsg_put *put)
{
	if (len < DHTMSG_PUT_FIXED)
		return -EBADMSG;
	put->replication = p[0];
	if (put->replication == 0 || put->replication > DHTMSG_REPL_MAX ||
	    p[1] != 0)
		return -EBADMSG;
	put->expiry = wire_get64(p + 2);
	memcpy(put->origin_pk, p + 10, FERRY_PUBKEY_LEN);
	memcpy(put->sig, p + 10 + FERRY_PUBKEY_LEN, FERRY_SIG_LEN);
	put->block_len = wire_get32(p + DHTMSG_PUT_FIXED - 4);
	if (put->block_len == 0 || put->block_len > DHTMSG_BLOCK_MAX ||
	    put->block_len != len - DHTMSG_PUT_FIXED)
		return -EBADMSG;
	put->block = p + DHTMSG_PUT_FIXED;
	return 0;
}

/* RGET's tail, and RPUT's: u8 replication, u8 reserved, and RPUT's
 * record entry, exactly len bytes from p. */
static int
dhtmsg_rec_decode(uint16_t type, const uint8_t *p, size_t len,
    struct dhtmsg_req *m)
{
	size_t used;

	if (len < DHTMSG_REC_REQ_FIXED || p[0] == 0 ||
	    p[0] > DHTMSG_REPL_MAX || p[1] != 0)
		return -EBADMSG;
	m->replication = p[0];
	if (type == FERRY_MSG_DHT_RGET)
		return len == DHTMSG_REC_REQ_FIXED ? 0 : -EBADMSG;
	if (dhtrec_decode(&m->key, p + DHTMSG_REC_REQ_FIXED,
	        len - DHTMSG_REC_REQ_FIXED, &m->rec, &used) < 0 ||
	    used != len - DHTMSG_REC_REQ_FIXED)
		return -EBADMSG;
	return 0;
}

/* Requests that are placed at the peers closest to their key. */
static bool
dhtmsg_is_placed(uint16_t type)
{
	return type == FERRY_MSG_DHT_PUT || type == FERRY_MSG_DHT_RPUT ||
	    type == FERRY_MSG_DHT_RGET;
}

/* A request's flags: a placed request's REPLICA or CANDIDATE, not both;
 * none on the others. */
static bool
dhtmsg_flags_valid(uint16_t type, uint8_t flags)
{
	if (!dhtmsg_is_placed(type))
		return flags == 0;
	return flags == 0 || flags == DHTMSG_F_REPLICA ||
	    flags == DHTMSG_F_CANDIDATE;
}

int
dhtmsg_req_decode(uint16_t type, const void *body, size_t len,
    struct dhtmsg_req *ret)
{
	const uint8_t *p = body;
	struct dhtmsg_req m;
	size_t off;

	if (!dhtmsg_is_request(type) || len < DHTMSG_REQ_FIXED ||
	    p[0] != DHTMSG_VERSION)
		return -EBADMSG;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.flags = p[1];
	m.hops_left = p[2];
	m.hops = p[3];
	if (!dhtmsg_flags_valid(type, m.flags) ||
	    m.hops_left > DHTMSG_HOPS_MAX || m.hops > DHTMSG_HOPS_MAX)
		return -EBADMSG;
	m.req_id = wire_get64(p + 4);
	memcpy(m.key.b, p + 12, DHTKEY_LEN);
	memcpy(m.requester.b, p + 44, DHTKEY_LEN);
	m.helo_len = wire_get16(p + 76);
	if (m.helo_len > DHTMSG_HELO_MAX ||
	    m.helo_len > len - DHTMSG_REQ_FIXED)
		return -EBADMSG;
	m.helo = p + DHTMSG_REQ_FIXED;
	off = DHTMSG_REQ_FIXED + m.helo_len;
	if (type == FERRY_MSG_DHT_GET) {
		if (off != len)
			return -EBADMSG;
	} else if (type == FERRY_MSG_DHT_FIND) {
		if (len - off != 2)
			return -EBADMSG;
		m.want = wire_get16(p + off);
		if (m.want == 0 || m.want > DHTMSG_FIND_MAX)
			return -EBADMSG;
	} else if (type == FERRY_MSG_DHT_RPUT || type == FERRY_MSG_DHT_RGET) {
		if (dhtmsg_rec_decode(type, p + off, len - off, &m) < 0)
			return -EBADMSG;
	} else if (dhtmsg_put_decode(p + off, len - off, &m.put) < 0) {
		return -EBADMSG;
	}
	*ret = m;
	return 0;
}

/* The checks dhtmsg_req_decode makes, for what is about to be sent. */
static bool
dhtmsg_req_valid(const struct dhtmsg_req *m)
{
	bool put = m->type == FERRY_MSG_DHT_PUT;

	if (!dhtmsg_is_request(m->type) ||
	    !dhtmsg_flags_valid(m->type, m->flags) ||
	    m->hops_left > DHTMSG_HOPS_MAX || m->hops > DHTMSG_HOPS_MAX ||
	    m->helo_len > DHTMSG_HELO_MAX)
		return false;
	if (m->type == FERRY_MSG_DHT_FIND)
		return m->want >= 1 && m->want <= DHTMSG_FIND_MAX;
	if (m->type == FERRY_MSG_DHT_RPUT || m->type == FERRY_MSG_DHT_RGET)
		return m->replication >= 1 &&
		    m->replication <= DHTMSG_REPL_MAX &&
		    m->rec.value_len <= DHTREC_VALUE_MAX;
	if (put)
		return m->put.replication >= 1 &&
		    m->put.replication <= DHTMSG_REPL_MAX &&
		    m->put.block_len >= 1 && m->put.block_len <= DHTMSG_BLOCK_MAX;
	return true;
}

static size_t
dhtmsg_req_size(const struct dhtmsg_req *m)
{
	size_t size = DHTMSG_REQ_FIXED + m->helo_len;

	if (m->type == FERRY_MSG_DHT_FIND)
		size += 2;
	else if (m->type == FERRY_MSG_DHT_PUT)
		size += DHTMSG_PUT_FIXED + m->put.block_len;
	else if (m->type == FERRY_MSG_DHT_RGET)
		size += DHTMSG_REC_REQ_FIXED;
	else if (m->type == FERRY_MSG_DHT_RPUT)
		size += DHTMSG_REC_REQ_FIXED + dhtrec_size(&m->rec);
	return size;
}

static void
dhtmsg_put_encode(const struct dhtmsg_put *put, uint8_t *p)
{
	p[0] = put->replication;
	p[1] = 0;
	wire_put64(p + 2, put->expiry);
	memcpy(p + 10, put->origin_pk, FERRY_PUBKEY_LEN);
	memcpy(p + 10 + FERRY_PUBKEY_LEN, put->sig, FERRY_SIG_LEN);
	wire_put32(p + DHTMSG_PUT_FIXED - 4, (uint32_t)put->block_len);
	memcpy(p + DHTMSG_PUT_FIXED, put->block, put->block_len);
}

int
dhtmsg_req_encode(const struct dhtmsg_req *m, struct buf *out)
{
	size_t size, off;
	uint8_t *p;

	if (!dhtmsg_req_valid(m))
		return -EINVAL;
	size = dhtmsg_req_size(m);
	p = buf_reserve(out, size);
	if (p == NULL)
		return -ENOMEM;
	p[0] = DHTMSG_VERSION;
	p[1] = m->flags;
	p[2] = m->hops_left;
	p[3] = m->hops;
	wire_put64(p + 4, m->req_id);
	memcpy(p + 12, m->key.b, DHTKEY_LEN);
	memcpy(p + 44, m->requester.b, DHTKEY_LEN);
	wire_put16(p + 76, (uint16_t)m->helo_len);
	if (m->helo_len > 0)
		memcpy(p + DHTMSG_REQ_FIXED, m->helo, m->helo_len);
	off = DHTMSG_REQ_FIXED + m->helo_len;
	if (m->type == FERRY_MSG_DHT_FIND)
		wire_put16(p + off, m->want);
	else if (m->type == FERRY_MSG_DHT_PUT)
		dhtmsg_put_encode(&m->put, p + off);
	if (m->type == FERRY_MSG_DHT_RPUT || m->type == FERRY_MSG_DHT_RGET) {
		p[off] = m->replication;
		p[off + 1] = 0;
	}
	if (m->type == FERRY_MSG_DHT_RPUT)
		dhtrec_encode(&m->rec, p + off + DHTMSG_REC_REQ_FIXED);
	buf_commit(out, size);
	return 0;
}

/* Checks a NODES list of count entries filling exactly len bytes. */
static int
dhtmsg_nodes_check(const uint8_t *p, size_t len, uint16_t count)
{
	size_t off = 0;

	for (uint16_t i = 0; i < count; i++) {
		size_t helo_len;

		if (len - off < DHTKEY_LEN + 2)
			return -EBADMSG;
		helo_len = wire_get16(p + off + DHTKEY_LEN);
		if (helo_len > DHTMSG_HELO_MAX ||
		    len - off - DHTKEY_LEN - 2 < helo_len)
			return -EBADMSG;
		off += DHTKEY_LEN + 2 + helo_len;
	}
	return off == len ? 0 : -EBADMSG;
}

/* Checks a RECORDS list of count entries at topic filling exactly len
 * bytes. */
static int
dhtmsg_records_check(const struct dhtkey *topic, const uint8_t *p,
    size_t len, uint16_t count)
{
	struct dhtrec r;
	size_t off = 0, used;

	for (uint16_t i = 0; i < count; i++) {
		if (dhtrec_decode(topic, p + off, len - off, &r, &used) < 0)
			return -EBADMSG;
		off += used;
	}
	return off == len ? 0 : -EBADMSG;
}

/* The tail of an answer of m->type, from p (len bytes). */
static int
dhtmsg_ans_tail(struct dhtmsg_ans *m, const uint8_t *p, size_t len)
{
	switch (m->type) {
	case FERRY_MSG_DHT_RECEIPT:
		if (len != DHTMSG_RECEIPT_SIZE)
			return -EBADMSG;
		m->receipt.expiry = wire_get64(p);
		memcpy(m->receipt.put_hash, p + 8, DHTMSG_HASH_LEN);
		memcpy(m->receipt.storer_pk, p + 40, FERRY_PUBKEY_LEN);
		memcpy(m->receipt.sig, p + 72, FERRY_SIG_LEN);
		return 0;
	case FERRY_MSG_DHT_BLOCK:
		if (len < 4)
			return -EBADMSG;
		m->block_len = wire_get32(p);
		if (m->block_len == 0 || m->block_len > DHTMSG_BLOCK_MAX ||
		    m->block_len != len - 4)
			return -EBADMSG;
		m->block = p + 4;
		return 0;
	case FERRY_MSG_DHT_NODES:
		if (len < 2)
			return -EBADMSG;
		m->count = wire_get16(p);
		if (m->count > DHTMSG_FIND_MAX)
			return -EBADMSG;
		m->nodes = p + 2;
		m->nodes_len = len - 2;
		return dhtmsg_nodes_check(m->nodes, m->nodes_len, m->count);
	case FERRY_MSG_DHT_ACK:
		return len == 0 ? 0 : -EBADMSG;
	case FERRY_MSG_DHT_RECORDS:
		if (len < 2)
			return -EBADMSG;
		m->count = wire_get16(p);
		if (m->count > DHTMSG_RECORDS_MAX)
			return -EBADMSG;
		m->records = p + 2;
		m->records_len = len - 2;
		return dhtmsg_records_check(&m->key, m->records,
		    m->records_len, m->count);
	default: /* FAIL */
		if (len != 2)
			return -EBADMSG;
		m->code = wire_get16(p);
		return m->code != 0 ? 0 : -EBADMSG;
	}
}

int
dhtmsg_ans_decode(uint16_t type, const void *body, size_t len,
    struct dhtmsg_ans *ret)
{
	const uint8_t *p = body;
	struct dhtmsg_ans m;

	if (!dhtmsg_is_answer(type) || len < DHTMSG_ANS_FIXED ||
	    p[0] != DHTMSG_VERSION || (p[1] & ~DHTMSG_F_ROUTED) != 0 ||
	    p[2] > DHTMSG_HOPS_MAX || p[3] > DHTMSG_HOPS_MAX)
		return -EBADMSG;
	memset(&m, 0, sizeof(m));
	m.type = type;
	m.flags = p[1];
	m.hops_left = p[2];
	m.hops = p[3];
	m.req_id = wire_get64(p + 4);
	memcpy(m.key.b, p + 12, DHTKEY_LEN);
	memcpy(m.requester.b, p + 44, DHTKEY_LEN);
	memcpy(m.responder.b, p + 76, DHTKEY_LEN);
	if (dhtmsg_ans_tail(&m, p + DHTMSG_ANS_FIXED,
	        len - DHTMSG_ANS_FIXED) < 0)
		return -EBADMSG;
	*ret = m;
	return 0;
}

static size_t
dhtmsg_ans_tail_size(const struct dhtmsg_ans *m)
{
	switch (m->type) {
	case FERRY_MSG_DHT_RECEIPT:
		return DHTMSG_RECEIPT_SIZE;
	case FERRY_MSG_DHT_BLOCK:
		return 4 + m->block_len;
	case FERRY_MSG_DHT_NODES:
		return 2 + m->nodes_len;
	case FERRY_MSG_DHT_ACK:
		return 0;
	case FERRY_MSG_DHT_RECORDS:
		return 2 + m->records_len;
	default:
		return 2;
	}
}

static bool
dhtmsg_ans_valid(const struct dhtmsg_ans *m)
{
	if (!dhtmsg_is_answer(m->type) || (m->flags & ~DHTMSG_F_ROUTED) != 0 ||
	    m->hops_left > DHTMSG_HOPS_MAX || m->hops > DHTMSG_HOPS_MAX)
		return false;
	if (m->type == FERRY_MSG_DHT_BLOCK)
		return m->block_len >= 1 && m->block_len <= DHTMSG_BLOCK_MAX;
	if (m->type == FERRY_MSG_DHT_NODES)
		return m->count <= DHTMSG_FIND_MAX &&
		    dhtmsg_nodes_check(m->nodes, m->nodes_len, m->count) == 0;
	if (m->type == FERRY_MSG_DHT_FAIL)
		return m->code != 0;
	if (m->type == FERRY_MSG_DHT_RECORDS)
		return m->count <= DHTMSG_RECORDS_MAX &&
		    dhtmsg_records_check(&m->key, m->records, m->records_len,
		        m->count) == 0;
	return true;
}

static void
dhtmsg_ans_put_tail(const struct dhtmsg_ans *m, uint8_t *p)
{
	switch (m->type) {
	case FERRY_MSG_DHT_RECEIPT:
		wire_put64(p, m->receipt.expiry);
		memcpy(p + 8, m->receipt.put_hash, DHTMSG_HASH_LEN);
		memcpy(p + 40, m->receipt.storer_pk, FERRY_PUBKEY_LEN);
		memcpy(p + 72, m->receipt.sig, FERRY_SIG_LEN);
		break;
	case FERRY_MSG_DHT_BLOCK:
		wire_put32(p, (uint32_t)m->block_len);
		memcpy(p + 4, m->block, m->block_len);
		break;
	case FERRY_MSG_DHT_NODES:
		wire_put16(p, m->count);
		if (m->nodes_len > 0)
			memcpy(p + 2, m->nodes, m->nodes_len);
		break;
	case FERRY_MSG_DHT_ACK:
		break;
	case FERRY_MSG_DHT_RECORDS:
		wire_put16(p, m->count);
		if (m->records_len > 0)
			memcpy(p + 2, m->records, m->records_len);
		break;
	default:
		wire_put16(p, m->code);
		break;
	}
}

int
dhtmsg_ans_encode(const struct dhtmsg_ans *m, struct buf *out)
{
	size_t size;
	uint8_t *p;

	if (!dhtmsg_ans_valid(m))
		return -EINVAL;
	size = DHTMSG_ANS_FIXED + dhtmsg_ans_tail_size(m);
	p = buf_reserve(out, size);
	if (p == NULL)
		return -ENOMEM;
	p[0] = DHTMSG_VERSION;
	p[1] = m->flags;
	p[2] = m->hops_left;
	p[3] = m->hops;
	wire_put64(p + 4, m->req_id);
	memcpy(p + 12, m->key.b, DHTKEY_LEN);
	memcpy(p + 44, m->requester.b, DHTKEY_LEN);
	memcpy(p + 76, m->responder.b, DHTKEY_LEN);
	dhtmsg_ans_put_tail(m, p + DHTMSG_ANS_FIXED);
	buf_commit(out, size);
	return 0;
}

int
dhtmsg_nodes_next(const struct dhtmsg_ans *m, size_t *off,
    struct dhtmsg_node *ret)
{
	const uint8_t *p = m->nodes + *off;

	if (*off >= m->nodes_len)
		return 0;
	memcpy(ret->id.b, p, DHTKEY_LEN);
	ret->helo_len = wire_get16(p + DHTKEY_LEN);
	ret->helo = p + DHTKEY_LEN + 2;
	*off += DHTKEY_LEN + 2 + ret->helo_len;
	return 1;
}

int
dhtmsg_nodes_put(struct buf *out, const struct dhtkey *id, const void *helo,
    size_t helo_len)
{
	uint8_t *p;

	if (helo_len > DHTMSG_HELO_MAX)
		return -EINVAL;
	p = buf_reserve(out, DHTKEY_LEN + 2 + helo_len);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, id->b, DHTKEY_LEN);
	wire_put16(p + DHTKEY_LEN, (uint16_t)helo_len);
	if (helo_len > 0)
		memcpy(p + DHTKEY_LEN + 2, helo, helo_len);
	buf_commit(out, DHTKEY_LEN + 2 + helo_len);
	return 0;
}

int
dhtmsg_records_next(const struct dhtmsg_ans *m, size_t *off,
    struct dhtrec *ret)
{
	size_t used;

	if (*off >= m->records_len ||
	    dhtrec_decode(&m->key, m->records + *off, m->records_len - *off,
	        ret, &used) < 0)
		return 0;
	*off += used;
	return 1;
}

int
dhtmsg_records_put(struct buf *out, const struct dhtrec *r)
{
	uint8_t *p;

	if (r->value_len > DHTREC_VALUE_MAX)
		return -EINVAL;
	p = buf_reserve(out, dhtrec_size(r));
	if (p == NULL)
		return -ENOMEM;
	dhtrec_encode(r, p);
	buf_commit(out, dhtrec_size(r));
	return 0;
}

static void
dhtmsg_put_signed(const struct dhtkey *key, const struct dhtmsg_put *put,
    uint8_t out[DHTMSG_PUT_SIGNED])
{
	memcpy(out, key->b, DHTKEY_LEN);
	out[DHTKEY_LEN] = put->replication;
	wire_put64(out + DHTKEY_LEN + 1, put->expiry);
}

void
dhtmsg_put_sign(const struct identity *ident, const struct dhtkey *key,
    struct dhtmsg_put *put)
{
	uint8_t data[DHTMSG_PUT_SIGNED];

	dhtmsg_put_signed(key, put, data);
	memcpy(put->origin_pk, ident->pk, FERRY_PUBKEY_LEN);
	identity_sign(ident, DHTMSG_PUT_PREFIX, data, sizeof(data), put->sig);
}

int
dhtmsg_put_verify(const struct dhtkey *key, const struct dhtmsg_put *put)
{
	struct dhtkey actual;

	/* The cheap check first: a block that is not its key's costs no
	 * signature check. */
	dhtkey_of_block(put->block, put->block_len, &actual);
	if (!dhtkey_equal(&actual, key))
		return -EBADMSG;
	return dhtmsg_put_verify_sig(key, put);
}

int
dhtmsg_put_verify_sig(const struct dhtkey *key, const struct dhtmsg_put *put)
{
	uint8_t data[DHTMSG_PUT_SIGNED];

	dhtmsg_put_signed(key, put, data);
	return identity_verify(put->origin_pk, DHTMSG_PUT_PREFIX, data,
	    sizeof(data), put->sig);
}

void
dhtmsg_put_hash(const struct dhtkey *key, const struct dhtmsg_put *put,
    uint8_t ret[DHTMSG_HASH_LEN])
{
	crypto_generichash_state st;
	uint8_t fixed[1 + 8];

	fixed[0] = put->replication;
	wire_put64(fixed + 1, put->expiry);
	(void)crypto_generichash_init(&st, NULL, 0, DHTMSG_HASH_LEN);
	(void)crypto_generichash_update(&st, key->b, DHTKEY_LEN);
	(void)crypto_generichash_update(&st, fixed, sizeof(fixed));
	(void)crypto_generichash_update(&st, put->origin_pk, FERRY_PUBKEY_LEN);
	(void)crypto_generichash_update(&st, put->sig, FERRY_SIG_LEN);
	(void)crypto_generichash_final(&st, ret, DHTMSG_HASH_LEN);
}

static void
dhtmsg_receipt_signed(const struct dhtkey *key,
    const struct dhtmsg_receipt *r, uint8_t out[DHTMSG_RECEIPT_SIGNED])
{
	memcpy(out, key->b, DHTKEY_LEN);
	memcpy(out + DHTKEY_LEN, r->storer_pk, FERRY_PUBKEY_LEN);
	wire_put64(out + DHTKEY_LEN + FERRY_PUBKEY_LEN, r->expiry);
	memcpy(out + DHTKEY_LEN + FERRY_PUBKEY_LEN + 8, r->put_hash,
	    DHTMSG_HASH_LEN);
}

void
dhtmsg_receipt_sign(const struct identity *ident, const struct dhtkey *key,
    const uint8_t put_hash[DHTMSG_HASH_LEN], uint64_t expiry,
    struct dhtmsg_receipt *ret)
{
	uint8_t data[DHTMSG_RECEIPT_SIGNED];

	ret->expiry = expiry;
	memcpy(ret->put_hash, put_hash, DHTMSG_HASH_LEN);
	memcpy(ret->storer_pk, ident->pk, FERRY_PUBKEY_LEN);
	dhtmsg_receipt_signed(key, ret, data);
	identity_sign(ident, DHTMSG_RECEIPT_PREFIX, data, sizeof(data),
	    ret->sig);
}

int
dhtmsg_receipt_verify(const struct dhtkey *key,
    const struct dhtkey *responder, const uint8_t put_hash[DHTMSG_HASH_LEN],
    const struct dhtmsg_receipt *r)
{
	uint8_t data[DHTMSG_RECEIPT_SIGNED];
	struct ferry_peer_id id;

	if (sodium_memcmp(r->put_hash, put_hash, DHTMSG_HASH_LEN) != 0)
		return -EBADMSG;
	peer_id_of(r->storer_pk, &id);
	if (memcmp(id.bytes, responder->b, DHTKEY_LEN) != 0)
		return -EBADMSG;
	dhtmsg_receipt_signed(key, r, data);
	return identity_verify(r->storer_pk, DHTMSG_RECEIPT_PREFIX, data,
	    sizeof(data), r->sig);
}
