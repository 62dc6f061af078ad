/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Log lines and counters of the SMTP transport, forwarded to the core
 * (STYLE.md section 6): plugin lines name their instance; lines of the
 * statically linked src/lib go through its sink to the instance that
 * attached last (ferryd loads each transport once; tests may hold two).
 */
#define LOG_TAG "smtp"
#include "smtp_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/time.h"

/* Lines mail can cause: a burst of 20, then one every two seconds. */
#define SMTP_PEER_LOG_RATE	0.5
#define SMTP_PEER_LOG_BURST	20.0

static struct smtp *smtp_log_owner; /* where src/lib's lines go */

static bool
smtp_log_wanted(const struct smtp *s, int level)
{
	return s->core->log_level == NULL || level <= *s->core->log_level;
}

static void
smtp_log_sink(void *cls, int level, const char *tag, const char *fmt,
    va_list ap)
{
	(void)cls;
	(void)tag; /* the core names the transport itself */
	if (smtp_log_owner != NULL && smtp_log_wanted(smtp_log_owner, level))
		smtp_log_owner->core->vlog(smtp_log_owner->core->cls, level,
		    fmt, ap);
}

void
smtp_log_attach(struct smtp *s)
{
	ratelimit_init(&s->peer_rl, SMTP_PEER_LOG_RATE, SMTP_PEER_LOG_BURST);
	smtp_log_owner = s;
	/* The sink filters by the core's level, which may change later. */
	log_set_level(FERRY_LOG_DEBUG);
	log_set_sink(smtp_log_sink, NULL);
}

void
smtp_log_detach(struct smtp *s)
{
	if (smtp_log_owner != s)
		return;
	smtp_log_owner = NULL;
	log_set_sink(NULL, NULL);
}

static void
smtp_vlog(const struct smtp *s, int level, const char *fmt, va_list ap)
{
	if (smtp_log_wanted(s, level))
		s->core->vlog(s->core->cls, level, fmt, ap);
}

void
smtp_log(const struct smtp *s, int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	smtp_vlog(s, level, fmt, ap);
	va_end(ap);
}

int
smtp_log_errno(const struct smtp *s, int level, int r, const char *fmt, ...)
{
	char head[512];
	va_list ap;

	if (!smtp_log_wanted(s, level))
		return r;
	va_start(ap, fmt);
	(void)vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	smtp_log(s, level, "%s: %s", head, strerror(r < 0 ? -r : r));
	return r;
}

void
smtp_log_peer(struct smtp *s, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!smtp_log_wanted(s, FERRY_LOG_INFO))
		return;
	if (!ratelimit_take(&s->peer_rl, time_mono_us(), 1.0)) {
		s->peer_suppressed++;
		return;
	}
	va_start(ap, fmt);
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (s->peer_suppressed == 0) {
		smtp_log(s, FERRY_LOG_INFO, "%s", line);
		return;
	}
	smtp_log(s, FERRY_LOG_INFO, "%s (and %llu lines like it suppressed)",
	    line, (unsigned long long)s->peer_suppressed);
	s->peer_suppressed = 0;
}

void
smtp_stats_init(struct smtp *s)
{
	static const struct {
		const char *name;
		size_t off;
	} names[] = {
#define SMTP_STAT(f) { #f, offsetof(struct smtp_stats, f) }
		SMTP_STAT(tx_mails), SMTP_STAT(tx_bytes),
		SMTP_STAT(tx_connects), SMTP_STAT(tx_failed),
		SMTP_STAT(tx_retries), SMTP_STAT(tx_eagain),
		SMTP_STAT(tx_cap_dest), SMTP_STAT(tx_cap_total),
		SMTP_STAT(tx_blacklisted), SMTP_STAT(rx_mails),
		SMTP_STAT(rx_bytes), SMTP_STAT(drop_foreign),
		SMTP_STAT(drop_broken), SMTP_STAT(drop_base64),
		SMTP_STAT(drop_envelope), SMTP_STAT(drop_oversize),
		SMTP_STAT(inbox_errors), SMTP_STAT(inbox_rescans),
#undef SMTP_STAT
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		uint64_t *p = NULL;

		/* The stub has no counters (ferryd --check-config). */
		if (!s->stub && s->core->stat != NULL)
			p = s->core->stat(s->core->cls, names[i].name);
		*(uint64_t **)(void *)((char *)&s->st + names[i].off) =
		    p != NULL ? p : &s->stat_sink;
	}
}
