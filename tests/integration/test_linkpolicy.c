/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Link policy (issue 12, seam 4), on cores in one process over real UDP
 * (tests/lib corenet). Under LINK_POLICY = manual two cores that learnt
 * each other's HELOs from the layer above (core_learn_helo) validate
 * each other's addresses and stay unlinked until one calls core_link;
 * core_unlink drops the link on both sides at once (BYE) and neither
 * links again on its own; the operator's URIs still link; only a peer's
 * own HELOs are gossiped. Under auto, the default, the same HELOs link by
 * themselves and gossip introduces third peers, as before, until a layer
 * above claims the choice (core_links_claim), which LINK_POLICY = core
 * refuses. core_peer_info says which side asked for a link, and that
 * messages of the clients' types pin it on both sides for PIN_IDLE,
 * those of the DHT's not. Also the HELOs handed on (core_peer_helos),
 * MAX_PEERS and bad arguments.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "corenet.h"
#include "lib/log.h"

#define LINK_MS 10000
#define MANUAL	"[core]\nLINK_POLICY = manual\n"
#define CORE	"[core]\nLINK_POLICY = core\n"
#define TYPE	0x0400 /* a client's (FERRY_APP_TYPE_MIN) */
#define DHT_TYPE 0x0100 /* the DHT's (FERRY_MSG_DHT_MIN) */

static struct corenet *net;

static void
teardown(void)
{
	corenet_free(net);
	net = NULL;
}

/* b's own HELOs, as a layer above would hand them on. */
static size_t
own_helos(struct corenet_node *b, uint8_t *buf, size_t size)
{
	size_t len = 0;

	ck_assert_int_eq(core_peer_helos(b->core, &b->id, buf, size, &len), 0);
	ck_assert_uint_gt(len, 0);
	return len;
}

/* a learns b's HELOs from its layer above (from our own store: no
 * advertiser). */
static void
learn(struct corenet_node *a, struct corenet_node *b)
{
	uint8_t buf[CORE_PEER_HELOS_MAX];
	size_t len = own_helos(b, buf, sizeof(buf));

	ck_assert_int_eq(core_learn_helo(a->core, NULL, buf, len), 0);
}

struct stat_want {
	const struct corenet_node *n;
	const char *name;
	uint64_t value;
};

static bool
stat_reached(void *cls)
{
	const struct stat_want *w = cls;

	return corenet_stat(w->n, w->name) >= w->value;
}

static void
wait_stat(const struct corenet_node *n, const char *name, uint64_t value,
    int timeout_ms)
{
	struct stat_want w = { n, name, value };

	ck_assert_msg(corenet_run_until(net, stat_reached, &w, timeout_ms),
	    "node %u: %s stays at %llu, below %llu", n->index, name,
	    (unsigned long long)corenet_stat(n, name),
	    (unsigned long long)value);
}

struct pair {
	const struct corenet_node *a, *b;
};

static bool
unlinked(void *cls)
{
	const struct pair *p = cls;

	return !corenet_linked(p->a, p->b) && !corenet_linked(p->b, p->a);
}

static bool
either_linked(void *cls)
{
	return !unlinked(cls);
}

static void
wait_unlinked(const struct corenet_node *a, const struct corenet_node *b,
    int timeout_ms)
{
	struct pair p = { a, b };

	ck_assert_msg(corenet_run_until(net, unlinked, &p, timeout_ms),
	    "nodes %u and %u stay linked", a->index, b->index);
}

/* Both validated each other's addresses, and stay apart. */
static void
validated_apart(struct corenet_node *a, struct corenet_node *b)
{
	uint8_t buf[CORE_PEER_HELOS_MAX];
	size_t len;

	learn(a, b);
	/* a's PING carries its HELOs: b validates a in turn. */
	wait_stat(a, "core.validations", 1, LINK_MS);
	wait_stat(b, "core.validations", 1, LINK_MS);
	corenet_run_ms(net, 1000);
	ck_assert(!corenet_linked(a, b));
	ck_assert(!corenet_linked(b, a));
	ck_assert_uint_eq(corenet_stat(a, "core.kx_sent"), 0);
	ck_assert_uint_eq(corenet_stat(b, "core.kx_sent"), 0);
	/* What each validated is there to hand on. */
	ck_assert_int_eq(core_peer_helos(a->core, &b->id, buf, sizeof(buf),
			     &len),
	    0);
	ck_assert_int_eq(core_peer_helos(b->core, &a->id, buf, sizeof(buf),
			     &len),
	    0);
}

