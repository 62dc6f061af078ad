/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Who chooses links, between real ferryd processes each on its own
 * 127.0.0.N (issue 12: "The DHT, not the core, decides which peers stay
 * linked"; "the messaging behaviour of issue 3 stays the default when no
 * DHT is loaded"). With the DHT on and the default [core] LINK_POLICY,
 * on a network larger than its buckets (K = 1, 12 daemons): the tables
 * fill, the network is no full mesh; a link the operator asked for (ferry
 * connect) to a peer outside the table is dropped once its pin is over
 * and it is idle, the peer hearing of it, while one a client keeps
 * sending over stays; blocks are put and got. With the
 * DHT off: every daemon links to every other from one bootstrap HELO
 * (gossip), as before. With LINK_POLICY = core and the DHT on: the same
 * full mesh, and the DHT drops nothing. Daemons killed and started again
 * are linked to every other within 5 s. The timings are the test's
 * ([core] PIN_IDLE 4 s, [dht] LINK_GRACE 2 s, no SPARE_LINKS).
 */
/* ctest: TIMEOUT=300 RUN_SERIAL=1 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "harness.h"
#include "mesh.h"

#define N_DHT   12
#define N_SMALL 6
#define K       1
#define WAIT_MS 60000
/* All daemons share 127.0.0.0/24: no bound per network here. */
#define DHT_CFG                                                     \
	"[core]\nPIN_IDLE = 4 s\n"                                  \
	"[dht]\nK = 1\nPER_NETWORK = 0\nSPARE_LINKS = 0\n"          \
	"LINK_GRACE = 2 s\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"

static struct harness *h;
static struct harness_daemon *d[N_DHT];
static int n_d;

static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-links", &h), 0);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
	n_d = 0;
}

static struct ferry_client *
client_of(struct harness_daemon *dd)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(dd, &c), 0);
	return c;
}

/* Leading bits d[i] and d[j] share: the bucket each is in for the other. */
static unsigned
prefix_of(int i, int j)
{
	unsigned p = 0;

	while (p < 256 &&
	    !((d[i]->id.bytes[p / 8] ^ d[j]->id.bytes[p / 8]) &
	        (0x80 >> (p % 8))))
		p++;
	return p;
}

/* Peers missing from d[i]'s table: over its buckets, min(K, candidates)
 * less what the bucket holds. */
static unsigned
table_missing(int i)
{
	struct ferry_client *c = client_of(d[i]);
	unsigned cand[257] = { 0 }, missing = 0;
	struct ferry_dht_status *st;

	for (int j = 0; j < n_d; j++)
		if (j != i)
			cand[prefix_of(i, j)]++;
	ck_assert_int_eq(ferry_dht_status(c, &st), 0);
	ferry_client_close(c);
	for (unsigned p = 0; p < 257; p++) {
		unsigned want = cand[p] < K ? cand[p] : K, have = 0;

		for (size_t b = 0; b < st->n_buckets; b++)
			if (st->buckets[b].prefix == p)
				have = st->buckets[b].entries;
		if (have < want)
			missing += want - have;
	}
	ferry_dht_status_free(st);
	return missing;
}

static bool
linked(int i, int j)
{
	char buf[32];

	return mesh_peer_transport(d[i], &d[j]->id, buf, sizeof(buf))[0] !=
	    '\0';
}

static void
fail_with_logs(const char *what, int i)
{
	harness_dump_logs(h);
	ck_abort_msg("d%d: %s", i, what);
}

/* Every table full as far as the daemons allow. */
static void
wait_tables(void)
{
	uint64_t end = harness_now_ms() + WAIT_MS;

	for (int i = 0; i < n_d; i++) {
		while (table_missing(i) > 0) {
			if (harness_now_ms() > end)
				fail_with_logs("its table does not fill", i);
			harness_sleep_ms(100);
		}
	}
}

static int
count_links(void)
{
	size_t n = 0;

	for (int i = 0; i < n_d; i++)
		n += mesh_peer_count(d[i]);
	return (int)(n / 2);
}

/* p, and two daemons q[0], q[1] in p's bucket 0 that are not linked to
 * it: neither is in the other's table (each keeps a link to every peer
 * of its table), and both tables' buckets are full there. */
static bool
pick_unneeded(int *ret_p, int *ret_q)
{
	for (int p = 1; p < n_d; p++) {
		int n = 0;

		for (int q = 1; q < n_d && n < 2; q++)
			if (q != p && prefix_of(p, q) == 0 && !linked(p, q))
				ret_q[n++] = q;
		if (n == 2) {
			*ret_p = p;
			return true;
		}
	}
	return false;
}

static void
connect_to(int from, int to)
{
	struct ferry_client *c = client_of(d[from]);
	char *uri = mesh_hello(d[to]);

	ck_assert_int_eq(ferry_connect_uri(c, uri), 0);
	free(uri);
	ferry_client_close(c);
}

static void
wait_link(int i, int j)
{
	uint64_t end = harness_now_ms() + 10000;

	while (!linked(i, j)) {
		if (harness_now_ms() > end)
			fail_with_logs("no link after ferry connect", i);
		harness_sleep_ms(50);
	}
}

static void
put_get(int from, int to)
{
	struct ferry_client *c = client_of(d[from]);
	struct ferry_dht_receipt *r;
	struct ferry_dht_key key;
	uint8_t data[1000], *got;
	size_t n, len;

	randombytes_buf(data, sizeof(data));
	ck_assert_int_eq(ferry_dht_put(c, data, sizeof(data), 0, 0, &key, &r,
	                     &n),
	    0);
	ferry_client_close(c);
	free(r);
	c = client_of(d[to]);
	ck_assert_int_eq(ferry_dht_get(c, &key, &got, &len), 0);
	ferry_client_close(c);
	ck_assert_uint_eq(len, sizeof(data));
	ck_assert_mem_eq(got, data, len);
	free(got);
}

