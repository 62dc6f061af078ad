/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The layers' receive backlog accounts and their holds on peers
 * (src/core/rxhold.c), on a core that loads no transport: the node-wide
 * backlog is the sum of the accounts, streams pause above RECV_WINDOW and
 * resume at half of it, freeing an account takes its backlog and holds
 * away, a peer is held while any account holds it, a hold by id applies
 * to a peer record made later, and there are CORE_RX_ACCOUNTS_MAX slots.
 * The traffic this stops and lets go is tests/integration/test_rxhold.c.
 */
#include <errno.h>
#include <string.h>

#include <event2/event.h>
#include <check.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "core/core_int.h"
#include "core/peer.h"
#include "unit.h"

#define WINDOW (256 * 1024)

static char dir[256];
static struct event_base *base;
static struct cfg *cfg;
static struct stats *stats;
static struct core *core;

static void
test_setup(void)
{
	static const char text[] = "[core]\nTRANSPORTS =\n"
				   "RECV_WINDOW = 256 KiB\n";

	unit_tmpdir(dir, sizeof(dir));
	base = event_base_new();
	cfg = cfg_new();
	stats = stats_new();
	ck_assert(base != NULL && cfg != NULL && stats != NULL);
	ck_assert_int_eq(cfg_add_schema(cfg, core_cfg_keys), 0);
	ck_assert_int_eq(cfg_load_buffer(cfg, "test", text, strlen(text)), 0);
	log_max_level = FERRY_LOG_ERR; /* "no transports loaded" */
	ck_assert_int_eq(core_new(base, cfg, stats, dir, &core), 0);
	log_max_level = FERRY_LOG_NOTICE;
}

static void
test_teardown(void)
{
	core_free(core);
	stats_free(stats);
	cfg_free(cfg);
	event_base_free(base);
	unit_rmtree(dir);
	core = NULL;
}

static struct ferry_peer_id
test_id(uint8_t b)
{
	struct ferry_peer_id id;

	memset(&id, b, sizeof(id));
	return id;
}

START_TEST(test_sum_and_hysteresis)
{
	struct core_rx_account *a, *b;

	ck_assert_int_eq(core_rx_account_new(core, &a), 0);
	ck_assert_int_eq(core_rx_account_new(core, &b), 0);
	core_rx_account_set(a, WINDOW * 3 / 4);
	ck_assert(core->rx_backlog == WINDOW * 3 / 4);
	ck_assert(!core->rx_paused);
	/* Each below the window, together above it. */
	core_rx_account_set(b, WINDOW / 2 + 1);
	ck_assert(core->rx_backlog == WINDOW * 5 / 4 + 1);
	ck_assert(core->rx_paused);
	/* Falling, but still above half: still paused. */
	core_rx_account_set(a, 0);
	ck_assert(core->rx_backlog == WINDOW / 2 + 1);
	ck_assert(core->rx_paused);
	core_rx_account_set(b, WINDOW / 2);
	ck_assert(!core->rx_paused);
	/* An account's value replaces its last one, never adds to it. */
	core_rx_account_set(b, 100);
	core_rx_account_set(b, 100);
	ck_assert(core->rx_backlog == 100);
	/* Freeing an account takes its backlog away. */
	core_rx_account_set(a, WINDOW * 2);
	ck_assert(core->rx_paused);
	core_rx_account_free(a);
	ck_assert(core->rx_backlog == 100);
	ck_assert(!core->rx_paused);
	core_rx_account_free(b);
	ck_assert(core->rx_backlog == 0);
}
END_TEST

START_TEST(test_holds)
{
	struct core_rx_account *a, *b;
	struct ferry_peer_id x = test_id(0x11), y = test_id(0x22);
	struct peer *p;

	ck_assert_int_eq(core_rx_account_new(core, &a), 0);
	ck_assert_int_eq(core_rx_account_new(core, &b), 0);
	p = peer_get(core, &x);
	ck_assert_ptr_nonnull(p);
	ck_assert(!p->rx_held);
	ck_assert_int_eq(core_rx_account_hold(a, &x, true), 0);
	ck_assert(p->rx_held);
	ck_assert_int_eq(core_rx_account_hold(b, &x, true), 0);
	ck_assert_int_eq(core_rx_account_hold(a, &x, true), 0);
	ck_assert_uint_eq(*core->ctr.peers_held, 1);
	/* Held while any account holds it. */
	ck_assert_int_eq(core_rx_account_hold(a, &x, false), 0);
	ck_assert(p->rx_held);
	ck_assert_int_eq(core_rx_account_hold(a, &x, false), 0);
	ck_assert_int_eq(core_rx_account_hold(b, &x, false), 0);
	ck_assert(!p->rx_held);
	ck_assert_uint_eq(*core->ctr.peers_held, 0);
	/* A hold by id outlives the record: a new one starts held. */
	ck_assert_int_eq(core_rx_account_hold(a, &y, true), 0);
	ck_assert(core_rx_is_held(core, &y));
	ck_assert_ptr_null(peer_find(core, &y));
	p = peer_get(core, &y);
	ck_assert_ptr_nonnull(p);
	ck_assert(p->rx_held);
	peer_free(p);
	ck_assert(core_rx_is_held(core, &y));
	/* Freeing the account lets go of what it held, and only that. */
	ck_assert_int_eq(core_rx_account_hold(b, &x, true), 0);
	ck_assert_int_eq(core_rx_account_hold(a, &x, true), 0);
	ck_assert_uint_eq(*core->ctr.peers_held, 2);
	core_rx_account_free(a);
	ck_assert(!core_rx_is_held(core, &y));
	ck_assert(core_rx_is_held(core, &x));
	ck_assert(peer_find(core, &x)->rx_held);
	ck_assert_uint_eq(*core->ctr.peers_held, 1);
	core_rx_account_free(b);
	ck_assert(!peer_find(core, &x)->rx_held);
	ck_assert_uint_eq(*core->ctr.peers_held, 0);
}
END_TEST

/* More holds than one batch of the release walk. */
START_TEST(test_many_holds_released)
{
	struct core_rx_account *a;

	ck_assert_int_eq(core_rx_account_new(core, &a), 0);
	for (unsigned i = 0; i < 300; i++) {
		struct ferry_peer_id id = test_id(0);

		memcpy(id.bytes, &i, sizeof(i));
		ck_assert_int_eq(core_rx_account_hold(a, &id, true), 0);
	}
	ck_assert_uint_eq(*core->ctr.peers_held, 300);
	core_rx_account_free(a);
	ck_assert_uint_eq(*core->ctr.peers_held, 0);
}
END_TEST

START_TEST(test_slots)
{
	struct core_rx_account *acct[CORE_RX_ACCOUNTS_MAX], *extra = NULL;

	for (int i = 0; i < CORE_RX_ACCOUNTS_MAX; i++)
		ck_assert_int_eq(core_rx_account_new(core, &acct[i]), 0);
	ck_assert_int_eq(core_rx_account_new(core, &extra), -ENOSPC);
	ck_assert_ptr_null(extra);
	core_rx_account_free(acct[3]);
	ck_assert_int_eq(core_rx_account_new(core, &acct[3]), 0);
	for (int i = 0; i < CORE_RX_ACCOUNTS_MAX; i++)
		core_rx_account_free(acct[i]);
	core_rx_account_free(NULL);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_rxhold");
	TCase *tc = tcase_create("accounts");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_sum_and_hysteresis);
	tcase_add_test(tc, test_holds);
	tcase_add_test(tc, test_many_holds_released);
	tcase_add_test(tc, test_slots);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
