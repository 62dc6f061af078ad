/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The KX message and key schedule (src/core/kx.c): build, decode and
 * verify; any altered byte fails; both sides derive mirrored keys and key
 * ids; ephemerals, identities and flags are all bound into the keys; the
 * AES flag needs both sides; low-order points are refused.
 */
#include <errno.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/identity.h"
#include "core/kx.h"
#include "unit.h"

static struct identity *alice, *bob;
static uint8_t a_sk[KX_EPH_LEN], a_eph[KX_EPH_LEN];
static uint8_t b_sk[KX_EPH_LEN], b_eph[KX_EPH_LEN];

static void
test_setup(void)
{
	uint8_t seed[32];

	memset(seed, 0xa1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &alice), 0);
	memset(seed, 0xb0, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &bob), 0);
	kx_eph_new(a_sk, a_eph);
	kx_eph_new(b_sk, b_eph);
}

static void
test_teardown(void)
{
	identity_free(alice);
	identity_free(bob);
	alice = bob = NULL;
}

static void
test_msg(struct kx_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->receiver = bob->id;
	memcpy(m->eph, a_eph, KX_EPH_LEN);
	m->timestamp_us = 0x0102030405060708ull;
	m->sender_index = 0xdeadbeef;
	m->flags = FERRY_KX_F_AESGCM;
	kx_echo_of(b_eph, m->echo);
}

