/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * IP endpoint addresses, layer 0: the binary form the UDP and TCP
 * transports put in HELOs, the "1.2.3.4:2086" / "[::1]:2086" text form,
 * CIDR network lists for blacklists, and the predicates that refuse
 * addresses no peer may advertise (seed 004, section II-C).
 *
 * HELO form: u8 family (4 or 6), the IP (4 or 16 bytes), u16 port
 * big-endian; 7 or 19 bytes. An IPv4-mapped IPv6 address is always
 * written as IPv4, so one endpoint has one form.
 */
#ifndef FERRY_LIB_NETADDR_H
#define FERRY_LIB_NETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define NETADDR_HELO_V4_LEN	7
#define NETADDR_HELO_V6_LEN	19
#define NETADDR_HELO_MAX	NETADDR_HELO_V6_LEN
/* "[" + 45 characters of IPv6 text + "]:" + 5 port digits + NUL */
#define NETADDR_STRLEN		54

/* One CIDR network. IPv4 networks keep their 4 bytes at the front of ip. */
struct netaddr_net {
	uint8_t family; /* 4 or 6 */
	uint8_t prefix; /* 0..32 or 0..128 */
	uint8_t ip[16]; /* network address, host bits zero */
};

/* A list of networks; the owner embeds it and calls netaddr_netlist_done. */
struct netaddr_netlist {
	struct netaddr_net *nets; /* n entries, malloc'd; NULL when n == 0 */
	size_t n;
};

/* Length of the sockaddr behind ss for bind/connect/sendto: the size of
 * sockaddr_in or sockaddr_in6, or 0 for any other family. */
socklen_t netaddr_socklen(const struct sockaddr_storage *ss);

/* Writes ss in HELO form to out. 0 and *ret_len, -EAFNOSUPPORT for a
 * family other than AF_INET/AF_INET6, -ENOSPC if max is too small. */
int netaddr_encode(const struct sockaddr_storage *ss, void *out, size_t max,
    size_t *ret_len);
/* Reads the HELO form. The length must match the family exactly and the
 * port must not be 0; IPv4-mapped IPv6 is refused (it has an IPv4 form).
 * 0 and *ret, or -EINVAL. */
int netaddr_decode(const void *in, size_t len, struct sockaddr_storage *ret);

/* Parses "1.2.3.4:2086" or "[2001:db8::1]:2086" (len bytes of s, no NUL
 * needed). The port must be 1..65535; zone ids are refused.
 * 0 and *ret, or -EINVAL. */
int netaddr_parse(const char *s, size_t len, struct sockaddr_storage *ret);
/* Parses a bare IP, "10.1.2.3", "::" or "[::1]", and sets port.
 * 0 and *ret, or -EINVAL. */
int netaddr_parse_ip(const char *s, size_t len, uint16_t port,
    struct sockaddr_storage *ret);
/* Formats as netaddr_parse reads it (IPv4-mapped shown as IPv4).
 * 0, -EAFNOSUPPORT or -ENOSPC (buf then holds a truncated string). */
int netaddr_format(const struct sockaddr_storage *ss, char *buf,
    size_t size);

/* Rewrites an IPv4-mapped IPv6 address as AF_INET in place; any other
 * address is left alone. */
void netaddr_unmap(struct sockaddr_storage *ss);
/* The IP bytes of ss without the port (4 for IPv4 and IPv4-mapped, 16 for
 * IPv6), pointing into ss, for per-source accounting. 0 and *ret_ip
 * unchanged for other families. */
size_t netaddr_ip_bytes(const struct sockaddr_storage *ss,
    const uint8_t **ret_ip);
/* The port in host order, 0 for other families. */
uint16_t netaddr_port(const struct sockaddr_storage *ss);
/* Sets the port of an AF_INET or AF_INET6 address. */
void netaddr_set_port(struct sockaddr_storage *ss, uint16_t port);

/* 0.0.0.0/8 and :: (also IPv4-mapped). */
bool netaddr_is_unspecified(const struct sockaddr_storage *ss);
/* 224.0.0.0/4 and ff00::/8. */
bool netaddr_is_multicast(const struct sockaddr_storage *ss);
/* 255.255.255.255, the only broadcast address knowable without a mask. */
bool netaddr_is_broadcast(const struct sockaddr_storage *ss);
/* 127.0.0.0/8 and ::1. */
bool netaddr_is_loopback(const struct sockaddr_storage *ss);
/* 169.254.0.0/16 and fe80::/10. */
bool netaddr_is_link_local(const struct sockaddr_storage *ss);
/* True for what no peer may be sent to whatever the configuration says:
 * unspecified, multicast, broadcast, port 0, or not IPv4/IPv6. */
bool netaddr_is_refused(const struct sockaddr_storage *ss);

/* Parses one network, "10.0.0.0/8", "fc00::/7", or a bare IP (a /32 or
 * /128). Host bits beyond the prefix must be zero (a typo guard).
 * 0 and *ret, or -EINVAL. */
int netaddr_net_parse(const char *s, size_t len, struct netaddr_net *ret);
/* Parses a list of networks separated by spaces, tabs or commas; an empty
 * string gives an empty list. 0 and *ret (the caller then owns it), or
 * -EINVAL / -ENOMEM with *ret untouched. */
int netaddr_netlist_parse(const char *s, struct netaddr_netlist *ret);
/* Frees the list; it is empty afterwards. */
void netaddr_netlist_done(struct netaddr_netlist *list);
/* True if ss lies in a network of the list. An IPv4-mapped IPv6 address
 * matches IPv4 networks as its IPv4 address, and IPv6 networks as is. */
bool netaddr_netlist_match(const struct netaddr_netlist *list,
    const struct sockaddr_storage *ss);

#endif /* FERRY_LIB_NETADDR_H */
