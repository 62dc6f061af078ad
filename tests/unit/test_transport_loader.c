/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The transport loader (src/core/transport.c) against the plugins of
 * plugins/testing: it loads the good one and drives units through it,
 * and refuses each defective one with the documented error code, one log
 * line naming the file, and nothing left loaded.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <check.h>

#include <ferry/transport.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "core/transport.h"
#include "unit.h"

#define RX_MAX 128

struct rx {
	size_t n;                          /* units received */
	struct ferry_tsession *ts[RX_MAX]; /* their sessions */
	char data[RX_MAX][64];             /* their first bytes, NUL-ended */
	size_t len[RX_MAX];
	bool enc[RX_MAX];
	uint32_t crc[RX_MAX];
	size_t gone; /* session_gone calls */
	struct ferry_tsession *gone_ts;
	size_t ready; /* send_ready calls */
	struct ferry_tsession *ready_ts;
};

static struct unit_log test_log;
static struct event_base *test_base;
static struct cfg *test_cfg;
static struct stats *test_stats;
static struct rx test_rx;
static struct ferry_peer_id test_self;

static void
test_on_receive(void *cls, struct transport *t,
    const struct ferry_message_pack *mp)
{
	struct rx *rx = cls;
	size_t i = rx->n++;

	(void)t;
	ck_assert_uint_lt(i, RX_MAX);
	rx->ts[i] = mp->ts;
	rx->len[i] = mp->len;
	rx->enc[i] = mp->is_encrypted;
	rx->crc[i] = mp->crc;
	(void)snprintf(rx->data[i], sizeof(rx->data[i]), "%.*s",
	    (int)(mp->len < 63 ? mp->len : 63), (const char *)mp->msg);
}

static void
test_on_gone(void *cls, struct transport *t, struct ferry_tsession *ts)
{
	struct rx *rx = cls;

	(void)t;
	rx->gone++;
	rx->gone_ts = ts;
}

static void
test_on_ready(void *cls, struct transport *t, struct ferry_tsession *ts)
{
	struct rx *rx = cls;

	(void)t;
	rx->ready++;
	rx->ready_ts = ts;
}

static const struct transport_hooks test_hooks = {
	test_on_receive,
	test_on_gone,
	test_on_ready,
};

static const char *
test_plugin_dir(void)
{
	const char *dir = getenv("FERRY_TEST_PLUGIN_DIR");

	return dir != NULL && *dir != '\0' ? dir
	                                   : FERRY_TEST_PLUGIN_DIR_DEFAULT;
}

static void
test_setup(void)
{
	memset(&test_rx, 0, sizeof(test_rx));
	memset(&test_self, 0x5a, sizeof(test_self));
	test_base = event_base_new();
	test_cfg = cfg_new();
	test_stats = stats_new();
	ck_assert_ptr_nonnull(test_base);
	ck_assert_ptr_nonnull(test_cfg);
	ck_assert_ptr_nonnull(test_stats);
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
}

static void
test_teardown(void)
{
	unit_log_release();
	cfg_free(test_cfg);
	stats_free(test_stats);
	event_base_free(test_base);
}

static int
test_load(const char *name, bool stub, struct transport **ret)
{
	struct transport_env env;

	memset(&env, 0, sizeof(env));
	env.base = stub ? NULL : test_base;
	env.self = &test_self;
	env.cfg = test_cfg;
	env.stats = test_stats;
	env.hooks = stub ? NULL : &test_hooks;
	env.hooks_cls = &test_rx;
	return transport_load(test_plugin_dir(), name, &env, ret);
}

/* Gives the loop a few turns, without blocking. */
static void
test_run_loop(void)
{
	for (int i = 0; i < 10; i++)
		(void)event_base_loop(test_base, EVLOOP_NONBLOCK);
}

/* Runs the loop until n units have arrived in all (or gives up). */
static void
test_pump(size_t n)
{
	for (int i = 0; i < 100 && test_rx.n < n; i++)
		(void)event_base_loop(test_base, EVLOOP_NONBLOCK);
	ck_assert_uint_eq(test_rx.n, n);
}

static bool
test_is_loaded(const char *name)
{
	char path[4096];
	void *h;

	(void)snprintf(path, sizeof(path), "%s/libtransport_%s.so",
	    test_plugin_dir(), name);
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		return false;
	(void)dlclose(h);
	return true;
}

