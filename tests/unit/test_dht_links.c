/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The DHT's choice of links (src/dht/dht_links.c) on nodes in one
 * process: real struct dht, routing tables, messages and signatures;
 * links, their owners (who asked), pins, delivery and the clock are this
 * test's, through struct dht_env, in virtual time. Checked: a link this
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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_int.h"
#include "lib/stats.h"
#include "unit.h"

#define N_MAX   40
#define TICK_US 100000u
#define SEC     (1000u * 1000)
#define Q_CAP   65536

enum ev_kind { EV_MSG, EV_UP, EV_DOWN, EV_STORED, EV_GOT };

struct ev {
	enum ev_kind kind;
	int from, to;
	uint16_t type;
	uint8_t *body;
	size_t len;
	dht_store_done_fn *done;
	dht_store_got_fn *got;
	void *arg;
};

struct block {
	struct dhtkey key;
	uint8_t *data;
	size_t len;
};

struct node {
	int idx;
	struct identity *ident;
	struct dhtkey id;
	struct dht *dht;
	struct stats *stats;
	struct block store[4];
	size_t n_store;
};

static struct node nodes[N_MAX];
static int n_nodes;
static bool linkm[N_MAX][N_MAX];  /* a link between i and j */
static bool asked[N_MAX][N_MAX];  /* i asked for its link to j */
static bool pinned[N_MAX][N_MAX]; /* a client of i wants the link to j */
static bool dead[N_MAX];          /* links to it never come up */
static int unlinks[N_MAX];        /* links i dropped */
static int ups[N_MAX][N_MAX];     /* link-up events i saw for j */
static uint64_t born[N_MAX][N_MAX]; /* when the link came up */
static uint64_t heard[N_MAX][N_MAX]; /* when i last had a message of j */
static uint64_t refresh_us;       /* REFRESH_INTERVAL of new nodes */
static struct ev queue[Q_CAP];
static size_t q_head, q_len;
static uint64_t now_us = 1000000, last_tick_us;

static void
push(struct ev e)
{
	ck_assert_uint_lt(q_len, sizeof(queue) / sizeof(queue[0]));
	queue[(q_head + q_len) % Q_CAP] = e;
	q_len++;
}

static int
node_of(const struct dhtkey *k)
{
	for (int i = 0; i < n_nodes; i++)
		if (dhtkey_equal(&nodes[i].id, k))
			return i;
	return -1;
}

static int
env_send(void *cls, const struct dhtkey *peer, uint16_t type,
    const void *body, size_t len)
{
	struct node *n = cls;
	int to = node_of(peer);
	struct ev e = { .kind = EV_MSG, .from = n->idx, .to = to,
		.type = type, .len = len };

	if (to < 0 || !linkm[n->idx][to])
		return -ENOTCONN;
	e.body = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(e.body);
	memcpy(e.body, body, len);
	push(e);
	return 0;
}

static bool
env_linked(void *cls, const struct dhtkey *peer)
{
	int to = node_of(peer);

	return to >= 0 && linkm[((struct node *)cls)->idx][to];
}

/* Links a and b (a asked, if by_a); both hear of it. */
static void
make_link(int a, int b, bool by_a)
{
	asked[a][b] |= by_a;
	if (a == b || linkm[a][b])
		return;
	linkm[a][b] = linkm[b][a] = true;
	born[a][b] = born[b][a] = now_us;
	push((struct ev){ .kind = EV_UP, .from = a, .to = b });
	push((struct ev){ .kind = EV_UP, .from = b, .to = a });
}

static void
cut_link(int a, int b)
{
	if (!linkm[a][b])
		return;
	linkm[a][b] = linkm[b][a] = false;
	asked[a][b] = asked[b][a] = false;
	push((struct ev){ .kind = EV_DOWN, .from = a, .to = b });
	push((struct ev){ .kind = EV_DOWN, .from = b, .to = a });
}

/* A HELO here is the node's index in 2 bytes, which only this env reads;
 * a peer known to nobody has none. */
