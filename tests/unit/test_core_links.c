/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The link-policy calls of core.h (src/core/core_links.c) on a core whose
 * only transport is the loopback test plugin, without running its event
 * loop: [core] LINK_POLICY is auto, core or manual and nothing else, a
 * layer above may claim the choice of links under auto and manual but
 * not under core; HELOs a
 * layer above learns are checked (framing, type, signature, expiry, the
 * transport) before anything is kept, and only validated ones are handed
 * on; our own HELOs come back whole and are ignored when learnt; core_link
 * and core_unlink know which peers exist and say who asked for a link;
 * the operator's CONNECT pins its peer, BOOTSTRAP does not; an unlinked
 * peer has no info; a peer-book address links again at start unless a
 * layer above chooses links without having claimed them. Links made and dropped between
 * cores are tests/integration/test_linkpolicy.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <check.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "lib/wire.h"
#include "core/core_int.h"
#include "core/helo.h"
#include "core/identity.h"
#include "core/peer.h"
#include "core/validate.h"
#include "unit.h"

static char dir[256];
static struct event_base *base;
static struct cfg *cfg;
static struct stats *stats;
static struct core *core;
static struct identity *other;

/* A configuration: the loopback transport and the extra text. */
static struct cfg *
test_cfg(const char *extra)
{
	const char *plugins = getenv("FERRY_TEST_PLUGIN_DIR");
	struct cfg *c = cfg_new();
	char text[1024];
	int n;

	if (plugins == NULL || *plugins == '\0')
		plugins = FERRY_TEST_PLUGIN_DIR_DEFAULT;
	n = snprintf(text, sizeof(text),
	    "[core]\nTRANSPORTS = test\nPLUGIN_DIR = %s\n%s\n"
	    "[transport-test]\nADDRESS = me\n",
	    plugins, extra);
	ck_assert(n > 0 && (size_t)n < sizeof(text));
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(cfg_add_schema(c, core_cfg_keys), 0);
	ck_assert_int_eq(cfg_add_schema_prefix(c, "transport-"), 0);
	ck_assert_int_eq(cfg_load_buffer(c, "test", text, strlen(text)), 0);
	return c;
}

static void
test_setup(void)
{
	uint8_t seed[32];

	unit_tmpdir(dir, sizeof(dir));
	base = event_base_new();
	stats = stats_new();
	ck_assert(base != NULL && stats != NULL);
	cfg = test_cfg("LINK_POLICY = manual");
	ck_assert_int_eq(core_new(base, cfg, stats, dir, &core), 0);
	memset(seed, 0x77, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &other), 0);
}

static void
test_teardown(void)
{
	core_free(core);
	identity_free(other);
	stats_free(stats);
	cfg_free(cfg);
	event_base_free(base);
	unit_rmtree(dir);
	core = NULL;
}

/* A HELO of the other identity for the loopback address label, valid for
 * life seconds from now; returns its size. */
static size_t
other_helo(const char *label, int64_t life, uint8_t *out, size_t max)
{
	char addr[64];
	int n = snprintf(addr, sizeof(addr), "loop:%s", label);

	n = helo_build(other, FERRY_PROTO_TEST, 1400,
	    (uint64_t)((int64_t)time_real_s() + life), addr, (size_t)n, out,
	    max);
	ck_assert_int_gt(n, 0);
	return (size_t)n;
}

