/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libtransport_smtp.so through the plugin ABI, with a core of the test's
 * own (mail arrives without a session, which plugin_core.h does not
 * allow) and, for the "mta" cases, the real Postfix + procmail of
 * tests/mta/setup-mta.sh: two instances exchange units both ways through
 * Maildirs and through FIFOs; foreign mail in the same inbox is ignored;
 * the caps refuse mail; mail queued while the receiver is down waits in
 * its Maildir, and with a FIFO and no reader Postfix defers and
 * redelivers. Without the fixture the mta cases skip, saying so, unless
 * FERRY_REQUIRE_MTA=1.
 */
/* ctest: TIMEOUT=600 RESOURCE_LOCK=mta LABELS=mta */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <check.h>

#include <ferry/transport.h>

#include "lib/crc32.h"
#include "unit.h"
#include "../mta/mta.h"

/* The mail format, to feed inboxes as procmail would. */
#include "../../plugins/smtp/smtp_base64.c"
#include "../../plugins/smtp/smtp_mime.c"

#define TC_CFG_MAX   32
#define TC_STATS_MAX 64
#define TC_SEQ_MAX   4096 /* units numbered for bulk tests */

/* The test's core: one per plugin instance. */
struct tc {
	struct ferry_core_api api;      /* what the plugin sees */
	struct ferry_peer_id id;        /* this core's identity */
	int log_level;                  /* *api.log_level */
	const char *cfg[TC_CFG_MAX][2]; /* key, value */
	size_t n_cfg;
	struct {
		char name[48];
		uint64_t value;
	} stats[TC_STATS_MAX];
	size_t n_stats;
	char log[16384]; /* every line, '\n'-separated */
	void *dl;        /* dlopen handle */
	done_transport_fn *done;
	struct ferry_transport_api *t; /* the plugin */
	/* what arrived */
	unsigned n_rx;      /* units */
	uint8_t last[2048]; /* the last one (cut) */
	size_t last_len;
	struct ferry_peer_id last_sender;
	bool last_enc;
	uint32_t last_crc;
	uint8_t seen[TC_SEQ_MAX]; /* per sequence number */
	unsigned n_ready;         /* send_ready calls */
	struct ferry_tsession *ready_ts;
};

static struct event_base *base;
static struct tc a, b;

static void
tc_receive(void *cls, const struct ferry_message_pack *mp)
{
	struct tc *c = cls;
	size_t keep = mp->len < sizeof(c->last) ? mp->len : sizeof(c->last);

	/* mail: no session, a claimed sender that is also the origin key */
	ck_assert_ptr_null(mp->ts);
	ck_assert_ptr_nonnull(mp->sender);
	ck_assert_uint_eq(mp->src_len, FERRY_PEER_ID_LEN);
	ck_assert_mem_eq(mp->src, mp->sender->bytes, FERRY_PEER_ID_LEN);
	ck_assert_uint_eq(crc32_update(0, mp->msg, mp->len), mp->crc);
	c->n_rx++;
	memcpy(c->last, mp->msg, keep);
	c->last_len = mp->len;
	c->last_sender = *mp->sender;
	c->last_enc = mp->is_encrypted;
	c->last_crc = mp->crc;
	if (mp->len >= 2) {
		const uint8_t *u = mp->msg;
		unsigned seq = (unsigned)u[0] << 8 | u[1];

		if (seq < TC_SEQ_MAX && c->seen[seq] < 255)
			c->seen[seq]++;
	}
}

static void
tc_session_gone(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	(void)ts;
	ck_abort_msg("an SMTP session never dies by itself");
}

static void
tc_send_ready(void *cls, struct ferry_tsession *ts)
{
	struct tc *c = cls;

	c->n_ready++;
	c->ready_ts = ts;
}

static const char *
tc_cfg_get(void *cls, const char *key)
{
	struct tc *c = cls;

	for (size_t i = 0; i < c->n_cfg; i++)
		if (strcmp(c->cfg[i][0], key) == 0)
			return c->cfg[i][1];
	return NULL;
}

static void tc_vlog(void *cls, int level, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void
tc_vlog(void *cls, int level, const char *fmt, va_list ap)
{
	struct tc *c = cls;
	size_t used = strlen(c->log);
	char line[512];

	(void)vsnprintf(line, sizeof(line), fmt, ap);
	if (getenv("FERRY_TEST_VERBOSE") != NULL)
		fprintf(stderr, "[%c %d] %s\n",
		    c->id.bytes[0] == 0xaa ? 'a' : 'b', level, line);
	(void)snprintf(c->log + used, sizeof(c->log) - used, "%s\n", line);
}

static uint64_t *
tc_stat(void *cls, const char *name)
{
	struct tc *c = cls;

	for (size_t i = 0; i < c->n_stats; i++)
		if (strcmp(c->stats[i].name, name) == 0)
			return &c->stats[i].value;
	ck_assert_uint_lt(c->n_stats, TC_STATS_MAX);
	(void)snprintf(c->stats[c->n_stats].name, sizeof(c->stats[0].name),
	    "%s", name);
	return &c->stats[c->n_stats++].value;
}

static uint64_t
tc_get(const struct tc *c, const char *name)
{
	for (size_t i = 0; i < c->n_stats; i++)
		if (strcmp(c->stats[i].name, name) == 0)
			return c->stats[i].value;
	return 0;
}

/* A core on base (NULL: stub mode). */
static void
tc_init(struct tc *c, struct event_base *eb, uint8_t id_byte)
{
	memset(c, 0, sizeof(*c));
	memset(&c->id, id_byte, sizeof(c->id));
	c->log_level = FERRY_LOG_DEBUG;
	c->api.abi_version = FERRY_TRANSPORT_ABI_VERSION;
	c->api.size = sizeof(c->api);
	c->api.cls = c;
	c->api.my_identity = &c->id;
	c->api.base = eb;
	c->api.receive = eb != NULL ? tc_receive : NULL;
	c->api.session_gone = eb != NULL ? tc_session_gone : NULL;
	c->api.send_ready = eb != NULL ? tc_send_ready : NULL;
	c->api.cfg_get = tc_cfg_get;
	c->api.vlog = tc_vlog;
	c->api.stat = tc_stat;
	c->api.log_level = &c->log_level;
}

static void
tc_set(struct tc *c, const char *key, const char *value)
{
	for (size_t i = 0; i < c->n_cfg; i++) {
		if (strcmp(c->cfg[i][0], key) == 0) {
			c->cfg[i][1] = value;
			return;
		}
	}
	ck_assert_uint_lt(c->n_cfg, TC_CFG_MAX);
	c->cfg[c->n_cfg][0] = key;
	c->cfg[c->n_cfg][1] = value;
	c->n_cfg++;
}

/* init_transport of $FERRY_PLUGIN_DIR/libtransport_smtp.so (the build's
 * plugins by default); c->t may be NULL if the plugin refused. */
static struct ferry_transport_api *
tc_load(struct tc *c)
{
	const char *dir = getenv("FERRY_PLUGIN_DIR");
	init_transport_fn *init;
	char path[512];

	if (dir == NULL)
		dir = FERRY_PLUGIN_DIR_DEFAULT;
	(void)snprintf(path, sizeof(path), "%s/libtransport_smtp.so", dir);
	c->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(c->dl != NULL, "dlopen %s: %s", path, dlerror());
	*(void **)&init = dlsym(c->dl, "init_transport");
	*(void **)&c->done = dlsym(c->dl, "done_transport");
	ck_assert_ptr_nonnull(init);
	ck_assert_ptr_nonnull(c->done);
	c->t = init(&c->api);
	return c->t;
}

static void
tc_unload(struct tc *c)
{
	if (c->t != NULL)
		c->done(c->t);
	c->t = NULL;
	if (c->dl != NULL)
		(void)dlclose(c->dl);
	c->dl = NULL;
}

static bool
tc_logged(const struct tc *c, const char *s)
{
	return strstr(c->log, s) != NULL;
}

static size_t
tc_helo(struct tc *c, uint8_t *addr, size_t max)
{
	size_t len = 0;

	ck_assert_int_eq(c->t->create_helo(c->t->cls, addr, max, &len), 0);
	return len;
}

/* Open descriptors of this process. */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	(void)closedir(d);
	return n;
}

