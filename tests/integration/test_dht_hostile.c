/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * A hostile DHT peer among real ferryd processes (issue 12, "Bad
 * input"): a test helper speaking the wire (tests/lib/dhtpeer.h) links
 * to 8 daemons and is an ordinary neighbour in their tables, and the
 * test picks blocks whose keys are closer to its id than to any daemon's,
 * so that it is every daemon's next hop toward them. It then
 *   - answers GETs with a block whose bytes do not hash to the key: the
 *     requester counts dht.blocks_bad, asks the holders directly, and
 *     the GET returns the right block;
 *   - answers PUTs with forged receipts (signed by another key, for
 *     another PUT, with a broken signature) while passing the PUT on to
 *     the honest closest as a replica: the forgeries are counted in
 *     dht.receipts_bad and never count, the PUT succeeds on the honest
 *     receipts, and, when it passes it to too few, fails with -EIO
 *     saying how many honest receipts came;
 *   - answers PUTs with receipts that are valid but signed by keys made
 *     up for them, in the name of storers that do not exist: none
 *     counts (dht.receipts_implausible);
 *   - floods a daemon with GETs and PUTs: dht.rate_limited counts what
 *     is over its allowance ([dht] REQUEST_RATE), and meanwhile honest
 *     PUTs and GETs through that daemon succeed.
 * The daemons leave links to the DHT ([core] LINK_POLICY = manual), as
 * a DHT deployment does: the hostile peer is then linked to exactly the
 * daemons it links to itself (it gives nobody a HELO to link to it by),
 * and the honest tables are complete before it comes, so that the test
 * knows every next hop and holder.
 */
/* ctest: TIMEOUT=600 RUN_SERIAL=1 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "lib/buf.h"
#include "lib/wire.h"
#include "core/identity.h"
#include "dht/dhtmsg.h"
#include "adv.h"
#include "dhtpeer.h"
#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"
#include "wirelink.h"

#define N         8
#define REPL      3
#define RATE      100 /* [dht] REQUEST_RATE: bursts of twice that */
#define LINK_MS   30000
#define BLOCK_LEN 512 /* a PUT of it fits one frame to the peer */
#define NEAR_BITS 12  /* bits a chosen key shares with the peer's id */
#define HOSTILE   0x0bad0d47ull /* the peer's identity seed */
#define STRANGER  0x57a4ull     /* a key that stores nothing */
#define FLOOD     3000          /* requests the flood sends */
#define STR_(x)   #x
#define STR(x)    STR_(x)
#define DHT_CFG                                                                \
	"[core]\nLINK_POLICY = manual\n"                                       \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\nREQUEST_RATE = " STR(RATE) "\n"

static struct harness *h;
static struct harness_daemon *d[N];
static struct dhtpeer *bad;
static struct dhtkey bad_id;

/* What the hostile peer does: block and key are set before its thread
 * starts, the rest may change while it runs. */
static struct {
	uint8_t block[BLOCK_LEN]; /* GET of its key: these bytes, one flipped */
	struct dhtkey key;
	atomic_uint forward; /* PUT: replicas to this many honest closest */
	atomic_bool forge;   /* PUT: forged receipts to the requester */
	struct identity *stranger;
	atomic_bool invent;   /* PUT: receipts of storers made up for it */
	atomic_uint forged;   /* receipts forged so far */
	atomic_uint invented; /* receipts of made-up storers so far */
	atomic_uint wrong;    /* wrong blocks sent so far */
} act;

/* Waits until every daemon's table holds want entries. */
static void
wait_tables(uint32_t want)
{
	dhtcheck_wait_tables(h, d, N, want, LINK_MS);
}

/* 8 daemons that know d0's HELO, with full tables; the hostile peer made
 * but not linked yet. */
static void
setup(void)
{
	ck_assert_int_eq(harness_new("dht-hostile", &h), 0);
	mesh_start(h, d, N, "udp", DHT_CFG);
	wait_tables(N - 1);
	ck_assert_int_eq(dhtpeer_new(HOSTILE, &bad), 0);
	dhtkey_from_peer(&dhtpeer_ident(bad)->id, &bad_id);
	memset(&act, 0, sizeof(act));
	act.stranger = adv_identity(STRANGER);
}

static void
teardown(void)
{
	dhtpeer_free(bad);
	bad = NULL;
	identity_free(act.stranger);
	harness_free(h);
	h = NULL;
}

static struct dhtkey
key_of(const struct harness_daemon *dd)
{
	struct dhtkey k;

	dhtkey_from_peer(&dd->id, &k);
	return k;
}

/* The honest daemons, closest to key first, into order. */
static void
honest_closest(const struct dhtkey *key, int *order)
{
	for (int i = 0; i < N; i++) {
		struct dhtkey a = key_of(d[i]);
		int j = i;

		/* Insertion: the ones farther than d[i] move up one. */
		for (; j > 0; j--) {
			struct dhtkey b = key_of(d[order[j - 1]]);

			if (dhtkey_closer(key, &a, &b) >= 0)
				break;
			order[j] = order[j - 1];
		}
		order[j] = i;
	}
}

/* How many of the daemons and the hostile peer are closer to key than
 * id. */
static int
rank_of(const struct dhtkey *key, const struct dhtkey *id)
{
	int closer = dhtkey_closer(key, &bad_id, id) < 0;

	for (int i = 0; i < N; i++) {
		struct dhtkey other = key_of(d[i]);

		closer += dhtkey_closer(key, &other, id) < 0;
	}
	return closer;
}

/* Fills data with random bytes until its key shares at least bits with
 * near's id and near is the closest to it of the daemons and the hostile
 * peer. */
static void
block_near(const struct dhtkey *near, unsigned bits, uint8_t *data, size_t len,
    struct ferry_dht_key *ret)
{
	struct dhtkey k;

	for (unsigned tries = 0;; tries++) {
		ck_assert_uint_lt(tries, 1u << 24);
		randombytes_buf(data, len);
		dhtkey_of_block(data, len, &k);
		if (dhtkey_common_prefix(&k, near) >= bits &&
		    rank_of(&k, near) == 0)
			break;
	}
	memcpy(ret->bytes, k.b, sizeof(ret->bytes));
}

/* Random bytes whose key has the hostile peer neither on the way nor
 * among its holders. */
static void
block_away(uint8_t *data, size_t len)
{
	struct dhtkey k;

	do {
		randombytes_buf(data, len);
		dhtkey_of_block(data, len, &k);
	} while (rank_of(&k, &bad_id) < REPL);
}

static bool
is_among(const struct ferry_peer_id *id, const int *order, int n)
{
	for (int i = 0; i < n; i++)
		if (memcmp(id, &d[order[i]]->id, sizeof(*id)) == 0)
			return true;
	return false;
}

/* --- the hostile peer's answers ------------------------------------- */

static void
answer_fail(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req,
    uint16_t code)
{
	struct dhtmsg_ans a;

	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_FAIL;
	a.code = code;
	(void)dhtpeer_answer(p, i, req, &a);
}

/* A BLOCK that does not hash to the key: the block asked for with one
 * byte flipped when it is act.key, else random bytes. */
static void
answer_wrong_block(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req)
{
	uint8_t data[BLOCK_LEN];
	struct dhtmsg_ans a;

	if (dhtkey_equal(&req->key, &act.key)) {
		memcpy(data, act.block, sizeof(data));
		data[BLOCK_LEN / 2] ^= 0x20;
	} else {
		randombytes_buf(data, sizeof(data));
	}
	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_BLOCK;
	a.block = data;
	a.block_len = sizeof(data);
	if (dhtpeer_answer(p, i, req, &a) == 0)
		atomic_fetch_add(&act.wrong, 1);
}

/* The PUT passed on, as the peer it ends at does, to the act.forward
 * honest daemons closest to its key, marked as a replica to store. */
static void
pass_replicas(struct dhtpeer *p, const struct dhtmsg_req *req)
{
	struct dhtmsg_req rep = *req;
	int order[N];
	struct buf out;

	rep.flags = DHTMSG_F_REPLICA;
	rep.hops_left = 0;
	honest_closest(&req->key, order);
	buf_init(&out);
	ck_assert_int_eq(dhtmsg_req_encode(&rep, &out), 0);
	for (unsigned j = 0; j < atomic_load(&act.forward); j++) {
		struct dhtkey id = key_of(d[order[j]]);
		int to = dhtpeer_link_of(p, &id);

		if (to >= 0)
			(void)dhtpeer_send(p, (unsigned)to, rep.type,
			    buf_head(&out), buf_size(&out));
	}
	buf_done(&out);
}

/* Three receipts that must not count: signed by another key, for
 * another PUT, and with a broken signature. */
static void
forge_receipts(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req)
{
	const struct identity *self = dhtpeer_ident(p);
	uint8_t put_hash[DHTMSG_HASH_LEN], other[DHTMSG_HASH_LEN];
	struct dhtmsg_put put2 = req->put;
	struct dhtmsg_ans a;

	dhtmsg_put_hash(&req->key, &req->put, put_hash);
	put2.expiry++;
	dhtmsg_put_hash(&req->key, &put2, other);
	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_RECEIPT;
	/* Signed by a stranger's key: not the responder's. */
	dhtmsg_receipt_sign(act.stranger, &req->key, put_hash, req->put.expiry,
	    &a.receipt);
	if (dhtpeer_answer(p, i, req, &a) == 0)
		atomic_fetch_add(&act.forged, 1);
	/* Ours, but for another PUT of the same key. */
	dhtmsg_receipt_sign(self, &req->key, other, req->put.expiry,
	    &a.receipt);
	if (dhtpeer_answer(p, i, req, &a) == 0)
		atomic_fetch_add(&act.forged, 1);
	/* Ours for this PUT, the signature broken. */
	dhtmsg_receipt_sign(self, &req->key, put_hash, req->put.expiry,
	    &a.receipt);
	a.receipt.sig[7] ^= 0x01;
	if (dhtpeer_answer(p, i, req, &a) == 0)
		atomic_fetch_add(&act.forged, 1);
}

/* REPL receipts, each valid for this PUT and signed by a key made up for
 * it, in the name of the peer id of that key: storers that do not
 * exist. */
static void
invent_storers(struct dhtpeer *p, unsigned i, const struct dhtmsg_req *req)
{
	uint8_t put_hash[DHTMSG_HASH_LEN], seed[32];
	struct identity *made_up;
	struct dhtmsg_ans a;
	struct dhtkey id;

	dhtmsg_put_hash(&req->key, &req->put, put_hash);
	for (int j = 0; j < REPL; j++) {
		randombytes_buf(seed, sizeof(seed));
		if (identity_from_seed(seed, &made_up) < 0)
			continue;
		memset(&a, 0, sizeof(a));
		a.type = FERRY_MSG_DHT_RECEIPT;
		dhtmsg_receipt_sign(made_up, &req->key, put_hash,
		    req->put.expiry, &a.receipt);
		dhtkey_from_peer(&made_up->id, &id);
		if (dhtpeer_answer_as(p, i, req, &a, &id) == 0)
			atomic_fetch_add(&act.invented, 1);
		identity_free(made_up);
	}
}

static void
on_request(void *cls, struct dhtpeer *p, unsigned i,
    const struct dhtmsg_req *req)
{
	struct dhtmsg_ans a;

	(void)cls;
	switch (req->type) {
	case FERRY_MSG_DHT_FIND:
		/* Knows nobody: the daemons' lookups through it end. */
		memset(&a, 0, sizeof(a));
		a.type = FERRY_MSG_DHT_NODES;
		(void)dhtpeer_answer(p, i, req, &a);
		break;
	case FERRY_MSG_DHT_GET:
		answer_wrong_block(p, i, req);
		break;
	default:
		if (req->flags & DHTMSG_F_REPLICA) {
			answer_fail(p, i, req, DHTMSG_REFUSED);
			break;
		}
		pass_replicas(p, req);
		if (atomic_load(&act.forge))
			forge_receipts(p, i, req);
		if (atomic_load(&act.invent))
			invent_storers(p, i, req);
		break;
	}
}

/* Links the hostile peer to every daemon and waits until each has it in
 * its table. */
static void
link_hostile(void)
{
	for (int i = 0; i < N; i++)
		if (dhtpeer_link(bad, d[i]) != 0) {
			harness_dump_logs(h);
			ck_abort_msg("the hostile peer could not link to d%d",
			    i);
		}
	ck_assert_int_eq(dhtpeer_start(bad, on_request, NULL), 0);
	wait_tables(N);
}

static void
get_checked(int i, const struct ferry_dht_key *key, const uint8_t *data,
    size_t len)
{
	struct ferry_client *c = dhtcheck_client(d[i]);
	uint8_t *got;
	size_t n;
	int r = ferry_dht_get(c, key, &got, &n);

	ferry_client_close(c);
	ck_assert_msg(r == 0, "GET from d%d: %s", i, strerror(-r));
	ck_assert_uint_eq(n, len);
	ck_assert_int_eq(memcmp(got, data, len), 0);
	free(got);
}

/* --- the tests ------------------------------------------------------- */

/*
 * A block held by the 3 honest closest, its key closer still to the
 * hostile peer, which every daemon asks first and which answers with
 * wrong bytes: each GET counts the bad block, asks the holders and
 * returns the right bytes.
 */
START_TEST(test_wrong_block)
{
	struct ferry_dht_key key;
	struct ferry_dht_receipt *r;
	struct ferry_client *c;
	int order[N];
	size_t n;

	block_near(&bad_id, NEAR_BITS, act.block, sizeof(act.block), &key);
	memcpy(act.key.b, key.bytes, sizeof(act.key.b));
	honest_closest(&act.key, order);
	c = dhtcheck_client(d[order[N - 1]]);
	ck_assert_int_eq(ferry_dht_put(c, act.block, sizeof(act.block), REPL, 0,
	                     &key, &r, &n),
	    0);
	ferry_client_close(c);
	ck_assert_uint_eq(n, REPL);
	for (size_t j = 0; j < n; j++)
		ck_assert(is_among(&r[j].storer, order, REPL));
	free(r);
	link_hostile();
	for (int j = REPL; j < N; j++) {
		int i = order[j];
		uint64_t bad0 = mesh_stat(d[i], "dht.blocks_bad");
		uint64_t retries0 = mesh_stat(d[i], "dht.retries");
		uint64_t gets0 = dhtpeer_requests(bad, FERRY_MSG_DHT_GET);

		get_checked(i, &key, act.block, sizeof(act.block));
		ck_assert_uint_gt(dhtpeer_requests(bad, FERRY_MSG_DHT_GET),
		    gets0);
		ck_assert_uint_ge(mesh_stat(d[i], "dht.blocks_bad"), bad0 + 1);
		ck_assert_uint_ge(mesh_stat(d[i], "dht.retries"), retries0 + 1);
	}
	/* The holders answer from their own store. */
	for (int j = 0; j < REPL; j++)
		get_checked(order[j], &key, act.block, sizeof(act.block));
	printf("dht-hostile: %u wrong blocks sent, every GET got the right "
	       "one\n",
	    atomic_load(&act.wrong));
}
END_TEST

/* A PUT from d[from] of a block near the hostile peer; returns what
 * ferry_dht_put did, with the receipts in *ret and their count. */
static int
put_near(int from, uint8_t *data, struct ferry_dht_key *key,
    struct ferry_dht_receipt **ret, size_t *ret_n)
{
	struct ferry_client *c = dhtcheck_client(d[from]);
	int r;

	block_near(&bad_id, NEAR_BITS, data, BLOCK_LEN, key);
	r = ferry_dht_put(c, data, BLOCK_LEN, REPL, 0, key, ret, ret_n);
	ferry_client_close(c);
	return r;
}

/*
 * The hostile peer is every daemon's next hop toward the key: it sends
 * three forged receipts and passes the PUT on to the 3 honest closest,
 * whose receipts make it succeed; passed on to 2 only, the PUT fails
 * with -EIO and the 2 honest receipts. No forgery counts.
 */
START_TEST(test_forged_receipts)
{
	uint8_t data[BLOCK_LEN];
	struct ferry_dht_receipt *r;
	struct ferry_dht_key key;
	struct dhtkey k;
	int order[N], from;
	unsigned forged0;
	uint64_t bad0;
	size_t n;

	atomic_store(&act.forge, true);
	atomic_store(&act.forward, REPL);
	link_hostile();
	from = 0;
	bad0 = mesh_stat(d[from], "dht.receipts_bad");
	ck_assert_int_eq(put_near(from, data, &key, &r, &n), 0);
	ck_assert_uint_eq(n, REPL);
	memcpy(k.b, key.bytes, sizeof(k.b));
	honest_closest(&k, order);
	for (size_t j = 0; j < n; j++) {
		ck_assert_int_eq(ferry_dht_receipt_verify(&key, &r[j]), 0);
		ck_assert(is_among(&r[j].storer, order, REPL));
	}
	free(r);
	/* The honest receipts may overtake the last forgeries. Three for
	 * each attempt of the PUT that came its way (one, unless the first
	 * had no answer in time). */
	for (int i = 0; i < 100 && atomic_load(&act.forged) < 3; i++)
		harness_sleep_ms(50);
	ck_assert_uint_ge(atomic_load(&act.forged), 3);
	ck_assert(mesh_wait_stat(d[from], "dht.receipts_bad",
	    bad0 + atomic_load(&act.forged), 5000));
	for (int j = 0; j < REPL; j++)
		ck_assert_uint_eq(dhtcheck_figures(d[order[j]]).blocks, 1);

	/* Too few honest storers: the PUT says how many. Each of its
	 * attempts comes the hostile peer's way (it is every daemon's next
	 * hop), and brings three more forgeries. */
	atomic_store(&act.forward, REPL - 1);
	bad0 = mesh_stat(d[from], "dht.receipts_bad");
	forged0 = atomic_load(&act.forged);
	ck_assert_int_eq(put_near(from, data, &key, &r, &n), -EIO);
	ck_assert_uint_eq(n, REPL - 1);
	memcpy(k.b, key.bytes, sizeof(k.b));
	honest_closest(&k, order);
	for (size_t j = 0; j < n; j++) {
		ck_assert_int_eq(ferry_dht_receipt_verify(&key, &r[j]), 0);
		ck_assert(is_among(&r[j].storer, order, REPL - 1));
	}
	free(r);
	ck_assert_uint_gt(atomic_load(&act.forged), forged0);
	ck_assert(mesh_wait_stat(d[from], "dht.receipts_bad",
	    bad0 + atomic_load(&act.forged) - forged0, 5000));
	printf("dht-hostile: %u forged receipts sent, none counted\n",
	    atomic_load(&act.forged));
}
END_TEST

/*
 * The hostile peer, every daemon's next hop toward the key, passes the
 * PUT on to 2 honest storers and sends receipts of its own making, each
 * valid for the PUT and signed by a key made up for it, in the name of
 * storers that do not exist: the requester cannot vouch for any (none
 * sent its receipt over its own link, is linked to it or in its table),
 * so none counts; the PUT fails with -EIO and the 2 honest receipts, and
 * the made-up ones show in dht.receipts_implausible.
 */
START_TEST(test_made_up_storers)
{
	uint8_t data[BLOCK_LEN];
	struct ferry_dht_receipt *r;
	struct ferry_dht_key key;
	uint64_t implausible0;
	struct dhtkey k;
	int order[N], from = 0;
	size_t n;

	atomic_store(&act.invent, true);
	atomic_store(&act.forward, REPL - 1);
	link_hostile();
	implausible0 = mesh_stat(d[from], "dht.receipts_implausible");
	ck_assert_int_eq(put_near(from, data, &key, &r, &n), -EIO);
	ck_assert_uint_eq(n, REPL - 1);
	memcpy(k.b, key.bytes, sizeof(k.b));
	honest_closest(&k, order);
	for (size_t j = 0; j < n; j++) {
		ck_assert_int_eq(ferry_dht_receipt_verify(&key, &r[j]), 0);
		ck_assert(is_among(&r[j].storer, order, REPL - 1));
	}
	free(r);
	ck_assert_uint_ge(atomic_load(&act.invented), REPL);
	ck_assert(mesh_wait_stat(d[from], "dht.receipts_implausible",
	    implausible0 + REPL, 5000));
	printf("dht-hostile: %u receipts of made-up storers sent, %llu "
	       "counted as implausible, none as a storer\n",
	    atomic_load(&act.invented),
	    (unsigned long long)(mesh_stat(d[from],
	                             "dht.receipts_implausible") -
	        implausible0));
}
END_TEST

/* The flood, from its own thread: FLOOD requests to one daemon, three
 * GETs of random keys to one PUT of a random block signed by the peer,
 * marked as a replica to store, packed into frames and paced. */
struct flood {
	unsigned to;      /* the victim's link */
	unsigned sent;    /* requests sent */
	uint64_t took_ms; /* how long sending them took */
};

static size_t
flood_request(unsigned n, uint8_t *out, size_t max)
{
	uint8_t block[64];
	struct dhtmsg_req req;
	struct buf body;
	int len;

	memset(&req, 0, sizeof(req));
	randombytes_buf(&req.req_id, sizeof(req.req_id));
	req.requester = bad_id;
	req.hops_left = 32;
	if (n % 4 == 3) {
		req.type = FERRY_MSG_DHT_PUT;
		req.flags = DHTMSG_F_REPLICA;
		randombytes_buf(block, sizeof(block));
		dhtkey_of_block(block, sizeof(block), &req.key);
		req.put.replication = 1;
		req.put.expiry = (uint64_t)time(NULL) + 3600;
		req.put.block = block;
		req.put.block_len = sizeof(block);
		dhtmsg_put_sign(dhtpeer_ident(bad), &req.key, &req.put);
	} else {
		req.type = FERRY_MSG_DHT_GET;
		randombytes_buf(req.key.b, sizeof(req.key.b));
	}
	/* No ck_assert on this thread: a failure shows as fewer sent. */
	buf_init(&body);
	len = dhtmsg_req_encode(&req, &body);
	if (len == 0)
		len = wirelink_msg(out, max, req.type, buf_head(&body),
		    buf_size(&body));
	buf_done(&body);
	return len > 0 ? (size_t)len : 0;
}

static void *
flood_run(void *arg)
{
	struct flood *f = arg;
	uint64_t t0 = harness_now_ms();
	uint8_t inner[1400];
	size_t used = 0, len;
	unsigned frames = 0;

	while (f->sent < FLOOD) {
		len =
		    flood_request(f->sent, inner + used, sizeof(inner) - used);
		if (len > 0) {
			used += len;
			f->sent++;
			continue;
		}
		if (used == 0)
			break;
		(void)dhtpeer_send_inner(bad, f->to, inner, used);
		used = 0;
		/* 5 frames of some 11 requests each, then a pause: about
		 * 5000 requests a second, 50 times RATE. */
		if (++frames % 5 == 0)
			harness_sleep_ms(10);
	}
	if (used > 0)
		(void)dhtpeer_send_inner(bad, f->to, inner, used);
	f->took_ms = harness_now_ms() - t0;
	return NULL;
}

/* When d0's dht.rate_limited last moved, as far as polling sees: once
 * it has stood still for half a second. Never earlier than the truth. */
static uint64_t
flood_settled(uint64_t t0)
{
	uint64_t last = mesh_stat(d[0], "dht.rate_limited");
	uint64_t at = harness_now_ms(), v;

	while (harness_now_ms() - at < 500 && harness_now_ms() - t0 < 30000) {
		harness_sleep_ms(50);
		v = mesh_stat(d[0], "dht.rate_limited");
		if (v != last) {
			last = v;
			at = harness_now_ms();
		}
	}
	return at;
}

/*
 * The hostile peer floods d0 with requests at some 50 times its
 * allowance; meanwhile d0's own client puts a block, and every other
 * daemon gets a block that d0 holds, through d0. What went over the
 * allowance is counted and dropped.
 */
START_TEST(test_flood)
{
	static uint8_t mine[N][BLOCK_LEN];
	uint8_t held[BLOCK_LEN];
	struct ferry_dht_key key, k2;
	struct ferry_dht_receipt *r;
	struct ferry_client *c;
	struct dhtkey v = key_of(d[0]);
	uint64_t limited0, in0, limited, allowed, t0, settled;
	struct flood f = { 0 };
	pthread_t t;
	size_t n;

	link_hostile();
	/* A block whose closest peer is d0, stored there alone: every
	 * other daemon's GET goes to d0. */
	block_near(&v, 0, held, sizeof(held), &key);
	c = dhtcheck_client(d[1]);
	ck_assert_int_eq(ferry_dht_put(c, held, sizeof(held), 1, 0, &key, &r,
	                     &n),
	    0);
	ferry_client_close(c);
	free(r);
	ck_assert_uint_eq(dhtcheck_figures(d[0]).blocks, 1);
	limited0 = mesh_stat(d[0], "dht.rate_limited");
	in0 = mesh_stat(d[0], "dht.requests_in");
	f.to = (unsigned)dhtpeer_link_of(bad, &v);
	t0 = harness_now_ms();
	ck_assert_int_eq(pthread_create(&t, NULL, flood_run, &f), 0);
	for (int i = 1; i < N; i++) {
		c = dhtcheck_client(d[0]);
		block_away(mine[i], sizeof(mine[i]));
		ck_assert_int_eq(ferry_dht_put(c, mine[i], sizeof(mine[i]),
		                     REPL, 0, &k2, &r, &n),
		    0);
		ferry_client_close(c);
		ck_assert_uint_eq(n, REPL);
		free(r);
		get_checked(i, &key, held, sizeof(held));
	}
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(f.sent, FLOOD);
	/* d0 has taken the flood once its count stops moving; it cannot
	 * have read a request of it after that or before t0. */
	settled = flood_settled(t0);
	limited = mesh_stat(d[0], "dht.rate_limited") - limited0;
	/* Its allowance: a burst of 2 * RATE, and RATE a second. */
	allowed = 2 * RATE + RATE * ((settled - t0) / 1000 + 1);
	printf("dht-hostile: flood of %u requests sent in %llu ms, taken in "
	       "%llu ms: %llu limited (at least %llu expected), d0 took %llu "
	       "requests meanwhile (honest ones included)\n",
	    f.sent, (unsigned long long)f.took_ms,
	    (unsigned long long)(settled - t0), (unsigned long long)limited,
	    (unsigned long long)(FLOOD - allowed),
	    (unsigned long long)(mesh_stat(d[0], "dht.requests_in") - in0));
	ck_assert_uint_ge(limited, FLOOD - allowed);
	ck_assert_uint_le(limited, FLOOD);
	/* d0 still serves. */
	for (int i = 1; i < N; i++)
		get_checked(i, &key, held, sizeof(held));
}
END_TEST

static Suite *
dht_hostile_suite(void)
{
	Suite *s = suite_create("dht_hostile");
	TCase *tc = tcase_create("hostile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_wrong_block);
	tcase_add_test(tc, test_forged_receipts);
	tcase_add_test(tc, test_made_up_storers);
	tcase_add_test(tc, test_flood);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(dht_hostile_suite());
	int failed;

	if (sodium_init() < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
