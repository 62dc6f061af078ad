/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * HELO messages and ferry:// URIs (src/core/helo.c): build, decode, sign
 * and verify every field; any flipped bit fails; expiry; every malformed
 * length and address length is refused; URIs with several HELOs round
 * trip, decode regardless of case, and refuse foreign, garbage and
 * truncated content.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include <ferry/proto.h>

#include "lib/base32.h"
#include "lib/wire.h"
#include "core/helo.h"
#include "core/identity.h"
#include "unit.h"

#define NOW_S 1700000000ull

static struct identity *alice, *bob;

static void
test_setup(void)
{
	uint8_t seed[32];

	memset(seed, 0xa1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &alice), 0);
	memset(seed, 0xb0, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &bob), 0);
}

static void
test_teardown(void)
{
	identity_free(alice);
	identity_free(bob);
	alice = bob = NULL;
}

static const uint8_t addr4[6] = { 127, 0, 0, 1, 0x08, 0x26 };

/* Builds a HELO of ident into out; returns its size. */
static size_t
test_helo(const struct identity *ident, uint16_t proto, const void *addr,
    size_t alen, uint64_t expiry, uint8_t *out, size_t max)
{
	int n = helo_build(ident, proto, 1452, expiry, addr, alen, out, max);

	ck_assert_int_eq(n, (int)(FERRY_HELO_FIXED + alen));
	return (size_t)n;
}

START_TEST(test_round_trip)
{
	uint8_t msg[FERRY_HELO_FIXED + FERRY_ADDR_MAX];
	uint8_t addr[FERRY_ADDR_MAX];
	static const size_t lens[] = { 1, 6, 18, 200, FERRY_ADDR_MAX };
	struct helo h;

	for (size_t i = 0; i < sizeof(addr); i++)
		addr[i] = (uint8_t)(i * 7 + 3);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		size_t alen = lens[k];
		int n = helo_build(alice, FERRY_PROTO_TCP, 0x01020304,
		    0x1122334455667788ull, addr, alen, msg, sizeof(msg));

		ck_assert_int_eq(n, (int)(FERRY_HELO_FIXED + alen));
		/* The wire layout of <ferry/proto.h>. */
		ck_assert_uint_eq(wire_get16(msg), (unsigned)n);
		ck_assert_uint_eq(wire_get16(msg + 2), FERRY_P2P_HELO);
		ck_assert_mem_eq(msg + 4, alice->pk, FERRY_PUBKEY_LEN);
		ck_assert_uint_eq(wire_get16(msg + 36), FERRY_PROTO_TCP);
		ck_assert_uint_eq(wire_get16(msg + 38), alen);
		ck_assert_uint_eq(wire_get32(msg + 40), 0x01020304);
		ck_assert(wire_get64(msg + 44) == 0x1122334455667788ull);
		ck_assert_mem_eq(msg + 52, addr, alen);

		memset(&h, 0, sizeof(h));
		ck_assert_int_eq(helo_decode(msg, (size_t)n, &h), 0);
		ck_assert_mem_eq(h.pk, alice->pk, FERRY_PUBKEY_LEN);
		ck_assert_int_eq(peer_id_cmp(&h.id, &alice->id), 0);
		ck_assert_uint_eq(h.protocol, FERRY_PROTO_TCP);
		ck_assert_uint_eq(h.mtu, 0x01020304);
		ck_assert(h.expiry == 0x1122334455667788ull);
		ck_assert_uint_eq(h.addr_len, alen);
		ck_assert_ptr_eq(h.addr, msg + 52);
		ck_assert_mem_eq(h.addr, addr, alen);
		ck_assert_ptr_eq(h.raw, msg);
		ck_assert_uint_eq(h.raw_len, (size_t)n);
		ck_assert_int_eq(helo_verify(&h, NOW_S), 0);
	}
}
END_TEST

START_TEST(test_build_limits)
{
	uint8_t msg[FERRY_HELO_FIXED + FERRY_ADDR_MAX + 1];
	uint8_t addr[FERRY_ADDR_MAX + 1];

	memset(addr, 0x55, sizeof(addr));
	ck_assert_int_eq(helo_build(alice, 1, 1400, NOW_S, addr, 0, msg,
	                     sizeof(msg)),
	    -EINVAL);
	ck_assert_int_eq(helo_build(alice, 1, 1400, NOW_S, addr,
	                     FERRY_ADDR_MAX + 1, msg, sizeof(msg)),
	    -EINVAL);
	ck_assert_int_eq(helo_build(alice, 1, 1400, NOW_S, addr, FERRY_ADDR_MAX,
	                     msg, sizeof(msg)),
	    FERRY_HELO_FIXED + FERRY_ADDR_MAX);
	/* Room for exactly the message, and one byte less. */
	ck_assert_int_eq(helo_build(alice, 1, 1400, NOW_S, addr, 6, msg,
	                     FERRY_HELO_FIXED + 6),
	    FERRY_HELO_FIXED + 6);
	ck_assert_int_eq(helo_build(alice, 1, 1400, NOW_S, addr, 6, msg,
	                     FERRY_HELO_FIXED + 5),
	    -ENOSPC);
}
END_TEST

