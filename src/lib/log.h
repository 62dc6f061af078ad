/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Logging for every ferry program: syslog levels, "<N>" prefixes that
 * journald reads when stderr is the journal, plain lines on a terminal.
 * Each .c file defines LOG_TAG before including this, so every line names
 * its subsystem. Shaped after OpenSMTPD's log.h.
 */
#ifndef FERRY_LIB_LOG_H
#define FERRY_LIB_LOG_H

#include <stdarg.h>

#include <ferry/transport.h>

#ifndef LOG_TAG
#define LOG_TAG "ferry"
#endif

/* Where lines go instead of stderr (plugins forward to the core). */
typedef void log_sink_fn(void *cls, int level, const char *tag,
    const char *fmt, va_list ap);

/* Highest level that is written; read by the macros, set by log_init. */
extern int log_max_level;

/* Sets the program name and level and picks the output style from the
 * environment (JOURNAL_STREAM, isatty). */
void log_init(const char *progname, int level);
void log_set_level(int level);
/* Sends all lines to fn instead of stderr; fn NULL restores stderr. */
void log_set_sink(log_sink_fn *fn, void *cls);

void log_msg(int level, const char *tag, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_vmsg(int level, const char *tag, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Logs fmt followed by ": strerror(-r)" and returns r (a negative errno). */
int log_errno_msg(int level, const char *tag, int r, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Logs at error level and exits 1. Only before the event loop runs. */
_Noreturn void fatal(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#define LOG_AT(level, ...)                                                  \
	do {                                                                \
		if ((level) <= log_max_level)                               \
			log_msg((level), LOG_TAG, __VA_ARGS__);             \
	} while (0)
#define log_err(...)	LOG_AT(FERRY_LOG_ERR, __VA_ARGS__)
#define log_warn(...)	LOG_AT(FERRY_LOG_WARNING, __VA_ARGS__)
#define log_notice(...) LOG_AT(FERRY_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	LOG_AT(FERRY_LOG_INFO, __VA_ARGS__)
#define log_debug(...)	LOG_AT(FERRY_LOG_DEBUG, __VA_ARGS__)
#define log_err_errno(r, ...)                                               \
	log_errno_msg(FERRY_LOG_ERR, LOG_TAG, (r), __VA_ARGS__)
#define log_warn_errno(r, ...)                                              \
	log_errno_msg(FERRY_LOG_WARNING, LOG_TAG, (r), __VA_ARGS__)
#define log_info_errno(r, ...)                                              \
	log_errno_msg(FERRY_LOG_INFO, LOG_TAG, (r), __VA_ARGS__)
#define log_debug_errno(r, ...)                                             \
	log_errno_msg(FERRY_LOG_DEBUG, LOG_TAG, (r), __VA_ARGS__)

/* A bug we can survive: logs where it happened and evaluates to true. */
#define FERRY_BUG(cond)                                                     \
	((cond) ? (log_msg(FERRY_LOG_ERR, LOG_TAG, "BUG at %s:%d: %s",       \
		       __FILE__, __LINE__, #cond),                           \
		      1)                                                    \
		: 0)

#endif /* FERRY_LIB_LOG_H */
