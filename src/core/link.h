/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The cryptographic state of one peer link: our ephemeral key for the
 * peer, the peer's latest authenticated KX, and up to three key sets
 * (current for sending and receiving; next, derived but not yet confirmed
 * by the peer; previous, kept for late frames). Core layer.
 *
 * Rules (DESIGN.md "Links are encrypted ..."): a KX is accepted when its
 * signature is good and its timestamp is newer than the last one accepted
 * from that peer and within the allowed clock skew. A side answers a KX
 * with its own when the peer's ephemeral key changed or the peer's echo
 * shows it lacks ours. A key set becomes current once the peer is known to
 * hold it: its KX echoes our ephemeral key, or a frame under it arrived.
 * This needs one message each way and no ordering, so it works by mail.
 */
#ifndef FERRY_CORE_LINK_H
#define FERRY_CORE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <ferry/proto.h>

#include "core/kx.h"
#include "core/replay.h"

struct aead;
struct identity;

struct keyset {
	struct aead *tx;	 /* sealing context */
	struct aead *rx;	 /* opening context */
	uint32_t tx_id;		 /* key_id we put in frames */
	uint32_t rx_id;		 /* key_id the peer puts in frames */
	struct replay replay;	 /* of rx */
	uint64_t created_us;	 /* monotonic */
	uint64_t tx_first;	 /* our counter when it became current */
	uint8_t peer_eph[KX_EPH_LEN]; /* the peer ephemeral it came from */
	uint8_t my_eph[KX_EPH_LEN];   /* and ours */
};

struct link {
	const struct identity *ident;	/* borrowed: us */
	struct ferry_peer_id peer;	/* whom this link is with */
	uint8_t *my_sk;			/* secret memory: our ephemeral */
	uint8_t my_eph[KX_EPH_LEN];	/* its public key */
	uint64_t my_eph_us;		/* when it was made (monotonic) */
	uint32_t my_flags;		/* FERRY_KX_F_* we announce */
	uint32_t my_index;		/* index the peer puts in its frames */
	uint64_t my_last_ts;		/* last timestamp we sent */
	bool have_peer;			/* a KX of the peer was accepted */
	uint8_t peer_eph[KX_EPH_LEN];
	uint32_t peer_flags;
	uint64_t peer_ts;		/* timestamp of that KX */
	uint32_t peer_index;		/* index we put in our frames */
	struct keyset *cur;		/* send and receive */
	struct keyset *next;		/* receive; send once confirmed */
	struct keyset *prev;		/* receive only, until prev_until */
	uint64_t prev_until_us;
	uint64_t tx_counter;		/* next frame counter, never reused */
};

/* What link_on_kx found. */
#define LINK_KX_REPLY	0x1 /* answer with our KX */
#define LINK_KX_NEWKEYS 0x2 /* a key set became current */
#define LINK_KX_RESET	0x4 /* the peer lost our keys (restart) */

/* Prepares a link with a fresh ephemeral key. 0 or -ENOMEM. */
int link_init(struct link *l, const struct identity *ident,
    const struct ferry_peer_id *peer, uint32_t my_index, uint64_t now_us);
/* Wipes all keys. */
void link_done(struct link *l);
/* Replaces our ephemeral key (rekey); the set it gives waits for the
 * peer's confirmation. 0 or -ENOMEM. */
int link_rotate(struct link *l, uint64_t now_us);
/* link_rotate to the ephemeral secret sk (copied into secret memory)
 * instead of a random one: the test vectors of ferry-protocol(7) fix our
 * ephemeral key this way, right after link_init. 0 or -ENOMEM. */
int link_rotate_to(struct link *l, const uint8_t sk[KX_EPH_LEN],
    uint64_t now_us);
/* Writes our KX (FERRY_KX_SIZE bytes) with a fresh timestamp. */
void link_build_kx(struct link *l, uint64_t now_real_us,
    uint8_t out[FERRY_KX_SIZE]);
/* Checks an authenticated KX's timestamp against the last one and the
 * clock: 0, or -EALREADY (old or replayed), -ERANGE (clock skew). */
int link_kx_fresh(const struct link *l, const struct kx_msg *m,
    uint64_t now_real_us, uint64_t max_skew_us);
/* Applies a fresh, authenticated KX of this peer. Returns LINK_KX_* bits
 * or -EBADMSG (degenerate key), -ENOMEM. */
int link_on_kx(struct link *l, const struct kx_msg *m, uint64_t now_us);
/* Can frames be sent? */
static inline bool
link_ready(const struct link *l)
{
	return l->cur != NULL;
}
/* Frames sent under the current key set so far. */
uint64_t link_tx_frames(const struct link *l);
/* Age of the current key set, or 0. */
uint64_t link_key_age(const struct link *l, uint64_t now_us);

/* Seals len bytes of plaintext inner messages into an ENC frame at out
 * (len + FERRY_ENC_OVERHEAD bytes; out must not overlap pt). Returns the
 * frame size, or -ENOKEY (no current keys), -EMSGSIZE, -EIO. Writes the
 * counter used to *ret_counter. */
int link_seal(struct link *l, const void *pt, size_t len, uint8_t *out,
    uint64_t *ret_counter);
/* link_seal for plaintext in pieces (none may overlap out). */
int link_sealv(struct link *l, const struct iovec *iov, int iovcnt,
    uint8_t *out, uint64_t *ret_counter);
/* Reads the receiver index of an ENC frame. 0 or -EBADMSG. */
int link_frame_index(const void *frame, size_t len, uint32_t *ret_index);
/* Opens an ENC frame into out (room for len - FERRY_ENC_OVERHEAD bytes;
 * out may be frame + FERRY_ENC_HDR to decrypt in place). On success
 * *ret_len says how long the plaintext is. Returns 0 or LINK_KX_NEWKEYS
 * (the frame confirmed the next key set), else -ENOKEY (unknown key id),
 * -EALREADY (replay or too old), -EBADMSG (forged or corrupt).
 * *ret_counter gets the frame's counter. */
int link_open_to(struct link *l, const uint8_t *frame, size_t len,
    uint8_t *out, uint64_t now_us, size_t *ret_len, uint64_t *ret_counter);
/* link_open_to in place: the plaintext starts at frame + FERRY_ENC_HDR. */
int link_open(struct link *l, uint8_t *frame, size_t len, uint64_t now_us,
    size_t *ret_len, uint64_t *ret_counter);
/* Drops the previous key set once its grace time is over. */
void link_expire(struct link *l, uint64_t now_us);

#endif /* FERRY_CORE_LINK_H */
