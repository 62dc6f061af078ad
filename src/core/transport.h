/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Transport plugin loader, core layer: dlopen()s libtransport_<name>.so,
 * checks its ABI, and bridges the plugin's callbacks to the core
 * (STYLE.md section 3; seed 004, section II-B).
 */
#ifndef FERRY_CORE_TRANSPORT_H
#define FERRY_CORE_TRANSPORT_H

#include <limits.h>
#include <stdint.h>

#include <ferry/transport.h>

struct cfg;
struct stats;
struct transport;

/* What the core does with a plugin's upcalls; NULL hooks: stub mode. */
struct transport_hooks {
	void (*receive)(void *cls, struct transport *t,
	    const struct ferry_message_pack *mp);
	void (*session_gone)(void *cls, struct transport *t,
	    struct ferry_tsession *ts);
	void (*send_ready)(void *cls, struct transport *t,
	    struct ferry_tsession *ts);
};

struct transport_env {
	struct event_base *base;	   /* daemon loop (NULL in stub mode) */
	const struct ferry_peer_id *self;  /* this peer */
	struct cfg *cfg;		   /* current configuration */
	struct stats *stats;		   /* counters */
	const struct transport_hooks *hooks; /* NULL: stub mode */
	void *hooks_cls;		   /* first argument of the hooks */
};

struct transport {
	char name[32];			/* "udp" */
	char section[48];		/* "transport-udp" */
	char path[PATH_MAX];		/* file it came from */
	void *dl;			/* dlopen handle */
	done_transport_fn *done;	/* the plugin's unload function */
	struct ferry_transport_api *api; /* what init_transport returned */
	struct ferry_core_api core_api; /* what we gave it; lives as long */
	struct transport_env env;	/* copy of the loader's environment */
	void *core_data;		/* the core's per-transport state */
	uint64_t *stat_units_in;	/* "<name>.units_in" etc., core-kept */
	uint64_t *stat_units_out;
	uint64_t *stat_bytes_in;
	uint64_t *stat_bytes_out;
	uint64_t *stat_send_eagain;
	uint64_t *stat_send_fail;
};

/* Loads dir/libtransport_<name>.so. Logs one line naming the file for
 * each way it can fail: no file or dlopen error (-ENOENT), missing
 * init_transport/done_transport (-ENOSYS), init failure (-EIO), ABI
 * version or size mismatch, or a missing mandatory function (-EPROTO).
 * Nothing stays loaded on failure. */
int transport_load(const char *dir, const char *name,
    const struct transport_env *env, struct transport **ret);
/* Stops and unloads; frees t. NULL is allowed. */
void transport_unload(struct transport *t);
/* Points the plugin's cfg_get at a new configuration (before its
 * reload_config is called). */
void transport_set_cfg(struct transport *t, struct cfg *cfg);
/* Sets the level plugins see through core_api.log_level. */
void transport_set_log_level(int level);

#endif /* FERRY_CORE_TRANSPORT_H */
