/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Config value parsers (see strparse.h), layer 0. */
#include "lib/strparse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct strparse_unit {
	const char *name;
	uint64_t mult;
};

static const char *
strparse_skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Parses a decimal number and an optional unit from table. */
static int
strparse_with_unit(const char *s, const struct strparse_unit *units,
    uint64_t bare_mult, uint64_t min, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	uint64_t mult = bare_mult;
	char *end;
	const char *u;

	s = strparse_skip_space(s);
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	u = strparse_skip_space(end);
	if (*u != '\0') {
		size_t len = strlen(u);
		const struct strparse_unit *k;

		while (len > 0 && (u[len - 1] == ' ' || u[len - 1] == '\t'))
			len--;
		for (k = units; k->name != NULL; k++)
			if (strlen(k->name) == len &&
			    strncasecmp(u, k->name, len) == 0)
				break;
		if (k->name == NULL)
			return -EINVAL;
		mult = k->mult;
	}
	if (mult != 0 && v > UINT64_MAX / mult)
		return -ERANGE;
	v *= mult;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int
parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	static const struct strparse_unit none[] = { { NULL, 0 } };

	return strparse_with_unit(s, none, 1, min, max, ret);
}

int
parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

int
parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	static const struct strparse_unit units[] = {
		{ "B", 1 },
		{ "KB", 1000ull },
		{ "KiB", 1024ull },
		{ "K", 1024ull },
		{ "MB", 1000000ull },
		{ "MiB", 1048576ull },
		{ "M", 1048576ull },
		{ "GB", 1000000000ull },
		{ "GiB", 1073741824ull },
		{ "G", 1073741824ull },
		{ NULL, 0 },
	};

	return strparse_with_unit(s, units, 1, min, max, ret);
}

int
parse_duration(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	static const struct strparse_unit units[] = {
		{ "us", 1 },
		{ "ms", 1000ull },
		{ "s", 1000000ull },
		{ "sec", 1000000ull },
		{ "min", 60000000ull },
		{ "h", 3600000000ull },
		{ "d", 86400000000ull },
		{ NULL, 0 },
	};

	return strparse_with_unit(s, units, 1000000ull, min, max, ret);
}

int
parse_fraction(const char *s, double min, double max, double *ret)
{
	char *end;
	double v;

	s = strparse_skip_space(s);
	if (*s == '\0')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE || end == s || !isfinite(v))
		return -EINVAL;
	end = (char *)strparse_skip_space(end);
	if (*end == '%') {
		v /= 100.0;
		end = (char *)strparse_skip_space(end + 1);
	}
	if (*end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}
