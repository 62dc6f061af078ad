/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Config value parsers (src/lib/strparse.c): numbers, sizes, durations,
 * booleans and fractions, their units, bounds and malformed input. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include <check.h>

#include "lib/strparse.h"
#include "unit.h"

#define SENTINEL 0x5eed5eed5eed5eedull

struct ucase {
	const char *s;
	int r;      /* expected return */
	uint64_t v; /* expected value when r == 0 */
};

/* Runs fn over cases with [min, max]; on failure *ret must stay put. */
static void
test_ucases(int (*fn)(const char *, uint64_t, uint64_t, uint64_t *),
    const struct ucase *c, size_t n, uint64_t min, uint64_t max)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v = SENTINEL;
		int r = fn(c[i].s, min, max, &v);

		ck_assert_msg(r == c[i].r, "'%s': returned %d, expected %d",
		    c[i].s, r, c[i].r);
		ck_assert_msg(v == (r == 0 ? c[i].v : SENTINEL),
		    "'%s': value %llu", c[i].s, (unsigned long long)v);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(test_uint)
{
	static const struct ucase c[] = {
		{ "0", 0, 0 }, { "42", 0, 42 }, { "  42", 0, 42 },
		{ "42  ", 0, 42 }, { "\t7\t", 0, 7 }, { "007", 0, 7 },
		{ "18446744073709551615", 0, UINT64_MAX },
		{ "18446744073709551616", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 }, { "", -EINVAL, 0 },
		{ " ", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "+1", -EINVAL, 0 },
		{ "0x10", -EINVAL, 0 }, { "12abc", -EINVAL, 0 },
		{ "1 2", -EINVAL, 0 }, { "1.0", -EINVAL, 0 },
		{ "1 KiB", -EINVAL, 0 }, /* no units for plain numbers */
	};
	static const struct ucase bounded[] = {
		{ "9", -ERANGE, 0 },
		{ "10", 0, 10 },
		{ "20", 0, 20 },
		{ "21", -ERANGE, 0 },
	};

	test_ucases(parse_uint, c, N(c), 0, UINT64_MAX);
	test_ucases(parse_uint, bounded, N(bounded), 10, 20);
}
END_TEST

START_TEST(test_size)
{
	static const struct ucase c[] = {
		{ "1500", 0, 1500 },
		{ "1500 B", 0, 1500 },
		{ "64 KiB", 0, 65536 },
		{ "64KiB", 0, 65536 },
		{ "64 kib", 0, 65536 },
		{ "1 K", 0, 1024 },
		{ "1 KB", 0, 1000 },
		{ "4MiB", 0, 4194304 },
		{ "4 M", 0, 4194304 },
		{ "3 MB", 0, 3000000 },
		{ "1 GB", 0, 1000000000 },
		{ "2 GiB", 0, 2147483648ull },
		{ "1 G", 0, 1073741824 },
		{ "0 MiB", 0, 0 },
		{ "16 MiB ", 0, 16777216 },
		{ "17179869183 GiB", 0, 17179869183ull << 30 },
		{ "17179869184 GiB", -ERANGE, 0 },
		{ "1 TB", -EINVAL, 0 },
		{ "1.5 MiB", -EINVAL, 0 },
		{ "MiB", -EINVAL, 0 },
		{ "1 MiBs", -EINVAL, 0 },
		{ "1 Mi B", -EINVAL, 0 },
	};
	static const struct ucase bounded[] = {
		{ "63 KiB", -ERANGE, 0 },
		{ "64 KiB", 0, 65536 },
		{ "1 MiB", 0, 1048576 },
		{ "1048577", -ERANGE, 0 },
	};

	test_ucases(parse_size, c, N(c), 0, UINT64_MAX);
	test_ucases(parse_size, bounded, N(bounded), 65536, 1048576);
}
END_TEST

