/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transport plugin ABI: what ferryd's core offers a transport and what
 * a transport offers the core (seed 004, Fig. 2 and Fig. 3). A published
 * interface: both structs only ever grow at the end, and a member is used
 * only when the other side's `size` covers it (FERRY_HAS).
 *
 * Semantics (DESIGN.md): delivery is unreliable and unordered; the core
 * hands send() whole units of at most `mtu` bytes, and the receiving
 * plugin hands receive() the same bytes in one piece. connect() and
 * associate() add a reference to a session, disconnect() drops one; an
 * inbound session the core never associates times out in the plugin.
 *
 * Re-entrancy: a plugin calls the core's callbacks only from its own
 * event handlers, never from inside a function the core called (send()
 * that fails reports it by its return value, not by session_gone()).
 * The core never calls the plugin from inside receive() other than
 * associate(), send(), connect() and recv_pause().
 */
#ifndef FERRY_TRANSPORT_H
#define FERRY_TRANSPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/proto.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FERRY_TRANSPORT_ABI_VERSION 1 /* bump on any incompatible change */

#define FERRY_EXPORT __attribute__((visibility("default")))

/* True if the struct behind `p` is large enough to hold `member`. */
#define FERRY_HAS(p, type, member)                                           \
	((p)->size >= offsetof(type, member) + sizeof(((type *)0)->member))

struct event_base;
struct ferry_tsession; /* defined by each plugin, opaque to the core */

/* Log levels, numerically equal to syslog's. */
#define FERRY_LOG_ERR		3
#define FERRY_LOG_WARNING	4
#define FERRY_LOG_NOTICE	5
#define FERRY_LOG_INFO		6
#define FERRY_LOG_DEBUG		7

/* Transport capability bits (ferry_transport_api.caps). */
#define FERRY_TCAP_RELIABLE	0x1 /* in order, no loss while the session lives */
#define FERRY_TCAP_INBOUND_REPLY 0x2 /* send() works on inbound sessions */
#define FERRY_TCAP_HIGH_LATENCY	0x4 /* seconds, not milliseconds (mail) */
#define FERRY_TCAP_CRC		0x8 /* carries is_encrypted and crc (Fig. 2) */

/*
 * One received unit: the paper's MessagePack. Everything is borrowed for
 * the duration of the receive() call.
 */
struct ferry_message_pack {
	struct ferry_tsession *ts;	   /* arrival session; NULL if none */
	const struct ferry_peer_id *sender; /* claimed by the framing, or NULL */
	const void *msg;		   /* the unit as the sender sent it */
	size_t len;			   /* its length in bytes */
	bool is_encrypted;		   /* as passed to send(), if carried */
	uint32_t crc;			   /* as passed to send(), if carried */
	const void *src;		   /* origin for per-source limits, or NULL */
	size_t src_len;			   /* length of src */
};

/* A configuration key of a transport's own section, for docs and checks. */
struct ferry_cfg_key {
	const char *name; /* e.g. "PORT"; NULL ends a table */
	const char *def;  /* compiled-in default, NULL if none */
	const char *help; /* one line */
};

/* What the core gives a transport (the paper's CoreAPIForTransport). */
struct ferry_core_api {
	uint32_t abi_version;		    /* FERRY_TRANSPORT_ABI_VERSION */
	uint32_t size;			    /* sizeof(struct ferry_core_api) */
	void *cls;			    /* first argument of every callback */
	const struct ferry_peer_id *my_identity; /* this peer */
	struct event_base *base;	    /* the daemon's libevent loop */
	/* Hands one received unit to the core. NULL in stub mode: the plugin
	 * then only checks and formats addresses and opens no sockets. */
	void (*receive)(void *cls, const struct ferry_message_pack *mp);
	/* A session died or timed out; the core drops its references and
	 * must not pass ts to the plugin again. */
	void (*session_gone)(void *cls, struct ferry_tsession *ts);
	/* send() on ts returned -EAGAIN before and there is room now. */
	void (*send_ready)(void *cls, struct ferry_tsession *ts);
	/* Value of `key` in this transport's section as the configuration
	 * sets it, else NULL: the plugin applies its own default. The string
	 * stays valid until the next reload_config() returns. */
	const char *(*cfg_get)(void *cls, const char *key);
	/* Logs one line under the transport's name. */
	void (*vlog)(void *cls, int level, const char *fmt, va_list ap);
	/* A statistics counter "<transport>.<name>", created on first use.
	 * The pointer stays valid until done_transport() returns. NULL only
	 * on allocation failure. */
	uint64_t *(*stat)(void *cls, const char *name);
	/* Lines above *log_level are dropped; a plugin may skip formatting
	 * them. Points into the core, which may change it at any time. */
	const int *log_level;
};

