/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Per-layer send classes (issue 12, seam 3), on cores in one process over
 * real UDP and TCP (tests/lib corenet): with a peer's bulk class full, a
 * control message is still accepted and is the first thing the peer
 * receives; sent while bulk data streams, it overtakes all the queued
 * data and waits only for what is already in flight; each class refuses
 * on its own bound and its drain notification names it; the queue depth
 * and smoothed RTT accessors.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "corenet.h"

#define LINK_MS 10000
#define MSG	1000   /* bytes of a bulk message */
#define BULK	0x0400 /* its type */
#define CTL	0x0100 /* the type of control messages (a DHT's range) */

static struct corenet *net;
static struct corenet_node *a, *b;

/* a and b linked over transports. */
static void
pair(const char *transports, const char *extra)
{
	net = corenet_new();
	a = corenet_add(net, transports, extra);
	b = corenet_add(net, transports, extra);
	b->rx_type = CTL;
	corenet_introduce(a, b);
	corenet_wait_linked(a, b, LINK_MS);
}

static void
teardown(void)
{
	corenet_free(net);
	net = NULL;
}

/* Queues bulk messages from a to b until the class refuses; the loop does
 * not run, so nothing leaves meanwhile. Returns how many. */
static uint64_t
fill_bulk(void)
{
	uint64_t n = 0;
	int r;

	while ((r = corenet_send(a, b, CORE_CLASS_BULK, BULK, MSG)) == 0)
		n++;
	ck_assert_int_eq(r, -EAGAIN);
	return n;
}

struct want {
	const uint64_t *have;
	uint64_t n;
};

static bool
reached(void *cls)
{
	const struct want *w = cls;

	return *w->have >= w->n;
}

static void
wait_for(const uint64_t *have, uint64_t n, int timeout_ms, const char *what)
{
	struct want w = { have, n };

	ck_assert_msg(corenet_run_until(net, reached, &w, timeout_ms),
	    "%s: %llu of %llu", what, (unsigned long long)*have,
	    (unsigned long long)n);
}

/* A full bulk class: the control message is taken and comes first. */
static void
control_beats_full_bulk(const char *transports)
{
	uint64_t queued, depth = 0, drains;

	pair(transports, "[core]\nQUEUE_BYTES = 4 MiB\n");
	queued = fill_bulk();
	ck_assert_uint_gt(queued, 3000);
	ck_assert_int_eq(core_peer_queue_bytes(a->core, &b->id,
			     CORE_CLASS_BULK, &depth),
	    0);
	ck_assert_uint_eq(depth, queued * MSG);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_CONTROL, CTL, 40), 0);
	ck_assert_int_eq(core_peer_queue_bytes(a->core, &b->id,
			     CORE_CLASS_CONTROL, &depth),
	    0);
	ck_assert_uint_eq(depth, 40);
	drains = a->drains[CORE_CLASS_BULK];
	wait_for(&b->rx_type_from[a->index], 1, 5000, "control message");
	/* Nothing of the bulk data came before it. */
	ck_assert_uint_eq(b->rx_when_type, 1);
	wait_for(&b->rx_from[a->index], queued + 1, 30000, "bulk data");
	ck_assert_uint_gt(a->drains[CORE_CLASS_BULK], drains);
	ck_assert_uint_eq(a->drains[CORE_CLASS_CONTROL], 0);
	ck_assert_int_eq(core_peer_queue_bytes(a->core, &b->id,
			     CORE_CLASS_BULK, &depth),
	    0);
	ck_assert_uint_eq(depth, 0);
}

START_TEST(test_control_beats_full_bulk_udp)
{
	control_beats_full_bulk("udp");
}
END_TEST

START_TEST(test_control_beats_full_bulk_tcp)
{
	control_beats_full_bulk("tcp");
}
END_TEST

/*
 * Bulk data streams, its class kept full; a control message overtakes
 * the megabytes queued and waits only for what is in flight: at most the
 * receive window (256 KiB) and a frame, against 4 MiB queued.
 */
