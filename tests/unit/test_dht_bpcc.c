/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * BPCC (src/dht/dht_bpcc.c, seed 002 section 2.2) on nodes in one
 * process: real struct dht, routing tables and messages; the links are
 * this test's, in virtual time, each with a send queue of LINK_CAP
 * messages that refuses more (-EAGAIN, as the core's does) and tells its
 * sender when it drained to half (dht_drained), and each node takes at
 * most RECV_PER_STEP messages a step, its CPU. A node that holds a peer
 * (env.hold) takes nothing from it until it lets go. Checked: a queue
 * fills, holds the neighbour whose request filled it, refuses past twice
 * BPCC_QUEUE with a FAIL, and drains in order on a drain notice, its hold
 * ending at half; a queue blocked for BPCC_BLOCK_MAX is given up (its
 * requests fail over, the neighbour is passed over until it drains, its
 * holds end); a flood of lookups from every node on a network whose nodes
 * take less than it offers ends with every lookup answered, holds used,
 * no queue ever given up (the waits never close a cycle) and nothing
 * left queued or held; a node that stops reading for good holds the
 * others back for at most BPCC_BLOCK_MAX.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_bpcc.h"
#include "dht/dht_int.h"
#include "lib/stats.h"
#include "unit.h"

#define N_MAX         24
#define SEC           (1000u * 1000)
#define STEP_US       100u /* one step of virtual time */
#define TICK_US       (100u * 1000)
#define LINK_CAP      4  /* messages a link's send queue takes */
#define RECV_PER_STEP 1  /* messages a node takes a step */
#define ANSWER_EXTRA  64 /* answers a link's send queue takes beyond */
#define LOOKUPS_MAX   8192

/* A message on its way over a link. */
struct msg {
	struct msg *next;
	uint16_t type;
	size_t len;
	uint8_t body[];
};

/* The link from i to j: i's send queue to j. */
struct link {
	struct msg *head, *tail;
	unsigned len;
	unsigned cap;
	bool over; /* a send was refused: a drain is owed */
};

struct node {
	int idx;
	struct identity *ident;
	struct dhtkey id;
	struct dht *dht;
	struct stats *stats;
	unsigned rr; /* the inbound link it reads next */
};

static struct node nodes[N_MAX];
static int n_nodes;
static struct link links[N_MAX][N_MAX];
static bool held[N_MAX][N_MAX]; /* i holds j: takes nothing from it */
static bool stopped[N_MAX];     /* reads nothing, ticks not (SIGSTOP) */
static int hold_calls;
static uint64_t now_us = 1000000, last_tick_us;

static int
node_of(const struct dhtkey *k)
{
	for (int i = 0; i < n_nodes; i++)
		if (dhtkey_equal(&nodes[i].id, k))
			return i;
	return -1;
}

static int
env_send(void *cls, const struct dhtkey *peer, uint16_t type, const void *body,
    size_t len)
{
	struct node *n = cls;
	int to = node_of(peer);
	struct link *l;
	struct msg *m;

	if (to < 0 || to == n->idx)
		return -ENOTCONN;
	l = &links[n->idx][to];
	/* Answers go as another class of the queue when requests fill it
	 * (dhtnode_env.c): refused only past ANSWER_EXTRA more. */
	if (l->len >= l->cap + (dhtmsg_is_answer(type) ? ANSWER_EXTRA : 0)) {
		l->over = true;
		return -EAGAIN;
	}
	m = malloc(sizeof(*m) + len);
	ck_assert_ptr_nonnull(m);
	m->next = NULL;
	m->type = type;
	m->len = len;
	memcpy(m->body, body, len);
	if (l->tail != NULL)
		l->tail->next = m;
	else
		l->head = m;
	l->tail = m;
	l->len++;
	return 0;
}

static bool
env_linked(void *cls, const struct dhtkey *peer)
{
	int to = node_of(peer);

	return to >= 0 && to != ((struct node *)cls)->idx;
}

static int
env_link(void *cls, const struct dhtkey *peer, const void *helo, size_t len)
{
	(void)cls;
	(void)helo;
	(void)len;
	return node_of(peer) >= 0 ? 0 : -ENOENT;
}

static int
env_hold(void *cls, const struct dhtkey *peer, bool hold)
{
	int to = node_of(peer);

	ck_assert_int_ge(to, 0);
	held[((struct node *)cls)->idx][to] = hold;
	hold_calls++;
	return 0;
}

static size_t
env_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	(void)cls;
	(void)peer;
	(void)buf;
	(void)size;
	return 0;
}

