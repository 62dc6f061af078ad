/* SPDX-License-Identifier: GPL-3.0-or-later */
/* PING and PONG encoding and checking (see pingpong.h), core layer. */
#include "core/pingpong.h"

#include <errno.h>
#include <string.h>

#include "core/identity.h"
#include "lib/wire.h"

#define PONG_SIG_PREFIX "ferry pong v1"

int
ping_decode(const void *msg, size_t len, struct ping *ret)
{
	const uint8_t *p = msg;
	uint16_t addr_len;

	if (len < FERRY_PING_FIXED || len > FERRY_MSG_SIZE_MAX ||
	    wire_get16(p) != len || wire_get16(p + 2) != FERRY_P2P_PING)
		return -EBADMSG;
	addr_len = wire_get16(p + 54);
	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX ||
	    len < pingpong_size(addr_len))
		return -EBADMSG;
	memcpy(ret->target.bytes, p + 4, FERRY_PEER_ID_LEN);
	memcpy(ret->challenge, p + 36, FERRY_CHALLENGE_LEN);
	ret->protocol = wire_get16(p + 52);
	ret->addr_len = addr_len;
	ret->addr = p + FERRY_PING_FIXED;
	ret->size = len;
	return 0;
}

int
ping_build(uint8_t *out, size_t max, const struct ferry_peer_id *target,
    const uint8_t challenge[FERRY_CHALLENGE_LEN], uint16_t protocol,
    const void *addr, size_t addr_len)
{
	size_t len = pingpong_size(addr_len);

	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX)
		return -EINVAL;
	if (len > max)
		return -ENOSPC;
	memset(out, 0, len);
	wire_put_hdr(out, (uint16_t)len, FERRY_P2P_PING);
	memcpy(out + 4, target->bytes, FERRY_PEER_ID_LEN);
	memcpy(out + 36, challenge, FERRY_CHALLENGE_LEN);
	wire_put16(out + 52, protocol);
	wire_put16(out + 54, (uint16_t)addr_len);
	memcpy(out + FERRY_PING_FIXED, addr, addr_len);
	return (int)len;
}

int
pong_decode(const void *msg, size_t len, struct pong *ret)
{
	const uint8_t *p = msg;
	uint16_t addr_len;

	if (len < FERRY_PONG_FIXED || len > FERRY_MSG_SIZE_MAX ||
	    wire_get16(p) != len || wire_get16(p + 2) != FERRY_P2P_PONG)
		return -EBADMSG;
	addr_len = wire_get16(p + 22);
	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX ||
	    len != pingpong_size(addr_len))
		return -EBADMSG;
	memcpy(ret->challenge, p + 4, FERRY_CHALLENGE_LEN);
	ret->protocol = wire_get16(p + 20);
	ret->addr_len = addr_len;
	ret->expiry = wire_get64(p + 24);
	ret->addr = p + 32;
	ret->raw = p;
	ret->raw_len = len;
	return 0;
}

int
pong_verify(const struct pong *p, const uint8_t pk[FERRY_PUBKEY_LEN],
    uint64_t now_s)
{
	size_t signed_len = p->raw_len - FERRY_SIG_LEN;

	if (identity_verify(pk, PONG_SIG_PREFIX, p->raw, signed_len,
		p->raw + signed_len) < 0)
		return -EBADMSG;
	if (p->expiry <= now_s)
		return -ESTALE;
	return 0;
}

int
pong_build(uint8_t *out, size_t max, const struct identity *ident,
    const uint8_t challenge[FERRY_CHALLENGE_LEN], uint16_t protocol,
    uint64_t expiry, const void *addr, size_t addr_len)
{
	size_t len = pingpong_size(addr_len);

	if (addr_len == 0 || addr_len > FERRY_ADDR_MAX)
		return -EINVAL;
	if (len > max)
		return -ENOSPC;
	wire_put_hdr(out, (uint16_t)len, FERRY_P2P_PONG);
	memcpy(out + 4, challenge, FERRY_CHALLENGE_LEN);
	wire_put16(out + 20, protocol);
	wire_put16(out + 22, (uint16_t)addr_len);
	wire_put64(out + 24, expiry);
	memcpy(out + 32, addr, addr_len);
	identity_sign(ident, PONG_SIG_PREFIX, out, len - FERRY_SIG_LEN,
	    out + len - FERRY_SIG_LEN);
	return (int)len;
}
