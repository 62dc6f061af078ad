/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation's formats (src/intermediary/fedmsg.c) at their edges:
 * an announcement keeps whole HELOs only, as many as fit; each message
 * refuses what ferry-protocol(7) INTERMEDIARY MESSAGES says a receiver
 * drops; a relay's end keeps its status word across the wire.
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
	static const int ends[] = { 0, -EIO, -ENOSPC, -EDQUOT, -EHOSTUNREACH,
		-ETIMEDOUT, -EAGAIN, -EBADMSG };
	uint8_t m[FEDMSG_ENTRIES_SIZE_MAX], client[AUTH_KEY_LEN];
	uint8_t c[AUTH_KEY_LEN] = { 9 };
	struct rqueue_entry e[FEDMSG_ENTRIES_MAX], back[FEDMSG_ENTRIES_MAX];
	size_t len, n;

	memset(e, 0, sizeof(e));
	for (size_t i = 0; i < 8; i++) {
		e[i].cursor = 10 + i;
		e[i].type = RQUEUE_DONE;
		e[i].status = ends[i];
		e[i].receipts = (unsigned)i;
	}
	len = fedmsg_entries_encode(c, e, 8, m);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n), 0);
	ck_assert_uint_eq(n, 8);
	for (size_t i = 0; i < 8; i++)
		ck_assert_int_eq(back[i].status, ends[i]);
	/* Any other end is "refused". */
	ck_assert_uint_eq(fedmsg_status_code(-EPROTO), FEDMSG_STATUS_MAX);
	/* Cursors must grow; a DONE's receipt fields must be zero. */
	wire_put64(m + FEDMSG_ENTRIES_HEAD + FEDMSG_ENTRY_LEN, 10);
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
	len = fedmsg_entries_encode(c, e, 8, m);
	m[FEDMSG_ENTRIES_HEAD + 100] = 1;
	ck_assert_int_eq(fedmsg_entries_decode(m, len, client, back, &n),
	    -EBADMSG);
	/* n of none, or past the bound. */
	len = fedmsg_entries_encode(c, e, 1, m);
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
