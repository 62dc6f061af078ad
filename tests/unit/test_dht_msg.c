/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's wire messages (src/dht/dhtmsg.c): every request and answer
 * encodes and decodes back to itself, every cut and every value out of
 * range is refused, and PUT and receipt signatures bind what they must.
 */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "unit.h"

static struct identity *origin, *storer;
static uint8_t block[3000];
static struct dhtkey key;

static void
setup(void)
{
	uint8_t seed[32];

	memset(seed, 1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &origin), 0);
	memset(seed, 2, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &storer), 0);
	randombytes_buf(block, sizeof(block));
	dhtkey_of_block(block, sizeof(block), &key);
}

static void
teardown(void)
{
	identity_free(origin);
	identity_free(storer);
}

static struct dhtmsg_req
a_request(uint16_t type)
{
	static const uint8_t helo[] = "some signed HELO bytes";
	struct dhtmsg_req m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.hops_left = 20;
	m.hops = 3;
	m.req_id = 0x0102030405060708ull;
	m.key = key;
	randombytes_buf(m.requester.b, DHTKEY_LEN);
	m.helo = helo;
	m.helo_len = sizeof(helo);
	m.want = 8;
	if (type == FERRY_MSG_DHT_PUT) {
		m.flags = DHTMSG_F_REPLICA;
		m.put.replication = 3;
		m.put.expiry = 1800000000;
		m.put.block = block;
		m.put.block_len = sizeof(block);
		dhtmsg_put_sign(origin, &key, &m.put);
	}
	return m;
}

/* Encodes m, checks every shorter cut and one byte more are refused,
 * and returns the decoded whole in *ret (pointing into *out). */
static void
req_round_trip(const struct dhtmsg_req *m, struct buf *out,
    struct dhtmsg_req *ret)
{
	uint8_t *extra;

	buf_init(out);
	ck_assert_int_eq(dhtmsg_req_encode(m, out), 0);
	for (size_t len = 0; len < buf_size(out); len++)
		ck_assert_int_eq(dhtmsg_req_decode(m->type, buf_head(out), len,
		                     ret),
		    -EBADMSG);
	extra = buf_reserve(out, 1);
	ck_assert_ptr_nonnull(extra);
	*extra = 0;
	ck_assert_int_eq(dhtmsg_req_decode(m->type, buf_head(out),
	                     buf_size(out) + 1, ret),
	    -EBADMSG);
	ck_assert_int_eq(dhtmsg_req_decode(m->type, buf_head(out),
	                     buf_size(out), ret),
	    0);
}

START_TEST(test_requests)
{
	static const uint16_t types[] = { FERRY_MSG_DHT_GET,
		FERRY_MSG_DHT_FIND, FERRY_MSG_DHT_PUT };
	struct dhtmsg_req m = a_request(types[_i]), d;
	struct buf out, again;

	req_round_trip(&m, &out, &d);
	ck_assert_uint_eq(d.type, m.type);
	ck_assert_uint_eq(d.flags, m.flags);
	ck_assert_uint_eq(d.hops_left, 20);
	ck_assert_uint_eq(d.hops, 3);
	ck_assert_uint_eq(d.req_id, m.req_id);
	ck_assert(dhtkey_equal(&d.key, &key));
	ck_assert(dhtkey_equal(&d.requester, &m.requester));
	ck_assert_uint_eq(d.helo_len, m.helo_len);
	ck_assert_mem_eq(d.helo, m.helo, m.helo_len);
	if (m.type == FERRY_MSG_DHT_FIND)
		ck_assert_uint_eq(d.want, 8);
	if (m.type == FERRY_MSG_DHT_PUT) {
		ck_assert_uint_eq(d.put.block_len, sizeof(block));
		ck_assert_mem_eq(d.put.block, block, sizeof(block));
		ck_assert_int_eq(dhtmsg_put_verify(&d.key, &d.put), 0);
	}
	/* What decodes encodes to the same bytes. */
	buf_init(&again);
	ck_assert_int_eq(dhtmsg_req_encode(&d, &again), 0);
	ck_assert_uint_eq(buf_size(&again), buf_size(&out));
	ck_assert_mem_eq(buf_head(&again), buf_head(&out), buf_size(&out));
	/* As another type, or under an answer's type, it is refused. */
	ck_assert_int_eq(dhtmsg_req_decode(FERRY_MSG_DHT_RECEIPT,
	                     buf_head(&out), buf_size(&out), &d),
	    -EBADMSG);
	buf_done(&again);
	buf_done(&out);
}
END_TEST

/* Each field out of its range, in the encoded bytes. */
START_TEST(test_request_ranges)
{
	struct dhtmsg_req m = a_request(FERRY_MSG_DHT_PUT), d;
	struct buf out;
	uint8_t *p;
	size_t len, tail;

	buf_init(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), 0);
	p = buf_head(&out);
	len = buf_size(&out);
	tail = DHTMSG_REQ_FIXED + m.helo_len;
