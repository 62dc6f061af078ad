/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Signed records at a topic (src/dht/dht_records.c, dhtrec.c) on the
 * fake network of real DHT nodes (tests/lib/dhtsim.c), whose records
 * store keeps them by the DHT's own rule. Checked: records announced by
 * several nodes are listed by another, each from its signer, stored at
 * exactly the REPLICATION closest nodes; a newer announcement replaces
 * the older everywhere, and the older passed on again is refused as
 * stale; records expire; a topic keeps RECORDS_PER_TOPIC, the latest
 * expiring, and refuses one that would expire before all of them; an
 * RPUT or a RECORDS entry with a bad signature is counted and dropped;
 * a record of someone else's is relayed unchanged.
 */
/* unit-link: ferry_testlib */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <sodium.h>

#include "core/identity.h"
#include "dht/dht.h"
#include "dht/dht_int.h"
#include "dhtsim.h"
#include "unit.h"

#define N_NODES 24

static struct dhtsim *sim;

/* What a request's callback saw; records with their values copied. */
struct outcome {
	bool done;
	int status;
	unsigned receipts, answered;
	size_t n;
	struct dhtrec recs[DHTMSG_RECORDS_MAX];
	uint8_t values[DHTMSG_RECORDS_MAX][DHTREC_VALUE_MAX];
};

static void
on_done(void *cls, const struct dht_result *r)
{
	struct outcome *o = cls;

	ck_assert(!o->done);
	o->done = true;
	o->status = r->status;
	o->receipts = r->receipts;
	o->answered = r->answered;
	o->n = r->n_records;
	ck_assert_uint_le(o->n, DHTMSG_RECORDS_MAX);
	for (size_t i = 0; i < o->n; i++) {
		o->recs[i] = r->records[i];
		/* The requester checked each: so does the test. */
		ck_assert_int_eq(dhtrec_verify(&r->records[i]), 0);
		ck_assert(dhtkey_equal(&r->records[i].topic, &r->key));
		if (r->records[i].value_len > 0)
			memcpy(o->values[i], r->records[i].value,
			    r->records[i].value_len);
		o->recs[i].value = o->values[i];
	}
}

static void
wait_for(struct outcome *o)
{
	for (int i = 0; i < 150 && !o->done; i++)
		dhtsim_run_ms(sim, 100);
	ck_assert_msg(o->done, "no outcome in 15 s");
}

static void
net_start(unsigned per_topic)
{
	struct dhtsim_cfg cfg;

	dhtsim_cfg_default(&cfg);
	cfg.seed = 0x5ec0;
	cfg.dht.records_per_topic = per_topic;
	ck_assert_int_eq(dhtsim_new(&cfg, N_NODES, &sim), 0);
	for (int i = 1; i < sim->n; i++)
		ck_assert_int_eq(dhtsim_link(sim, i, 0), 0);
	dhtsim_run_ms(sim, 60000);
}

static void
net_free(void)
{
	dhtsim_free(sim);
	sim = NULL;
}

static uint64_t
wall(void)
{
	return DHTSIM_WALL0_S + sim->now_us / 1000000;
}

static void
topic_of(const char *name, struct dhtkey *ret)
{
	dhtkey_of_block(name, strlen(name), ret);
}

/* Node i announces value at topic until expiry; the outcome's status. */
static int
announce(int i, const struct dhtkey *topic, const char *value, uint64_t expiry)
{
	struct outcome o;

	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_announce(sim->nodes[i].dht, topic, value,
	                     strlen(value), expiry, on_done, &o),
	    0);
	wait_for(&o);
	return o.status;
}

/* Node i lists topic into o. */
static void
list(int i, const struct dhtkey *topic, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	ck_assert_int_eq(dht_records(sim->nodes[i].dht, topic, on_done, o), 0);
	wait_for(o);
	ck_assert_int_eq(o->status, 0);
}

/* The record of node i's key in o, or NULL. */
static const struct dhtrec *
rec_of(const struct outcome *o, int i)
{
	for (size_t j = 0; j < o->n; j++)
		if (memcmp(o->recs[j].signer, sim->nodes[i].ident->pk,
		        FERRY_PUBKEY_LEN) == 0)
			return &o->recs[j];
	return NULL;
}

static bool
value_is(const struct dhtrec *r, const char *v)
{
	return r != NULL && r->value_len == strlen(v) &&
	    memcmp(r->value, v, r->value_len) == 0;
}

/* How many nodes hold records of topic. */
static int
holders(const struct dhtkey *topic)
{
	int n = 0;

	for (int i = 0; i < sim->n; i++)
		n += dhtsim_records(sim, i, topic, NULL, NULL) > 0;
	return n;
}

