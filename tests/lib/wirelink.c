/* SPDX-License-Identifier: GPL-3.0-or-later */
/* An encrypted link from the wire-speaking test peer (see wirelink.h). */
#include "wirelink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "lib/time.h"
#include "lib/wire.h"
#include "core/ack.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/link.h"
#include "core/rx.h"
#include "harness.h"
#include "wirepeer.h"

#define WIRELINK_SKEW_US     (3600 * USEC_PER_SEC) /* as KX_MAX_SKEW */
#define WIRELINK_KX_RETRY_MS 500
#define WIRELINK_BUF         65536

struct wirelink {
	struct wirepeer *w;        /* borrowed */
	struct ferry_peer_id peer; /* the daemon */
	struct sockaddr_in to;     /* its UDP address */
	struct link link;          /* keys, core code */
	uint64_t frames_in;        /* its frames that opened */
	wirelink_inner_fn *fn;     /* sees its inner messages, or NULL */
	void *cls;
	bool acks;                   /* acknowledge its frames */
	uint32_t rwnd;               /* the window our ACKs advertise */
	struct acktrack at;          /* its frames to acknowledge */
	uint8_t dgram[WIRELINK_BUF]; /* receive buffer */
	uint8_t pt[WIRELINK_BUF];    /* opened plaintext */
};

int
wirelink_new(struct wirepeer *w, const struct ferry_peer_id *peer,
    const struct sockaddr_in *to, struct wirelink **ret)
{
	struct wirelink *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	l->w = w;
	l->peer = *peer;
	l->to = *to;
	acktrack_init(&l->at);
	/* Any index but 0 (which the core never hands out). */
	if (link_init(&l->link, w->ident, peer, randombytes_random() | 1,
	        time_mono_us()) < 0) {
		free(l);
		return -ENOMEM;
	}
	*ret = l;
	return 0;
}

void
wirelink_free(struct wirelink *l)
{
	if (l == NULL)
		return;
	link_done(&l->link);
	free(l);
}

void
wirelink_on_inner(struct wirelink *l, wirelink_inner_fn *fn, void *cls)
{
	l->fn = fn;
	l->cls = cls;
}

void
wirelink_set_acks(struct wirelink *l, uint32_t rwnd)
{
	l->acks = true;
	l->rwnd = rwnd;
}

uint64_t
wirelink_frames_in(const struct wirelink *l)
{
	return l->frames_in;
}

int
wirelink_send_raw(struct wirelink *l, const void *buf, size_t len)
{
	return wirepeer_send(l->w, &l->to, buf, len);
}

static int
wirelink_send_kx(struct wirelink *l)
{
	uint8_t kx[FERRY_KX_SIZE];

	link_build_kx(&l->link, time_real_us(), kx);
	return wirelink_send_raw(l, kx, sizeof(kx));
}

/* A KX from the daemon: checked as the core checks it, then applied. */
static void
wirelink_on_kx(struct wirelink *l, const uint8_t *msg, size_t size)
{
	struct kx_msg m;
	int bits;

	if (kx_decode(msg, size, &m) < 0 ||
	    memcmp(&m.sender, &l->peer, sizeof(m.sender)) != 0 ||
	    memcmp(&m.receiver, &l->w->ident->id, sizeof(m.receiver)) != 0 ||
	    kx_verify(msg, size) < 0 ||
	    link_kx_fresh(&l->link, &m, time_real_us(), WIRELINK_SKEW_US) < 0)
		return;
	bits = link_on_kx(&l->link, &m, time_mono_us());
	if (bits >= 0 && (bits & LINK_KX_REPLY))
		(void)wirelink_send_kx(l);
}

static void
wirelink_on_enc(struct wirelink *l, const uint8_t *msg, size_t size)
{
	const uint8_t *inner;
	size_t ptlen, off = 0, isize;
	uint64_t ctr;
	uint16_t type;

	bool eliciting = false;

	if (link_open_to(&l->link, msg, size, l->pt, time_mono_us(), &ptlen,
	        &ctr) < 0)
		return;
	l->frames_in++;
	while (rx_next(l->pt, ptlen, &off, &type, &inner, &isize) > 0) {
		if (type != FERRY_MSG_ACK && type != FERRY_MSG_PAD)
			eliciting = true;
		if (l->fn != NULL)
			l->fn(l->cls, type, inner, isize);
	}
	if (l->acks)
		acktrack_on_frame(&l->at, ctr, eliciting, time_mono_us(), 0);
}

