/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libFuzzer target for src/lib/netaddr.c: the input is tried as a HELO
 * address, as "ip:port" text, as a bare IP, as one CIDR network and as a
 * network list. What is accepted must survive a round trip through the
 * other form unchanged.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "lib/netaddr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TEXT_MAX 1024

/* Encodes ss and checks that text form and HELO form agree. */
static void
fuzz_round_trip(const struct sockaddr_storage *ss, const uint8_t *want,
    size_t want_len)
{
	uint8_t helo[NETADDR_HELO_MAX], again[NETADDR_HELO_MAX];
	struct sockaddr_storage back;
	char text[NETADDR_STRLEN];
	size_t len, len2;

	if (netaddr_encode(ss, helo, sizeof(helo), &len) != 0)
		abort();
	if (want != NULL && (len != want_len || memcmp(helo, want, len) != 0))
		abort();
	if (netaddr_format(ss, text, sizeof(text)) != 0)
		abort();
	if (netaddr_parse(text, strlen(text), &back) != 0 ||
	    netaddr_encode(&back, again, sizeof(again), &len2) != 0 ||
	    len2 != len || memcmp(again, helo, len) != 0)
		abort();
	(void)netaddr_is_refused(ss);
	(void)netaddr_is_loopback(ss);
	(void)netaddr_is_link_local(ss);
}

static void
fuzz_lists(const char *text, const struct sockaddr_storage *ss)
{
	struct netaddr_netlist list;

	if (netaddr_netlist_parse(text, &list) != 0)
		return;
	for (size_t i = 0; i < list.n; i++)
		if (list.nets[i].prefix > (list.nets[i].family == 4 ? 32 : 128))
			abort();
	if (ss != NULL)
		(void)netaddr_netlist_match(&list, ss);
	netaddr_netlist_done(&list);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage ss, seen;
	struct netaddr_net net;
	char text[FUZZ_TEXT_MAX + 1];
	const char *s = (const char *)data;
	bool have = false;

	/* HELO form: the canonical encoding is the input itself */
	if (netaddr_decode(data, size, &ss) == 0) {
		fuzz_round_trip(&ss, data, size);
		seen = ss;
		have = true;
	}
	if (netaddr_parse(s, size, &ss) == 0) {
		fuzz_round_trip(&ss, NULL, 0);
		seen = ss;
		have = true;
	}
	if (netaddr_parse_ip(s, size, 1, &ss) == 0)
		fuzz_round_trip(&ss, NULL, 0);
	if (netaddr_net_parse(s, size, &net) == 0 &&
	    net.prefix > (net.family == 4 ? 32 : 128))
		abort();
	if (size <= FUZZ_TEXT_MAX) {
		memcpy(text, data, size);
		text[size] = '\0';
		fuzz_lists(text, have ? &seen : NULL);
	}
	return 0;
}
