/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The sliding replay window of one receive key: counters more than
 * REPLAY_WINDOW behind the highest seen, and counters seen before, are
 * refused; anything newer or within the window and unseen is accepted, so
 * reordering over unreliable transports is fine. A bitmap of 128 words as
 * in RFC 6479; the window is 127 * 64 = 8128 frames (WireGuard's size).
 * Core layer.
 */
#ifndef FERRY_CORE_REPLAY_H
#define FERRY_CORE_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#define REPLAY_WORDS 128
#define REPLAY_WINDOW ((REPLAY_WORDS - 1) * 64)

struct replay {
	uint64_t top;		       /* highest counter accepted, + 1 */
	uint64_t bits[REPLAY_WORDS];   /* ring of seen-bits */
};

void replay_init(struct replay *r);
/* Would counter be accepted? (No state change: call before decrypting.) */
bool replay_check(const struct replay *r, uint64_t counter);
/* Records counter after the frame authenticated. False if it was a
 * replay or too old (the frame must then be dropped). */
bool replay_update(struct replay *r, uint64_t counter);

#endif /* FERRY_CORE_REPLAY_H */
