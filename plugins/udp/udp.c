/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libtransport_udp.so: the UDP transport's face to the core, the
 * TransportAPI of seed 004 (Fig. 3, section II-B) over IPv4 and IPv6.
 * Unreliable and unordered as the paper wants; one datagram is one unit.
 * Sessions live in udp_session.c, sockets and I/O in udp_io.c.
 */
#define LOG_TAG "udp"
#include "udp_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


#define UDP_MTU_MIN	576	/* what every IPv4 host must accept */
#define UDP_MTU_MAX	65507	/* 65535 - 20 (IPv4) - 8 (UDP) */
#define UDP_BUF_MIN	4096
#define UDP_BUF_MAX	(1024ull * 1024 * 1024)
#define UDP_SESSIONS_MAX 1048576

static const struct ferry_cfg_key udp_keys[] = {
	{ "BIND_ADDRESS", "0.0.0.0 ::",
	    "local IP addresses to bind, one socket each" },
	{ "PORT", "2086", "UDP port to bind; 0 takes any free port" },
	{ "ADVERTISE", "auto",
	    "'auto' (addresses of the bound interfaces), 'none' (send only, no HELO) or ip:port list" },
	{ "BLACKLIST", "127.0.0.0/8 ::1/128",
	    "networks never sent to nor accepted from (CIDR list)" },
	{ "MTU", "1452",
	    "largest datagram payload; 1452 passes IPv6 and IPv4 on Ethernet unfragmented (576..65507)" },
	{ "COST", "1", "relative cost; the core prefers the cheapest transport" },
	{ "RCVBUF", "4 MiB", "socket receive buffer" },
	{ "SNDBUF", "4 MiB", "socket send buffer" },
	{ "MAX_SESSIONS", "1024",
	    "most sessions kept for inbound sources (spoofing bound)" },
	{ "IDLE_TIMEOUT", "30 s",
	    "an inbound session the core never associates is freed after this" },
	{ NULL, NULL, NULL },
};

static const struct ipt_limits udp_limits = { UDP_MTU_MIN, UDP_MTU_MAX };

static struct udp *
udp_from_api(struct ferry_transport_api *api)
{
	return (struct udp *)(void *)((char *)api -
	    offsetof(struct udp, api));
}

static int
udp_settings_load(const struct ipt *ipt, struct udp_settings *ret)
{
	struct udp_settings set;
	uint64_t v;

	if (ipt_cfg_size(ipt, "RCVBUF", UDP_BUF_MIN, UDP_BUF_MAX,
	    &set.rcvbuf) < 0 ||
	    ipt_cfg_size(ipt, "SNDBUF", UDP_BUF_MIN, UDP_BUF_MAX,
	    &set.sndbuf) < 0 ||
	    ipt_cfg_uint(ipt, "MAX_SESSIONS", 1, UDP_SESSIONS_MAX, &v) < 0)
		return -EINVAL;
	set.max_sessions = (size_t)v;
	*ret = set;
	return 0;
}

static int
udp_verify_helo(void *cls, const void *addr, size_t len)
{
	struct udp *u = cls;

	return ipt_verify(&u->ipt, addr, len, NULL);
}

static int
udp_create_helo_at(void *cls, unsigned index, void *addr, size_t max,
    size_t *ret_len)
{
	struct udp *u = cls;
	struct sockaddr_storage names[IPT_BIND_MAX];

	/* Before the sockets exist (and in stub mode) the configured bind
	 * addresses stand in; PORT = 0 then has nothing to advertise. */
	if (u->n_socks == 0)
		return ipt_create_helo(&u->ipt, u->ipt.cfg.bind,
		    u->ipt.cfg.n_bind, index, addr,
		    max, ret_len);
	for (size_t i = 0; i < u->n_socks; i++)
		names[i] = u->socks[i].name;
	return ipt_create_helo(&u->ipt, names, u->n_socks, index,
	    addr, max, ret_len);
}

static int
udp_create_helo(void *cls, void *addr, size_t max, size_t *ret_len)
{
	return udp_create_helo_at(cls, 0, addr, max, ret_len);
}

static int
udp_address_to_string(void *cls, const void *addr, size_t len, char *buf,
    size_t size)
{
	(void)cls;
	return ipt_address_to_string(addr, len, buf, size);
}

static int
udp_connect(void *cls, const void *addr, size_t len,
    struct ferry_tsession **ret_ts)
{
	struct udp *u = cls;
	struct sockaddr_storage ss;
	struct ferry_tsession *ts;
	struct udp_sock *sock;
	uint8_t key[NETADDR_HELO_MAX];
	size_t key_len;
	int r;

	if (u->ipt.stub)
		return -EOPNOTSUPP;
	r = ipt_verify(&u->ipt, addr, len, &ss);
	if (r < 0)
		return r;
	r = netaddr_encode(&ss, key, sizeof(key), &key_len);
	if (r < 0)
		return r;
	ts = udp_session_lookup(u, key, key_len);
	if (ts != NULL) {
		udp_session_ref(ts);
		*ret_ts = ts;
		return 0;
	}
	r = udp_io_open(u);
	if (r < 0)
		return r;
	sock = udp_io_sock_for(u, ss.ss_family);
	if (sock == NULL)
		return -EAFNOSUPPORT;
	return udp_session_new(u, sock, &ss, key, key_len, 1, ret_ts);
}

static int
udp_associate(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	/* A UDP session cannot die while the core holds it, and the core
	 * may only associate one it was handed in receive(). */
	udp_session_ref(ts);
	return 0;
}

