/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * PING and PONG (src/core/pingpong.c): a PING is padded to exactly the
 * size of the PONG it asks for and a shorter one is refused (answering
 * never amplifies); PONGs are signed over challenge, protocol, expiry and
 * address, so altering any of them fails; expiry; decode bounds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/identity.h"
#include "core/pingpong.h"
#include "unit.h"

#define NOW_S 1700000000ull

static struct identity *alice, *bob;
static uint8_t challenge[FERRY_CHALLENGE_LEN];
static const uint8_t addr4[6] = { 127, 0, 0, 1, 0x08, 0x26 };

static void
test_setup(void)
{
	uint8_t seed[32];

	memset(seed, 0xa1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &alice), 0);
	memset(seed, 0xb0, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &bob), 0);
	for (size_t i = 0; i < sizeof(challenge); i++)
		challenge[i] = (uint8_t)(0x40 + i);
}

static void
test_teardown(void)
{
	identity_free(alice);
	identity_free(bob);
	alice = bob = NULL;
}

START_TEST(test_ping_padded_to_pong)
{
	uint8_t ping[FERRY_PONG_FIXED + FERRY_ADDR_MAX + 1];
	uint8_t pong[FERRY_PONG_FIXED + FERRY_ADDR_MAX];
	uint8_t addr[FERRY_ADDR_MAX];
	static const size_t lens[] = { 1, 6, 18, 100, FERRY_ADDR_MAX };

	for (size_t i = 0; i < sizeof(addr); i++)
		addr[i] = (uint8_t)(i + 1);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t alen = lens[k];
		int n, m;
		struct ping p;

		memset(ping, 0xee, sizeof(ping));
		n = ping_build(ping, sizeof(ping) - 1, &bob->id, challenge,
		    FERRY_PROTO_UDP, addr, alen);
		m = pong_build(pong, sizeof(pong), bob, challenge,
		    FERRY_PROTO_UDP, NOW_S + 60, addr, alen);
		ck_assert_int_eq(n, (int)pingpong_size(alen));
		ck_assert_int_eq(m, (int)pingpong_size(alen));
		ck_assert_uint_eq(pingpong_size(alen), FERRY_PONG_FIXED + alen);
		/* Layout, and zero padding after the address. */
		ck_assert_uint_eq(wire_get16(ping), (unsigned)n);
		ck_assert_uint_eq(wire_get16(ping + 2), FERRY_P2P_PING);
		ck_assert_mem_eq(ping + 4, bob->id.bytes, FERRY_PEER_ID_LEN);
		ck_assert_mem_eq(ping + 36, challenge, FERRY_CHALLENGE_LEN);
		ck_assert_uint_eq(wire_get16(ping + 52), FERRY_PROTO_UDP);
		ck_assert_uint_eq(wire_get16(ping + 54), alen);
		ck_assert_mem_eq(ping + FERRY_PING_FIXED, addr, alen);
		for (size_t i = FERRY_PING_FIXED + alen; i < (size_t)n; i++)
			ck_assert_uint_eq(ping[i], 0);
		ck_assert_uint_eq(ping[n], 0xee); /* nothing written past */
		ck_assert_int_eq(ping_decode(ping, (size_t)n, &p), 0);
		ck_assert_int_eq(peer_id_cmp(&p.target, &bob->id), 0);
		ck_assert_mem_eq(p.challenge, challenge, FERRY_CHALLENGE_LEN);
		ck_assert_uint_eq(p.protocol, FERRY_PROTO_UDP);
		ck_assert_uint_eq(p.addr_len, alen);
		ck_assert_ptr_eq(p.addr, ping + FERRY_PING_FIXED);
		ck_assert_uint_eq(p.size, (size_t)n);
	}
}
END_TEST