typedef bool tc_cond_fn(void *arg);

static void
tc_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs the loop until cond(arg) or timeout_ms. */
static bool
run_until(tc_cond_fn *cond, void *arg, int timeout_ms)
{
	struct timeval tick = { 0, 10000 };
	struct event *ev = event_new(base, -1, EV_PERSIST, tc_tick, NULL);
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	bool ok = false;

	ck_assert_ptr_nonnull(ev);
	(void)event_add(ev, &tick);
	for (;;) {
		if (cond(arg)) {
			ok = true;
			break;
		}
		if (now_ms() > end)
			break;
		(void)event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(ev);
	return ok;
}

static void
run_for(int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	(void)event_base_loopexit(base, &tv);
	(void)event_base_dispatch(base);
}

struct want {
	const struct tc *c;
	unsigned n;
};

static bool
got_units(void *arg)
{
	const struct want *w = arg;

	return w->c->n_rx >= w->n;
}

static void
setup(void)
{
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	tc_init(&a, base, 0xaa);
	tc_init(&b, base, 0xbb);
}

static void
teardown(void)
{
	tc_unload(&a);
	tc_unload(&b);
	event_base_free(base);
}

/* Sends one unit of len bytes, numbered seq, over ts. */
static int
send_seq(struct tc *c, struct ferry_tsession *ts, unsigned seq, size_t len)
{
	uint8_t u[4096];

	ck_assert_uint_le(len, sizeof(u));
	ck_assert_uint_ge(len, 2);
	for (size_t i = 0; i < len; i++)
		u[i] = (uint8_t)(seq * 7 + i);
	u[0] = (uint8_t)(seq >> 8);
	u[1] = (uint8_t)seq;
	return c->t->send(c->t->cls, ts, u, len, seq % 2 == 0,
	    crc32_update(0, u, len));
}

static struct ferry_tsession *
connect_to(struct tc *from, struct tc *to)
{
	uint8_t helo[FERRY_ADDR_MAX];
	struct ferry_tsession *ts = NULL;
	size_t len = tc_helo(to, helo, sizeof(helo));

	ck_assert_int_eq(from->t->connect(from->t->cls, helo, len, &ts), 0);
	ck_assert_ptr_nonnull(ts);
	return ts;
}

/*
 * Without an MTA: addresses, configuration, stub mode, the caps.
 */

START_TEST(api_and_defaults)
{
	tc_set(&a, "ADDRESS", "peer@example.org");
	tc_set(&a, "FILTER", "X-Ferry: hello");
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_str_eq(a.t->name, "smtp");
	ck_assert_uint_eq(a.t->protocol, FERRY_PROTO_SMTP);
	ck_assert_uint_eq(a.t->caps, FERRY_TCAP_HIGH_LATENCY | FERRY_TCAP_CRC);
	ck_assert_uint_eq(a.t->cost, 1000);
	/* MTU from MAX_MAIL_SIZE 10240000: 131071 lines of 57 bytes, less
	 * the 44-byte envelope */
	ck_assert_uint_eq(a.t->mtu, 7471003);
	ck_assert_ptr_nonnull(a.t->keys);
	ck_assert_ptr_nonnull(a.t->session_address);
}
END_TEST

START_TEST(stub_mode)
{
	uint8_t helo[FERRY_ADDR_MAX];
	struct ferry_tsession *ts;
	char text[300];
	size_t len;
	int fds = count_fds();

	tc_init(&a, NULL, 0xaa);
	tc_set(&a, "ADDRESS", "peer@example.org");
	tc_set(&a, "FILTER", "X-Ferry: hello");
	tc_set(&a, "INBOX", "/nonexistent/inbox");
	tc_set(&a, "BLACKLIST", "@evil.example");
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_int_eq(count_fds(), fds); /* no sockets, no inbox */
	len = tc_helo(&a, helo, sizeof(helo));
	ck_assert_uint_eq(len, 1 + 16 + 14);
	ck_assert_int_eq(a.t->verify_helo(a.t->cls, helo, len), 0);
	ck_assert_int_eq(a.t->address_to_string(a.t->cls, helo, len, text,
	                     sizeof(text)),
	    0);
	ck_assert_str_eq(text, "peer@example.org [X-Ferry: hello]");
	ck_assert_int_eq(a.t->verify_helo(a.t->cls,
	                     "\x0e"
	                     "x@evil.exampleX-A: b",
	                     21),
	    -EPERM);
	ck_assert_int_eq(a.t->verify_helo(a.t->cls,
	                     "\x0c"
	                     "x@evil",
	                     7),
	    -EINVAL);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &ts), -EOPNOTSUPP);
	ck_assert_int_eq(a.t->start_server(a.t->cls), -EOPNOTSUPP);
	ck_assert_int_eq(a.t->stop_server(a.t->cls), 0);
	ck_assert_int_eq(a.t->create_helo(a.t->cls, helo, 10, &len), -ENOSPC);
	/* no counters in stub mode */
	ck_assert_uint_eq(a.n_stats, 0);
}
END_TEST

