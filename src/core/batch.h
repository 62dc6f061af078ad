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

struct sendq;
struct sent_frame;

/* The smallest fragment worth starting in the space left of a frame. */
#define BATCH_MIN_FRAG 64

struct batch_counts {
	uint32_t msgs;	   /* whole messages packed */
	uint32_t frags;	   /* fragments packed (first transmission) */
	uint32_t retx;	   /* fragments packed again after a loss */
	uint64_t payload;  /* application bytes packed */
};

/*
 * Appends inner messages from q to buf, using at most max bytes. A queued
 * message whose whole form (4 + len bytes) exceeds frame_cap, the
 * capacity of an empty frame on this path, is converted to a fragmented
 * one with id (*next_msg_id)++. Fragment pieces carried are recorded in
 * sf->items (at most SENT_MAX_ITEMS, each holding a reference) and
 * sf->eliciting is set if anything was packed. Returns the bytes used.
 */
size_t batch_fill(struct sendq *q, uint8_t *buf, size_t max, size_t frame_cap,
    uint32_t *next_msg_id, struct sent_frame *sf, struct batch_counts *cnt);

#endif /* FERRY_CORE_BATCH_H */
