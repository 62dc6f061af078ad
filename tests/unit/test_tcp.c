/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Tests of libtransport_tcp.so through the plugin ABI, with real sockets
 * on 127.0.0.1 (and ::1 where the kernel has it): two instances talking,
 * references, idle closes, framing errors, the bounded write queue with
 * -EAGAIN and send_ready, dead connections reported with session_gone,
 * connect failures and timeouts, limits and stub mode. Raw sockets play
 * the misbehaving peers.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "plugin_core.h"
#include "unit.h"

#define UNIT 16384
#define TCP_WELCOME 44 /* "FERRYTCP", u16 version, u16 reserved, id[32] */

static struct event_base *base;
static struct pc a, b;

static void
setup(void)
{
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	pc_init(&a, base, 0xaa);
	pc_init(&b, base, 0xbb);
}

static void
teardown(void)
{
	pc_unload(&a);
	pc_unload(&b);
	event_base_free(base);
}

/* Loads pc with an ephemeral port and no blacklist; listens if asked. */
static void
start(struct pc *pc, const char *bind, bool listen_too)
{
	pc_set(pc, "BIND_ADDRESS", bind);
	pc_set(pc, "PORT", "0");
	if (pc_cfg_get(pc, "BLACKLIST") == NULL)
		pc_set(pc, "BLACKLIST", "");
	ck_assert_ptr_nonnull(pc_load(pc, "tcp"));
	if (listen_too)
		ck_assert_int_eq(pc->t->start_server(pc->t->cls), 0);
}

static bool
got_units(void *arg)
{
	const struct pc *pc = arg;

	return pc->n_rx > 0;
}

static bool
got_gone(void *arg)
{
	const struct pc *pc = arg;

	return pc->n_gone > 0;
}

static struct ferry_tsession *
connect_to(struct pc *from, const uint8_t *addr, size_t len)
{
	struct ferry_tsession *ts = NULL;

	ck_assert_int_eq(from->t->connect(from->t->cls, addr, len, &ts), 0);
	ck_assert_ptr_nonnull(ts);
	return ts;
}

static struct ferry_tsession *
b_to_a(void)
{
	uint8_t helo[32];
	size_t len = pc_helo(&a, helo, sizeof(helo));

	return connect_to(&b, helo, len);
}

static int
send_str(struct pc *pc, struct ferry_tsession *ts, const char *s)
{
	return pc->t->send(pc->t->cls, ts, s, strlen(s), true, 0);
}

/* A plain listening socket on 127.0.0.1 playing a peer; writes its HELO
 * address to addr. */
static int
raw_listener(int backlog, uint8_t *addr)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int small = 4096;

	ck_assert_int_ge(fd, 0);
	/* inherited by accepted sockets: the kernel holds little for us */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(fd, backlog), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	addr[0] = 4;
	memcpy(addr + 1, &sin.sin_addr, 4);
	memcpy(addr + 5, &sin.sin_port, 2);
	return fd;
}

