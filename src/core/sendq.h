/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A peer's send queue, core layer. Three classes, served in order:
 * control messages, retransmissions of lost fragments, then application
 * data. Data and retransmissions are bounded in bytes (payload plus a
 * cost per message, sendq_cost); past the bound
 * sendq_push refuses with -EAGAIN (nothing queued is ever dropped to make
 * room) and the owner tells the sender when there is room again
 * (DESIGN.md: the queues BPCC will stand on are bounded and observable).
 */
#ifndef FERRY_CORE_SENDQ_H
#define FERRY_CORE_SENDQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

/* A message too large for one frame, shared by its queued remainder and
 * the fragments of it in flight. */
struct outmsg {
	unsigned refs;	 /* holders; freed at zero */
	uint32_t msg_id; /* per peer, increasing */
	uint16_t type;
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
	uint8_t data[];	    /* small only */
};
TAILQ_HEAD(qmsg_list, qmsg);

enum sendq_class { SENDQ_CTRL, SENDQ_RETX, SENDQ_DATA, SENDQ_NCLASS };

struct sendq {
	struct qmsg_list q[SENDQ_NCLASS];
	uint64_t bytes;	  /* payload bytes in RETX and DATA */
	uint64_t limit;	  /* bound on bytes for SENDQ_DATA pushes */
	unsigned n_msgs;  /* items in all classes */
	bool over;	  /* a push was refused; a drain is owed */
};

/* What one queued message costs besides its payload (its struct and the
 * allocator's header): the bound counts it, so that empty messages
 * cannot grow a queue without limit. */
#define SENDQ_MSG_COST (sizeof(struct qmsg) + 16)

/* The bytes the limit is held against: payload plus SENDQ_MSG_COST per
 * item. */
static inline uint64_t
sendq_cost(const struct sendq *q)
{
	return q->bytes + (uint64_t)q->n_msgs * SENDQ_MSG_COST;
}

void sendq_init(struct sendq *q, uint64_t limit);
/* Frees every item and drops their references. */
void sendq_done(struct sendq *q);
/*
 * Queues a whole message (copied). With big, the message is kept as an
 * outmsg with msg_id, to be sent in fragments. -EAGAIN if a SENDQ_DATA
 * push would go over the limit (q->over is then set), -ENOMEM.
 */
int sendq_push(struct sendq *q, enum sendq_class cls, uint16_t type,
    const void *data, size_t len, bool big, uint32_t msg_id);
/* Queues the range [off, off + len) of m for retransmission, taking a
 * reference. 0 or -ENOMEM. */
int sendq_push_retx(struct sendq *q, struct outmsg *m, uint32_t off,
    uint32_t len);
/* The first item to send, or NULL. */
struct qmsg *sendq_head(struct sendq *q, enum sendq_class *ret_cls);
/* Removes (and frees) the head item of class cls. */
void sendq_pop(struct sendq *q, enum sendq_class cls);
/*
 * Removes what remains of every message sent in fragments and begun
 * already: all of SENDQ_RETX and the SENDQ_DATA items under way. Marks
 * those messages abandoned; returns how many were not marked before and
 * sets *ret_bytes to the bytes that left the queue.
 */
unsigned sendq_drop_started(struct sendq *q, uint64_t *ret_bytes);
/* Accounts n bytes of a big item as sent (they left the queue). */
void sendq_consumed(struct sendq *q, uint64_t n);
/* True if the queue fell below half its limit after being over it; clears
 * the flag (the caller then owes the drain notification). */
bool sendq_drained(struct sendq *q);
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