static size_t
env_own_helo(void *cls, uint8_t *buf, size_t size)
{
	return env_helo(cls, NULL, buf, size);
}

static uint64_t
env_now(void *cls)
{
	(void)cls;
	return now_us;
}

static uint64_t
env_wall(void *cls)
{
	(void)cls;
	return 1700000000 + now_us / SEC;
}

/* FINDs only: nothing is stored. */
static bool
env_has(void *cls, const struct dhtkey *key)
{
	(void)cls;
	(void)key;
	return false;
}

static int
env_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	(void)cls;
	(void)key;
	(void)data;
	(void)len;
	(void)expiry;
	(void)done;
	(void)arg;
	return -ENOSPC;
}

static int
env_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got, void *arg)
{
	(void)cls;
	(void)key;
	(void)got;
	(void)arg;
	return -ENOENT;
}

static uint64_t *
env_stat(void *cls, const char *name)
{
	return stats_counter2(((struct node *)cls)->stats, "dht", name);
}

static uint64_t
stat(int i, const char *name)
{
	char full[64];

	(void)snprintf(full, sizeof(full), "dht.%s", name);
	return stats_get(nodes[i].stats, full);
}

static uint64_t
stat_sum(const char *name)
{
	uint64_t n = 0;

	for (int i = 0; i < n_nodes; i++)
		n += stat(i, name);
	return n;
}

/* n nodes, all linked, tables of k per bucket, BPCC with queue q. */
static void
net_start(int n, unsigned k, unsigned q, uint64_t block_max_us)
{
	struct dht_env env = {
		.send = env_send,
		.linked = env_linked,
		.link = env_link,
		.own_helo = env_own_helo,
		.peer_helo = env_helo,
		.now_us = env_now,
		.wall_s = env_wall,
		.store_has = env_has,
		.store_put = env_put,
		.store_get = env_get,
		.stat = env_stat,
		.hold = env_hold,
	};
	struct dht_cfg cfg;
	uint8_t seed[32];

	n_nodes = n;
	memset(links, 0, sizeof(links));
	memset(held, 0, sizeof(held));
	memset(stopped, 0, sizeof(stopped));
	hold_calls = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			links[i][j].cap = LINK_CAP;
	for (int i = 0; i < n; i++) {
		struct node *nd = &nodes[i];

		memset(nd, 0, sizeof(*nd));
		nd->idx = i;
		memset(seed, 0, sizeof(seed));
		seed[0] = (uint8_t)i;
		seed[1] = 0xbc;
		ck_assert_int_eq(identity_from_seed(seed, &nd->ident), 0);
		dhtkey_from_peer(&nd->ident->id, &nd->id);
		nd->stats = stats_new();
		ck_assert_ptr_nonnull(nd->stats);
		env.cls = nd;
		env.ident = nd->ident;
		dht_cfg_default(&cfg);
		cfg.k = k;
		cfg.per_net = 0;
		cfg.request_rate = 0;
		cfg.timeout_us = 60 * SEC;
		cfg.refresh_us = 3600 * SEC;
		cfg.congestion = DHT_CC_BPCC;
		cfg.bpcc_queue = q;
		cfg.bpcc_block_max_us = block_max_us;
		ck_assert_int_eq(dht_new(&env, &cfg, &nd->dht), 0);
	}
	/* Links up everywhere; the self-lookups are cancelled by a quiet
	 * start (nothing is read until the test steps). */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j)
				dht_peer_up(nodes[i].dht, &nodes[j].id, 0);
}