/* A plain client socket connected to the HELO address of pc. */
static int
raw_client(struct pc *pc)
{
	uint8_t helo[32];
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_uint_eq(pc_helo(pc, helo, sizeof(helo)), 7);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	memcpy(&sin.sin_addr, helo + 1, 4);
	memcpy(&sin.sin_port, helo + 5, 2);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

struct accepting {
	int lfd, fd;
};

static bool
accepted(void *arg)
{
	struct accepting *acc = arg;

	acc->fd = accept4(acc->lfd, NULL, NULL, SOCK_NONBLOCK);
	return acc->fd >= 0;
}

/* Units a receives, in order, as one string. */
static char order[256];

static void
record_order(struct pc *pc, const struct ferry_message_pack *mp)
{
	size_t used = strlen(order);

	(void)pc;
	ck_assert_uint_lt(used + mp->len + 1, sizeof(order));
	memcpy(order + used, mp->msg, mp->len);
	order[used + mp->len] = '|';
}

static bool
a_got_three(void *arg)
{
	(void)arg;
	return a.n_rx >= 3;
}

START_TEST(two_instances_talk)
{
	struct ferry_tsession *tb, *ta;
	uint8_t addr[32];
	size_t len;

	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	ck_assert_uint_eq(a.t->caps,
	    FERRY_TCAP_RELIABLE | FERRY_TCAP_INBOUND_REPLY);
	ck_assert_uint_eq(a.t->mtu, 65535);
	ck_assert_uint_eq(a.t->cost, 10);
	order[0] = '\0';
	a.on_receive = record_order;
	tb = b_to_a();
	/* queued while connecting, delivered in order after the welcome */
	ck_assert_int_eq(send_str(&b, tb, "one"), 0);
	ck_assert_int_eq(send_str(&b, tb, "two"), 0);
	ck_assert_int_eq(send_str(&b, tb, "three"), 0);
	ck_assert(pc_run_until(base, a_got_three, NULL, 2000));
	ck_assert_str_eq(order, "one|two|three|");
	ck_assert(a.last_has_sender);
	ck_assert_mem_eq(&a.last_sender, &b.id, sizeof(b.id));
	ck_assert_uint_eq(a.last_src_len, 4);
	ck_assert_mem_eq(a.last_src, "\x7f\x00\x00\x01", 4);
	ta = a.last_ts;
	ck_assert_int_eq(a.t->session_address(a.t->cls, ta, addr,
	    sizeof(addr), &len), 0);
	ck_assert_uint_eq(len, 7);
	ck_assert_int_eq(a.t->associate(a.t->cls, ta), 0);
	ck_assert_int_eq(send_str(&a, ta, "back"), 0);
	ck_assert(pc_run_until(base, got_units, &b, 2000));
	ck_assert_ptr_eq(b.last_ts, tb);
	ck_assert(!b.last_has_sender); /* the accepting side sends none */
	ck_assert_mem_eq(b.last, "back", 4);
	ck_assert_uint_eq(pc_get(&a, "connections_in"), 1);
	ck_assert_uint_eq(pc_get(&b, "connections_out"), 1);
	ck_assert_uint_eq(pc_get(&a, "rx_units"), 3);
	ck_assert_uint_eq(pc_get(&b, "tx_units"), 3);
	ck_assert_uint_eq(pc_get(&b, "tx_bytes"),
	    TCP_WELCOME + 3 * 4 + 3 + 3 + 5);
	ck_assert_int_eq(a.t->disconnect(a.t->cls, ta), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

/* b dials a from b's listening address when that is one specific
 * address, and lets the kernel choose otherwise. */
static void
check_source(const char *b_bind, bool b_listens, const char *want)
{
	struct ferry_tsession *tb;
	struct in_addr ip;

	ck_assert_int_eq(inet_pton(AF_INET, want, &ip), 1);
	start(&a, "127.0.0.1", true);
	start(&b, b_bind, b_listens);
	a.n_rx = 0;
	tb = b_to_a();
	ck_assert_int_eq(send_str(&b, tb, "from"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(a.last_src_len, 4);
	ck_assert_mem_eq(a.last_src, &ip, 4);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
	pc_unload(&a);
	pc_unload(&b);
	pc_init(&a, base, 0xaa);
	pc_init(&b, base, 0xbb);
}

START_TEST(connects_from_bound_address)
{
	check_source("127.0.0.77", true, "127.0.0.77");
	/* Not serving yet: nothing to speak for. */
	check_source("127.0.0.77", false, "127.0.0.1");
	check_source("0.0.0.0", true, "127.0.0.1");
	/* Two addresses: the route decides. */
	check_source("127.0.0.77 127.0.0.78", true, "127.0.0.1");
}
END_TEST

START_TEST(connect_reuses)
{
	uint8_t helo[32];
	struct ferry_tsession *t1, *t2;
	size_t len;

	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	len = pc_helo(&a, helo, sizeof(helo));
	t1 = connect_to(&b, helo, len);
	t2 = connect_to(&b, helo, len);
	ck_assert_ptr_eq(t1, t2);
	ck_assert_uint_eq(pc_get(&b, "connections_out"), 1);
	ck_assert_int_eq(b.t->associate(b.t->cls, t1), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t1), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t1), 0);
	ck_assert_int_eq(send_str(&b, t2, "alive"), 0);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t2), 0);
	/* closed by the last disconnect, with no session_gone */
	t1 = connect_to(&b, helo, len);
	ck_assert_uint_eq(pc_get(&b, "connections_out"), 2);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, t1), 0);
	pc_run_for(base, 50);
	ck_assert_uint_eq(b.n_gone, 0);
}
END_TEST