START_TEST(test_announce_list)
{
	static const int signers[] = { 3, 8, 13, 21 };
	char value[32];
	struct dhtkey topic;
	struct outcome o;

	net_start(DHTMSG_RECORDS_MAX);
	topic_of("ferry intermediaries", &topic);
	for (size_t k = 0; k < 4; k++) {
		snprintf(value, sizeof(value), "https://node%d.example/",
		    signers[k]);
		ck_assert_int_eq(announce(signers[k], &topic, value,
		                     wall() + 3600),
		    0);
	}
	ck_assert_int_eq(holders(&topic), 3);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "records_stored"), 12);
	list(17, &topic, &o);
	ck_assert_uint_eq(o.n, 4);
	ck_assert_uint_eq(o.answered, 3);
	for (size_t k = 0; k < 4; k++) {
		snprintf(value, sizeof(value), "https://node%d.example/",
		    signers[k]);
		ck_assert(value_is(rec_of(&o, signers[k]), value));
	}
	/* Nothing at another topic. */
	topic_of("elsewhere", &topic);
	list(5, &topic, &o);
	ck_assert_uint_eq(o.n, 0);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "records_bad"), 0);
	net_free();
}
END_TEST

START_TEST(test_newer_replaces)
{
	struct dhtkey topic;
	struct outcome o, relay;
	struct dhtrec old;
	uint8_t old_value[DHTREC_VALUE_MAX];

	net_start(DHTMSG_RECORDS_MAX);
	topic_of("replace", &topic);
	ck_assert_int_eq(announce(4, &topic, "first", wall() + 600), 0);
	list(9, &topic, &o);
	ck_assert_uint_eq(o.n, 1);
	old = o.recs[0];
	memcpy(old_value, o.values[0], old.value_len);
	old.value = old_value;
	ck_assert(value_is(&old, "first"));
	dhtsim_run_ms(sim, 2000);
	ck_assert_int_eq(announce(4, &topic, "second", wall() + 600), 0);
	list(9, &topic, &o);
	ck_assert_uint_eq(o.n, 1);
	ck_assert(value_is(rec_of(&o, 4), "second"));
	ck_assert_uint_gt(o.recs[0].seq, old.seq);
	/* The older passed on again by someone else: every storer holds
	 * a newer one. */
	memset(&relay, 0, sizeof(relay));
	ck_assert_int_eq(dht_record_put(sim->nodes[11].dht, &old, on_done,
	                     &relay),
	    0);
	wait_for(&relay);
	ck_assert_int_eq(relay.status, -ESTALE);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "records_stale"), 3);
	list(2, &topic, &o);
	ck_assert(value_is(rec_of(&o, 4), "second"));
	net_free();
}
END_TEST

START_TEST(test_relay_and_expiry)
{
	struct dhtkey topic;
	struct outcome o, relay;
	uint8_t value[DHTREC_VALUE_MAX];
	struct dhtrec r;
	int holder = -1;

	net_start(DHTMSG_RECORDS_MAX);
	topic_of("short-lived", &topic);
	ck_assert_int_eq(announce(6, &topic, "soon gone", wall() + 20), 0);
	ck_assert_int_eq(announce(7, &topic, "stays", wall() + 3600), 0);
	list(15, &topic, &o);
	ck_assert_uint_eq(o.n, 2);
	/* Latest expiring first. */
	ck_assert(value_is(&o.recs[0], "stays"));
	/* Its storers lose node 7's; another node passes it on unchanged,
	 * and it is listed again, still node 7's. */
	r = *rec_of(&o, 7);
	memcpy(value, r.value, r.value_len);
	r.value = value;
	for (int i = 0; i < sim->n; i++)
		if (dhtsim_records(sim, i, &topic, NULL, NULL) > 0) {
			dhtsim_records_clear(sim, i);
			holder = i;
		}
	ck_assert_int_ge(holder, 0);
	memset(&relay, 0, sizeof(relay));
	ck_assert_int_eq(dht_record_put(sim->nodes[12].dht, &r, on_done,
	                     &relay),
	    0);
	wait_for(&relay);
	ck_assert_int_eq(relay.status, 0);
	ck_assert_uint_eq(relay.receipts, 3);
	dhtsim_run_ms(sim, 25000);
	list(15, &topic, &o);
	ck_assert_uint_eq(o.n, 1);
	ck_assert(value_is(rec_of(&o, 7), "stays"));
	ck_assert_ptr_null(rec_of(&o, 6));
	/* Past RECORD_LIFETIME, or gone, is refused here already. */
	ck_assert_int_eq(dht_announce(sim->nodes[6].dht, &topic, "x", 1,
	                     wall() + 2 * 86400, on_done, &o),
	    -EINVAL);
	ck_assert_int_eq(dht_announce(sim->nodes[6].dht, &topic, "x", 1, wall(),
	                     on_done, &o),
	    -EINVAL);
	net_free();
}
END_TEST

