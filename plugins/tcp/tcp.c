/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libtransport_tcp.so: the TCP transport's face to the core, the
 * TransportAPI of seed 004 (Fig. 3, section II-B) over IPv4 and IPv6.
 * Reliable and ordered underneath, yet the core treats it as any other
 * transport; its cost is above UDP's. Framing lives in tcp_frame.c,
 * connections in tcp_conn.c and tcp_stream.c, listeners in tcp_listen.c.
 */
#define LOG_TAG "tcp"
#include "tcp_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/time.h"

#define TCP_MTU_MIN	1024
#define TCP_MTU_MAX	(1024 * 1024)
#define TCP_QUEUE_MIN	(64 * 1024)
#define TCP_QUEUE_MAX	(1024ull * 1024 * 1024)
#define TCP_CONNS_MAX	1048576
#define TCP_CONNECT_MIN_US (10 * USEC_PER_MSEC)
#define TCP_CONNECT_MAX_US (600 * USEC_PER_SEC)

/*
 * MTU: seed 004 asks stream transports for "a reasonable trade-off between
 * per-message overhead ... and latency". At 64 KiB the 4-byte length and
 * the core's 36-byte AEAD framing cost 0.06 %, while a full unit delays a
 * small one queued behind it by ~65 us at the 1 GB/s loopback moves here.
 */
static const struct ferry_cfg_key tcp_keys[] = {
	{ "BIND_ADDRESS", "0.0.0.0 ::",
	    "local IP addresses to listen on, one socket each" },
	{ "PORT", "2087", "TCP port to listen on; 0 takes any free port" },
	{ "ADVERTISE", "auto",
	    "'auto' (addresses of the bound interfaces), 'none' (outbound only, no HELO) or ip:port list" },
	{ "BLACKLIST", "127.0.0.0/8 ::1/128",
	    "networks never connected to nor accepted from (CIDR list)" },
	{ "MTU", "65535",
	    "largest unit; trades framing overhead against the delay a full unit adds (1024..1048576)" },
	{ "COST", "10", "relative cost; the core prefers the cheapest transport" },
	{ "WRITE_QUEUE", "4 MiB",
	    "bytes queued per connection before send() says -EAGAIN" },
	{ "IDLE_TIMEOUT", "30 s",
	    "an inbound connection the core does not use is closed after this quiet time" },
	{ "MAX_CONNECTIONS", "1024", "most inbound connections at once" },
	{ "CONNECT_TIMEOUT", "10 s",
	    "outbound connect limit; also how long a closing connection may flush" },
	{ NULL, NULL, NULL },
};

static const struct ipt_limits tcp_limits = { TCP_MTU_MIN, TCP_MTU_MAX };

static struct tcp *
tcp_from_api(struct ferry_transport_api *api)
{
	return (struct tcp *)(void *)((char *)api -
	    offsetof(struct tcp, api));
}

static int
tcp_settings_load(const struct ipt *ipt, struct tcp_settings *ret)
{
	struct tcp_settings set;
	uint64_t v;

	if (ipt_cfg_size(ipt, "WRITE_QUEUE", TCP_QUEUE_MIN, TCP_QUEUE_MAX,
	    &set.write_queue) < 0 ||
	    ipt_cfg_uint(ipt, "MAX_CONNECTIONS", 1, TCP_CONNS_MAX, &v) < 0 ||
	    ipt_cfg_duration(ipt, "CONNECT_TIMEOUT", TCP_CONNECT_MIN_US,
	    TCP_CONNECT_MAX_US, &set.connect_us) < 0)
		return -EINVAL;
	set.max_conns = (size_t)v;
	*ret = set;
	return 0;
}

static int
tcp_verify_helo(void *cls, const void *addr, size_t len)
{
	struct tcp *t = cls;

	return ipt_verify(&t->ipt, addr, len, NULL);
}

static int
tcp_create_helo_at(void *cls, unsigned index, void *addr, size_t max,
    size_t *ret_len)
{
	struct tcp *t = cls;
	struct sockaddr_storage names[IPT_BIND_MAX];

	/* Without listeners (stub mode, not started) the configured bind
	 * addresses stand in; PORT = 0 then has nothing to advertise. */
	if (t->n_listeners == 0)
		return ipt_create_helo(&t->ipt, t->ipt.cfg.bind,
		    t->ipt.cfg.n_bind, index, addr,
		    max, ret_len);
	for (size_t i = 0; i < t->n_listeners; i++)
		names[i] = t->listeners[i].name;
	return ipt_create_helo(&t->ipt, names, t->n_listeners, index,
	    addr, max, ret_len);
}

static int
tcp_create_helo(void *cls, void *addr, size_t max, size_t *ret_len)
{
	return tcp_create_helo_at(cls, 0, addr, max, ret_len);
}

static int
tcp_address_to_string(void *cls, const void *addr, size_t len, char *buf,
    size_t size)
{
	(void)cls;
	return ipt_address_to_string(addr, len, buf, size);
}

static int
tcp_connect(void *cls, const void *addr, size_t len,
    struct ferry_tsession **ret_ts)
{
	struct tcp *t = cls;
	struct sockaddr_storage ss;
	int r;

	if (t->ipt.stub)
		return -EOPNOTSUPP;
	r = ipt_verify(&t->ipt, addr, len, &ss);
	if (r < 0)
		return r;
	return tcp_conn_connect(t, &ss, ret_ts);
}

static int
tcp_associate(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	return tcp_conn_ref(ts);
}