static bool
a_idle_closed(void *arg)
{
	(void)arg;
	return pc_get(&a, "idle_closes") > 0 && b.n_gone > 0;
}

START_TEST(unassociated_closed_after_idle)
{
	struct ferry_tsession *tb;

	pc_set(&a, "IDLE_TIMEOUT", "50 ms");
	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	tb = b_to_a();
	ck_assert_int_eq(send_str(&b, tb, "hello"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	/* a never associates: it closes; b holds tb and hears of it */
	ck_assert(pc_run_until(base, a_idle_closed, NULL, 3000));
	ck_assert_ptr_eq(b.gone[0], tb);
	ck_assert_uint_eq(b.n_gone, 1);
	ck_assert_uint_ge(pc_get(&b, "lost"), 1);
}
END_TEST

START_TEST(associated_stays_open)
{
	struct ferry_tsession *tb, *ta;

	pc_set(&a, "IDLE_TIMEOUT", "20 ms");
	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	tb = b_to_a();
	ck_assert_int_eq(send_str(&b, tb, "hello"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ta = a.last_ts;
	ck_assert_int_eq(a.t->associate(a.t->cls, ta), 0);
	pc_run_for(base, 150);
	ck_assert_uint_eq(pc_get(&a, "idle_closes"), 0);
	ck_assert_uint_eq(b.n_gone, 0);
	/* b goes away: a holds ta and hears of it */
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
	ck_assert(pc_run_until(base, got_gone, &a, 2000));
	ck_assert_ptr_eq(a.gone[0], ta);
}
END_TEST

static bool
a_framing_error(void *arg)
{
	(void)arg;
	return pc_get(&a, "framing_errors") > 0;
}

START_TEST(mtu_enforced)
{
	static uint8_t big[70000];
	struct ferry_tsession *tb;

	pc_set(&a, "MTU", "1024");
	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	tb = b_to_a();
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 65536, false, 0),
	    -EMSGSIZE);
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 0, false, 0), -EINVAL);
	/* b's MTU allows it, a's does not: a closes the stream */
	ck_assert_int_eq(b.t->send(b.t->cls, tb, big, 1025, false, 0), 0);
	ck_assert(pc_run_until(base, a_framing_error, NULL, 2000));
	ck_assert(pc_run_until(base, got_gone, &b, 2000));
	ck_assert_uint_eq(a.n_rx, 0);
}
END_TEST

/* The raw peer's reading side. */
struct drain {
	int fd;
	size_t bytes;	/* read so far */
	size_t want;	/* drain_all stops here */
	uint8_t head[64]; /* the first bytes */
};

static void
drain_read(struct drain *d)
{
	uint8_t buf[65536];
	ssize_t n;

	while ((n = read(d->fd, buf, sizeof(buf))) > 0) {
		size_t room = sizeof(d->head) - (d->bytes < sizeof(d->head) ?
		    d->bytes : sizeof(d->head));

		memcpy(d->head + sizeof(d->head) - room, buf,
		    room < (size_t)n ? room : (size_t)n);
		d->bytes += (size_t)n;
	}
}