START_TEST(send_only_has_no_helo)
{
	uint8_t helo[64];
	size_t len = 0;

	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_int_eq(a.t->create_helo(a.t->cls, helo, sizeof(helo), &len),
	    -ENOENT);
	ck_assert_int_eq(a.t->start_server(a.t->cls), 0); /* no inbox */
}
END_TEST

static void
expect_refused(const char *key, const char *value, const char *log)
{
	struct tc c;

	tc_init(&c, base, 0xcc);
	if (strcmp(key, "FILTER") != 0)
		tc_set(&c, "FILTER", "X-A: b");
	tc_set(&c, key, value);
	ck_assert_msg(tc_load(&c) == NULL, "%s = '%s' accepted", key, value);
	ck_assert_msg(tc_logged(&c, log), "%s = '%s': log lacks '%s': %s", key,
	    value, log, c.log);
	ck_assert(!tc_logged(&c, "secret"));
	tc_unload(&c);
}

START_TEST(bad_configuration)
{
	expect_refused("SERVER", "http://127.0.0.1/", "smtp:// or smtps://");
	expect_refused("SERVER", "smtp://a b", "not a URL");
	expect_refused("STARTTLS", "maybe", "no, try or yes");
	expect_refused("ADDRESS", "not an address", "expected an address");
	expect_refused("ADDRESS", "a@b>\r\nRCPT TO:<c@d",
	    "expected an address");
	expect_refused("FILTER", "Subject: hi", "header line");
	expect_refused("FILTER", "X-A", "header line");
	expect_refused("INBOX", "relative/path", "absolute");
	expect_refused("INBOX_TYPE", "mbox", "auto, fifo or maildir");
	expect_refused("MAX_MAIL_SIZE", "1000", "size in bytes");
	expect_refused("MTU", "8000000", "size in bytes");
	expect_refused("MTU", "100", "size in bytes");
	expect_refused("QUEUE_BYTES", "1 MiB", "size in bytes");
	expect_refused("MAX_MAILS_HOUR", "0", "number");
	expect_refused("BLACKLIST", "@", "addresses and @domains");
	expect_refused("RESCAN_INTERVAL", "soon", "duration");
	/* the password never shows */
	expect_refused("SERVER", "smtp://user:secret@host x", "'...'");
}
END_TEST

START_TEST(filter_needed_with_address)
{
	struct tc c;

	tc_init(&c, base, 0xcc);
	tc_set(&c, "ADDRESS", "p@x.org");
	ck_assert_ptr_null(tc_load(&c));
	ck_assert(tc_logged(&c, "needed with ADDRESS or INBOX"));
	tc_unload(&c);
}
END_TEST

START_TEST(sessions_and_addresses)
{
	uint8_t helo[FERRY_ADDR_MAX], back[FERRY_ADDR_MAX];
	struct ferry_tsession *t1, *t2, *t3;
	size_t len, blen;

	tc_set(&a, "BLACKLIST", "list@example.org");
	ck_assert_ptr_nonnull(tc_load(&a));
	len = 1 + 16 + 9;
	memcpy(helo, "\x10peer@example.orgX-Peer: 1", len);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &t1), 0);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &t2), 0);
	ck_assert_ptr_eq(t1, t2);
	ck_assert_int_eq(a.t->associate(a.t->cls, t1), 0);
	ck_assert_int_eq(a.t->session_address(a.t->cls, t1, back, sizeof(back),
	                     &blen),
	    0);
	ck_assert_uint_eq(blen, len);
	ck_assert_mem_eq(back, helo, len);
	ck_assert_int_eq(a.t->session_address(a.t->cls, t1, back, 5, &blen),
	    -ENOSPC);
	/* another filter line is another destination */
	memcpy(helo + 17, "X-Peer: 2", 9);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &t3), 0);
	ck_assert_ptr_ne(t3, t1);
	ck_assert_int_eq(a.t->send(a.t->cls, t3, "", 0, false, 0), -EINVAL);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, t3), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(a.t->disconnect(a.t->cls, t1), 0);
	memcpy(helo, "\x10list@example.orgX-Peer: 1", len);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &t1), -EPERM);
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, 5, &t1), -EINVAL);
}
END_TEST

START_TEST(mtu_enforced)
{
	struct ferry_tsession *ts;
	uint8_t *big;

	tc_set(&a, "MTU", "1000");
	tc_set(&a, "SERVER", "smtp://127.0.0.1:9"); /* nobody: never sent */
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_uint_eq(a.t->mtu, 1000);
	ck_assert_int_eq(a.t->connect(a.t->cls, "\x03p@xX-A: b", 10, &ts), 0);
	big = calloc(1, 1001);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(a.t->send(a.t->cls, ts, big, 1001, true, 0),
	    -EMSGSIZE);
	ck_assert_int_eq(a.t->send(a.t->cls, ts, big, 1000, true, 0), 0);
	free(big);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ts), 0);
}
END_TEST

/* Caps: nothing gets past them, not a new session, not a sub-address,
 * not a reload; the mails need no server to count. */
