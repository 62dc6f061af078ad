/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What every transport plugin needs to report: log lines and counters
 * forwarded to the core through struct ferry_core_api, filtered by the
 * core's level, with a budget for lines a peer can cause (STYLE.md
 * section 6, log_peer). Plugin code logs through its own instance, so
 * each line reaches the right core; the lines of the statically linked
 * src/lib go through its sink to the newest instance (ferryd loads each
 * transport once; tests may hold two).
 */
#ifndef FERRY_PLUGINS_PLOG_H
#define FERRY_PLUGINS_PLOG_H

#include <stdint.h>

#include <ferry/transport.h>

#include "lib/ratelimit.h"
#include "lib/stats.h"

struct plog {
	const struct ferry_core_api *core; /* where lines and counters go */
	struct ratelog peer_log;	   /* budget of plog_peer lines */
	uint64_t stat_sink;		   /* counters without a core land here */
	struct plog *next;		   /* instances, newest first */
};

/* Starts forwarding to core; plog_peer may log peer_burst lines at once
 * and peer_rate per second after that. */
void plog_init(struct plog *pl, const struct ferry_core_api *core,
    double peer_rate, double peer_burst);
/* Stops forwarding through pl. */
void plog_done(struct plog *pl);
/* One line, if *core->log_level lets it through. */
void plog(const struct plog *pl, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* fmt, then ": strerror(-r)"; returns r. */
int plog_errno(const struct plog *pl, int level, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A line a peer (or a mail) caused: info level, within the budget, with
 * the number of lines suppressed since the last one. */
void plog_peer(struct plog *pl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The core's counter "<transport>.<name>", or a private sink in stub mode
 * (ferryd --check-config has no counters). Never NULL. */
uint64_t *plog_stat(struct plog *pl, const char *name);
/* Points each slot of the struct of counter pointers at base at its
 * counter "<transport>.<name>" (stats_bind through plog_stat). */
void plog_stats_bind(struct plog *pl, void *base,
    const struct stats_slot *slots, size_t n);

#endif /* FERRY_PLUGINS_PLOG_H */