static bool
drain_until_ready(void *arg)
{
	drain_read(arg);
	return b.n_ready > 0;
}

static bool
drain_all(void *arg)
{
	struct drain *d = arg;

	drain_read(d);
	return d->bytes >= d->want;
}

START_TEST(write_queue_bound)
{
	static uint8_t unit[UNIT];
	struct accepting acc = { -1, -1 };
	struct ferry_tsession *tb;
	struct drain d;
	uint8_t addr[8];
	size_t sent = 0;
	int r = 0;

	pc_set(&b, "WRITE_QUEUE", "64 KiB");
	start(&b, "127.0.0.1", false);
	acc.lfd = raw_listener(4, addr);
	tb = connect_to(&b, addr, 7);
	ck_assert(pc_run_until(base, accepted, &acc, 2000));
	pc_run_for(base, 20); /* connected: the welcome goes out */
	/* the peer reads nothing: kernel buffers, then our queue fill up */
	while (sent < 100000 &&
	    (r = b.t->send(b.t->cls, tb, unit, sizeof(unit), true, 0)) == 0)
		sent++;
	ck_assert_int_eq(r, -EAGAIN);
	ck_assert_uint_ge(pc_get(&b, "tx_eagain"), 1);
	ck_assert_uint_eq(b.n_ready, 0);
	/* it stays refused while full */
	ck_assert_int_eq(b.t->send(b.t->cls, tb, unit, sizeof(unit), true, 0),
	    -EAGAIN);
	/* the peer reads: send_ready follows */
	memset(&d, 0, sizeof(d));
	d.fd = acc.fd;
	ck_assert(pc_run_until(base, drain_until_ready, &d, 5000));
	ck_assert_ptr_eq(b.ready_ts, tb);
	ck_assert_uint_eq(b.n_ready, 1);
	/* nothing was dropped: every accepted unit arrives */
	d.want = TCP_WELCOME + sent * (4 + sizeof(unit));
	ck_assert(pc_run_until(base, drain_all, &d, 5000));
	ck_assert_uint_eq(d.bytes, d.want);
	ck_assert_mem_eq(d.head, "FERRYTCP\x00\x01", 10);
	ck_assert_mem_eq(d.head + 12, &b.id, 32);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
	(void)close(acc.fd);
	(void)close(acc.lfd);
}
END_TEST

START_TEST(killed_connection_gone)
{
	struct accepting acc = { -1, -1 };
	struct linger lg = { 1, 0 };
	struct ferry_tsession *tb;
	uint8_t addr[8];

	start(&b, "127.0.0.1", false);
	acc.lfd = raw_listener(4, addr);
	tb = connect_to(&b, addr, 7);
	ck_assert(pc_run_until(base, accepted, &acc, 2000));
	/* the peer resets the connection */
	ck_assert_int_eq(setsockopt(acc.fd, SOL_SOCKET, SO_LINGER, &lg,
	    sizeof(lg)), 0);
	(void)close(acc.fd);
	ck_assert(pc_run_until(base, got_gone, &b, 2000));
	ck_assert_ptr_eq(b.gone[0], tb);
	ck_assert_uint_eq(b.n_gone, 1);
	(void)close(acc.lfd);
}
END_TEST

START_TEST(connect_refused)
{
	struct ferry_tsession *tb = NULL;
	uint8_t addr[8];
	int lfd, r;

	start(&b, "127.0.0.1", false);
	lfd = raw_listener(1, addr);
	(void)close(lfd); /* nobody listens on that port now */
	r = b.t->connect(b.t->cls, addr, 7, &tb);
	if (r == 0) {
		ck_assert(pc_run_until(base, got_gone, &b, 2000));
		ck_assert_ptr_eq(b.gone[0], tb);
	} else {
		ck_assert_int_eq(r, -ECONNREFUSED);
	}
	ck_assert_uint_eq(pc_get(&b, "connect_failed"), 1);
}
END_TEST