START_TEST(test_control_mid_stream)
{
	const uint64_t in_flight = 256 * 1024 / MSG + 2;
	uint64_t queued, before;

	pair("udp", "[core]\nQUEUE_BYTES = 4 MiB\nRECV_WINDOW = 256 KiB\n");
	queued = fill_bulk();
	corenet_run_ms(net, 30);
	ck_assert_uint_gt(b->rx_from[a->index], 0);
	/* Top the class up again: the request joins a full queue. */
	queued += fill_bulk();
	before = b->rx_from[a->index];
	ck_assert_uint_lt(before + in_flight, queued);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_CONTROL, CTL, 40), 0);
	wait_for(&b->rx_type_from[a->index], 1, 5000, "control message");
	ck_assert_msg(b->rx_when_type - 1 - before <= in_flight,
	    "%llu bulk messages came between",
	    (unsigned long long)(b->rx_when_type - 1 - before));
	wait_for(&b->rx_from[a->index], queued + 1, 30000, "bulk data");
}
END_TEST

/* Each class refuses on its own bound and says when it has room. */
START_TEST(test_bounds_and_drains)
{
	uint64_t nc = 0, nb;
	int r;

	pair("udp", "[core]\nQUEUE_BYTES = 64 KiB\n"
		    "CONTROL_QUEUE_BYTES = 16 KiB\n");
	while ((r = corenet_send(a, b, CORE_CLASS_CONTROL, CTL, 200)) == 0)
		nc++;
	ck_assert_int_eq(r, -EAGAIN);
	ck_assert_uint_lt(nc * 200, 16 * 1024);
	ck_assert_uint_gt(nc * 200, 12 * 1024);
	/* The control class is full; bulk takes its own 64 KiB. */
	nb = fill_bulk();
	ck_assert_uint_gt(nb * MSG, 48 * 1024);
	ck_assert_uint_ge(corenet_stat(a, "core.send_queue_full"), 2);
	wait_for(&a->drains[CORE_CLASS_CONTROL], 1, 5000, "control drain");
	wait_for(&a->drains[CORE_CLASS_BULK], 1, 5000, "bulk drain");
	wait_for(&b->rx_from[a->index], nc + nb, 10000, "everything");
	ck_assert_uint_eq(b->rx_type_from[a->index], nc);
	/* Bad arguments. */
	ck_assert_int_eq(core_send_class(a->core, &b->id, CORE_NCLASS, CTL,
			     "x", 1),
	    -EINVAL);
	ck_assert_int_eq(core_send_class(a->core, &b->id, CORE_CLASS_CONTROL,
			     FERRY_MSG_DHT_MIN - 1, "x", 1),
	    -EINVAL);
}
END_TEST

/* The smoothed RTT comes from ACKs: over UDP once some arrived; TCP has
 * none. Neither accessor knows a peer without a link. */
START_TEST(test_srtt)
{
	struct ferry_peer_id nobody;
	uint64_t srtt = 0, depth;

	pair("udp", NULL);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, BULK,
				     MSG),
		    0);
	wait_for(&b->rx_from[a->index], 20, 5000, "messages");
	corenet_run_ms(net, 50);
	ck_assert_int_eq(core_peer_srtt_us(a->core, &b->id, &srtt), 0);
	ck_assert_uint_gt(srtt, 0);
	ck_assert_uint_lt(srtt, 1000 * 1000);
	memset(&nobody, 0x5a, sizeof(nobody));
	ck_assert_int_eq(core_peer_srtt_us(a->core, &nobody, &srtt),
	    -ENOTCONN);
	ck_assert_int_eq(core_peer_queue_bytes(a->core, &nobody,
			     CORE_CLASS_BULK, &depth),
	    -ENOTCONN);
	ck_assert_int_eq(core_peer_queue_bytes(a->core, &b->id, CORE_NCLASS,
			     &depth),
	    -EINVAL);
	corenet_free(net);
	pair("tcp", NULL);
	ck_assert_int_eq(corenet_send(a, b, CORE_CLASS_BULK, BULK, MSG), 0);
	wait_for(&b->rx_from[a->index], 1, 5000, "message");
	ck_assert_int_eq(core_peer_srtt_us(a->core, &b->id, &srtt), -ENODATA);
}
END_TEST

static Suite *
classes_suite(void)
{
	Suite *s = suite_create("classes");
	TCase *tc = tcase_create("classes");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_control_beats_full_bulk_udp);
	tcase_add_test(tc, test_control_beats_full_bulk_tcp);
	tcase_add_test(tc, test_control_mid_stream);
	tcase_add_test(tc, test_bounds_and_drains);
	tcase_add_test(tc, test_srtt);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(classes_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
