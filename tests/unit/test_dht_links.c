/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's choice of links (src/dht/dht_links.c) on nodes in one
 * process: real struct dht, routing tables, messages and signatures;
 * links, their owners (who asked), pins, delivery and the clock are the
 * fake network's (tests/lib/dhtsim.c), through struct dht_env, in virtual
 * time. Checked: a link this
 * node asked for that its table does not need is dropped once idle for
 * LINK_GRACE and past SPARE_LINKS, least recently used first and down to
 * half, the peer hearing of it; table entries, pinned links and links the
 * peer asked for stay; without env.unlink nothing is dropped; an entry
 * whose link went down is asked for again, and one that never links
 * leaves its bucket for a replacement, which is linked; lookups ask only
 * for peers with a place in the table; on a network larger than its
 * buckets each node keeps links to its table's choice only, without
 * flapping and without losing requests or answers to dropped links,
 * while a small network ends as a full mesh, as before.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "dht/dht.h"
#include "dht/dht_int.h"
#include "dhtsim.h"
#include "unit.h"

#define N_MAX 40
#define SEC   (1000u * 1000)

static struct dhtsim *sim;
static uint64_t refresh_us; /* REFRESH_INTERVAL of new nodes */

static uint64_t
stat(int i, const char *name)
{
	return dhtsim_stat(sim, i, name);
}

static void
run_ms(uint64_t ms)
{
	dhtsim_run_ms(sim, ms);
}

static bool
linked(int a, int b)
{
	return dhtsim_linked(sim, a, b);
}

/* a asked for its link to b (and it is up, or has not come down). */
static bool
asked(int a, int b)
{
	return dhtsim_link_get(sim, a, b).asked;
}

/* Links a and b, as a asked; both hear of it. */
static void
make_link(int a, int b)
{
	ck_assert_int_eq(dhtsim_link(sim, a, b), 0);
}

/* n nodes with bucket size k; they drop links unless core_choice (as
 * under LINK_POLICY = core, where env.unlink is NULL). */
static void
net_start(int n, unsigned k, unsigned spare, uint64_t grace_us,
    bool core_choice)
{
	struct dhtsim_cfg cfg;

	dhtsim_cfg_default(&cfg);
	cfg.seed = 0x5a;
	cfg.dht_unlinks = !core_choice;
	cfg.srtt_us = 0;
	cfg.dht.k = k;
	cfg.dht.per_net = 0;
	cfg.dht.spare_links = spare;
	cfg.dht.link_grace_us = grace_us;
	cfg.dht.refresh_us = refresh_us ? refresh_us : 2 * SEC;
	cfg.dht.timeout_us = 3 * SEC;
	ck_assert_int_eq(dhtsim_new(&cfg, n, &sim), 0);
}

static void
net_free(void)
{
	/* The DHT dropped only what the env let it. */
	ck_assert_uint_eq(sim->c.bad_unlinks, 0);
	dhtsim_free(sim);
	sim = NULL;
	refresh_us = 0;
}

static bool
in_table(int i, int j)
{
	return rtable_get(dht_rtable(sim->nodes[i].dht), &sim->nodes[j].id) !=
	    NULL;
}

static unsigned
bucket_of(int i, int j)
{
	return dhtkey_common_prefix(&sim->nodes[i].id, &sim->nodes[j].id);
}

/* Up to max nodes other than 0 in node 0's bucket 0, into out. */
static int
far_half(int *out, int max)
{
	int n = 0;

	for (int j = 1; j < sim->n && n < max; j++)
		if (bucket_of(0, j) == 0)
			out[n++] = j;
	return n;
}

/* A DHT message from a to b over their link (one that does not decode:
 * only its arrival matters here). */
static void
poke(int a, int b)
{
	static const uint8_t body[1];

	ck_assert_int_eq(dhtsim_send(sim, a, b, FERRY_MSG_DHT_FIND, body, 1),
	    0);
}

/* Node 0, k = 1, spare 2, grace 10 s: its first peer of bucket 0 takes
 * the place, four more it asked for are surplus; one the peer asked for,
 * one a client pinned, and the table's stay. The surplus peers have
 * their bucket 0, where node 0 would go, full already: they do not need
 * node 0 and do not link again. Refreshes are rare, so that only the
 * test's messages use the links. */