/* Node to takes one message from from's link, and from hears of a drain
 * when its queue fell to half after refusing. */
static void
take_one(int from, int to)
{
	struct link *l = &links[from][to];
	struct msg *m = l->head;

	l->head = m->next;
	if (l->head == NULL)
		l->tail = NULL;
	l->len--;
	dht_receive(nodes[to].dht, &nodes[from].id, m->type, m->body, m->len);
	free(m);
	if (l->over && l->len <= l->cap / 2) {
		l->over = false;
		dht_drained(nodes[from].dht, &nodes[to].id);
	}
}

/* One step: each running node reads up to RECV_PER_STEP messages, round
 * robin over the peers it does not hold; ticks every TICK_US. */
static void
step(void)
{
	for (int j = 0; j < n_nodes; j++) {
		struct node *nd = &nodes[j];
		unsigned got = 0;

		if (stopped[j])
			continue;
		for (int t = 0; t < n_nodes && got < RECV_PER_STEP; t++) {
			int i =
			    (int)((nd->rr + (unsigned)t) % (unsigned)n_nodes);

			if (links[i][j].len == 0 || held[j][i])
				continue;
			take_one(i, j);
			got++;
			nd->rr = (unsigned)i + 1;
		}
	}
	now_us += STEP_US;
	if (now_us - last_tick_us >= TICK_US) {
		last_tick_us = now_us;
		for (int i = 0; i < n_nodes; i++)
			if (!stopped[i])
				dht_tick(nodes[i].dht);
	}
}

static void
run_ms(uint64_t ms)
{
	uint64_t end = now_us + ms * 1000;

	while (now_us < end)
		step();
}

static void
net_free(void)
{
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++) {
			struct msg *m, *next;

			for (m = links[i][j].head; m != NULL; m = next) {
				next = m->next;
				free(m);
			}
		}
	memset(links, 0, sizeof(links));
	for (int i = 0; i < n_nodes; i++) {
		dht_free(nodes[i].dht);
		identity_free(nodes[i].ident);
		stats_free(nodes[i].stats);
	}
	n_nodes = 0;
}

/* A FIND from `from`, as a request of its own that reached us: key k,
 * request id id, passed to `to` by `from` (its first hop). */
static void
inject_find(int from, int to, const struct dhtkey *k, uint64_t id)
{
	struct dhtmsg_req req;
	struct buf out;

	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_FIND;
	req.req_id = id;
	req.key = *k;
	req.requester = nodes[from].id;
	req.hops = 1;
	req.hops_left = 10;
	req.want = 1;
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&req, &out), 0);
	dht_receive(nodes[to].dht, &nodes[from].id, req.type, buf_head(&out),
	    buf_size(&out));
	buf_done(&out);
}

/* Messages of type waiting on the link from i to j. */
static unsigned
on_link(int i, int j, uint16_t type)
{
	unsigned n = 0;

	for (struct msg *m = links[i][j].head; m != NULL; m = m->next)
		n += m->type == type;
	return n;
}

static struct dht_bpcc_peer
peer_state(int i, int j)
{
	struct dht_bpcc_peer v[N_MAX];
	size_t n = dht_bpcc_get_peers(nodes[i].dht, v, N_MAX);

	for (size_t x = 0; x < n; x++)
		if (dhtkey_equal(&v[x].id, &nodes[j].id))
			return v[x];
	return (struct dht_bpcc_peer){ .depth = 0 };
}

/*
 * Three nodes: 0 sends requests for node 2's id to node 1, whose link to
 * 2 takes nothing. Node 1 queues them; the 4th (BPCC_QUEUE) holds node 0;
 * those up to 8 queue too, the 9th is refused with a FAIL to node 0. A
 * drain empties the queue in order and ends the hold; none was dropped.
 */
