/* SPDX-License-Identifier: GPL-3.0-or-later */
/* KX encoding, signing and the key schedule (see kx.h), core layer. */
#include "core/kx.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "core/identity.h"
#include "lib/wire.h"

#define KX_SIG_PREFIX "ferry kx v1"
#define KX_KDF_LABEL "ferry link keys v1"
#define KX_ID_LABEL "ferry key id v1"
#define KX_SIGNED_LEN (FERRY_KX_SIZE - FERRY_SIG_LEN)

int
kx_decode(const void *msg, size_t len, struct kx_msg *ret)
{
	const uint8_t *p = msg;

	if (len != FERRY_KX_SIZE || wire_get16(p) != FERRY_KX_SIZE ||
	    wire_get16(p + 2) != FERRY_P2P_KX)
		return -EBADMSG;
	memcpy(ret->pk, p + 4, FERRY_PUBKEY_LEN);
	peer_id_of(ret->pk, &ret->sender);
	memcpy(ret->receiver.bytes, p + 36, FERRY_PEER_ID_LEN);
	memcpy(ret->eph, p + 68, KX_EPH_LEN);
	ret->timestamp_us = wire_get64(p + 100);
	ret->sender_index = wire_get32(p + 108);
	ret->flags = wire_get32(p + 112);
	memcpy(ret->echo, p + 116, FERRY_KX_ECHO_LEN);
	return 0;
}

int
kx_verify(const void *msg, size_t len)
{
	const uint8_t *p = msg;

	if (len != FERRY_KX_SIZE)
		return -EBADMSG;
	return identity_verify(p + 4, KX_SIG_PREFIX, p, KX_SIGNED_LEN,
	    p + KX_SIGNED_LEN);
}

void
kx_build(uint8_t out[FERRY_KX_SIZE], const struct identity *ident,
    const struct kx_msg *m)
{
	wire_put_hdr(out, FERRY_KX_SIZE, FERRY_P2P_KX);
	memcpy(out + 4, ident->pk, FERRY_PUBKEY_LEN);
	memcpy(out + 36, m->receiver.bytes, FERRY_PEER_ID_LEN);
	memcpy(out + 68, m->eph, KX_EPH_LEN);
	wire_put64(out + 100, m->timestamp_us);
	wire_put32(out + 108, m->sender_index);
	wire_put32(out + 112, m->flags);
	memcpy(out + 116, m->echo, FERRY_KX_ECHO_LEN);
	identity_sign(ident, KX_SIG_PREFIX, out, KX_SIGNED_LEN,
	    out + KX_SIGNED_LEN);
}

void
kx_echo_of(const uint8_t eph[KX_EPH_LEN], uint8_t echo[FERRY_KX_ECHO_LEN])
{
	(void)crypto_generichash(echo, FERRY_KX_ECHO_LEN, eph, KX_EPH_LEN,
	    NULL, 0);
}

void
kx_eph_public(const uint8_t sk[KX_EPH_LEN], uint8_t pk[KX_EPH_LEN])
{
	(void)crypto_scalarmult_base(pk, sk);
}

void
kx_eph_new(uint8_t sk[KX_EPH_LEN], uint8_t pk[KX_EPH_LEN])
{
	randombytes_buf(sk, KX_EPH_LEN);
	kx_eph_public(sk, pk);
}

static uint32_t
kx_key_id(const uint8_t key[KX_KEY_LEN])
{
	uint8_t h[16];

	(void)crypto_generichash(h, sizeof(h), key, KX_KEY_LEN,
	    (const uint8_t *)KX_ID_LABEL, strlen(KX_ID_LABEL));
	return wire_get32(h);
}

int
kx_derive(const uint8_t my_sk[KX_EPH_LEN], const uint8_t my_eph[KX_EPH_LEN],
    uint32_t my_flags, const struct ferry_peer_id *me,
    const uint8_t peer_eph[KX_EPH_LEN], uint32_t peer_flags,
    const struct ferry_peer_id *peer, struct kx_keys *ret)
{
	uint8_t dh[crypto_scalarmult_BYTES];
	uint8_t okm[2 * KX_KEY_LEN];
	crypto_generichash_state st;
	bool me_low = memcmp(me->bytes, peer->bytes, FERRY_PEER_ID_LEN) < 0;
	const struct ferry_peer_id *lo = me_low ? me : peer;
	const struct ferry_peer_id *hi = me_low ? peer : me;
	const uint8_t *elo = me_low ? my_eph : peer_eph;
	const uint8_t *ehi = me_low ? peer_eph : my_eph;
	uint8_t flags[8];
	int r = 0;

	if (crypto_scalarmult(dh, my_sk, peer_eph) != 0) {
		r = -EBADMSG;
		goto out;
	}
	wire_put32(flags, me_low ? my_flags : peer_flags);
	wire_put32(flags + 4, me_low ? peer_flags : my_flags);
	/* BLAKE2b keyed with the DH output is a PRF over the transcript;
	 * binding both identities stops a key-compromise impersonation of
	 * one peer towards another (both are also in the signatures). */
	(void)crypto_generichash_init(&st, dh, sizeof(dh), sizeof(okm));
	(void)crypto_generichash_update(&st, (const uint8_t *)KX_KDF_LABEL,
	    strlen(KX_KDF_LABEL));
	(void)crypto_generichash_update(&st, lo->bytes, FERRY_PEER_ID_LEN);
	(void)crypto_generichash_update(&st, hi->bytes, FERRY_PEER_ID_LEN);
	(void)crypto_generichash_update(&st, elo, KX_EPH_LEN);
	(void)crypto_generichash_update(&st, ehi, KX_EPH_LEN);
	(void)crypto_generichash_update(&st, flags, sizeof(flags));
	(void)crypto_generichash_final(&st, okm, sizeof(okm));
	/* okm = key(lo -> hi) || key(hi -> lo) */
	memcpy(ret->tx, me_low ? okm : okm + KX_KEY_LEN, KX_KEY_LEN);
	memcpy(ret->rx, me_low ? okm + KX_KEY_LEN : okm, KX_KEY_LEN);
	ret->tx_id = kx_key_id(ret->tx);
	ret->rx_id = kx_key_id(ret->rx);
	ret->aesgcm = (my_flags & peer_flags & FERRY_KX_F_AESGCM) != 0;
out:
	sodium_memzero(dh, sizeof(dh));
	sodium_memzero(okm, sizeof(okm));
	sodium_memzero(&st, sizeof(st));
	return r;
}