static int
tcp_send(void *cls, struct ferry_tsession *ts, const void *msg, size_t len,
    bool is_encrypted, uint32_t crc)
{
	struct tcp *t = cls;

	(void)is_encrypted; /* no FERRY_TCAP_CRC: the core's frame says it */
	(void)crc;
	if (len == 0)
		return -EINVAL;
	if (len > t->api.mtu)
		return -EMSGSIZE;
	return tcp_stream_send(ts, msg, len);
}

static int
tcp_disconnect(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	if (FERRY_BUG(ts->refs == 0))
		return 0;
	tcp_conn_unref(ts);
	return 0;
}

static int
tcp_start_server(void *cls)
{
	struct tcp *t = cls;

	if (t->ipt.stub)
		return -EOPNOTSUPP;
	return tcp_listen_start(t);
}

static int
tcp_stop_server(void *cls)
{
	tcp_listen_stop(cls);
	return 0;
}

static int
tcp_reload_config(void *cls)
{
	struct tcp *t = cls;
	struct tcp_settings set;
	struct ipt_cfg next;
	int r;

	r = ipt_cfg_load(&t->ipt, &tcp_limits, &next);
	if (r < 0)
		return r;
	r = tcp_settings_load(&t->ipt, &set);
	if (r < 0) {
		ipt_cfg_done(&next);
		return r;
	}
	ipt_cfg_commit(&t->ipt, &next);
	t->set = set;
	t->api.mtu = t->ipt.cfg.mtu;
	t->api.cost = t->ipt.cfg.cost;
	if (!t->ipt.stub)
		tcp_conn_reconfigure(t);
	return 0;
}

static int
tcp_recv_pause(void *cls, struct ferry_tsession *ts, bool pause)
{
	(void)cls;
	if (ts->dead)
		return -ENOTCONN;
	tcp_stream_pause(ts, pause);
	return 0;
}

static int
tcp_session_address(void *cls, struct ferry_tsession *ts, void *addr,
    size_t max, size_t *ret_len)
{
	(void)cls;
	if (ts->key_len == 0)
		return -ENOENT;
	if (max < ts->key_len)
		return -ENOSPC;
	memcpy(addr, ts->key, ts->key_len);
	*ret_len = ts->key_len;
	return 0;
}

static void
tcp_fill_api(struct tcp *t)
{
	struct ferry_transport_api *api = &t->api;

	api->abi_version = FERRY_TRANSPORT_ABI_VERSION;
	api->size = sizeof(*api);
	api->name = "tcp";
	api->protocol = FERRY_PROTO_TCP;
	api->mtu = t->ipt.cfg.mtu;
	api->cost = t->ipt.cfg.cost;
	api->caps = FERRY_TCAP_RELIABLE | FERRY_TCAP_INBOUND_REPLY;
	api->keys = tcp_keys;
	api->cls = t;
	api->verify_helo = tcp_verify_helo;
	api->create_helo = tcp_create_helo;
	api->create_helo_at = tcp_create_helo_at;
	api->recv_pause = tcp_recv_pause;
	api->address_to_string = tcp_address_to_string;
	api->connect = tcp_connect;
	api->associate = tcp_associate;
	api->send = tcp_send;
	api->disconnect = tcp_disconnect;
	api->start_server = tcp_start_server;
	api->stop_server = tcp_stop_server;
	api->reload_config = tcp_reload_config;
	api->session_address = tcp_session_address;
}

static void
tcp_stats_init(struct tcp *t)
{
	static const struct stats_slot slots[] = {
#define TCP_STAT(f) STATS_SLOT(struct tcp_stats, f)
		TCP_STAT(connections_in), TCP_STAT(connections_out),
		TCP_STAT(connect_failed), TCP_STAT(refused), TCP_STAT(lost),
		TCP_STAT(rx_units), TCP_STAT(rx_bytes), TCP_STAT(tx_units),
		TCP_STAT(tx_bytes), TCP_STAT(tx_eagain), TCP_STAT(idle_closes),
		TCP_STAT(framing_errors),
#undef TCP_STAT
	};

	plog_stats_bind(&t->ipt.log, &t->st, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static void
tcp_free(struct tcp *t)
{
	if (t == NULL)
		return;
	tcp_listen_stop(t);
	tcp_conn_done(t);
	ipt_done(&t->ipt);
	free(t);
}

/* The core's struct must be ours and complete up to log_level. */
static bool
tcp_core_ok(const struct ferry_core_api *core)
{
	return core != NULL &&
	    core->abi_version == FERRY_TRANSPORT_ABI_VERSION &&
	    FERRY_HAS(core, struct ferry_core_api, log_level) &&
	    core->vlog != NULL && core->cfg_get != NULL &&
	    (core->receive == NULL || (core->base != NULL &&
	    core->my_identity != NULL && core->session_gone != NULL &&
	    core->send_ready != NULL));
}

FERRY_EXPORT struct ferry_transport_api *
init_transport(const struct ferry_core_api *core)
{
	struct tcp *t;

	if (!tcp_core_ok(core))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	ipt_init(&t->ipt, core, "tcp", tcp_keys);
	if (ipt_cfg_load(&t->ipt, &tcp_limits, &t->ipt.cfg) < 0 ||
	    tcp_settings_load(&t->ipt, &t->set) < 0)
		goto fail;
	tcp_fill_api(t);
	tcp_stats_init(t);
	if (!t->ipt.stub && tcp_conn_init(t) < 0) {
		plog(&t->ipt.log, FERRY_LOG_ERR, "out of memory");
		goto fail;
	}
	return &t->api;
fail:
	tcp_free(t);
	return NULL;
}

FERRY_EXPORT void
done_transport(struct ferry_transport_api *api)
{
	if (api != NULL)
		tcp_free(tcp_from_api(api));
}
