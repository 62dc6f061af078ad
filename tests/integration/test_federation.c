/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The federation of intermediaries (issue 15; ferry-intermediary(7)
 * FEDERATION) on real ferryd processes: d0, d1 and d2 are intermediaries
 * and d3 a plain peer, all in one DHT; requests are made by curl signed
 * by tests/tools/imd_sign. Checked:
 *   - each intermediary finds the others through their DHT
 *     announcements: GET /v1/intermediaries on each lists the other two
 *     with an expiry, and so does `ferry remote intermediaries`; one
 *     that is killed drops out of the lists once its announcement
 *     expires;
 *   - a client uploads through d0 and goes away before its receipts
 *     come, then takes them at d1: every receipt comes, verifies, and
 *     comes once over repeated takes (d0's ends of its relays do not:
 *     they are d0's word on d0's relays), and d0's queue empties;
 *   - the same with d0 killed (SIGKILL) after it sent the batch to d1
 *     and before d1's acknowledgement reached it: d0, restarted, sends
 *     it again, d1 queues it once (queue_duplicate), and the client
 *     still sees each receipt once;
 *   - 60 receipts, more than a batch, with d1 killed while the client
 *     is half way through them: each comes once, from the client's
 *     cursor at d1 on;
 *   - a client seen at d1 that comes back to d0 and puts there gets all
 *     it queues there at d0: its own request ended d0's forwarding;
 *   - claims that a client takes at another peer, sent to d0 by a
 *     hostile peer speaking the wire (tests/lib/dhtpeer.h), are refused
 *     and counted: the client's signature of a take at d1, a signature
 *     spoilt, a take signed too long ago; d0 forwards nothing to it.
 */
/* ctest: TIMEOUT=600 RUN_SERIAL=1 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "dhtpeer.h"
#include "harness.h"
#include "imdnet.h"
#include "mesh.h"
#include "core/identity.h"
#include "lib/base32.h"
#include "lib/wire.h"

#define N   4
#define IMD 3 /* d0..d2 are intermediaries */
#define FED_CFG                                                                \
	"[intermediary]\nANNOUNCE_LIFETIME = 10 s\nLOOKUP_INTERVAL = 1 s\n"    \
	"HERE_INTERVAL = 2 s\nFORWARD_TIMEOUT = 2 s\n"
#define TOOL FERRY_TOOL_DIR "/imd_sign"

static struct harness *h;
static struct harness_daemon *d[N];
static char dir[512], cert[600], url[IMD][64];

/* method target at intermediary i, signed by the client key file key
 * (NULL: unsigned) for i, with body (NULL: none); the status, and the
 * body in *ret_body (free it). */
static int
request(int i, const char *key, const char *method, const char *target,
    const char *body, char **ret_body)
{
	struct imdnet_answer a = imdnet_request(h, cert, d[i], url[i], key,
	    NULL, method, target, body, NULL);
	int status = a.status;

	*ret_body = a.body;
	a.body = NULL;
	imdnet_answer_free(&a);
	return status;
}

/* Waits until intermediary i lists (or, listed false, no longer lists)
 * intermediary j. */
static void
wait_listed(int i, int j, bool listed, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	char want[256], *body = NULL;

	(void)snprintf(want, sizeof(want), "{\"peer\": \"%s\", \"url\": \"%s\"",
	    d[j]->id_str, url[j]);
	for (;;) {
		int st =
		    request(i, NULL, "GET", "/v1/intermediaries", NULL, &body);

		ck_assert_int_eq(st, 200);
		if ((strstr(body, want) != NULL) == listed)
			break;
		if (harness_now_ms() > end) {
			harness_dump_logs(h);
			ck_abort_msg("d%d %s d%d: %s", i,
			    listed ? "never lists" : "still lists", j, body);
		}
		free(body);
		body = NULL;
		harness_sleep_ms(300);
	}
	free(body);
}