START_TEST(test_short_ping_refused)
{
	uint8_t ping[FERRY_PONG_FIXED + 64];
	size_t full;
	struct ping p;

	full = (size_t)ping_build(ping, sizeof(ping), &bob->id, challenge,
	    FERRY_PROTO_UDP, addr4, sizeof(addr4));
	/* Every size from the bare fixed part up to one byte short of the
	 * PONG it asks for, with a consistent size field. */
	for (size_t len = FERRY_PING_FIXED; len < full; len++) {
		wire_put16(ping, (uint16_t)len);
		ck_assert_msg(ping_decode(ping, len, &p) == -EBADMSG,
		    "PING of %zu bytes for a %zu-byte PONG accepted", len,
		    full);
	}
	/* The unpadded form in particular. */
	wire_put16(ping, FERRY_PING_FIXED + sizeof(addr4));
	ck_assert_int_eq(ping_decode(ping, FERRY_PING_FIXED + sizeof(addr4),
	                     &p),
	    -EBADMSG);
	wire_put16(ping, (uint16_t)full);
	ck_assert_int_eq(ping_decode(ping, full, &p), 0);
	/* More padding than needed is not an amplification. */
	memset(ping + full, 0, 8);
	wire_put16(ping, (uint16_t)(full + 8));
	ck_assert_int_eq(ping_decode(ping, full + 8, &p), 0);
	ck_assert_uint_eq(p.size, full + 8);
}
END_TEST

START_TEST(test_ping_bounds)
{
	uint8_t ping[FERRY_PONG_FIXED + FERRY_ADDR_MAX + 8];
	uint8_t addr[FERRY_ADDR_MAX + 1];
	size_t full;
	struct ping p;

	memset(addr, 7, sizeof(addr));
	ck_assert_int_eq(ping_build(ping, sizeof(ping), &bob->id, challenge, 1,
	                     addr, 0),
	    -EINVAL);
	ck_assert_int_eq(ping_build(ping, sizeof(ping), &bob->id, challenge, 1,
	                     addr, FERRY_ADDR_MAX + 1),
	    -EINVAL);
	ck_assert_int_eq(ping_build(ping, pingpong_size(6) - 1, &bob->id,
	                     challenge, 1, addr, 6),
	    -ENOSPC);
	full = (size_t)ping_build(ping, sizeof(ping), &bob->id, challenge, 1,
	    addr4, sizeof(addr4));
	for (size_t len = 0; len < FERRY_PING_FIXED; len++)
		ck_assert_int_eq(ping_decode(ping, len, &p), -EBADMSG);
	/* Size field disagreeing, wrong type. */
	ck_assert_int_eq(ping_decode(ping, full - 1, &p), -EBADMSG);
	wire_put16(ping + 2, FERRY_P2P_PONG);
	ck_assert_int_eq(ping_decode(ping, full, &p), -EBADMSG);
	wire_put16(ping + 2, FERRY_P2P_PING);
	/* addr_len 0, and over FERRY_ADDR_MAX in a message large enough. */
	wire_put16(ping + 54, 0);
	ck_assert_int_eq(ping_decode(ping, full, &p), -EBADMSG);
	memset(ping, 0, sizeof(ping));
	wire_put_hdr(ping, (uint16_t)sizeof(ping), FERRY_P2P_PING);
	wire_put16(ping + 54, FERRY_ADDR_MAX + 1);
	ck_assert_int_eq(ping_decode(ping, sizeof(ping), &p), -EBADMSG);
	wire_put16(ping + 54, FERRY_ADDR_MAX);
	ck_assert_int_eq(ping_decode(ping, sizeof(ping), &p), 0);
	/* addr_len whose PONG would be larger than this PING. */
	wire_put16(ping + 54, FERRY_ADDR_MAX);
	wire_put16(ping, (uint16_t)(pingpong_size(FERRY_ADDR_MAX) - 1));
	ck_assert_int_eq(ping_decode(ping, pingpong_size(FERRY_ADDR_MAX) - 1,
	                     &p),
	    -EBADMSG);
}
END_TEST

static size_t
test_pong(uint8_t *out, size_t max, uint64_t expiry)
{
	int n = pong_build(out, max, bob, challenge, FERRY_PROTO_UDP, expiry,
	    addr4, sizeof(addr4));

	ck_assert_int_eq(n, (int)pingpong_size(sizeof(addr4)));
	return (size_t)n;
}

