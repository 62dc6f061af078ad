/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Subscribers of the core's link and drain events (src/core/subs.c and
 * core_peer_subscribe / core_drain_subscribe in core.h): several at once,
 * leaving and joining from inside a callback, events raised during a
 * dispatch, the service leaving others hooked when it shuts down (on a
 * real core without transports, the service's socket in a scratch
 * directory), and handler ranges of several layers side by side.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>
#include <event2/event.h>

#include <ferry/proto.h>

#include "lib/cfg.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "core/core.h"
#include "core/core_cfg.h"
#include "core/core_int.h"
#include "core/subs.h"
#include "service/service.h"
#include "unit.h"

#define REC_MAX 32

/* One subscriber of the tests: what it heard, and what it does then. */
struct rec {
	struct core_sub sub;
	char name;                 /* its letter in the shared log */
	unsigned calls;            /* events it heard */
	bool last_up;              /* of the last peer event */
	struct ferry_peer_id last; /* its peer */
	bool leave_self;           /* unsubscribes in its callback */
	bool free_self;            /* ... and frees itself (heap) */
	struct core_sub *kick;     /* unsubscribes this one then */
	struct rec *join;          /* subscribes this one then (peer) */
	struct subs *list;         /* that join's list */
	bool raise_down;           /* on "up", raises "down" for the peer */
};

static char order[REC_MAX + 1]; /* letters of the calls, in order */
static size_t n_order;

static void
order_add(char c)
{
	if (n_order < REC_MAX)
		order[n_order++] = c;
	order[n_order] = '\0';
}

static void
order_reset(void)
{
	n_order = 0;
	order[0] = '\0';
}

static void rec_on_peer(void *cls, const struct ferry_peer_id *peer, bool up);

static void
rec_act(struct rec *r)
{
	if (r->kick != NULL)
		core_unsubscribe(r->kick);
	if (r->join != NULL)
		ck_assert_int_eq(subs_add(r->list, &r->join->sub,
		                     (union core_sub_fn){ .peer = rec_on_peer },
		                     r->join),
		    0);
	if (r->leave_self)
		core_unsubscribe(&r->sub);
	if (r->free_self)
		free(r);
}

static void
rec_on_peer(void *cls, const struct ferry_peer_id *peer, bool up)
{
	struct rec *r = cls;

	order_add(up ? r->name : (char)(r->name - 'a' + 'A'));
	r->calls++;
	r->last = *peer;
	r->last_up = up;
	if (up && r->raise_down && r->sub.list != NULL) {
		r->raise_down = false;
		subs_emit(r->sub.list, peer, false, CORE_CLASS_BULK);
	}
	rec_act(r);
}

static void
rec_on_drain(void *cls, const struct ferry_peer_id *peer,
    enum core_class qclass)
{
	struct rec *r = cls;

	ck_assert_int_eq(qclass, CORE_CLASS_BULK);
	order_add(r->name);
	r->calls++;
	r->last = *peer;
}

static void
rec_init(struct rec *r, char name)
{
	memset(r, 0, sizeof(*r));
	r->name = name;
}

static void
rec_join(struct subs *l, struct rec *r)
{
	union core_sub_fn fn;

	if (l->kind == SUBS_PEER)
		fn.peer = rec_on_peer;
	else
		fn.drain = rec_on_drain;
	ck_assert_int_eq(subs_add(l, &r->sub, fn, r), 0);
}

static struct ferry_peer_id
peer_of(uint8_t b)
{
	struct ferry_peer_id id;

	memset(&id, b, sizeof(id));
	return id;
}

/* --- the lists on their own -------------------------------------------- */

