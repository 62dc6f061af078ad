/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Link key state machine and ENC frames (see link.h), core layer. */
#include "core/link.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/aead.h"
#include "core/identity.h"
#include "lib/time.h"
#include "lib/wire.h"

/* Frames under a replaced key set may still be in flight, over mail for
 * minutes; the old receive key is kept this long. */
#define LINK_PREV_GRACE_US (10 * 60 * USEC_PER_SEC)

static void
keyset_free(struct keyset *ks)
{
	if (ks == NULL)
		return;
	aead_free(ks->tx);
	aead_free(ks->rx);
	sodium_memzero(ks, sizeof(*ks));
	free(ks);
}

static struct keyset *
keyset_new(const struct kx_keys *k, const uint8_t my_eph[KX_EPH_LEN],
    const uint8_t peer_eph[KX_EPH_LEN], uint64_t now_us)
{
	struct keyset *ks = calloc(1, sizeof(*ks));

	if (ks == NULL)
		return NULL;
	ks->tx = aead_new(k->aesgcm, k->tx, true);
	ks->rx = aead_new(k->aesgcm, k->rx, false);
	if (ks->tx == NULL || ks->rx == NULL) {
		keyset_free(ks);
		return NULL;
	}
	ks->tx_id = k->tx_id;
	ks->rx_id = k->rx_id;
	replay_init(&ks->replay);
	ks->created_us = now_us;
	memcpy(ks->my_eph, my_eph, KX_EPH_LEN);
	memcpy(ks->peer_eph, peer_eph, KX_EPH_LEN);
	return ks;
}

int
link_init(struct link *l, const struct identity *ident,
    const struct ferry_peer_id *peer, uint32_t my_index, uint64_t now_us)
{
	memset(l, 0, sizeof(*l));
	l->ident = ident;
	l->peer = *peer;
	l->my_index = my_index;
	l->my_flags = aead_aes_fast() ? FERRY_KX_F_AESGCM : 0;
	l->my_sk = sodium_malloc(KX_EPH_LEN);
	if (l->my_sk == NULL)
		return -ENOMEM;
	kx_eph_new(l->my_sk, l->my_eph);
	l->my_eph_us = now_us;
	return 0;
}

void
link_done(struct link *l)
{
	keyset_free(l->cur);
	keyset_free(l->next);
	keyset_free(l->prev);
	sodium_free(l->my_sk);
	sodium_memzero(l, sizeof(*l));
}

/* Derives the key set for our current and the peer's latest ephemeral
 * keys as `next`, unless current already is that set. */
static int
link_derive_next(struct link *l, uint64_t now_us)
{
	struct kx_keys k;
	struct keyset *ks;
	int r;

	if (!l->have_peer)
		return 0;
	if (l->cur != NULL &&
	    memcmp(l->cur->my_eph, l->my_eph, KX_EPH_LEN) == 0 &&
	    memcmp(l->cur->peer_eph, l->peer_eph, KX_EPH_LEN) == 0) {
		keyset_free(l->next);
		l->next = NULL;
		return 0;
	}
	if (l->next != NULL &&
	    memcmp(l->next->my_eph, l->my_eph, KX_EPH_LEN) == 0 &&
	    memcmp(l->next->peer_eph, l->peer_eph, KX_EPH_LEN) == 0)
		return 0;
	r = kx_derive(l->my_sk, l->my_eph, l->my_flags, &l->ident->id,
	    l->peer_eph, l->peer_flags, &l->peer, &k);
	if (r < 0)
		return r;
	ks = keyset_new(&k, l->my_eph, l->peer_eph, now_us);
	sodium_memzero(&k, sizeof(k));
	if (ks == NULL)
		return -ENOMEM;
	keyset_free(l->next);
	l->next = ks;
	return 0;
}

/* next becomes current; current is kept for receiving a while. */
static void
link_promote(struct link *l, uint64_t now_us)
{
	keyset_free(l->prev);
	l->prev = l->cur;
	l->prev_until_us = now_us + LINK_PREV_GRACE_US;
	l->cur = l->next;
	l->next = NULL;
	l->cur->tx_first = l->tx_counter;
}