START_TEST(test_fill_block_release)
{
	struct dht_bpcc_status st;
	struct dht_bpcc_peer p;

	net_start(3, 20, 4, 2 * SEC);
	run_ms(300); /* the joins' lookups */
	links[1][2].cap = 0;
	for (uint64_t id = 1; id <= 3; id++)
		inject_find(0, 1, &nodes[2].id, id);
	p = peer_state(1, 2);
	ck_assert_uint_eq(p.depth, 3);
	ck_assert(p.blocked && !p.held);
	ck_assert(!held[1][0]);
	inject_find(0, 1, &nodes[2].id, 4);
	ck_assert_msg(held[1][0],
	    "a full queue holds the neighbour that "
	    "filled it");
	ck_assert_uint_eq(stat(1, "bpcc_holds"), 1);
	ck_assert(peer_state(1, 0).held);
	for (uint64_t id = 5; id <= 8; id++)
		inject_find(0, 1, &nodes[2].id, id);
	ck_assert_uint_eq(peer_state(1, 2).depth, 8);
	ck_assert_uint_eq(on_link(1, 0, FERRY_MSG_DHT_FAIL), 0);
	inject_find(0, 1, &nodes[2].id, 9);
	ck_assert_uint_eq(peer_state(1, 2).depth, 8);
	ck_assert_uint_eq(stat(1, "bpcc_overflow"), 1);
	ck_assert_uint_eq(on_link(1, 0, FERRY_MSG_DHT_FAIL), 1);
	dht_bpcc_get_status(nodes[1].dht, &st);
	ck_assert(st.on);
	ck_assert_uint_eq(st.depth, 8);
	ck_assert_uint_eq(st.blocked, 1);
	ck_assert_uint_eq(st.held, 1);
	now_us += 500 * 1000;
	ck_assert_uint_ge(peer_state(1, 2).blocked_us, 500 * 1000);
	/* The link takes 2 now: the first two go, in order, and the queue
	 * stays blocked and full enough to hold. */
	links[1][2].cap = 2;
	dht_drained(nodes[1].dht, &nodes[2].id);
	ck_assert_uint_eq(peer_state(1, 2).depth, 6);
	ck_assert_uint_eq(links[1][2].len, 2);
	ck_assert(held[1][0]);
	/* Room for all: the queue empties, the hold ends at half. */
	links[1][2].cap = 100;
	dht_drained(nodes[1].dht, &nodes[2].id);
	ck_assert_uint_eq(peer_state(1, 2).depth, 0);
	ck_assert(!peer_state(1, 2).blocked);
	ck_assert(!held[1][0]);
	ck_assert_uint_eq(stat(1, "bpcc_releases"), 1);
	ck_assert_uint_eq(links[1][2].len, 8);
	{
		uint64_t want = 1;

		for (struct msg *m = links[1][2].head; m != NULL; m = m->next) {
			struct dhtmsg_req r;

			ck_assert_int_eq(dhtmsg_req_decode(m->type, m->body,
			                     m->len, &r),
			    0);
			ck_assert_uint_eq(r.req_id, want++);
		}
	}
	ck_assert_uint_eq(stat(1, "bpcc_queued"), 8);
	ck_assert_uint_eq(stat(1, "bpcc_sent_later"), 8);
	ck_assert_uint_eq(stat(1, "bpcc_depth"), 0);
	ck_assert_uint_eq(stat(1, "bpcc_held"), 0);
	ck_assert_uint_eq(stat(1, "bpcc_blocked"), 0);
	ck_assert_uint_ge(stat(1, "bpcc_blocked_ms"), 500);
	net_free();
}
END_TEST

/*
 * A queue blocked for BPCC_BLOCK_MAX is given up: its requests are
 * routed again without node 2 and end at node 1, which answers them (no
 * hop is closer to node 2's id but 2 itself), its hold ends, node 2 counts a failure and is passed over, so that node 1
 * answers the next request for that key itself at once; a drain notice
 * from 2 makes it a next hop again.
 */