START_TEST(connect_times_out)
{
	struct sockaddr_in sin;
	struct ferry_tsession *tb;
	uint8_t addr[8];
	int lfd, filler;

	pc_set(&b, "CONNECT_TIMEOUT", "200 ms");
	start(&b, "127.0.0.1", false);
	/* a listener whose accept queue is full drops the next SYN */
	lfd = raw_listener(0, addr);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	memcpy(&sin.sin_addr, addr + 1, 4);
	memcpy(&sin.sin_port, addr + 5, 2);
	filler = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(connect(filler, (struct sockaddr *)&sin,
	    sizeof(sin)), 0);
	tb = connect_to(&b, addr, 7);
	ck_assert(pc_run_until(base, got_gone, &b, 3000));
	ck_assert_ptr_eq(b.gone[0], tb);
	ck_assert_uint_eq(pc_get(&b, "connect_failed"), 1);
	(void)close(filler);
	(void)close(lfd);
}
END_TEST

static bool
eof_on(void *arg)
{
	int *fd = arg;
	char buf[64];

	return read(*fd, buf, sizeof(buf)) == 0;
}

START_TEST(bad_stream_closed)
{
	static const uint8_t zero_unit[4] = { 0, 0, 0, 0 };
	uint8_t w[TCP_WELCOME];
	int fd;

	start(&a, "127.0.0.1", true);
	fd = raw_client(&a);
	ck_assert_int_eq(write(fd, "GET / HTTP/1.0\r\n\r\n", 18), 18);
	(void)fcntl(fd, F_SETFL, O_NONBLOCK);
	ck_assert(pc_run_until(base, eof_on, &fd, 2000));
	ck_assert_uint_eq(pc_get(&a, "framing_errors"), 1);
	(void)close(fd);
	/* a right welcome, then a unit of length 0 */
	fd = raw_client(&a);
	memcpy(w, "FERRYTCP\x00\x01\x00\x00", 12);
	memset(w + 12, 0x77, 32);
	ck_assert_int_eq(write(fd, w, sizeof(w)), (ssize_t)sizeof(w));
	ck_assert_int_eq(write(fd, zero_unit, 4), 4);
	(void)fcntl(fd, F_SETFL, O_NONBLOCK);
	ck_assert(pc_run_until(base, eof_on, &fd, 2000));
	ck_assert_uint_eq(pc_get(&a, "framing_errors"), 2);
	ck_assert_uint_eq(a.n_rx, 0);
	(void)close(fd);
}
END_TEST

static bool
a_got_ten(void *arg)
{
	(void)arg;
	return a.n_rx >= 10;
}

START_TEST(disconnect_flushes)
{
	static uint8_t big[60000];
	struct ferry_tsession *tb;

	start(&a, "127.0.0.1", true);
	start(&b, "127.0.0.1", false);
	tb = b_to_a();
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(b.t->send(b.t->cls, tb, big, sizeof(big),
		    true, 0), 0);
	/* let go at once: what was queued still reaches a */
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
	ck_assert(pc_run_until(base, a_got_ten, NULL, 3000));
	ck_assert_uint_eq(a.rx_bytes, 10 * sizeof(big));
	ck_assert_uint_eq(b.n_gone, 0);
}
END_TEST

static bool
a_refused(void *arg)
{
	(void)arg;
	return pc_get(&a, "refused") > 0;
}

START_TEST(max_connections)
{
	int fd1, fd2;

	pc_set(&a, "MAX_CONNECTIONS", "1");
	start(&a, "127.0.0.1", true);
	fd1 = raw_client(&a);
	fd2 = raw_client(&a);
	ck_assert(pc_run_until(base, a_refused, NULL, 2000));
	ck_assert_uint_eq(pc_get(&a, "connections_in"), 1);
	(void)close(fd1);
	(void)close(fd2);
}
END_TEST