START_TEST(test_duration)
{
	static const struct ucase c[] = {
		{ "5", 0, 5000000 }, /* a bare number is seconds */
		{ "0", 0, 0 },
		{ "250 us", 0, 250 },
		{ "100 ms", 0, 100000 },
		{ "100ms", 0, 100000 },
		{ "5 s", 0, 5000000 },
		{ "5 sec", 0, 5000000 },
		{ "5 S", 0, 5000000 },
		{ "2 min", 0, 120000000 },
		{ "1 h", 0, 3600000000ull },
		{ "1 d", 0, 86400000000ull },
		{ "0 us", 0, 0 },
		{ "1 m", -EINVAL, 0 },
		{ "1 w", -EINVAL, 0 },
		{ "1.5 s", -EINVAL, 0 },
		{ "s", -EINVAL, 0 },
		{ "-1 s", -EINVAL, 0 },
		{ "213503982 d", 0, 213503982ull * 86400000000ull },
		{ "213503983 d", -ERANGE, 0 },
		{ "18446744073710 s", -ERANGE, 0 },
	};
	static const struct ucase bounded[] = {
		{ "99 ms", -ERANGE, 0 },
		{ "100 ms", 0, 100000 },
		{ "600", 0, 600000000 },
		{ "601 s", -ERANGE, 0 },
	};

	test_ucases(parse_duration, c, N(c), 0, UINT64_MAX);
	test_ucases(parse_duration, bounded, N(bounded), 100000, 600000000);
}
END_TEST

START_TEST(test_bool)
{
	static const char *const yes[] = { "yes", "YES", "Yes", "true", "TRUE",
		"on", "On", "1" };
	static const char *const no[] = { "no", "NO", "false", "False", "off",
		"OFF", "0" };
	static const char *const bad[] = { "", "y", "n", "2", "yes ", " no",
		"enable", "nope", "00" };
	bool v;

	for (size_t i = 0; i < N(yes); i++) {
		v = false;
		ck_assert_int_eq(parse_bool(yes[i], &v), 0);
		ck_assert_msg(v, "'%s' is not true", yes[i]);
	}
	for (size_t i = 0; i < N(no); i++) {
		v = true;
		ck_assert_int_eq(parse_bool(no[i], &v), 0);
		ck_assert_msg(!v, "'%s' is not false", no[i]);
	}
	for (size_t i = 0; i < N(bad); i++) {
		v = true;
		ck_assert_msg(parse_bool(bad[i], &v) == -EINVAL,
		    "'%s' accepted", bad[i]);
		ck_assert(v);
	}
}
END_TEST

START_TEST(test_fraction)
{
	static const struct {
		const char *s;
		int r;
		double v;
	} c[] = {
		{ "0", 0, 0.0 },
		{ "0.05", 0, 0.05 },
		{ " 0.5 ", 0, 0.5 },
		{ "1", 0, 1.0 },
		{ "5%", 0, 0.05 },
		{ "5 %", 0, 0.05 },
		{ "100%", 0, 1.0 },
		{ "1e-3", 0, 0.001 },
		{ "1.5", -ERANGE, 0 },
		{ "101%", -ERANGE, 0 },
		{ "-0.1", -ERANGE, 0 },
		{ "", -EINVAL, 0 },
		{ "%", -EINVAL, 0 },
		{ "abc", -EINVAL, 0 },
		{ "0.5x", -EINVAL, 0 },
		{ "5%%", -EINVAL, 0 },
		{ "nan", -EINVAL, 0 },
		{ "inf", -EINVAL, 0 },
		{ "1e999", -EINVAL, 0 },
	};
	double v;

	for (size_t i = 0; i < N(c); i++) {
		int r;

		v = -42.0;
		r = parse_fraction(c[i].s, 0.0, 1.0, &v);
		ck_assert_msg(r == c[i].r, "'%s': returned %d, expected %d",
		    c[i].s, r, c[i].r);
		if (r == 0)
			ck_assert_double_eq_tol(v, c[i].v, 1e-12);
		else
			ck_assert_double_eq(v, -42.0);
	}
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("strparse");
	TCase *tc = tcase_create("strparse");

	tcase_add_test(tc, test_uint);
	tcase_add_test(tc, test_size);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_bool);
	tcase_add_test(tc, test_fraction);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
