/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A peer's send queue, core layer. Three classes:
 *   SENDQ_CTRL     the core's own messages (keepalives, HELOs, echo);
 *                  not bounded, always served first;
 *   SENDQ_CONTROL  the layers' small, urgent messages (CORE_CLASS_CONTROL:
 *                  a DHT's requests and answers);
 *   SENDQ_BULK     the layers' data (CORE_CLASS_BULK: core_send).
 * Within a class, lost fragments to send again go before new messages.
 * CONTROL and BULK are bounded each on its own, in bytes (payload plus a
 * cost per message, sendq_cost); past its bound sendq_push refuses with
 * -EAGAIN (nothing queued is ever dropped to make room) and the owner
 * tells that class's senders when there is room again (DESIGN.md: the
 * queues BPCC will stand on are bounded and observable).
 *
 * Scheduling is strict priority, CTRL, then CONTROL, then BULK, with a
 * guard: once the classes above BULK (CTRL aside) have handed out
 * SENDQ_GUARD_BYTES while BULK waited, BULK's next item or piece goes
 * first and the count starts again. So a request overtakes megabytes of
 * queued data, and a flood of requests slows data down (to one piece, at
 * most a frame, per SENDQ_GUARD_BYTES) but never stops it.
 */
#ifndef FERRY_CORE_SENDQ_H
#define FERRY_CORE_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#define SENDQ_GUARD_BYTES (16 * 1024)

enum sendq_class { SENDQ_CTRL, SENDQ_CONTROL, SENDQ_BULK, SENDQ_NCLASS };

/* A message too large for one frame, shared by its queued remainder and
 * the fragments of it in flight. */
struct outmsg {
	unsigned refs;	 /* holders; freed at zero */
	uint32_t msg_id; /* per peer, increasing */
	uint16_t type;
	uint8_t cls;	 /* enum sendq_class: where its resends go */
	uint32_t len;
	bool abandoned;	 /* given up: the peer restarted part-way */
	uint8_t data[];
};

struct qmsg {
	TAILQ_ENTRY(qmsg) link;
	struct outmsg *big; /* fragment source (one reference), or NULL */
	uint32_t off;	    /* big: next byte to send */
	uint32_t len;	    /* small: payload bytes; big: end of the range */
	uint16_t type;	    /* small only */
	bool resend;	    /* big: a lost range, sent again */
	uint8_t data[];	    /* small only */
};
TAILQ_HEAD(qmsg_list, qmsg);

/* One class of the queue. */
struct sendq_lane {
	struct qmsg_list retx; /* pieces of big messages to send again */
	struct qmsg_list msgs; /* messages, in push order */
	uint64_t bytes;	       /* payload in both lists, not yet sent */
	unsigned n_msgs;       /* items in both lists */
	uint64_t limit;	       /* bound of sendq_cost for pushes */
	uint64_t waited;       /* bytes handed out above it while it
				* waited (the guard; BULK only) */
	bool over;	       /* a push was refused: a drain is owed */
};

struct sendq {
	struct sendq_lane lane[SENDQ_NCLASS];
	uint64_t bytes;	 /* payload in every class */
	unsigned n_msgs; /* items in every class */
};

/* What one queued message costs besides its payload (its struct and the
 * allocator's header): the bound counts it, so that empty messages
 * cannot grow a queue without limit. */
#define SENDQ_MSG_COST (sizeof(struct qmsg) + 16)

/* The bytes class cls's limit is held against: its payload plus
 * SENDQ_MSG_COST per item. */
static inline uint64_t
sendq_cost(const struct sendq *q, enum sendq_class cls)
{
	const struct sendq_lane *l = &q->lane[cls];

	return l->bytes + (uint64_t)l->n_msgs * SENDQ_MSG_COST;
}

/* An empty queue without bounds. */
void sendq_init(struct sendq *q);
/* Bounds class cls (not SENDQ_CTRL) at limit; what is queued stays. */
void sendq_set_limit(struct sendq *q, enum sendq_class cls, uint64_t limit);
/* Frees every item and drops their references. */
void sendq_done(struct sendq *q);
/*
 * Queues a whole message (copied) in class cls. With big, the message is
 * kept as an outmsg with msg_id, to be sent in fragments. -EAGAIN if the
 * class is not empty and the message would take it over its limit (its
 * over flag is then set), -ENOMEM.
 */
int sendq_push(struct sendq *q, enum sendq_class cls, uint16_t type,
    const void *data, size_t len, bool big, uint32_t msg_id);
/* Queues the range [off, off + len) of m to send again, in m's class
 * ahead of its new messages, taking a reference. 0 or -ENOMEM. */
int sendq_push_retx(struct sendq *q, struct outmsg *m, uint32_t off,
    uint32_t len);
/* The next item to send as the scheduling above says, or NULL. */
struct qmsg *sendq_head(struct sendq *q, enum sendq_class *ret_cls);
/* Turns the item sendq_head gave for cls, a whole message, into a big
 * one with msg_id, in place. The new item, or NULL on OOM (unchanged). */
struct qmsg *sendq_make_big(struct sendq *q, enum sendq_class cls,
    uint32_t msg_id);
/* Removes (and frees) the item sendq_head gave for cls: it was sent,
 * and what was not yet accounted of it counts as handed out. */
void sendq_pop(struct sendq *q, enum sendq_class cls);
/* Accounts n bytes of the big item sendq_head gave for cls as handed out
 * (they left the queue). */
void sendq_consumed(struct sendq *q, enum sendq_class cls, uint64_t n);
/*
 * Removes what remains of every message sent in fragments and begun
 * already: all resends and the big items under way, in every class.
 * Marks those messages abandoned; returns how many were not marked
 * before and sets *ret_bytes to the bytes that left the queue.
 */
unsigned sendq_drop_started(struct sendq *q, uint64_t *ret_bytes);
/* True if class cls fell to half its limit after a push was refused;
 * clears the flag (the caller then owes the drain notification). */
bool sendq_drained(struct sendq *q, enum sendq_class cls);
static inline bool
sendq_empty(const struct sendq *q)
{
	return q->n_msgs == 0;
}

void outmsg_ref(struct outmsg *m);
/* Marks m given up; true the first time, so that callers count it once. */
bool outmsg_abandon(struct outmsg *m);
void outmsg_unref(struct outmsg *m);

#endif /* FERRY_CORE_SENDQ_H */