int
link_rotate_to(struct link *l, const uint8_t sk[KX_EPH_LEN], uint64_t now_us)
{
	uint8_t *copy = sodium_malloc(KX_EPH_LEN);

	if (copy == NULL)
		return -ENOMEM;
	memcpy(copy, sk, KX_EPH_LEN);
	sodium_free(l->my_sk);
	l->my_sk = copy;
	kx_eph_public(copy, l->my_eph);
	l->my_eph_us = now_us;
	return link_derive_next(l, now_us);
}

int
link_rotate(struct link *l, uint64_t now_us)
{
	uint8_t sk[KX_EPH_LEN];
	int r;

	randombytes_buf(sk, sizeof(sk));
	r = link_rotate_to(l, sk, now_us);
	sodium_memzero(sk, sizeof(sk));
	return r;
}

void
link_build_kx(struct link *l, uint64_t now_real_us,
    uint8_t out[FERRY_KX_SIZE])
{
	struct kx_msg m;

	memset(&m, 0, sizeof(m));
	m.receiver = l->peer;
	memcpy(m.eph, l->my_eph, KX_EPH_LEN);
	/* Strictly increasing, even if the clock stands still or steps
	 * back, so that the peer never takes a new KX for a replay. */
	m.timestamp_us =
	    now_real_us > l->my_last_ts ? now_real_us : l->my_last_ts + 1;
	l->my_last_ts = m.timestamp_us;
	m.sender_index = l->my_index;
	m.flags = l->my_flags;
	if (l->have_peer)
		kx_echo_of(l->peer_eph, m.echo);
	kx_build(out, l->ident, &m);
}

int
link_kx_fresh(const struct link *l, const struct kx_msg *m,
    uint64_t now_real_us, uint64_t max_skew_us)
{
	uint64_t ts = m->timestamp_us;

	if (l->have_peer && ts <= l->peer_ts)
		return -EALREADY;
	if (ts > now_real_us + max_skew_us || ts + max_skew_us < now_real_us)
		return -ERANGE;
	return 0;
}

int
link_on_kx(struct link *l, const struct kx_msg *m, uint64_t now_us)
{
	static const uint8_t zero[FERRY_KX_ECHO_LEN];
	uint8_t mine[FERRY_KX_ECHO_LEN];
	bool changed = !l->have_peer ||
	    memcmp(l->peer_eph, m->eph, KX_EPH_LEN) != 0;
	bool echoed;
	int ret = 0, r;

	kx_echo_of(l->my_eph, mine);
	echoed = sodium_memcmp(mine, m->echo, FERRY_KX_ECHO_LEN) == 0;
	/* A peer that holds no ephemeral key of ours, with an ephemeral key
	 * of its own other than the current keys', lost its state (it
	 * restarted): the current keys are dead, stop sending under them.
	 * The new session starts from a new ephemeral key of ours too, so
	 * that it owes nothing to the old one and its rekey clock starts
	 * with it (an old key would have it re-keyed during its first
	 * traffic). A zero echo with the current keys' ephemeral key is a
	 * copy of the peer's first KX, sent again before our answer reached
	 * it and overtaken by the frame that made the keys current: they
	 * stand. */
	if (sodium_memcmp(m->echo, zero, FERRY_KX_ECHO_LEN) == 0 &&
	    l->cur != NULL &&
	    memcmp(l->cur->peer_eph, m->eph, KX_EPH_LEN) != 0) {
		keyset_free(l->prev);
		l->prev = l->cur;
		l->prev_until_us = now_us + LINK_PREV_GRACE_US;
		l->cur = NULL;
		keyset_free(l->next);
		l->next = NULL;
		kx_eph_new(l->my_sk, l->my_eph);
		l->my_eph_us = now_us;
		ret |= LINK_KX_RESET;
	}
	memcpy(l->peer_eph, m->eph, KX_EPH_LEN);
	l->peer_flags = m->flags;
	l->peer_ts = m->timestamp_us;
	l->peer_index = m->sender_index;
	l->have_peer = true;
	r = link_derive_next(l, now_us);
	if (r < 0)
		return r;
	if (echoed && l->next != NULL) {
		link_promote(l, now_us);
		ret |= LINK_KX_NEWKEYS;
	}
	if (changed || !echoed)
		ret |= LINK_KX_REPLY;
	return ret;
}

