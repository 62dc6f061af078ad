/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Batching (seed 004, section II: "the core is responsible for queuing
 * multiple application messages into a larger message ... smaller than
 * the MTU"): packs a peer's queued messages into the plaintext of one
 * frame, cutting messages that do not fit into fragments. Core layer;
 * no I/O.
 */
#ifndef FERRY_CORE_BATCH_H
#define FERRY_CORE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/ack.h"

struct sendq;

/* The smallest fragment worth starting in the space left of a frame. */
#define BATCH_MIN_FRAG 64

/* A frame's plaintext as pieces: headers and small messages in a scratch
 * buffer, fragment bytes where their message keeps them (sealed from
 * there, not copied). */
#define BATCH_IOV_MAX (2 * SENT_MAX_ITEMS + 2)

struct batch_iov {
	struct iovec v[BATCH_IOV_MAX];
	int n;
	size_t len; /* sum of the pieces */
};

struct batch_counts {
	uint32_t msgs;	   /* whole messages packed */
	uint32_t frags;	   /* fragments packed (first transmission) */
	uint32_t retx;	   /* fragments packed again after a loss */
	uint64_t payload;  /* application bytes packed */
};

/*
 * Appends inner messages from q to the pieces in iov (which may hold
 * some already), adding at most max bytes. Headers and whole messages are
 * written to buf, scratch space of at least max bytes; fragment bytes are
 * pointed at in their message, which sf keeps referenced. A queued
 * message whose whole form (4 + len bytes) exceeds frame_cap, the
 * capacity of an empty frame on this path, is converted to a fragmented
 * one with id (*next_msg_id)++. Fragment pieces carried are recorded in
 * sf->items (at most SENT_MAX_ITEMS, each holding a reference) and
 * sf->eliciting is set if anything was packed. With ctrl_only, only
 * messages of SENDQ_CTRL are packed. Returns the bytes added.
 */
size_t batch_fill(struct sendq *q, uint8_t *buf, size_t max, size_t frame_cap,
    uint32_t *next_msg_id, struct sent_frame *sf, struct batch_counts *cnt,
    struct batch_iov *iov, bool ctrl_only);

#endif /* FERRY_CORE_BATCH_H */