START_TEST(test_policy_key)
{
	static const char *const good[] = { "auto", "manual", "MANUAL",
		"Auto", "core", "CORE" };
	static const enum core_link_policy want[] = { CORE_LINKS_AUTO,
		CORE_LINKS_MANUAL, CORE_LINKS_MANUAL, CORE_LINKS_AUTO,
		CORE_LINKS_CORE, CORE_LINKS_CORE };
	static const char *const bad[] = { "", "yes", "manually", "auto x",
		"dht" };
	struct core_cfg cc;
	struct cfg *c;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char line[64];

		(void)snprintf(line, sizeof(line), "LINK_POLICY = %s", good[i]);
		c = test_cfg(line);
		ck_assert_int_eq(core_cfg_parse(c, &cc), 0);
		ck_assert_int_eq(cc.link_policy, want[i]);
		cfg_free(c);
	}
	log_max_level = -1; /* the refusals are logged */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char line[64];

		(void)snprintf(line, sizeof(line), "LINK_POLICY = %s", bad[i]);
		c = test_cfg(line);
		ck_assert_int_eq(core_cfg_parse(c, &cc), -EINVAL);
		ck_assert_ptr_nonnull(strstr(cfg_error(c), "LINK_POLICY"));
		cfg_free(c);
	}
	log_max_level = FERRY_LOG_NOTICE;
	/* The default is auto. */
	c = test_cfg("");
	ck_assert_int_eq(core_cfg_parse(c, &cc), 0);
	ck_assert_int_eq(cc.link_policy, CORE_LINKS_AUTO);
	cfg_free(c);
}
END_TEST

/* Who chooses: a layer above may claim it under auto (the core's until
 * then) and manual, not under core. */
START_TEST(test_claim)
{
	static const char *const policy[] = { "auto", "core", "manual" };
	static const int claimed[] = { 0, -EPERM, 0 };
	static const bool before[] = { false, false, true };
	static const bool after[] = { true, false, true };

	for (size_t i = 0; i < 3; i++) {
		struct core *c2;
		struct cfg *c;
		char line[64];

		(void)snprintf(line, sizeof(line), "LINK_POLICY = %s",
		    policy[i]);
		c = test_cfg(line);
		ck_assert_int_eq(core_new(base, c, stats, dir, &c2), 0);
		ck_assert(core_links_manual(c2) == before[i]);
		log_max_level = -1; /* the refusal is logged */
		ck_assert_int_eq(core_links_claim(c2), claimed[i]);
		log_max_level = FERRY_LOG_NOTICE;
		ck_assert(core_links_manual(c2) == after[i]);
		core_free(c2);
		cfg_free(c);
	}
}
END_TEST

START_TEST(test_own_helos)
{
	uint8_t buf[CORE_PEER_HELOS_MAX], small[8];
	size_t len = 0, before;
	struct helo h;

	ck_assert_int_eq(core_peer_helos(core, core_identity(core), buf,
			     sizeof(buf), &len),
	    0);
	ck_assert_int_eq(helo_decode(buf, len, &h), 0);
	ck_assert_int_eq(memcmp(&h.id, core_identity(core), sizeof(h.id)), 0);
	ck_assert_int_eq(helo_verify(&h, time_real_s()), 0);
	ck_assert_uint_eq(h.addr_len, 7);
	ck_assert_mem_eq(h.addr, "loop:me", 7);
	before = len;
	ck_assert_int_eq(core_peer_helos(core, core_identity(core), small,
			     sizeof(small), &len),
	    -ENOSPC);
	ck_assert_uint_eq(len, before);
	/* Learnt back, they are taken and change nothing. */
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, len), 0);
	ck_assert_ptr_null(peer_find(core, core_identity(core)));
}
END_TEST

