/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The TCP transport's stream parser (see tcp_frame.h): welcome, then
 * length-prefixed units. Every length is checked before it is used.
 */
#include "tcp_frame.h"

#include <string.h>

#include "lib/wire.h"

void
tcp_frame_init(struct tcp_frame *f, uint32_t mtu, bool expect_welcome)
{
	f->mtu = mtu;
	f->welcomed = !expect_welcome;
	f->failed = false;
	f->error = TCP_FRAME_EMAGIC;
}

static size_t
tcp_frame_error(struct tcp_frame *f, struct tcp_frame_event *ev,
    enum tcp_frame_error e)
{
	f->failed = true;
	f->error = e;
	ev->kind = TCP_FRAME_ERROR;
	ev->error = e;
	return 0;
}

static size_t
tcp_frame_need(struct tcp_frame_event *ev, size_t need)
{
	ev->kind = TCP_FRAME_NEED;
	ev->need = need;
	return 0;
}

static size_t
tcp_frame_welcome(struct tcp_frame *f, const uint8_t *buf, size_t len,
    struct tcp_frame_event *ev)
{
	size_t have = len < TCP_FRAME_MAGIC_LEN ? len : TCP_FRAME_MAGIC_LEN;

	/* Judge the magic on what has come, so that a stranger (a port
	 * scanner, an HTTP client) is turned away at its first bytes. */
	if (memcmp(buf, TCP_FRAME_MAGIC, have) != 0)
		return tcp_frame_error(f, ev, TCP_FRAME_EMAGIC);
	if (len < TCP_FRAME_MAGIC_LEN + 2)
		return tcp_frame_need(ev, TCP_FRAME_WELCOME_LEN);
	/* version */
	if (wire_get16(buf + TCP_FRAME_MAGIC_LEN) != TCP_FRAME_VERSION)
		return tcp_frame_error(f, ev, TCP_FRAME_EVERSION);
	if (len < TCP_FRAME_WELCOME_LEN)
		return tcp_frame_need(ev, TCP_FRAME_WELCOME_LEN);
	/* reserved: ignored, room for flags a later version may send */
	f->welcomed = true;
	ev->kind = TCP_FRAME_WELCOME;
	ev->data = buf + TCP_FRAME_MAGIC_LEN + 4;
	return TCP_FRAME_WELCOME_LEN;
}

size_t
tcp_frame_next(struct tcp_frame *f, const uint8_t *buf, size_t len,
    struct tcp_frame_event *ev)
{
	uint32_t n;

	memset(ev, 0, sizeof(*ev));
	if (f->failed)
		return tcp_frame_error(f, ev, f->error);
	if (!f->welcomed) {
		if (len == 0)
			return tcp_frame_need(ev, TCP_FRAME_WELCOME_LEN);
		return tcp_frame_welcome(f, buf, len, ev);
	}
	if (len < TCP_FRAME_HDR_LEN)
		return tcp_frame_need(ev, TCP_FRAME_HDR_LEN);
	n = wire_get32(buf);
	if (n == 0)
		return tcp_frame_error(f, ev, TCP_FRAME_EEMPTY);
	if (n > f->mtu)
		return tcp_frame_error(f, ev, TCP_FRAME_ETOOBIG);
	if (len - TCP_FRAME_HDR_LEN < n)
		return tcp_frame_need(ev, TCP_FRAME_HDR_LEN + (size_t)n);
	ev->kind = TCP_FRAME_UNIT;
	ev->data = buf + TCP_FRAME_HDR_LEN;
	ev->len = n;
	return TCP_FRAME_HDR_LEN + (size_t)n;
}

void
tcp_frame_put_welcome(uint8_t *out, const struct ferry_peer_id *id)
{
	memcpy(out, TCP_FRAME_MAGIC, TCP_FRAME_MAGIC_LEN);
	wire_put16(out + TCP_FRAME_MAGIC_LEN, TCP_FRAME_VERSION);
	wire_put16(out + TCP_FRAME_MAGIC_LEN + 2, 0);
	memcpy(out + TCP_FRAME_MAGIC_LEN + 4, id->bytes, FERRY_PEER_ID_LEN);
}

void
tcp_frame_put_header(uint8_t *out, uint32_t len)
{
	wire_put32(out, len);
}

const char *
tcp_frame_strerror(enum tcp_frame_error e)
{
	switch (e) {
	case TCP_FRAME_EMAGIC:
		return "not a ferry TCP stream";
	case TCP_FRAME_EVERSION:
		return "unsupported stream version";
	case TCP_FRAME_EEMPTY:
		return "unit of length 0";
	case TCP_FRAME_ETOOBIG:
		return "unit longer than the MTU";
	}
	return "unknown framing error";
}