static int
env_link(void *cls, const struct dhtkey *peer, const void *helo,
    size_t helo_len)
{
	struct node *n = cls;
	int to = node_of(peer);

	(void)helo;
	(void)helo_len;
	if (to < 0)
		return -ENOENT;
	if (!dead[to] && !dead[n->idx])
		make_link(n->idx, to, true);
	return 0;
}

static int
env_unlink(void *cls, const struct dhtkey *peer)
{
	struct node *n = cls;
	int to = node_of(peer);

	ck_assert_int_ge(to, 0);
	ck_assert(linkm[n->idx][to]);
	/* The DHT drops only what the env lets it. */
	ck_assert(asked[n->idx][to] && !pinned[n->idx][to]);
	unlinks[n->idx]++;
	cut_link(n->idx, to);
	return 0;
}

static bool
env_may_unlink(void *cls, const struct dhtkey *peer)
{
	int me = ((struct node *)cls)->idx, to = node_of(peer);

	return to >= 0 && asked[me][to] && !pinned[me][to];
}

static size_t
env_helo(void *cls, const struct dhtkey *peer, uint8_t *buf, size_t size)
{
	int i = node_of(peer);

	(void)cls;
	if (i < 0 || size < 2)
		return 0;
	buf[0] = (uint8_t)(i >> 8);
	buf[1] = (uint8_t)i;
	return 2;
}

