/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The [intermediary] section (imd.h), intermediary layer. */
#define LOG_TAG "intermediary"
#include "intermediary/imd_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/netaddr.h"

const struct cfg_schema_key imd_cfg_keys[] = {
	{ "intermediary", "LISTEN", NULL,
	    "address:port of the HTTPS API for thin clients; unset: the role is off" },
	{ "intermediary", "CERTIFICATE", NULL,
	    "PEM file of the TLS certificate chain (needed with LISTEN)" },
	{ "intermediary", "PRIVATE_KEY", NULL,
	    "PEM file of the certificate's private key (needed with LISTEN)" },
	{ "intermediary", "PUBLIC_URL", NULL,
	    "the URL clients reach this intermediary at (default: https://LISTEN)" },
	{ "intermediary", "CLOCK_SKEW", "300 s",
	    "a request signed further than this from our clock is stale" },
	{ "intermediary", "MAX_HEADER_BYTES", "8 KiB",
	    "bytes of a request line and its header fields" },
	{ "intermediary", "MAX_REQUEST_BYTES", "64 MiB",
	    "bytes of one request body" },
	{ "intermediary", "CLIENT_RATE", "20",
	    "requests a second from one client key (bursts of twice that)" },
	{ "intermediary", "CLIENT_QUOTA", "1 GiB",
	    "block bytes relayed for one client key in 24 hours; 0: no limit" },
	{ "intermediary", "MAX_CONNECTIONS", "256",
	    "client connections served at once" },
	{ "intermediary", "MAX_CONNECTIONS_PER_ADDRESS", "32",
	    "client connections from one address (IPv4, or IPv6 /64) at once; 0: no limit" },
	{ "intermediary", "ADDRESS_RATE", "100",
	    "request heads a second from one address (bursts of twice that), before any signature is checked; 0: no limit" },
	{ "intermediary", "REQUEST_TIMEOUT", "10 s",
	    "time a client has to send a request's head, and over which its body must come at 1 KiB/s" },
	{ "intermediary", "MAX_IN_FLIGHT", "16 MiB",
	    "block bytes relayed and not yet answered by the DHT; uploads wait past it" },
	{ "intermediary", "MAX_NONCES", "262144",
	    "request nonces remembered against replay; requests wait (503) when it is full" },
	{ "intermediary", "ANNOUNCE_LIFETIME", "1 h",
	    "how long the announcement in the DHT lasts; made again each third of it (at most the storing peers' [dht] RECORD_LIFETIME)" },
	{ "intermediary", "LOOKUP_INTERVAL", "60 s",
	    "how often the other intermediaries are looked up in the DHT (and a failed announcement made again)" },
	{ "intermediary", "HERE_INTERVAL", "30 s",
	    "a client's takes here are told to the other intermediaries at most this often" },
	{ "intermediary", "FORWARD_TIMEOUT", "10 s",
	    "a batch of entries forwarded and not acknowledged within this is sent again" },
	{ "intermediary", "FORWARD_IN_FLIGHT", "16",
	    "batches forwarded and not yet acknowledged, all clients together" },
	{ "intermediary", "FORWARD_CLIENTS", "1024",
	    "clients forwarded to another intermediary at once, and clients whose takes here are told" },
	{ "intermediary", "LEAVE_TIMEOUT", "5 s",
	    "at shutdown, how long to wait for the other intermediaries to be told this one leaves and for relays in flight to end; 0: leave at once" },
	{ "intermediary", "HERE_RATE", "100",
	    "other intermediaries' claims that a client takes there, checked a second (bursts of twice that)" },
	{ NULL, NULL, NULL, NULL },
};

#define S "intermediary"

static int
imd_cfg_fail(struct cfg *cfg)
{
	log_err("%s", cfg_error(cfg));
	return -EINVAL;
}

/* A string key into buf, "" when unset. */
static int
imd_cfg_str(struct cfg *cfg, const char *key, char *buf, size_t size)
{
	const char *v = cfg_get(cfg, S, key);

	if (v == NULL)
		v = "";
	if (snprintf(buf, size, "%s", v) >= (int)size) {
		(void)cfg_fail(cfg, S, key, "too long");
		return imd_cfg_fail(cfg);
	}
	return 0;
}

/* A URL goes into JSON answers as it is: no quote, backslash, blank or
 * control character, and an http(s) scheme. */
static bool
imd_cfg_url_ok(const char *url)
{
	if (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0)
		return false;
	for (const char *p = url; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
		    *p == '"' || *p == '\\')
			return false;
	return true;
}

