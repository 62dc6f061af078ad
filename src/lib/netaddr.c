/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * IP endpoint addresses (see netaddr.h), layer 0: HELO form, text form,
 * CIDR lists and the refusal predicates of seed 004, section II-C.
 */
#include "lib/netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cfg.h"
#include "lib/wire.h"

#define NETADDR_FAMILY_V4 4
#define NETADDR_FAMILY_V6 6

/* ::ffff:0:0/96, where IPv6 sockets show IPv4 peers */
static const uint8_t netaddr_v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

static const struct sockaddr_in *
netaddr_in4(const struct sockaddr_storage *ss)
{
	return (const struct sockaddr_in *)(const void *)ss;
}

static const struct sockaddr_in6 *
netaddr_in6(const struct sockaddr_storage *ss)
{
	return (const struct sockaddr_in6 *)(const void *)ss;
}

socklen_t
netaddr_socklen(const struct sockaddr_storage *ss)
{
	switch (ss->ss_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	default:
		return 0;
	}
}

size_t
netaddr_ip_bytes(const struct sockaddr_storage *ss, const uint8_t **ret_ip)
{
	const struct in6_addr *a6;

	if (ss->ss_family == AF_INET) {
		*ret_ip = (const uint8_t *)&netaddr_in4(ss)->sin_addr;
		return 4;
	}
	if (ss->ss_family != AF_INET6)
		return 0;
	a6 = &netaddr_in6(ss)->sin6_addr;
	if (IN6_IS_ADDR_V4MAPPED(a6)) {
		*ret_ip = a6->s6_addr + 12;
		return 4;
	}
	*ret_ip = a6->s6_addr;
	return 16;
}

uint16_t
netaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(netaddr_in4(ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(netaddr_in6(ss)->sin6_port);
	return 0;
}

void
netaddr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)(void *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)(void *)ss)->sin6_port = htons(port);
}

/* Builds a sockaddr from 4 or 16 IP bytes. */
static void
netaddr_fill(struct sockaddr_storage *ss, const uint8_t *ip, size_t iplen,
    uint16_t port)
{
	memset(ss, 0, sizeof(*ss));
	if (iplen == 4) {
		struct sockaddr_in *sin = (struct sockaddr_in *)(void *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, ip, 4);
		sin->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)(void *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, ip, 16);
		sin6->sin6_port = htons(port);
	}
}

void
netaddr_unmap(struct sockaddr_storage *ss)
{
	const uint8_t *ip;
	uint8_t v4[4];
	uint16_t port;

	if (ss->ss_family != AF_INET6 || netaddr_ip_bytes(ss, &ip) != 4)
		return;
	memcpy(v4, ip, sizeof(v4));
	port = netaddr_port(ss);
	netaddr_fill(ss, v4, sizeof(v4), port);
}

int
netaddr_encode(const struct sockaddr_storage *ss, void *out, size_t max,
    size_t *ret_len)
{
	uint8_t *p = out;
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 0)
		return -EAFNOSUPPORT;
	if (max < 1 + iplen + 2)
		return -ENOSPC;
	p[0] = iplen == 4 ? NETADDR_FAMILY_V4 : NETADDR_FAMILY_V6;
	memcpy(p + 1, ip, iplen);
	wire_put16(p + 1 + iplen, netaddr_port(ss));
	*ret_len = 1 + iplen + 2;
	return 0;
}

int
netaddr_decode(const void *in, size_t len, struct sockaddr_storage *ret)
{
	const uint8_t *p = in;
	size_t iplen;
	uint16_t port;

	if (len == NETADDR_HELO_V4_LEN && p[0] == NETADDR_FAMILY_V4)
		iplen = 4;
	else if (len == NETADDR_HELO_V6_LEN && p[0] == NETADDR_FAMILY_V6)
		iplen = 16;
	else
		return -EINVAL;
	port = wire_get16(p + 1 + iplen);
	if (port == 0)
		return -EINVAL;
	/* One endpoint, one form: a mapped address must travel as IPv4.
	 * Compared bytewise: the wire bytes need not be aligned. */
	if (iplen == 16 && memcmp(p + 1, netaddr_v4mapped_prefix,
	    sizeof(netaddr_v4mapped_prefix)) == 0)
		return -EINVAL;
	netaddr_fill(ret, p + 1, iplen, port);
	return 0;
}

