/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * libtransport_smtp.so: ferry's SMTP transport, the TransportAPI of seed
 * 004 (Fig. 3, section II-B) over e-mail as section III builds it: units
 * leave as bounce-shaped MIME mail submitted to an MTA with libcurl
 * (smtp_send.c, smtp_curl.c, smtp_mime.c), and arrive through the inbox
 * procmail fills (smtp_inbox*.c). The address in a HELO is an e-mail
 * address and the filter line its owner wants (smtp_addr.h). With
 * core->receive NULL it is a stub that only checks and formats addresses.
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static struct smtp *
smtp_from_api(struct ferry_transport_api *api)
{
	return (struct smtp *)(void *)((char *)api -
	    offsetof(struct smtp, api));
}

static int
smtp_verify_helo(void *cls, const void *addr, size_t len)
{
	struct smtp *s = cls;
	struct smtp_addr a;

	if (len > SMTP_ADDR_MAX || smtp_addr_decode(addr, len, &a) < 0)
		return -EINVAL;
	if (smtp_addr_listed(s->set.blacklist, a.mail, a.mail_len))
		return -EPERM;
	return 0;
}

static int
smtp_create_helo(void *cls, void *addr, size_t max, size_t *ret_len)
{
	struct smtp *s = cls;

	/* No ADDRESS: send only, nothing to advertise (II-B createHELO). */
	if (s->set.address[0] == '\0')
		return -ENOENT;
	return smtp_addr_encode(s->set.address, strlen(s->set.address),
	    s->set.filter, strlen(s->set.filter), addr, max, ret_len);
}

static int
smtp_address_to_string(void *cls, const void *addr, size_t len, char *buf,
    size_t size)
{
	(void)cls;
	return smtp_addr_format(addr, len, buf, size);
}

static int
smtp_connect(void *cls, const void *addr, size_t len,
    struct ferry_tsession **ret_ts)
{
	struct smtp *s = cls;
	struct smtp_addr a;
	int r;

	if (s->stub)
		return -EOPNOTSUPP;
	r = smtp_verify_helo(s, addr, len);
	if (r < 0)
		return r;
	(void)smtp_addr_decode(addr, len, &a);
	return smtp_session_get(s, addr, len, &a, ret_ts);
}

static int
smtp_associate(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	/* Only connect() makes sessions, and they live until the last
	 * disconnect: any session the core holds is live. */
	smtp_session_ref(ts);
	return 0;
}

static int
smtp_send(void *cls, struct ferry_tsession *ts, const void *msg, size_t len,
    bool is_encrypted, uint32_t crc)
{
	struct smtp *s = cls;

	if (s->stub)
		return -EOPNOTSUPP;
	return smtp_send_unit(s, ts, msg, len, is_encrypted, crc);
}

static int
smtp_disconnect(void *cls, struct ferry_tsession *ts)
{
	(void)cls;
	if (!FERRY_BUG(ts->refs == 0))
		smtp_session_unref(ts);
	return 0;
}

static int
smtp_start_server(void *cls)
{
	struct smtp *s = cls;
	int r;

	if (s->stub)
		return -EOPNOTSUPP;
	if (s->serving)
		return 0;
	r = smtp_inbox_start(s);
	if (r < 0)
		return r;
	s->serving = true;
	return 0;
}

static int
smtp_stop_server(void *cls)
{
	struct smtp *s = cls;

	smtp_inbox_stop(s);
	s->serving = false;
	return 0;
}

static bool
smtp_inbox_changed(const struct smtp_settings *a,
    const struct smtp_settings *b)
{
	return strcmp(a->inbox, b->inbox) != 0 ||
	    a->inbox_type != b->inbox_type;
}

/* Keeps the FILTER in force before a reload acceptable for the mail that
 * peers sent before they learnt the new one. Takes over old's string. */
static void
smtp_keep_prev_filter(struct smtp *s, struct smtp_settings *old)
{
	if (old->filter == NULL || old->filter[0] == '\0' ||
	    strcmp(old->filter, s->set.filter) == 0)
		return;
	free(s->prev_filter);
	s->prev_filter = old->filter;
	s->prev_parts = old->filter_parts; /* points into that string */
	old->filter = NULL;
}

/* Puts next in force (taking it over); the inbox follows a new INBOX.
 * On failure the old settings and inbox stay. */