START_TEST(test_pong_round_trip)
{
	uint8_t msg[FERRY_PONG_FIXED + 16];
	size_t n = test_pong(msg, sizeof(msg), NOW_S + 600);
	struct pong p;

	ck_assert_uint_eq(wire_get16(msg), n);
	ck_assert_uint_eq(wire_get16(msg + 2), FERRY_P2P_PONG);
	ck_assert(wire_get64(msg + 24) == NOW_S + 600);
	ck_assert_int_eq(pong_decode(msg, n, &p), 0);
	ck_assert_mem_eq(p.challenge, challenge, FERRY_CHALLENGE_LEN);
	ck_assert_uint_eq(p.protocol, FERRY_PROTO_UDP);
	ck_assert(p.expiry == NOW_S + 600);
	ck_assert_uint_eq(p.addr_len, sizeof(addr4));
	ck_assert_mem_eq(p.addr, addr4, sizeof(addr4));
	ck_assert_ptr_eq(p.raw, msg);
	ck_assert_uint_eq(p.raw_len, n);
	ck_assert_int_eq(pong_verify(&p, bob->pk, NOW_S), 0);
	/* Build limits. */
	ck_assert_int_eq(pong_build(msg, n - 1, bob, challenge, 1, NOW_S, addr4,
	                     sizeof(addr4)),
	    -ENOSPC);
	ck_assert_int_eq(pong_build(msg, sizeof(msg), bob, challenge, 1, NOW_S,
	                     addr4, 0),
	    -EINVAL);
}
END_TEST

/* Alters the PONG at off by xor and checks it fails as a whole. */
static void
test_pong_altered(const uint8_t *msg, size_t n, size_t off, uint8_t xor,
    const char *what)
{
	uint8_t bad[FERRY_PONG_FIXED + 16];
	struct pong p;

	memcpy(bad, msg, n);
	bad[off] ^= xor;
	ck_assert_int_eq(pong_decode(bad, n, &p), 0);
	ck_assert_msg(pong_verify(&p, bob->pk, NOW_S) == -EBADMSG,
	    "PONG with altered %s verified", what);
}

START_TEST(test_pong_altered_fails)
{
	uint8_t msg[FERRY_PONG_FIXED + 16];
	size_t n = test_pong(msg, sizeof(msg), NOW_S + 600);

	for (size_t i = 0; i < FERRY_CHALLENGE_LEN; i++)
		test_pong_altered(msg, n, 4 + i, 0x01, "challenge");
	test_pong_altered(msg, n, 20, 0x01, "protocol (high byte)");
	test_pong_altered(msg, n, 21, 0x03, "protocol");
	for (size_t i = 0; i < sizeof(addr4); i++)
		test_pong_altered(msg, n, 32 + i, 0x10, "address");
	for (size_t i = 0; i < 8; i++)
		test_pong_altered(msg, n, 24 + i, 0x01, "expiry");
	test_pong_altered(msg, n, n - 1, 0x01, "signature");
}
END_TEST

START_TEST(test_pong_bit_flips)
{
	uint8_t msg[FERRY_PONG_FIXED + 16], bad[sizeof(msg)];
	size_t n = test_pong(msg, sizeof(msg), NOW_S + 600);
	struct pong p;

	for (size_t i = 0; i < n; i++)
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, msg, n);
			bad[i] ^= (uint8_t)(1u << bit);
			if (pong_decode(bad, n, &p) < 0)
				continue;
			ck_assert_msg(pong_verify(&p, bob->pk, NOW_S) ==
			        -EBADMSG,
			    "flip of byte %zu bit %d verified", i, bit);
		}
}
END_TEST

