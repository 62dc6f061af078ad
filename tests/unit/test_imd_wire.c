/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What the intermediary's server parses (src/intermediary/httpmsg.c):
 * request lines, header fields, chunk sizes and Content-Lengths at their
 * edges; and the upload records of ferry-intermediary(7)
 * (src/intermediary/imdwire.c, the codec the server and the thin client
 * share): their bounds judged from four bytes, and a record the client
 * writes with the client key, decoded as the server does and relayed as
 * a DHT PUT with origin_pk the client's, passes dhtmsg's decoder and
 * verification exactly as a storing peer runs them, and names the
 * put_hash the client awaits; cuts and values out of range told apart.
 */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "intermediary/httpmsg.h"
#include "intermediary/imdwire.h"
#include "lib/buf.h"
#include "lib/wire.h"
#include "unit.h"

#define S(x) x, sizeof(x) - 1

START_TEST(test_request_line)
{
	struct httpmsg_reqline rl;
	char long_target[HTTPMSG_TARGET_MAX + 20];

	ck_assert_int_eq(
	    httpmsg_request_line(S("GET /v1/receipts?after=3 HTTP/1.1"), &rl),
	    0);
	ck_assert_str_eq(rl.method, "GET");
	ck_assert_str_eq(rl.target, "/v1/receipts?after=3");
	ck_assert_uint_eq(rl.minor, 1);
	ck_assert_int_eq(httpmsg_request_line(S("POST / HTTP/1.0"), &rl), 0);
	ck_assert_uint_eq(rl.minor, 0);
	ck_assert_int_eq(httpmsg_request_line(S("get / HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET * HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET http://a/ HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET  / HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET / HTTP/1.1 "), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET / HTTP/1.2"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(httpmsg_request_line(S("GET /\x01 HTTP/1.1"), &rl),
	    -EBADMSG);
	ck_assert_int_eq(
	    httpmsg_request_line(S("VERYLONGMETHODNAME / HTTP/1.1"), &rl),
	    -EMSGSIZE);
	memset(long_target, 'a', sizeof(long_target));
	memcpy(long_target, "GET /", 5);
	memcpy(long_target + sizeof(long_target) - 9, " HTTP/1.1", 9);
	ck_assert_int_eq(httpmsg_request_line(long_target, sizeof(long_target),
	                     &rl),
	    -EMSGSIZE);
}
END_TEST

START_TEST(test_fields)
{
	struct httpmsg_field f;

	ck_assert_int_eq(httpmsg_field(S("Content-Length:  42 \t"), &f), 0);
	ck_assert(httpmsg_field_is(&f, "content-length"));
	ck_assert_uint_eq(f.value_len, 2);
	ck_assert_int_eq(memcmp(f.value, "42", 2), 0);
	ck_assert_int_eq(httpmsg_field(S("X-Empty:"), &f), 0);
	ck_assert_uint_eq(f.value_len, 0);
	ck_assert_int_eq(httpmsg_field(S("Bad Name: x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("Name : x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S(": x"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("NoColon"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field(S("X: a\rb"), &f), -EBADMSG);
	ck_assert_int_eq(httpmsg_field("X: a\0b", 6, &f), -EBADMSG);
}
END_TEST

START_TEST(test_numbers)
{
	uint64_t n;

	ck_assert_int_eq(httpmsg_chunk_size(S("1aF"), &n), 0);
	ck_assert_uint_eq(n, 0x1af);
	ck_assert_int_eq(httpmsg_chunk_size(S("10;name=value"), &n), 0);
	ck_assert_uint_eq(n, 16);
	ck_assert_int_eq(httpmsg_chunk_size(S("0"), &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(httpmsg_chunk_size(S(""), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("x1"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("1 x"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_chunk_size(S("1000000000000"), &n),
	    -EOVERFLOW);
	ck_assert_int_eq(httpmsg_content_length(S("1048576"), &n), 0);
	ck_assert_uint_eq(n, 1048576);
	ck_assert_int_eq(httpmsg_content_length(S("-1"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S("1 2"), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S(""), &n), -EBADMSG);
	ck_assert_int_eq(httpmsg_content_length(S("99999999999999999999"), &n),
	    -EOVERFLOW);
}
END_TEST

/* A record of a small block and a MAX_BLOCK of 100, by hand. */
START_TEST(test_records)
{
	static uint8_t buf[2 * (IMDWIRE_PUT_HEAD + 100)];
	uint8_t block[100];
	struct dhtmsg_put put = { .replication = 3, .expiry = 1900000000 };
	struct dhtmsg_put rec;
	size_t total;

	memset(put.sig, 0x5a, sizeof(put.sig));
	memset(block, 0xb1, sizeof(block));
	put.block = block;
	put.block_len = sizeof(block);
	imdwire_put_head(&put, buf);
	memcpy(buf + IMDWIRE_PUT_HEAD, block, sizeof(block));
	ck_assert_uint_eq(wire_get32(buf), 74 + 100);
	ck_assert_int_eq(imdwire_put_size(buf, 3, 100, &total), -EAGAIN);
	ck_assert_int_eq(imdwire_put_size(buf, 4, 100, &total), 0);
	ck_assert_uint_eq(total, IMDWIRE_PUT_HEAD + 100);
	memset(rec.origin_pk, 0x77, sizeof(rec.origin_pk));
	ck_assert_int_eq(imdwire_put_decode(buf, total, 100, &rec), 0);
	ck_assert_uint_eq(rec.replication, 3);
	ck_assert_uint_eq(rec.expiry, 1900000000);
	ck_assert_mem_eq(rec.sig, put.sig, sizeof(put.sig));
	ck_assert_uint_eq(rec.block_len, 100);
	ck_assert_ptr_eq(rec.block, buf + IMDWIRE_PUT_HEAD);
	/* Not in the record: the Authorization header's key. */
	ck_assert_uint_eq(rec.origin_pk[0], 0x77);
	ck_assert_uint_eq(rec.origin_pk[31], 0x77);
	/* A MAX_BLOCK of 99: judged too large from the length alone. */
	ck_assert_int_eq(imdwire_put_size(buf, 4, 99, &total), -EMSGSIZE);
	ck_assert_int_eq(imdwire_put_decode(buf, IMDWIRE_PUT_HEAD + 99, 100,
	                     &rec),
	    -EBADMSG);
	buf[4] = 2;
	ck_assert_int_eq(imdwire_put_decode(buf, IMDWIRE_PUT_HEAD + 100, 100,
	                     &rec),
	    -EBADMSG);
	/* An empty block: len 74 is under 75. */
	wire_put32(buf, 74);
	ck_assert_int_eq(imdwire_put_size(buf, 4, 100, &total), -EBADMSG);
	wire_put32(buf, UINT32_MAX);
	ck_assert_int_eq(imdwire_put_size(buf, 4, 100, &total), -EMSGSIZE);
}
END_TEST

/* A record as the thin client writes it: a 5000-byte block, its DHT PUT
 * signed by the client key. */
static struct identity *client;
static uint8_t block[5000];
static struct dhtkey key;
static uint8_t rec[IMDWIRE_PUT_HEAD + sizeof(block)];
static struct dhtmsg_put put;

static void
signed_setup(void)
{
	uint8_t seed[32];

	memset(seed, 9, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &client), 0);
	randombytes_buf(block, sizeof(block));
	dhtkey_of_block(block, sizeof(block), &key);
	memset(&put, 0, sizeof(put));
	put.replication = 3;
	put.expiry = 1790000000;
	put.block = block;
	put.block_len = sizeof(block);
	dhtmsg_put_sign(client, &key, &put);
	imdwire_put_head(&put, rec);
	memcpy(rec + IMDWIRE_PUT_HEAD, block, sizeof(block));
}

static void
signed_teardown(void)
{
	identity_free(client);
}

/* The server's reading of rec (len bytes at hand) with DHTMSG_BLOCK_MAX,
 * origin_pk the given key: imdwire_put_size()'s verdict, and the record
 * decoded into *got when it is whole. */
static int
read_record(size_t len, const uint8_t pk[32], struct dhtmsg_put *got,
    size_t *ret_total)
{
	int r = imdwire_put_size(rec, len, DHTMSG_BLOCK_MAX, ret_total);

	memcpy(got->origin_pk, pk, 32);
	if (r < 0)
		return r;
	if (*ret_total > len)
		return -EAGAIN;
	return imdwire_put_decode(rec, *ret_total, DHTMSG_BLOCK_MAX, got);
}

START_TEST(test_layout)
{
	ck_assert_uint_eq(wire_get32(rec), 74 + sizeof(block));
	ck_assert_uint_eq(rec[4], 1);
	ck_assert_uint_eq(rec[5], 3);
	ck_assert_uint_eq(wire_get64(rec + 6), 1790000000);
	ck_assert_mem_eq(rec + 14, put.sig, 64);
}
END_TEST

/* What the intermediary relays from the record is a PUT the DHT takes. */
START_TEST(test_relayed_put_verifies)
{
	struct dhtmsg_req m, back;
	struct dhtmsg_put got;
	uint8_t h1[32], h2[32];
	struct buf b;
	size_t used;

	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_uint_eq(used, sizeof(rec));
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), 0);
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_DHT_PUT;
	m.hops_left = 8;
	m.key = key;
	m.put = got;
	buf_init(&b);
	ck_assert_int_eq(dhtmsg_req_encode(&m, &b), 0);
	ck_assert_int_eq(dhtmsg_req_decode(FERRY_MSG_DHT_PUT, buf_head(&b),
	                     buf_size(&b), &back),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&back.key, &back.put), 0);
	dhtmsg_put_hash(&key, &put, h1);
	dhtmsg_put_hash(&back.key, &back.put, h2);
	ck_assert_mem_eq(h1, h2, 32);
	buf_done(&b);
}
END_TEST

/* Signed by another key, or for other fields, it does not verify. */
START_TEST(test_tampering_refused)
{
	static const uint8_t other[32] = { 0x11, 0x11, 0x11 };
	struct dhtmsg_put got;
	size_t used;

	ck_assert_int_eq(read_record(sizeof(rec), other, &got, &used), 0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
	rec[5] = 4;
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
	rec[5] = 3;
	rec[IMDWIRE_PUT_HEAD + 10] ^= 1;
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
}
END_TEST

START_TEST(test_cuts_and_ranges)
{
	struct dhtmsg_req m;
	struct dhtmsg_put got;
	struct buf b;
	size_t used;

	/* Every cut waits for more, and is no record by itself. */
	for (size_t n = 0; n < sizeof(rec); n += n < 100 ? 1 : 997) {
		ck_assert_int_eq(read_record(n, client->pk, &got, &used),
		    -EAGAIN);
		ck_assert_int_eq(imdwire_put_decode(rec, n, DHTMSG_BLOCK_MAX,
		                     &got),
		    -EBADMSG);
	}
	rec[4] = 2;
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used),
	    -EBADMSG);
	rec[4] = 1;
	/* Replication out of range is passed on as sent, and the DHT
	 * refuses it as a PUT (the relay refuses such a record alone). */
	memset(&m, 0, sizeof(m));
	m.type = FERRY_MSG_DHT_PUT;
	m.hops_left = 8;
	m.key = key;
	buf_init(&b);
	rec[5] = 0;
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_uint_eq(got.replication, 0);
	m.put = got;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &b), -EINVAL);
	rec[5] = 17;
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_uint_eq(got.replication, 17);
	m.put = got;
	ck_assert_int_eq(dhtmsg_req_encode(&m, &b), -EINVAL);
	ck_assert_uint_eq(buf_size(&b), 0);
	buf_done(&b);
	rec[5] = 3;
	wire_put32(rec, 74); /* no block */
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used),
	    -EBADMSG);
	wire_put32(rec, 74 + DHTMSG_BLOCK_MAX + 1);
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used),
	    -EMSGSIZE);
	wire_put32(rec, 75);
	ck_assert_int_eq(read_record(sizeof(rec), client->pk, &got, &used), 0);
	ck_assert_uint_eq(used, 79);
	ck_assert_uint_eq(got.block_len, 1);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("imd_wire");
	TCase *tc = tcase_create("wire");
	TCase *tr = tcase_create("signed_records");

	tcase_add_test(tc, test_request_line);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_records);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tr, signed_setup, signed_teardown);
	tcase_add_test(tr, test_layout);
	tcase_add_test(tr, test_relayed_put_verifies);
	tcase_add_test(tr, test_tampering_refused);
	tcase_add_test(tr, test_cuts_and_ranges);
	suite_add_tcase(s, tr);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
