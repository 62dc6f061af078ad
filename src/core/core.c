/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The core's lifecycle and its interface to the layers above (core.h):
 * identity, the set of loaded transports, configuration reloads and the
 * routing of message types to handlers.
 */
#define LOG_TAG "core"
#include "core/core_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/identity.h"
#include "core/transport.h"
#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"

typedef int core_name_fn(void *cls, const char *name);

/* Calls fn for each word of [core] TRANSPORTS; stops at the first error. */
static int
core_each_transport_name(const struct cfg *cfg, core_name_fn *fn, void *cls)
{
	const char *list = cfg_get(cfg, "core", "TRANSPORTS");
	const char *word;
	char name[32];
	size_t len;
	int r;

	if (list == NULL)
		return 0;
	while (cfg_next_word(&list, &word, &len)) {
		if (len >= sizeof(name)) {
			log_err("[core] TRANSPORTS: name '%.*s' too long",
			    (int)len, word);
			return -EINVAL;
		}
		memcpy(name, word, len);
		name[len] = '\0';
		r = fn(cls, name);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A transport loaded in stub mode (no hooks): it parses its section and
 * opens no sockets, and its own log lines say what is wrong. Its counters
 * go to a throwaway registry, freed by core_stub_unload. */
static int
core_stub_load(struct cfg *cfg, const char *name, struct transport **ret)
{
	static const struct ferry_peer_id nobody;
	struct transport_env env;
	int r;

	memset(&env, 0, sizeof(env));
	env.self = &nobody;
	env.cfg = cfg;
	env.stats = stats_new();
	if (env.stats == NULL)
		return -ENOMEM;
	r = transport_load(core_cfg_plugin_dir(cfg), name, &env, ret);
	if (r < 0)
		stats_free(env.stats);
	return r;
}

static void
core_stub_unload(struct transport *t)
{
	struct stats *st = t->env.stats;

	transport_unload(t);
	stats_free(st);
}

static int
core_check_one_transport(void *cls, const char *name)
{
	struct cfg *cfg = cls;
	struct transport *t;
	int r;

	if (core_stub_load(cfg, name, &t) < 0)
		return 1; /* counted, not fatal: check the others too */
	r = 0;
	if (t->api->keys != NULL &&
	    cfg_add_schema_section(cfg, t->section, t->api->keys) < 0)
		r = -ENOMEM;
	core_stub_unload(t);
	return r;
}

int
core_transport_keys(struct cfg *cfg, const char *name, core_key_visit_fn *fn,
    void *cls)
{
	struct transport *t;
	int r = core_stub_load(cfg, name, &t);

	if (r < 0)
		return r;
	for (const struct ferry_cfg_key *k = t->api->keys;
	     k != NULL && k->name != NULL; k++)
		fn(cls, t->section, k->name, k->def, k->help);
	core_stub_unload(t);
	return 0;
}

struct core_count {
	core_name_fn *fn;
	void *cls;
	int failures;
};

static int
core_count_failures(void *cls, const char *name)
{
	struct core_count *cnt = cls;
	int r = cnt->fn(cnt->cls, name);

	if (r > 0)
		cnt->failures++;
	return r < 0 ? r : 0;
}

int
core_config_check(struct cfg *cfg)
{
	struct core_cfg cc;
	struct core_count cnt = { core_check_one_transport, cfg, 0 };
	int r = 0;

	if (core_cfg_parse(cfg, &cc) < 0)
		r = -EINVAL;
	if (core_each_transport_name(cfg, core_count_failures, &cnt) < 0 ||
	    cnt.failures > 0)
		r = -EINVAL;
	return r;
}

static struct transport *
core_transport_by_name(const struct core *core, const char *name)
{
	for (size_t i = 0; i < core->n_transports; i++)
		if (strcmp(core->transports[i]->name, name) == 0)
			return core->transports[i];
	return NULL;
}

static int
core_load_transport(void *cls, const char *name)
{
	struct core *core = cls;
	struct transport_env env;
	struct transport *t;
	int r;

	if (core_transport_by_name(core, name) != NULL) {
		log_err("[core] TRANSPORTS names '%s' twice", name);
		return -EINVAL;
	}
	if (core->n_transports == CORE_MAX_TRANSPORTS) {
		log_err("[core] TRANSPORTS: more than %d transports",
		    CORE_MAX_TRANSPORTS);
		return -EINVAL;
	}
	memset(&env, 0, sizeof(env));
	env.base = core->base;
	env.self = &core->ident->id;
	env.cfg = core->cfg;
	env.stats = core->stats;
	env.hooks = &core_transport_hooks_impl;
	env.hooks_cls = core;
	r = transport_load(core_cfg_plugin_dir(core->cfg), name, &env, &t);
	if (r < 0)
		return r;
	if (t->api->keys != NULL &&
	    cfg_add_schema_section(core->cfg, t->section, t->api->keys) < 0) {
		transport_unload(t);
		return -ENOMEM;
	}
	core->transports[core->n_transports++] = t;
	log_info("transport %s: protocol %u, MTU %u, cost %u", t->name,
	    t->api->protocol, t->api->mtu, t->api->cost);
	return 0;
}

static void
core_unload_transport_at(struct core *core, size_t i)
{
	struct transport *t = core->transports[i];

	core_transport_detach(core, t);
	(void)t->api->stop_server(t->api->cls);
	transport_unload(t);
	memmove(&core->transports[i], &core->transports[i + 1],
	    (core->n_transports - i - 1) * sizeof(core->transports[0]));
	core->n_transports--;
}

int
core_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    const char *state_dir, struct core **ret)
{
	struct core *core = calloc(1, sizeof(*core));
	int r;

	if (core == NULL)
		return log_err_errno(-ENOMEM, "core");
	core->base = base;
	core->cfg = cfg;
	core->stats = stats;
	core->started_us = time_mono_us();
	core->rwnd_told = UINT32_MAX; /* no ACK yet */
	subs_init(&core->peer_subs, SUBS_PEER);
	subs_init(&core->drain_subs, SUBS_DRAIN);
	if (snprintf(core->state_dir, sizeof(core->state_dir), "%s",
		state_dir) >= (int)sizeof(core->state_dir)) {
		r = log_err_errno(-ENAMETOOLONG, "state directory");
		goto fail;
	}
	r = core_cfg_parse(cfg, &core->cc);
	if (r < 0)
		goto fail;
	r = identity_load(state_dir, &core->ident);
	if (r < 0)
		goto fail;
	r = core_peers_init(core);
	if (r < 0)
		goto fail;
	r = core_each_transport_name(cfg, core_load_transport, core);
	if (r < 0)
		goto fail;
	if (core->n_transports == 0)
		log_warn("no transports loaded ([core] TRANSPORTS is empty): this peer can reach nobody");
	*ret = core;
	return 0;
fail:
	core_free(core);
	return r;
}

int
core_start(struct core *core)
{
	for (size_t i = 0; i < core->n_transports; i++) {
		struct transport *t = core->transports[i];
		int r = t->api->start_server(t->api->cls);

		if (r < 0)
			return log_err_errno(r, "transport %s cannot start",
			    t->name);
	}
	return core_peers_start(core);
}

void
core_free(struct core *core)
{
	if (core == NULL)
		return;
	core_peers_stop(core);
	while (core->n_transports > 0)
		core_unload_transport_at(core, core->n_transports - 1);
	core_peers_done(core);
	/* Subscribers that are still linked find themselves unsubscribed,
	 * so that leaving later is harmless. */
	subs_done(&core->peer_subs);
	subs_done(&core->drain_subs);
	identity_free(core->ident);
	free(core);
}

/* Whether name appears in [core] TRANSPORTS of cfg. */
static int
core_name_matches(void *cls, const char *name)
{
	const char **want = cls;

	if (*want != NULL && strcmp(*want, name) == 0)
		*want = NULL;
	return 0;
}

static bool
core_cfg_lists(const struct cfg *cfg, const char *name)
{
	const char *want = name;

	(void)core_each_transport_name(cfg, core_name_matches, &want);
	return want == NULL;
}

/* On reload: loads a listed transport that is not loaded yet. A failure
 * is logged and leaves the others running. */
static int
core_load_new_transport(void *cls, const char *name)
{
	struct core *core = cls;

	if (core_transport_by_name(core, name) == NULL)
		(void)core_load_transport(core, name);
	return 0;
}

int
core_reload(struct core *core, struct cfg *cfg)
{
	struct core_cfg cc;
	size_t i;
	int r;

	if (core_cfg_parse(cfg, &cc) < 0)
		return -EINVAL;
	/* Transports dropped from the list go first, so that their sessions'
	 * traffic falls back to what remains. */
	for (i = core->n_transports; i-- > 0;) {
		if (!core_cfg_lists(cfg, core->transports[i]->name)) {
			log_notice("unloading transport %s",
			    core->transports[i]->name);
			core_unload_transport_at(core, i);
		}
	}
	for (i = 0; i < core->n_transports; i++) {
		struct transport *t = core->transports[i];

		if (t->api->keys != NULL &&
		    cfg_add_schema_section(cfg, t->section, t->api->keys) < 0)
			return -ENOMEM;
		transport_set_cfg(t, cfg);
		r = t->api->reload_config(t->api->cls);
		if (r < 0)
			log_err_errno(r, "transport %s kept its old settings",
			    t->name);
	}
	/* Who chooses links is settled at start, with the layers above. */
	if (cc.link_policy != core->cc.link_policy)
		log_notice("[core] LINK_POLICY takes effect after a restart");
	cc.link_policy = core->cc.link_policy;
	core->cfg = cfg;
	core->cc = cc;
	i = core->n_transports;
	r = core_each_transport_name(cfg, core_load_new_transport, core);
	for (; i < core->n_transports; i++) {
		struct transport *t = core->transports[i];
		int sr = t->api->start_server(t->api->cls);

		if (sr < 0) {
			log_err_errno(sr, "transport %s cannot start", t->name);
			core_unload_transport_at(core, i--);
		}
	}
	core_peers_reconfigured(core);
	return r;
}

const struct ferry_peer_id *
core_identity(const struct core *core)
{
	return &core->ident->id;
}

const struct identity *
core_ident(const struct core *core)
{
	return core->ident;
}

const char *
core_identity_string(const struct core *core)
{
	return core->ident->id_str;
}

size_t
core_transport_count(const struct core *core)
{
	return core->n_transports;
}

void
core_transport_info(const struct core *core, size_t i,
    struct core_transport_info *info)
{
	const struct transport *t = core->transports[i];

	info->name = t->name;
	info->protocol = t->api->protocol;
	info->mtu = t->api->mtu;
	info->cost = t->api->cost;
}

int
core_handler_set(struct core *core, uint16_t lo, uint16_t hi,
    core_handler_fn *fn, void *cls)
{
	if (lo > hi || fn == NULL || lo < FERRY_MSG_DHT_MIN)
		return -EINVAL;
	for (size_t i = 0; i < core->n_handlers; i++)
		if (lo <= core->handlers[i].hi && core->handlers[i].lo <= hi)
			return -EEXIST;
	if (core->n_handlers == CORE_MAX_HANDLERS)
		return -ENOSPC;
	core->handlers[core->n_handlers++] =
	    (struct core_handler){ lo, hi, fn, cls };
	return 0;
}

void
core_handler_unset(struct core *core, uint16_t lo, uint16_t hi)
{
	for (size_t i = 0; i < core->n_handlers; i++) {
		if (core->handlers[i].lo != lo || core->handlers[i].hi != hi)
			continue;
		memmove(&core->handlers[i], &core->handlers[i + 1],
		    (core->n_handlers - i - 1) * sizeof(core->handlers[0]));
		core->n_handlers--;
		return;
	}
}

const struct core_handler *
core_handler_find(const struct core *core, uint16_t type)
{
	for (size_t i = 0; i < core->n_handlers; i++)
		if (core->handlers[i].lo <= type && type <= core->handlers[i].hi)
			return &core->handlers[i];
	return NULL;
}

int
core_peer_subscribe(struct core *core, struct core_sub *sub, core_peer_fn *fn,
    void *cls)
{
	if (fn == NULL)
		return -EINVAL;
	return subs_add(&core->peer_subs, sub, (union core_sub_fn){ .peer = fn },
	    cls);
}

int
core_drain_subscribe(struct core *core, struct core_sub *sub,
    core_drain_fn *fn, void *cls)
{
	if (fn == NULL)
		return -EINVAL;
	return subs_add(&core->drain_subs, sub,
	    (union core_sub_fn){ .drain = fn }, cls);
}

void
core_unsubscribe(struct core_sub *sub)
{
	subs_remove(sub);
}
