/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Receipt checks of the thin client (src/remote/remote_receipt.c): a
 * storing peer's receipt for the client's PUT counts once per storer; a
 * forged signature, a receipt for another key, a storer's honest receipt
 * of another PUT and a second receipt of the same storer do not.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "remote/remote_int.h"
#include "unit.h"

static struct identity *client, *storer[3];
static uint8_t block[2000];
static struct remote_block b;
static struct dhtmsg_put put;

static void
setup(void)
{
	uint8_t seed[32];

	memset(seed, 1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &client), 0);
	for (int i = 0; i < 3; i++) {
		memset(seed, 0x20 + i, sizeof(seed));
		ck_assert_int_eq(identity_from_seed(seed, &storer[i]), 0);
	}
	randombytes_buf(block, sizeof(block));
	memset(&b, 0, sizeof(b));
	dhtkey_of_block(block, sizeof(block), &b.key);
	memset(&put, 0, sizeof(put));
	put.replication = 3;
	put.expiry = 1790000000;
	put.block = block;
	put.block_len = sizeof(block);
	dhtmsg_put_sign(client, &b.key, &put);
	dhtmsg_put_hash(&b.key, &put, b.put_hash);
}

static void
teardown(void)
{
	identity_free(client);
	for (int i = 0; i < 3; i++)
		identity_free(storer[i]);
}

/* The entry a queue would carry for storer s's receipt of put_hash. */
static void
entry(struct remote_entry *e, const struct identity *s,
    const struct dhtkey *key, const uint8_t put_hash[32])
{
	struct dhtmsg_receipt r;

	dhtmsg_receipt_sign(s, key, put_hash, put.expiry, &r);
	memset(e, 0, sizeof(*e));
	e->cursor = 1;
	memcpy(e->key, key->b, 32);
	memcpy(e->put_hash, r.put_hash, 32);
	memcpy(e->storer_pk, r.storer_pk, 32);
	e->expiry = r.expiry;
	memcpy(e->sig, r.sig, 64);
}

START_TEST(test_good_receipts_count)
{
	struct remote_entry e;

	for (int i = 0; i < 3; i++) {
		entry(&e, storer[i], &b.key, b.put_hash);
		ck_assert_int_eq(remote_receipt_check(&b, &e),
		    REMOTE_RECEIPT_NEW);
		ck_assert_uint_eq(b.n_storers, (unsigned)i + 1);
	}
	ck_assert(dhtkey_equal(&b.storers[0],
	    (const struct dhtkey *)storer[0]->id.bytes));
}
END_TEST

START_TEST(test_forged_signature)
{
	struct remote_entry e;

	entry(&e, storer[0], &b.key, b.put_hash);
	e.sig[10] ^= 1;
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	/* Another storer's key on storer 0's signature. */
	entry(&e, storer[0], &b.key, b.put_hash);
	memcpy(e.storer_pk, storer[1]->pk, 32);
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	/* A changed expiry. */
	entry(&e, storer[0], &b.key, b.put_hash);
	e.expiry++;
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	/* Signed by the client itself, as an intermediary could not. */
	entry(&e, client, &b.key, b.put_hash);
	e.sig[0] ^= 0x40;
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	ck_assert_uint_eq(b.n_storers, 0);
}
END_TEST

START_TEST(test_wrong_put_hash)
{
	struct remote_entry e;
	struct dhtmsg_put other = put;
	uint8_t other_hash[32], junk[32];

	/* The same block put again with another expiry: an honest receipt
	 * of that PUT proves nothing for this one. */
	other.expiry++;
	dhtmsg_put_sign(client, &b.key, &other);
	dhtmsg_put_hash(&b.key, &other, other_hash);
	entry(&e, storer[0], &b.key, other_hash);
	ck_assert_int_eq(remote_receipt_check(&b, &e), REMOTE_RECEIPT_OTHER);
	/* A put_hash altered after signing is a forgery. */
	entry(&e, storer[0], &b.key, b.put_hash);
	memset(junk, 0x33, sizeof(junk));
	memcpy(e.put_hash, junk, 32);
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	ck_assert_uint_eq(b.n_storers, 0);
}
END_TEST

START_TEST(test_duplicate_storer)
{
	struct remote_entry e;

	entry(&e, storer[1], &b.key, b.put_hash);
	ck_assert_int_eq(remote_receipt_check(&b, &e), REMOTE_RECEIPT_NEW);
	ck_assert_int_eq(remote_receipt_check(&b, &e), REMOTE_RECEIPT_DUP);
	/* The same storer again after another: still one count each. */
	entry(&e, storer[2], &b.key, b.put_hash);
	ck_assert_int_eq(remote_receipt_check(&b, &e), REMOTE_RECEIPT_NEW);
	entry(&e, storer[1], &b.key, b.put_hash);
	ck_assert_int_eq(remote_receipt_check(&b, &e), REMOTE_RECEIPT_DUP);
	ck_assert_uint_eq(b.n_storers, 2);
}
END_TEST

START_TEST(test_wrong_key)
{
	struct remote_entry e;
	struct dhtkey other = b.key;

	other.b[0] ^= 1;
	/* A valid receipt, but for another block. */
	entry(&e, storer[0], &other, b.put_hash);
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	/* A "done" entry is no receipt. */
	entry(&e, storer[0], &b.key, b.put_hash);
	e.done = true;
	ck_assert_int_eq(remote_receipt_check(&b, &e), -EBADMSG);
	ck_assert_uint_eq(b.n_storers, 0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_receipt");
	TCase *tc = tcase_create("receipt");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_good_receipts_count);
	tcase_add_test(tc, test_forged_signature);
	tcase_add_test(tc, test_wrong_put_hash);
	tcase_add_test(tc, test_duplicate_storer);
	tcase_add_test(tc, test_wrong_key);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