static void
setup(void)
{
	ck_assert_int_eq(harness_new("fed", &h), 0);
	(void)snprintf(dir, sizeof(dir), "%s", harness_dir(h));
	imdnet_daemons(h, d, N);
	imdnet_cert(h, d, IMD, cert, sizeof(cert));
	for (int i = 0; i < IMD; i++) {
		imdnet_listen(h, d[i], cert, url[i], sizeof(url[i]));
		ck_assert_int_eq(harness_daemon_config(d[i], FED_CFG), 0);
	}
	imdnet_start(h, d, N);
	for (int i = 0; i < IMD; i++)
		for (int j = 0; j < IMD; j++)
			if (i != j)
				wait_listed(i, j, true, 30000);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

/* Each lists the others with an expiry within ANNOUNCE_LIFETIME; the
 * thin client shows them; one killed drops out. */
START_TEST(test_discovery)
{
	char want[256], args[600], client[600], *body = NULL, *p;
	unsigned long long expires;
	struct harness_output o;
	uint64_t now = (uint64_t)time(NULL);

	ck_assert_int_eq(request(1, NULL, "GET", "/v1/intermediaries", NULL,
	                     &body),
	    200);
	(void)snprintf(want, sizeof(want), "{\"peer\": \"%s\", \"url\": \"%s\"",
	    d[2]->id_str, url[2]);
	p = strstr(body, want);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sscanf(strstr(p, "\"expires\": "), "\"expires\": %llu",
	                     &expires),
	    1);
	ck_assert_uint_gt(expires, now);
	ck_assert_uint_le(expires, now + 12);
	free(body);
	ck_assert_uint_ge(mesh_stat(d[1], "intermediary.fed_announced"), 1);
	ck_assert_uint_ge(mesh_stat(d[1], "intermediary.fed_lookups"), 1);
	/* The thin client, as a user runs it. */
	(void)snprintf(client, sizeof(client), "%s/client", dir);
	(void)snprintf(args, sizeof(args), "intermediaries --intermediary %s",
	    url[1]);
	o = imdnet_remote(client, cert, args);
	ck_assert_msg(o.status == 0, "%s", o.err);
	for (int i = 0; i < IMD; i++)
		ck_assert_msg(strstr(o.out, url[i]) != NULL &&
		        strstr(o.out, d[i]->id_str) != NULL,
		    "d%d not in %s", i, o.out);
	harness_output_free(&o);
	/* Gone: listed until its announcement expires, then not. */
	ck_assert_int_eq(harness_daemon_kill(d[2]), 0);
	wait_listed(0, 2, false, 20000);
	wait_listed(1, 2, false, 20000);
	wait_listed(0, 1, true, 1000);
}
END_TEST

/* Stopped (SIGTERM), an intermediary leaves: it withdraws its
 * announcement, and the others forget it on finding that (killed, in
 * test_discovery, they list it until the announcement expires); it exits
 * 0 within LEAVE_TIMEOUT (5 s), well before the stop's SIGKILL. */