/* Loading `name` fails with `code`, logs `needle` in a line that names
 * the file, and leaves nothing loaded. */
static void
test_refused(const char *name, int code, const char *needle)
{
	struct transport *t = (struct transport *)&test_rx; /* sentinel */
	char file[64];
	bool named = false;

	ck_assert_int_eq(test_load(name, false, &t), code);
	ck_assert_ptr_eq(t, (struct transport *)&test_rx);
	(void)snprintf(file, sizeof(file), "libtransport_%s.so", name);
	ck_assert_msg(unit_log_has(&test_log, needle), "no log line says '%s'",
	    needle);
	for (size_t i = 0; i < test_log.n; i++)
		if (test_log.level[i] == FERRY_LOG_ERR &&
		    strstr(test_log.line[i], file) != NULL)
			named = true;
	ck_assert_msg(named, "no error line names %s", file);
	ck_assert_msg(!test_is_loaded(name), "%s stayed loaded", file);
}

START_TEST(test_missing_file)
{
	struct transport *t = NULL;

	ck_assert_int_eq(test_load("absent", false, &t), -ENOENT);
	ck_assert_ptr_null(t);
	ck_assert(unit_log_has(&test_log, "libtransport_absent.so"));
}
END_TEST

START_TEST(test_bad_name)
{
	static const char *const names[] = { "", "../test", "Test", "a/b",
		"udp.so", "a-b",
		"a_name_that_is_much_longer_than_thirty_one_chars" };
	struct transport *t = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(test_load(names[i], false, &t) == -EINVAL,
		    "name '%s' accepted", names[i]);
	ck_assert_ptr_null(t);
}
END_TEST

START_TEST(test_wrong_abi)
{
	char want[64];

	(void)snprintf(want, sizeof(want),
	    "ABI version %u, this ferryd needs %u",
	    FERRY_TRANSPORT_ABI_VERSION + 1, FERRY_TRANSPORT_ABI_VERSION);
	test_refused("badabi", -EPROTO, want);
}
END_TEST

START_TEST(test_missing_done_symbol)
{
	test_refused("nodone", -ENOSYS, "missing symbol done_transport");
}
END_TEST

START_TEST(test_init_fails)
{
	test_refused("initfail", -EIO, "init_transport failed");
	/* The plugin's own reason reaches the log under its name. */
	ck_assert(unit_log_has(&test_log, "built to fail"));
	ck_assert_str_eq(test_log.tag[0], "initfail");
}
END_TEST

START_TEST(test_missing_function)
{
	test_refused("nosend", -EPROTO, "lacks mandatory function send");
}
END_TEST

START_TEST(test_name_mismatch)
{
	test_refused("misnamed", -EPROTO,
	    "plugin calls itself 'test', expected 'misnamed'");
}
END_TEST

START_TEST(test_struct_too_small)
{
	test_refused("oldsize", -EPROTO, "transport API struct is");
}
END_TEST

START_TEST(test_mtu_too_small)
{
	test_refused("lowmtu", -EPROTO, "MTU 500");
}
END_TEST

START_TEST(test_good_plugin_loads)
{
	struct transport *t = NULL;

	ck_assert_int_eq(test_load("test", false, &t), 0);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(t->name, "test");
	ck_assert_str_eq(t->section, "transport-test");
	ck_assert_ptr_nonnull(strstr(t->path, "libtransport_test.so"));
	ck_assert_uint_eq(t->api->abi_version, FERRY_TRANSPORT_ABI_VERSION);
	ck_assert_uint_eq(t->api->protocol, FERRY_PROTO_TEST);
	ck_assert_uint_eq(t->api->mtu, 1400);
	ck_assert_ptr_nonnull(t->api->keys);
	ck_assert(test_is_loaded("test"));
	transport_unload(t);
	ck_assert(!test_is_loaded("test"));
	transport_unload(NULL);
}
END_TEST

