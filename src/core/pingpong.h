/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * PING and PONG wire codecs (seed 004, section II-C; layouts in
 * <ferry/proto.h>). The PONG signature covers the challenge and the
 * address, which GNUnet's first PONG did not. A PING is padded to the
 * size of the PONG it asks for, so answering never amplifies, and both
 * are smaller than a HELO, so pinging a HELO's address does not either. Core layer;
 * pure functions.
 */
#ifndef FERRY_CORE_PINGPONG_H
#define FERRY_CORE_PINGPONG_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

struct identity;

struct ping {
	struct ferry_peer_id target;	    /* who should answer */
	uint8_t challenge[FERRY_CHALLENGE_LEN]; /* to be echoed */
	uint16_t protocol;		    /* transport of the address */
	const uint8_t *addr;		    /* address being validated */
	uint16_t addr_len;
	size_t size; /* bytes on the wire, padding included */
};

struct pong {
	uint8_t challenge[FERRY_CHALLENGE_LEN];
	uint16_t protocol;
	uint64_t expiry; /* seconds since the epoch */
	const uint8_t *addr;
	uint16_t addr_len;
	const uint8_t *raw; /* the signed message */
	size_t raw_len;
};

/* Size of the PONG answering a PING for an address of addr_len bytes,
 * which is also the size of that PING. */
static inline size_t
pingpong_size(size_t addr_len)
{
	return FERRY_PONG_FIXED + addr_len;
}

/* 0 or -EBADMSG. A PING smaller than the PONG it asks for is malformed. */
int ping_decode(const void *msg, size_t len, struct ping *ret);
/* Writes a padded PING; returns its size or -ENOSPC / -EINVAL. */
int ping_build(uint8_t *out, size_t max, const struct ferry_peer_id *target,
    const uint8_t challenge[FERRY_CHALLENGE_LEN], uint16_t protocol,
    const void *addr, size_t addr_len);

/* Structure only: 0 or -EBADMSG. */
int pong_decode(const void *msg, size_t len, struct pong *ret);
/* Signature by pk, and expiry: 0, -EBADMSG or -ESTALE. */
int pong_verify(const struct pong *p, const uint8_t pk[FERRY_PUBKEY_LEN],
    uint64_t now_s);
/* Writes and signs a PONG; returns its size or -ENOSPC / -EINVAL. */
int pong_build(uint8_t *out, size_t max, const struct identity *ident,
    const uint8_t challenge[FERRY_CHALLENGE_LEN], uint16_t protocol,
    uint64_t expiry, const void *addr, size_t addr_len);

#endif /* FERRY_CORE_PINGPONG_H */