START_TEST(caps_refuse)
{
	struct ferry_tsession *t1, *t2, *t3;

	tc_set(&a, "SERVER", "smtp://127.0.0.1:9");
	tc_set(&a, "MAX_MAILS_PER_DEST_HOUR", "3");
	tc_set(&a, "MAX_MAILS_HOUR", "5");
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_int_eq(a.t->connect(a.t->cls, "\x03p@xX-A: b", 10, &t1), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(send_seq(&a, t1, i, 10), 0);
	ck_assert_int_eq(send_seq(&a, t1, 3, 10), -EDQUOT);
	ck_assert_uint_eq(tc_get(&a, "tx_cap_dest"), 1);
	/* a fresh session to the same address, another filter line, a
	 * sub-address, other case: the same budget */
	ck_assert_int_eq(a.t->disconnect(a.t->cls, t1), 0);
	ck_assert_int_eq(a.t->connect(a.t->cls, "\x05P+1@XX-A: c", 12, &t2), 0);
	ck_assert_int_eq(send_seq(&a, t2, 4, 10), -EDQUOT);
	ck_assert_uint_eq(tc_get(&a, "tx_cap_dest"), 2);
	/* another address has its own, until the total is spent */
	ck_assert_int_eq(a.t->connect(a.t->cls, "\x03q@xX-A: b", 10, &t3), 0);
	ck_assert_int_eq(send_seq(&a, t3, 5, 10), 0);
	ck_assert_int_eq(send_seq(&a, t3, 6, 10), 0);
	ck_assert_int_eq(send_seq(&a, t3, 7, 10), -EDQUOT);
	ck_assert_uint_eq(tc_get(&a, "tx_cap_total"), 1);
	/* a reload raising nothing changes nothing */
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(send_seq(&a, t3, 8, 10), -EDQUOT);
	/* a reload raising the caps lets mail go again */
	tc_set(&a, "MAX_MAILS_HOUR", "6");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(send_seq(&a, t3, 9, 10), 0);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, t2), 0);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, t3), 0);
}
END_TEST

START_TEST(queue_full_says_eagain)
{
	struct ferry_tsession *ts;

	/* a server that never answers: mails stay queued */
	tc_set(&a, "SERVER", "smtp://127.0.0.1:9");
	tc_set(&a, "QUEUE_MAILS", "3");
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_int_eq(a.t->connect(a.t->cls, "\x03p@xX-A: b", 10, &ts), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(send_seq(&a, ts, i, 100), 0);
	ck_assert_int_eq(send_seq(&a, ts, 3, 100), -EAGAIN);
	ck_assert_uint_eq(tc_get(&a, "tx_eagain"), 1);
	/* the failures are retried with back-off, not dropped at once */
	run_for(300);
	ck_assert_uint_ge(tc_get(&a, "tx_retries"), 1);
	ck_assert_uint_eq(tc_get(&a, "tx_failed"), 0);
	ck_assert_uint_eq(a.n_ready, 0);
	ck_assert(tc_logged(&a, "retrying with back-off"));
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ts), 0);
}
END_TEST

START_TEST(reload_changes_helo)
{
	uint8_t h1[FERRY_ADDR_MAX], h2[FERRY_ADDR_MAX];
	size_t l1, l2;

	tc_set(&a, "ADDRESS", "peer@example.org");
	tc_set(&a, "FILTER", "X-Ferry: one");
	ck_assert_ptr_nonnull(tc_load(&a));
	l1 = tc_helo(&a, h1, sizeof(h1));
	tc_set(&a, "FILTER", "X-Ferry: two");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	l2 = tc_helo(&a, h2, sizeof(h2));
	ck_assert_uint_eq(l1, l2);
	ck_assert_mem_eq(h2 + 1 + 16, "X-Ferry: two", 12);
	/* a bad reload keeps what was in force */
	tc_set(&a, "FILTER", "Subject: three");
	ck_assert_int_lt(a.t->reload_config(a.t->cls), 0);
	l2 = tc_helo(&a, h2, sizeof(h2));
	ck_assert_mem_eq(h2 + 1 + 16, "X-Ferry: two", 12);
	tc_set(&a, "FILTER", "X-Ferry: two");
	tc_set(&a, "ADDRESS", "");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_eq(a.t->create_helo(a.t->cls, h2, sizeof(h2), &l2),
	    -ENOENT);
}
END_TEST

START_TEST(missing_inbox)
{
	tc_set(&a, "FILTER", "X-A: b");
	tc_set(&a, "INBOX", "/nonexistent/ferry-inbox");
	ck_assert_ptr_nonnull(tc_load(&a));
	ck_assert_int_eq(a.t->start_server(a.t->cls), -ENOENT);
	tc_set(&a, "INBOX_TYPE", "maildir");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ck_assert_int_lt(a.t->start_server(a.t->cls), 0);
	ck_assert(tc_logged(&a, "as a Maildir"));
}
END_TEST

/*
 * Inboxes fed by the test itself, as procmail would: no MTA needed.
 */

#define IN_FILTER "X-Ferry-Test: inbox"

/* A ferry mail to peer@localhost carrying unit (seq, len bytes), as it
 * arrives: LF line ends and an mbox From line when from_line. */
static char *
inbox_mail(unsigned seq, size_t len, bool from_line, size_t *ret_len)
{
	struct ferry_peer_id sender;
	struct smtp_mime_meta m = { .rcpt = "peer@localhost",
		.filter = IN_FILTER, .domain = "example.org",
		.token = "00112233445566778899aabbccddeeff", .date = 0,
		.sender = &sender, .is_encrypted = true };
	uint8_t unit[4096];
	char *mail, *out;
	size_t mlen, w = 0;

	ck_assert_uint_le(len, sizeof(unit));
	memset(sender.bytes, 0x77, sizeof(sender.bytes));
	for (size_t i = 0; i < len; i++)
		unit[i] = (uint8_t)(seq + i);
	unit[0] = (uint8_t)(seq >> 8);
	unit[1] = (uint8_t)seq;
	m.crc = crc32_update(0, unit, len);
	ck_assert_int_eq(smtp_mime_compose(&m, unit, len, &mail, &mlen), 0);
	out = malloc(mlen + 64);
	ck_assert_ptr_nonnull(out);
	if (from_line)
		w = (size_t)sprintf(out, "From MAILER-DAEMON  Sat Nov 22 11:00:00 2025\n");
	for (size_t i = 0; i < mlen; i++)
		if (mail[i] != '\r')
			out[w++] = mail[i];
	out[w] = '\0';
	free(mail);
	*ret_len = w;
	return out;
}

