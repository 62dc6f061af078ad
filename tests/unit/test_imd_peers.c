/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediaries one knows (src/intermediary/imd_peers.c), the seam
 * the federation's signed DHT announcements feed: what is learnt is
 * listed until its expiry, learnt again replaces, this intermediary
 * itself is never listed, a URL that would break the JSON answer is
 * refused, and the list is bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "intermediary/imd_int.h"
#include "lib/time.h"
#include "unit.h"

static struct imd_peer
peer(uint8_t tag, const char *url, uint64_t expires)
{
	struct imd_peer p;

	memset(&p, 0, sizeof(p));
	memset(p.id, tag, sizeof(p.id));
	(void)snprintf(p.url, sizeof(p.url), "%s", url);
	p.expires = expires;
	return p;
}

START_TEST(test_learn_and_expire)
{
	struct imd *imd = calloc(1, sizeof(*imd));
	struct imd_peer got[4], p;
	uint64_t now = time_real_s();

	ck_assert_ptr_nonnull(imd);
	memset(imd->id, 0xee, sizeof(imd->id));
	p = peer(1, "https://a.example:8443", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	p = peer(2, "https://b.example", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	p = peer(1, "https://a2.example", now + 200);
	ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	ck_assert_uint_eq(imd_peers_known(imd, got, 4), 2);
	ck_assert_str_eq(got[0].url, "https://a2.example");
	ck_assert_uint_eq(got[0].expires, now + 200);
	/* Itself, and what has expired, are not listed. */
	p = peer(0xee, "https://self.example", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	p = peer(3, "https://old.example", now - 1);
	ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	ck_assert_uint_eq(imd_peers_known(imd, got, 4), 2);
	imd->peers[1].expires = now - 1; /* b's time passes */
	ck_assert_uint_eq(imd_peers_known(imd, got, 4), 1);
	/* URLs that are not, or would break the JSON. */
	p = peer(4, "ftp://x", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), -EINVAL);
	p = peer(4, "https://x/\"", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), -EINVAL);
	p = peer(4, "https://x/ y", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), -EINVAL);
	free(imd);
}
END_TEST

START_TEST(test_bounded)
{
	struct imd *imd = calloc(1, sizeof(*imd));
	uint64_t now = time_real_s();
	struct imd_peer p;

	ck_assert_ptr_nonnull(imd);
	for (unsigned i = 0; i < IMD_PEERS_MAX; i++) {
		p = peer(1, "https://x.example", now + 100);
		p.id[0] = (uint8_t)i;
		p.id[1] = (uint8_t)(i >> 8);
		ck_assert_int_eq(imd_peer_learn(imd, &p), 0);
	}
	p = peer(2, "https://y.example", now + 100);
	ck_assert_int_eq(imd_peer_learn(imd, &p), -ENOBUFS);
	free(imd);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("imd_peers");
	TCase *tc = tcase_create("peers");

	tcase_add_test(tc, test_learn_and_expire);
	tcase_add_test(tc, test_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
