/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Transport plugin loader (see transport.h), core layer. Modelled on the
 * checks nginx and Redis make when they load modules: exact ABI version,
 * struct size, mandatory slots, one log line per cause, and dlclose() on
 * every failure path.
 */
#define LOG_TAG "transport"
#include "core/transport.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"

static int transport_log_level = FERRY_LOG_NOTICE;

void
transport_set_log_level(int level)
{
	transport_log_level = level;
}

static void
transport_up_receive(void *cls, const struct ferry_message_pack *mp)
{
	struct transport *t = cls;

	(*t->stat_units_in)++;
	*t->stat_bytes_in += mp->len;
	t->env.hooks->receive(t->env.hooks_cls, t, mp);
}

static void
transport_up_session_gone(void *cls, struct ferry_tsession *ts)
{
	struct transport *t = cls;

	t->env.hooks->session_gone(t->env.hooks_cls, t, ts);
}

static void
transport_up_send_ready(void *cls, struct ferry_tsession *ts)
{
	struct transport *t = cls;

	t->env.hooks->send_ready(t->env.hooks_cls, t, ts);
}

static const char *
transport_up_cfg_get(void *cls, const char *key)
{
	struct transport *t = cls;

	if (!cfg_is_set(t->env.cfg, t->section, key))
		return NULL;
	return cfg_get(t->env.cfg, t->section, key);
}

static void transport_up_vlog(void *cls, int level, const char *fmt,
    va_list ap) __attribute__((format(printf, 3, 0)));

static void
transport_up_vlog(void *cls, int level, const char *fmt, va_list ap)
{
	struct transport *t = cls;

	log_vmsg(level, t->name, fmt, ap);
}

static uint64_t *
transport_up_stat(void *cls, const char *name)
{
	struct transport *t = cls;

	return stats_counter2(t->env.stats, t->name, name);
}