START_TEST(test_two_subscribers)
{
	struct subs l;
	struct rec a, b;
	struct ferry_peer_id p = peer_of(7);

	order_reset();
	subs_init(&l, SUBS_PEER);
	rec_init(&a, 'a');
	rec_init(&b, 'b');
	rec_join(&l, &a);
	rec_join(&l, &b);
	ck_assert_uint_eq(subs_count(&l), 2);
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	subs_emit(&l, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abAB");
	ck_assert_mem_eq(&a.last, &p, sizeof(p));
	ck_assert_mem_eq(&b.last, &p, sizeof(p));
	/* One leaving does not unhook the other. */
	core_unsubscribe(&a.sub);
	ck_assert_ptr_null(a.sub.list);
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abABb");
	ck_assert_uint_eq(a.calls, 2);
	ck_assert_uint_eq(b.calls, 3);
	subs_done(&l);
	ck_assert_ptr_null(b.sub.list);
}
END_TEST

START_TEST(test_leave_in_own_callback)
{
	struct subs l;
	struct rec *a = malloc(sizeof(*a)), b, c;
	struct ferry_peer_id p = peer_of(1);

	ck_assert_ptr_nonnull(a);
	order_reset();
	subs_init(&l, SUBS_PEER);
	rec_init(a, 'a');
	rec_init(&b, 'b');
	rec_init(&c, 'c');
	/* b leaves in its callback; a, on the heap, leaves and frees
	 * itself (valgrind and ASan watch the list not touch it again). */
	b.leave_self = true;
	a->leave_self = true;
	a->free_self = true;
	rec_join(&l, a);
	rec_join(&l, &b);
	rec_join(&l, &c);
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abc");
	ck_assert_uint_eq(subs_count(&l), 1);
	subs_emit(&l, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abcC");
	ck_assert_uint_eq(b.calls, 1);
	ck_assert_uint_eq(c.calls, 2);
	subs_done(&l);
}
END_TEST

START_TEST(test_kick_other_in_callback)
{
	struct subs l;
	struct rec a, b, c;
	struct ferry_peer_id p = peer_of(2);

	order_reset();
	subs_init(&l, SUBS_PEER);
	rec_init(&a, 'a');
	rec_init(&b, 'b');
	rec_init(&c, 'c');
	/* a makes b, the very next node, leave: b is not called, c is. */
	a.kick = &b.sub;
	rec_join(&l, &a);
	rec_join(&l, &b);
	rec_join(&l, &c);
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "ac");
	ck_assert_uint_eq(b.calls, 0);
	/* And c makes a, already called, leave: the rest goes on. */
	a.kick = NULL;
	c.kick = &a.sub;
	subs_emit(&l, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "acAC");
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "acACc");
	subs_done(&l);
}
END_TEST

START_TEST(test_join_in_callback)
{
	struct subs l;
	struct rec a, b, c;
	struct ferry_peer_id p = peer_of(3);

	order_reset();
	subs_init(&l, SUBS_PEER);
	rec_init(&a, 'a');
	rec_init(&b, 'b');
	rec_init(&c, 'c');
	rec_join(&l, &a);
	rec_join(&l, &c);
	/* a brings b in behind c, where the walk still goes: b hears from
	 * the next event on. */
	a.join = &b;
	a.list = &l;
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "ac");
	a.join = NULL;
	subs_emit(&l, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "acACB");
	subs_done(&l);
}
END_TEST

