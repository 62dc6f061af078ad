/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation's formats (src/intermediary/fedmsg.c) at their edges:
 * an announcement keeps whole HELOs only, as many as fit; each message
 * refuses what ferry-protocol(7) INTERMEDIARY MESSAGES says a receiver
 * drops; 64 receipts, the most of one ENTRIES, cross whole.
 */
#include <errno.h>
#include <string.h>

#include <check.h>

#include "intermediary/fedmsg.h"
#include "lib/wire.h"
#include "unit.h"

/* n fake HELOs of len bytes each, back to back, into p. */
static size_t
helos(uint8_t *p, size_t n, size_t len)
{
	for (size_t i = 0; i < n; i++) {
		memset(p + i * len, (int)i + 1, len);
		wire_put16(p + i * len, (uint16_t)len);
	}
	return n * len;
}

START_TEST(test_announce)
{
	uint8_t h[1000], v[300];
	struct fedmsg_announce a;
	size_t hl = helos(h, 5, 100);
	int r;

	/* 2 + 17 bytes of URL, then room for two HELOs of 100, not 3. */
	r = fedmsg_announce_encode("https://a.example", h, hl, v, 250);
	ck_assert_int_eq(r, 2 + 17 + 200);
	ck_assert_int_eq(fedmsg_announce_decode(v, (size_t)r, &a), 0);
	ck_assert_str_eq(a.url, "https://a.example");
	ck_assert_uint_eq(a.helos_len, 200);
	ck_assert_mem_eq(a.helos, h, 200);
	/* A HELO cut short, a URL of no bytes or past the end, a quote. */
	ck_assert_int_eq(fedmsg_announce_decode(v, (size_t)r - 1, &a),
	    -EBADMSG);
	v[1] = 0;
	ck_assert_int_eq(fedmsg_announce_decode(v, (size_t)r, &a), -EBADMSG);
	v[1] = 250;
	ck_assert_int_eq(fedmsg_announce_decode(v, (size_t)r, &a), -EBADMSG);
	ck_assert_int_eq(fedmsg_announce_encode("", NULL, 0, v, 250), -EINVAL);
	ck_assert_int_eq(fedmsg_announce_encode("https://x", NULL, 0, v, 5),
	    -EMSGSIZE);
	r = fedmsg_announce_encode("https://\"x", NULL, 0, v, 250);
	ck_assert_int_eq(fedmsg_announce_decode(v, (size_t)r, &a), -EBADMSG);
}
END_TEST

START_TEST(test_here)
{
	uint8_t m[FEDMSG_HERE_FIXED + FEDMSG_TARGET_MAX + 1];
	struct fedmsg_here h, back;
	size_t len;

	memset(&h, 0, sizeof(h));
	memset(h.auth.client, 7, sizeof(h.auth.client));
	h.auth.time = 1767225600;
	(void)strcpy(h.target, "/v1/receipts?wait=30");
	len = fedmsg_here_encode(&h, m);
	ck_assert_int_eq(fedmsg_here_decode(m, len, &back), 0);
	ck_assert_str_eq(back.target, h.target);
	ck_assert_uint_eq(back.auth.time, h.auth.time);
	ck_assert_int_eq(fedmsg_here_decode(m, len - 1, &back), -EBADMSG);
	m[1] = 1; /* reserved */
	ck_assert_int_eq(fedmsg_here_decode(m, len, &back), -EBADMSG);
	/* Only a take of receipts is a proof of where the client is. */
	(void)strcpy(h.target, "/v1/blocks");
	len = fedmsg_here_encode(&h, m);
	ck_assert_int_eq(fedmsg_here_decode(m, len, &back), -EBADMSG);
	(void)strcpy(h.target, "/v1/receiptsX");
	len = fedmsg_here_encode(&h, m);
	ck_assert_int_eq(fedmsg_here_decode(m, len, &back), -EBADMSG);
	(void)strcpy(h.target, "/v1/receipts");
	len = fedmsg_here_encode(&h, m);
	ck_assert_int_eq(fedmsg_here_decode(m, len, &back), 0);
}
END_TEST

