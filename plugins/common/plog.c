/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Log lines and counters of a transport plugin (see plog.h). */
#define LOG_TAG "plugin"
#include "plog.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/time.h"

static struct plog *plog_head; /* newest instance first */

static bool
plog_wanted(const struct plog *pl, int level)
{
	return pl->core->log_level == NULL || level <= *pl->core->log_level;
}

static void
plog_sink(void *cls, int level, const char *tag, const char *fmt, va_list ap)
{
	(void)cls;
	(void)tag; /* the core names the transport itself */
	if (plog_head != NULL && plog_wanted(plog_head, level))
		plog_head->core->vlog(plog_head->core->cls, level, fmt, ap);
}

void
plog_init(struct plog *pl, const struct ferry_core_api *core,
    double peer_rate, double peer_burst)
{
	memset(pl, 0, sizeof(*pl));
	pl->core = core;
	ratelog_init(&pl->peer_log, peer_rate, peer_burst);
	pl->next = plog_head;
	plog_head = pl;
	/* The sink filters by the core's level, which may change at any
	 * time; the library's own macros then skip nothing. */
	log_set_level(FERRY_LOG_DEBUG);
	log_set_sink(plog_sink, NULL);
}

void
plog_done(struct plog *pl)
{
	for (struct plog **pp = &plog_head; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pl) {
			*pp = pl->next;
			break;
		}
	}
	if (plog_head == NULL)
		log_set_sink(NULL, NULL);
}

static void plog_v(const struct plog *pl, int level, const char *fmt,
    va_list ap) __attribute__((format(printf, 3, 0)));

static void
plog_v(const struct plog *pl, int level, const char *fmt, va_list ap)
{
	if (plog_wanted(pl, level))
		pl->core->vlog(pl->core->cls, level, fmt, ap);
}

void
plog(const struct plog *pl, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	plog_v(pl, level, fmt, ap);
	va_end(ap);
}

int
plog_errno(const struct plog *pl, int level, int r, const char *fmt, ...)
{
	char head[512];
	va_list ap;

	if (!plog_wanted(pl, level))
		return r;
	va_start(ap, fmt);
	(void)vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	plog(pl, level, "%s: %s", head, strerror(r < 0 ? -r : r));
	return r;
}

void
plog_peer(struct plog *pl, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	bool ok;

	if (!plog_wanted(pl, FERRY_LOG_INFO))
		return;
	va_start(ap, fmt);
	ok = ratelog_vformat(&pl->peer_log, time_mono_us(), line, sizeof(line),
	    fmt, ap);
	va_end(ap);
	if (ok)
		plog(pl, FERRY_LOG_INFO, "%s", line);
}

static uint64_t *
plog_stat_lookup(void *cls, const char *name)
{
	return plog_stat(cls, name);
}

void
plog_stats_bind(struct plog *pl, void *base, const struct stats_slot *slots,
    size_t n)
{
	/* Cannot fail: plog_stat falls back to the sink. */
	(void)stats_bind(base, slots, n, plog_stat_lookup, pl);
}

uint64_t *
plog_stat(struct plog *pl, const char *name)
{
	uint64_t *p = NULL;

	if (pl->core->receive != NULL && pl->core->stat != NULL)
		p = pl->core->stat(pl->core->cls, name);
	return p != NULL ? p : &pl->stat_sink;
}