/* Delivers text into dir/new the Maildir way (tmp/, then rename). */
static void
maildir_put(const char *dir, const char *name, const char *text, size_t len)
{
	char tmp[600], fin[600];
	FILE *f;

	(void)snprintf(tmp, sizeof(tmp), "%s/tmp/%s", dir, name);
	(void)snprintf(fin, sizeof(fin), "%s/new/%s", dir, name);
	f = fopen(tmp, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(tmp, fin), 0);
}

static bool
stat_reaches(void *arg)
{
	const struct want *w = arg;

	return tc_get(w->c, "drop_foreign") + tc_get(w->c, "drop_broken") +
	    tc_get(w->c, "drop_oversize") >= w->n;
}

START_TEST(maildir_inbox)
{
	char dir[512], sub[600], *big, *m1, *m2;
	struct want wb = { &b, 1 }, drops = { &b, 3 };
	size_t l1, l2;

	unit_tmpdir(dir, sizeof(dir));
	for (int i = 0; i < 3; i++) {
		(void)snprintf(sub, sizeof(sub), "%s/%s", dir,
		    (const char *[]){ "tmp", "new", "cur" }[i]);
		ck_assert_int_eq(mkdir(sub, 0700), 0);
	}
	/* mail that came while ferryd was away */
	m1 = inbox_mail(1, 100, false, &l1);
	maildir_put(dir, "1.early", m1, l1);
	tc_set(&b, "FILTER", IN_FILTER);
	tc_set(&b, "INBOX", dir);
	tc_set(&b, "MAX_MAIL_SIZE", "32768");
	ck_assert_ptr_nonnull(tc_load(&b));
	ck_assert_int_eq(b.t->start_server(b.t->cls), 0);
	ck_assert(run_until(got_units, &wb, 5000));
	ck_assert_uint_eq(b.seen[1], 1);
	ck_assert_mem_eq(b.last_sender.bytes, "\x77\x77\x77\x77", 4);
	/* then, announced by inotify: a good one, foreign, broken, big */
	m2 = inbox_mail(2, 3000, false, &l2);
	maildir_put(dir, "2.good", m2, l2);
	maildir_put(dir, "3.foreign", "Subject: yours\n\nhello\n", 22);
	maildir_put(dir, "4.broken", IN_FILTER "\n\nno MIME\n",
	    strlen(IN_FILTER) + 10);
	big = calloc(1, 200000);
	ck_assert_ptr_nonnull(big);
	memset(big, 'x', 199999);
	maildir_put(dir, "5.big", big, 199999);
	free(big);
	wb.n = 2;
	ck_assert(run_until(got_units, &wb, 5000));
	ck_assert(run_until(stat_reaches, &drops, 5000));
	ck_assert_uint_eq(b.seen[2], 1);
	ck_assert_uint_eq(b.last_len, 3000);
	ck_assert_uint_eq(tc_get(&b, "drop_foreign"), 1);
	ck_assert_uint_eq(tc_get(&b, "drop_broken"), 1);
	ck_assert_uint_eq(tc_get(&b, "drop_oversize"), 1);
	ck_assert_uint_eq(tc_get(&b, "rx_mails"), 2);
	/* ours deleted; not ours moved to cur/, as a mail reader would */
	ck_assert_uint_eq(mta_maildir_count(dir, "new"), 0);
	ck_assert_uint_eq(mta_maildir_count(dir, "cur"), 2);
	(void)snprintf(sub, sizeof(sub), "%s/cur/3.foreign:2,", dir);
	ck_assert_int_eq(access(sub, F_OK), 0);
	free(m1);
	free(m2);
	tc_unload(&b);
	unit_rmtree(dir);
}
END_TEST

/* Writes all of text to fd, in pieces of at most piece bytes. */
static void
fifo_put(int fd, const char *text, size_t len, size_t piece)
{
	for (size_t off = 0; off < len;) {
		size_t n = len - off < piece ? len - off : piece;
		ssize_t w = write(fd, text + off, n);

		if (w < 0 && errno == EAGAIN) {
			run_for(5); /* the pipe is full: let the reader read */
			continue;
		}
		ck_assert_int_gt(w, 0);
		off += (size_t)w;
		run_for(1);
	}
}

static void
fifo_str(int fd, const char *text)
{
	fifo_put(fd, text, strlen(text), 100);
}

