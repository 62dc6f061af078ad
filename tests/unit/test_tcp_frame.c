/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests of the TCP transport's stream parser, plugins/tcp/tcp_frame.c.
 * The parser is built into the plugin, which unit tests do not link, so
 * its one source file is compiled in here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "unit.h"

#include "../../plugins/tcp/tcp_frame.c"

#define MTU 1000

/* A stream: welcome from peer id 0x11.., then units of 1, 5 and MTU bytes
 * filled with their length's low byte. */
static size_t
make_stream(uint8_t *out, bool welcome)
{
	static const size_t lens[] = { 1, 5, MTU };
	struct ferry_peer_id id;
	size_t n = 0;

	memset(&id, 0x11, sizeof(id));
	if (welcome) {
		tcp_frame_put_welcome(out, &id);
		n = TCP_FRAME_WELCOME_LEN;
	}
	for (size_t i = 0; i < 3; i++) {
		tcp_frame_put_header(out + n, (uint32_t)lens[i]);
		memset(out + n + TCP_FRAME_HDR_LEN, (int)(lens[i] & 0xff),
		    lens[i]);
		n += TCP_FRAME_HDR_LEN + lens[i];
	}
	return n;
}

/* What the parser saw, as a caller that buffers would. */
struct seen {
	unsigned welcomes, units, errors;
	size_t unit_bytes;
	enum tcp_frame_error error;
};

/* Feeds stream in pieces of at most `step` bytes through a buffer, the
 * way tcp_stream.c does. */
static void
feed(const uint8_t *stream, size_t len, size_t step, bool welcome,
    struct seen *seen)
{
	uint8_t *buf = malloc(len);
	struct tcp_frame f;
	struct tcp_frame_event ev;
	size_t have = 0, off = 0, used;

	ck_assert_ptr_nonnull(buf);
	memset(seen, 0, sizeof(*seen));
	tcp_frame_init(&f, MTU, welcome);
	while (off < len && seen->errors == 0) {
		size_t n = len - off < step ? len - off : step;

		memcpy(buf + have, stream + off, n);
		have += n;
		off += n;
		for (;;) {
			used = tcp_frame_next(&f, buf, have, &ev);
			if (ev.kind == TCP_FRAME_NEED) {
				ck_assert_uint_gt(ev.need, have);
				break;
			}
			if (ev.kind == TCP_FRAME_ERROR) {
				seen->errors++;
				seen->error = ev.error;
				break;
			}
			if (ev.kind == TCP_FRAME_WELCOME) {
				ck_assert_uint_eq(ev.data[0], 0x11);
				seen->welcomes++;
			} else {
				ck_assert_uint_eq(ev.data[0], ev.len & 0xff);
				ck_assert_uint_eq(ev.data[ev.len - 1],
				    ev.len & 0xff);
				seen->units++;
				seen->unit_bytes += ev.len;
			}
			memmove(buf, buf + used, have - used);
			have -= used;
		}
	}
	free(buf);
}

START_TEST(welcome_then_units)
{
	uint8_t stream[2 * MTU];
	size_t len = make_stream(stream, true);
	struct seen seen;

	feed(stream, len, len, true, &seen);
	ck_assert_uint_eq(seen.welcomes, 1);
	ck_assert_uint_eq(seen.units, 3);
	ck_assert_uint_eq(seen.unit_bytes, 1 + 5 + MTU);
	ck_assert_uint_eq(seen.errors, 0);
}
END_TEST

/* Every split point, and byte by byte. */
START_TEST(split_reads)
{
	uint8_t stream[2 * MTU];
	size_t len = make_stream(stream, true);
	struct seen seen;

	for (size_t step = 1; step <= len; step++) {
		feed(stream, len, step, true, &seen);
		ck_assert_uint_eq(seen.welcomes, 1);
		ck_assert_uint_eq(seen.units, 3);
		ck_assert_uint_eq(seen.errors, 0);
	}
}
END_TEST

START_TEST(two_pieces_any_cut)
{
	uint8_t stream[2 * MTU];
	size_t len = make_stream(stream, true);
	struct tcp_frame f;
	struct tcp_frame_event ev;
	uint8_t buf[2 * MTU];

	for (size_t cut = 0; cut <= len; cut++) {
		size_t have = cut, used, units = 0;

		tcp_frame_init(&f, MTU, true);
		memcpy(buf, stream, cut);
		for (int piece = 0; piece < 2; piece++) {
			if (piece == 1) {
				memcpy(buf + have, stream + cut, len - cut);
				have += len - cut;
			}
			while ((used = tcp_frame_next(&f, buf, have, &ev)) > 0) {
				units += ev.kind == TCP_FRAME_UNIT;
				memmove(buf, buf + used, have - used);
				have -= used;
			}
			ck_assert_int_eq(ev.kind, TCP_FRAME_NEED);
		}
		ck_assert_uint_eq(units, 3);
		ck_assert_uint_eq(have, 0);
	}
}
END_TEST

START_TEST(no_welcome_expected)
{
	uint8_t stream[2 * MTU];
	size_t len = make_stream(stream, false);
	struct seen seen;

	feed(stream, len, 7, false, &seen);
	ck_assert_uint_eq(seen.welcomes, 0);
	ck_assert_uint_eq(seen.units, 3);
}
END_TEST

