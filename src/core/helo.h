/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * HELO: one signed transport address of a peer (seed 004, section II-B;
 * layout in <ferry/proto.h>), and the "ferry://" URI that carries a
 * peer's HELOs between humans. Core layer; pure functions, no state.
 */
#ifndef FERRY_CORE_HELO_H
#define FERRY_CORE_HELO_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

struct identity;

/* A decoded HELO; pointers point into the message it came from. */
struct helo {
	uint8_t pk[FERRY_PUBKEY_LEN]; /* advertised peer's key */
	struct ferry_peer_id id;      /* its peer id (hash of pk) */
	uint16_t protocol;	      /* FERRY_PROTO_* */
	uint32_t mtu;		      /* the transport's MTU there */
	uint64_t expiry;	      /* seconds since the epoch */
	const uint8_t *addr;	      /* transport address */
	uint16_t addr_len;
	const uint8_t *raw; /* the whole signed message */
	size_t raw_len;
};

#define HELO_URI_SCHEME "ferry://"

/* Checks the structure of one HELO message (header included; len must be
 * exactly its size). 0 or -EBADMSG. Does not check the signature. */
int helo_decode(const void *msg, size_t len, struct helo *ret);
/* Checks signature and expiry: 0, -EBADMSG (bad signature), -ESTALE
 * (expired at now_s). */
int helo_verify(const struct helo *h, uint64_t now_s);
/* Builds and signs a HELO into out (max bytes). Returns its size, or
 * -ENOSPC / -EINVAL (address too long). */
int helo_build(const struct identity *ident, uint16_t protocol, uint32_t mtu,
    uint64_t expiry, const void *addr, size_t addr_len, uint8_t *out,
    size_t max);

/* "ferry://<PEERID>/<base32 of the concatenated HELOs>" (malloc'd). */
int helo_uri_encode(const struct ferry_peer_id *id, const uint8_t *helos,
    size_t len, char **ret_uri);
/* Parses a URI into its concatenated HELO messages (malloc'd, caller
 * frees) after checking that each is well-formed and belongs to the peer
 * id the URI names. Signatures are not checked here. 0 or -EINVAL. */
int helo_uri_decode(const char *uri, uint8_t **ret_helos, size_t *ret_len);

#endif /* FERRY_CORE_HELO_H */
