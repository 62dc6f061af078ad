/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers shared by the unit tests (see unit.h). */
#include "unit.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <ferry/transport.h>

#include "lib/fsutil.h"
#include "lib/log.h"

static struct unit_log *unit_log_target;
static int unit_log_saved_level;

int
unit_run(Suite *s)
{
	SRunner *sr;
	int failed;

	if (sodium_init() < 0) {
		fprintf(stderr, "libsodium failed to initialise\n");
		return EXIT_FAILURE;
	}
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

void
unit_tmpdir(char *buf, size_t size)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (base == NULL || *base != '/')
		base = "/tmp";
	n = snprintf(buf, size, "%s/ferry-unit.XXXXXX", base);
	ck_assert_msg(n > 0 && (size_t)n < size, "temporary path too long");
	ck_assert_msg(mkdtemp(buf) != NULL, "mkdtemp %s: %s", buf,
	    strerror(errno));
}

static int
unit_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)chmod(path, 0700);
	return remove(path) < 0 ? -1 : 0;
}

void
unit_rmtree(const char *path)
{
	if (path == NULL || *path == '\0')
		return;
	(void)nftw(path, unit_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *
unit_write(const char *dir, const char *name, const void *data, size_t len)
{
	static char path[4096];
	FILE *f;

	ck_assert_int_eq(fs_path_join(path, sizeof(path), dir, name), 0);
	f = fopen(path, "wb");
	ck_assert_msg(f != NULL, "cannot create %s: %s", path, strerror(errno));
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

const char *
unit_write_str(const char *dir, const char *name, const char *text)
{
	return unit_write(dir, name, text, strlen(text));
}

static void unit_log_sink(void *cls, int level, const char *tag,
    const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static void
unit_log_sink(void *cls, int level, const char *tag, const char *fmt,
    va_list ap)
{
	struct unit_log *log = cls;
	size_t i;

	if (log->n == UNIT_LOG_MAX)
		return;
	i = log->n++;
	log->level[i] = level;
	(void)snprintf(log->tag[i], sizeof(log->tag[i]), "%s", tag);
	(void)vsnprintf(log->line[i], sizeof(log->line[i]), fmt, ap);
}

void
unit_log_capture(struct unit_log *log, int level)
{
	memset(log, 0, sizeof(*log));
	unit_log_target = log;
	unit_log_saved_level = log_max_level;
	log_set_sink(unit_log_sink, log);
	log_set_level(level);
}

void
unit_log_release(void)
{
	if (unit_log_target == NULL)
		return;
	log_set_sink(NULL, NULL);
	log_set_level(unit_log_saved_level);
	unit_log_target = NULL;
}

bool
unit_log_has(const struct unit_log *log, const char *needle)
{
	for (size_t i = 0; i < log->n; i++)
		if (strstr(log->line[i], needle) != NULL)
			return true;
	return false;
}

uint64_t
unit_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}