static int
imd_cfg_limits(struct cfg *cfg, struct imd_cfg *c)
{
	uint64_t v;

	if (cfg_get_duration(cfg, S, "CLOCK_SKEW", 1000000, 86400000000ull,
	        &v) < 0)
		return imd_cfg_fail(cfg);
	c->skew_s = v / 1000000;
	if (cfg_get_size(cfg, S, "MAX_HEADER_BYTES", 1024, 1024 * 1024, &v) < 0)
		return imd_cfg_fail(cfg);
	c->http.max_head = (size_t)v;
	if (cfg_get_size(cfg, S, "MAX_REQUEST_BYTES", 4096, 1ull << 40,
	        &c->http.max_body) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_uint(cfg, S, "CLIENT_RATE", 1, 1000000, &v) < 0)
		return imd_cfg_fail(cfg);
	c->client_rate = (double)v;
	if (cfg_get_size(cfg, S, "CLIENT_QUOTA", 0, UINT64_MAX / 2,
	        &c->client_quota) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_uint(cfg, S, "MAX_CONNECTIONS", 1, 1000000, &v) < 0)
		return imd_cfg_fail(cfg);
	c->http.max_conns = (unsigned)v;
	if (cfg_get_uint(cfg, S, "MAX_CONNECTIONS_PER_ADDRESS", 0, 1000000,
	        &v) < 0)
		return imd_cfg_fail(cfg);
	c->http.max_conns_per_addr = (unsigned)v;
	if (cfg_get_uint(cfg, S, "ADDRESS_RATE", 0, 1000000, &v) < 0)
		return imd_cfg_fail(cfg);
	c->http.addr_rate = (unsigned)v;
	if (cfg_get_duration(cfg, S, "REQUEST_TIMEOUT", 100000, 3600000000ull,
	        &c->http.timeout_us) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_size(cfg, S, "MAX_IN_FLIGHT", 64 * 1024, 1ull << 40,
	        &c->max_in_flight) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_uint(cfg, S, "MAX_NONCES", 1024, 100000000,
	        &c->max_nonces) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_duration(cfg, S, "LEAVE_TIMEOUT", 0, 600000000ull,
	        &c->leave_us) < 0)
		return imd_cfg_fail(cfg);
	return 0;
}

int
imd_cfg_fed(struct cfg *cfg, struct imd_fed_cfg *ret)
{
	struct imd_fed_cfg f;
	uint64_t v;

	if (cfg_get_duration(cfg, S, "ANNOUNCE_LIFETIME", 10000000,
	        86400000000ull, &v) < 0)
		return imd_cfg_fail(cfg);
	f.lifetime_s = v / 1000000;
	if (cfg_get_duration(cfg, S, "LOOKUP_INTERVAL", 1000000, 86400000000ull,
	        &f.lookup_us) < 0 ||
	    cfg_get_duration(cfg, S, "HERE_INTERVAL", 1000000, 3600000000ull,
	        &f.here_us) < 0 ||
	    cfg_get_duration(cfg, S, "FORWARD_TIMEOUT", 1000000, 3600000000ull,
	        &f.timeout_us) < 0)
		return imd_cfg_fail(cfg);
	if (cfg_get_uint(cfg, S, "FORWARD_IN_FLIGHT", 1, 4096, &v) < 0)
		return imd_cfg_fail(cfg);
	f.in_flight = (unsigned)v;
	if (cfg_get_uint(cfg, S, "FORWARD_CLIENTS", 1, 1000000, &v) < 0)
		return imd_cfg_fail(cfg);
	f.clients = (unsigned)v;
	if (cfg_get_uint(cfg, S, "HERE_RATE", 1, 1000000, &v) < 0)
		return imd_cfg_fail(cfg);
	f.here_rate = (unsigned)v;
	*ret = f;
	return 0;
}

int
imd_cfg_read(struct cfg *cfg, struct imd_cfg *ret)
{
	struct sockaddr_storage ss;
	struct imd_cfg c;

	memset(&c, 0, sizeof(c));
	if (imd_cfg_str(cfg, "LISTEN", c.listen, sizeof(c.listen)) < 0 ||
	    imd_cfg_str(cfg, "CERTIFICATE", c.cert, sizeof(c.cert)) < 0 ||
	    imd_cfg_str(cfg, "PRIVATE_KEY", c.key, sizeof(c.key)) < 0 ||
	    imd_cfg_str(cfg, "PUBLIC_URL", c.public_url, sizeof(c.public_url)) <
	        0 ||
	    imd_cfg_limits(cfg, &c) < 0 || imd_cfg_fed(cfg, &c.fed) < 0)
		return -EINVAL;
	if (c.listen[0] != '\0') {
		if (netaddr_parse(c.listen, strlen(c.listen), &ss) < 0) {
			(void)cfg_fail(cfg, S, "LISTEN",
			    "expected address:port, as 127.0.0.1:8443 or [::1]:8443");
			return imd_cfg_fail(cfg);
		}
		if (c.cert[0] == '\0' || c.key[0] == '\0') {
			(void)cfg_fail(cfg, S,
			    c.cert[0] == '\0' ? "CERTIFICATE" : "PRIVATE_KEY",
			    "needed with LISTEN");
			return imd_cfg_fail(cfg);
		}
		if (c.public_url[0] == '\0')
			(void)snprintf(c.public_url, sizeof(c.public_url),
			    "https://%s", c.listen);
	}
	if (c.public_url[0] != '\0' && !imd_cfg_url_ok(c.public_url)) {
		(void)cfg_fail(cfg, S, "PUBLIC_URL",
		    "expected an http(s) URL of visible ASCII without quotes");
		return imd_cfg_fail(cfg);
	}
	*ret = c;
	return 0;
}

int
imd_config_check(struct cfg *cfg)
{
	struct rqueue_cfg qc;
	struct imd_cfg c;

	if (imd_cfg_read(cfg, &c) < 0 || rqueue_cfg_parse(cfg, &qc) < 0)
		return -EINVAL;
	return 0;
}