START_TEST(test_pong_other_signer)
{
	uint8_t msg[FERRY_PONG_FIXED + 16];
	size_t n = test_pong(msg, sizeof(msg), NOW_S + 600);
	struct pong p;

	/* Checked against Alice's key, Bob's signature does not fit: a
	 * PONG proves nothing for a peer other than its signer. */
	ck_assert_int_eq(pong_decode(msg, n, &p), 0);
	ck_assert_int_eq(pong_verify(&p, bob->pk, NOW_S), 0);
	ck_assert_int_eq(pong_verify(&p, alice->pk, NOW_S), -EBADMSG);
}
END_TEST

START_TEST(test_pong_expired)
{
	uint8_t msg[FERRY_PONG_FIXED + 16];
	size_t n = test_pong(msg, sizeof(msg), NOW_S);
	struct pong p;

	ck_assert_int_eq(pong_decode(msg, n, &p), 0);
	ck_assert_int_eq(pong_verify(&p, bob->pk, NOW_S - 1), 0);
	ck_assert_int_eq(pong_verify(&p, bob->pk, NOW_S), -ESTALE);
	ck_assert_int_eq(pong_verify(&p, bob->pk, NOW_S + 3600), -ESTALE);
}
END_TEST

START_TEST(test_pong_bounds)
{
	uint8_t msg[FERRY_PONG_FIXED + FERRY_ADDR_MAX + 8];
	size_t n = test_pong(msg, sizeof(msg), NOW_S + 600);
	struct pong p;

	for (size_t len = 0; len < n; len++) {
		ck_assert_int_eq(pong_decode(msg, len, &p), -EBADMSG);
		if (len >= FERRY_HDR_SIZE) {
			wire_put16(msg, (uint16_t)len);
			ck_assert_int_eq(pong_decode(msg, len, &p), -EBADMSG);
			wire_put16(msg, (uint16_t)n);
		}
	}
	/* Extended, with and without a matching size field. */
	msg[n] = 0;
	ck_assert_int_eq(pong_decode(msg, n + 1, &p), -EBADMSG);
	wire_put16(msg, (uint16_t)(n + 1));
	ck_assert_int_eq(pong_decode(msg, n + 1, &p), -EBADMSG);
	wire_put16(msg, (uint16_t)n);
	/* A PING is not a PONG. */
	wire_put16(msg + 2, FERRY_P2P_PING);
	ck_assert_int_eq(pong_decode(msg, n, &p), -EBADMSG);
	wire_put16(msg + 2, FERRY_P2P_PONG);
	/* addr_len 0 and FERRY_ADDR_MAX + 1, consistently sized. */
	memset(msg, 0, sizeof(msg));
	wire_put_hdr(msg, FERRY_PONG_FIXED, FERRY_P2P_PONG);
	ck_assert_int_eq(pong_decode(msg, FERRY_PONG_FIXED, &p), -EBADMSG);
	wire_put_hdr(msg, FERRY_PONG_FIXED + FERRY_ADDR_MAX + 1,
	    FERRY_P2P_PONG);
	wire_put16(msg + 22, FERRY_ADDR_MAX + 1);
	ck_assert_int_eq(pong_decode(msg, FERRY_PONG_FIXED + FERRY_ADDR_MAX + 1,
	                     &p),
	    -EBADMSG);
	wire_put_hdr(msg, FERRY_PONG_FIXED + FERRY_ADDR_MAX, FERRY_P2P_PONG);
	wire_put16(msg + 22, FERRY_ADDR_MAX);
	ck_assert_int_eq(pong_decode(msg, FERRY_PONG_FIXED + FERRY_ADDR_MAX,
	                     &p),
	    0);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_pingpong");
	TCase *tc = tcase_create("ping");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_ping_padded_to_pong);
	tcase_add_test(tc, test_short_ping_refused);
	tcase_add_test(tc, test_ping_bounds);
	suite_add_tcase(s, tc);
	tc = tcase_create("pong");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_pong_round_trip);
	tcase_add_test(tc, test_pong_altered_fails);
	tcase_add_test(tc, test_pong_bit_flips);
	tcase_add_test(tc, test_pong_other_signer);
	tcase_add_test(tc, test_pong_expired);
	tcase_add_test(tc, test_pong_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