START_TEST(test_round_trip)
{
	uint8_t msg[FERRY_KX_SIZE];
	struct kx_msg m, d;

	test_msg(&m);
	kx_build(msg, alice, &m);
	ck_assert_uint_eq(wire_get16(msg), FERRY_KX_SIZE);
	ck_assert_uint_eq(wire_get16(msg + 2), FERRY_P2P_KX);
	ck_assert_mem_eq(msg + 4, alice->pk, FERRY_PUBKEY_LEN);
	ck_assert_mem_eq(msg + 36, bob->id.bytes, FERRY_PEER_ID_LEN);
	ck_assert_mem_eq(msg + 68, a_eph, KX_EPH_LEN);
	ck_assert(wire_get64(msg + 100) == 0x0102030405060708ull);
	ck_assert_uint_eq(wire_get32(msg + 108), 0xdeadbeef);
	ck_assert_uint_eq(wire_get32(msg + 112), FERRY_KX_F_AESGCM);
	ck_assert_mem_eq(msg + 116, m.echo, FERRY_KX_ECHO_LEN);
	memset(&d, 0x77, sizeof(d));
	ck_assert_int_eq(kx_decode(msg, sizeof(msg), &d), 0);
	ck_assert_mem_eq(d.pk, alice->pk, FERRY_PUBKEY_LEN);
	ck_assert_int_eq(peer_id_cmp(&d.sender, &alice->id), 0);
	ck_assert_int_eq(peer_id_cmp(&d.receiver, &bob->id), 0);
	ck_assert_mem_eq(d.eph, a_eph, KX_EPH_LEN);
	ck_assert(d.timestamp_us == m.timestamp_us);
	ck_assert_uint_eq(d.sender_index, 0xdeadbeef);
	ck_assert_uint_eq(d.flags, FERRY_KX_F_AESGCM);
	ck_assert_mem_eq(d.echo, m.echo, FERRY_KX_ECHO_LEN);
	ck_assert_int_eq(kx_verify(msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(test_tamper_any_byte)
{
	uint8_t msg[FERRY_KX_SIZE], bad[FERRY_KX_SIZE];
	static const uint8_t xors[] = { 0x01, 0x80, 0xff };
	struct kx_msg m, d;

	test_msg(&m);
	kx_build(msg, alice, &m);
	for (size_t i = 0; i < FERRY_KX_SIZE; i++)
		for (size_t k = 0; k < sizeof(xors); k++) {
			memcpy(bad, msg, sizeof(bad));
			bad[i] ^= xors[k];
			ck_assert_msg(kx_decode(bad, sizeof(bad), &d) < 0 ||
			        kx_verify(bad, sizeof(bad)) < 0,
			    "byte %zu ^ 0x%02x accepted", i, xors[k]);
		}
}
END_TEST

START_TEST(test_decode_rejects)
{
	uint8_t msg[FERRY_KX_SIZE + 4];
	struct kx_msg m, d;

	test_msg(&m);
	kx_build(msg, alice, &m);
	for (size_t len = 0; len < FERRY_KX_SIZE; len++) {
		ck_assert_int_eq(kx_decode(msg, len, &d), -EBADMSG);
		ck_assert_int_lt(kx_verify(msg, len), 0);
	}
	ck_assert_int_eq(kx_decode(msg, FERRY_KX_SIZE + 1, &d), -EBADMSG);
	ck_assert_int_lt(kx_verify(msg, FERRY_KX_SIZE + 1), 0);
	wire_put16(msg, FERRY_KX_SIZE + 1);
	ck_assert_int_eq(kx_decode(msg, FERRY_KX_SIZE + 1, &d), -EBADMSG);
	wire_put16(msg, FERRY_KX_SIZE);
	wire_put16(msg + 2, FERRY_P2P_ENC);
	ck_assert_int_eq(kx_decode(msg, FERRY_KX_SIZE, &d), -EBADMSG);
}
END_TEST

START_TEST(test_other_signer)
{
	uint8_t msg[FERRY_KX_SIZE];
	struct kx_msg m;

	test_msg(&m);
	kx_build(msg, alice, &m);
	memcpy(msg + 4, bob->pk, FERRY_PUBKEY_LEN);
	ck_assert_int_lt(kx_verify(msg, sizeof(msg)), 0);
}
END_TEST

START_TEST(test_derive_mirrored)
{
	struct kx_keys ka, kb;

	ck_assert_int_eq(kx_derive(a_sk, a_eph, FERRY_KX_F_AESGCM, &alice->id,
	                     b_eph, FERRY_KX_F_AESGCM, &bob->id, &ka),
	    0);
	ck_assert_int_eq(kx_derive(b_sk, b_eph, FERRY_KX_F_AESGCM, &bob->id,
	                     a_eph, FERRY_KX_F_AESGCM, &alice->id, &kb),
	    0);
	ck_assert_mem_eq(ka.tx, kb.rx, KX_KEY_LEN);
	ck_assert_mem_eq(ka.rx, kb.tx, KX_KEY_LEN);
	ck_assert_uint_eq(ka.tx_id, kb.rx_id);
	ck_assert_uint_eq(ka.rx_id, kb.tx_id);
	/* The two directions differ. */
	ck_assert_mem_ne(ka.tx, ka.rx, KX_KEY_LEN);
	ck_assert_uint_ne(ka.tx_id, ka.rx_id);
	ck_assert(ka.aesgcm && kb.aesgcm);
	/* Deterministic. */
	{
		struct kx_keys again;

		ck_assert_int_eq(kx_derive(a_sk, a_eph, FERRY_KX_F_AESGCM,
		                     &alice->id, b_eph, FERRY_KX_F_AESGCM,
		                     &bob->id, &again),
		    0);
		ck_assert_mem_eq(again.tx, ka.tx, KX_KEY_LEN);
		ck_assert_mem_eq(again.rx, ka.rx, KX_KEY_LEN);
	}
}
END_TEST

START_TEST(test_derive_fresh_ephemerals)
{
	uint8_t c_sk[KX_EPH_LEN], c_eph[KX_EPH_LEN];
	struct kx_keys k1, k2, k3;

	kx_eph_new(c_sk, c_eph);
	ck_assert_mem_ne(c_eph, a_eph, KX_EPH_LEN);
	ck_assert_int_eq(kx_derive(a_sk, a_eph, 0, &alice->id, b_eph, 0,
	                     &bob->id, &k1),
	    0);
	/* A new ephemeral on either side gives keys unlike the old ones. */
	ck_assert_int_eq(kx_derive(c_sk, c_eph, 0, &alice->id, b_eph, 0,
	                     &bob->id, &k2),
	    0);
	ck_assert_int_eq(kx_derive(a_sk, a_eph, 0, &alice->id, c_eph, 0,
	                     &bob->id, &k3),
	    0);
	ck_assert_mem_ne(k1.tx, k2.tx, KX_KEY_LEN);
	ck_assert_mem_ne(k1.rx, k2.rx, KX_KEY_LEN);
	ck_assert_mem_ne(k1.tx, k3.tx, KX_KEY_LEN);
	ck_assert_mem_ne(k2.tx, k3.tx, KX_KEY_LEN);
	ck_assert_uint_ne(k1.tx_id, k2.tx_id);
}
END_TEST

START_TEST(test_derive_binds_identities)
{
	struct kx_keys k1, k2;
	struct ferry_peer_id other = bob->id;

	other.bytes[31] ^= 1;
	ck_assert_int_eq(kx_derive(a_sk, a_eph, 0, &alice->id, b_eph, 0,
	                     &bob->id, &k1),
	    0);
	ck_assert_int_eq(kx_derive(a_sk, a_eph, 0, &alice->id, b_eph, 0, &other,
	                     &k2),
	    0);
	ck_assert_mem_ne(k1.tx, k2.tx, KX_KEY_LEN);
	ck_assert_mem_ne(k1.rx, k2.rx, KX_KEY_LEN);
}
END_TEST

START_TEST(test_aes_flag_needs_both)
{
	static const uint32_t f[4][2] = { { 0, 0 }, { FERRY_KX_F_AESGCM, 0 },
		{ 0, FERRY_KX_F_AESGCM },
		{ FERRY_KX_F_AESGCM, FERRY_KX_F_AESGCM } };
	struct kx_keys ka, kb, base;

	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(kx_derive(a_sk, a_eph, f[i][0], &alice->id,
		                     b_eph, f[i][1], &bob->id, &ka),
		    0);
		ck_assert_int_eq(kx_derive(b_sk, b_eph, f[i][1], &bob->id,
		                     a_eph, f[i][0], &alice->id, &kb),
		    0);
		ck_assert_int_eq(ka.aesgcm, i == 3);
		ck_assert_int_eq(kb.aesgcm, i == 3);
		ck_assert_mem_eq(ka.tx, kb.rx, KX_KEY_LEN);
		if (i == 0)
			base = ka;
		else /* flags are in the transcript: no silent downgrade */
			ck_assert_mem_ne(ka.tx, base.tx, KX_KEY_LEN);
	}
	/* Sides that disagree about the flags do not agree on keys. */
	ck_assert_int_eq(kx_derive(a_sk, a_eph, FERRY_KX_F_AESGCM, &alice->id,
	                     b_eph, FERRY_KX_F_AESGCM, &bob->id, &ka),
	    0);
	ck_assert_int_eq(kx_derive(b_sk, b_eph, FERRY_KX_F_AESGCM, &bob->id,
	                     a_eph, 0, &alice->id, &kb),
	    0);
	ck_assert_mem_ne(ka.tx, kb.rx, KX_KEY_LEN);
}
END_TEST

static void
test_hex32(const char *hex, uint8_t out[32])
{
	ck_assert_int_eq(sodium_hex2bin(out, 32, hex, 64, NULL, NULL, NULL), 0);
}

START_TEST(test_low_order_points)
{
	/* Points of small order on Curve25519 (and non-canonical forms). */
	static const char *pts[] = {
		"00000000000000000000000000000000"
		"00000000000000000000000000000000",
		"01000000000000000000000000000000"
		"00000000000000000000000000000000",
		"e0eb7a7c3b41b8ae1656e3faf19fc46a"
		"da098deb9c32b1fd866205165f49b800",
		"5f9c95bca3508c24b1d0b1559c83ef5b"
		"04445cc4581c8e86d8224eddd09f1157",
		"ecffffffffffffffffffffffffffffff"
		"ffffffffffffffffffffffffffffff7f",
		"edffffffffffffffffffffffffffffff"
		"ffffffffffffffffffffffffffffff7f",
	};
	uint8_t bad[32];
	struct kx_keys k;

	for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++) {
		test_hex32(pts[i], bad);
		memset(&k, 0x5a, sizeof(k));
		ck_assert_msg(kx_derive(a_sk, a_eph, 0, &alice->id, bad, 0,
		                  &bob->id, &k) == -EBADMSG,
		    "low-order point %zu accepted", i);
	}
}
END_TEST

START_TEST(test_echo)
{
	uint8_t e1[FERRY_KX_ECHO_LEN], e2[FERRY_KX_ECHO_LEN];
	static const uint8_t zero[FERRY_KX_ECHO_LEN];

	kx_echo_of(a_eph, e1);
	kx_echo_of(a_eph, e2);
	ck_assert_mem_eq(e1, e2, sizeof(e1));
	ck_assert_mem_ne(e1, zero, sizeof(e1));
	kx_echo_of(b_eph, e2);
	ck_assert_mem_ne(e1, e2, sizeof(e1));
	/* Ephemeral pairs are fresh and consistent. */
	{
		uint8_t pk[KX_EPH_LEN];

		ck_assert_int_eq(crypto_scalarmult_base(pk, a_sk), 0);
		ck_assert_mem_eq(pk, a_eph, KX_EPH_LEN);
		ck_assert_mem_ne(a_eph, b_eph, KX_EPH_LEN);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_kx");
	TCase *tc = tcase_create("message");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_tamper_any_byte);
	tcase_add_test(tc, test_decode_rejects);
	tcase_add_test(tc, test_other_signer);
	suite_add_tcase(s, tc);
	tc = tcase_create("key schedule");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_derive_mirrored);
	tcase_add_test(tc, test_derive_fresh_ephemerals);
	tcase_add_test(tc, test_derive_binds_identities);
	tcase_add_test(tc, test_aes_flag_needs_both);
	tcase_add_test(tc, test_low_order_points);
	tcase_add_test(tc, test_echo);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
