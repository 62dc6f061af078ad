/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Acknowledgements of frames sent over unreliable transports, core layer.
 * The receiver reports the counters it got as ranges (ACK); the sender
 * keeps a record of each frame in flight and learns from ACKs which
 * arrived and which were lost (three newer frames acknowledged, or 9/8 of
 * a round trip passed: the rules of RFC 9002 section 6). Lost fragments
 * are sent again; everything feeds the congestion window (cc.h).
 *
 * ACK inner message:
 *   4 u32 rwnd  8 u32 ack_delay_us  12 u64 largest  20 u32 first_len
 *  24 u16 n_more  26 u16 reserved  28 n_more x { u32 gap, u32 len }
 * first_len counters end at largest; each further range lies gap missing
 * counters below the previous one and holds len counters.
 */
#ifndef FERRY_CORE_ACK_H
#define FERRY_CORE_ACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACK_FIXED 28
#define ACK_MAX_RANGES 32
#define ACK_MAX_SIZE (ACK_FIXED + 8 * (ACK_MAX_RANGES - 1))
#define ACK_HISTORY 16384     /* counters below largest - this are forgotten */
#define ACK_EVERY 2	      /* ack at once after this many frames */
#define SENT_MAX_ITEMS 4      /* fragment pieces one frame may carry */
#define LOSS_PACKET_THRESHOLD 3

struct outmsg;

/* Receiver side. */
struct acktrack {
	uint64_t lo[ACK_MAX_RANGES]; /* ranges, newest first */
	uint64_t hi[ACK_MAX_RANGES];
	unsigned n;
	unsigned unacked;	/* ack-eliciting frames since the last ACK */
	bool out_of_order;	/* a gap appeared: ack at once */
	uint64_t largest_at_us;	/* when the largest counter arrived */
	uint64_t deadline_us;	/* delayed ACK due, 0 if none pending */
};

struct ack_msg {
	uint32_t rwnd;
	uint32_t delay_us;
	unsigned n;
	uint64_t lo[ACK_MAX_RANGES]; /* newest first */
	uint64_t hi[ACK_MAX_RANGES];
};

/* Sender side: one frame in flight. */
struct sent_item {
	struct outmsg *big; /* one reference */
	uint32_t off;
	uint32_t len;
};

struct sent_frame {
	uint64_t counter;
	uint64_t sent_us;
	uint32_t bytes;	 /* counted in flight */
	bool eliciting;	 /* expects an ACK */
	bool done;	 /* acknowledged or declared lost */
	uint8_t n_items;
	struct sent_item items[SENT_MAX_ITEMS];
};

struct inflight {
	struct sent_frame *ring; /* ordered by counter */
	size_t head, n, cap;
	uint64_t bytes;		 /* bytes of frames not yet done */
	unsigned eliciting;	 /* frames not yet done that expect an ACK */
	bool have_largest;
	uint64_t largest_acked;
	unsigned packet_threshold; /* a frame this many counters behind an
				    * acknowledged one is lost; 0: by time
				    * only (set for the path) */
	uint64_t pto_base_us;	 /* the probe timer runs from here: set when
				  * an ack-eliciting frame goes out with none
				  * before it, reset by progress or a probe,
				  * but not by later sends (RFC 6298 5.1) */
};

/* Called for each frame an ACK settles; acked false means lost. */
typedef void inflight_fn(void *cls, struct sent_frame *sf, bool acked);

void acktrack_init(struct acktrack *a);
/* Notes a received frame; eliciting frames schedule an ACK within
 * max_delay_us (at once after ACK_EVERY or a gap). */
void acktrack_on_frame(struct acktrack *a, uint64_t counter, bool eliciting,
    uint64_t now_us, uint64_t max_delay_us);
/* Writes an ACK (at most max bytes) and clears what was owed. Returns its
 * size, or 0 if there is nothing to acknowledge or no room. */
size_t acktrack_write(struct acktrack *a, uint8_t *out, size_t max,
    uint32_t rwnd, uint64_t now_us);
/* Owes the peer an ACK now although nothing new arrived: a window
 * update. No effect before the first frame. */
void acktrack_force(struct acktrack *a, uint64_t now_us);
static inline bool
acktrack_pending(const struct acktrack *a)
{
	return a->deadline_us != 0;
}

/* Decodes an ACK: 0 or -EBADMSG. */
int ack_decode(const void *msg, size_t len, struct ack_msg *ret);

void inflight_init(struct inflight *f);
/* Calls fn(acked false) for every frame still in flight, then frees. */
void inflight_done(struct inflight *f, inflight_fn *fn, void *cls);
/* Records a frame (copied). 0 or -ENOMEM. */
int inflight_add(struct inflight *f, const struct sent_frame *sf);
/*
 * Applies an ACK: fn for each frame newly acknowledged, then for each
 * that is now lost by the packet or time threshold (loss_delay_us).
 * *ret_rtt_us gets an RTT sample (0 if none): the time since the largest
 * acknowledged frame left, when that frame was newly acknowledged and
 * expected an ACK.
 */
void inflight_on_ack(struct inflight *f, const struct ack_msg *a,
    uint64_t now_us, uint64_t loss_delay_us, inflight_fn *fn, void *cls,
    uint64_t *ret_rtt_us);
/* Declares lost what the time threshold says is lost by now. Returns the
 * earliest time a frame will become lost, 0 if none. */
uint64_t inflight_detect(struct inflight *f, uint64_t now_us,
    uint64_t loss_delay_us, inflight_fn *fn, void *cls);
/* Declares every frame in flight lost (path failure). */
void inflight_lose_all(struct inflight *f, inflight_fn *fn, void *cls);

#endif /* FERRY_CORE_ACK_H */
