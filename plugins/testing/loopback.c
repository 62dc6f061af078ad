/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A loopback transport for the tests, loaded as "test": a unit sent to
 * this plugin's own address comes back to the core through the event loop,
 * on a paired inbound session, as if it had crossed a network. Tests use
 * it to drive the core without sockets. Built again with one defect each
 * (LOOPBACK_DEFECT_*, see CMakeLists.txt) for the loader's tests. Follows
 * the plugin ABI of <ferry/transport.h> (seed 004, Fig. 2 and 3), except
 * that an inbound session the core never associates lives as long as its
 * pair instead of timing out: test runs are short.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include <ferry/transport.h>

#ifndef LOOPBACK_NAME
#define LOOPBACK_NAME "test" /* what api->name says */
#endif

#define LOOPBACK_PREFIX     "loop:"
#define LOOPBACK_PREFIX_LEN 5
#define LOOPBACK_LABEL_MAX  32
#define LOOPBACK_ADDR_MAX   (LOOPBACK_PREFIX_LEN + LOOPBACK_LABEL_MAX)
#define LOOPBACK_QUEUE_MAX  64
#define LOOPBACK_MTU_MIN    548
#define LOOPBACK_MTU_MAX    65535
#define LOOPBACK_COST       1

struct loopback;

struct ferry_tsession {
	struct loopback *lb;         /* owner */
	struct ferry_tsession *next; /* in lb->sessions */
	struct ferry_tsession *peer; /* the other end; NULL once closed */
	unsigned refs;               /* references the core holds */
	bool inbound;                /* created by a connect() to us */
	bool blocked;                /* send() said -EAGAIN: send_ready owed */
	bool gone;                   /* closed by the peer: session_gone owed */
	char addr[LOOPBACK_ADDR_MAX]; /* remote address, HELO form */
	size_t addr_len;
};

struct loopback_unit {
	struct loopback_unit *next;
	struct ferry_tsession *to; /* receiving end */
	bool is_encrypted;         /* as passed to send() */
	uint32_t crc;              /* as passed to send() */
	size_t len;
	uint8_t data[];
};

struct loopback {
	struct ferry_transport_api api;    /* handed to the core; first */
	const struct ferry_core_api *core; /* borrowed until done_transport */
	struct event *deliver;        /* runs the queue; NULL in stub mode */
	bool listening;               /* between start and stop_server */
	char addr[LOOPBACK_ADDR_MAX]; /* our address, "loop:LABEL" */
	size_t addr_len;
	char blacklist[256];             /* labels verify_helo refuses */
	struct ferry_tsession *sessions; /* both ends of every pair */
	struct loopback_unit *head;      /* units in flight, oldest first */
	struct loopback_unit **tail;
	size_t queued;
	uint64_t *stat_delivered; /* "<name>.delivered" */
};

static const struct ferry_cfg_key loopback_keys[] = {
	{ "ADDRESS", "self", "label this transport answers to (loop:LABEL)" },
	{ "MTU", "1400", "largest unit send() takes" },
	{ "BLACKLIST", "", "labels whose addresses verify_helo refuses" },
	{ NULL, NULL, NULL },
};

