/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The peer's long-term Ed25519 identity, core layer (DESIGN.md: "A peer's
 * identity is the hash of its Ed25519 public key; the key lives in a 0600
 * file in the state directory, created on first start").
 */
#ifndef FERRY_CORE_IDENTITY_H
#define FERRY_CORE_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#define IDENTITY_FILE "identity.key"
#define PEER_SHORT_LEN 8 /* characters of the id shown in logs */

struct identity {
	uint8_t pk[FERRY_PUBKEY_LEN]; /* Ed25519 public key */
	uint8_t *sk;		      /* sodium_malloc'd secret key (64 bytes) */
	struct ferry_peer_id id;      /* hash of pk */
	char id_str[FERRY_PEER_ID_STRLEN + 1]; /* printable id */
};

/* Loads <state_dir>/identity.key, creating it (mode 0600) if missing.
 * Refuses a file readable or writable by group or others (-EPERM), a
 * file of the wrong size or format (-EBADMSG). Logs the cause. */
int identity_load(const char *state_dir, struct identity **ret);
/* identity_load() of the key file at path: the same format, checks and
 * creation, for a key kept outside a state directory (the thin client's
 * in its config directory, src/remote), so that it signs DHT PUTs with
 * dhtmsg_put_sign() as a daemon does. */
int identity_load_path(const char *path, struct identity **ret);
/* Builds an identity from a 32-byte seed (tests and tools). */
int identity_from_seed(const uint8_t seed[32], struct identity **ret);
/* Wipes and frees. NULL is allowed. */
void identity_free(struct identity *ident);

/* sig = Ed25519(sk, prefix || NUL || data); the NUL-terminated prefix
 * separates the message kinds. */
void identity_sign(const struct identity *ident, const char *prefix,
    const void *data, size_t len, uint8_t sig[FERRY_SIG_LEN]);
/* 0 if sig is pk's signature of prefix || NUL || data, else -EBADMSG. */
int identity_verify(const uint8_t pk[FERRY_PUBKEY_LEN], const char *prefix,
    const void *data, size_t len, const uint8_t sig[FERRY_SIG_LEN]);

/* The peer id of a public key. */
void peer_id_of(const uint8_t pk[FERRY_PUBKEY_LEN], struct ferry_peer_id *ret);
/* Full printable id into buf (FERRY_PEER_ID_STRLEN + 1 bytes). */
void peer_id_format(const struct ferry_peer_id *id, char *buf);
/* The first PEER_SHORT_LEN characters, for log lines. Returns buf. */
const char *peer_id_short(const struct ferry_peer_id *id,
    char buf[PEER_SHORT_LEN + 1]);
/* 0 or -EINVAL. */
int peer_id_parse(const char *s, struct ferry_peer_id *ret);
int peer_id_cmp(const struct ferry_peer_id *a, const struct ferry_peer_id *b);

#endif /* FERRY_CORE_IDENTITY_H */