static int
smtp_apply(struct smtp *s, struct smtp_settings *next)
{
	struct smtp_settings old = s->set;
	bool reopen = s->serving && smtp_inbox_changed(&old, next);
	int r;

	if (reopen)
		smtp_inbox_stop(s);
	s->set = *next;
	if (reopen && (r = smtp_inbox_start(s)) < 0) {
		s->set = old;
		if (smtp_inbox_start(s) < 0)
			s->serving = false;
		return r;
	}
	smtp_keep_prev_filter(s, &old);
	smtp_settings_done(&old);
	s->api.mtu = s->set.mtu;
	s->api.cost = s->set.cost;
	if (s->stub)
		return 0;
	smtp_inbox_reconfigure(s);
	if (smtp_curl_configure(s) < 0)
		plog(&s->log, FERRY_LOG_WARNING,
		    "out of memory applying SERVER settings");
	if (smtp_send_has_room(s, 0))
		smtp_session_wake(s);
	return 0;
}

static int
smtp_reload_config(void *cls)
{
	struct smtp *s = cls;
	struct smtp_settings next;
	int r;

	r = smtp_settings_load(s, &next);
	if (r < 0)
		return r;
	r = smtp_apply(s, &next);
	if (r < 0)
		smtp_settings_done(&next);
	return r;
}

static int
smtp_session_address(void *cls, struct ferry_tsession *ts, void *addr,
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
smtp_fill_api(struct smtp *s)
{
	struct ferry_transport_api *api = &s->api;

	api->abi_version = FERRY_TRANSPORT_ABI_VERSION;
	api->size = sizeof(*api);
	api->name = "smtp";
	api->protocol = FERRY_PROTO_SMTP;
	api->mtu = s->set.mtu;
	api->cost = s->set.cost;
	/* No INBOUND_REPLY: a mail brings no session to answer on. */
	api->caps = FERRY_TCAP_HIGH_LATENCY | FERRY_TCAP_CRC;
	api->keys = smtp_keys;
	api->cls = s;
	api->verify_helo = smtp_verify_helo;
	api->create_helo = smtp_create_helo;
	api->address_to_string = smtp_address_to_string;
	api->connect = smtp_connect;
	api->associate = smtp_associate;
	api->send = smtp_send;
	api->disconnect = smtp_disconnect;
	api->start_server = smtp_start_server;
	api->stop_server = smtp_stop_server;
	api->reload_config = smtp_reload_config;
	api->session_address = smtp_session_address;
}

static void
smtp_free(struct smtp *s)
{
	if (s == NULL)
		return;
	smtp_inbox_stop(s);
	smtp_curl_done(s);
	smtp_send_done(s);
	smtp_session_done(s);
	smtp_limit_done(s);
	smtp_settings_done(&s->set);
	free(s->prev_filter);
	plog_done(&s->log);
	free(s);
}

/* The core's struct must be ours and complete up to log_level. */
static bool
smtp_core_ok(const struct ferry_core_api *core)
{
	return core != NULL &&
	    core->abi_version == FERRY_TRANSPORT_ABI_VERSION &&
	    FERRY_HAS(core, struct ferry_core_api, log_level) &&
	    core->vlog != NULL && core->cfg_get != NULL &&
	    (core->receive == NULL ||
	    (core->base != NULL && core->my_identity != NULL &&
	    core->send_ready != NULL));
}

/* What only a transport that runs needs: tables, timers, libcurl. */
static int
smtp_start_engine(struct smtp *s)
{
	int r;

	r = smtp_session_init(s);
	if (r == 0)
		r = smtp_limit_init(s);
	if (r == 0)
		r = smtp_send_init(s);
	if (r == 0)
		r = smtp_curl_init(s);
	if (r < 0)
		(void)plog_errno(&s->log, FERRY_LOG_ERR, r, "cannot start");
	return r;
}

FERRY_EXPORT struct ferry_transport_api *
init_transport(const struct ferry_core_api *core)
{
	struct smtp *s;

	if (!smtp_core_ok(core))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->core = core;
	s->stub = core->receive == NULL;
	s->api.name = "smtp";
	/* Lines mail can cause: a burst of 20, then one every two seconds. */
	plog_init(&s->log, core, 0.5, 20.0);
	if (smtp_settings_load(s, &s->set) < 0)
		goto fail;
	smtp_fill_api(s);
	smtp_stats_init(s);
	if (!s->stub && smtp_start_engine(s) < 0)
		goto fail;
	return &s->api;
fail:
	smtp_free(s);
	return NULL;
}

FERRY_EXPORT void
done_transport(struct ferry_transport_api *api)
{
	if (api != NULL)
		smtp_free(smtp_from_api(api));
}