uint64_t
link_tx_frames(const struct link *l)
{
	return l->cur != NULL ? l->tx_counter - l->cur->tx_first : 0;
}

uint64_t
link_key_age(const struct link *l, uint64_t now_us)
{
	return l->cur != NULL ? now_us - l->cur->created_us : 0;
}

int
link_sealv(struct link *l, const struct iovec *iov, int iovcnt, uint8_t *out,
    uint64_t *ret_counter)
{
	size_t len = 0, size;
	uint64_t ctr;

	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	size = len + FERRY_ENC_OVERHEAD;
	if (l->cur == NULL)
		return -ENOKEY;
	if (size > FERRY_MSG_SIZE_MAX)
		return -EMSGSIZE;
	ctr = l->tx_counter++;
	wire_put_hdr(out, (uint16_t)size, FERRY_P2P_ENC);
	wire_put32(out + 4, l->peer_index);
	wire_put32(out + 8, l->cur->tx_id);
	wire_put64(out + 12, ctr);
	if (aead_sealv(l->cur->tx, ctr, out, FERRY_ENC_HDR, iov, iovcnt,
		out + FERRY_ENC_HDR) < 0)
		return -EIO;
	*ret_counter = ctr;
	return (int)size;
}

int
link_seal(struct link *l, const void *pt, size_t len, uint8_t *out,
    uint64_t *ret_counter)
{
	struct iovec iov = { (void *)(uintptr_t)pt, len };

	return link_sealv(l, &iov, 1, out, ret_counter);
}

int
link_frame_index(const void *frame, size_t len, uint32_t *ret_index)
{
	const uint8_t *p = frame;

	if (len < FERRY_ENC_OVERHEAD || len > FERRY_MSG_SIZE_MAX ||
	    wire_get16(p) != len || wire_get16(p + 2) != FERRY_P2P_ENC)
		return -EBADMSG;
	*ret_index = wire_get32(p + 4);
	return 0;
}

int
link_open_to(struct link *l, const uint8_t *frame, size_t len, uint8_t *out,
    uint64_t now_us, size_t *ret_len, uint64_t *ret_counter)
{
	uint32_t index, key_id;
	struct keyset *ks;
	uint64_t ctr;
	int r;

	if (link_frame_index(frame, len, &index) < 0)
		return -EBADMSG;
	key_id = wire_get32(frame + 8);
	ctr = wire_get64(frame + 12);
	if (l->cur != NULL && l->cur->rx_id == key_id)
		ks = l->cur;
	else if (l->next != NULL && l->next->rx_id == key_id)
		ks = l->next;
	else if (l->prev != NULL && l->prev->rx_id == key_id)
		ks = l->prev;
	else
		return -ENOKEY;
	if (!replay_check(&ks->replay, ctr))
		return -EALREADY;
	r = aead_open(ks->rx, ctr, frame, FERRY_ENC_HDR, frame + FERRY_ENC_HDR,
	    len - FERRY_ENC_HDR, out);
	if (r < 0)
		return -EBADMSG;
	/* Only an authentic frame may move the window. */
	(void)replay_update(&ks->replay, ctr);
	*ret_len = len - FERRY_ENC_OVERHEAD;
	*ret_counter = ctr;
	if (ks == l->next) {
		link_promote(l, now_us);
		return LINK_KX_NEWKEYS;
	}
	return 0;
}

int
link_open(struct link *l, uint8_t *frame, size_t len, uint64_t now_us,
    size_t *ret_len, uint64_t *ret_counter)
{
	return link_open_to(l, frame, len, frame + FERRY_ENC_HDR, now_us,
	    ret_len, ret_counter);
}

void
link_expire(struct link *l, uint64_t now_us)
{
	if (l->prev != NULL && now_us >= l->prev_until_us) {
		keyset_free(l->prev);
		l->prev = NULL;
	}
}