START_TEST(fifo_inbox)
{
	char dir[512], path[600], *mail, big[5000];
	struct want wb = { &b, 0 }, drops = { &b, 2 };
	size_t len;
	int fd;

	unit_tmpdir(dir, sizeof(dir));
	(void)snprintf(path, sizeof(path), "%s/inbox.fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	tc_set(&b, "FILTER", IN_FILTER);
	tc_set(&b, "INBOX", path);
	tc_set(&b, "MAX_MAIL_SIZE", "32768");
	ck_assert_ptr_nonnull(tc_load(&b));
	ck_assert_int_eq(b.t->start_server(b.t->cls), 0);
	/* three writers one after the other, as procmail runs: closing a
	 * write end does not end ferryd's stream */
	for (unsigned i = 0; i < 3; i++) {
		fd = open(path, O_WRONLY | O_NONBLOCK);
		ck_assert_int_ge(fd, 0);
		mail = inbox_mail(i, 200 + i * 700, true, &len);
		fifo_put(fd, mail, len, 97 + i * 1000);
		fifo_str(fd, "\n");
		free(mail);
		ck_assert_int_eq(close(fd), 0);
		wb.n = i + 1;
		ck_assert(run_until(got_units, &wb, 5000));
	}
	/* junk, a mail too big for MAX_MAIL_SIZE, foreign mail: skipped
	 * and counted, and the stream goes on */
	fd = open(path, O_WRONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	fifo_str(fd, "junk before a From line\n");
	fifo_str(fd, "From x\nSubject: big\n\n");
	memset(big, 'b', sizeof(big));
	big[sizeof(big) - 1] = '\n';
	for (int i = 0; i < 25; i++) /* over 32768 + 64 KiB of headers */
		fifo_put(fd, big, sizeof(big), 4096);
	fifo_str(fd, "\nFrom y\nSubject: hi\n\nforeign\n\n");
	mail = inbox_mail(9, 50, true, &len);
	fifo_put(fd, mail, len, 4096);
	free(mail);
	wb.n = 4;
	ck_assert(run_until(got_units, &wb, 5000));
	ck_assert(run_until(stat_reaches, &drops, 5000));
	ck_assert_uint_eq(b.seen[9], 1);
	ck_assert_uint_eq(tc_get(&b, "drop_oversize"), 1);
	ck_assert_uint_eq(tc_get(&b, "drop_foreign"), 1);
	ck_assert_uint_eq(tc_get(&b, "rx_mails"), 4);
	ck_assert_int_eq(close(fd), 0);
	tc_unload(&b);
	unit_rmtree(dir);
}
END_TEST

/*
 * Through Postfix and procmail.
 */

static struct mta_user ua, ub;

/* Loads and starts c as user u of the MTA. */
static void
start_as(struct tc *c, const struct mta_user *u)
{
	tc_set(c, "ADDRESS", u->mail);
	tc_set(c, "FILTER", u->filter);
	tc_set(c, "INBOX", u->inbox);
	tc_set(c, "MAX_MAILS_PER_DEST_HOUR", "100000");
	tc_set(c, "MAX_MAILS_HOUR", "100000");
	ck_assert_ptr_nonnull(tc_load(c));
	ck_assert_int_eq(c->t->start_server(c->t->cls), 0);
}

static bool
mta_users(bool fifo_a, bool fifo_b)
{
	if (!mta_available())
		return false;
	mta_user(&ua, fifo_a ? "ferry-ut-fa" : "ferry-ut-ma", fifo_a);
	mta_user(&ub, fifo_b ? "ferry-ut-fb" : "ferry-ut-mb", fifo_b);
	return true;
}

/* a and b send each other one unit, then n more each, and check all. */
static void
exchange(unsigned n)
{
	struct ferry_tsession *ta, *tb;
	struct want wa = { &a, 1 + n }, wb = { &b, 1 + n };
	uint64_t t0;

	ta = connect_to(&a, &b);
	tb = connect_to(&b, &a);
	ck_assert_int_eq(a.t->send(a.t->cls, ta, "hello from a", 12, true,
	                     crc32_update(0, "hello from a", 12)),
	    0);
	wb.n = 1;
	ck_assert_msg(run_until(got_units, &wb, 30000), "b got nothing");
	ck_assert_uint_eq(b.last_len, 12);
	ck_assert_mem_eq(b.last, "hello from a", 12);
	ck_assert_mem_eq(b.last_sender.bytes, a.id.bytes, FERRY_PEER_ID_LEN);
	ck_assert(b.last_enc);
	ck_assert_int_eq(b.t->send(b.t->cls, tb, "and from b", 10, false,
	                     crc32_update(0, "and from b", 10)),
	    0);
	wa.n = 1;
	ck_assert_msg(run_until(got_units, &wa, 30000), "a got nothing");
	ck_assert_mem_eq(a.last, "and from b", 10);
	ck_assert(!a.last_enc);
	t0 = now_ms();
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(send_seq(&a, ta, i, 2 + i % 1200), 0);
		ck_assert_int_eq(send_seq(&b, tb, i, 2 + i % 1200), 0);
	}
	wa.n = wb.n = 1 + n;
	ck_assert_msg(run_until(got_units, &wb, 60000), "b got %u of %u",
	    b.n_rx, 1 + n);
	ck_assert_msg(run_until(got_units, &wa, 60000), "a got %u of %u",
	    a.n_rx, 1 + n);
	if (n > 0)
		fprintf(stderr, "smtp %s: %u mails each way in %llu ms\n",
		    ua.fifo ? "fifo" : "maildir", n,
		    (unsigned long long)(now_ms() - t0));
	for (unsigned i = 0; i < n; i++) {
		ck_assert_msg(a.seen[i] == 1, "a: unit %u seen %u times", i,
		    a.seen[i]);
		ck_assert_msg(b.seen[i] == 1, "b: unit %u seen %u times", i,
		    b.seen[i]);
	}
	/* one SMTP connection carried every mail of a sender */
	ck_assert_uint_eq(tc_get(&a, "tx_connects"), 1);
	ck_assert_uint_eq(tc_get(&a, "tx_mails"), 1 + n);
	ck_assert_uint_eq(tc_get(&b, "rx_mails"), 1 + n);
	ck_assert_uint_eq(tc_get(&b, "drop_broken") +
	        tc_get(&b, "drop_base64") + tc_get(&b, "drop_envelope") +
	        tc_get(&b, "drop_oversize"),
	    0);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}

START_TEST(maildir_both_ways)
{
	if (!mta_users(false, false))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	exchange(100);
	/* consumed: nothing left behind */
	ck_assert_uint_eq(mta_maildir_count(ua.inbox, "new"), 0);
	ck_assert_uint_eq(mta_maildir_count(ub.inbox, "new"), 0);
	ck_assert_uint_eq(mta_maildir_count(ub.inbox, "cur"), 0);
}
END_TEST

START_TEST(fifo_both_ways)
{
	if (!mta_users(true, true))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	exchange(100);
}
END_TEST

START_TEST(maildir_and_fifo_mixed)
{
	if (!mta_users(false, true))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	exchange(10);
}
END_TEST

/* A mail with the filter line that is no ferry mail, and one without. */
static void
inject_foreign(const struct mta_user *u)
{
	char text[1024];

	(void)snprintf(text, sizeof(text),
	    "From: someone@example.net\nTo: %s\n%s\nSubject: hi\n\n"
	    "Not a ferry mail, but it has the filter line.\n",
	    u->mail, u->filter);
	mta_inject(u->mail, text);
	(void)snprintf(text, sizeof(text),
	    "From: someone@example.net\nTo: %s\nSubject: hi\n\nplain mail\n",
	    u->mail);
	mta_inject(u->mail, text);
}

static bool
foreign_delivered(void *arg)
{
	const long *mark = arg;

	return mta_log_count(*mark, ub.mail, "status=sent") >= 2;
}

static bool
dropped_one(void *arg)
{
	const struct tc *c = arg;

	return tc_get(c, "drop_broken") >= 1;
}

static void
foreign_ignored(bool fifo)
{
	struct ferry_tsession *ta;
	struct want wb = { &b, 1 };
	char path[600];
	long mark;
	FILE *f;

	if (!mta_users(fifo, fifo))
		return;
	mark = mta_log_mark();
	start_as(&a, &ua);
	start_as(&b, &ub);
	inject_foreign(&ub);
	if (fifo) {
		/* A mail that is no multipart ends in the FIFO's stream only
		 * where the next one begins: wait for the MTA, and the ferry
		 * mail below ends it. */
		ck_assert(run_until(foreign_delivered, &mark, 30000));
	} else {
		ck_assert(run_until(dropped_one, &b, 30000));
		/* not for us at all: a file in new/ without the filter line,
		 * as in a user's own Maildir; it moves to cur/ untouched */
		(void)snprintf(path, sizeof(path), "%s/new/1.foreign.test",
		    ub.inbox);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("From: x@y\nSubject: yours\n\nhello\n", f);
		ck_assert_int_eq(fclose(f), 0);
	}
	ta = connect_to(&a, &b);
	ck_assert_int_eq(send_seq(&a, ta, 1, 50), 0);
	ck_assert(run_until(got_units, &wb, 30000));
	ck_assert_uint_eq(b.n_rx, 1);
	ck_assert_uint_eq(b.seen[1], 1);
	ck_assert_uint_eq(tc_get(&b, "drop_broken"), 1);
	if (!fifo) {
		ck_assert_uint_eq(tc_get(&b, "drop_foreign"), 1);
		ck_assert_uint_eq(mta_maildir_count(ub.inbox, "new"), 0);
		ck_assert_uint_eq(mta_maildir_count(ub.inbox, "cur"), 1);
	}
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}

START_TEST(foreign_mail_ignored_maildir)
{
	foreign_ignored(false);
}
END_TEST

START_TEST(foreign_mail_ignored_fifo)
{
	foreign_ignored(true);
}
END_TEST

START_TEST(per_destination_cap_through_mta)
{
	struct ferry_tsession *ta;
	struct want wb = { &b, 3 };
	long mark;

	if (!mta_users(false, false))
		return;
	mark = mta_log_mark();
	start_as(&a, &ua);
	start_as(&b, &ub);
	tc_set(&a, "MAX_MAILS_PER_DEST_HOUR", "3");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	ta = connect_to(&a, &b);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 20), 0);
	for (unsigned i = 3; i < 10; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 20), -EDQUOT);
	ck_assert(run_until(got_units, &wb, 30000));
	run_for(1000);
	ck_assert_uint_eq(b.n_rx, 3);
	ck_assert_uint_eq(tc_get(&a, "tx_cap_dest"), 7);
	ck_assert_uint_eq(mta_log_count(mark, ub.mail, "status=sent"), 3);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}