START_TEST(test_learn_checks)
{
	uint8_t buf[2048], two[2048];
	size_t n, n2;
	struct ferry_peer_id nobody;

	n = other_helo("there", 3600, buf, sizeof(buf));
	/* Framing, type and length, before anything is kept. */
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, 0), -EBADMSG);
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, n - 1), -EBADMSG);
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, 3), -EBADMSG);
	memcpy(two, buf, n);
	n2 = other_helo("elsewhere", 3600, two + n, sizeof(two) - n);
	wire_put16(two + n + 2, FERRY_P2P_PING);
	ck_assert_int_eq(core_learn_helo(core, NULL, two, n + n2), -EBADMSG);
	ck_assert_ptr_null(peer_find(core, &other->id));
	/* Forged, expired, for a label the transport refuses. */
	buf[n - 1] ^= 1;
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, n), -EBADMSG);
	n = other_helo("there", -10, buf, sizeof(buf));
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, n), -ESTALE);
	n = other_helo("NOT_A_LABEL", 3600, buf, sizeof(buf));
	ck_assert_int_eq(core_learn_helo(core, NULL, buf, n), -EPERM);
	ck_assert_ptr_null(peer_find(core, &other->id));
	/* Handed over by a peer we have no link to. */
	memset(&nobody, 0x12, sizeof(nobody));
	n = other_helo("there", 3600, buf, sizeof(buf));
	ck_assert_int_eq(core_learn_helo(core, &nobody, buf, n), -ENOTCONN);
	/* Two good ones back to back: both kept, not yet validated. */
	memcpy(two, buf, n);
	n2 = other_helo("elsewhere", 3600, two + n, sizeof(two) - n);
	ck_assert_int_eq(core_learn_helo(core, NULL, two, n + n2), 0);
	ck_assert_ptr_nonnull(peer_find(core, &other->id));
	ck_assert_uint_eq(peer_find(core, &other->id)->n_addrs, 2);
	ck_assert_int_eq(core_peer_helos(core, &other->id, buf, sizeof(buf),
			     &n),
	    -ENOENT);
}
END_TEST

/* Only validated addresses are handed on, as their peer signed them. */
START_TEST(test_hand_on_validated)
{
	uint8_t helo[1024], buf[CORE_PEER_HELOS_MAX];
	size_t n = other_helo("there", 3600, helo, sizeof(helo)), len = 0;
	size_t n2 = other_helo("elsewhere", 3600, helo + n, sizeof(helo) - n);
	struct addr *a;
	struct peer *p;

	ck_assert_int_eq(core_learn_helo(core, NULL, helo, n + n2), 0);
	p = peer_find(core, &other->id);
	ck_assert_ptr_nonnull(p);
	ck_assert(!p->want_link); /* manual: learning is not linking */
	a = TAILQ_LAST(&p->addrs, addr_list);
	a->state = ADDR_VALID; /* as a PONG would make it */
	ck_assert_int_eq(core_peer_helos(core, &other->id, buf, sizeof(buf),
			     &len),
	    0);
	ck_assert_uint_eq(len, n2);
	ck_assert_mem_eq(buf, helo + n, n2);
	ck_assert_int_eq(core_peer_helos(core, &other->id, buf, n2 - 1, &len),
	    -ENOSPC);
	TAILQ_FIRST(&p->addrs)->state = ADDR_VALID;
	ck_assert_int_eq(core_peer_helos(core, &other->id, buf, sizeof(buf),
			     &len),
	    0);
	ck_assert_uint_eq(len, n + n2);
}
END_TEST

START_TEST(test_link_unlink_known)
{
	uint8_t helo[1024];
	size_t n = other_helo("there", 3600, helo, sizeof(helo));
	struct core_peer_info pi;
	struct ferry_peer_id nobody;
	struct peer *p;

	memset(&nobody, 0x21, sizeof(nobody));
	ck_assert_int_eq(core_link(core, &nobody), -ENOENT);
	ck_assert_int_eq(core_unlink(core, &nobody), -ENOENT);
	ck_assert_int_eq(core_link(core, core_identity(core)), -EINVAL);
	ck_assert_int_eq(core_link(core, &other->id), -ENOENT);
	ck_assert_int_eq(core_learn_helo(core, NULL, helo, n), 0);
	p = peer_find(core, &other->id);
	ck_assert(!p->asked);
	/* Known: wanted now, linked once its address answers; this side
	 * asked for it. */
	ck_assert_int_eq(core_link(core, &other->id), 0);
	ck_assert(p->want_link);
	ck_assert(p->asked);
	ck_assert(!p->connected);
	ck_assert_int_eq(core_peer_info(core, &other->id, &pi), -ENOTCONN);
	ck_assert_int_eq(core_peer_info(core, &nobody, &pi), -ENOTCONN);
	/* Not linked: unlinking only stops wanting it. */
	ck_assert_int_eq(core_unlink(core, &other->id), 0);
	ck_assert(!p->want_link);
	ck_assert(!p->asked);
	ck_assert(!p->unlinking);
	ck_assert_uint_eq(*core->ctr.unlinks, 0);
}
END_TEST

