/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The signed PUT records of POST /v1/blocks (src/remote/remote_putrec.c):
 * a record the client builds with the client key, relayed as a DHT PUT
 * with origin_pk the client's, passes dhtmsg's decoder and verification
 * exactly as a storing peer runs them, and names the put_hash the
 * client awaits; cuts and values out of range are told apart.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "lib/buf.h"
#include "lib/wire.h"
#include "remote/remote_int.h"
#include "unit.h"

static struct identity *client;
static uint8_t block[5000];
static struct dhtkey key;
static uint8_t rec[REMOTE_PUTREC_HEAD + sizeof(block)];
static struct dhtmsg_put put;

static void
setup(void)
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
	remote_putrec_head(&put, rec);
	memcpy(rec + REMOTE_PUTREC_HEAD, block, sizeof(block));
}

static void
teardown(void)
{
	identity_free(client);
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

	memcpy(got.origin_pk, client->pk, 32);
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    0);
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
	struct dhtmsg_put got;
	size_t used;

	memset(got.origin_pk, 0x11, 32);
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
	memcpy(got.origin_pk, client->pk, 32);
	rec[5] = 4;
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
	rec[5] = 3;
	rec[REMOTE_PUTREC_HEAD + 10] ^= 1;
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    0);
	ck_assert_int_eq(dhtmsg_put_verify(&key, &got), -EBADMSG);
}
END_TEST

START_TEST(test_cuts_and_ranges)
{
	struct dhtmsg_put got;
	size_t used;

	for (size_t n = 0; n < sizeof(rec); n += n < 100 ? 1 : 997)
		ck_assert_int_eq(remote_putrec_decode(rec, n, &got, &used),
		    -EAGAIN);
	rec[4] = 2;
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    -EBADMSG);
	rec[4] = 1;
	rec[5] = 0;
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    -EBADMSG);
	rec[5] = 17;
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    -EBADMSG);
	rec[5] = 3;
	wire_put32(rec, 74); /* no block */
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    -EBADMSG);
	wire_put32(rec, 74 + DHTMSG_BLOCK_MAX + 1);
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    -EBADMSG);
	wire_put32(rec, 75);
	ck_assert_int_eq(remote_putrec_decode(rec, sizeof(rec), &got, &used),
	    0);
	ck_assert_uint_eq(used, 79);
	ck_assert_uint_eq(got.block_len, 1);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_putrec");
	TCase *tc = tcase_create("putrec");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_relayed_put_verifies);
	tcase_add_test(tc, test_tampering_refused);
	tcase_add_test(tc, test_cuts_and_ranges);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