START_TEST(verify_and_stub)
{
	struct pc s;
	struct ferry_tsession *ts;
	uint8_t helo[32];
	char text[64];
	size_t len;
	int fds;

	pc_init(&s, NULL, 0x55);
	pc_set(&s, "BIND_ADDRESS", "192.0.2.3");
	fds = pc_count_fds();
	ck_assert_ptr_nonnull(pc_load(&s, "tcp"));
	ck_assert_int_eq(pc_count_fds(), fds); /* no socket */
	/* auto in stub mode: the configured address and port */
	len = pc_helo(&s, helo, sizeof(helo));
	ck_assert_int_eq(s.t->address_to_string(s.t->cls, helo, len, text,
	    sizeof(text)), 0);
	ck_assert_str_eq(text, "192.0.2.3:2087");
	ck_assert_int_eq(s.t->verify_helo(s.t->cls, helo, len), 0);
	len = pc_addr(&s, "127.0.0.1:2087", helo);
	ck_assert_int_eq(s.t->verify_helo(s.t->cls, helo, len), -EPERM);
	len = pc_addr(&s, "0.0.0.0:2087", helo);
	ck_assert_int_eq(s.t->verify_helo(s.t->cls, helo, len), -EPERM);
	ck_assert_int_eq(s.t->verify_helo(s.t->cls, helo, len - 1), -EINVAL);
	ck_assert_int_eq(s.t->connect(s.t->cls, helo, len, &ts), -EOPNOTSUPP);
	ck_assert_int_eq(pc_count_fds(), fds);
	pc_unload(&s);

	pc_init(&s, NULL, 0x55);
	pc_set(&s, "MTU", "512");
	ck_assert_ptr_null(pc_load(&s, "tcp"));
	ck_assert(pc_logged(&s, "MTU = '512'"));
	pc_unload(&s);
	pc_init(&s, NULL, 0x55);
	pc_set(&s, "WRITE_QUEUE", "lots");
	ck_assert_ptr_null(pc_load(&s, "tcp"));
	ck_assert(pc_logged(&s, "WRITE_QUEUE = 'lots'"));
	pc_unload(&s);
}
END_TEST

static bool
ipv6_loopback(void)
{
	struct sockaddr_in6 sin6;
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	bool ok;

	if (fd < 0)
		return false;
	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_addr = in6addr_loopback;
	ok = bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) == 0;
	(void)close(fd);
	return ok;
}

START_TEST(ipv6_talk)
{
	struct ferry_tsession *tb;

	if (!ipv6_loopback())
		return; /* no IPv6 here: nothing to test */
	start(&a, "::1", true);
	start(&b, "::1", false);
	tb = b_to_a();
	ck_assert_int_eq(send_str(&b, tb, "six"), 0);
	ck_assert(pc_run_until(base, got_units, &a, 2000));
	ck_assert_uint_eq(a.last_src_len, 16);
	ck_assert_int_eq(b.t->disconnect(b.t->cls, tb), 0);
}
END_TEST

static Suite *
tcp_suite(void)
{
	Suite *s = suite_create("tcp");
	TCase *tc = tcase_create("plugin");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, two_instances_talk);
	tcase_add_test(tc, connects_from_bound_address);
	tcase_add_test(tc, connect_reuses);
	tcase_add_test(tc, unassociated_closed_after_idle);
	tcase_add_test(tc, associated_stays_open);
	tcase_add_test(tc, mtu_enforced);
	tcase_add_test(tc, write_queue_bound);
	tcase_add_test(tc, killed_connection_gone);
	tcase_add_test(tc, connect_refused);
	tcase_add_test(tc, connect_times_out);
	tcase_add_test(tc, bad_stream_closed);
	tcase_add_test(tc, disconnect_flushes);
	tcase_add_test(tc, max_connections);
	tcase_add_test(tc, verify_and_stub);
	tcase_add_test(tc, ipv6_talk);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(tcp_suite());
}
