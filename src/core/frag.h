/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Fragments of messages larger than a frame, and their reassembly, core
 * layer. FRAG inner message:
 *   4 u32 msg_id  8 u32 total_len  12 u32 offset  16 u16 type
 *  18 u16 reserved (0)  20 u8 data[]
 * Reassembly keeps the byte ranges received, so duplicates and overlaps
 * (a retransmission cut at other boundaries) are harmless; memory is
 * bounded per peer and in total, and a message without progress for the
 * timeout is dropped.
 */
#ifndef FERRY_CORE_FRAG_H
#define FERRY_CORE_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#define FRAG_HDR 20
#define REASM_MAX_RANGES 512 /* ranges one message may be in at once */
#define REASM_DONE_RING 64   /* recently completed ids, to drop stragglers */

struct frag {
	uint32_t msg_id;
	uint32_t total;
	uint32_t off;
	uint16_t type;
	const uint8_t *data;
	uint32_t len;
};

struct reasm {
	TAILQ_ENTRY(reasm) link;
	uint32_t msg_id;
	uint16_t type;
	uint32_t total;	 /* message length */
	uint32_t got;	 /* bytes received so far */
	uint8_t *buf;	 /* total bytes */
	uint64_t last_us; /* last progress */
	uint32_t (*ranges)[2]; /* sorted, disjoint [lo, hi) */
	unsigned n_ranges, cap_ranges;
};

struct reasm_budget {
	uint64_t used;	/* bytes held by all peers */
	uint64_t limit; /* REASSEMBLY_TOTAL */
};

struct reasm_set {
	TAILQ_HEAD(, reasm) list;
	uint64_t bytes; /* held for this peer */
	uint32_t done[REASM_DONE_RING];
	unsigned done_pos;
	unsigned done_n; /* slots of done[] in use */
};

/* Structure of a FRAG message: 0 or -EBADMSG. */
int frag_decode(const void *msg, size_t len, struct frag *ret);
/* Writes the FRAG_HDR bytes that come before len bytes of a fragment. */
void frag_write_header(uint8_t *out, uint32_t msg_id, uint32_t total,
    uint32_t off, uint16_t type, uint32_t len);
/* Writes a FRAG of data[off, off + len) of a total-byte message; returns
 * its size. The caller made room for FRAG_HDR + len. */
size_t frag_write(uint8_t *out, uint32_t msg_id, uint32_t total, uint32_t off,
    uint16_t type, const uint8_t *data, uint32_t len);

void reasm_init(struct reasm_set *rs);
/* Frees everything, returning its bytes to the budget. */
void reasm_clear(struct reasm_set *rs, struct reasm_budget *b);
/*
 * Adds a fragment. Returns 1 when the message is complete: *ret_buf (to
 * free() after use), *ret_len and *ret_type are set. Returns 0 when
 * stored or a duplicate; -ENOSPC when over the per-peer or total budget
 * (fragment dropped); -EBADMSG when inconsistent with earlier fragments
 * of the same message, -ERANGE when the message would be in more than
 * REASM_MAX_RANGES pieces at once (either drops the message); -ENOMEM.
 */
int reasm_add(struct reasm_set *rs, struct reasm_budget *b,
    uint64_t per_peer_limit, const struct frag *f, uint64_t now_us,
    uint8_t **ret_buf, size_t *ret_len, uint16_t *ret_type);
/* Drops messages idle longer than timeout; returns how many. */
unsigned reasm_expire(struct reasm_set *rs, struct reasm_budget *b,
    uint64_t now_us, uint64_t timeout_us);

#endif /* FERRY_CORE_FRAG_H */