#define REFUSED_WITH(off, val)                                              \
	do {                                                                \
		uint8_t old = p[off];                                       \
		p[off] = (val);                                             \
		ck_assert_int_eq(dhtmsg_req_decode(m.type, p, len, &d),      \
		    -EBADMSG);                                              \
		p[off] = old;                                               \
	} while (0)
	REFUSED_WITH(0, 2);                   /* version */
	REFUSED_WITH(1, 0x04);                /* unknown flag */
	REFUSED_WITH(1, 0x03);                /* REPLICA and CANDIDATE */
	REFUSED_WITH(2, DHTMSG_HOPS_MAX + 1); /* hops_left */
	REFUSED_WITH(3, 200);                 /* hops */
	REFUSED_WITH(76, 0xff);               /* helo_len past the end */
	REFUSED_WITH(tail, 0);                /* replication 0 */
	REFUSED_WITH(tail, DHTMSG_REPL_MAX + 1);
	REFUSED_WITH(tail + 1, 1);            /* reserved */
	REFUSED_WITH(tail + DHTMSG_PUT_FIXED - 4, 1); /* block_len */
#undef REFUSED_WITH
	ck_assert_int_eq(dhtmsg_req_decode(m.type, p, len, &d), 0);
	p[1] = DHTMSG_F_CANDIDATE;
	ck_assert_int_eq(dhtmsg_req_decode(m.type, p, len, &d), 0);
	ck_assert_uint_eq(d.flags, DHTMSG_F_CANDIDATE);
	/* REPLICA and CANDIDATE are for PUT only, one at a time. */
	m.flags = DHTMSG_F_REPLICA | DHTMSG_F_CANDIDATE;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), -EINVAL);
	m = a_request(FERRY_MSG_DHT_GET);
	m.flags = DHTMSG_F_REPLICA;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), -EINVAL);
	m.flags = DHTMSG_F_CANDIDATE;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), -EINVAL);
	m = a_request(FERRY_MSG_DHT_FIND);
	m.want = 0;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), -EINVAL);
	m.want = DHTMSG_FIND_MAX + 1;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &out), -EINVAL);
	buf_done(&out);
}
END_TEST

START_TEST(test_put_signature)
{
	struct dhtmsg_req m = a_request(FERRY_MSG_DHT_PUT);
	uint8_t h1[DHTMSG_HASH_LEN], h2[DHTMSG_HASH_LEN];
	struct dhtkey other = key;

	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), 0);
	dhtmsg_put_hash(&key, &m.put, h1);
	/* Each signed field, and the block under its key, is bound. */
	m.put.replication = 4;
	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), -EBADMSG);
	dhtmsg_put_hash(&key, &m.put, h2);
	ck_assert_int_ne(memcmp(h1, h2, sizeof(h1)), 0);
	m.put.replication = 3;
	m.put.expiry++;
	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), -EBADMSG);
	m.put.expiry--;
	block[7] ^= 1;
	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), -EBADMSG);
	block[7] ^= 1;
	other.b[0] ^= 1;
	ck_assert_int_eq(dhtmsg_put_verify(&other, &m.put), -EBADMSG);
	m.put.sig[0] ^= 1;
	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), -EBADMSG);
	m.put.sig[0] ^= 1;
	ck_assert_int_eq(dhtmsg_put_verify(&key, &m.put), 0);
	dhtmsg_put_hash(&key, &m.put, h2);
	ck_assert_mem_eq(h1, h2, sizeof(h1));
}
END_TEST

static struct dhtmsg_ans
an_answer(uint16_t type, struct buf *nodes)
{
	struct dhtmsg_ans a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.flags = DHTMSG_F_ROUTED;
	a.hops_left = 7;
	a.req_id = 99;
	a.key = key;
	randombytes_buf(a.requester.b, DHTKEY_LEN);
	dhtkey_from_peer(&storer->id, &a.responder);
	a.block = block;
	a.block_len = sizeof(block);
	a.code = DHTMSG_NOT_FOUND;
	if (type == FERRY_MSG_DHT_RECEIPT) {
		uint8_t h[DHTMSG_HASH_LEN];

		memset(h, 0x5a, sizeof(h));
		dhtmsg_receipt_sign(storer, &key, h, 1800000000, &a.receipt);
	}
	if (type == FERRY_MSG_DHT_NODES) {
		for (int i = 0; i < 3; i++)
			ck_assert_int_eq(dhtmsg_nodes_put(nodes, &key, block,
			                     (size_t)i * 10),
			    0);
		a.count = 3;
		a.nodes = buf_head(nodes);
		a.nodes_len = buf_size(nodes);
	}
	return a;
}