static size_t
env_own_helo(void *cls, uint8_t *buf, size_t size)
{
	return env_helo(NULL, &((struct node *)cls)->id, buf, size);
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

static struct block *
store_find(struct node *n, const struct dhtkey *key)
{
	for (size_t i = 0; i < n->n_store; i++)
		if (dhtkey_equal(&n->store[i].key, key))
			return &n->store[i];
	return NULL;
}

static bool
env_has(void *cls, const struct dhtkey *key)
{
	return store_find(cls, key) != NULL;
}

static int
env_put(void *cls, const struct dhtkey *key, const void *data, size_t len,
    uint64_t expiry, dht_store_done_fn *done, void *arg)
{
	struct node *n = cls;
	struct block *b = store_find(n, key);

	(void)expiry;
	if (b == NULL) {
		ck_assert_uint_lt(n->n_store, 4);
		b = &n->store[n->n_store++];
		b->key = *key;
		b->data = malloc(len);
		ck_assert_ptr_nonnull(b->data);
		memcpy(b->data, data, len);
		b->len = len;
	}
	push((struct ev){ .kind = EV_STORED, .to = n->idx, .done = done,
	    .arg = arg });
	return 0;
}

static int
env_get(void *cls, const struct dhtkey *key, dht_store_got_fn *got,
    void *arg)
{
	struct node *n = cls;

	push((struct ev){ .kind = EV_GOT, .to = n->idx, .got = got,
	    .arg = arg, .body = (uint8_t *)store_find(n, key) });
	return 0;
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

/* Node i with bucket size k; drops links unless core_choice (as under
 * LINK_POLICY = core, where env.unlink is NULL). */
static void
node_start(int i, unsigned k, unsigned spare, uint64_t grace_us,
    bool core_choice)
{
	struct node *n = &nodes[i];
	struct dht_env env = {
		.cls = n, .send = env_send, .linked = env_linked,
		.link = env_link, .unlink = env_unlink,
		.may_unlink = env_may_unlink, .own_helo = env_own_helo,
		.peer_helo = env_helo, .now_us = env_now, .wall_s = env_wall,
		.store_has = env_has, .store_put = env_put,
		.store_get = env_get, .stat = env_stat,
	};
	struct dht_cfg cfg;
	uint8_t seed[32];

	if (core_choice)
		env.unlink = NULL;
	memset(n, 0, sizeof(*n));
	n->idx = i;
	memset(seed, 0, sizeof(seed));
	seed[0] = (uint8_t)i;
	seed[1] = 0x5a;
	ck_assert_int_eq(identity_from_seed(seed, &n->ident), 0);
	dhtkey_from_peer(&n->ident->id, &n->id);
	n->stats = stats_new();
	ck_assert_ptr_nonnull(n->stats);
	env.ident = n->ident;
	dht_cfg_default(&cfg);
	cfg.k = k;
	cfg.per_net = 0;
	cfg.spare_links = spare;
	cfg.link_grace_us = grace_us;
	cfg.refresh_us = refresh_us;
	cfg.timeout_us = 3 * SEC;
	ck_assert_int_eq(dht_new(&env, &cfg, &n->dht), 0);
}

static void
net_start(int n, unsigned k, unsigned spare, uint64_t grace_us,
    bool core_choice)
{
	n_nodes = n;
	if (refresh_us == 0)
		refresh_us = 2 * SEC;
	memset(linkm, 0, sizeof(linkm));
	memset(asked, 0, sizeof(asked));
	memset(pinned, 0, sizeof(pinned));
	memset(dead, 0, sizeof(dead));
	memset(unlinks, 0, sizeof(unlinks));
	memset(ups, 0, sizeof(ups));
	memset(heard, 0, sizeof(heard));
	for (int i = 0; i < n; i++)
		node_start(i, k, spare, grace_us, core_choice);
}

static void
deliver(struct ev *e)
{
	struct node *to = &nodes[e->to];
	struct block *b = (struct block *)e->body;

	switch (e->kind) {
	case EV_MSG:
		if (linkm[e->from][e->to])
			heard[e->to][e->from] = now_us;
		if (linkm[e->from][e->to])
			dht_receive(to->dht, &nodes[e->from].id, e->type,
			    e->body, e->len);
		free(e->body);
		break;
	case EV_UP:
		if (linkm[e->from][e->to]) {
			ups[e->from][e->to]++;
			dht_peer_up(nodes[e->from].dht, &nodes[e->to].id, 0);
		}
		break;
	case EV_DOWN:
		if (!linkm[e->from][e->to])
			dht_peer_down(nodes[e->from].dht, &nodes[e->to].id);
		break;
	case EV_STORED:
		e->done(e->arg, 0);
		break;
	default: /* EV_GOT */
		if (b == NULL)
			e->got(e->arg, -ENOENT, NULL, 0, 0);
		else
			e->got(e->arg, 0, b->data, b->len, 0);
		break;
	}
}

/* Runs for ms of virtual time, each event taking 50 µs. */
static void
run_ms(uint64_t ms)
{
	uint64_t end = now_us + ms * 1000;

	while (now_us < end) {
		if (q_len > 0) {
			struct ev e = queue[q_head];

			q_head = (q_head + 1) % Q_CAP;
			q_len--;
			deliver(&e);
			now_us += 50;
		} else {
			now_us += 1000;
		}
		if (now_us - last_tick_us >= TICK_US) {
			last_tick_us = now_us;
			for (int i = 0; i < n_nodes; i++)
				dht_tick(nodes[i].dht);
		}
	}
}

static void
net_free(void)
{
	while (q_len > 0) {
		struct ev e = queue[q_head];

		q_head = (q_head + 1) % Q_CAP;
		q_len--;
		if (e.kind == EV_MSG)
			free(e.body);
		else if (e.kind == EV_STORED)
			e.done(e.arg, -ECANCELED);
		else if (e.kind == EV_GOT)
			e.got(e.arg, -ECANCELED, NULL, 0, 0);
	}
	for (int i = 0; i < n_nodes; i++) {
		dht_free(nodes[i].dht);
		identity_free(nodes[i].ident);
		stats_free(nodes[i].stats);
		for (size_t j = 0; j < nodes[i].n_store; j++)
			free(nodes[i].store[j].data);
	}
	n_nodes = 0;
	refresh_us = 0;
}

static bool
in_table(int i, int j)
{
	return rtable_get(dht_rtable(nodes[i].dht), &nodes[j].id) != NULL;
}

static unsigned
bucket_of(int i, int j)
{
	return dhtkey_common_prefix(&nodes[i].id, &nodes[j].id);
}

/* Up to max nodes other than 0 in node 0's bucket 0, into out. */
static int
far_half(int *out, int max)
{
	int n = 0;

	for (int j = 1; j < n_nodes && n < max; j++)
		if (bucket_of(0, j) == 0)
			out[n++] = j;
	return n;
}

/* A DHT message from a to b over their link (one that does not decode:
 * only its arrival matters here). */
static void
poke(int a, int b)
{
	uint8_t *body = malloc(1);

	ck_assert_ptr_nonnull(body);
	body[0] = 0;
	ck_assert(linkm[a][b]);
	push((struct ev){ .kind = EV_MSG, .from = a, .to = b,
	    .type = FERRY_MSG_DHT_FIND, .body = body, .len = 1 });
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
	for (int j = 1; j < n_nodes && near < 0; j++)
		if (bucket_of(0, j) > 0)
			near = j;
	ck_assert_int_gt(near, 0);
	for (int i = 0; i < 5; i++) {
		s[i] = far[i + 1];
		make_link(s[i], near, true);
	}
	make_link(0, far[0], true);
	run_ms(2000);
	ck_assert(in_table(0, far[0]));
	for (int i = 0; i < 4; i++)
		make_link(0, s[i], true);
	pin = far[6];
	make_link(0, pin, true);
	pinned[0][pin] = true;
	theirs = far[7];
	make_link(theirs, 0, true);
	run_ms(5000);
	/* Young: kept, but counted. */
	ck_assert_uint_eq(stat(0, "links_surplus"), 4);
	ck_assert_int_eq(unlinks[0], 0);
	/* s[2] and s[3] send node 0 something, s[3] last. */
	poke(s[2], 0);
	run_ms(1000);
	poke(s[3], 0);
	s0_links = stat(s[0], "links");
	run_ms(5000);
	/* 4 surplus, more than 2: those idle for LINK_GRACE go, s[2] and
	 * s[3] are in use. */
	ck_assert_int_eq(unlinks[0], 2);
	ck_assert_uint_eq(stat(0, "links_dropped"), 2);
	ck_assert_uint_eq(stat(0, "links_surplus"), 2);
	ck_assert(!linkm[0][s[0]] && !linkm[0][s[1]]);
	ck_assert(linkm[0][s[2]] && linkm[0][s[3]]);
	ck_assert(linkm[0][far[0]] && linkm[0][pin] && linkm[0][theirs]);
	/* The peers heard: their DHT counts the link down. */
	ck_assert_uint_eq(stat(s[0], "links"), s0_links - 1);
	/* SPARE_LINKS surplus links stay however idle. */
	run_ms(20000);
	ck_assert_int_eq(unlinks[0], 2);
	ck_assert(linkm[0][s[2]] && linkm[0][s[3]]);
	/* One more, 3 surplus: once idle for LINK_GRACE, the least
	 * recently used goes first (s[3]), and the next would go (to half
	 * of 2) were it idle as long; past that, back at SPARE_LINKS, the
	 * rest stay. */
	poke(s[3], 0);
	run_ms(1000);
	poke(s[2], 0);
	run_ms(1000);
	make_link(0, s[4], true);
	run_ms(9000);
	ck_assert_int_eq(unlinks[0], 3);
	ck_assert(!linkm[0][s[3]]);
	ck_assert(linkm[0][s[2]] && linkm[0][s[4]]);
	run_ms(20000);
	ck_assert_int_eq(unlinks[0], 3);
	ck_assert(linkm[0][s[2]] && linkm[0][s[4]]);
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
		make_link(0, far[i], true);
	run_ms(20000);
	for (int i = 0; i < 5; i++)
		ck_assert(linkm[0][far[i]]);
	ck_assert_int_eq(unlinks[0], 0);
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
	make_link(0, e, true);
	run_ms(500);
	make_link(r, 0, true); /* cached: the peer's link, not dropped */
	run_ms(500);
	ck_assert(in_table(0, e));
	ck_assert(!in_table(0, r));
	/* e drops the link (its own reasons); node 0 asks for it again. */
	cut_link(e, 0);
	run_ms(500);
	ck_assert(!linkm[0][e]);
	run_ms(35000);
	ck_assert(linkm[0][e]);
	ck_assert(asked[0][e]);
	ck_assert_uint_ge(stat(0, "links_made"), 1);
	/* Now e goes silent for good: three requests bring no link, it
	 * leaves, r takes its place (r's link stays up throughout). */
	dead[e] = true;
	cut_link(e, 0);
	run_ms(10 * 60 * 1000);
	ck_assert(!in_table(0, e));
	ck_assert(in_table(0, r));
	ck_assert(linkm[0][r]);
	net_free();
}
END_TEST

/* Every node knows node 0 only, and links to it (BOOTSTRAP). */
static void
net_join(int n, unsigned k, unsigned spare, uint64_t grace_us)
{
	net_start(n, k, spare, grace_us, false);
	for (int i = 1; i < n_nodes; i++)
		make_link(i, 0, true);
}

static int
count_links(void)
{
	int n = 0;

	for (int i = 0; i < n_nodes; i++)
		for (int j = i + 1; j < n_nodes; j++)
			n += linkm[i][j];
	return n;
}

/* Each table entry is linked, and each link a node asked for is its
 * table's, or has not been idle for LINK_GRACE (grace_us) and a pass. */
static void
check_table_choice(uint64_t grace_us)
{
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++) {
			if (i == j)
				continue;
			if (in_table(i, j))
				ck_assert_msg(linkm[i][j],
				    "node %d: entry %d not linked", i, j);
			else
				ck_assert_msg(!linkm[i][j] || !asked[i][j] ||
				        now_us - born[i][j] <= grace_us + SEC ||
				        now_us - heard[i][j] <= grace_us + SEC,
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

/* The sum of counter name over the nodes. */
static uint64_t
stat_sum(const char *name)
{
	uint64_t n = 0;

	for (int i = 0; i < n_nodes; i++)
		n += stat(i, name);
	return n;
}

/* Table entries of each node, and the link-ups each has seen for them. */
struct snapshot {
	bool entry[N_MAX][N_MAX];
	int ups[N_MAX][N_MAX];
};

static void
snapshot_take(struct snapshot *sn)
{
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++) {
			sn->entry[i][j] = i != j && in_table(i, j);
			sn->ups[i][j] = ups[i][j];
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
	ck_assert_uint_gt(stat_sum("links_dropped"), 0);
	snapshot_take(&before);
	timeouts = stat_sum("timeouts");
	lost = stat_sum("answers_lost");
	requests = stat_sum("requests_out");
	run_ms(60 * 1000);
	for (int i = 0; i < n_nodes; i++)
		for (int j = 0; j < n_nodes; j++) {
			ck_assert_msg(before.entry[i][j] == (i != j &&
			                  in_table(i, j)),
			    "node %d's table changed (%d)", i, j);
			if (!before.entry[i][j] ||
			    ups[i][j] == before.ups[i][j])
				continue;
			/* Once at most: the peer dropped a link it had asked
			 * for, and i asked again, for good. */
			ck_assert_msg(ups[i][j] == before.ups[i][j] + 1 &&
			        linkm[i][j] && asked[i][j],
			    "node %d's link to entry %d came and went", i, j);
		}
	check_table_choice(5 * SEC);
	ck_assert_uint_gt(stat_sum("requests_out") - requests, 1000);
	ck_assert_uint_eq(stat_sum("timeouts"), timeouts);
	ck_assert_uint_eq(stat_sum("answers_lost"), lost);
	randombytes_buf(key.b, sizeof(key.b));
	for (int i = 0; i < n_nodes; i++) {
		found[i].done = false;
		ck_assert_int_eq(dht_find(nodes[i].dht, &key, 8, on_find,
		                     &found[i]),
		    0);
	}
	run_ms(5000);
	/* Each ends well with at least k peers; 8 are asked for, but the
	 * tables near a random key may know fewer (k = 2 here). */
	for (int i = 0; i < n_nodes; i++)
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
	for (int i = 0; i < n_nodes; i++) {
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
	make_link(far[0], far[1], true);
	make_link(far[0], far[2], true);
	run_ms(2000);
	make_link(0, far[0], true);
	run_ms(5000);
	ck_assert_uint_ge(stat(0, "requests_out"), 1);
	ck_assert_uint_eq(stat(0, "links_asked"), 0);
	for (int j = 1; j < 3; j++)
		ck_assert_msg(!asked[0][far[j]],
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