/* What a transport gives the core (the paper's TransportAPI). */
struct ferry_transport_api {
	uint32_t abi_version; /* FERRY_TRANSPORT_ABI_VERSION as built */
	uint32_t size;	      /* sizeof(struct ferry_transport_api) */
	const char *name;     /* "udp"; matches the [transport-NAME] section */
	uint16_t protocol;    /* FERRY_PROTO_* */
	uint32_t mtu;	      /* largest unit send() takes; may change on reload */
	uint32_t cost;	      /* relative cost; the core prefers the lowest */
	uint32_t caps;	      /* FERRY_TCAP_* */
	const struct ferry_cfg_key *keys; /* may be NULL */
	void *cls;	      /* plugin state, first argument of every call */

	/* Checks the form of an address from a HELO and the blacklist.
	 * 0 if usable, -EINVAL if malformed, -EPERM if blacklisted. */
	int (*verify_helo)(void *cls, const void *addr, size_t len);
	/* Writes the address to advertise, at most max bytes. 0 on success,
	 * -ENOENT if this transport advertises nothing (NAT, send-only),
	 * -ENOSPC if max is too small. ret_len is written only on success. */
	int (*create_helo)(void *cls, void *addr, size_t max, size_t *ret_len);
	/* Formats an address for humans into buf (NUL-terminated).
	 * 0 or -EINVAL. */
	int (*address_to_string)(void *cls, const void *addr, size_t len,
	    char *buf, size_t size);
	/* Opens (or reuses) a session to addr and takes a reference on it.
	 * 0, -EINVAL, -EPERM (blacklisted), -ENOMEM or an errno of the
	 * system. Not available in stub mode. */
	int (*connect)(void *cls, const void *addr, size_t len,
	    struct ferry_tsession **ret_ts);
	/* Takes a reference on a live session, one that arrived in
	 * receive() or one connect() returned. 0, or -ENOTCONN if it is
	 * already gone. */
	int (*associate)(void *cls, struct ferry_tsession *ts);
	/* Sends one unit; msg is borrowed for the call only. 0 when taken,
	 * -EMSGSIZE over mtu, -EAGAIN when the session's queue is full
	 * (send_ready follows), -ENOTCONN when the session is dead, other
	 * negative errno on failure. is_encrypted and crc are the paper's
	 * fields; crc is computed by the core only for FERRY_TCAP_CRC. */
	int (*send)(void *cls, struct ferry_tsession *ts, const void *msg,
	    size_t len, bool is_encrypted, uint32_t crc);
	/* Drops one reference; the last one closes and frees the session
	 * (no session_gone follows for it). Always 0. */
	int (*disconnect)(void *cls, struct ferry_tsession *ts);
	/* Opens listening sockets / inboxes. 0 or negative errno. */
	int (*start_server)(void *cls);
	/* Closes them; sessions may still send. Always 0. */
	int (*stop_server)(void *cls);
	/* Re-reads the section through cfg_get. 0, or negative errno with the
	 * old settings kept. */
	int (*reload_config)(void *cls);
	/* Writes the remote address of a session in HELO form. May be NULL.
	 * 0, -ENOENT if unknown, -ENOSPC. */
	int (*session_address)(void *cls, struct ferry_tsession *ts,
	    void *addr, size_t max, size_t *ret_len);
	/* Writes the i-th (from 0) of the addresses to advertise, as
	 * create_helo writes the first: a dual-stack host has several.
	 * -ENOENT past the last. May be NULL: create_helo's address is then
	 * the only one. */
	int (*create_helo_at)(void *cls, unsigned i, void *addr, size_t max,
	    size_t *ret_len);
	/* Stops (pause true) or resumes reading from a session, so that a
	 * stream transport's own flow control holds the sender back when
	 * the core cannot take more (back-pressure by not reading). Units
	 * already read may still arrive until the call returns. May be NULL;
	 * a datagram transport leaves it NULL, as not reading would only lose
	 * datagrams. 0 or -ENOTCONN. */
	int (*recv_pause)(void *cls, struct ferry_tsession *ts, bool pause);
};

/*
 * The one symbol a plugin exports, plus its unload function. The core
 * pointer stays valid until done_transport() returns. Returns NULL on
 * failure after logging the cause through core->vlog.
 */
FERRY_EXPORT struct ferry_transport_api *init_transport(
    const struct ferry_core_api *core);
/* Stops the transport and frees everything it owns, sessions included. */
FERRY_EXPORT void done_transport(struct ferry_transport_api *api);

typedef struct ferry_transport_api *init_transport_fn(
    const struct ferry_core_api *core);
typedef void done_transport_fn(struct ferry_transport_api *api);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_TRANSPORT_H */