/* The ACK the daemon is owed, if any, in a frame of its own. */
static void
wirelink_send_ack(struct wirelink *l)
{
	uint8_t ack[ACK_MAX_SIZE], frame[ACK_MAX_SIZE + FERRY_ENC_OVERHEAD];
	size_t n;
	int f;

	if (!l->acks || !acktrack_pending(&l->at))
		return;
	n = acktrack_write(&l->at, ack, sizeof(ack), l->rwnd, time_mono_us());
	if (n == 0)
		return;
	f = wirelink_seal(l, ack, n, frame, sizeof(frame), NULL);
	if (f > 0)
		(void)wirelink_send_raw(l, frame, (size_t)f);
}

/* One datagram from the daemon: its KX and ENC messages. */
static void
wirelink_input(struct wirelink *l, size_t len)
{
	const uint8_t *msg;
	size_t off = 0, size;
	uint16_t type;

	while (rx_next(l->dgram, len, &off, &type, &msg, &size) > 0) {
		if (type == FERRY_P2P_KX)
			wirelink_on_kx(l, msg, size);
		else if (type == FERRY_P2P_ENC)
			wirelink_on_enc(l, msg, size);
	}
	wirelink_send_ack(l);
}

unsigned
wirelink_pump(struct wirelink *l, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)(ms > 0 ? ms : 0);
	uint64_t before = l->frames_in;
	struct sockaddr_in from;
	int n;

	for (;;) {
		uint64_t now = harness_now_ms();

		n = wirepeer_recv(l->w, l->dgram, sizeof(l->dgram),
		    now < end ? (int)(end - now) : 0, &from);
		if (n < 0)
			break;
		if (harness_sin_eq(&from, &l->to))
			wirelink_input(l, (size_t)n);
	}
	return (unsigned)(l->frames_in - before);
}

int
wirelink_handshake(struct wirelink *l, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	uint64_t last = 0;

	while (!link_ready(&l->link) || l->frames_in == 0) {
		uint64_t now = harness_now_ms();

		if (now >= end)
			return -ETIMEDOUT;
		/* Say it again until the daemon answers: a datagram may
		 * be lost, or the daemon's limits may have said no. */
		if (now - last >= WIRELINK_KX_RETRY_MS) {
			if (wirelink_send_kx(l) < 0)
				return -EIO;
			last = now;
		}
		(void)wirelink_pump(l, 50);
	}
	return 0;
}

int
wirelink_msg(uint8_t *out, size_t max, uint16_t type, const void *data,
    size_t len)
{
	if (len > FERRY_MSG_SIZE_MAX - FERRY_HDR_SIZE ||
	    FERRY_HDR_SIZE + len > max)
		return -ENOSPC;
	wire_put_hdr(out, (uint16_t)(FERRY_HDR_SIZE + len), type);
	if (len > 0)
		memcpy(out + FERRY_HDR_SIZE, data, len);
	return (int)(FERRY_HDR_SIZE + len);
}

int
wirelink_seal(struct wirelink *l, const void *inner, size_t len, uint8_t *out,
    size_t max, uint64_t *ret_counter)
{
	uint64_t ctr;
	int r;

	if (len + FERRY_ENC_OVERHEAD > max)
		return -ENOSPC;
	r = link_seal(&l->link, inner, len, out, &ctr);
	if (r >= 0 && ret_counter != NULL)
		*ret_counter = ctr;
	return r;
}

int
wirelink_send_msg(struct wirelink *l, uint16_t type, const void *data,
    size_t len)
{
	uint8_t inner[2048], frame[2048 + FERRY_ENC_OVERHEAD];
	int n, f;

	n = wirelink_msg(inner, sizeof(inner), type, data, len);
	if (n < 0)
		return n;
	f = wirelink_seal(l, inner, (size_t)n, frame, sizeof(frame), NULL);
	if (f < 0)
		return f;
	return wirelink_send_raw(l, frame, (size_t)f);
}