static bool
transport_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= sizeof(((struct transport *)0)->name))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!islower((unsigned char)name[i]) &&
		    !isdigit((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

/* Checks what init_transport returned; logs the first problem. */
static int
transport_check_api(const struct transport *t)
{
	const struct ferry_transport_api *api = t->api;
	const char *missing = NULL;

	if (api->abi_version != FERRY_TRANSPORT_ABI_VERSION) {
		log_err("%s: transport ABI version %u, this ferryd needs %u; rebuild the plugin",
		    t->path, api->abi_version, FERRY_TRANSPORT_ABI_VERSION);
		return -EPROTO;
	}
	if (api->size < offsetof(struct ferry_transport_api, session_address)) {
		log_err("%s: transport API struct is %u bytes, at least %zu needed",
		    t->path, api->size,
		    offsetof(struct ferry_transport_api, session_address));
		return -EPROTO;
	}
	if (api->name == NULL || strcmp(api->name, t->name) != 0) {
		log_err("%s: plugin calls itself '%s', expected '%s'", t->path,
		    api->name ? api->name : "(null)", t->name);
		return -EPROTO;
	}
	if (api->verify_helo == NULL)
		missing = "verify_helo";
	else if (api->create_helo == NULL)
		missing = "create_helo";
	else if (api->address_to_string == NULL)
		missing = "address_to_string";
	else if (api->connect == NULL)
		missing = "connect";
	else if (api->associate == NULL)
		missing = "associate";
	else if (api->send == NULL)
		missing = "send";
	else if (api->disconnect == NULL)
		missing = "disconnect";
	else if (api->start_server == NULL)
		missing = "start_server";
	else if (api->stop_server == NULL)
		missing = "stop_server";
	else if (api->reload_config == NULL)
		missing = "reload_config";
	if (missing != NULL) {
		log_err("%s: transport API lacks mandatory function %s",
		    t->path, missing);
		return -EPROTO;
	}
	if (api->mtu < 576 - 28) {
		log_err("%s: MTU %u is below the 548 bytes ferry needs",
		    t->path, api->mtu);
		return -EPROTO;
	}
	return 0;
}

static void
transport_fill_core_api(struct transport *t)
{
	struct ferry_core_api *c = &t->core_api;
	bool stub = t->env.hooks == NULL;

	c->abi_version = FERRY_TRANSPORT_ABI_VERSION;
	c->size = sizeof(*c);
	c->cls = t;
	c->my_identity = t->env.self;
	c->base = t->env.base;
	c->receive = stub ? NULL : transport_up_receive;
	c->session_gone = stub ? NULL : transport_up_session_gone;
	c->send_ready = stub ? NULL : transport_up_send_ready;
	c->cfg_get = transport_up_cfg_get;
	c->vlog = transport_up_vlog;
	c->stat = transport_up_stat;
	c->log_level = &transport_log_level;
}

static int
transport_stats_init(struct transport *t)
{
	t->stat_units_in = stats_counter2(t->env.stats, t->name, "units_in");
	t->stat_units_out = stats_counter2(t->env.stats, t->name, "units_out");
	t->stat_bytes_in = stats_counter2(t->env.stats, t->name, "bytes_in");
	t->stat_bytes_out = stats_counter2(t->env.stats, t->name, "bytes_out");
	t->stat_send_eagain =
	    stats_counter2(t->env.stats, t->name, "send_eagain");
	t->stat_send_fail = stats_counter2(t->env.stats, t->name, "send_fail");
	if (t->stat_units_in == NULL || t->stat_units_out == NULL ||
	    t->stat_bytes_in == NULL || t->stat_bytes_out == NULL ||
	    t->stat_send_eagain == NULL || t->stat_send_fail == NULL)
		return -ENOMEM;
	return 0;
}

int
transport_load(const char *dir, const char *name,
    const struct transport_env *env, struct transport **ret)
{
	struct transport *t;
	init_transport_fn *init;
	int r;

	if (!transport_name_ok(name)) {
		log_err("bad transport name '%s' (lower-case letters, digits and '_' only)",
		    name);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->env = *env;
	(void)snprintf(t->name, sizeof(t->name), "%s", name);
	(void)snprintf(t->section, sizeof(t->section), "transport-%s", name);
	if (snprintf(t->path, sizeof(t->path), "%s/libtransport_%s.so", dir,
		name) >= (int)sizeof(t->path)) {
		r = -ENAMETOOLONG;
		log_err("transport '%s': plugin path too long", name);
		goto fail;
	}
	r = transport_stats_init(t);
	if (r < 0)
		goto fail;
	t->dl = dlopen(t->path, RTLD_NOW | RTLD_LOCAL);
	if (t->dl == NULL) {
		log_err("cannot load transport '%s': %s", name, dlerror());
		r = -ENOENT;
		goto fail;
	}
	*(void **)&init = dlsym(t->dl, "init_transport");
	*(void **)&t->done = dlsym(t->dl, "done_transport");
	if (init == NULL || t->done == NULL) {
		log_err("%s: missing symbol %s", t->path,
		    init == NULL ? "init_transport" : "done_transport");
		r = -ENOSYS;
		goto fail;
	}
	transport_fill_core_api(t);
	t->api = init(&t->core_api);
	if (t->api == NULL) {
		log_err("%s: init_transport failed", t->path);
		r = -EIO;
		goto fail;
	}
	r = transport_check_api(t);
	if (r < 0)
		goto fail;
	log_debug("loaded %s (protocol %u, MTU %u, cost %u)", t->path,
	    t->api->protocol, t->api->mtu, t->api->cost);
	*ret = t;
	return 0;
fail:
	transport_unload(t);
	return r;
}

void
transport_unload(struct transport *t)
{
	if (t == NULL)
		return;
	if (t->api != NULL && t->done != NULL)
		t->done(t->api);
	if (t->dl != NULL)
		(void)dlclose(t->dl);
	free(t);
}

void
transport_set_cfg(struct transport *t, struct cfg *cfg)
{
	t->env.cfg = cfg;
}
