/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The wire-speaking test peer (see wirepeer.h). */
#include "wirepeer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sodium.h>

#include "core/helo.h"
#include "core/identity.h"
#include "lib/netaddr.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "harness.h"

int
wirepeer_new(uint64_t seed, struct wirepeer **ret)
{
	return wirepeer_new_at(seed, "127.0.0.1", ret);
}

int
wirepeer_new_at(uint64_t seed, const char *ip, struct wirepeer **ret)
{
	struct wirepeer *w;
	uint8_t s[32] = { 0 };
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int r;

	if (harness_sin(ip, 0, &sin) < 0)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (w == NULL || sodium_init() < 0) {
		free(w);
		return -ENOMEM;
	}
	wire_put64(s, seed);
	memcpy(s + 8, "wirepeer", 8);
	r = identity_from_seed(s, &w->ident);
	if (r < 0) {
		free(w);
		return r;
	}
	w->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (w->fd < 0 || bind(w->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(w->fd, (struct sockaddr *)&sin, &len) < 0) {
		r = -errno;
		wirepeer_free(w);
		return r;
	}
	w->addr = sin;
	w->port = ntohs(sin.sin_port);
	*ret = w;
	return 0;
}

void
wirepeer_free(struct wirepeer *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0)
		(void)close(w->fd);
	identity_free(w->ident);
	free(w);
}

int
wirepeer_helo(const struct wirepeer *w, const struct sockaddr_in *at,
    int64_t lifetime_s, uint8_t *out, size_t max)
{
	struct sockaddr_storage ss;
	uint8_t addr[NETADDR_HELO_MAX];
	size_t alen;
	int r;

	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, at, sizeof(*at));
	r = netaddr_encode(&ss, addr, sizeof(addr), &alen);
	if (r < 0)
		return r;
	return helo_build(w->ident, FERRY_PROTO_UDP, 1452,
	    (uint64_t)((int64_t)time_real_s() + lifetime_s), addr, alen, out,
	    max);
}

int
wirepeer_uri(const struct wirepeer *w, char **ret)
{
	uint8_t helo[FERRY_HELO_FIXED + FERRY_ADDR_MAX];
	int n = wirepeer_helo(w, &w->addr, 3600, helo, sizeof(helo));

	if (n < 0)
		return n;
	return helo_uri_encode(&w->ident->id, helo, (size_t)n, ret);
}

int
wirepeer_send(const struct wirepeer *w, const struct sockaddr_in *to,
    const void *buf, size_t len)
{
	if (sendto(w->fd, buf, len, 0, (const struct sockaddr *)to,
	        sizeof(*to)) < 0)
		return -errno;
	return 0;
}

int
wirepeer_recv(const struct wirepeer *w, void *buf, size_t size,
    int timeout_ms, struct sockaddr_in *ret_from)
{
	struct pollfd pfd = { w->fd, POLLIN, 0 };
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return -ETIMEDOUT;
	n = recvfrom(w->fd, buf, size, 0, (struct sockaddr *)&sin, &slen);
	if (n < 0)
		return -errno;
	if (ret_from != NULL)
		*ret_from = sin;
	return (int)n;
}
