/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * HELO addresses and bound sockets of an IP transport (see ipt.h): what
 * create_helo advertises, what verify_helo accepts (seed 004, II-B and the
 * blacklist of II-C), and the one way both transports open a socket.
 */
#define LOG_TAG "ipt"
#include "ipt.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

int
ipt_verify(const struct ipt *ipt, const void *addr, size_t len,
    struct sockaddr_storage *ret)
{
	struct sockaddr_storage ss;

	if (addr == NULL || netaddr_decode(addr, len, &ss) < 0)
		return -EINVAL;
	if (!ipt_allowed(ipt, &ss))
		return -EPERM;
	if (ret != NULL)
		*ret = ss;
	return 0;
}

bool
ipt_allowed(const struct ipt *ipt, const struct sockaddr_storage *ss)
{
	return !netaddr_is_refused(ss) &&
	    !netaddr_netlist_match(&ipt->cfg.blacklist, ss);
}

int
ipt_address_to_string(const void *addr, size_t len, char *buf, size_t size)
{
	struct sockaddr_storage ss;

	if (addr == NULL || buf == NULL || size == 0 ||
	    netaddr_decode(addr, len, &ss) < 0)
		return -EINVAL;
	return netaddr_format(&ss, buf, size);
}

/* Whether an address of ours can go into a HELO. loopback_ok says
 * whether this pass may pick loopback addresses. */
static bool
ipt_advertisable(const struct ipt *ipt, const struct sockaddr_storage *ss,
    bool loopback_ok)
{
	/* The HELO form has no scope id, so fe80::/10 cannot be reached by
	 * it; IPv4 link-local needs none and is judged by the blacklist. */
	if (ss->ss_family == AF_INET6 && netaddr_is_link_local(ss))
		return false;
	if (!loopback_ok && netaddr_is_loopback(ss))
		return false;
	return ipt_allowed(ipt, ss);
}

/* A list of addresses to advertise, without duplicates. */
struct ipt_adv_list {
	struct sockaddr_storage a[IPT_ADV_MAX];
	size_t n;
};

static void
ipt_adv_add(struct ipt_adv_list *l, const struct sockaddr_storage *ss)
{
	for (size_t i = 0; i < l->n; i++)
		if (memcmp(&l->a[i], ss, sizeof(*ss)) == 0)
			return;
	if (l->n < IPT_ADV_MAX)
		l->a[l->n++] = *ss;
}

/* Adds the advertisable interface addresses of family, with port. */
static void
ipt_add_interfaces(const struct ipt *ipt, int family, uint16_t port,
    bool loopback_ok, struct ipt_adv_list *l)
{
	struct ifaddrs *ifs, *ifa;

	if (getifaddrs(&ifs) < 0)
		return;
	for (ifa = ifs; ifa != NULL; ifa = ifa->ifa_next) {
		struct sockaddr_storage ss;

		if (ifa->ifa_addr == NULL || ifa->ifa_addr->sa_family != family ||
		    (ifa->ifa_flags & IFF_UP) == 0)
			continue;
		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, ifa->ifa_addr, family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		netaddr_set_port(&ss, port);
		if (ipt_advertisable(ipt, &ss, loopback_ok))
			ipt_adv_add(l, &ss);
	}
	freeifaddrs(ifs);
}

/* ADVERTISE = auto: specific bound addresses as they are, wildcard ones
 * through the interfaces of their family. Loopback only if nothing else
 * is there, so that a peer with a real interface never advertises
 * 127.0.0.1. */
static void
ipt_auto_list(const struct ipt *ipt, const struct sockaddr_storage *bound,
    size_t n_bound, struct ipt_adv_list *l)
{
	l->n = 0;
	for (int pass = 0; pass < 2 && l->n == 0; pass++) {
		for (size_t i = 0; i < n_bound; i++) {
			const struct sockaddr_storage *b = &bound[i];
			uint16_t port = netaddr_port(b);

			if (port == 0)
				continue;
			if (!netaddr_is_unspecified(b)) {
				if (ipt_advertisable(ipt, b, pass == 1))
					ipt_adv_add(l, b);
				continue;
			}
			ipt_add_interfaces(ipt, b->ss_family, port, pass == 1,
			    l);
		}
	}
}

int
ipt_create_helo(const struct ipt *ipt, const struct sockaddr_storage *bound,
    size_t n_bound, unsigned index, void *addr, size_t max, size_t *ret_len)
{
	struct ipt_adv_list l;

	switch (ipt->cfg.adv_mode) {
	case IPT_ADV_NONE:
		return -ENOENT;
	case IPT_ADV_LIST:
		if (index >= ipt->cfg.n_adv)
			return -ENOENT;
		return netaddr_encode(&ipt->cfg.adv[index], addr, max,
		    ret_len);
	case IPT_ADV_AUTO:
	default:
		ipt_auto_list(ipt, bound, n_bound, &l);
		if (index >= l.n)
			return -ENOENT;
		return netaddr_encode(&l.a[index], addr, max, ret_len);
	}
}

int
ipt_socket_bind(const struct sockaddr_storage *ss, int type,
    bool reuse_addr, int *ret_fd, struct sockaddr_storage *ret_name)
{
	socklen_t len = sizeof(*ret_name);
	int fd, on = 1, r;

	fd = socket(ss->ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Separate IPv4 and IPv6 sockets: the kernel's dual-stack sockets
	 * would show IPv4 peers as mapped addresses and clash with an
	 * IPv4 socket on the same port. */
	if (ss->ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6,
	    IPV6_V6ONLY, &on, sizeof(on)) < 0)
		goto fail;
	if (reuse_addr && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on,
	    sizeof(on)) < 0)
		goto fail;
	if (bind(fd, (const struct sockaddr *)ss, netaddr_socklen(ss)) < 0)
		goto fail;
	memset(ret_name, 0, sizeof(*ret_name));
	if (getsockname(fd, (struct sockaddr *)ret_name, &len) < 0)
		goto fail;
	*ret_fd = fd;
	return 0;
fail:
	r = -errno;
	(void)close(fd);
	return r;
}