START_TEST(test_trim_surplus)
{
	int far[9], n_far, s[5], pin, theirs, near = -1;
	uint64_t s0_links;

	refresh_us = 600 * SEC;
	net_start(N_MAX, 1, 2, 10 * SEC, false);
	n_far = far_half(far, 9);
	ck_assert_int_ge(n_far, 9);
	for (int j = 1; j < sim->n && near < 0; j++)
		if (bucket_of(0, j) > 0)
			near = j;
	ck_assert_int_gt(near, 0);
	for (int i = 0; i < 5; i++) {
		s[i] = far[i + 1];
		make_link(s[i], near);
	}
	make_link(0, far[0]);
	run_ms(2000);
	ck_assert(in_table(0, far[0]));
	for (int i = 0; i < 4; i++)
		make_link(0, s[i]);
	pin = far[6];
	make_link(0, pin);
	ck_assert_int_eq(dhtsim_pin(sim, 0, pin, true), 0);
	theirs = far[7];
	make_link(theirs, 0);
	run_ms(5000);
	/* Young: kept, but counted. */
	ck_assert_uint_eq(stat(0, "links_surplus"), 4);
	ck_assert_int_eq(sim->nodes[0].unlinks, 0);
	/* s[2] and s[3] send node 0 something, s[3] last. */
	poke(s[2], 0);
	run_ms(1000);
	poke(s[3], 0);
	s0_links = stat(s[0], "links");
	run_ms(5000);
	/* 4 surplus, more than 2: those idle for LINK_GRACE go, s[2] and
	 * s[3] are in use. */
	ck_assert_int_eq(sim->nodes[0].unlinks, 2);
	ck_assert_uint_eq(stat(0, "links_dropped"), 2);
	ck_assert_uint_eq(stat(0, "links_surplus"), 2);
	ck_assert(!linked(0, s[0]) && !linked(0, s[1]));
	ck_assert(linked(0, s[2]) && linked(0, s[3]));
	ck_assert(linked(0, far[0]) && linked(0, pin) && linked(0, theirs));
	/* The peers heard: their DHT counts the link down. */
	ck_assert_uint_eq(stat(s[0], "links"), s0_links - 1);
	/* SPARE_LINKS surplus links stay however idle. */
	run_ms(20000);
	ck_assert_int_eq(sim->nodes[0].unlinks, 2);
	ck_assert(linked(0, s[2]) && linked(0, s[3]));
	/* One more, 3 surplus: once idle for LINK_GRACE, the least
	 * recently used goes first (s[3]), and the next would go (to half
	 * of 2) were it idle as long; past that, back at SPARE_LINKS, the
	 * rest stay. */
	poke(s[3], 0);
	run_ms(1000);
	poke(s[2], 0);
	run_ms(1000);
	make_link(0, s[4]);
	run_ms(9000);
	ck_assert_int_eq(sim->nodes[0].unlinks, 3);
	ck_assert(!linked(0, s[3]));
	ck_assert(linked(0, s[2]) && linked(0, s[4]));
	run_ms(20000);
	ck_assert_int_eq(sim->nodes[0].unlinks, 3);
	ck_assert(linked(0, s[2]) && linked(0, s[4]));
	ck_assert_uint_eq(stat(0, "links_surplus"), 2);
	net_free();
}
END_TEST

/* Without env.unlink (LINK_POLICY = core) the DHT drops nothing. */
START_TEST(test_no_unlink_no_drop)
{
	int far[8];

	net_start(N_MAX, 1, 0, SEC, true);
	ck_assert_int_ge(far_half(far, 8), 5);
	for (int i = 0; i < 5; i++)
		make_link(0, far[i]);
	run_ms(20000);
	for (int i = 0; i < 5; i++)
		ck_assert(linked(0, far[i]));
	ck_assert_int_eq(sim->nodes[0].unlinks, 0);
	ck_assert_uint_eq(stat(0, "links_dropped"), 0);
	net_free();
}
END_TEST

/* A table entry whose link went down is asked for again; one whose link
 * never comes leaves its bucket for the replacement, which is linked. */
