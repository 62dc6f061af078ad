/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for the TCP transport's stream parser
 * (plugins/tcp/tcp_frame.c). The input chooses the parser's settings and
 * how the stream is cut into reads; the events must be the same however
 * it is cut, and every pointer and length must stay inside the buffer.
 *
 * Input: u8 flags (bit 0: expect a welcome), u16 MTU, u8 n, n read sizes
 * (each 1 + the byte), then the stream.
 */
/* fuzz-sources: plugins/tcp/tcp_frame.c */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/tcp/tcp_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One event as seen by a caller: kind, length and a digest of bytes. */
struct fuzz_ev {
	enum tcp_frame_kind kind;
	size_t len;
	uint32_t digest;
	enum tcp_frame_error error;
};

struct fuzz_run {
	struct fuzz_ev *ev; /* recorded events */
	size_t n, max;
};

static uint32_t
fuzz_digest(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static void
fuzz_record(struct fuzz_run *run, const struct tcp_frame_event *ev)
{
	struct fuzz_ev *r;

	if (run->n == run->max)
		abort(); /* every event eats at least 5 bytes: cannot happen */
	r = &run->ev[run->n++];
	memset(r, 0, sizeof(*r));
	r->kind = ev->kind;
	r->error = ev->error;
	if (ev->kind == TCP_FRAME_UNIT) {
		r->len = ev->len;
		r->digest = fuzz_digest(ev->data, ev->len);
	} else if (ev->kind == TCP_FRAME_WELCOME) {
		r->digest = fuzz_digest(ev->data, FERRY_PEER_ID_LEN);
	}
}

/* Parses everything buffered; false once the stream failed. */
static bool
fuzz_drain(struct tcp_frame *f, uint8_t *buf, size_t *have,
    struct fuzz_run *run)
{
	struct tcp_frame_event ev;
	size_t used;

	for (;;) {
		used = tcp_frame_next(f, buf, *have, &ev);
		if (used > *have)
			abort();
		if (ev.kind == TCP_FRAME_NEED) {
			if (used != 0 || ev.need <= *have ||
			    (ev.need > TCP_FRAME_HDR_LEN + (size_t)f->mtu &&
			    ev.need != TCP_FRAME_WELCOME_LEN))
				abort();
			return true;
		}
		fuzz_record(run, &ev);
		if (ev.kind == TCP_FRAME_ERROR) {
			if (used != 0)
				abort();
			return false;
		}
		if (ev.kind == TCP_FRAME_UNIT && (ev.len == 0 ||
		    ev.len > f->mtu || ev.data != buf + TCP_FRAME_HDR_LEN ||
		    used != TCP_FRAME_HDR_LEN + ev.len))
			abort();
		if (ev.kind == TCP_FRAME_WELCOME &&
		    used != TCP_FRAME_WELCOME_LEN)
			abort();
		memmove(buf, buf + used, *have - used);
		*have -= used;
	}
}

/* Feeds the stream in reads of the given sizes (all of it if none). */
static void
fuzz_feed(const uint8_t *s, size_t len, uint32_t mtu, bool welcome,
    const uint8_t *steps, size_t n_steps, struct fuzz_run *run)
{
	uint8_t *buf = malloc(len > 0 ? len : 1);
	struct tcp_frame f;
	size_t have = 0, off = 0, k = 0;

	if (buf == NULL)
		abort();
	tcp_frame_init(&f, mtu, welcome);
	while (off < len) {
		size_t step = n_steps > 0 ? 1 + (size_t)steps[k++ % n_steps] :
		    len;

		if (step > len - off)
			step = len - off;
		memcpy(buf + have, s + off, step);
		have += step;
		off += step;
		if (!fuzz_drain(&f, buf, &have, run))
			break;
	}
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_run whole, cut;
	const uint8_t *steps, *stream;
	size_t n_steps, len;
	uint32_t mtu;
	bool welcome;

	if (size < 4)
		return 0;
	welcome = data[0] & 1;
	mtu = (uint32_t)data[1] << 8 | data[2];
	if (mtu == 0)
		mtu = 1;
	n_steps = data[3];
	if (size < 4 + n_steps)
		return 0;
	steps = data + 4;
	stream = steps + n_steps;
	len = size - 4 - n_steps;
	whole.max = cut.max = len / 5 + 2;
	whole.n = cut.n = 0;
	whole.ev = calloc(whole.max, sizeof(*whole.ev));
	cut.ev = calloc(cut.max, sizeof(*cut.ev));
	if (whole.ev == NULL || cut.ev == NULL)
		abort();
	fuzz_feed(stream, len, mtu, welcome, NULL, 0, &whole);
	fuzz_feed(stream, len, mtu, welcome, steps, n_steps, &cut);
	if (whole.n != cut.n ||
	    memcmp(whole.ev, cut.ev, whole.n * sizeof(*whole.ev)) != 0)
		abort();
	free(whole.ev);
	free(cut.ev);
	return 0;
}