START_TEST(test_entries)
{
	uint8_t m[FEDMSG_ENTRIES_SIZE_MAX], client[IMDWIRE_KEY_LEN];
	uint8_t c[IMDWIRE_KEY_LEN] = { 9 };
	struct rqueue_entry e[FEDMSG_ENTRIES_MAX], back[FEDMSG_ENTRIES_MAX];
	size_t len, n;

	memset(e, 0, sizeof(e));
	for (size_t i = 0; i < FEDMSG_ENTRIES_MAX; i++) {
		e[i].cursor = 10 + 2 * i;
		e[i].type = RQUEUE_RECEIPT;
		memset(e[i].key.b, (int)i, sizeof(e[i].key.b));
		memset(e[i].put_hash, (int)i + 1, sizeof(e[i].put_hash));
		memcpy(e[i].receipt.put_hash, e[i].put_hash,
		    sizeof(e[i].put_hash));
		memset(e[i].receipt.storer_pk, 3,
		    sizeof(e[i].receipt.storer_pk));
		memset(e[i].receipt.sig, 4, sizeof(e[i].receipt.sig));
		e[i].receipt.expiry = 1800000000 + i;
	}
	len = fedmsg_entries_encode(c, e, FEDMSG_ENTRIES_MAX, m);
	ck_assert_uint_eq(len, FEDMSG_ENTRIES_SIZE_MAX);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n), 0);
	ck_assert_uint_eq(n, FEDMSG_ENTRIES_MAX);
	ck_assert_mem_eq(client, c, sizeof(c));
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(back[i].cursor, e[i].cursor);
		ck_assert_int_eq(back[i].type, RQUEUE_RECEIPT);
		ck_assert_mem_eq(&back[i].receipt, &e[i].receipt,
		    sizeof(e[i].receipt));
	}
	/* Cursors must grow, and be neither 0 nor over INT64_MAX. */
	wire_put64(m + FEDMSG_ENTRIES_HEAD + FEDMSG_ENTRY_LEN, 10);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
	len = fedmsg_entries_encode(c, e, 1, m);
	wire_put64(m + FEDMSG_ENTRIES_HEAD, 0);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
	wire_put64(m + FEDMSG_ENTRIES_HEAD, (uint64_t)INT64_MAX + 1);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
	/* n of none, past the bound, or not what the length gives. */
	len = fedmsg_entries_encode(c, e, 1, m);
	ck_assert_int_eq(fedmsg_entries_decode(m, len - 1, client, back, &n),
	    -EBADMSG);
	wire_put16(m + 2, 0);
	ck_assert_int_eq(fedmsg_entries_decode(m, FEDMSG_ENTRIES_HEAD, client,
	                     back, &n),
	    -EBADMSG);
	wire_put16(m + 2, FEDMSG_ENTRIES_MAX + 1);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
}
END_TEST

START_TEST(test_ack)
{
	struct fedmsg_ack a = { .status = FEDMSG_ACK_FULL, .cursor = 5 }, b;
	uint8_t m[FEDMSG_ACK_LEN];

	fedmsg_ack_encode(&a, m);
	ck_assert_int_eq(fedmsg_ack_decode(m, sizeof(m), &b), 0);
	ck_assert_int_eq(b.status, FEDMSG_ACK_FULL);
	ck_assert_int_eq(fedmsg_ack_decode(m, sizeof(m) - 1, &b), -EBADMSG);
	m[1] = FEDMSG_ACK_STATUS_MAX + 1;
	ck_assert_int_eq(fedmsg_ack_decode(m, sizeof(m), &b), -EBADMSG);
	fedmsg_ack_encode(&a, m);
	m[36] = 0x80; /* a cursor over INT64_MAX */
	ck_assert_int_eq(fedmsg_ack_decode(m, sizeof(m), &b), -EBADMSG);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("fedmsg");
	TCase *tc = tcase_create("fedmsg");

	tcase_add_test(tc, test_announce);
	tcase_add_test(tc, test_here);
	tcase_add_test(tc, test_entries);
	tcase_add_test(tc, test_ack);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