START_TEST(test_entries_relinked_and_replaced)
{
	int far[8], e, r;

	net_start(N_MAX, 1, 8, 60 * SEC, false);
	ck_assert_int_ge(far_half(far, 8), 2);
	e = far[0];
	r = far[1];
	make_link(0, e);
	run_ms(500);
	make_link(r, 0); /* cached: the peer's link, not dropped */
	run_ms(500);
	ck_assert(in_table(0, e));
	ck_assert(!in_table(0, r));
	/* e drops the link (its own reasons); node 0 asks for it again. */
	dhtsim_cut(sim, e, 0, true);
	run_ms(500);
	ck_assert(!linked(0, e));
	run_ms(35000);
	ck_assert(linked(0, e));
	ck_assert(asked(0, e));
	ck_assert_uint_ge(stat(0, "links_made"), 1);
	/* Now e goes silent for good: three requests bring no link, it
	 * leaves, r takes its place (r's link stays up throughout). */
	sim->nodes[e].unreachable = true;
	dhtsim_cut(sim, e, 0, true);
	run_ms(10 * 60 * 1000);
	ck_assert(!in_table(0, e));
	ck_assert(in_table(0, r));
	ck_assert(linked(0, r));
	net_free();
}
END_TEST

/* Every node knows node 0 only, and links to it (BOOTSTRAP). */
static void
net_join(int n, unsigned k, unsigned spare, uint64_t grace_us)
{
	net_start(n, k, spare, grace_us, false);
	for (int i = 1; i < sim->n; i++)
		make_link(i, 0);
}

static int
count_links(void)
{
	int n = 0;

	for (int i = 0; i < sim->n; i++)
		for (int j = i + 1; j < sim->n; j++)
			n += linked(i, j);
	return n;
}

/* Each table entry is linked, and each link a node asked for is its
 * table's, or has not been idle for LINK_GRACE (grace_us) and a pass. */
static void
check_table_choice(uint64_t grace_us)
{
	for (int i = 0; i < sim->n; i++)
		for (int j = 0; j < sim->n; j++) {
			struct dhtsim_link l = dhtsim_link_get(sim, i, j);

			if (i == j)
				continue;
			if (in_table(i, j))
				ck_assert_msg(linked(i, j),
				    "node %d: entry %d not linked", i, j);
			else
				ck_assert_msg(!linked(i, j) || !asked(i, j) ||
				        sim->now_us - l.born_us <=
				            grace_us + SEC ||
				        sim->now_us - l.heard_us <=
				            grace_us + SEC,
				    "node %d keeps its link to %d, not in its "
				    "table",
				    i, j);
		}
}

/* How a FIND of the test ended. */
struct find_seen {
	bool done;
	int status;
	size_t n;
};

static void
on_find(void *cls, const struct dht_result *r)
{
	struct find_seen *f = cls;

	f->status = r->status;
	f->n = r->n_nodes;
	f->done = true;
}

/* Table entries of each node, and the link-ups each has seen for them. */
struct snapshot {
	bool entry[N_MAX][N_MAX];
	unsigned ups[N_MAX][N_MAX];
};

static void
snapshot_take(struct snapshot *sn)
{
	for (int i = 0; i < sim->n; i++)
		for (int j = 0; j < sim->n; j++) {
			sn->entry[i][j] = i != j && in_table(i, j);
			sn->ups[i][j] = dhtsim_link_get(sim, i, j).ups;
		}
}

/* 40 nodes, k = 2, no spare links, grace 5 s: tables of a dozen entries
 * at most. Links settle on the tables' choice (and on the links peers
 * asked for), far from a full mesh, and stay: in a settled minute no
 * table changes and no entry's link comes again but once, where the peer
 * had asked for it and the node needing it asks now, while the links
 * made to answer requests directly come and go; of the thousands of
 * requests of that minute (refreshes every 2 s) none times out and no
 * answer is lost to a dropped link; FINDs from every node end well. */