START_TEST(test_dht_chooses)
{
	uint64_t dropped, byes, end;
	int p, q[2], links, full = 0;
	bool gone = false;

	n_d = N_DHT;
	mesh_start(h, d, N_DHT, "udp", DHT_CFG);
	wait_tables();
	links = count_links();
	fprintf(stderr, "test_dht_links: %d links of %d possible\n", links,
	    N_DHT * (N_DHT - 1) / 2);
	ck_assert_int_lt(links, N_DHT * (N_DHT - 1) / 2);
	/* d0, everyone's way in, stays in every table; most others are
	 * linked to a part of the network only. */
	for (int i = 1; i < n_d; i++)
		full += mesh_peer_count(d[i]) == N_DHT - 1;
	ck_assert_int_lt(full, (N_DHT - 1) / 2);
	ck_assert_msg(pick_unneeded(&p, q),
	    "every daemon is linked to every other of its bucket 0");
	/* The operator links p to q[0] and q[1]; a client of p sends to
	 * q[1] twice a second. Once q[0]'s pin is over (PIN_IDLE) and its
	 * link idle (LINK_GRACE), p drops it, telling q[0]. */
	dropped = mesh_stat(d[p], "dht.links_dropped");
	byes = mesh_stat(d[q[0]], "core.byes_in");
	connect_to(p, q[0]);
	connect_to(p, q[1]);
	wait_link(p, q[0]);
	wait_link(p, q[1]);
	end = harness_now_ms() + 16000;
	while (harness_now_ms() < end) {
		mesh_send(d[p], d[q[1]], "x", 1);
		if (!gone && !linked(p, q[0])) {
			gone = true;
			end = harness_now_ms() + 4000; /* q[1] stays after */
		}
		harness_sleep_ms(500);
	}
	ck_assert_msg(gone, "d%d keeps its link to d%d after its pin", p,
	    q[0]);
	ck_assert_uint_gt(mesh_stat(d[p], "dht.links_dropped"), dropped);
	ck_assert_uint_gt(mesh_stat(d[q[0]], "core.byes_in"), byes);
	ck_assert(linked(p, q[1]));
	/* The DHT works over what is left. */
	put_get(1, N_DHT - 1);
	put_get(N_DHT - 1, 2);
}
END_TEST

/* Every daemon linked to every other, from one bootstrap HELO. */
static void
wait_full_mesh(void)
{
	for (int i = 0; i < n_d; i++)
		mesh_wait_peers(h, d[i], (size_t)n_d - 1, WAIT_MS);
}

/* Without the DHT, issue 3's behaviour: links to every validated peer,
 * HELOs gossiped. */
START_TEST(test_no_dht_full_mesh)
{
	n_d = N_SMALL;
	mesh_start(h, d, N_SMALL, "udp", "[dht]\nENABLE = no\n");
	wait_full_mesh();
	for (int i = 0; i < n_d; i++)
		ck_assert_uint_eq(mesh_stat(d[i], "core.gossip_ignored"), 0);
}
END_TEST

/* LINK_POLICY = core with the DHT: the core's full mesh, and the DHT,
 * whose buckets (K = 1) need fewer, drops nothing. */
START_TEST(test_core_policy_keeps_mesh)
{
	n_d = N_SMALL;
	mesh_start(h, d, N_SMALL, "udp",
	    DHT_CFG "[core]\nLINK_POLICY = core\n");
	wait_full_mesh();
	harness_sleep_ms(5000);
	for (int i = 0; i < n_d; i++) {
		ck_assert_uint_eq(mesh_peer_count(d[i]), N_SMALL - 1);
		ck_assert_uint_eq(mesh_stat(d[i], "dht.links_dropped"), 0);
		ck_assert_uint_eq(mesh_stat(d[i], "core.unlinks"), 0);
	}
}
END_TEST

/* Daemons killed and started again link to every other again within
 * 5 s, as the soak test wants (tests/soak): the others hold links to
 * their previous runs, which only their new key exchanges reset (from
 * the peer book); until then the others would answer their lookups over
 * the old links, into the void, for LINK_TIMEOUT. */
START_TEST(test_restart_relinks)
{
	uint64_t t0;

	n_d = N_DHT;
	mesh_start(h, d, N_DHT, "udp tcp", NULL);
	wait_full_mesh();
	harness_sleep_ms(3000); /* the tables are written */
	for (int i = N_DHT - 1; i >= N_DHT - 4; i--) {
		ck_assert_int_eq(harness_daemon_kill(d[i]), 0);
		harness_sleep_ms(500);
		t0 = harness_now_ms();
		ck_assert_int_eq(harness_daemon_start_ready(d[i]), 0);
		mesh_wait_peers(h, d[i], N_DHT - 1, 5000);
		fprintf(stderr, "test_dht_links: d%d relinked in %llu ms\n", i,
		    (unsigned long long)(harness_now_ms() - t0));
	}
}
END_TEST

static Suite *
dht_links_suite(void)
{
	Suite *s = suite_create("dht_links");
	TCase *tc = tcase_create("links");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_dht_chooses);
	tcase_add_test(tc, test_no_dht_full_mesh);
	tcase_add_test(tc, test_core_policy_keeps_mesh);
	tcase_add_test(tc, test_restart_relinks);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_links_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
