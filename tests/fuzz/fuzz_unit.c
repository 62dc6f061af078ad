/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for what a transport hands the core: a unit (a UDP
 * datagram, a TCP frame's body, a mail's payload) of outer messages back
 * to back. The splitter rx_next walks the whole input and every message
 * goes to the decoder rx.c would give it by type (HELO, PING, PONG, KX,
 * ENC; the inner ACK and FRAG too, as a frame's plaintext is walked the
 * same way), with signatures checked where they would be. Checked: each
 * message lies inside the input, the walk advances and ends.
 * Seeds: tests/fuzz/corpus/unit (real units of mixed messages).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <ferry/proto.h>

#include "lib/wire.h"
#include "core/ack.h"
#include "core/frag.h"
#include "core/helo.h"
#include "core/kx.h"
#include "core/link.h"
#include "core/pingpong.h"
#include "core/rx.h"

#define FUZZ_NOW_S 1700000000ull

/* A PONG names no key: ferryd checks it with the key of the peer it
 * pinged, so the fuzzer checks with a fixed one. */
static uint8_t fuzz_pk[FERRY_PUBKEY_LEN];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	memset(fuzz_pk, 0x5a, sizeof(fuzz_pk));
	return 0;
}

static void
fuzz_message(uint16_t type, const uint8_t *msg, size_t size)
{
	union {
		struct helo helo;
		struct ping ping;
		struct pong pong;
		struct kx_msg kx;
		struct ack_msg ack;
		struct frag frag;
	} u;
	uint32_t idx;

	switch (type) {
	case FERRY_P2P_HELO:
		if (helo_decode(msg, size, &u.helo) == 0)
			(void)helo_verify(&u.helo, FUZZ_NOW_S);
		break;
	case FERRY_P2P_PING:
		(void)ping_decode(msg, size, &u.ping);
		break;
	case FERRY_P2P_PONG:
		if (pong_decode(msg, size, &u.pong) == 0)
			(void)pong_verify(&u.pong, fuzz_pk, FUZZ_NOW_S);
		break;
	case FERRY_P2P_KX:
		if (kx_decode(msg, size, &u.kx) == 0)
			(void)kx_verify(msg, size);
		break;
	case FERRY_P2P_ENC:
		if (link_frame_index(msg, size, &idx) == 0 &&
		    size < FERRY_ENC_OVERHEAD)
			abort();
		break;
	case FERRY_MSG_ACK:
		(void)ack_decode(msg, size, &u.ack);
		break;
	case FERRY_MSG_FRAG:
		if (frag_decode(msg, size, &u.frag) == 0 &&
		    u.frag.data + u.frag.len != msg + size)
			abort();
		break;
	default:
		break;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *msg;
	size_t off = 0, prev = 0, msize;
	uint16_t type;
	int r;

	while ((r = rx_next(data, size, &off, &type, &msg, &msize)) > 0) {
		if (msg != data + prev || msize < FERRY_HDR_SIZE ||
		    off != prev + msize || off > size ||
		    wire_get16(msg) != msize || wire_get16(msg + 2) != type)
			abort();
		fuzz_message(type, msg, msize);
		prev = off;
	}
	if (r == 0 && off != size)
		abort();
	return 0;
}