START_TEST(test_bit_flips_fail)
{
	uint8_t msg[FERRY_HELO_FIXED + 6], bad[sizeof(msg)];
	size_t n = test_helo(alice, FERRY_PROTO_UDP, addr4, sizeof(addr4),
	    NOW_S + 3600, msg, sizeof(msg));
	unsigned decoded = 0;
	struct helo h;

	ck_assert_uint_eq(n, sizeof(msg));
	/* Every bit of the message: the signed part and the signature. */
	for (size_t i = 0; i < n; i++) {
		for (int bit = 0; bit < 8; bit++) {
			memcpy(bad, msg, n);
			bad[i] ^= (uint8_t)(1u << bit);
			if (helo_decode(bad, n, &h) < 0)
				continue; /* size, type, addr_len */
			decoded++;
			ck_assert_msg(helo_verify(&h, NOW_S) == -EBADMSG,
			    "flip of byte %zu bit %d verified", i, bit);
		}
	}
	/* Only the 4-byte header and addr_len can fail structurally. */
	ck_assert_uint_ge(decoded, (n - 6) * 8 - 16);
}
END_TEST

START_TEST(test_expiry)
{
	uint8_t msg[FERRY_HELO_FIXED + 6];
	struct helo h;

	test_helo(alice, 1, addr4, sizeof(addr4), NOW_S, msg, sizeof(msg));
	ck_assert_int_eq(helo_decode(msg, sizeof(msg), &h), 0);
	ck_assert_int_eq(helo_verify(&h, NOW_S - 1), 0);
	ck_assert_int_eq(helo_verify(&h, NOW_S), -ESTALE);
	ck_assert_int_eq(helo_verify(&h, NOW_S + 1), -ESTALE);
	ck_assert_int_eq(helo_verify(&h, UINT64_MAX), -ESTALE);
	test_helo(alice, 1, addr4, sizeof(addr4), 0, msg, sizeof(msg));
	ck_assert_int_eq(helo_decode(msg, sizeof(msg), &h), 0);
	ck_assert_int_eq(helo_verify(&h, 0), -ESTALE);
	/* A forged expiry is a forgery, not merely stale. */
	wire_put64(msg + 44, NOW_S + 100);
	ck_assert_int_eq(helo_decode(msg, sizeof(msg), &h), 0);
	ck_assert_int_eq(helo_verify(&h, NOW_S), -EBADMSG);
}
END_TEST

START_TEST(test_decode_rejects)
{
	uint8_t msg[FERRY_HELO_FIXED + FERRY_ADDR_MAX + 8];
	uint8_t addr[FERRY_ADDR_MAX + 1];
	size_t n =
	    test_helo(alice, 1, addr4, sizeof(addr4), NOW_S, msg, sizeof(msg));
	struct helo h;

	/* Truncated: every shorter length, with and without the size field
	 * following along. */
	for (size_t len = 0; len < n; len++) {
		ck_assert_int_eq(helo_decode(msg, len, &h), -EBADMSG);
		if (len >= 2) {
			wire_put16(msg, (uint16_t)len);
			ck_assert_int_eq(helo_decode(msg, len, &h), -EBADMSG);
			wire_put16(msg, (uint16_t)n);
		}
	}
	/* Extended by trailing bytes. */
	msg[n] = 0;
	ck_assert_int_eq(helo_decode(msg, n + 1, &h), -EBADMSG);
	wire_put16(msg, (uint16_t)(n + 1));
	ck_assert_int_eq(helo_decode(msg, n + 1, &h), -EBADMSG);
	/* Size field disagreeing with the length. */
	wire_put16(msg, (uint16_t)(n - 1));
	ck_assert_int_eq(helo_decode(msg, n, &h), -EBADMSG);
	wire_put16(msg, (uint16_t)n);
	ck_assert_int_eq(helo_decode(msg, n, &h), 0);
	/* Wrong type. */
	wire_put16(msg + 2, FERRY_P2P_PONG);
	ck_assert_int_eq(helo_decode(msg, n, &h), -EBADMSG);
	wire_put16(msg + 2, FERRY_P2P_HELO);
	/* addr_len disagreeing with the size (both ways). */
	wire_put16(msg + 38, 5);
	ck_assert_int_eq(helo_decode(msg, n, &h), -EBADMSG);
	wire_put16(msg + 38, 7);
	ck_assert_int_eq(helo_decode(msg, n, &h), -EBADMSG);
	/* addr_len 0 in a message sized for it. */
	wire_put16(msg, FERRY_HELO_FIXED);
	wire_put16(msg + 38, 0);
	ck_assert_int_eq(helo_decode(msg, FERRY_HELO_FIXED, &h), -EBADMSG);
	/* addr_len FERRY_ADDR_MAX + 1, consistently sized. */
	memset(addr, 1, sizeof(addr));
	test_helo(alice, 1, addr, FERRY_ADDR_MAX, NOW_S, msg, sizeof(msg));
	ck_assert_int_eq(helo_decode(msg, FERRY_HELO_FIXED + FERRY_ADDR_MAX,
	                     &h),
	    0);
	wire_put16(msg, FERRY_HELO_FIXED + FERRY_ADDR_MAX + 1);
	wire_put16(msg + 38, FERRY_ADDR_MAX + 1);
	ck_assert_int_eq(helo_decode(msg, FERRY_HELO_FIXED + FERRY_ADDR_MAX + 1,
	                     &h),
	    -EBADMSG);
	/* addr_len 0xffff. */
	wire_put16(msg + 38, 0xffff);
	ck_assert_int_eq(helo_decode(msg, FERRY_HELO_FIXED + FERRY_ADDR_MAX + 1,
	                     &h),
	    -EBADMSG);
}
END_TEST

