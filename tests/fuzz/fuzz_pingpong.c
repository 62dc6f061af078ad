/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for PING and PONG (src/core/pingpong.c): the input as
 * a PING (ping_decode) and as a PONG (pong_decode, pong_verify). A PING
 * that decodes is answered as ferryd answers it (pong_build by a fixed
 * identity) and the answer must decode, verify, carry the challenge and
 * address, and be no larger than the PING (no amplification).
 * Seeds: tests/fuzz/corpus/pingpong.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include <ferry/proto.h>

#include "core/identity.h"
#include "core/pingpong.h"

#define FUZZ_NOW_S 1700000000ull

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct identity *fuzz_ident;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	uint8_t seed[32];

	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	memset(seed, 0xb0, sizeof(seed));
	if (identity_from_seed(seed, &fuzz_ident) < 0)
		abort();
	return 0;
}

static void
fuzz_ping(const uint8_t *data, size_t size)
{
	uint8_t pong[FERRY_PONG_FIXED + FERRY_ADDR_MAX];
	struct ping p;
	struct pong po;
	int n;

	if (ping_decode(data, size, &p) < 0)
		return;
	if (p.size != size || p.addr != data + FERRY_PING_FIXED ||
	    p.addr_len == 0 || p.addr_len > FERRY_ADDR_MAX ||
	    pingpong_size(p.addr_len) > size)
		abort();
	n = pong_build(pong, sizeof(pong), fuzz_ident, p.challenge, p.protocol,
	    FUZZ_NOW_S + 60, p.addr, p.addr_len);
	if (n < 0 || (size_t)n > p.size)
		abort(); /* amplification */
	if (pong_decode(pong, (size_t)n, &po) < 0 ||
	    pong_verify(&po, fuzz_ident->pk, FUZZ_NOW_S) < 0 ||
	    memcmp(po.challenge, p.challenge, FERRY_CHALLENGE_LEN) != 0 ||
	    po.protocol != p.protocol || po.addr_len != p.addr_len ||
	    memcmp(po.addr, p.addr, p.addr_len) != 0)
		abort();
}

static void
fuzz_pong(const uint8_t *data, size_t size)
{
	struct pong po;

	if (pong_decode(data, size, &po) < 0)
		return;
	if (po.raw != data || po.raw_len != size ||
	    pingpong_size(po.addr_len) != size || po.addr != data + 32)
		abort();
	(void)pong_verify(&po, fuzz_ident->pk, FUZZ_NOW_S);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_ping(data, size);
	fuzz_pong(data, size);
	return 0;
}