/* The peer book at start: its peers are linked again (ours) under core,
 * and when a layer above claimed the choice (it drops what it does not
 * need), not under manual with no such layer. */
START_TEST(test_restore_relinks)
{
	static const char *const policy[] = { "core", "manual", "manual",
		"auto" };
	static const bool claim[] = { false, false, true, true };
	static const bool want[] = { true, false, true, true };
	uint8_t helo[1024];
	/* The loopback transport connects to its own address only. */
	size_t n = other_helo("me", 3600, helo, sizeof(helo));

	for (size_t i = 0; i < 4; i++) {
		struct core *c2;
		struct cfg *c;
		struct peer *p;
		char line[64];

		(void)snprintf(line, sizeof(line), "LINK_POLICY = %s",
		    policy[i]);
		c = test_cfg(line);
		ck_assert_int_eq(core_new(base, c, stats, dir, &c2), 0);
		if (claim[i])
			ck_assert_int_eq(core_links_claim(c2), 0);
		ck_assert_int_eq(core_start(c2), 0);
		ck_assert_int_eq(validate_restore(c2, helo, n,
		                     time_real_s() + 600),
		    0);
		p = peer_find(c2, &other->id);
		ck_assert_ptr_nonnull(p);
		ck_assert_msg(p->want_link == want[i] && p->asked == want[i],
		    "LINK_POLICY = %s%s", policy[i],
		    claim[i] ? ", claimed" : "");
		ck_assert_int_eq(TAILQ_FIRST(&p->addrs)->state, ADDR_VALID);
		core_free(c2);
		cfg_free(c);
	}
}
END_TEST

/* The operator's CONNECT links and pins; a BOOTSTRAP URI only links. */
START_TEST(test_connect_pins)
{
	uint8_t helo[1024];
	size_t n = other_helo("there", 3600, helo, sizeof(helo));
	uint64_t now;
	struct peer *p;
	char *uri;

	ck_assert_int_eq(helo_uri_encode(&other->id, helo, n, &uri), 0);
	ck_assert_int_eq(core_links_add_uri(core, uri, false), 0);
	p = peer_find(core, &other->id);
	ck_assert_ptr_nonnull(p);
	ck_assert(p->want_link && p->asked);
	ck_assert_uint_eq(p->pinned_until_us, 0);
	now = time_mono_us();
	ck_assert_int_eq(core_add_uri(core, uri), 0);
	/* PIN_IDLE, 10 min by default, from now. */
	ck_assert_uint_ge(p->pinned_until_us, now + 600 * USEC_PER_SEC);
	ck_assert_uint_le(p->pinned_until_us,
	    time_mono_us() + 600 * USEC_PER_SEC);
	free(uri);
	log_max_level = -1;
	ck_assert_int_eq(core_add_uri(core, "ferry://nonsense"), -EINVAL);
	log_max_level = FERRY_LOG_NOTICE;
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("core_links");
	TCase *tc = tcase_create("links");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_policy_key);
	tcase_add_test(tc, test_claim);
	tcase_add_test(tc, test_connect_pins);
	tcase_add_test(tc, test_restore_relinks);
	tcase_add_test(tc, test_own_helos);
	tcase_add_test(tc, test_learn_checks);
	tcase_add_test(tc, test_hand_on_validated);
	tcase_add_test(tc, test_link_unlink_known);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