/* Copies len bytes of s into a NUL-terminated buffer; false if too long. */
static bool
netaddr_copy(char *dst, size_t size, const char *s, size_t len)
{
	if (len >= size)
		return false;
	memcpy(dst, s, len);
	dst[len] = '\0';
	return true;
}

/* Decimal 1..65535 without sign, spaces or leading zeros beyond "0". */
static int
netaddr_parse_port(const char *s, size_t len, uint16_t *ret)
{
	uint32_t v = 0;

	if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (uint32_t)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -EINVAL;
	*ret = (uint16_t)v;
	return 0;
}

/* Bare or bracketed IP text to 4 or 16 bytes; returns the length or 0. */
static size_t
netaddr_pton(const char *s, size_t len, uint8_t ip[16])
{
	char tmp[INET6_ADDRSTRLEN];

	/* inet_pton would stop at a NUL and take "1.2.3.4\0junk" */
	if (memchr(s, '\0', len) != NULL)
		return 0;
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		if (!netaddr_copy(tmp, sizeof(tmp), s + 1, len - 2))
			return 0;
		return inet_pton(AF_INET6, tmp, ip) == 1 ? 16 : 0;
	}
	if (!netaddr_copy(tmp, sizeof(tmp), s, len))
		return 0;
	if (inet_pton(AF_INET, tmp, ip) == 1)
		return 4;
	return inet_pton(AF_INET6, tmp, ip) == 1 ? 16 : 0;
}

int
netaddr_parse_ip(const char *s, size_t len, uint16_t port,
    struct sockaddr_storage *ret)
{
	uint8_t ip[16];
	size_t iplen = netaddr_pton(s, len, ip);

	if (iplen == 0)
		return -EINVAL;
	netaddr_fill(ret, ip, iplen, port);
	return 0;
}

int
netaddr_parse(const char *s, size_t len, struct sockaddr_storage *ret)
{
	const char *colon;
	uint16_t port;
	uint8_t ip[16];
	size_t hostlen, iplen;

	colon = len > 0 ? memrchr(s, ':', len) : NULL;
	if (colon == NULL)
		return -EINVAL;
	hostlen = (size_t)(colon - s);
	/* An IPv6 host must be bracketed, else its last group reads as a
	 * port: "::1:2086" is refused rather than guessed. */
	if (hostlen == 0 || (memchr(s, ':', hostlen) != NULL && s[0] != '['))
		return -EINVAL;
	if (netaddr_parse_port(colon + 1, len - hostlen - 1, &port) < 0)
		return -EINVAL;
	iplen = netaddr_pton(s, hostlen, ip);
	if (iplen == 0)
		return -EINVAL;
	netaddr_fill(ret, ip, iplen, port);
	return 0;
}

int
netaddr_format(const struct sockaddr_storage *ss, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);
	int n;

	if (iplen == 0)
		return -EAFNOSUPPORT;
	if (inet_ntop(iplen == 4 ? AF_INET : AF_INET6, ip, host,
	    sizeof(host)) == NULL)
		return -EAFNOSUPPORT;
	n = snprintf(buf, size, iplen == 4 ? "%s:%u" : "[%s]:%u", host,
	    (unsigned)netaddr_port(ss));
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return 0;
}

bool
netaddr_is_unspecified(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 4)
		return ip[0] == 0;
	return iplen == 16 &&
	    IN6_IS_ADDR_UNSPECIFIED(&netaddr_in6(ss)->sin6_addr);
}

bool
netaddr_is_multicast(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 4)
		return (ip[0] & 0xf0) == 0xe0;
	return iplen == 16 && ip[0] == 0xff;
}

bool
netaddr_is_broadcast(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;

	return netaddr_ip_bytes(ss, &ip) == 4 && ip[0] == 0xff &&
	    ip[1] == 0xff && ip[2] == 0xff && ip[3] == 0xff;
}

bool
netaddr_is_loopback(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 4)
		return ip[0] == 127;
	return iplen == 16 && IN6_IS_ADDR_LOOPBACK(&netaddr_in6(ss)->sin6_addr);
}