/* The good plugin carries units to itself and back through the core API. */
START_TEST(test_units_round_trip)
{
	uint8_t addr[FERRY_ADDR_MAX];
	struct ferry_tsession *out = NULL;
	struct transport *t = NULL;
	const struct ferry_transport_api *api;
	size_t alen = 0;

	ck_assert_int_eq(test_load("test", false, &t), 0);
	api = t->api;
	ck_assert_int_eq(api->start_server(api->cls), 0);
	ck_assert_int_eq(api->create_helo(api->cls, addr, sizeof(addr), &alen),
	    0);
	ck_assert_int_eq(api->verify_helo(api->cls, addr, alen), 0);
	ck_assert_int_eq(api->connect(api->cls, addr, alen, &out), 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(api->send(api->cls, out, "ping", 4, true, 0xabcd1234u),
	    0);
	ck_assert_uint_eq(test_rx.n, 0); /* delivery goes through the loop */
	test_pump(1);
	ck_assert_str_eq(test_rx.data[0], "ping");
	ck_assert_uint_eq(test_rx.len[0], 4);
	ck_assert(test_rx.enc[0]);
	ck_assert_uint_eq(test_rx.crc[0], 0xabcd1234u);
	ck_assert_ptr_nonnull(test_rx.ts[0]);
	ck_assert_ptr_ne(test_rx.ts[0], out);
	/* Answer on the inbound session: it arrives on ours. */
	ck_assert_int_eq(api->associate(api->cls, test_rx.ts[0]), 0);
	ck_assert_int_eq(api->send(api->cls, test_rx.ts[0], "pong", 4, false,
	                     0),
	    0);
	test_pump(2);
	ck_assert_str_eq(test_rx.data[1], "pong");
	ck_assert_ptr_eq(test_rx.ts[1], out);
	ck_assert(!test_rx.enc[1]);
	/* The loader counts for the core; the plugin counts for itself. */
	ck_assert_uint_eq(stats_get(test_stats, "test.units_in"), 2);
	ck_assert_uint_eq(stats_get(test_stats, "test.bytes_in"), 8);
	ck_assert_uint_eq(stats_get(test_stats, "test.delivered"), 2);
	/* Dropping our last reference closes the pair: the core hears that
	 * the inbound end it holds is gone, from the loop, not from inside
	 * its own call (the ABI's re-entrancy rule). */
	ck_assert_int_eq(api->disconnect(api->cls, out), 0);
	ck_assert_uint_eq(test_rx.gone, 0);
	ck_assert_int_eq(api->send(api->cls, test_rx.ts[0], "late", 4, false,
	                     0),
	    -ENOTCONN);
	test_run_loop();
	ck_assert_uint_eq(test_rx.gone, 1);
	ck_assert_ptr_eq(test_rx.gone_ts, test_rx.ts[0]);
	transport_unload(t);
}
END_TEST

START_TEST(test_send_limits)
{
	static uint8_t big[1401];
	uint8_t addr[FERRY_ADDR_MAX];
	struct ferry_tsession *out = NULL, *again = NULL;
	struct transport *t = NULL;
	const struct ferry_transport_api *api;
	size_t alen = 0, sent = 0;
	int r;

	ck_assert_int_eq(test_load("test", false, &t), 0);
	api = t->api;
	ck_assert_int_eq(api->create_helo(api->cls, addr, sizeof(addr), &alen),
	    0);
	/* No listener before start_server. */
	ck_assert_int_eq(api->connect(api->cls, addr, alen, &out),
	    -ECONNREFUSED);
	ck_assert_int_eq(api->start_server(api->cls), 0);
	ck_assert_int_eq(api->connect(api->cls, addr, alen, &out), 0);
	ck_assert_int_eq(api->connect(api->cls, addr, alen, &again), 0);
	ck_assert_ptr_eq(again, out); /* reused, with a second reference */
	ck_assert_int_eq(api->send(api->cls, out, big, sizeof(big), false, 0),
	    -EMSGSIZE);
	ck_assert_int_eq(api->send(api->cls, out, big, sizeof(big) - 1, false,
	                     0),
	    0);
	sent = 1;
	/* Fill the queue until it pushes back, then drain it: send_ready
	 * follows for the session that was refused. */
	while ((r = api->send(api->cls, out, "x", 1, false, 0)) == 0)
		sent++;
	ck_assert_int_eq(r, -EAGAIN);
	ck_assert_uint_eq(test_rx.ready, 0);
	test_pump(sent);
	ck_assert_uint_eq(test_rx.ready, 1);
	ck_assert_ptr_eq(test_rx.ready_ts, out);
	ck_assert_uint_eq(test_rx.len[0], sizeof(big) - 1);
	/* Two references: the first disconnect keeps the session. */
	ck_assert_int_eq(api->disconnect(api->cls, out), 0);
	ck_assert_int_eq(api->send(api->cls, out, "y", 1, false, 0), 0);
	ck_assert_int_eq(api->disconnect(api->cls, out), 0);
	/* The inbound end was never associated: no session_gone for it. */
	test_run_loop();
	ck_assert_uint_eq(test_rx.gone, 0);
	transport_unload(t);
}
END_TEST

START_TEST(test_plugin_reads_its_section)
{
	uint8_t addr[FERRY_ADDR_MAX];
	char text[64];
	struct transport *t = NULL;
	const struct ferry_transport_api *api;
	size_t alen = 0;

	ck_assert_int_eq(cfg_set(test_cfg, "transport-test", "ADDRESS",
	                     "alpha"),
	    0);
	ck_assert_int_eq(cfg_set(test_cfg, "transport-test", "BLACKLIST",
	                     "evil, worse"),
	    0);
	/* Another section's keys are not the plugin's. */
	ck_assert_int_eq(cfg_set(test_cfg, "transport-udp", "MTU", "9000"), 0);
	ck_assert_int_eq(test_load("test", false, &t), 0);
	api = t->api;
	ck_assert_uint_eq(api->mtu, 1400);
	ck_assert_int_eq(api->create_helo(api->cls, addr, sizeof(addr), &alen),
	    0);
	ck_assert_uint_eq(alen, 10);
	ck_assert_mem_eq(addr, "loop:alpha", 10);
	ck_assert_int_eq(api->create_helo(api->cls, addr, 9, &alen), -ENOSPC);
	ck_assert_int_eq(api->verify_helo(api->cls, "loop:evil", 9), -EPERM);
	ck_assert_int_eq(api->verify_helo(api->cls, "loop:worse", 10), -EPERM);
	ck_assert_int_eq(api->verify_helo(api->cls, "loop:good", 9), 0);
	ck_assert_int_eq(api->verify_helo(api->cls, "loop:", 5), -EINVAL);
	ck_assert_int_eq(api->verify_helo(api->cls, "udp:evil", 8), -EINVAL);
	ck_assert_int_eq(api->address_to_string(api->cls, "loop:good", 9, text,
	                     sizeof(text)),
	    0);
	ck_assert_str_eq(text, "loop:good");
	/* reload_config: a bad value is refused and the old one stays. */
	ck_assert_int_eq(cfg_set(test_cfg, "transport-test", "MTU", "100"), 0);
	ck_assert_int_eq(api->reload_config(api->cls), -EINVAL);
	ck_assert_uint_eq(api->mtu, 1400);
	ck_assert(unit_log_has(&test_log, "MTU '100'"));
	ck_assert_int_eq(cfg_set(test_cfg, "transport-test", "MTU", "9000"), 0);
	ck_assert_int_eq(api->reload_config(api->cls), 0);
	ck_assert_uint_eq(api->mtu, 9000);
	transport_unload(t);
}
END_TEST

START_TEST(test_stub_mode)
{
	uint8_t addr[FERRY_ADDR_MAX];
	struct ferry_tsession *ts = NULL;
	struct transport *t = NULL;
	const struct ferry_transport_api *api;
	size_t alen = 0;

	ck_assert_int_eq(test_load("test", true, &t), 0);
	api = t->api;
	ck_assert_ptr_null(t->core_api.receive);
	ck_assert_int_eq(api->create_helo(api->cls, addr, sizeof(addr), &alen),
	    0);
	ck_assert_int_eq(api->verify_helo(api->cls, addr, alen), 0);
	ck_assert_int_eq(api->connect(api->cls, addr, alen, &ts), -EOPNOTSUPP);
	ck_assert_ptr_null(ts);
	transport_unload(t);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("transport_loader");
	TCase *tc = tcase_create("refusals");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_bad_name);
	tcase_add_test(tc, test_wrong_abi);
	tcase_add_test(tc, test_missing_done_symbol);
	tcase_add_test(tc, test_init_fails);
	tcase_add_test(tc, test_missing_function);
	tcase_add_test(tc, test_name_mismatch);
	tcase_add_test(tc, test_struct_too_small);
	tcase_add_test(tc, test_mtu_too_small);
	suite_add_tcase(s, tc);
	tc = tcase_create("good plugin");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_good_plugin_loads);
	tcase_add_test(tc, test_units_round_trip);
	tcase_add_test(tc, test_send_limits);
	tcase_add_test(tc, test_plugin_reads_its_section);
	tcase_add_test(tc, test_stub_mode);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