START_TEST(test_decode_oversize)
{
	size_t len = FERRY_MSG_SIZE_MAX + 1;
	uint8_t *big = calloc(1, len);

	ck_assert_ptr_nonnull(big);
	/* The 16-bit size cannot describe it; nothing past 64 KiB is read. */
	wire_put16(big, 0);
	wire_put16(big + 2, FERRY_P2P_HELO);
	wire_put16(big + 38, 100);
	ck_assert_int_eq(helo_decode(big, len, &(struct helo){ 0 }), -EBADMSG);
	free(big);
}
END_TEST

/* Three HELOs of alice (UDP, TCP, SMTP) back to back; returns the length. */
static size_t
test_three(uint8_t *buf, size_t max)
{
	static const char mail[] = "peer@example.org";
	static const uint8_t tcp6[18] = { 0xfe, 0x80, [15] = 1, 0x08, 0x27 };
	size_t n = 0;

	n += test_helo(alice, FERRY_PROTO_UDP, addr4, sizeof(addr4), NOW_S + 10,
	    buf + n, max - n);
	n += test_helo(alice, FERRY_PROTO_TCP, tcp6, sizeof(tcp6), NOW_S + 20,
	    buf + n, max - n);
	n += test_helo(alice, FERRY_PROTO_SMTP, mail, strlen(mail), NOW_S + 30,
	    buf + n, max - n);
	return n;
}

START_TEST(test_uri_round_trip)
{
	uint8_t helos[1024], *out = NULL;
	size_t n = test_three(helos, sizeof(helos)), olen = 0, off = 0;
	char *uri = NULL, prefix[128];
	unsigned count = 0;

	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	(void)snprintf(prefix, sizeof(prefix), "ferry://%s/", alice->id_str);
	ck_assert_int_eq(strncmp(uri, prefix, strlen(prefix)), 0);
	ck_assert_uint_eq(strlen(uri), strlen(prefix) + BASE32_LEN(n));
	ck_assert_int_eq(helo_uri_decode(uri, &out, &olen), 0);
	ck_assert_uint_eq(olen, n);
	ck_assert_mem_eq(out, helos, n);
	/* Each HELO inside decodes and verifies. */
	while (off < olen) {
		struct helo h;
		size_t size = wire_get16(out + off);

		ck_assert_int_eq(helo_decode(out + off, size, &h), 0);
		ck_assert_int_eq(helo_verify(&h, NOW_S), 0);
		ck_assert_uint_eq(h.protocol, count + 1);
		off += size;
		count++;
	}
	ck_assert_uint_eq(count, 3);
	free(out);
	free(uri);
}
END_TEST