END_TEST

static bool
delivered_to_maildir(void *arg)
{
	const struct mta_user *u = arg;

	return mta_maildir_count(u->inbox, "new") >= 5;
}

START_TEST(maildir_waits_while_down)
{
	struct ferry_tsession *ta;
	uint8_t helo[FERRY_ADDR_MAX];
	struct want wb = { &b, 5 };
	size_t len;

	if (!mta_users(false, false))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	len = tc_helo(&b, helo, sizeof(helo));
	tc_unload(&b); /* ferryd of b stops */
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &ta), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 300), 0);
	ck_assert(run_until(delivered_to_maildir, &ub, 30000));
	/* b comes back and finds them at start */
	tc_init(&b, base, 0xbb);
	start_as(&b, &ub);
	ck_assert(run_until(got_units, &wb, 30000));
	for (unsigned i = 0; i < 5; i++)
		ck_assert_uint_eq(b.seen[i], 1);
	ck_assert_uint_eq(mta_maildir_count(ub.inbox, "new"), 0);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}
END_TEST

static long deferred_mark;

static bool
deferred_three(void *arg)
{
	const struct mta_user *u = arg;

	return mta_log_count(deferred_mark, u->mail, "status=deferred") >= 3;
}

START_TEST(fifo_without_reader_deferred)
{
	struct ferry_tsession *ta;
	uint8_t helo[FERRY_ADDR_MAX];
	struct want wb = { &b, 3 };
	size_t len;

	if (!mta_users(false, true))
		return;
	deferred_mark = mta_log_mark();
	start_as(&a, &ua);
	start_as(&b, &ub);
	len = tc_helo(&b, helo, sizeof(helo));
	tc_unload(&b); /* nobody reads the FIFO */
	ck_assert_int_eq(a.t->connect(a.t->cls, helo, len, &ta), 0);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 500), 0);
	ck_assert_msg(run_until(deferred_three, &ub, 30000),
	    "Postfix did not defer the mail");
	/* the reader comes back; Postfix's next try delivers */
	tc_init(&b, base, 0xbb);
	start_as(&b, &ub);
	ck_assert_msg(run_until(got_units, &wb, 90000), "got %u of 3", b.n_rx);
	run_for(500);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(b.seen[i], 1);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}
END_TEST

static bool
ready_once(void *arg)
{
	const struct tc *c = arg;

	return c->n_ready > 0;
}

START_TEST(send_ready_after_eagain)
{
	struct ferry_tsession *ta;
	struct want wb = { &b, 4 };
	unsigned i;

	if (!mta_users(false, false))
		return;
	tc_set(&a, "QUEUE_MAILS", "3");
	start_as(&a, &ua);
	start_as(&b, &ub);
	ta = connect_to(&a, &b);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 100), 0);
	ck_assert_int_eq(send_seq(&a, ta, i, 100), -EAGAIN);
	ck_assert(run_until(ready_once, &a, 30000));
	ck_assert_ptr_eq(a.ready_ts, ta);
	ck_assert_int_eq(send_seq(&a, ta, i, 100), 0);
	ck_assert(run_until(got_units, &wb, 30000));
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}
END_TEST

/* A reload in the middle of submissions changes the server for the next
 * ones; the running one keeps what it had (ASan would see it otherwise). */
