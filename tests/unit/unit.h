/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers shared by the Check suites in tests/unit: a runner, scratch
 * directories and a log capture. Every suite runs the same in Check's
 * fork mode and with CK_FORK=no (as under valgrind), so tests restore
 * whatever global state they change in their teardown.
 */
#ifndef FERRY_TESTS_UNIT_H
#define FERRY_TESTS_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>

#define UNIT_LOG_MAX  64
#define UNIT_LOG_LINE 1024

/* Lines captured by unit_log_capture(), oldest first. */
struct unit_log {
	size_t n;                               /* lines captured */
	int level[UNIT_LOG_MAX];                /* their levels */
	char tag[UNIT_LOG_MAX][32];             /* their LOG_TAGs */
	char line[UNIT_LOG_MAX][UNIT_LOG_LINE]; /* formatted text */
};

/* Initialises libsodium, runs the suite and returns the process exit
 * status: 0 if every test passed. */
int unit_run(Suite *s);

/* Creates a fresh 0700 directory under $TMPDIR (or /tmp) and writes its
 * path to buf. Fails the test on error. */
void unit_tmpdir(char *buf, size_t size);
/* Removes a directory tree made by unit_tmpdir(). NULL or "" is ignored. */
void unit_rmtree(const char *path);
/* Writes len bytes to dir/name (mode 0644), failing the test on error.
 * Returns the joined path in a static buffer. */
const char *unit_write(const char *dir, const char *name, const void *data,
    size_t len);
/* unit_write() of a NUL-terminated string. */
const char *unit_write_str(const char *dir, const char *name, const char *text);

/* Sends every log line at or below level to log instead of stderr, and
 * sets the level. unit_log_release() restores stderr and the old level. */
void unit_log_capture(struct unit_log *log, int level);
void unit_log_release(void);
/* True if some captured line contains needle. */
bool unit_log_has(const struct unit_log *log, const char *needle);

/* Deterministic pseudo-random numbers (xorshift64*) for reproducible
 * randomised tests. */
uint64_t unit_rand(uint64_t *state);

#endif /* FERRY_TESTS_UNIT_H */