START_TEST(test_leave)
{
	int status = -1;

	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_withdrawn"), 0);
	/* imdnet's daemons leave at once; this one as by default. */
	ck_assert_int_eq(harness_daemon_config(d[2],
	                     "[intermediary]\nLEAVE_TIMEOUT = 5 s\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[2]), 0);
	ck_assert_int_eq(harness_daemon_stop(d[2], 15000, &status), 0);
	ck_assert_int_eq(status, 0);
	ck_assert(mesh_wait_stat(d[0], "intermediary.fed_withdrawn", 1, 10000));
	ck_assert(mesh_wait_stat(d[1], "intermediary.fed_withdrawn", 1, 10000));
	wait_listed(0, 2, false, 1000);
	wait_listed(1, 2, false, 1000);
	wait_listed(0, 1, true, 1000);
}
END_TEST

/* What a client has taken so far: each entry once, by its content. */
struct taken {
	char seen[128][400];
	unsigned n, receipts, dones;
	unsigned long long cursor; /* at the intermediary taken from */
};

/* One take of at most max at intermediary i (long-polled wait s) into
 * t; every entry must be new and every receipt verify. */
static void
take_max(int i, const char *key, const char *lines, unsigned wait, unsigned max,
    struct taken *t)
{
	char target[128], *body = NULL, *p;
	unsigned long long cur;

	(void)snprintf(target, sizeof(target),
	    "/v1/receipts?after=%llu&wait=%u&max=%u", t->cursor, wait, max);
	ck_assert_int_eq(request(i, key, "GET", target, NULL, &body), 200);
	ck_assert_int_eq(sscanf(body, "{\"cursor\": %llu", &cur), 1);
	for (p = strstr(strstr(body, "\"entries\""), "{\"cursor\": ");
	     p != NULL; p = strstr(p + 1, "{\"cursor\": ")) {
		const char *content = strstr(p, "\"type\"");
		size_t len = strcspn(content, "}");

		ck_assert_uint_lt(len, sizeof(t->seen[0]));
		for (unsigned j = 0; j < t->n; j++)
			ck_assert_msg(strncmp(t->seen[j], content, len) != 0 ||
			        t->seen[j][len] != '\0',
			    "delivered twice: %.*s", (int)len, content);
		ck_assert_uint_lt(t->n, 128);
		memcpy(t->seen[t->n], content, len);
		t->seen[t->n++][len] = '\0';
		if (strncmp(content, "\"type\": \"receipt\"", 17) == 0) {
			imdnet_check_receipt(p, lines);
			t->receipts++;
		} else {
			t->dones++;
		}
	}
	t->cursor = cur;
	free(body);
}

static void
take(int i, const char *key, const char *lines, unsigned wait, struct taken *t)
{
	take_max(i, key, lines, wait, 1000, t);
}

/* Takes of at most max at intermediary i (3 s long-polls) until t holds
 * want entries, within timeout_ms. */
static void
take_until(int i, const char *key, const char *lines, unsigned max,
    unsigned want, uint64_t timeout_ms, struct taken *t)
{
	uint64_t end = harness_now_ms() + timeout_ms;

	while (t->n < want) {
		ck_assert_msg(harness_now_ms() < end, "%u of %u entries", t->n,
		    want);
		take_max(i, key, lines, 3, max, t);
	}
}

/* Waits until d0's queue is empty: it let go what it forwarded. */
static void
wait_d0_drained(void)
{
	uint64_t end = harness_now_ms() + 10000;

	while (mesh_stat(d[0], "intermediary.queue_entries") != 0) {
		ck_assert_msg(harness_now_ms() < end, "d0 keeps entries");
		harness_sleep_ms(200);
	}
}

/* Uploads n blocks of 2000 bytes through intermediary i for key; the
 * lines imd_sign printed (free them). */
static char *
upload(int i, const char *key, unsigned n)
{
	char file[600], recs[600], *lines, *body = NULL;
	struct harness_output o;
	int st;

	(void)snprintf(file, sizeof(file), "%s/%s.bin", dir, key);
	(void)snprintf(recs, sizeof(recs), "%s/%s.rec", dir, key);
	o = imdnet_sh("head -c %u /dev/urandom > %s && %s put %s/%s 2000 %s %s",
	    n * 2000, file, TOOL, dir, key, file, recs);
	ck_assert_msg(o.status == 0, "%s", o.err);
	lines = strdup(o.out);
	harness_output_free(&o);
	st = request(i, key, "POST", "/v1/blocks", recs, &body);
	ck_assert_msg(st == 200, "%d %s", st, body);
	free(body);
	return lines;
}

/* upload() through d0, then waits (up to timeout_ms) until d0 queued
 * the 4 entries of each block: 3 receipts and the end of its relay. */
static char *
upload_queued(const char *key, unsigned n, int timeout_ms)
{
	uint64_t pushed = mesh_stat(d[0], "intermediary.queue_pushed");
	char *lines = upload(0, key, n);

	ck_assert(mesh_wait_stat(d[0], "intermediary.queue_pushed",
	    pushed + 4 * n, timeout_ms));
	return lines;
}

/* A client away when its receipts come to d0 takes them at d1. */
START_TEST(test_forward)
{
	struct taken t = { 0 };
	char *lines;

	lines = upload_queued("traveller", 3, 20000);
	take_until(1, "traveller", lines, 1000, 9, 40000, &t);
	/* The receipts only: d0's ends of its relays stay at d0. */
	ck_assert_uint_eq(t.receipts, 9);
	ck_assert_uint_eq(t.dones, 0);
	/* Nothing more comes, and d0 let them go once d1 held them. */
	take(1, "traveller", lines, 2, &t);
	take(1, "traveller", lines, 1, &t);
	ck_assert_uint_eq(t.n, 9);
	ck_assert(mesh_wait_stat(d[0], "intermediary.fed_entries_forwarded", 9,
	    10000));
	wait_d0_drained();
	ck_assert_uint_ge(mesh_stat(d[1], "intermediary.fed_batches_received"),
	    1);
	ck_assert_uint_eq(mesh_stat(d[1], "intermediary.fed_receipts_bad"), 0);
	free(lines);
}
END_TEST

/* d0 killed after it sent the batch and before d1's acknowledgement came
 * back: the batch is sent again after d0's restart, queued once. */
START_TEST(test_forward_crash)
{
	struct taken t = { 0 };
	uint64_t end;
	char *lines;

	lines = upload_queued("crasher", 3, 20000);
	/* d0 holds the HERE of the take at d1 until d1 is frozen too:
	 * the batch then waits in d1's socket while d0 dies. */
	ck_assert_int_eq(kill(d[0]->pid, SIGSTOP), 0);
	take(1, "crasher", lines, 0, &t);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_int_eq(kill(d[1]->pid, SIGSTOP), 0);
	ck_assert_int_eq(kill(d[0]->pid, SIGCONT), 0);
	ck_assert(
	    mesh_wait_stat(d[0], "intermediary.fed_batches_sent", 1, 10000));
	/* On the wire (the core sends from its loop), never acknowledged:
	 * d1 reads nothing while frozen. */
	harness_sleep_ms(500);
	ck_assert_int_eq(harness_daemon_kill(d[0]), 0);
	ck_assert_int_eq(kill(d[1]->pid, SIGCONT), 0);
	ck_assert(mesh_wait_stat(d[1], "intermediary.fed_batches_received", 1,
	    10000));
	take(1, "crasher", lines, 2, &t);
	ck_assert_uint_eq(t.n, 9);
	/* d0 comes back with its queue whole and sends it again. */
	ck_assert_int_eq(harness_daemon_start_ready(d[0]), 0);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.queue_entries"), 12);
	end = harness_now_ms() + 60000;
	while (mesh_stat(d[1], "intermediary.queue_duplicate") < 9 ||
	    mesh_stat(d[0], "intermediary.queue_entries") != 0) {
		ck_assert_msg(harness_now_ms() < end,
		    "the batch is not sent again (%llu duplicates at d1)",
		    (unsigned long long)mesh_stat(d[1],
		        "intermediary.queue_duplicate"));
		take(1, "crasher", lines, 1, &t);
	}
	take(1, "crasher", lines, 1, &t);
	ck_assert_uint_eq(t.n, 9);
	ck_assert_uint_eq(t.receipts, 9);
	free(lines);
}
END_TEST

/* 60 receipts, more than one batch: d1 killed while the client is half
 * way through them; after its restart the client goes on from its
 * cursor there, and gets each entry once. */
START_TEST(test_forward_restart_b)
{
	struct taken t = { 0 };
	char *lines;

	lines = upload_queued("restarter", 20, 30000);
	take_until(1, "restarter", lines, 30, 30, 30000, &t);
	ck_assert_int_eq(harness_daemon_kill(d[1]), 0);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	take_until(1, "restarter", lines, 30, 60, 60000, &t);
	take(1, "restarter", lines, 2, &t);
	ck_assert_uint_eq(t.n, 60);
	ck_assert_uint_eq(t.receipts, 60);
	wait_d0_drained();
	free(lines);
}
END_TEST

/* A client seen at d1 comes back to d0 and puts there: what d0 queues
 * for it stays at d0 (its request at d0 ended the forwarding), all of
 * it, ends of relays too. */
START_TEST(test_come_back)
{
	uint64_t here = mesh_stat(d[0], "intermediary.fed_here_accepted");
	uint64_t sent = mesh_stat(d[0], "intermediary.fed_batches_sent");
	uint64_t pushed = mesh_stat(d[0], "intermediary.queue_pushed");
	struct taken t = { 0 }, t1 = { 0 };
	char *lines;

	take(1, "returner", "", 0, &t1);
	ck_assert(mesh_wait_stat(d[0], "intermediary.fed_here_accepted",
	    here + 1, 10000));
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_forwarding"), 1);
	lines = upload(0, "returner", 3);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_forwarding"), 0);
	ck_assert(mesh_wait_stat(d[0], "intermediary.queue_pushed", pushed + 12,
	    20000));
	take_until(0, "returner", lines, 1000, 12, 30000, &t);
	ck_assert_uint_eq(t.receipts, 9);
	ck_assert_uint_eq(t.dones, 3);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_batches_sent"),
	    sent);
	free(lines);
}
END_TEST

/* An Authorization imd_sign makes (client key file key, for intermediary
 * id, time arg) as a HERE body, from ferry-protocol(7)'s layout. */
static size_t
here_body(const char *key, const char *id, const char *time_arg,
    const char *target, uint8_t *out)
{
	char cl[64], nc[64], sg[128];
	unsigned long long t;
	struct harness_output o;
	size_t tl = strlen(target);

	o = imdnet_sh("%s auth %s/%s %s GET '%s' %s", TOOL, dir, key, id,
	    target, time_arg);
	ck_assert_int_eq(o.status, 0);
	ck_assert_int_eq(
	    sscanf(o.out,
	        "Authorization: Ferry %63[0-9A-Z]:%llu:%63[0-9A-Z]:"
	        "%127[0-9A-Z]",
	        cl, &t, nc, sg),
	    4);
	harness_output_free(&o);
	out[0] = 1;
	out[1] = 0;
	wire_put16(out + 2, (uint16_t)tl);
	ck_assert_int_eq(base32_decode(cl, strlen(cl), out + 4, 32), 0);
	wire_put64(out + 36, t);
	ck_assert_int_eq(base32_decode(nc, strlen(nc), out + 44, 16), 0);
	ck_assert_int_eq(base32_decode(sg, strlen(sg), out + 60, 64), 0);
	memcpy(out + 124, target, tl);
	return 124 + tl;
}

/* Forged claims from a hostile peer: none diverts the client's queue. */
START_TEST(test_forged_claims)
{
	const char *target = "/v1/receipts?after=0&wait=5";
	char self[FERRY_PEER_ID_STRLEN + 1];
	uint8_t body[700];
	struct dhtpeer *p;
	size_t len;
	char *lines;

	lines = upload_queued("victim", 2, 20000);
	ck_assert_int_eq(dhtpeer_new(0xfed, &p), 0);
	ck_assert_int_eq(dhtpeer_link(p, d[0]), 0);
	ck_assert_int_eq(dhtpeer_start(p, NULL, NULL), 0);
	base32_encode(dhtpeer_ident(p)->id.bytes, 32, self);
	/* The client's real take at d1, passed on by another. */
	len = here_body("victim", d[1]->id_str, "", target, body);
	ck_assert_int_eq(dhtpeer_send(p, 0, 0x0301, body, len), 0);
	ck_assert(
	    mesh_wait_stat(d[0], "intermediary.fed_here_forged", 1, 5000));
	/* A take at the hostile peer, its signature spoilt. */
	len = here_body("victim", self, "", target, body);
	body[70] ^= 1;
	ck_assert_int_eq(dhtpeer_send(p, 0, 0x0301, body, len), 0);
	ck_assert(
	    mesh_wait_stat(d[0], "intermediary.fed_here_forged", 2, 5000));
	/* Signed for it, but long ago. */
	len = here_body("victim", self, "-3600", target, body);
	ck_assert_int_eq(dhtpeer_send(p, 0, 0x0301, body, len), 0);
	ck_assert(mesh_wait_stat(d[0], "intermediary.fed_here_stale", 1, 5000));
	/* Malformed: counted, dropped. */
	body[0] = 2;
	ck_assert_int_eq(dhtpeer_send(p, 0, 0x0301, body, len), 0);
	ck_assert(mesh_wait_stat(d[0], "intermediary.fed_msg_bad", 1, 5000));
	harness_sleep_ms(1000);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_here_accepted"), 0);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.fed_batches_sent"), 0);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.queue_entries"), 8);
	dhtpeer_free(p);
	free(lines);
}
END_TEST

static Suite *
federation_suite(void)
{
	Suite *s = suite_create("federation");
	TCase *tc = tcase_create("federation");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_discovery);
	tcase_add_test(tc, test_leave);
	tcase_add_test(tc, test_forward);
	tcase_add_test(tc, test_forward_crash);
	tcase_add_test(tc, test_forward_restart_b);
	tcase_add_test(tc, test_come_back);
	tcase_add_test(tc, test_forged_claims);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(federation_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