START_TEST(test_block_max)
{
	struct dht_bpcc_status st;

	net_start(3, 20, 2, 2 * SEC);
	run_ms(300);
	links[1][2].cap = 0;
	for (uint64_t id = 1; id <= 3; id++)
		inject_find(0, 1, &nodes[2].id, id);
	ck_assert(held[1][0]);
	now_us += 1900 * 1000;
	dht_tick(nodes[1].dht);
	ck_assert_uint_eq(stat(1, "bpcc_block_timeouts"), 0);
	ck_assert_uint_eq(peer_state(1, 2).depth, 3);
	now_us += 200 * 1000;
	dht_tick(nodes[1].dht);
	ck_assert_uint_eq(stat(1, "bpcc_block_timeouts"), 1);
	ck_assert_uint_eq(peer_state(1, 2).depth, 0);
	ck_assert(peer_state(1, 2).stalled);
	ck_assert(!held[1][0]);
	/* None is lost: each is routed again without node 2, and so ends
	 * at node 1, which answers it (NODES). */
	ck_assert_uint_eq(stat(1, "bpcc_failed_over"), 3);
	ck_assert_uint_eq(stat(1, "bpcc_fails"), 0);
	ck_assert_uint_eq(on_link(1, 0, FERRY_MSG_DHT_NODES), 3);
	dht_bpcc_get_status(nodes[1].dht, &st);
	ck_assert_uint_eq(st.block_timeouts, 1);
	ck_assert_uint_eq(st.failed_over, 3);
	/* Passed over: answered by node 1 itself (NODES), not queued. */
	inject_find(0, 1, &nodes[2].id, 10);
	ck_assert_uint_eq(peer_state(1, 2).depth, 0);
	ck_assert_uint_eq(on_link(1, 0, FERRY_MSG_DHT_NODES), 4);
	/* Drained: a next hop again (the link takes it at once). */
	links[1][2].cap = 100;
	dht_drained(nodes[1].dht, &nodes[2].id);
	ck_assert(!peer_state(1, 2).stalled);
	inject_find(0, 1, &nodes[2].id, 11);
	ck_assert_uint_eq(on_link(1, 2, FERRY_MSG_DHT_FIND), 1);
	net_free();
}
END_TEST

/* The lookups of the flood: each node keeps `window` of its own FINDs of
 * random keys going until it started `each`. */
struct flood {
	int window, each;
	int started[N_MAX], done[N_MAX], ok[N_MAX];
	int status_bad; /* the status of one that failed, 0 if none */
};

struct lookup {
	struct flood *f;
	int node;
};

static struct lookup lookups[LOOKUPS_MAX];
static int n_lookups;
static uint64_t blocked_max_us; /* the longest any queue was blocked */

static void
blocked_sample(void)
{
	struct dht_bpcc_peer v[N_MAX];

	for (int i = 0; i < n_nodes; i++) {
		size_t n;

		if (stopped[i])
			continue;
		n = dht_bpcc_get_peers(nodes[i].dht, v, N_MAX);
		for (size_t x = 0; x < n; x++)
			if (v[x].blocked_us > blocked_max_us)
				blocked_max_us = v[x].blocked_us;
	}
}

static void
on_find(void *cls, const struct dht_result *r)
{
	struct lookup *l = cls;

	l->f->done[l->node]++;
	if (r->status == 0)
		l->f->ok[l->node]++;
	else
		l->f->status_bad = r->status;
}

static void
flood_top_up(struct flood *f)
{
	struct dhtkey key;

	for (int i = 0; i < n_nodes; i++) {
		if (stopped[i])
			continue;
		while (f->started[i] < f->each &&
		    f->started[i] - f->done[i] < f->window) {
			struct lookup *l = &lookups[n_lookups++];

			ck_assert_int_le(n_lookups, LOOKUPS_MAX);
			l->f = f;
			l->node = i;
			randombytes_buf(key.b, sizeof(key.b));
			ck_assert_int_eq(dht_find(nodes[i].dht, &key, 2,
			                     on_find, l),
			    0);
			f->started[i]++;
		}
	}
}

