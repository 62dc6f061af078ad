/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The [core] and [testing] configuration keys and their checks, core
 * layer. Every key the core reads is declared here with its default; the
 * table feeds --check-config and ferryd.conf(5).
 */
#define LOG_TAG "core"
#include "core/core_cfg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/transport.h"
#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/time.h"

const struct cfg_schema_key core_cfg_keys[] = {
	{ "core", "TRANSPORTS", "udp tcp",
	    "transports to load, by name (libtransport_NAME.so)" },
	{ "core", "PLUGIN_DIR", NULL,
	    "directory of the transport plugins (default: the install path, or $FERRY_PLUGIN_DIR)" },
	{ "core", "BOOTSTRAP", "",
	    "ferry:// URIs of peers to contact at start, separated by spaces" },
	{ "core", "MAX_PEERS", "64", "links to keep up at most" },
	{ "core", "LINK_POLICY", "auto",
	    "auto: the DHT chooses the peers to link to when it runs, else as core; core: link to every peer whose address validates and gossip the HELOs of others; manual: link only to peers the operator or a layer above (the DHT) names, and to peers that link to us (takes effect at restart)" },
	{ "core", "PIN_IDLE", "10 min",
	    "a link the operator asked for (ferry connect) or that carries messages of local clients is kept this long after the last, whoever chooses links" },
	{ "core", "HELO_LIFETIME", "12 h",
	    "how long our signed HELOs stay valid" },
	{ "core", "VALIDATION_LIFETIME", "1 h",
	    "how long a validated address is trusted before it is checked again" },
	{ "core", "VALIDATION_TIMEOUT", "5 s",
	    "how long to wait for a PONG over a low-latency transport" },
	{ "core", "VALIDATION_TIMEOUT_SLOW", "10 min",
	    "how long to wait for a PONG over a high-latency transport (mail)" },
	{ "core", "PING_INTERVAL", "60 s",
	    "at most one PING per address in this period" },
	{ "core", "PINGS_PER_PEER", "16",
	    "at most this many PINGs per period for addresses learnt from one peer, or from one source outside a link" },
	{ "core", "PONG_RATE", "1000",
	    "PONGs signed per second at most (a PONG costs a signature)" },
	{ "core", "KX_RATE", "2000",
	    "key exchanges verified per second at most, in total" },
	{ "core", "KX_RATE_PER_SOURCE", "20",
	    "key exchanges verified per second at most from one network source" },
	{ "core", "KX_MAX_SKEW", "1 h",
	    "accept key exchanges whose timestamp is at most this far off our clock" },
	{ "core", "REKEY_INTERVAL", "2 min",
	    "renew link keys after this long" },
	{ "core", "REKEY_MESSAGES", "1000000000",
	    "renew link keys after this many frames" },
	{ "core", "KEEPALIVE", "20 s",
	    "send a keepalive on a quiet link this often" },
	{ "core", "LINK_TIMEOUT", "60 s",
	    "declare a link dead after this long without a frame" },
	{ "core", "GOSSIP_INTERVAL", "30 s",
	    "send connected peers the HELOs we validated this often" },
	{ "core", "QUEUE_BYTES", "4 MiB",
	    "bound of one peer's send queue for data (the bulk class)" },
	{ "core", "CONTROL_QUEUE_BYTES", "256 KiB",
	    "bound of one peer's send queue for the small, urgent messages of the layers above (the control class, sent first)" },
	{ "core", "CORK", "0 us",
	    "how long a message may wait for others to share its frame" },
	{ "core", "RECV_WINDOW", "2 MiB",
	    "bytes of messages we take before holding senders back: the window advertised over unreliable transports (keep it well under their socket buffers, which the kernel charges about twice per datagram), and the backlog at which stream transports stop being read" },
	{ "core", "INITIAL_WINDOW", "64 KiB",
	    "congestion window of a new link" },
	{ "core", "REASSEMBLY_PER_PEER", "16 MiB",
	    "memory for half-received large messages per peer" },
	{ "core", "REASSEMBLY_TOTAL", "256 MiB",
	    "memory for half-received large messages in total" },
	{ "core", "REASSEMBLY_TIMEOUT", "60 s",
	    "drop a half-received large message after this long without progress" },
	{ "core", "MAX_UNAUTH_PEERS", "4096",
	    "peers known at most; when full, the oldest half-open one makes room" },
	{ "testing", "ENABLE", "no",
	    "emulate a slower network on what the transports send (tests only)" },
	{ "testing", "TRANSPORTS", "",
	    "transports the emulation applies to (empty: all)" },
	{ "testing", "DELAY", "0 ms", "one-way delay added to each unit" },
	{ "testing", "JITTER", "0 ms",
	    "random extra delay, uniform in [0, JITTER]" },
	{ "testing", "LOSS", "0", "fraction of units dropped (e.g. 0.05)" },
	{ "testing", "RATE", "0",
	    "bytes per second at most (0: unlimited)" },
	{ NULL, NULL, NULL, NULL },
};

const char *
core_cfg_plugin_dir(const struct cfg *cfg)
{
	const char *dir = cfg_get(cfg, "core", "PLUGIN_DIR");

	if (dir != NULL && *dir != '\0')
		return dir;
	dir = getenv("FERRY_PLUGIN_DIR");
	if (dir != NULL && *dir != '\0')
		return dir;
	return FERRY_PLUGIN_DIR;
}