START_TEST(test_network_table_choice)
{
	static struct snapshot before;
	uint64_t timeouts, lost, requests;
	int links;
	struct find_seen found[N_MAX];
	struct dhtkey key;

	net_join(N_MAX, 2, 0, 5 * SEC);
	run_ms(3 * 60 * 1000);
	check_table_choice(5 * SEC);
	links = count_links();
	ck_assert_msg(links < N_MAX * (N_MAX - 1) / 3,
	    "%d links of %d possible", links, N_MAX * (N_MAX - 1) / 2);
	ck_assert_uint_gt(dhtsim_stat_sum(sim, "links_dropped"), 0);
	snapshot_take(&before);
	timeouts = dhtsim_stat_sum(sim, "timeouts");
	lost = dhtsim_stat_sum(sim, "answers_lost");
	requests = dhtsim_stat_sum(sim, "requests_out");
	run_ms(60 * 1000);
	for (int i = 0; i < sim->n; i++)
		for (int j = 0; j < sim->n; j++) {
			unsigned ups = dhtsim_link_get(sim, i, j).ups;

			ck_assert_msg(before.entry[i][j] == (i != j &&
			                  in_table(i, j)),
			    "node %d's table changed (%d)", i, j);
			if (!before.entry[i][j] || ups == before.ups[i][j])
				continue;
			/* Once at most: the peer dropped a link it had asked
			 * for, and i asked again, for good. */
			ck_assert_msg(ups == before.ups[i][j] + 1 &&
			        linked(i, j) && asked(i, j),
			    "node %d's link to entry %d came and went", i, j);
		}
	check_table_choice(5 * SEC);
	ck_assert_uint_gt(dhtsim_stat_sum(sim, "requests_out") - requests,
	    1000);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "timeouts"), timeouts);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "answers_lost"), lost);
	dhtsim_random(sim, key.b, sizeof(key.b));
	for (int i = 0; i < sim->n; i++) {
		found[i].done = false;
		ck_assert_int_eq(dht_find(sim->nodes[i].dht, &key, 8, on_find,
		                     &found[i]),
		    0);
	}
	run_ms(5000);
	/* Each ends well with at least k peers; 8 are asked for, but the
	 * tables near a random key may know fewer (k = 2 here). */
	for (int i = 0; i < sim->n; i++)
		ck_assert_msg(found[i].done && found[i].status == 0 &&
		        found[i].n >= 2,
		    "node %d's FIND: done %d, status %d, %zu peers", i,
		    found[i].done, found[i].status, found[i].n);
	net_free();
}
END_TEST

/* 8 nodes, k = 20: every table holds every peer, every node links to
 * every other and drops nothing, as without the DHT. */
START_TEST(test_small_network_full_mesh)
{
	net_join(8, 20, 0, 5 * SEC);
	run_ms(60 * 1000);
	ck_assert_int_eq(count_links(), 8 * 7 / 2);
	for (int i = 0; i < sim->n; i++) {
		ck_assert_uint_eq(stat(i, "links"), 7);
		ck_assert_uint_eq(stat(i, "links_dropped"), 0);
	}
	net_free();
}
END_TEST

/* A lookup's answer is linked only where the table has room for it. */
START_TEST(test_lookup_asks_for_room)
{
	int far[8], n_far;

	refresh_us = 600 * SEC;
	net_start(N_MAX, 1, 8, 60 * SEC, false);
	n_far = far_half(far, 8);
	ck_assert_int_ge(n_far, 3);
	/* far[0] knows far[1] and far[2]; node 0 links to far[0], which
	 * fills its bucket 0, and looks itself up through it. */
	make_link(far[0], far[1]);
	make_link(far[0], far[2]);
	run_ms(2000);
	make_link(0, far[0]);
	run_ms(5000);
	ck_assert_uint_ge(stat(0, "requests_out"), 1);
	ck_assert_uint_eq(stat(0, "links_asked"), 0);
	for (int j = 1; j < 3; j++)
		ck_assert_msg(!asked(0, far[j]),
		    "node 0 asked for far[%d], for which it has no room", j);
	net_free();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_links");
	TCase *tc = tcase_create("policy");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_trim_surplus);
	tcase_add_test(tc, test_no_unlink_no_drop);
	tcase_add_test(tc, test_entries_relinked_and_replaced);
	tcase_add_test(tc, test_lookup_asks_for_room);
	tcase_add_test(tc, test_small_network_full_mesh);
	tcase_add_test(tc, test_network_table_choice);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