/* Runs the flood until every running node's lookups are done, or limit
 * ms of virtual time. */
static void
flood_run(struct flood *f, uint64_t limit_ms)
{
	uint64_t end = now_us + limit_ms * 1000;
	bool all;

	do {
		flood_top_up(f);
		for (int s = 0; s < 10; s++)
			step();
		blocked_sample();
		all = true;
		for (int i = 0; i < n_nodes; i++)
			if (!stopped[i] && f->done[i] < f->each)
				all = false;
	} while (!all && now_us < end);
}

/* Nothing queued, blocked or held anywhere. */
static void
flood_report(const char *name, uint64_t t0)
{
	fprintf(stderr,
	    "%s: %llu ms, queued %llu, holds %llu, overflow %llu, timeouts "
	    "%llu, failed_over %llu, fails %llu, blocked_ms %llu, retries "
	    "%llu, answers_lost %llu, completed %llu, hops %llu\n",
	    name, (unsigned long long)(now_us - t0) / 1000,
	    (unsigned long long)stat_sum("bpcc_queued"),
	    (unsigned long long)stat_sum("bpcc_holds"),
	    (unsigned long long)stat_sum("bpcc_overflow"),
	    (unsigned long long)stat_sum("bpcc_block_timeouts"),
	    (unsigned long long)stat_sum("bpcc_failed_over"),
	    (unsigned long long)stat_sum("bpcc_fails"),
	    (unsigned long long)stat_sum("bpcc_blocked_ms"),
	    (unsigned long long)stat_sum("retries"),
	    (unsigned long long)stat_sum("answers_lost"),
	    (unsigned long long)stat_sum("completed"),
	    (unsigned long long)stat_sum("hops_total"));
}

static void
check_quiet(void)
{
	for (int i = 0; i < n_nodes; i++) {
		struct dht_bpcc_status st;

		dht_bpcc_get_status(nodes[i].dht, &st);
		ck_assert_msg(st.depth == 0 && st.blocked == 0 && st.held == 0,
		    "node %d: %zu queued, %zu blocked, %zu held", i, st.depth,
		    st.blocked, st.held);
	}
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++)
			ck_assert_msg(!held[i][j], "%d still holds %d", i, j);
}

/*
 * 16 nodes, k = 2 (lookups take several hops), BPCC_QUEUE 4: each node
 * keeps 24 lookups going, 150 each, on nodes that take one message per
 * 100 µs. Queues fill and hold their senders, and every lookup ends well;
 * no queue stays blocked for BPCC_BLOCK_MAX (the waits never close into
 * a cycle: one would wedge its queues until then), and once the flood is
 * over nothing is left queued, blocked or held.
 */
START_TEST(test_flood_no_deadlock)
{
	static struct flood f;
	uint64_t t0;

	memset(&f, 0, sizeof(f));
	n_lookups = 0;
	blocked_max_us = 0;
	f.window = 64;
	f.each = 300;
	net_start(16, 2, 4, 5 * SEC);
	run_ms(500);
	t0 = now_us;
	flood_run(&f, 120 * 1000);
	flood_report("flood", t0);
	for (int i = 0; i < n_nodes; i++)
		ck_assert_msg(f.done[i] == f.each && f.ok[i] == f.each,
		    "node %d: %d of %d lookups done, %d well (last bad "
		    "status %d)",
		    i, f.done[i], f.each, f.ok[i], f.status_bad);
	ck_assert_uint_gt(stat_sum("bpcc_queued"), 100);
	ck_assert_uint_gt(stat_sum("bpcc_holds"), 0);
	ck_assert_uint_eq(stat_sum("bpcc_holds"), stat_sum("bpcc_releases"));
	ck_assert_uint_eq(stat_sum("bpcc_block_timeouts"), 0);
	ck_assert_uint_lt(blocked_max_us, 5 * SEC);
	/* Answers never wait for requests, nor get lost to them. */
	ck_assert_uint_eq(stat_sum("answers_lost"), 0);
	ck_assert_uint_gt(stat_sum("hops_total"), stat_sum("completed"));
	run_ms(1000);
	check_quiet();
	net_free();
}
END_TEST