/* Loop 0: over UDP; 1: over TCP. */
START_TEST(test_manual_link_unlink)
{
	const char *transport = _i == 0 ? "udp" : "tcp";
	struct corenet_node *a, *b;

	net = corenet_new();
	a = corenet_add(net, transport, MANUAL);
	b = corenet_add(net, transport, MANUAL);
	validated_apart(a, b);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10),
	    -ENOTCONN);
	/* One side asks; the other takes the link. */
	ck_assert_int_eq(core_link(a->core, &b->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
	ck_assert_int_eq(core_link(a->core, &b->id), 0); /* linked already */
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10), 0);
	/* Dropped: at once here, by BYE there; refused from the call on. */
	ck_assert_int_eq(core_unlink(a->core, &b->id), 0);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10),
	    -ENOTCONN);
	wait_unlinked(a, b, 2000);
	ck_assert_uint_eq(corenet_stat(a, "core.unlinks"), 1);
	ck_assert_uint_eq(corenet_stat(b, "core.byes_in"), 1);
	/* Neither links again by itself. */
	corenet_run_ms(net, 2000);
	ck_assert(!corenet_linked(a, b));
	ck_assert(!corenet_linked(b, a));
	/* The other side may ask in turn: new keys, a new session. */
	ck_assert_int_eq(core_link(b->core, &a->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
	ck_assert_int_eq(corenet_send(b, a, CORE_CLASS_BULK, TYPE, 10), 0);
	wait_stat(a, "core.msg_in", corenet_stat(a, "core.msg_in") + 1, 2000);
	/* Unlinking twice, or a peer not linked, is no error. */
	ck_assert_int_eq(core_unlink(b->core, &a->id), 0);
	ck_assert_int_eq(core_unlink(b->core, &a->id), 0);
	wait_unlinked(a, b, 2000);
	ck_assert_int_eq(core_unlink(b->core, &a->id), 0);
	ck_assert_uint_eq(corenet_stat(b, "core.unlinks"), 1);
	ck_assert_uint_eq(corenet_stat(a, "core.byes_in"), 1);
}
END_TEST

/* Unlinks the sender of the message, from inside the core's call. */
static void
unlink_sender(struct corenet_node *n, const struct corenet_node *from,
    uint16_t type)
{
	(void)type;
	ck_assert_int_eq(core_unlink(n->core, &from->id), 0);
}

/* A layer may drop a link from its message handler, while the core and
 * the transport are still at work on the frame that brought it. */
START_TEST(test_unlink_from_handler)
{
	struct corenet_node *a, *b;

	net = corenet_new();
	a = corenet_add(net, _i == 0 ? "udp" : "tcp", MANUAL);
	b = corenet_add(net, _i == 0 ? "udp" : "tcp", MANUAL);
	corenet_introduce(a, b);
	corenet_wait_linked(a, b, LINK_MS);
	b->on_msg = unlink_sender;
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10), 0);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10), 0);
	wait_unlinked(a, b, 2000);
	ck_assert_uint_eq(corenet_stat(b, "core.unlinks"), 1);
	ck_assert_uint_eq(corenet_stat(a, "core.byes_in"), 1);
	b->on_msg = NULL;
	ck_assert_int_eq(core_link(a->core, &b->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
}
END_TEST

/* Under auto the same HELO links by itself, as before. */
START_TEST(test_auto_links_by_itself)
{
	struct corenet_node *a, *b;

	net = corenet_new();
	a = corenet_add(net, "udp", NULL);
	b = corenet_add(net, "udp", NULL);
	learn(a, b);
	corenet_wait_linked(a, b, LINK_MS);
}
END_TEST

/* The operator's URI (BOOTSTRAP, CONNECT) links under manual too. */
START_TEST(test_manual_operator_links)
{
	struct corenet_node *a, *b;

	net = corenet_new();
	a = corenet_add(net, "udp", MANUAL);
	b = corenet_add(net, "udp", MANUAL);
	corenet_introduce(a, b);
	corenet_wait_linked(a, b, LINK_MS);
}
END_TEST

/* a links to b and c. Under auto, b learns of c from a's gossip and
 * links to it; under manual, only a's own HELOs are gossiped. */
static void
gossip(bool manual)
{
	struct corenet_node *a, *b, *c;
	uint8_t buf[CORE_PEER_HELOS_MAX];
	size_t len;

	net = corenet_new();
	a = corenet_add(net, "udp", manual ? MANUAL : NULL);
	b = corenet_add(net, "udp", manual ? MANUAL : NULL);
	c = corenet_add(net, "udp", manual ? MANUAL : NULL);
	corenet_introduce(a, b);
	corenet_introduce(a, c);
	corenet_wait_linked(a, b, LINK_MS);
	corenet_wait_linked(a, c, LINK_MS);
	if (!manual) {
		corenet_wait_linked(b, c, LINK_MS);
		return;
	}
	corenet_run_ms(net, 1500);
	ck_assert(!corenet_linked(b, c));
	ck_assert_int_eq(core_peer_helos(b->core, &c->id, buf, sizeof(buf),
			     &len),
	    -ENOENT);
	/* a's HELO (if b did not know it) is still learnt from a itself. */
	ck_assert_uint_eq(corenet_stat(b, "core.gossip_ignored"), 0);
}

START_TEST(test_gossip_auto)
{
	gossip(false);
}
END_TEST

START_TEST(test_gossip_manual)
{
	gossip(true);
}
END_TEST

/* Others' HELOs gossiped to a manual core by an auto one are ignored. */
START_TEST(test_manual_ignores_gossip)
{
	struct corenet_node *a, *b, *c;

	net = corenet_new();
	a = corenet_add(net, "udp", NULL);
	b = corenet_add(net, "udp", MANUAL);
	c = corenet_add(net, "udp", NULL);
	corenet_introduce(a, c);
	corenet_wait_linked(a, c, LINK_MS);
	corenet_introduce(b, a);
	corenet_wait_linked(a, b, LINK_MS);
	wait_stat(b, "core.gossip_ignored", 1, LINK_MS);
	corenet_run_ms(net, 1000);
	ck_assert(!corenet_linked(b, c));
}
END_TEST

/* HELOs handed on and learnt: b hands a's validated HELO to c, which
 * learns it with b as the advertiser, validates and links (auto). */
START_TEST(test_helos_handed_on)
{
	struct corenet_node *a, *b, *c;
	uint8_t buf[CORE_PEER_HELOS_MAX], mine[CORE_PEER_HELOS_MAX];
	size_t len = 0, mlen, small;
	struct ferry_peer_id nobody;

	net = corenet_new();
	a = corenet_add(net, "udp", MANUAL);
	b = corenet_add(net, "udp", MANUAL);
	c = corenet_add(net, "udp", NULL);
	ck_assert_int_eq(core_peer_helos(b->core, &a->id, buf, sizeof(buf),
			     &len),
	    -ENOENT);
	validated_apart(a, b);
	ck_assert_int_eq(core_peer_helos(b->core, &a->id, buf, sizeof(buf),
			     &len),
	    0);
	/* What b hands on is what a signed. */
	mlen = own_helos(a, mine, sizeof(mine));
	ck_assert_uint_eq(len, mlen);
	ck_assert_mem_eq(buf, mine, len);
	small = len - 1;
	ck_assert_int_eq(core_peer_helos(b->core, &a->id, buf, small, &len),
	    -ENOSPC);
	ck_assert_uint_eq(len, mlen); /* untouched on failure */
	/* From b: c must have a link to b for b to vouch. */
	ck_assert_int_eq(core_learn_helo(c->core, &b->id, mine, mlen),
	    -ENOTCONN);
	corenet_introduce(c, b);
	corenet_wait_linked(b, c, LINK_MS);
	ck_assert_int_eq(core_learn_helo(c->core, &b->id, mine, mlen), 0);
	corenet_wait_linked(a, c, LINK_MS);
	/* Malformed lists teach nothing. */
	memset(&nobody, 0x33, sizeof(nobody));
	ck_assert_int_eq(core_learn_helo(c->core, NULL, mine, 0), -EBADMSG);
	ck_assert_int_eq(core_learn_helo(c->core, NULL, mine, mlen - 1),
	    -EBADMSG);
	ck_assert_int_eq(core_learn_helo(c->core, &nobody, mine, mlen),
	    -ENOTCONN);
	mine[mlen - 1] ^= 1; /* the signature */
	ck_assert_int_eq(core_learn_helo(c->core, NULL, mine, mlen), -EBADMSG);
	/* Our own HELOs passed back are taken and ignored. */
	mlen = own_helos(c, mine, sizeof(mine));
	ck_assert_int_eq(core_learn_helo(c->core, NULL, mine, mlen), 0);
}
END_TEST

/* Under auto, once a layer above claims the choice, the core behaves as
 * under manual: validated addresses are not linked, others' HELOs not
 * gossiped; the link asked for is the asker's. */
START_TEST(test_auto_claimed)
{
	struct corenet_node *a, *b, *c;
	struct core_peer_info pi;

	net = corenet_new();
	a = corenet_add(net, "udp", NULL);
	b = corenet_add(net, "udp", NULL);
	c = corenet_add(net, "udp", NULL);
	ck_assert_int_eq(core_links_claim(a->core), 0);
	ck_assert_int_eq(core_links_claim(b->core), 0);
	ck_assert_int_eq(core_links_claim(c->core), 0);
	validated_apart(a, b);
	ck_assert_int_eq(core_peer_info(a->core, &b->id, &pi), -ENOTCONN);
	ck_assert_int_eq(core_link(a->core, &b->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
	ck_assert_int_eq(core_peer_info(a->core, &b->id, &pi), 0);
	ck_assert_mem_eq(&pi.id, &b->id, sizeof(pi.id));
	ck_assert_str_eq(pi.transport, "udp");
	ck_assert_ptr_nonnull(strstr(pi.address, "127.0.0.1:"));
	ck_assert(pi.asked);
	ck_assert(!pi.pinned);
	ck_assert_int_eq(core_peer_info(b->core, &a->id, &pi), 0);
	ck_assert(!pi.asked); /* a asked, not b */
	/* c links to a by the operator's URI; a gossips only its own. */
	corenet_introduce(c, a);
	corenet_wait_linked(a, c, LINK_MS);
	corenet_run_ms(net, 1500);
	ck_assert(!corenet_linked(b, c));
	/* An unlinked peer has no info; unlinking ends the asking. */
	ck_assert_int_eq(core_unlink(a->core, &b->id), 0);
	ck_assert_int_eq(core_peer_info(a->core, &b->id, &pi), -ENOTCONN);
	wait_unlinked(a, b, 2000);
}
END_TEST

/* LINK_POLICY = core keeps the choice: the claim is refused and the core
 * links by itself, as before. */
START_TEST(test_core_keeps_choice)
{
	struct corenet_node *a, *b;

	net = corenet_new();
	a = corenet_add(net, "udp", CORE);
	b = corenet_add(net, "udp", CORE);
	log_max_level = -1; /* the refusal is noted */
	ck_assert_int_eq(core_links_claim(a->core), -EPERM);
	ck_assert_int_eq(core_links_claim(b->core), -EPERM);
	log_max_level = FERRY_LOG_NOTICE;
	learn(a, b);
	corenet_wait_linked(a, b, LINK_MS);
}
END_TEST

static bool
pinned(struct corenet_node *a, const struct corenet_node *b)
{
	struct core_peer_info pi;

	ck_assert_int_eq(core_peer_info(a->core, &b->id, &pi), 0);
	return pi.pinned;
}

struct pin_wait {
	struct corenet_node *a, *b;
};

static bool
unpinned(void *cls)
{
	struct pin_wait *w = cls;

	return !pinned(w->a, w->b) && !pinned(w->b, w->a);
}

/* A client's message pins the link on both sides for PIN_IDLE; the
 * DHT's do not. */
START_TEST(test_pins)
{
	struct corenet_node *a, *b;
	struct pin_wait w;
	uint64_t t0;

	net = corenet_new();
	a = corenet_add(net, "udp", MANUAL "PIN_IDLE = 2 s\n");
	b = corenet_add(net, "udp", MANUAL "PIN_IDLE = 2 s\n");
	validated_apart(a, b);
	ck_assert_int_eq(core_link(a->core, &b->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
	ck_assert(!pinned(a, b) && !pinned(b, a));
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_CONTROL, DHT_TYPE, 10),
	    0);
	wait_stat(b, "core.msg_in", 1, 2000);
	ck_assert(!pinned(a, b) && !pinned(b, a));
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, TYPE, 10), 0);
	t0 = corenet_stat(b, "core.msg_in");
	wait_stat(b, "core.msg_in", t0 + 1, 2000);
	ck_assert(pinned(a, b)); /* sent */
	ck_assert(pinned(b, a)); /* received */
	w.a = a;
	w.b = b;
	ck_assert(corenet_run_until(net, unpinned, &w, 4000));
}
END_TEST

START_TEST(test_link_errors)
{
	struct corenet_node *a, *b, *c;
	struct ferry_peer_id nobody;

	net = corenet_new();
	a = corenet_add(net, "udp", MANUAL "MAX_PEERS = 1\n");
	b = corenet_add(net, "udp", MANUAL);
	c = corenet_add(net, "udp", MANUAL);
	memset(&nobody, 0x44, sizeof(nobody));
	ck_assert_int_eq(core_link(a->core, &nobody), -ENOENT);
	ck_assert_int_eq(core_unlink(a->core, &nobody), -ENOENT);
	ck_assert_int_eq(core_link(a->core, &a->id), -EINVAL);
	learn(a, b);
	learn(a, c);
	wait_stat(a, "core.validations", 2, LINK_MS);
	ck_assert_int_eq(core_link(a->core, &b->id), 0);
	corenet_wait_linked(a, b, LINK_MS);
	/* MAX_PEERS holds for links asked for too. */
	ck_assert_int_eq(core_link(a->core, &c->id), -ENOSPC);
	ck_assert_uint_eq(corenet_stat(a, "core.link_refused"), 1);
	/* And for a peer a knows that asks for one: its KX is refused (it
	 * was taken, as only an unknown peer's was refused). */
	learn(c, a);
	wait_stat(c, "core.validations", 1, LINK_MS);
	ck_assert_int_eq(core_link(c->core, &a->id), 0);
	wait_stat(a, "core.kx_refused", 1, LINK_MS);
	ck_assert(!corenet_run_until(net, either_linked, &(struct pair){ a, c },
	    300));
	ck_assert_int_eq(core_unlink(a->core, &b->id), 0);
	wait_unlinked(a, b, 2000);
	ck_assert_int_eq(core_link(a->core, &c->id), 0);
	corenet_wait_linked(a, c, LINK_MS);
}
END_TEST

static Suite *
linkpolicy_suite(void)
{
	Suite *s = suite_create("linkpolicy");
	TCase *tc = tcase_create("manual");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_manual_link_unlink, 0, 2);
	tcase_add_loop_test(tc, test_unlink_from_handler, 0, 2);
	tcase_add_test(tc, test_manual_operator_links);
	tcase_add_test(tc, test_gossip_manual);
	tcase_add_test(tc, test_manual_ignores_gossip);
	tcase_add_test(tc, test_helos_handed_on);
	tcase_add_test(tc, test_link_errors);
	tcase_add_test(tc, test_pins);
	suite_add_tcase(s, tc);
	tc = tcase_create("auto");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_auto_links_by_itself);
	tcase_add_test(tc, test_gossip_auto);
	tcase_add_test(tc, test_auto_claimed);
	tcase_add_test(tc, test_core_keeps_choice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(linkpolicy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