static enum tcp_frame_error
error_of(const uint8_t *buf, size_t len, bool welcome)
{
	struct tcp_frame f;
	struct tcp_frame_event ev;
	size_t used;

	tcp_frame_init(&f, MTU, welcome);
	while ((used = tcp_frame_next(&f, buf, len, &ev)) > 0) {
		buf += used;
		len -= used;
	}
	ck_assert_int_eq(ev.kind, TCP_FRAME_ERROR);
	/* sticky: the same answer however much more arrives */
	ck_assert_uint_eq(tcp_frame_next(&f, buf, len, &ev), 0);
	ck_assert_int_eq(ev.kind, TCP_FRAME_ERROR);
	return ev.error;
}

START_TEST(zero_length)
{
	uint8_t b[TCP_FRAME_HDR_LEN + 1] = { 0, 0, 0, 0, 9 };

	ck_assert_int_eq(error_of(b, sizeof(b), false), TCP_FRAME_EEMPTY);
	/* judged on the header alone */
	ck_assert_int_eq(error_of(b, TCP_FRAME_HDR_LEN, false),
	    TCP_FRAME_EEMPTY);
}
END_TEST

START_TEST(oversized_length)
{
	uint8_t b[TCP_FRAME_HDR_LEN];
	struct tcp_frame f;
	struct tcp_frame_event ev;

	tcp_frame_put_header(b, MTU + 1);
	ck_assert_int_eq(error_of(b, sizeof(b), false), TCP_FRAME_ETOOBIG);
	tcp_frame_put_header(b, 0xffffffffu);
	ck_assert_int_eq(error_of(b, sizeof(b), false), TCP_FRAME_ETOOBIG);
	/* exactly the MTU is fine: the parser asks for the body */
	tcp_frame_put_header(b, MTU);
	tcp_frame_init(&f, MTU, false);
	ck_assert_uint_eq(tcp_frame_next(&f, b, sizeof(b), &ev), 0);
	ck_assert_int_eq(ev.kind, TCP_FRAME_NEED);
	ck_assert_uint_eq(ev.need, TCP_FRAME_HDR_LEN + MTU);
}
END_TEST

START_TEST(bad_magic)
{
	uint8_t w[TCP_FRAME_WELCOME_LEN];
	struct ferry_peer_id id;
	struct tcp_frame f;
	struct tcp_frame_event ev;

	memset(&id, 0, sizeof(id));
	tcp_frame_put_welcome(w, &id);
	w[3] ^= 0x20;
	ck_assert_int_eq(error_of(w, sizeof(w), true), TCP_FRAME_EMAGIC);
	/* a stranger is turned away at its first wrong byte */
	ck_assert_int_eq(error_of((const uint8_t *)"GET / HTTP/1.0", 1, true),
	    TCP_FRAME_EMAGIC);
	ck_assert_int_eq(error_of(w, 4, true), TCP_FRAME_EMAGIC);
	/* a right prefix waits for more */
	tcp_frame_init(&f, MTU, true);
	ck_assert_uint_eq(tcp_frame_next(&f, w, 3, &ev), 0);
	ck_assert_int_eq(ev.kind, TCP_FRAME_NEED);
	ck_assert_uint_eq(ev.need, TCP_FRAME_WELCOME_LEN);
	/* units without a welcome, where one is expected */
	tcp_frame_put_header(w, 5);
	ck_assert_int_eq(error_of(w, 4, true), TCP_FRAME_EMAGIC);
}
END_TEST

START_TEST(bad_version)
{
	uint8_t w[TCP_FRAME_WELCOME_LEN];
	struct ferry_peer_id id;

	memset(&id, 0, sizeof(id));
	tcp_frame_put_welcome(w, &id);
	w[TCP_FRAME_MAGIC_LEN + 1] = 2;
	ck_assert_int_eq(error_of(w, TCP_FRAME_MAGIC_LEN + 2, true),
	    TCP_FRAME_EVERSION);
	/* reserved bits are ignored */
	w[TCP_FRAME_MAGIC_LEN + 1] = 1;
	w[TCP_FRAME_MAGIC_LEN + 3] = 0x80;
	{
		struct tcp_frame f;
		struct tcp_frame_event ev;

		tcp_frame_init(&f, MTU, true);
		ck_assert_uint_eq(tcp_frame_next(&f, w, sizeof(w), &ev),
		    TCP_FRAME_WELCOME_LEN);
		ck_assert_int_eq(ev.kind, TCP_FRAME_WELCOME);
	}
	ck_assert_str_eq(tcp_frame_strerror(TCP_FRAME_EVERSION),
	    "unsupported stream version");
}
END_TEST

START_TEST(welcome_only_once)
{
	uint8_t s[2 * TCP_FRAME_WELCOME_LEN];
	struct ferry_peer_id id;

	memset(&id, 0, sizeof(id));
	tcp_frame_put_welcome(s, &id);
	tcp_frame_put_welcome(s + TCP_FRAME_WELCOME_LEN, &id);
	/* a second welcome reads as a unit header "FERR" > MTU */
	ck_assert_int_eq(error_of(s, sizeof(s), true), TCP_FRAME_ETOOBIG);
}
END_TEST

static Suite *
tcp_frame_suite(void)
{
	Suite *s = suite_create("tcp_frame");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, welcome_then_units);
	tcase_add_test(tc, split_reads);
	tcase_add_test(tc, two_pieces_any_cut);
	tcase_add_test(tc, no_welcome_expected);
	tcase_add_test(tc, zero_length);
	tcase_add_test(tc, oversized_length);
	tcase_add_test(tc, bad_magic);
	tcase_add_test(tc, bad_version);
	tcase_add_test(tc, welcome_only_once);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(tcp_frame_suite());
}