/* [core] LINK_POLICY: auto, core or manual. */
static int
core_cfg_link_policy(struct cfg *cfg, struct core_cfg *cc)
{
	static const char *const names[] = {
		[CORE_LINKS_AUTO] = "auto",
		[CORE_LINKS_CORE] = "core",
		[CORE_LINKS_MANUAL] = "manual",
	};
	const char *v = cfg_get(cfg, "core", "LINK_POLICY");

	for (size_t i = 0; v != NULL && i < sizeof(names) / sizeof(names[0]);
	     i++)
		if (strcasecmp(v, names[i]) == 0) {
			cc->link_policy = (enum core_link_policy)i;
			return 0;
		}
	return cfg_fail(cfg, "core", "LINK_POLICY",
	    "expected auto, core or manual");
}

int
core_cfg_parse(struct cfg *cfg, struct core_cfg *cc)
{
#define DUR(key, min, max, field)                                           \
	do {                                                                \
		if (cfg_get_duration(cfg, "core", key, min, max, &cc->field) < 0) \
			goto bad;                                           \
	} while (0)
#define UINT(key, min, max, field)                                          \
	do {                                                                \
		uint64_t v_;                                                \
		if (cfg_get_uint(cfg, "core", key, min, max, &v_) < 0)      \
			goto bad;                                           \
		cc->field = v_;                                             \
	} while (0)
#define SIZE(key, min, max, field)                                          \
	do {                                                                \
		uint64_t v_;                                                \
		if (cfg_get_size(cfg, "core", key, min, max, &v_) < 0)      \
			goto bad;                                           \
		cc->field = v_;                                             \
	} while (0)
	const uint64_t S = USEC_PER_SEC;

	memset(cc, 0, sizeof(*cc));
	UINT("MAX_PEERS", 1, 100000, max_peers);
	if (core_cfg_link_policy(cfg, cc) < 0)
		goto bad;
	DUR("PIN_IDLE", S, 30 * 86400 * S, pin_idle_us);
	DUR("HELO_LIFETIME", 60 * S, 30 * 86400 * S, helo_lifetime_us);
	DUR("VALIDATION_LIFETIME", 60 * S, 30 * 86400 * S,
	    validation_lifetime_us);
	DUR("VALIDATION_TIMEOUT", 100 * 1000, 600 * S, validation_timeout_us);
	DUR("VALIDATION_TIMEOUT_SLOW", S, 86400 * S,
	    validation_timeout_slow_us);
	DUR("PING_INTERVAL", S, 86400 * S, ping_interval_us);
	UINT("PINGS_PER_PEER", 1, 1000000, pings_per_peer);
	UINT("PONG_RATE", 1, 1000000, pong_rate);
	UINT("KX_RATE", 1, 1000000, kx_rate);
	UINT("KX_RATE_PER_SOURCE", 1, 1000000, kx_rate_per_source);
	DUR("KX_MAX_SKEW", S, 7 * 86400 * S, kx_max_skew_us);
	DUR("REKEY_INTERVAL", S, 86400 * S, rekey_interval_us);
	UINT("REKEY_MESSAGES", 16, (uint64_t)1 << 60, rekey_messages);
	DUR("KEEPALIVE", 100 * 1000, 3600 * S, keepalive_us);
	DUR("LINK_TIMEOUT", S, 86400 * S, link_timeout_us);
	DUR("GOSSIP_INTERVAL", S, 86400 * S, gossip_interval_us);
	SIZE("QUEUE_BYTES", 64 * 1024, (uint64_t)1 << 32, queue_bytes);
	SIZE("CONTROL_QUEUE_BYTES", 16 * 1024, (uint64_t)1 << 32,
	    control_queue_bytes);
	DUR("CORK", 0, S, cork_us);
	SIZE("RECV_WINDOW", 64 * 1024, (uint64_t)1 << 31, recv_window);
	SIZE("INITIAL_WINDOW", 4 * 1024, (uint64_t)1 << 30, initial_window);
	SIZE("REASSEMBLY_PER_PEER", FERRY_APP_MSG_MAX, (uint64_t)1 << 34,
	    reassembly_per_peer);
	SIZE("REASSEMBLY_TOTAL", FERRY_APP_MSG_MAX, (uint64_t)1 << 36,
	    reassembly_total);
	DUR("REASSEMBLY_TIMEOUT", S, 3600 * S, reassembly_timeout_us);
	UINT("MAX_UNAUTH_PEERS", 16, 10000000, max_unauth_peers);
	if (cc->link_timeout_us <= cc->keepalive_us) {
		(void)cfg_fail(cfg, "core", "LINK_TIMEOUT",
		    "must be longer than KEEPALIVE");
		goto bad;
	}
	if (cfg_get_bool(cfg, "testing", "ENABLE", &cc->emu.enable) < 0)
		goto bad;
	if (cfg_get_duration(cfg, "testing", "DELAY", 0, 60 * S,
		&cc->emu.delay_us) < 0 ||
	    cfg_get_duration(cfg, "testing", "JITTER", 0, 60 * S,
		&cc->emu.jitter_us) < 0 ||
	    cfg_get_fraction(cfg, "testing", "LOSS", 0.0, 1.0,
		&cc->emu.loss) < 0 ||
	    cfg_get_size(cfg, "testing", "RATE", 0, (uint64_t)1 << 40,
		&cc->emu.rate) < 0)
		goto bad;
	return 0;
bad:
	log_err("%s", cfg_error(cfg));
	return -EINVAL;
#undef DUR
#undef UINT
#undef SIZE
}