START_TEST(test_uri_case_insensitive)
{
	uint8_t helos[1024], *out = NULL;
	size_t n = test_three(helos, sizeof(helos)), olen = 0;
	size_t scheme = strlen(HELO_URI_SCHEME);
	char *uri = NULL, *lower, *mixed;

	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	lower = strdup(uri);
	mixed = strdup(uri);
	ck_assert_ptr_nonnull(lower);
	ck_assert_ptr_nonnull(mixed);
	/* Peer id and body in lower case, then in alternating case. */
	for (size_t i = scheme; lower[i] != '\0'; i++) {
		lower[i] = (char)tolower((unsigned char)lower[i]);
		if (i % 2)
			mixed[i] = (char)tolower((unsigned char)mixed[i]);
	}
	ck_assert_int_eq(helo_uri_decode(lower, &out, &olen), 0);
	ck_assert_uint_eq(olen, n);
	ck_assert_mem_eq(out, helos, n);
	free(out);
	out = NULL;
	ck_assert_int_eq(helo_uri_decode(mixed, &out, &olen), 0);
	ck_assert_uint_eq(olen, n);
	ck_assert_mem_eq(out, helos, n);
	free(out);
	free(lower);
	free(mixed);
	free(uri);
}
END_TEST

/*
 * RFC 3986 section 3.1: "schemes are case-insensitive ... an
 * implementation should accept uppercase letters as equivalent to
 * lowercase in scheme names". An all-uppercase URI (what a QR code in
 * alphanumeric mode carries, and Crockford base32 is chosen for) must
 * decode as well.
 */
START_TEST(test_uri_scheme_case)
{
	uint8_t helos[1024], *out = NULL;
	size_t n = test_three(helos, sizeof(helos)), olen = 0;
	char *uri = NULL;
	int r;

	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	memcpy(uri, "FERRY://", 8);
	r = helo_uri_decode(uri, &out, &olen);
	free(uri);
	ck_assert_msg(r == 0, "an upper-case scheme is refused: %d", r);
	ck_assert_uint_eq(olen, n);
	ck_assert_mem_eq(out, helos, n);
	free(out);
	/* Mixed case too. */
	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	memcpy(uri, "Ferry://", 8);
	r = helo_uri_decode(uri, &out, &olen);
	free(uri);
	ck_assert_int_eq(r, 0);
	free(out);
}
END_TEST

START_TEST(test_uri_wrong_peer)
{
	uint8_t helos[1024], *out = NULL;
	size_t n = test_three(helos, sizeof(helos)), olen = 0;
	char *uri = NULL;

	/* Alice's HELOs under Bob's id. */
	ck_assert_int_eq(helo_uri_encode(&bob->id, helos, n, &uri), 0);
	ck_assert_int_eq(helo_uri_decode(uri, &out, &olen), -EINVAL);
	ck_assert_ptr_null(out);
	free(uri);
	/* One HELO of Bob among Alice's, under Alice's id. */
	n += test_helo(bob, FERRY_PROTO_UDP, addr4, sizeof(addr4), NOW_S + 5,
	    helos + n, sizeof(helos) - n);
	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	ck_assert_int_eq(helo_uri_decode(uri, &out, &olen), -EINVAL);
	ck_assert_ptr_null(out);
	free(uri);
	/* A peer id that is not the hash of any HELO's key: flip one bit. */
	{
		struct ferry_peer_id other = alice->id;

		other.bytes[0] ^= 0x80;
		ck_assert_int_eq(helo_uri_encode(&other, helos,
		                     n - (FERRY_HELO_FIXED + 6), &uri),
		    0);
		ck_assert_int_eq(helo_uri_decode(uri, &out, &olen), -EINVAL);
		free(uri);
	}
}
END_TEST

START_TEST(test_uri_signatures_not_checked)
{
	uint8_t helos[1024], *out = NULL;
	size_t n = test_three(helos, sizeof(helos)), olen = 0;
	char *uri = NULL;
	struct helo h;

	/* helo.h: "Signatures are not checked here" - the caller must. */
	helos[60] ^= 1; /* inside the first HELO's address */
	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	ck_assert_int_eq(helo_uri_decode(uri, &out, &olen), 0);
	ck_assert_int_eq(helo_decode(out, wire_get16(out), &h), 0);
	ck_assert_int_eq(helo_verify(&h, NOW_S), -EBADMSG);
	free(out);
	free(uri);
}
END_TEST

START_TEST(test_uri_encode_limits)
{
	uint8_t *big = calloc(1, 8193);
	char *uri = NULL;

	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(helo_uri_encode(&alice->id, big, 0, &uri), -EINVAL);
	ck_assert_int_eq(helo_uri_encode(&alice->id, big, 8193, &uri), -EINVAL);
	ck_assert_ptr_null(uri);
	free(big);
}
END_TEST

