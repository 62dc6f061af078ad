/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The record stream of POST /v1/fetch as the thin client parses it
 * (src/remote/remote_fetch.c): records come out whole whatever the
 * pieces the bytes arrive in, and every length and status out of the
 * page's ranges ends the stream as malformed.
 */
/* unit-link: ferry_remote */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "lib/buf.h"
#include "lib/wire.h"
#include "remote/remote_int.h"
#include "unit.h"

struct seen {
	unsigned n;
	unsigned status[8];
	struct dhtkey key[8];
	size_t len[8];
	uint8_t first[8];
};

static int
record(void *cls, unsigned status, const struct dhtkey *key,
    const uint8_t *block, size_t len)
{
	struct seen *s = cls;

	ck_assert_uint_lt(s->n, 8);
	s->status[s->n] = status;
	s->key[s->n] = *key;
	s->len[s->n] = len;
	s->first[s->n] = len > 0 ? block[0] : 0;
	s->n++;
	return 0;
}

static void
put_record(struct buf *b, unsigned status, uint8_t keybyte,
    const uint8_t *block, size_t len)
{
	uint8_t *p = buf_reserve(b, 37 + len);

	wire_put32(p, (uint32_t)(33 + len));
	p[4] = (uint8_t)status;
	memset(p + 5, keybyte, 32);
	if (len > 0)
		memcpy(p + 37, block, len);
	buf_commit(b, 37 + len);
}

START_TEST(test_any_pieces)
{
	static uint8_t block[70000];
	size_t piece[] = { 1, 2, 3, 7, 36, 37, 38, 4096, 100000 };
	struct buf b;

	randombytes_buf(block, sizeof(block));
	buf_init(&b);
	put_record(&b, 0, 0xa1, block, sizeof(block));
	put_record(&b, 1, 0xa2, NULL, 0);
	put_record(&b, 2, 0xa3, NULL, 0);
	put_record(&b, 3, 0xa4, NULL, 0);
	put_record(&b, 0, 0xa5, block + 5, 1);
	for (size_t k = 0; k < sizeof(piece) / sizeof(piece[0]); k++) {
		struct remote_fetch f;
		struct seen s = { 0 };
		const uint8_t *p = buf_head(&b);
		size_t left = buf_size(&b), n;

		remote_fetch_init(&f, record, &s);
		while (left > 0) {
			n = left < piece[k] ? left : piece[k];
			ck_assert_int_eq(remote_fetch_feed(&f, p, n), 0);
			p += n;
			left -= n;
		}
		ck_assert_int_eq(remote_fetch_end(&f), 0);
		ck_assert_uint_eq(s.n, 5);
		ck_assert_uint_eq(s.status[0], 0);
		ck_assert_uint_eq(s.len[0], sizeof(block));
		ck_assert_uint_eq(s.first[0], block[0]);
		ck_assert_uint_eq(s.key[0].b[31], 0xa1);
		for (unsigned i = 1; i < 4; i++) {
			ck_assert_uint_eq(s.status[i], i);
			ck_assert_uint_eq(s.len[i], 0);
		}
		ck_assert_uint_eq(s.len[4], 1);
		ck_assert_uint_eq(s.first[4], block[5]);
		remote_fetch_done(&f);
	}
	buf_done(&b);
}
END_TEST

/* Feeds a whole stream: the parser's verdict. */
static int
feed_all(const struct buf *b, unsigned *records)
{
	struct remote_fetch f;
	struct seen s = { 0 };
	int r;

	remote_fetch_init(&f, record, &s);
	r = remote_fetch_feed(&f, buf_head(b), buf_size(b));
	if (r == 0)
		r = remote_fetch_end(&f);
	remote_fetch_done(&f);
	*records = s.n;
	return r;
}

START_TEST(test_malformed)
{
	uint8_t blk[4] = { 1, 2, 3, 4 };
	unsigned n;
	struct buf b;

	buf_init(&b);
	/* A block with "not found", none with "found", unknown status. */
	put_record(&b, 1, 1, blk, 4);
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	buf_reset(&b);
	put_record(&b, 0, 1, NULL, 0);
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	buf_reset(&b);
	put_record(&b, 4, 1, NULL, 0);
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	/* len under 33 and over 33 + MAX_BLOCK, before any allocation. */
	buf_reset(&b);
	put_record(&b, 1, 1, NULL, 0);
	wire_put32(buf_head(&b), 32);
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	wire_put32(buf_head(&b), 33 + DHTMSG_BLOCK_MAX + 1);
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	/* A good record, then a stream cut inside the next. */
	buf_reset(&b);
	put_record(&b, 0, 1, blk, 4);
	put_record(&b, 0, 2, blk, 4);
	b.len -= 2;
	ck_assert_int_eq(feed_all(&b, &n), -EBADMSG);
	ck_assert_uint_eq(n, 1);
	/* Sticky: bytes after an error change nothing. */
	{
		struct remote_fetch f;
		struct seen s = { 0 };

		buf_reset(&b);
		put_record(&b, 9, 1, NULL, 0);
		remote_fetch_init(&f, record, &s);
		ck_assert_int_eq(remote_fetch_feed(&f, buf_head(&b),
		                     buf_size(&b)),
		    -EBADMSG);
		buf_reset(&b);
		put_record(&b, 1, 1, NULL, 0);
		ck_assert_int_eq(remote_fetch_feed(&f, buf_head(&b),
		                     buf_size(&b)),
		    -EBADMSG);
		ck_assert_uint_eq(s.n, 0);
		remote_fetch_done(&f);
	}
	buf_done(&b);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("remote_fetch");
	TCase *tc = tcase_create("fetch");

	tcase_add_test(tc, test_any_pieces);
	tcase_add_test(tc, test_malformed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
