/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The key exchange message and the key schedule (DESIGN.md, "Links are
 * encrypted with an authenticated ephemeral key exchange"). Each side
 * signs its X25519 ephemeral key together with both identities; one KX
 * each way, in any order, gives both sides the same per-direction keys.
 * Layout in <ferry/proto.h>. Core layer; pure functions.
 */
#ifndef FERRY_CORE_KX_H
#define FERRY_CORE_KX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

struct identity;

#define KX_KEY_LEN 32
#define KX_EPH_LEN 32

struct kx_msg {
	uint8_t pk[FERRY_PUBKEY_LEN];	 /* sender identity key */
	struct ferry_peer_id sender;	 /* hash of pk */
	struct ferry_peer_id receiver;	 /* who it is for */
	uint8_t eph[KX_EPH_LEN];	 /* sender's ephemeral public key */
	uint64_t timestamp_us;		 /* strictly increasing per sender */
	uint32_t sender_index;		 /* index for frames to the sender */
	uint32_t flags;			 /* FERRY_KX_F_* */
	uint8_t echo[FERRY_KX_ECHO_LEN]; /* receiver's eph as the sender has it */
};

/* Derived keys of one direction pair; wipe with sodium_memzero. */
struct kx_keys {
	uint8_t tx[KX_KEY_LEN];
	uint8_t rx[KX_KEY_LEN];
	uint32_t tx_id; /* key_id we put in frames */
	uint32_t rx_id; /* key_id we expect in frames */
	bool aesgcm;	/* both sides can do AES-256-GCM */
};

/* Structure only: 0 or -EBADMSG. */
int kx_decode(const void *msg, size_t len, struct kx_msg *ret);
/* Checks the signature of a decoded KX message (msg as decoded). */
int kx_verify(const void *msg, size_t len);
/* Writes and signs a KX of FERRY_KX_SIZE bytes into out. */
void kx_build(uint8_t out[FERRY_KX_SIZE], const struct identity *ident,
    const struct kx_msg *m);
/* The echo value of an ephemeral public key. */
void kx_echo_of(const uint8_t eph[KX_EPH_LEN],
    uint8_t echo[FERRY_KX_ECHO_LEN]);
/* A fresh ephemeral key pair; sk must be secret memory. */
void kx_eph_new(uint8_t sk[KX_EPH_LEN], uint8_t pk[KX_EPH_LEN]);
/* The X25519 public key of the ephemeral secret sk. */
void kx_eph_public(const uint8_t sk[KX_EPH_LEN], uint8_t pk[KX_EPH_LEN]);
/*
 * The key schedule: X25519(my_sk, peer_eph), then a keyed BLAKE2b over
 * both ids, both ephemeral keys and both flag words in a fixed order, so
 * both sides compute the same keys. -EBADMSG if the shared secret is
 * degenerate (a low-order point).
 */
int kx_derive(const uint8_t my_sk[KX_EPH_LEN], const uint8_t my_eph[KX_EPH_LEN],
    uint32_t my_flags, const struct ferry_peer_id *me,
    const uint8_t peer_eph[KX_EPH_LEN], uint32_t peer_flags,
    const struct ferry_peer_id *peer, struct kx_keys *ret);

#endif /* FERRY_CORE_KX_H */