static void
test_uri_bad(const char *uri)
{
	uint8_t *out = NULL;
	size_t olen = 12345;

	ck_assert_msg(helo_uri_decode(uri, &out, &olen) == -EINVAL,
	    "accepted: \"%s\"", uri);
	ck_assert_ptr_null(out);
	ck_assert_uint_eq(olen, 12345);
}

START_TEST(test_uri_garbage)
{
	uint8_t helos[1024];
	size_t n = test_three(helos, sizeof(helos));
	char *uri = NULL, buf[4096];
	size_t plen = strlen(HELO_URI_SCHEME) + FERRY_PEER_ID_STRLEN + 1;

	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	test_uri_bad("");
	test_uri_bad("ferry:");
	test_uri_bad("ferry://");
	test_uri_bad("ferry:///");
	test_uri_bad("http://example.org/");
	test_uri_bad(" ferry://");
	/* The id alone, with and without the slash. */
	(void)snprintf(buf, sizeof(buf), "ferry://%s", alice->id_str);
	test_uri_bad(buf);
	(void)snprintf(buf, sizeof(buf), "ferry://%s/", alice->id_str);
	test_uri_bad(buf);
	/* No slash after the id. */
	(void)snprintf(buf, sizeof(buf), "%s", uri);
	buf[plen - 1] = 'X';
	test_uri_bad(buf);
	/* A character outside the alphabet in the id and in the body. */
	(void)snprintf(buf, sizeof(buf), "%s", uri);
	buf[strlen(HELO_URI_SCHEME) + 3] = 'U';
	test_uri_bad(buf);
	(void)snprintf(buf, sizeof(buf), "%s", uri);
	buf[plen + 10] = '*';
	test_uri_bad(buf);
	/* Trailing characters: one, a newline, a space. */
	(void)snprintf(buf, sizeof(buf), "%s0", uri);
	test_uri_bad(buf);
	(void)snprintf(buf, sizeof(buf), "%s\n", uri);
	test_uri_bad(buf);
	(void)snprintf(buf, sizeof(buf), "%s ", uri);
	test_uri_bad(buf);
	/* A body that is base32 but not HELOs. */
	(void)snprintf(buf, sizeof(buf), "ferry://%s/%s", alice->id_str,
	    "0000000000000000");
	test_uri_bad(buf);
	free(uri);
	/* Valid HELOs followed by bytes that are not one. */
	memset(helos + n, 0, 3);
	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n + 3, &uri), 0);
	test_uri_bad(uri);
	free(uri);
	/* A HELO whose size field overruns the body. */
	wire_put16(helos, (uint16_t)(n + 40));
	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	test_uri_bad(uri);
	free(uri);
}
END_TEST

START_TEST(test_uri_truncated)
{
	uint8_t helos[1024];
	size_t n = test_three(helos, sizeof(helos)), ulen;
	size_t b1 = wire_get16(helos), b2 = b1 + wire_get16(helos + b1);
	char *uri = NULL, *cut;
	unsigned ok = 0;

	ck_assert_int_eq(helo_uri_encode(&alice->id, helos, n, &uri), 0);
	ulen = strlen(uri);
	cut = malloc(ulen + 1);
	ck_assert_ptr_nonnull(cut);
	for (size_t len = 0; len < ulen; len++) {
		uint8_t *out = NULL;
		size_t olen = 0;

		memcpy(cut, uri, len);
		cut[len] = '\0';
		if (helo_uri_decode(cut, &out, &olen) < 0) {
			ck_assert_ptr_null(out);
			continue;
		}
		/* The only acceptable prefixes end at a HELO boundary and
		 * carry exactly the HELOs before it. */
		ck_assert_msg(olen == b1 || olen == b2,
		    "prefix of %zu chars decoded to %zu bytes", len, olen);
		ck_assert_mem_eq(out, helos, olen);
		free(out);
		ok++;
	}
	ck_assert_uint_le(ok, 2);
	free(cut);
	free(uri);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_helo");
	TCase *tc = tcase_create("message");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_build_limits);
	tcase_add_test(tc, test_bit_flips_fail);
	tcase_add_test(tc, test_expiry);
	tcase_add_test(tc, test_decode_rejects);
	tcase_add_test(tc, test_decode_oversize);
	suite_add_tcase(s, tc);
	tc = tcase_create("uri");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_uri_round_trip);
	tcase_add_test(tc, test_uri_case_insensitive);
	tcase_add_test(tc, test_uri_scheme_case);
	tcase_add_test(tc, test_uri_wrong_peer);
	tcase_add_test(tc, test_uri_signatures_not_checked);
	tcase_add_test(tc, test_uri_encode_limits);
	tcase_add_test(tc, test_uri_garbage);
	tcase_add_test(tc, test_uri_truncated);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