START_TEST(test_answers)
{
	static const uint16_t types[] = { FERRY_MSG_DHT_RECEIPT,
		FERRY_MSG_DHT_BLOCK, FERRY_MSG_DHT_NODES, FERRY_MSG_DHT_FAIL,
		FERRY_MSG_DHT_ACK };
	struct buf nodes, out, again;
	struct dhtmsg_ans a, d;
	struct dhtmsg_node n;
	size_t off = 0;
	int count = 0;

	buf_init(&nodes);
	buf_init(&out);
	buf_init(&again);
	a = an_answer(types[_i], &nodes);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
	for (size_t len = 0; len < buf_size(&out); len++)
		ck_assert_int_eq(dhtmsg_ans_decode(a.type, buf_head(&out), len,
		                     &d),
		    -EBADMSG);
	ck_assert_int_eq(dhtmsg_ans_decode(a.type, buf_head(&out),
	                     buf_size(&out), &d),
	    0);
	ck_assert_uint_eq(d.req_id, 99);
	ck_assert_uint_eq(d.hops_left, 7);
	ck_assert(dhtkey_equal(&d.responder, &a.responder));
	ck_assert_int_eq(dhtmsg_ans_encode(&d, &again), 0);
	ck_assert_mem_eq(buf_head(&again), buf_head(&out), buf_size(&out));
	if (a.type == FERRY_MSG_DHT_NODES) {
		while (dhtmsg_nodes_next(&d, &off, &n) == 1) {
			ck_assert_uint_eq(n.helo_len, (size_t)count * 10);
			count++;
		}
		ck_assert_int_eq(count, 3);
	}
	ck_assert_int_eq(dhtmsg_ans_decode(FERRY_MSG_DHT_GET, buf_head(&out),
	                     buf_size(&out), &d),
	    -EBADMSG);
	buf_done(&again);
	buf_done(&out);
	buf_done(&nodes);
}
END_TEST

/* FAIL's code: 0 is malformed; any other is valid, the known ones and
 * those a newer peer may send, and goes back as it came. */
START_TEST(test_fail_codes)
{
	static const uint16_t codes[] = { DHTMSG_NOT_FOUND, DHTMSG_RATE,
		DHTMSG_ORIGIN_QUOTA, DHTMSG_STORE_FAILED,
		DHTMSG_STORE_FAILED + 1, 0xffff };
	struct buf nodes, out, again;
	struct dhtmsg_ans a, d;
	uint8_t *p;

	buf_init(&nodes);
	buf_init(&out);
	buf_init(&again);
	a = an_answer(FERRY_MSG_DHT_FAIL, &nodes);
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		a.code = codes[i];
		buf_reset(&out);
		buf_reset(&again);
		ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), 0);
		ck_assert_int_eq(dhtmsg_ans_decode(a.type, buf_head(&out),
		                     buf_size(&out), &d),
		    0);
		ck_assert_uint_eq(d.code, codes[i]);
		ck_assert_int_eq(dhtmsg_ans_encode(&d, &again), 0);
		ck_assert_mem_eq(buf_head(&again), buf_head(&out),
		    buf_size(&out));
	}
	p = buf_head(&out);
	p[buf_size(&out) - 2] = 0;
	p[buf_size(&out) - 1] = 0;
	ck_assert_int_eq(dhtmsg_ans_decode(a.type, p, buf_size(&out), &d),
	    -EBADMSG);
	a.code = 0;
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &out), -EINVAL);
	buf_done(&again);
	buf_done(&out);
	buf_done(&nodes);
}
END_TEST

START_TEST(test_receipt_binds)
{
	struct buf nodes;
	struct dhtmsg_ans a;
	uint8_t h[DHTMSG_HASH_LEN];
	struct dhtkey wrong;

	buf_init(&nodes);
	a = an_answer(FERRY_MSG_DHT_RECEIPT, &nodes);
	memset(h, 0x5a, sizeof(h));
	ck_assert_int_eq(dhtmsg_receipt_verify(&key, &a.responder, h,
	                     &a.receipt),
	    0);
	/* Another request, another block, another signer, a changed
	 * expiry: all refused. */
	h[0] ^= 1;
	ck_assert_int_eq(dhtmsg_receipt_verify(&key, &a.responder, h,
	                     &a.receipt),
	    -EBADMSG);
	h[0] ^= 1;
	wrong = key;
	wrong.b[5] ^= 1;
	ck_assert_int_eq(dhtmsg_receipt_verify(&wrong, &a.responder, h,
	                     &a.receipt),
	    -EBADMSG);
	ck_assert_int_eq(dhtmsg_receipt_verify(&key, &wrong, h, &a.receipt),
	    -EBADMSG);
	a.receipt.expiry++;
	ck_assert_int_eq(dhtmsg_receipt_verify(&key, &a.responder, h,
	                     &a.receipt),
	    -EBADMSG);
	buf_done(&nodes);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_msg");
	TCase *tc = tcase_create("msg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_requests, 0, 3);
	tcase_add_test(tc, test_request_ranges);
	tcase_add_test(tc, test_put_signature);
	tcase_add_loop_test(tc, test_answers, 0, 5);
	tcase_add_test(tc, test_fail_codes);
	tcase_add_test(tc, test_receipt_binds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