START_TEST(reload_while_sending)
{
	struct ferry_tsession *ta;
	struct want wb = { &b, 40 };

	if (!mta_users(false, false))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	ta = connect_to(&a, &b);
	for (unsigned i = 0; i < 20; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 3000), 0);
	run_for(20);
	tc_set(&a, "SERVER", "smtp://localhost:25/ferry-test");
	tc_set(&a, "SERVER_TIMEOUT", "30 s");
	ck_assert_int_eq(a.t->reload_config(a.t->cls), 0);
	for (unsigned i = 20; i < 40; i++)
		ck_assert_int_eq(send_seq(&a, ta, i, 3000), 0);
	ck_assert(run_until(got_units, &wb, 30000));
	for (unsigned i = 0; i < 40; i++)
		ck_assert_uint_eq(b.seen[i], 1);
	ck_assert_uint_eq(tc_get(&a, "tx_failed"), 0);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}
END_TEST

/* Time of n sequential units a -> b, each sent when the last arrived
 * (seed 004, Fig. 5). */
static void
latency(bool fifo)
{
	struct ferry_tsession *ta;
	struct want wb = { &b, 0 };
	const unsigned n = 50;
	uint64_t t0, ms;

	if (!mta_users(fifo, fifo))
		return;
	start_as(&a, &ua);
	start_as(&b, &ub);
	ta = connect_to(&a, &b);
	t0 = now_ms();
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(send_seq(&a, ta, i, 407), 0);
		wb.n = i + 1;
		ck_assert(run_until(got_units, &wb, 30000));
	}
	ms = now_ms() - t0;
	fprintf(stderr, "smtp %s: %u sequential 407-byte units, %.1f ms each\n",
	    fifo ? "fifo" : "maildir", n, (double)ms / n);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}

START_TEST(latency_maildir)
{
	latency(false);
}
END_TEST

START_TEST(latency_fifo)
{
	latency(true);
}
END_TEST

static bool
submitted(void *arg)
{
	const struct want *w = arg;

	return tc_get(w->c, "tx_mails") >= w->n;
}

/* n units a -> b as fast as the queue takes them, one connection: the
 * submission rate and the end-to-end rate (seed 004, Fig. 5 and 8).
 * FERRY_SMTP_BULK sets n (default 300). */
static void
bulk(bool fifo)
{
	const char *env = getenv("FERRY_SMTP_BULK");
	unsigned n = env != NULL ? (unsigned)atoi(env) : 300, sent = 0;
	struct ferry_tsession *ta;
	struct want wa = { &a, 0 }, wb = { &b, 0 };
	uint64_t t0, t_sub, t_all;

	if (n == 0 || n > TC_SEQ_MAX || !mta_users(fifo, fifo))
		return;
	tc_set(&a, "QUEUE_MAILS", "64");
	start_as(&a, &ua);
	start_as(&b, &ub);
	ta = connect_to(&a, &b);
	t0 = now_ms();
	while (sent < n) {
		int r = send_seq(&a, ta, sent, 407);

		if (r == -EAGAIN) {
			/* flow control: wait for send_ready */
			unsigned ready = a.n_ready;

			while (a.n_ready == ready)
				(void)event_base_loop(base, EVLOOP_ONCE);
			continue;
		}
		ck_assert_int_eq(r, 0);
		sent++;
	}
	wa.n = wb.n = n;
	ck_assert(run_until(submitted, &wa, 120000));
	t_sub = now_ms() - t0;
	ck_assert_msg(run_until(got_units, &wb, 120000), "got %u of %u",
	    b.n_rx, n);
	t_all = now_ms() - t0;
	for (unsigned i = 0; i < n; i++)
		ck_assert_uint_eq(b.seen[i], 1);
	ck_assert_uint_eq(tc_get(&a, "tx_connects"), 1);
	fprintf(stderr,
	    "smtp %s: %u mails of 407 bytes: submitted in %llu ms (%.0f/s), all received in %llu ms (%.0f/s)\n",
	    fifo ? "fifo" : "maildir", n, (unsigned long long)t_sub,
	    n * 1000.0 / (double)t_sub, (unsigned long long)t_all,
	    n * 1000.0 / (double)t_all);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
}

START_TEST(bulk_maildir)
{
	bulk(false);
}
END_TEST

START_TEST(bulk_fifo)
{
	bulk(true);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("smtp");
	TCase *tc = tcase_create("plugin");
	TCase *tm = tcase_create("mta");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, api_and_defaults);
	tcase_add_test(tc, stub_mode);
	tcase_add_test(tc, send_only_has_no_helo);
	tcase_add_test(tc, bad_configuration);
	tcase_add_test(tc, filter_needed_with_address);
	tcase_add_test(tc, sessions_and_addresses);
	tcase_add_test(tc, mtu_enforced);
	tcase_add_test(tc, caps_refuse);
	tcase_add_test(tc, queue_full_says_eagain);
	tcase_add_test(tc, reload_changes_helo);
	tcase_add_test(tc, missing_inbox);
	tcase_add_test(tc, maildir_inbox);
	tcase_add_test(tc, fifo_inbox);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tm, setup, teardown);
	tcase_set_timeout(tm, 180);
	tcase_add_test(tm, maildir_both_ways);
	tcase_add_test(tm, fifo_both_ways);
	tcase_add_test(tm, maildir_and_fifo_mixed);
	tcase_add_test(tm, foreign_mail_ignored_maildir);
	tcase_add_test(tm, foreign_mail_ignored_fifo);
	tcase_add_test(tm, per_destination_cap_through_mta);
	tcase_add_test(tm, maildir_waits_while_down);
	tcase_add_test(tm, fifo_without_reader_deferred);
	tcase_add_test(tm, send_ready_after_eagain);
	tcase_add_test(tm, reload_while_sending);
	tcase_add_test(tm, latency_maildir);
	tcase_add_test(tm, latency_fifo);
	tcase_add_test(tm, bulk_maildir);
	tcase_add_test(tm, bulk_fifo);
	suite_add_tcase(s, tm);
	return s;
}

int
main(void)
{
	(void)mta_prepare(); /* once, before the tests fork */
	return unit_run(test_suite());
}
