/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Log lines and counters of an IP transport, forwarded to the core
 * (see ipt.h). Plugin code names its instance in every line it logs. The
 * log sink of src/lib, for lines of the library itself, is one per loaded
 * plugin image while a process may hold several instances (tests do):
 * those lines go to the newest instance's core. ferryd loads each
 * transport once.
 */
#define LOG_TAG "ipt"
#include "ipt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/time.h"

/* Lines a peer can cause: a burst of 20, then 2 per second. */
#define IPT_PEER_LOG_RATE	2.0
#define IPT_PEER_LOG_BURST	20.0

static struct ipt *ipt_log_head; /* newest instance first */

static void
ipt_log_sink(void *cls, int level, const char *tag, const char *fmt,
    va_list ap)
{
	const struct ferry_core_api *core;

	(void)cls;
	(void)tag; /* the core names the transport itself */
	if (ipt_log_head == NULL)
		return;
	core = ipt_log_head->core;
	if (core->log_level != NULL && level > *core->log_level)
		return;
	core->vlog(core->cls, level, fmt, ap);
}

void
ipt_init(struct ipt *ipt, const struct ferry_core_api *core,
    const char *name, const struct ferry_cfg_key *keys)
{
	memset(ipt, 0, sizeof(*ipt));
	ipt->core = core;
	ipt->keys = keys;
	ipt->stub = core->receive == NULL;
	(void)snprintf(ipt->section, sizeof(ipt->section), "transport-%s",
	    name);
	ratelimit_init(&ipt->peer_rl, IPT_PEER_LOG_RATE, IPT_PEER_LOG_BURST);
	ipt->log_next = ipt_log_head;
	ipt_log_head = ipt;
	/* The level check moves into the sink, where *core->log_level can
	 * change at any time; the macros then only skip nothing. */
	log_set_level(FERRY_LOG_DEBUG);
	log_set_sink(ipt_log_sink, NULL);
}

void
ipt_done(struct ipt *ipt)
{
	struct ipt **pp;

	ipt_cfg_done(&ipt->cfg);
	for (pp = &ipt_log_head; *pp != NULL; pp = &(*pp)->log_next) {
		if (*pp == ipt) {
			*pp = ipt->log_next;
			break;
		}
	}
	if (ipt_log_head == NULL)
		log_set_sink(NULL, NULL);
}

static void
ipt_vlog(const struct ipt *ipt, int level, const char *fmt, va_list ap)
{
	const struct ferry_core_api *core = ipt->core;

	if (core->log_level != NULL && level > *core->log_level)
		return;
	core->vlog(core->cls, level, fmt, ap);
}

void
ipt_log(const struct ipt *ipt, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ipt_vlog(ipt, level, fmt, ap);
	va_end(ap);
}

int
ipt_log_errno(const struct ipt *ipt, int level, int r, const char *fmt, ...)
{
	char head[384];
	va_list ap;

	if (ipt->core->log_level != NULL && level > *ipt->core->log_level)
		return r;
	va_start(ap, fmt);
	(void)vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	ipt_log(ipt, level, "%s: %s", head, strerror(r < 0 ? -r : r));
	return r;
}

void
ipt_log_peer(struct ipt *ipt, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!ratelimit_take(&ipt->peer_rl, time_mono_us(), 1.0)) {
		ipt->peer_suppressed++;
		return;
	}
	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (ipt->peer_suppressed > 0) {
		ipt_log(ipt, FERRY_LOG_INFO,
		    "%s (%llu similar lines suppressed)", line,
		    (unsigned long long)ipt->peer_suppressed);
		ipt->peer_suppressed = 0;
	} else {
		ipt_log(ipt, FERRY_LOG_INFO, "%s", line);
	}
}

uint64_t *
ipt_stat(struct ipt *ipt, const char *name)
{
	uint64_t *p = NULL;

	/* The stub has no counters: ferryd --check-config has no stats. */
	if (!ipt->stub && ipt->core->stat != NULL)
		p = ipt->core->stat(ipt->core->cls, name);
	return p != NULL ? p : &ipt->stat_sink;
}