bool
netaddr_is_link_local(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 4)
		return ip[0] == 169 && ip[1] == 254;
	return iplen == 16 && ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80;
}

bool
netaddr_is_refused(const struct sockaddr_storage *ss)
{
	const uint8_t *ip;

	return netaddr_ip_bytes(ss, &ip) == 0 || netaddr_port(ss) == 0 ||
	    netaddr_is_unspecified(ss) || netaddr_is_multicast(ss) ||
	    netaddr_is_broadcast(ss);
}

/* Prefix length 0..max in decimal, at most 3 digits. */
static int
netaddr_parse_prefix(const char *s, size_t len, unsigned max,
    uint8_t *ret)
{
	unsigned v = 0;

	if (len == 0 || len > 3 || (s[0] == '0' && len > 1))
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*ret = (uint8_t)v;
	return 0;
}

/* True if the first `prefix` bits of a and b agree. */
static bool
netaddr_prefix_equal(const uint8_t *a, const uint8_t *b, unsigned prefix)
{
	unsigned bytes = prefix / 8, bits = prefix % 8;
	uint8_t mask;

	if (memcmp(a, b, bytes) != 0)
		return false;
	if (bits == 0)
		return true;
	mask = (uint8_t)(0xff << (8 - bits));
	return ((a[bytes] ^ b[bytes]) & mask) == 0;
}

int
netaddr_net_parse(const char *s, size_t len, struct netaddr_net *ret)
{
	struct netaddr_net net;
	const char *slash = len > 0 ? memchr(s, '/', len) : NULL;
	size_t iplen, hostlen = slash != NULL ? (size_t)(slash - s) : len;
	unsigned maxbits;

	memset(&net, 0, sizeof(net));
	iplen = netaddr_pton(s, hostlen, net.ip);
	if (iplen == 0)
		return -EINVAL;
	maxbits = (unsigned)iplen * 8;
	net.family = iplen == 4 ? NETADDR_FAMILY_V4 : NETADDR_FAMILY_V6;
	net.prefix = (uint8_t)maxbits;
	if (slash != NULL && netaddr_parse_prefix(slash + 1,
	    len - hostlen - 1, maxbits, &net.prefix) < 0)
		return -EINVAL;
	/* "10.1.2.3/8" is more likely a typo than a network: refuse it. */
	for (unsigned bit = net.prefix; bit < maxbits; bit++)
		if (net.ip[bit / 8] & (0x80 >> (bit % 8)))
			return -EINVAL;
	*ret = net;
	return 0;
}

int
netaddr_netlist_parse(const char *s, struct netaddr_netlist *ret)
{
	struct netaddr_netlist list = { NULL, 0 };
	const char *p = s, *word;
	size_t len, n = 0;

	while (cfg_next_word(&p, &word, &len))
		n++;
	if (n > 0) {
		list.nets = calloc(n, sizeof(*list.nets));
		if (list.nets == NULL)
			return -ENOMEM;
	}
	for (p = s; cfg_next_word(&p, &word, &len); list.n++) {
		if (netaddr_net_parse(word, len, &list.nets[list.n]) < 0) {
			free(list.nets);
			return -EINVAL;
		}
	}
	*ret = list;
	return 0;
}

void
netaddr_netlist_done(struct netaddr_netlist *list)
{
	free(list->nets);
	list->nets = NULL;
	list->n = 0;
}

bool
netaddr_netlist_match(const struct netaddr_netlist *list,
    const struct sockaddr_storage *ss)
{
	const uint8_t *ip, *raw6 = NULL;
	size_t iplen = netaddr_ip_bytes(ss, &ip);

	if (iplen == 0)
		return false;
	if (ss->ss_family == AF_INET6)
		raw6 = netaddr_in6(ss)->sin6_addr.s6_addr;
	for (size_t i = 0; i < list->n; i++) {
		const struct netaddr_net *net = &list->nets[i];

		if (net->family == NETADDR_FAMILY_V4 && iplen == 4 &&
		    netaddr_prefix_equal(ip, net->ip, net->prefix))
			return true;
		if (net->family == NETADDR_FAMILY_V6 && raw6 != NULL &&
		    netaddr_prefix_equal(raw6, net->ip, net->prefix))
			return true;
	}
	return false;
}