static void loopback_log(struct loopback *lb, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
loopback_log(struct loopback *lb, int level, const char *fmt, ...)
{
	va_list ap;

	if (level > *lb->core->log_level)
		return;
	va_start(ap, fmt);
	lb->core->vlog(lb->core->cls, level, fmt, ap);
	va_end(ap);
}

static const char *
loopback_cfg(struct loopback *lb, const char *key, const char *def)
{
	const char *v = lb->core->cfg_get(lb->core->cls, key);

	return v != NULL ? v : def;
}

static bool
loopback_label_ok(const char *s, size_t len)
{
	if (len == 0 || len > LOOPBACK_LABEL_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		        (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
		        s[i] == '_'))
			return false;
	return true;
}

/* Checks "loop:LABEL"; sets the label on success. */
static int
loopback_parse(const void *addr, size_t len, const char **ret_label,
    size_t *ret_len)
{
	const char *a = addr;

	if (len <= LOOPBACK_PREFIX_LEN || len > LOOPBACK_ADDR_MAX ||
	    memcmp(a, LOOPBACK_PREFIX, LOOPBACK_PREFIX_LEN) != 0 ||
	    !loopback_label_ok(a + LOOPBACK_PREFIX_LEN,
	        len - LOOPBACK_PREFIX_LEN))
		return -EINVAL;
	*ret_label = a + LOOPBACK_PREFIX_LEN;
	*ret_len = len - LOOPBACK_PREFIX_LEN;
	return 0;
}

static bool
loopback_listed(const char *list, const char *label, size_t len)
{
	const char *p = list;

	while (*p != '\0') {
		size_t n;

		p += strspn(p, " \t,");
		n = strcspn(p, " \t,");
		if (n == len && memcmp(p, label, len) == 0)
			return true;
		p += n;
	}
	return false;
}

/* Reads the section into lb, or leaves lb alone and returns -EINVAL. */
static int
loopback_configure(struct loopback *lb)
{
	const char *label = loopback_cfg(lb, "ADDRESS", "self");
	const char *mtu_s = loopback_cfg(lb, "MTU", "1400");
	const char *black = loopback_cfg(lb, "BLACKLIST", "");
	unsigned long mtu;
	char *end;

	if (!loopback_label_ok(label, strlen(label))) {
		loopback_log(lb, FERRY_LOG_ERR,
		    "ADDRESS '%s': use 1 to %d of a-z, 0-9, '-' and '_'", label,
		    LOOPBACK_LABEL_MAX);
		return -EINVAL;
	}
	errno = 0;
	mtu = strtoul(mtu_s, &end, 10);
	if (errno != 0 || end == mtu_s || *end != '\0' ||
	    mtu < LOOPBACK_MTU_MIN || mtu > LOOPBACK_MTU_MAX) {
		loopback_log(lb, FERRY_LOG_ERR, "MTU '%s': expected %d to %d",
		    mtu_s, LOOPBACK_MTU_MIN, LOOPBACK_MTU_MAX);
		return -EINVAL;
	}
	if (strlen(black) >= sizeof(lb->blacklist)) {
		loopback_log(lb, FERRY_LOG_ERR, "BLACKLIST is too long");
		return -EINVAL;
	}
	lb->addr_len = (size_t)snprintf(lb->addr, sizeof(lb->addr), "%s%s",
	    LOOPBACK_PREFIX, label);
	lb->api.mtu = (uint32_t)mtu;
#ifdef LOOPBACK_DEFECT_LOW_MTU
	lb->api.mtu = 500;
#endif
	(void)snprintf(lb->blacklist, sizeof(lb->blacklist), "%s", black);
	return 0;
}

static int
loopback_verify_helo(void *cls, const void *addr, size_t len)
{
	struct loopback *lb = cls;
	const char *label;
	size_t llen;

	if (loopback_parse(addr, len, &label, &llen) < 0)
		return -EINVAL;
	if (loopback_listed(lb->blacklist, label, llen))
		return -EPERM;
	return 0;
}

static int
loopback_create_helo(void *cls, void *addr, size_t max, size_t *ret_len)
{
	struct loopback *lb = cls;

	if (max < lb->addr_len)
		return -ENOSPC;
	memcpy(addr, lb->addr, lb->addr_len);
	*ret_len = lb->addr_len;
	return 0;
}

static int
loopback_address_to_string(void *cls, const void *addr, size_t len, char *buf,
    size_t size)
{
	const char *label;
	size_t llen;
	int n;

	(void)cls;
	if (loopback_parse(addr, len, &label, &llen) < 0)
		return -EINVAL;
	n = snprintf(buf, size, "%.*s", (int)len, (const char *)addr);
	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

static struct ferry_tsession *
loopback_session_new(struct loopback *lb, bool inbound, const char *addr,
    size_t len)
{
	struct ferry_tsession *ts = calloc(1, sizeof(*ts));

	if (ts == NULL)
		return NULL;
	ts->lb = lb;
	ts->inbound = inbound;
	memcpy(ts->addr, addr, len);
	ts->addr_len = len;
	ts->next = lb->sessions;
	lb->sessions = ts;
	return ts;
}

/* Unlinks and frees ts and the units still on their way to it. */
static void
loopback_session_free(struct ferry_tsession *ts)
{
	struct loopback *lb = ts->lb;
	struct ferry_tsession **pp;
	struct loopback_unit **up = &lb->head, *u;

	for (pp = &lb->sessions; *pp != NULL; pp = &(*pp)->next)
		if (*pp == ts) {
			*pp = ts->next;
			break;
		}
	lb->tail = &lb->head;
	while ((u = *up) != NULL) {
		if (u->to == ts) {
			*up = u->next;
			lb->queued--;
			free(u);
			continue;
		}
		up = &u->next;
		lb->tail = &u->next;
	}
	free(ts);
}

/* Closes the pair ts belongs to: ts goes now. The other end goes too if
 * the core holds no reference to it; else the core hears of it from the
 * event loop (never from inside a call it made) and it goes then. */
static void
loopback_close(struct ferry_tsession *ts)
{
	struct loopback *lb = ts->lb;
	struct ferry_tsession *other = ts->peer;

	loopback_session_free(ts);
	if (other == NULL)
		return;
	other->peer = NULL;
	if (other->refs == 0) {
		loopback_session_free(other);
		return;
	}
	other->gone = true;
	event_active(lb->deliver, EV_TIMEOUT, 0);
}

/* Reports the sessions whose other end closed. The core may close more
 * from session_gone, so the walk starts over after each. */
static void
loopback_report_gone(struct loopback *lb)
{
	struct ferry_tsession *ts;

	for (;;) {
		for (ts = lb->sessions; ts != NULL && !ts->gone; ts = ts->next)
			;
		if (ts == NULL)
			return;
		ts->gone = false;
		lb->core->session_gone(lb->core->cls, ts);
		loopback_session_free(ts);
	}
}

static int
loopback_connect(void *cls, const void *addr, size_t len,
    struct ferry_tsession **ret_ts)
{
	struct loopback *lb = cls;
	struct ferry_tsession *out, *in;
	int r;

	if (lb->deliver == NULL)
		return -EOPNOTSUPP;
	r = loopback_verify_helo(lb, addr, len);
	if (r < 0)
		return r;
	/* Only our own address has a listener on this "network". */
	if (!lb->listening || len != lb->addr_len ||
	    memcmp(addr, lb->addr, len) != 0)
		return -ECONNREFUSED;
	for (out = lb->sessions; out != NULL; out = out->next)
		if (!out->inbound && out->peer != NULL &&
		    out->addr_len == len && memcmp(out->addr, addr, len) == 0) {
			out->refs++;
			*ret_ts = out;
			return 0;
		}
	out = loopback_session_new(lb, false, addr, len);
	if (out == NULL)
		return -ENOMEM;
	in = loopback_session_new(lb, true, lb->addr, lb->addr_len);
	if (in == NULL) {
		loopback_session_free(out);
		return -ENOMEM;
	}
	out->peer = in;
	in->peer = out;
	out->refs = 1;
	*ret_ts = out;
	return 0;
}

static int
loopback_associate(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	if (ts->peer == NULL)
		return -ENOTCONN;
	ts->refs++;
	return 0;
}

static int
loopback_send(void *cls, struct ferry_tsession *ts, const void *msg, size_t len,
    bool is_encrypted, uint32_t crc)
{
	struct loopback *lb = cls;
	struct loopback_unit *u;

	if (len > lb->api.mtu)
		return -EMSGSIZE;
	if (ts->peer == NULL)
		return -ENOTCONN;
	if (lb->queued >= LOOPBACK_QUEUE_MAX) {
		ts->blocked = true;
		return -EAGAIN;
	}
	u = malloc(sizeof(*u) + len);
	if (u == NULL)
		return -ENOMEM;
	u->next = NULL;
	u->to = ts->peer;
	u->is_encrypted = is_encrypted;
	u->crc = crc;
	u->len = len;
	memcpy(u->data, msg, len);
	*lb->tail = u;
	lb->tail = &u->next;
	lb->queued++;
	event_active(lb->deliver, EV_TIMEOUT, 0);
	return 0;
}

static int
loopback_disconnect(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	if (ts->refs == 0)
		return 0;
	if (--ts->refs == 0)
		loopback_close(ts);
	return 0;
}

static int
loopback_start_server(void *cls)
{
	struct loopback *lb = cls;

	lb->listening = true;
	return 0;
}

static int
loopback_stop_server(void *cls)
{
	struct loopback *lb = cls;

	lb->listening = false;
	return 0;
}

static int
loopback_reload_config(void *cls)
{
	return loopback_configure(cls);
}

static int
loopback_session_address(void *cls, struct ferry_tsession *ts, void *addr,
    size_t max, size_t *ret_len)
{
	(void)cls;
	if (max < ts->addr_len)
		return -ENOSPC;
	memcpy(addr, ts->addr, ts->addr_len);
	*ret_len = ts->addr_len;
	return 0;
}

/* Pays the send_ready callbacks owed once the queue has room again. A
 * callback may close sessions, so the walk starts over after each. */
static void
loopback_unblock(struct loopback *lb)
{
	struct ferry_tsession *ts;

	while (lb->queued < LOOPBACK_QUEUE_MAX) {
		for (ts = lb->sessions; ts != NULL && !ts->blocked;
		     ts = ts->next)
			;
		if (ts == NULL)
			return;
		ts->blocked = false;
		if (ts->peer != NULL)
			lb->core->send_ready(lb->core->cls, ts);
	}
}

/* The plugin's one event handler: delivers the units queued before this
 * call (units sent from within receive() wait for the next round, so two
 * ends that answer each other cannot starve the loop), then pays the
 * send_ready and session_gone callbacks owed. */
static void
loopback_deliver(evutil_socket_t fd, short what, void *cls)
{
	struct loopback *lb = cls;
	size_t n = lb->queued;

	(void)fd;
	(void)what;
	while (n-- > 0 && lb->head != NULL) {
		struct loopback_unit *u = lb->head;
		struct ferry_message_pack mp;

		lb->head = u->next;
		if (lb->head == NULL)
			lb->tail = &lb->head;
		lb->queued--;
		memset(&mp, 0, sizeof(mp));
		mp.ts = u->to;
		mp.msg = u->data;
		mp.len = u->len;
		mp.is_encrypted = u->is_encrypted;
		mp.crc = u->crc;
		mp.src = u->to->addr;
		mp.src_len = u->to->addr_len;
		if (lb->stat_delivered != NULL)
			(*lb->stat_delivered)++;
		lb->core->receive(lb->core->cls, &mp);
		free(u);
	}
	if (lb->head != NULL)
		event_active(lb->deliver, EV_TIMEOUT, 0);
	loopback_unblock(lb);
	loopback_report_gone(lb);
}

static void
loopback_free(struct loopback *lb)
{
	struct loopback_unit *u;

	while (lb->sessions != NULL)
		loopback_session_free(lb->sessions);
	while ((u = lb->head) != NULL) {
		lb->head = u->next;
		free(u);
	}
	if (lb->deliver != NULL)
		event_free(lb->deliver);
	free(lb);
}

/* The struct handed to the core; the defects bend exactly one member. */
static void
loopback_fill_api(struct loopback *lb)
{
	lb->api.abi_version = FERRY_TRANSPORT_ABI_VERSION;
	lb->api.size = sizeof(lb->api);
#ifdef LOOPBACK_DEFECT_ABI
	lb->api.abi_version = FERRY_TRANSPORT_ABI_VERSION + 1;
#endif
#ifdef LOOPBACK_DEFECT_SIZE
	lb->api.size = offsetof(struct ferry_transport_api, reload_config);
#endif
	lb->api.name = LOOPBACK_NAME;
	lb->api.protocol = FERRY_PROTO_TEST;
	lb->api.cost = LOOPBACK_COST;
	lb->api.caps =
	    FERRY_TCAP_RELIABLE | FERRY_TCAP_INBOUND_REPLY | FERRY_TCAP_CRC;
	lb->api.keys = loopback_keys;
	lb->api.cls = lb;
	lb->api.verify_helo = loopback_verify_helo;
	lb->api.create_helo = loopback_create_helo;
	lb->api.address_to_string = loopback_address_to_string;
	lb->api.connect = loopback_connect;
	lb->api.associate = loopback_associate;
	lb->api.send = loopback_send;
#ifdef LOOPBACK_DEFECT_NO_SEND
	lb->api.send = NULL;
#endif
	lb->api.disconnect = loopback_disconnect;
	lb->api.start_server = loopback_start_server;
	lb->api.stop_server = loopback_stop_server;
	lb->api.reload_config = loopback_reload_config;
	lb->api.session_address = loopback_session_address;
}

FERRY_EXPORT struct ferry_transport_api *
init_transport(const struct ferry_core_api *core)
{
	struct loopback *lb;

	if (core->abi_version != FERRY_TRANSPORT_ABI_VERSION ||
	    !FERRY_HAS(core, struct ferry_core_api, log_level))
		return NULL;
	lb = calloc(1, sizeof(*lb));
	if (lb == NULL)
		return NULL;
	lb->core = core;
	lb->tail = &lb->head;
#ifdef LOOPBACK_DEFECT_INIT_FAILS
	loopback_log(lb, FERRY_LOG_ERR, "built to fail: refusing to start");
	free(lb);
	return NULL;
#endif
	if (loopback_configure(lb) < 0)
		goto fail;
	if (core->receive != NULL) {
		if (core->base == NULL) {
			loopback_log(lb, FERRY_LOG_ERR, "no event loop given");
			goto fail;
		}
		lb->deliver =
		    event_new(core->base, -1, 0, loopback_deliver, lb);
		if (lb->deliver == NULL)
			goto fail;
		lb->stat_delivered = core->stat(core->cls, "delivered");
	}
	loopback_fill_api(lb);
	return &lb->api;
fail:
	loopback_free(lb);
	return NULL;
}

#ifndef LOOPBACK_DEFECT_NO_DONE
FERRY_EXPORT void
done_transport(struct ferry_transport_api *api)
{
	if (api != NULL)
		loopback_free(api->cls);
}
#endif