START_TEST(test_topic_bound)
{
	struct dhtkey topic;
	struct outcome o;
	char value[16];

	net_start(4);
	topic_of("crowded", &topic);
	/* Six signers, each expiring later than the one before: the topic
	 * keeps the last four. */
	for (int k = 0; k < 6; k++) {
		snprintf(value, sizeof(value), "n%d", 10 + k);
		ck_assert_int_eq(announce(10 + k, &topic, value,
		                     wall() + 1000 + 100 * (uint64_t)k),
		    0);
	}
	list(1, &topic, &o);
	ck_assert_uint_eq(o.n, 4);
	ck_assert_ptr_null(rec_of(&o, 10));
	ck_assert_ptr_null(rec_of(&o, 11));
	for (int k = 2; k < 6; k++)
		ck_assert_ptr_nonnull(rec_of(&o, 10 + k));
	for (int i = 0; i < sim->n; i++)
		ck_assert_uint_le(dhtsim_records(sim, i, &topic, NULL, NULL),
		    4);
	/* One expiring before all of those is refused, not kept. */
	ck_assert_int_eq(announce(20, &topic, "late", wall() + 500), -ENOSPC);
	ck_assert_uint_eq(dhtsim_stat_sum(sim, "records_full"), 3);
	list(1, &topic, &o);
	ck_assert_ptr_null(rec_of(&o, 20));
	ck_assert_uint_eq(o.n, 4);
	net_free();
}
END_TEST

/* Node from sends node to a body of type, as its DHT would. */
static void
send_raw(int from, int to, uint16_t type, const struct buf *b)
{
	ck_assert_int_eq(dhtsim_send(sim, from, to, type, buf_head(b),
	                     buf_size(b)),
	    0);
	dhtsim_run_ms(sim, 200);
}

START_TEST(test_bad_signatures)
{
	struct dhtkey topic;
	struct dht_op *op;
	struct dhtmsg_req req;
	struct dhtmsg_ans a;
	struct outcome o;
	struct buf b, recs;
	int to = -1;

	net_start(DHTMSG_RECORDS_MAX);
	topic_of("forged", &topic);
	ck_assert_int_eq(announce(5, &topic, "honest", wall() + 600), 0);
	list(9, &topic, &o);
	ck_assert_uint_eq(o.n, 1);
	/* An RPUT whose value was changed after signing, sent to a storer
	 * as a replica: refused and counted, nothing kept. */
	for (int i = 0; i < sim->n && to < 0; i++)
		if (i != 5 && dhtsim_records(sim, i, &topic, NULL, NULL) > 0 &&
		    dhtsim_linked(sim, 5, i))
			to = i;
	ck_assert_int_ge(to, 0);
	memset(&req, 0, sizeof(req));
	req.type = FERRY_MSG_DHT_RPUT;
	req.flags = DHTMSG_F_REPLICA;
	req.key = topic;
	req.req_id = 0x4242;
	req.requester = sim->nodes[5].id;
	req.replication = 3;
	req.rec = o.recs[0];
	req.rec.seq++;
	buf_init(&b);
	ck_assert_int_eq(dhtmsg_req_encode(&req, &b), 0);
	send_raw(5, to, req.type, &b);
	ck_assert_uint_eq(dhtsim_stat(sim, to, "records_refused"), 1);
	ck_assert_uint_eq(dhtsim_records(sim, to, &topic, NULL, NULL), 1);
	/* A RECORDS answer with a forged entry, as if to an RGET of node
	 * 9's in flight: the entry counts as bad and is not listed. */
	if (!dhtsim_linked(sim, 5, 9)) {
		ck_assert_int_eq(dhtsim_link(sim, 5, 9), 0);
		dhtsim_run_ms(sim, 100);
	}
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(dht_records(sim->nodes[9].dht, &topic, on_done, &o),
	    0);
	TAILQ_FOREACH(op, &sim->nodes[9].dht->ops, link)
		if (op->type == FERRY_MSG_DHT_RGET)
			break;
	ck_assert_ptr_nonnull(op);
	memset(&a, 0, sizeof(a));
	a.type = FERRY_MSG_DHT_RECORDS;
	a.req_id = op->req_id;
	a.key = topic;
	a.requester = sim->nodes[9].id;
	a.responder = sim->nodes[5].id;
	buf_init(&recs);
	ck_assert_int_eq(dhtmsg_records_put(&recs, &req.rec), 0);
	a.count = 1;
	a.records = buf_head(&recs);
	a.records_len = buf_size(&recs);
	buf_reset(&b);
	ck_assert_int_eq(dhtmsg_ans_encode(&a, &b), 0);
	/* Queued behind the RGET's first hop, ahead of the storers'
	 * answers. */
	send_raw(5, 9, a.type, &b);
	wait_for(&o);
	ck_assert_int_eq(o.status, 0);
	ck_assert_uint_eq(dhtsim_stat(sim, 9, "records_bad"), 1);
	ck_assert_uint_eq(o.n, 1);
	ck_assert(value_is(rec_of(&o, 5), "honest"));
	/* A malformed RPUT is counted as such. */
	buf_reset(&b);
	ck_assert_int_eq(dhtmsg_req_encode(&req, &b), 0);
	send_raw(5, to, FERRY_MSG_DHT_RGET, &b);
	ck_assert_uint_ge(dhtsim_stat(sim, to, "malformed"), 1);
	buf_done(&recs);
	buf_done(&b);
	net_free();
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("dht_records");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_announce_list);
	tcase_add_test(tc, test_newer_replaces);
	tcase_add_test(tc, test_relay_and_expiry);
	tcase_add_test(tc, test_topic_bound);
	tcase_add_test(tc, test_bad_signatures);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