static int
udp_send(void *cls, struct ferry_tsession *ts, const void *msg, size_t len,
    bool is_encrypted, uint32_t crc)
{
	struct udp *u = cls;

	(void)is_encrypted; /* no FERRY_TCAP_CRC: the core's frame says it */
	(void)crc;
	if (len == 0)
		return -EINVAL;
	if (len > u->api.mtu)
		return -EMSGSIZE;
	return udp_io_send(ts, msg, len);
}

static int
udp_disconnect(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	udp_session_unref(ts);
	return 0;
}

static int
udp_start_server(void *cls)
{
	struct udp *u = cls;
	int r;

	if (u->ipt.stub)
		return -EOPNOTSUPP;
	r = udp_io_open(u);
	if (r < 0)
		return r;
	udp_io_serve(u, true);
	return 0;
}

static int
udp_stop_server(void *cls)
{
	struct udp *u = cls;

	/* The sockets stay open: sessions may still send (transport.h). */
	udp_io_serve(u, false);
	return 0;
}

static int
udp_reload_config(void *cls)
{
	struct udp *u = cls;
	struct udp_settings set;
	struct ipt_cfg next;
	int r;

	r = ipt_cfg_load(&u->ipt, &udp_limits, &next);
	if (r < 0)
		return r;
	r = udp_settings_load(&u->ipt, &set);
	if (r < 0) {
		ipt_cfg_done(&next);
		return r;
	}
	ipt_cfg_commit(&u->ipt, &next);
	u->set = set;
	u->api.mtu = u->ipt.cfg.mtu;
	u->api.cost = u->ipt.cfg.cost;
	if (u->ipt.stub)
		return 0;
	udp_io_set_buffers(u);
	udp_session_reconfigure(u);
	return 0;
}

static int
udp_session_address(void *cls, struct ferry_tsession *ts, void *addr,
    size_t max, size_t *ret_len)
{
	(void)cls;
	if (max < ts->key_len)
		return -ENOSPC;
	memcpy(addr, ts->key, ts->key_len);
	*ret_len = ts->key_len;
	return 0;
}

static void
udp_fill_api(struct udp *u)
{
	struct ferry_transport_api *api = &u->api;

	api->abi_version = FERRY_TRANSPORT_ABI_VERSION;
	api->size = sizeof(*api);
	api->name = "udp";
	api->protocol = FERRY_PROTO_UDP;
	api->mtu = u->ipt.cfg.mtu;
	api->cost = u->ipt.cfg.cost;
	api->caps = FERRY_TCAP_INBOUND_REPLY;
	api->keys = udp_keys;
	api->cls = u;
	api->verify_helo = udp_verify_helo;
	api->create_helo = udp_create_helo;
	api->create_helo_at = udp_create_helo_at;
	api->address_to_string = udp_address_to_string;
	api->connect = udp_connect;
	api->associate = udp_associate;
	api->send = udp_send;
	api->disconnect = udp_disconnect;
	api->start_server = udp_start_server;
	api->stop_server = udp_stop_server;
	api->reload_config = udp_reload_config;
	api->session_address = udp_session_address;
}

static void
udp_stats_init(struct udp *u)
{
	static const struct stats_slot slots[] = {
#define UDP_STAT(f) STATS_SLOT(struct udp_stats, f)
		UDP_STAT(rx_datagrams), UDP_STAT(rx_bytes),
		UDP_STAT(tx_datagrams), UDP_STAT(tx_bytes),
		UDP_STAT(tx_eagain), UDP_STAT(tx_errors),
		UDP_STAT(drop_oversize), UDP_STAT(drop_table_full),
		UDP_STAT(drop_blacklisted), UDP_STAT(drop_empty),
		UDP_STAT(sessions_created), UDP_STAT(sessions_evicted),
		UDP_STAT(sessions_timed_out),
#undef UDP_STAT
	};

	plog_stats_bind(&u->ipt.log, &u->st, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static void
udp_free(struct udp *u)
{
	if (u == NULL)
		return;
	udp_session_done(u);
	udp_io_close(u);
	ipt_done(&u->ipt);
	free(u);
}

/* The core's struct must be ours and complete up to log_level. */
static bool
udp_core_ok(const struct ferry_core_api *core)
{
	return core != NULL &&
	    core->abi_version == FERRY_TRANSPORT_ABI_VERSION &&
	    FERRY_HAS(core, struct ferry_core_api, log_level) &&
	    core->vlog != NULL && core->cfg_get != NULL &&
	    (core->receive == NULL || (core->base != NULL &&
	    core->session_gone != NULL && core->send_ready != NULL));
}

FERRY_EXPORT struct ferry_transport_api *
init_transport(const struct ferry_core_api *core)
{
	struct udp *u;

	if (!udp_core_ok(core))
		return NULL;
	u = calloc(1, sizeof(*u));
	if (u == NULL)
		return NULL;
	ipt_init(&u->ipt, core, "udp", udp_keys);
	if (ipt_cfg_load(&u->ipt, &udp_limits, &u->ipt.cfg) < 0 ||
	    udp_settings_load(&u->ipt, &u->set) < 0)
		goto fail;
	udp_fill_api(u);
	udp_stats_init(u);
	if (!u->ipt.stub && udp_session_init(u) < 0) {
		plog(&u->ipt.log, FERRY_LOG_ERR, "out of memory");
		goto fail;
	}
	return &u->api;
fail:
	udp_free(u);
	return NULL;
}

FERRY_EXPORT void
done_transport(struct ferry_transport_api *api)
{
	if (api != NULL)
		udp_free(udp_from_api(api));
}
