/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers of the adversarial integration tests (see adv.h). */
#include "adv.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>
#include <check.h>

#include "lib/netaddr.h"
#include "lib/wire.h"
#include "core/identity.h"
#include "core/kx.h"
#include "core/pingpong.h"
#include "core/rx.h"
#include "procstat.h"
#include "wirepeer.h"

struct harness_daemon *
adv_daemon(struct harness *h, const char *extra)
{
	struct harness_daemon *d;

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	procstat_daemon_env(d);
	ck_assert_int_eq(harness_daemon_transports(d, "udp"), 0);
	if (extra != NULL)
		ck_assert_int_eq(harness_daemon_config(d, "%s\n", extra), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
	return d;
}

void
adv_connect_uri(struct harness_daemon *d, const char *uri)
{
	struct ferry_client *c;
	int r;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	r = ferry_connect_uri(c, uri);
	ferry_client_close(c);
	ck_assert_msg(r == 0, "ferry_connect_uri: %s", strerror(-r));
}

size_t
adv_daemon_addr(const struct harness_daemon *d, uint8_t *out, size_t max)
{
	struct sockaddr_storage ss;
	size_t len;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, &d->addr, sizeof(d->addr));
	ck_assert_int_eq(netaddr_encode(&ss, out, max, &len), 0);
	return len;
}

/* Does the datagram hold a message of this type? Sets *ret_msg/size to
 * the first one. */
static bool
adv_find(const uint8_t *buf, size_t len, uint16_t want, const uint8_t **ret_msg,
    size_t *ret_size)
{
	const uint8_t *msg;
	size_t off = 0, size;
	uint16_t type;

	while (rx_next(buf, len, &off, &type, &msg, &size) > 0)
		if (type == want) {
			*ret_msg = msg;
			*ret_size = size;
			return true;
		}
	return false;
}

int
adv_await_ping(struct wirepeer *w, uint8_t *buf, size_t size, struct ping *ret,
    struct sockaddr_in *ret_from, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		uint64_t now = harness_now_ms();
		const uint8_t *msg;
		size_t msize;
		int n;

		if (now >= end)
			return -ETIMEDOUT;
		n = wirepeer_recv(w, buf, size, (int)(end - now), ret_from);
		if (n < 0)
			return n;
		if (adv_find(buf, (size_t)n, FERRY_P2P_PING, &msg, &msize) &&
		    ping_decode(msg, msize, ret) == 0)
			return 0;
	}
}

void
adv_collect(struct wirepeer *w, const struct sockaddr_in *from, int ms,
    struct adv_rx *ret)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	static uint8_t buf[65536];
	const uint8_t *msg;
	size_t msize;

	memset(ret, 0, sizeof(*ret));
	for (;;) {
		uint64_t now = harness_now_ms();
		struct sockaddr_in sender;
		int n;

		if (now >= end)
			break;
		n = wirepeer_recv(w, buf, sizeof(buf), (int)(end - now),
		    &sender);
		if (n < 0)
			break;
		if (from != NULL && !harness_sin_eq(&sender, from))
			continue;
		ret->datagrams++;
		ret->bytes += (size_t)n;
		if ((size_t)n > ret->largest)
			ret->largest = (size_t)n;
		ret->pings +=
		    adv_find(buf, (size_t)n, FERRY_P2P_PING, &msg, &msize);
		ret->pongs +=
		    adv_find(buf, (size_t)n, FERRY_P2P_PONG, &msg, &msize);
		ret->kxs +=
		    adv_find(buf, (size_t)n, FERRY_P2P_KX, &msg, &msize);
	}
}

unsigned
adv_count_pings(struct wirepeer *const *ws, size_t n, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	static uint8_t buf[65536];
	const uint8_t *msg;
	unsigned total = 0;
	size_t msize;

	ck_assert_ptr_nonnull(pfd);
	for (size_t i = 0; i < n; i++) {
		pfd[i].fd = ws[i]->fd;
		pfd[i].events = POLLIN;
	}
	for (uint64_t now; (now = harness_now_ms()) < end;) {
		if (poll(pfd, n, (int)(end - now)) <= 0)
			break;
		for (size_t i = 0; i < n; i++) {
			ssize_t len;

			if (!(pfd[i].revents & POLLIN))
				continue;
			len = recv(pfd[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (len <= 0 ||
			    !adv_find(buf, (size_t)len, FERRY_P2P_PING, &msg,
			        &msize))
				continue;
			total++;
		}
	}
	free(pfd);
	return total;
}

uint64_t
adv_cpu_us(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long long ut = 0, st = 0;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	p = fgets(line, sizeof(line), f);
	(void)fclose(f);
	/* The command name may hold spaces: fields count from its ')'. */
	if (p == NULL || (p = strrchr(line, ')')) == NULL ||
	    sscanf(p + 2,
	        "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	        &st) != 2 ||
	    tck <= 0)
		return 0;
	return (ut + st) * 1000000ull / (unsigned long long)tck;
}

void
adv_kx(const struct identity *ident, const struct ferry_peer_id *to,
    uint64_t ts_us, uint8_t out[FERRY_KX_SIZE])
{
	uint8_t sk[KX_EPH_LEN];
	struct kx_msg m;

	memset(&m, 0, sizeof(m));
	m.receiver = *to;
	kx_eph_new(sk, m.eph);
	sodium_memzero(sk, sizeof(sk));
	m.timestamp_us = ts_us;
	m.sender_index = randombytes_random() | 1;
	kx_build(out, ident, &m);
}

struct identity *
adv_identity(uint64_t seed)
{
	uint8_t s[32] = { 0 };
	struct identity *ident = NULL;

	ck_assert_int_ge(sodium_init(), 0);
	wire_put64(s, seed);
	memcpy(s + 8, "adversary", 9);
	ck_assert_int_eq(identity_from_seed(s, &ident), 0);
	return ident;
}