/*
 * The same flood while node 3 stops reading for good (SIGSTOP): its
 * neighbours' queues to it block, are given up after BPCC_BLOCK_MAX
 * (1 s) and it is passed over, so that the others' lookups all end, and
 * well; nobody stays held.
 */
START_TEST(test_flood_stopped_node)
{
	static struct flood f;
	uint64_t t0;

	memset(&f, 0, sizeof(f));
	n_lookups = 0;
	blocked_max_us = 0;
	f.window = 8;
	f.each = 400;
	net_start(16, 2, 4, 1 * SEC);
	run_ms(500);
	stopped[3] = true;
	t0 = now_us;
	flood_run(&f, 60 * 1000);
	flood_report("stopped", t0);
	for (int i = 0; i < n_nodes; i++)
		if (i != 3)
			ck_assert_msg(f.done[i] == f.each && f.ok[i] == f.each,
			    "node %d: %d of %d lookups done, %d well (last "
			    "bad status %d)",
			    i, f.done[i], f.each, f.ok[i], f.status_bad);
	run_ms(1500);
	blocked_sample();
	ck_assert_uint_gt(stat_sum("bpcc_block_timeouts"), 0);
	/* Never blocked longer than BPCC_BLOCK_MAX and a tick. */
	ck_assert_msg(blocked_max_us <= 1 * SEC + TICK_US,
	    "a queue was blocked for %llu ms",
	    (unsigned long long)blocked_max_us / 1000);
	for (int i = 0; i < n_nodes; i++) {
		if (i == 3)
			continue;
		ck_assert_uint_eq(peer_state(i, 3).depth, 0);
		for (int j = 0; j < n_nodes; j++)
			ck_assert_msg(!held[i][j], "%d still holds %d", i, j);
	}
	net_free();
}
END_TEST

/* Without CONGESTION = bpcc a request the node below refuses is dropped
 * (none, the baseline: counted, no FAIL adds to the load), nothing is
 * queued or held. */
START_TEST(test_off)
{
	net_start(3, 20, 4, 2 * SEC);
	for (int i = 0; i < n_nodes; i++) {
		struct dht_cfg cfg = *dht_config(nodes[i].dht);

		dht_free(nodes[i].dht);
		cfg.congestion = DHT_CC_NONE;
		nodes[i].dht = NULL;
		{
			struct dht_env env = {
				.cls = &nodes[i],
				.ident = nodes[i].ident,
				.send = env_send,
				.linked = env_linked,
				.link = env_link,
				.own_helo = env_own_helo,
				.peer_helo = env_helo,
				.now_us = env_now,
				.wall_s = env_wall,
				.store_has = env_has,
				.store_put = env_put,
				.store_get = env_get,
				.stat = env_stat,
				.hold = env_hold,
			};

			ck_assert_int_eq(dht_new(&env, &cfg, &nodes[i].dht), 0);
		}
	}
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++)
			if (i != j)
				dht_peer_up(nodes[i].dht, &nodes[j].id, 0);
	run_ms(300);
	links[1][2].cap = 0;
	inject_find(0, 1, &nodes[2].id, 1);
	ck_assert_uint_eq(peer_state(1, 2).depth, 0);
	ck_assert_uint_eq(on_link(1, 0, FERRY_MSG_DHT_FAIL), 0);
	ck_assert_uint_eq(stat(1, "cc_drops"), 1);
	ck_assert_int_eq(hold_calls, 0);
	net_free();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_bpcc");
	TCase *tc = tcase_create("bpcc");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fill_block_release);
	tcase_add_test(tc, test_block_max);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_flood_no_deadlock);
	tcase_add_test(tc, test_flood_stopped_node);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
