/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Internals of the UDP transport, shared by udp.c (the ABI), udp_session.c
 * (the bounded session table) and udp_io.c (sockets and batched I/O).
 * One datagram carries one unit of the core, untouched: the core's own
 * formats name the sender (seed 004, II-A, "UDP messages contain the
 * sender identity in every message").
 */
#ifndef FERRY_PLUGINS_UDP_INT_H
#define FERRY_PLUGINS_UDP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <ferry/transport.h>

#include "ipt.h"

#define UDP_RX_BATCH	64   /* datagrams per recvmmsg() */
#define UDP_RX_BUDGET	1024 /* datagrams per wake-up before yielding */

struct udp;
struct map;
struct event;

/* A remote endpoint. Referenced sessions belong to the core (refs > 0);
 * unreferenced ones are inbound, wait for associate() in the idle LRU and
 * may be evicted or time out. */
struct ferry_tsession {
	struct udp *u;			  /* owner */
	struct udp_sock *sock;		  /* the socket used to reach it */
	struct sockaddr_storage peer;	  /* remote address */
	socklen_t peer_len;		  /* its sockaddr length */
	uint8_t key[NETADDR_HELO_MAX];	  /* HELO form: the table key */
	uint8_t key_len;		  /* 7 or 19 */
	unsigned refs;			  /* connect + associate - disconnect */
	bool waiting;			  /* on sock->waiting */
	uint64_t last_us;		  /* last datagram in (idle ones) */
	TAILQ_ENTRY(ferry_tsession) all_link;  /* u->all */
	TAILQ_ENTRY(ferry_tsession) idle_link; /* u->idle while refs == 0 */
	TAILQ_ENTRY(ferry_tsession) wait_link; /* sock->waiting */
};

TAILQ_HEAD(udp_session_list, ferry_tsession);

/* One bound socket. */
struct udp_sock {
	struct udp *u;			/* owner */
	int fd;				/* -1 when closed */
	struct sockaddr_storage name;	/* bound name, actual port */
	struct event *ev_read;		/* persistent; added while serving */
	struct event *ev_write;		/* added while sessions wait */
	bool reading;			/* ev_read is added */
	struct udp_session_list waiting; /* got -EAGAIN, want send_ready */
};

/* Receive batch, reused for every recvmmsg(): no allocation per datagram. */
struct udp_rx {
	struct mmsghdr msgs[UDP_RX_BATCH];
	struct iovec iov[UDP_RX_BATCH];
	struct sockaddr_storage from[UDP_RX_BATCH];
	uint8_t *bufs;	/* UDP_RX_BATCH slots of `slot` bytes */
	size_t slot;	/* MTU + 1, so that oversize shows as truncation */
};

/* Counters "udp.<name>" (the core keeps units_in/bytes_in itself). */
struct udp_stats {
	uint64_t *rx_datagrams, *rx_bytes, *tx_datagrams, *tx_bytes;
	uint64_t *tx_eagain, *tx_errors;
	uint64_t *drop_oversize, *drop_table_full, *drop_blacklisted;
	uint64_t *drop_empty;
	uint64_t *sessions_created, *sessions_evicted, *sessions_timed_out;
};

/* Settings of the UDP-only keys. */
struct udp_settings {
	uint64_t rcvbuf, sndbuf; /* requested socket buffer bytes */
	size_t max_sessions;	 /* bound on the table for inbound sources */
};

struct udp {
	struct ferry_transport_api api;	 /* handed to the core */
	struct ipt ipt;			 /* common settings, log, counters */
	struct udp_settings set;	 /* UDP-only settings */
	struct udp_sock socks[IPT_BIND_MAX]; /* bound sockets */
	size_t n_socks;			 /* 0 until opened */
	struct map *sessions;		 /* key -> session */
	struct udp_session_list all;	 /* every session, for done */
	struct udp_session_list idle;	 /* unreferenced, oldest first */
	struct event *idle_timer;	 /* fires when the oldest expires */
	struct udp_rx rx;		 /* receive batch */
	struct udp_stats st;		 /* counters */
};

/*
 * udp_session.c
 */

/* Creates the table and its timer. 0 or -ENOMEM. */
int udp_session_init(struct udp *u);
/* Frees every session (without session_gone: the core is going away) and
 * the table. */
void udp_session_done(struct udp *u);
/* The session for a peer in HELO form, or NULL. */
struct ferry_tsession *udp_session_lookup(struct udp *u, const uint8_t *key,
    size_t key_len);
/* A new session for peer, sent to through sock, with refs references.
 * Inbound ones (refs == 0) reuse the least recently used idle session when
 * the table holds MAX_SESSIONS. 0 and *ret, -ENOBUFS when every session
 * is referenced (the table is full), -ENOMEM. */
int udp_session_new(struct udp *u, struct udp_sock *sock,
    const struct sockaddr_storage *peer, const uint8_t *key,
    size_t key_len, unsigned refs, struct ferry_tsession **ret);
/* Takes a reference; an idle session leaves the LRU. */
void udp_session_ref(struct ferry_tsession *ts);
/* Drops a reference; the last one frees the session. */
void udp_session_unref(struct ferry_tsession *ts);
/* Marks an idle session as just heard from. */
void udp_session_touch(struct ferry_tsession *ts, uint64_t now_us);
/* Re-applies MAX_SESSIONS and IDLE_TIMEOUT after a reload. */
void udp_session_reconfigure(struct udp *u);

/*
 * udp_io.c
 */

/* Opens the bound sockets if they are not open yet. 0 or negative errno
 * (logged). */
int udp_io_open(struct udp *u);
/* Starts / stops reading the sockets (they stay open for sending). */
void udp_io_serve(struct udp *u, bool on);
/* Closes every socket; sessions must be gone. */
void udp_io_close(struct udp *u);
/* Applies RCVBUF/SNDBUF to the open sockets. */
void udp_io_set_buffers(struct udp *u);
/* The open socket for family, or NULL. */
struct udp_sock *udp_io_sock_for(struct udp *u, int family);
/* Sends one datagram on ts. 0, -EAGAIN (ts then waits for send_ready),
 * -EMSGSIZE or another negative errno of the system. */
int udp_io_send(struct ferry_tsession *ts, const void *msg, size_t len);
/* Takes ts off its socket's waiting list. */
void udp_io_unwait(struct ferry_tsession *ts);

#endif /* FERRY_PLUGINS_UDP_INT_H */
