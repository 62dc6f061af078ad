/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Log line formatting and output, layer 0 (see log.h). */
#define LOG_TAG "log"
#include "lib/log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int log_max_level = FERRY_LOG_NOTICE;

static const char *log_progname = "ferry";
static bool log_journal;
static log_sink_fn *log_sink;
static void *log_sink_cls;

static const char *const log_names[] = {
	"EMERG", "ALERT", "CRIT", "ERROR", "WARN", "NOTICE", "INFO", "DEBUG",
};

void
log_init(const char *progname, int level)
{
	const char *js;

	if (progname != NULL)
		log_progname = progname;
	log_max_level = level;
	/* systemd sets JOURNAL_STREAM when stderr is the journal's socket. */
	js = getenv("JOURNAL_STREAM");
	log_journal = js != NULL && *js != '\0' && !isatty(STDERR_FILENO);
}

void
log_set_level(int level)
{
	log_max_level = level;
}

void
log_set_sink(log_sink_fn *fn, void *cls)
{
	log_sink = fn;
	log_sink_cls = cls;
}

static int
log_clamp(int level)
{
	if (level < 0)
		return 0;
	if (level > FERRY_LOG_DEBUG)
		return FERRY_LOG_DEBUG;
	return level;
}

void
log_vmsg(int level, const char *tag, const char *fmt, va_list ap)
{
	char line[1024];
	int saved = errno;
	struct timeval tv;
	struct tm tm;

	level = log_clamp(level);
	if (level > log_max_level)
		return;
	if (log_sink != NULL) {
		log_sink(log_sink_cls, level, tag, fmt, ap);
		errno = saved;
		return;
	}
	(void)vsnprintf(line, sizeof(line), fmt, ap);
	/* One write per line so that concurrent writers do not interleave. */
	if (log_journal) {
		(void)fprintf(stderr, "<%d>%s: %s\n", level, tag, line);
	} else {
		(void)gettimeofday(&tv, NULL);
		(void)localtime_r(&tv.tv_sec, &tm);
		(void)fprintf(stderr, "%02d:%02d:%02d.%03ld %s %-6s %s: %s\n",
		    tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000),
		    log_progname, log_names[level], tag, line);
	}
	errno = saved;
}

void
log_msg(int level, const char *tag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, tag, fmt, ap);
	va_end(ap);
}

int
log_errno_msg(int level, const char *tag, int r, const char *fmt, ...)
{
	char head[768];
	va_list ap;

	if (log_clamp(level) > log_max_level)
		return r;
	va_start(ap, fmt);
	(void)vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	log_msg(level, tag, "%s: %s", head, strerror(r < 0 ? -r : r));
	return r;
}

_Noreturn void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (log_max_level < FERRY_LOG_ERR)
		log_max_level = FERRY_LOG_ERR;
	log_vmsg(FERRY_LOG_ERR, "fatal", fmt, ap);
	va_end(ap);
	exit(1);
}