START_TEST(test_event_during_dispatch)
{
	struct subs l;
	struct rec a, b, c;
	struct ferry_peer_id p = peer_of(4);

	order_reset();
	subs_init(&l, SUBS_PEER);
	rec_init(&a, 'a');
	rec_init(&b, 'b');
	rec_init(&c, 'c');
	/* a's callback takes the link down again (as a layer that unlinks
	 * a peer it does not want might): b and c still hear "up" first. */
	a.raise_down = true;
	rec_join(&l, &a);
	rec_join(&l, &b);
	rec_join(&l, &c);
	subs_emit(&l, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abcABC");
	ck_assert(!b.last_up);
	ck_assert(!c.last_up);
	subs_done(&l);
}
END_TEST

START_TEST(test_subscribe_rules)
{
	struct subs l, m;
	struct rec a;
	struct ferry_peer_id p = peer_of(5);

	order_reset();
	subs_init(&l, SUBS_DRAIN);
	subs_init(&m, SUBS_DRAIN);
	rec_init(&a, 'a');
	rec_join(&l, &a);
	/* Twice, in this list or another: refused, left as it was. */
	ck_assert_int_eq(subs_add(&l, &a.sub,
	                     (union core_sub_fn){ .drain = rec_on_drain }, &a),
	    -EALREADY);
	ck_assert_int_eq(subs_add(&m, &a.sub,
	                     (union core_sub_fn){ .drain = rec_on_drain }, &a),
	    -EALREADY);
	ck_assert_ptr_eq(a.sub.list, &l);
	subs_emit(&l, &p, false, CORE_CLASS_BULK);
	subs_emit(&m, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "a");
	/* Leaving twice is harmless; so is leaving after the list is done. */
	core_unsubscribe(&a.sub);
	core_unsubscribe(&a.sub);
	rec_join(&m, &a);
	subs_done(&m);
	ck_assert_ptr_null(a.sub.list);
	core_unsubscribe(&a.sub);
	subs_done(&l);
}
END_TEST

/* --- on a core, with the service ---------------------------------------- */

struct fixture {
	char dir[256];
	struct event_base *base;
	struct cfg *cfg;
	struct stats *stats;
	struct core *core;
	struct unit_log log;
};

static struct fixture fx;

static void
core_setup(void)
{
	char state[300];

	memset(&fx, 0, sizeof(fx));
	unit_tmpdir(fx.dir, sizeof(fx.dir));
	unit_log_capture(&fx.log, FERRY_LOG_DEBUG);
	fx.base = event_base_new();
	fx.cfg = cfg_new();
	fx.stats = stats_new();
	ck_assert_ptr_nonnull(fx.base);
	ck_assert_ptr_nonnull(fx.cfg);
	ck_assert_ptr_nonnull(fx.stats);
	ck_assert_int_eq(cfg_add_schema(fx.cfg, core_cfg_keys), 0);
	ck_assert_int_eq(cfg_add_schema(fx.cfg, service_cfg_keys), 0);
	/* No transports: nothing is opened but the service's socket. */
	ck_assert_int_eq(cfg_set(fx.cfg, "core", "TRANSPORTS", ""), 0);
	(void)snprintf(state, sizeof(state), "%s/state", fx.dir);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(core_new(fx.base, fx.cfg, fx.stats, state, &fx.core),
	    0);
}

static void
core_teardown(void)
{
	core_free(fx.core);
	stats_free(fx.stats);
	cfg_free(fx.cfg);
	event_base_free(fx.base);
	unit_log_release();
	unit_rmtree(fx.dir);
}

START_TEST(test_core_two_layers)
{
	struct rec a, b, da, db;
	struct ferry_peer_id p = peer_of(9);

	order_reset();
	rec_init(&a, 'a');
	rec_init(&b, 'b');
	rec_init(&da, 'x');
	rec_init(&db, 'y');
	ck_assert_int_eq(core_peer_subscribe(fx.core, &a.sub, rec_on_peer, &a),
	    0);
	ck_assert_int_eq(core_peer_subscribe(fx.core, &b.sub, rec_on_peer, &b),
	    0);
	ck_assert_int_eq(core_drain_subscribe(fx.core, &da.sub, rec_on_drain,
	                     &da),
	    0);
	ck_assert_int_eq(core_drain_subscribe(fx.core, &db.sub, rec_on_drain,
	                     &db),
	    0);
	ck_assert_int_eq(core_peer_subscribe(fx.core, &a.sub, rec_on_peer, &a),
	    -EALREADY);
	ck_assert_int_eq(core_drain_subscribe(fx.core, &a.sub, rec_on_drain,
	                     &a),
	    -EALREADY);
	ck_assert_int_eq(core_peer_subscribe(fx.core, &b.sub, NULL, &b),
	    -EINVAL);
	/* What peer.c and tx.c raise. */
	subs_emit(&fx.core->peer_subs, &p, true, CORE_CLASS_BULK);
	subs_emit(&fx.core->drain_subs, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abxy");
	/* a leaves from inside its callback; b stays. */
	a.leave_self = true;
	subs_emit(&fx.core->peer_subs, &p, false, CORE_CLASS_BULK);
	subs_emit(&fx.core->peer_subs, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abxyABb");
	core_unsubscribe(&da.sub);
	subs_emit(&fx.core->drain_subs, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "abxyABby");
	/* core_free ends what is left: leaving afterwards is harmless. */
	core_free(fx.core);
	fx.core = NULL;
	ck_assert_ptr_null(b.sub.list);
	ck_assert_ptr_null(db.sub.list);
	core_unsubscribe(&b.sub);
	core_unsubscribe(&db.sub);
}
END_TEST

#ifdef FERRY_HAVE_SERVICE
static void
no_shutdown(void *cls)
{
	(void)cls;
}

START_TEST(test_service_leaves_others_hooked)
{
	struct rec peer_sub, drain_sub;
	struct ferry_peer_id p = peer_of(11);
	struct service *svc = NULL;
	char run[300];

	order_reset();
	rec_init(&peer_sub, 'p');
	rec_init(&drain_sub, 'd');
	/* Another layer (a DHT, say) joins before the service and after. */
	ck_assert_int_eq(core_drain_subscribe(fx.core, &drain_sub.sub,
	                     rec_on_drain, &drain_sub),
	    0);
	(void)snprintf(run, sizeof(run), "%s/run", fx.dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	ck_assert_int_eq(service_new(fx.base, fx.cfg, fx.stats, fx.core, NULL, NULL,
	                     run, no_shutdown, NULL, &svc),
	    0);
	ck_assert_int_eq(core_peer_subscribe(fx.core, &peer_sub.sub,
	                     rec_on_peer, &peer_sub),
	    0);
	ck_assert_uint_eq(subs_count(&fx.core->drain_subs), 2);
	subs_emit(&fx.core->drain_subs, &p, false, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "d");
	service_free(svc);
	/* Only the service's own subscription went. */
	ck_assert_uint_eq(subs_count(&fx.core->drain_subs), 1);
	ck_assert_ptr_eq(drain_sub.sub.list, &fx.core->drain_subs);
	ck_assert_ptr_eq(peer_sub.sub.list, &fx.core->peer_subs);
	subs_emit(&fx.core->drain_subs, &p, false, CORE_CLASS_BULK);
	subs_emit(&fx.core->peer_subs, &p, true, CORE_CLASS_BULK);
	ck_assert_str_eq(order, "ddp");
	ck_assert_uint_eq(drain_sub.calls, 2);
	core_unsubscribe(&drain_sub.sub);
	core_unsubscribe(&peer_sub.sub);
}
END_TEST
#endif

static void
handler_a(void *cls, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	(void)cls;
	(void)peer;
	(void)type;
	(void)data;
	(void)len;
}

static void
handler_b(void *cls, const struct ferry_peer_id *peer, uint16_t type,
    const void *data, size_t len)
{
	handler_a(cls, peer, type, data, len);
}

START_TEST(test_handler_ranges)
{
	const uint16_t dht_lo = FERRY_MSG_DHT_MIN;
	const uint16_t dht_hi = FERRY_MSG_STORAGE_MIN - 1;
	const uint16_t st_lo = FERRY_MSG_STORAGE_MIN;
	const uint16_t st_hi = FERRY_APP_TYPE_MIN - 1;
	int a = 1, b = 2, c = 3;

	/* Three layers side by side, as the DHT, storage and service. */
	ck_assert_int_eq(core_handler_set(fx.core, FERRY_APP_TYPE_MIN, 0xffff,
	                     handler_a, &a),
	    0);
	ck_assert_int_eq(core_handler_set(fx.core, dht_lo, dht_hi, handler_b,
	                     &b),
	    0);
	ck_assert_int_eq(core_handler_set(fx.core, st_lo, st_hi, handler_a, &c),
	    0);
	ck_assert_ptr_eq(core_handler_find(fx.core, dht_lo)->cls, &b);
	ck_assert_ptr_eq(core_handler_find(fx.core, dht_hi)->cls, &b);
	ck_assert_ptr_eq(core_handler_find(fx.core, st_lo)->cls, &c);
	ck_assert_ptr_eq(core_handler_find(fx.core, 0xffff)->cls, &a);
	ck_assert_ptr_null(core_handler_find(fx.core, dht_lo - 1));
	/* Overlaps, at either end or around, are refused. */
	ck_assert_int_eq(core_handler_set(fx.core, dht_hi, st_lo, handler_b,
	                     &b),
	    -EEXIST);
	ck_assert_int_eq(core_handler_set(fx.core, 0x1000, 0x1000, handler_b,
	                     &b),
	    -EEXIST);
	/* The core's own types, and nonsense, are nobody's to take. */
	ck_assert_int_eq(core_handler_set(fx.core, 0, dht_lo - 1, handler_b,
	                     &b),
	    -EINVAL);
	ck_assert_int_eq(core_handler_set(fx.core, FERRY_MSG_ACK, FERRY_MSG_ACK,
	                     handler_b, &b),
	    -EINVAL);
	ck_assert_int_eq(core_handler_set(fx.core, st_hi, st_lo, handler_b, &b),
	    -EINVAL);
	ck_assert_int_eq(core_handler_set(fx.core, 0x0150, 0x0150, NULL, &b),
	    -EINVAL);
	/* One layer leaving leaves the others. */
	core_handler_unset(fx.core, dht_lo, dht_hi);
	ck_assert_ptr_null(core_handler_find(fx.core, dht_lo));
	ck_assert_ptr_eq(core_handler_find(fx.core, st_hi)->cls, &c);
	ck_assert_ptr_eq(core_handler_find(fx.core, FERRY_APP_TYPE_MIN)->cls,
	    &a);
	core_handler_unset(fx.core, st_lo, st_hi);
	core_handler_unset(fx.core, FERRY_APP_TYPE_MIN, 0xffff);
}
END_TEST

static Suite *
core_subs_suite(void)
{
	Suite *s = suite_create("core_subs");
	TCase *tc = tcase_create("lists");
	TCase *tcc = tcase_create("core");

	tcase_add_test(tc, test_two_subscribers);
	tcase_add_test(tc, test_leave_in_own_callback);
	tcase_add_test(tc, test_kick_other_in_callback);
	tcase_add_test(tc, test_join_in_callback);
	tcase_add_test(tc, test_event_during_dispatch);
	tcase_add_test(tc, test_subscribe_rules);
	suite_add_tcase(s, tc);
	tcase_add_checked_fixture(tcc, core_setup, core_teardown);
	tcase_add_test(tcc, test_core_two_layers);
#ifdef FERRY_HAVE_SERVICE
	tcase_add_test(tcc, test_service_leaves_others_hooked);
#endif
	tcase_add_test(tcc, test_handler_ranges);
	suite_add_tcase(s, tcc);
	return s;
}

int
main(void)
{
	return unit_run(core_subs_suite());
}
