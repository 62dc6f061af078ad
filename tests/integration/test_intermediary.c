/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary (issue 15; ferry-intermediary(7)) on real ferryd
 * processes: d0 serves the HTTPS API with a certificate the test makes,
 * d0 to d3 run the DHT, and every request is made by curl, the
 * command-line tool, signed by tests/tools/imd_sign (written from the
 * page, not from ferryd's code). Checked: the list of intermediaries;
 * several blocks uploaded in one request, Content-Length or chunked,
 * each then got by another daemon from the DHT, by GET /v1/blocks/KEY
 * and by POST /v1/fetch, byte for byte; an upload far larger than
 * MAX_IN_FLIGHT read as it comes, with the connection paused while the
 * DHT catches up; unsigned, wrongly signed, stale, replayed, oversized,
 * malformed, over-rate and over-quota requests each refused with the
 * page's status and counted, an honest client served after them; a
 * client trickling its request head, or its body, cut off at
 * REQUEST_TIMEOUT with 408 while another is served; receipts taken with
 * a cursor and checked; a reload; MAX_CONNECTIONS answered 503; TLS 1.2 refused;
 * MAX_CONNECTIONS_PER_ADDRESS and ADDRESS_RATE, set by a reload, hold one
 * address back (the latter before any signature is checked) and let it
 * go on once it closes a connection or pauses.
 */
/* ctest: TIMEOUT=300 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>
#include <openssl/ssl.h>
#include <sodium.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "imdnet.h"
#include "mesh.h"
#include "procstat.h"
#include "lib/base32.h"
#include "lib/wire.h"

#define N    4
#define TOOL FERRY_TOOL_DIR "/imd_sign"

static struct harness *h;
static struct harness_daemon *d[N];
static char dir[512], cert[600], url[64];
static uint16_t port;

/* The first line of a command's output, which must succeed. */
static void
sh_line(char *buf, size_t size, const char *cmd)
{
	struct harness_output o = imdnet_sh("%s", cmd);

	ck_assert_msg(o.status == 0, "%s: %s", cmd, o.err);
	imdnet_first_line(o.out, buf, size);
	harness_output_free(&o);
}

/*
 * method target on d0 with curl: signed by the client key file key
 * (NULL: no Authorization), auth_args given to imd_sign after the
 * target (TIME [NONCE], or "bad"), body from the file body (NULL: none),
 * extra curl options.
 */
static struct imdnet_answer
request(const char *key, const char *auth_args, const char *method,
    const char *target, const char *body, const char *extra)
{
	return imdnet_request(h, cert, d[0], url, key, auth_args, method,
	    target, body, extra);
}

/* n requests method target signed by key, each signed before the
 * first is sent, then sent by one curl on one connection; their answers
 * are read with burst_answer(). */
static void
burst(const char *key, const char *method, const char *target, int n)
{
	struct harness_output o;
	char cmd[600];
	FILE *f;

	(void)snprintf(cmd, sizeof(cmd), "%s/burst.sh", dir);
	f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < n; i++)
		fprintf(f, "h%d=\"$(%s auth %s/%s %s %s '%s')\"\n", i, TOOL,
		    dir, key, d[0]->id_str, method, target);
	/* --next starts a request with none of the options before it:
	 * each gets its own. One curl keeps the connection for all. */
	fprintf(f, "exec curl");
	for (int i = 0; i < n; i++)
		fprintf(f,
		    "%s -sS --cacert %s -o %s/resp.%d -D %s/hdrs.%d -X %s "
		    "-H \"$h%d\" '%s%s'",
		    i > 0 ? " --next" : "", cert, dir, i, dir, i, method, i,
		    url, target);
	fprintf(f, "\n");
	ck_assert_int_eq(fclose(f), 0);
	o = imdnet_sh("sh %s", cmd);
	ck_assert_msg(o.status == 0, "burst: %s", o.err);
	harness_output_free(&o);
}

/* The answer to request i of the last burst(). */
static struct imdnet_answer
burst_answer(int i)
{
	char path[600];
	struct imdnet_answer a;

	memset(&a, 0, sizeof(a));
	(void)snprintf(path, sizeof(path), "%s/hdrs.%d", dir, i);
	a.headers = imdnet_read_file(path, NULL);
	(void)snprintf(path, sizeof(path), "%s/resp.%d", dir, i);
	a.body = imdnet_read_file(path, &a.body_len);
	if (a.headers != NULL)
		a.status = atoi(a.headers + strcspn(a.headers, " "));
	return a;
}

/* status with the error token of the page, and the counter bumped. */
static void
expect_refusal(struct imdnet_answer a, int status, const char *token,
    const char *counter, uint64_t before)
{
	char want[64];

	ck_assert_msg(a.status == status, "status %d, not %d: %s", a.status,
	    status, a.body != NULL ? a.body : "");
	(void)snprintf(want, sizeof(want), "\"error\": \"%s\"", token);
	ck_assert_msg(a.body != NULL && strstr(a.body, want) != NULL,
	    "body %s lacks %s", a.body != NULL ? a.body : "(none)", want);
	ck_assert_ptr_nonnull(strstr(a.headers, "application/json"));
	ck_assert_uint_gt(mesh_stat(d[0], counter), before);
	imdnet_answer_free(&a);
}

static void
setup(void)
{
	ck_assert_int_eq(harness_new("imd", &h), 0);
	(void)snprintf(dir, sizeof(dir), "%s", harness_dir(h));
	imdnet_daemons(h, d, N);
	imdnet_cert(h, d, 1, cert, sizeof(cert));
	imdnet_listen(h, d[0], cert, url, sizeof(url));
	port = (uint16_t)atoi(strrchr(url, ':') + 1);
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nREQUEST_TIMEOUT = 2 s\n"
	                     "MAX_REQUEST_BYTES = 8 MiB\n"
	                     "MAX_IN_FLIGHT = 64 KiB\nCLIENT_RATE = 5\n"
	                     "CLIENT_QUOTA = 6 MiB\nMAX_CONNECTIONS = 6\n"),
	    0);
	imdnet_start(h, d, N);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

START_TEST(test_list)
{
	struct imdnet_answer a =
	    request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	char want[256];

	ck_assert_int_eq(a.status, 200);
	(void)snprintf(want, sizeof(want),
	    "\"self\": {\"peer\": \"%s\", \"url\": \"%s\"}", d[0]->id_str, url);
	ck_assert_msg(strstr(a.body, want) != NULL, "%s", a.body);
	ck_assert_ptr_nonnull(strstr(a.body, "\"intermediaries\": []"));
	(void)snprintf(want, sizeof(want), "Ferry-Intermediary: %s",
	    d[0]->id_str);
	ck_assert_ptr_nonnull(strstr(a.headers, want));
	imdnet_answer_free(&a);
	a = request(NULL, NULL, "POST", "/v1/intermediaries", NULL, NULL);
	ck_assert_ptr_nonnull(strstr(a.headers, "Allow: GET"));
	expect_refusal(a, 405, "method", "intermediary.method", 0);
	a = request(NULL, NULL, "GET", "/v2/nothing", NULL, NULL);
	expect_refusal(a, 404, "not-found", "intermediary.not_found", 0);
}
END_TEST

/* The keys and put_hashes imd_sign printed, and the answer's records,
 * agree; all n relayed. */
static void
check_upload(const struct imdnet_answer *a, const char *lines, unsigned n,
    char keys[][BASE32_LEN(32) + 1])
{
	const char *p = lines;
	char want[256], k[64], hh[64];

	ck_assert_msg(a->status == 200, "%d %s", a->status, a->body);
	(void)snprintf(want, sizeof(want), "\"relayed\": %u, \"refused\": 0",
	    n);
	ck_assert_msg(strstr(a->body, want) != NULL, "%s", a->body);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(sscanf(p, "%63s %63s", k, hh), 2);
		(void)snprintf(want, sizeof(want),
		    "{\"key\": \"%s\", \"put_hash\": \"%s\", \"status\": \"relayed\"}",
		    k, hh);
		ck_assert_msg(strstr(a->body, want) != NULL, "%s not in %s",
		    want, a->body);
		if (keys != NULL) {
			ck_assert_uint_eq(strlen(k), BASE32_LEN(32));
			memcpy(keys[i], k, BASE32_LEN(32) + 1);
		}
		p = strchr(p, '\n') + 1;
	}
}

/* Several blocks in one request, then every one got back: from d2's DHT
 * through its client socket, from the intermediary by key and by fetch;
 * the same again with a chunked body. */
START_TEST(test_upload_get)
{
	char file[600], recs[600], keysf[600], cmd[2048];
	char keys[6][BASE32_LEN(32) + 1];
	struct harness_output o;
	struct ferry_client *c;
	struct imdnet_answer a;
	size_t off = 0;
	char *data, *lines;

	imdnet_random_file(h, "five", 5 * 3000, file, sizeof(file));
	data = imdnet_read_file(file, NULL);
	(void)snprintf(recs, sizeof(recs), "%s/five.rec", dir);
	o = imdnet_sh("%s put %s/honest 3000 %s %s", TOOL, dir, file, recs);
	ck_assert_int_eq(o.status, 0);
	lines = strdup(o.out);
	ck_assert_ptr_nonnull(lines);
	a = request("honest", NULL, "POST", "/v1/blocks", recs,
	    "-H 'Content-Type: application/x-ferry-puts'");
	check_upload(&a, lines, 5, keys);
	imdnet_answer_free(&a);
	ck_assert_uint_ge(mesh_stat(d[0], "intermediary.records_relayed"), 5);
	ck_assert(mesh_wait_stat(d[0], "intermediary.relays_stored", 5, 10000));
	c = dhtcheck_client(d[2]);
	for (int i = 0; i < 5; i++) {
		struct ferry_dht_key k;
		uint8_t *got;
		size_t n;

		ck_assert_int_eq(base32_decode(keys[i], strlen(keys[i]),
		                     k.bytes, sizeof(k.bytes)),
		    0);
		ck_assert_int_eq(ferry_dht_get(c, &k, &got, &n), 0);
		ck_assert_uint_eq(n, 3000);
		ck_assert_int_eq(memcmp(got, data + 3000 * i, 3000), 0);
		free(got);
		(void)snprintf(cmd, sizeof(cmd), "/v1/blocks/%s", keys[i]);
		a = request("honest", NULL, "GET", cmd, NULL, NULL);
		ck_assert_int_eq(a.status, 200);
		ck_assert_uint_eq(a.body_len, 3000);
		ck_assert_int_eq(memcmp(a.body, data + 3000 * i, 3000), 0);
		imdnet_answer_free(&a);
	}
	ferry_client_close(c);
	/* A key nobody holds comes back not found, in the stream. */
	memset(keys[5], 'A', BASE32_LEN(32));
	keys[5][BASE32_LEN(32) - 1] = '0';
	keys[5][BASE32_LEN(32)] = '\0';
	(void)snprintf(keysf, sizeof(keysf), "%s/keys", dir);
	harness_output_free(&o);
	o = imdnet_sh("%s keys %s %s %s %s %s %s %s", TOOL, keysf, keys[0],
	    keys[1], keys[2], keys[3], keys[4], keys[5]);
	ck_assert_int_eq(o.status, 0);
	a = request("honest", NULL, "POST", "/v1/fetch", keysf,
	    "-H 'Content-Type: application/x-ferry-keys'");
	ck_assert_int_eq(a.status, 200);
	ck_assert_ptr_nonnull(strstr(a.headers, "chunked"));
	for (int seen = 0; seen < 6; seen++) {
		const uint8_t *r = (const uint8_t *)a.body + off;
		uint32_t rl;
		char k[BASE32_LEN(32) + 1];
		int i;

		ck_assert_uint_ge(a.body_len - off, 37);
		rl = wire_get32(r);
		base32_encode(r + 5, 32, k);
		for (i = 0; i < 6 && strcmp(k, keys[i]) != 0; i++)
			;
		ck_assert_int_lt(i, 6);
		if (i == 5) {
			/* not found, or the DHT's timeout */
			ck_assert(r[4] == 1 || r[4] == 2);
			ck_assert_uint_eq(rl, 33);
		} else {
			ck_assert_int_eq(r[4], 0);
			ck_assert_uint_eq(rl, 33 + 3000);
			ck_assert_int_eq(memcmp(r + 37, data + 3000 * i, 3000),
			    0);
		}
		off += 4 + rl;
	}
	ck_assert_uint_eq(off, a.body_len);
	imdnet_answer_free(&a);
	/* The same upload chunked (a PUT again renews). */
	a = request("honest", NULL, "POST", "/v1/blocks", recs,
	    "-H 'Transfer-Encoding: chunked'");
	check_upload(&a, lines, 5, NULL);
	imdnet_answer_free(&a);
	harness_output_free(&o);
	free(lines);
	free(data);
}
END_TEST

/* 4 MiB in 256 records against a MAX_IN_FLIGHT of 64 KiB: the body is
 * read as the DHT ends relays, and the connection waits between. */
START_TEST(test_upload_streamed)
{
	char file[600], recs[600];
	struct harness_output o;
	unsigned long hwm0, hwm1;
	struct imdnet_answer a;
	uint64_t waits = mesh_stat(d[0], "intermediary.in_flight_waits");

	imdnet_random_file(h, "big", 4 << 20, file, sizeof(file));
	(void)snprintf(recs, sizeof(recs), "%s/big.rec", dir);
	o = imdnet_sh("%s put %s/streamer 16384 %s %s", TOOL, dir, file, recs);
	ck_assert_int_eq(o.status, 0);
	hwm0 = procstat_kib(d[0]->pid, "VmHWM");
	a = request("streamer", NULL, "POST", "/v1/blocks", recs, NULL);
	hwm1 = procstat_kib(d[0]->pid, "VmHWM");
	check_upload(&a, o.out, 256, NULL);
	imdnet_answer_free(&a);
	harness_output_free(&o);
	ck_assert_uint_gt(mesh_stat(d[0], "intermediary.in_flight_waits"),
	    waits);
	fprintf(stderr,
	    "test_upload_streamed: 4 MiB upload, ferryd's peak RSS %lu -> %lu KiB\n",
	    hwm0, hwm1);
}
END_TEST

static unsigned
count(const char *s, const char *needle)
{
	unsigned n = 0;

	for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/* Three blocks uploaded: their nine receipts, each signed by its storing
 * peer for the client's own put_hash, and three ends, taken with a
 * cursor; acknowledged, they are not sent again; a long poll with
 * nothing queued waits and answers empty; a cursor never given is 400. */
START_TEST(test_receipts)
{
	char file[600], recs[600], target[128], *lines;
	uint64_t pushed = mesh_stat(d[0], "intermediary.queue_pushed"), t0;
	unsigned long long cur = 0;
	struct harness_output o;
	struct imdnet_answer a;
	const char *p;

	imdnet_random_file(h, "three", 3 * 2000, file, sizeof(file));
	(void)snprintf(recs, sizeof(recs), "%s/three.rec", dir);
	o = imdnet_sh("%s put %s/receiver 2000 %s %s", TOOL, dir, file, recs);
	ck_assert_int_eq(o.status, 0);
	lines = strdup(o.out);
	harness_output_free(&o);
	a = request("receiver", NULL, "POST", "/v1/blocks", recs, NULL);
	check_upload(&a, lines, 3, NULL);
	imdnet_answer_free(&a);
	ck_assert(mesh_wait_stat(d[0], "intermediary.queue_pushed", pushed + 12,
	    15000));
	a = request("receiver", NULL, "GET", "/v1/receipts?after=0&max=1000",
	    NULL, NULL);
	ck_assert_msg(a.status == 200, "%d %s", a.status, a.body);
	ck_assert_uint_eq(count(a.body, "\"type\": \"receipt\""), 9);
	ck_assert_uint_eq(count(a.body, "\"type\": \"done\""), 3);
	ck_assert_uint_eq(count(a.body, "\"status\": \"ok\", \"receipts\": 3"),
	    3);
	ck_assert_ptr_nonnull(strstr(a.body, "\"more\": false"));
	for (p = strstr(strstr(a.body, "\"entries\""), "{\"cursor\": ");
	     p != NULL; p = strstr(p + 1, "{\"cursor\": "))
		if (strncmp(strstr(p, "\"type\""), "\"type\": \"receipt\"",
		        17) == 0)
			imdnet_check_receipt(p, lines);
	ck_assert_int_eq(sscanf(a.body, "{\"cursor\": %llu", &cur), 1);
	ck_assert_uint_ge(cur, 12);
	imdnet_answer_free(&a);
	/* max=5 answers five and says more wait. */
	a = request("receiver", NULL, "GET", "/v1/receipts?max=5", NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	ck_assert_uint_eq(count(a.body, "{\"cursor\": "), 6);
	ck_assert_ptr_nonnull(strstr(a.body, "\"more\": true"));
	imdnet_answer_free(&a);
	/* Acknowledged: nothing more, after a wait of 1 s. */
	(void)snprintf(target, sizeof(target), "/v1/receipts?after=%llu&wait=1",
	    cur);
	t0 = harness_now_ms();
	a = request("receiver", NULL, "GET", target, NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	ck_assert_ptr_nonnull(strstr(a.body, "\"entries\": []"));
	ck_assert_uint_ge(harness_now_ms() - t0, 900);
	imdnet_answer_free(&a);
	(void)snprintf(target, sizeof(target), "/v1/receipts?after=%llu",
	    cur + 100);
	a = request("receiver", NULL, "GET", target, NULL, NULL);
	expect_refusal(a, 400, "malformed", "intermediary.malformed", 0);
	a = request("receiver", NULL, "GET", "/v1/receipts?wait=61", NULL,
	    NULL);
	expect_refusal(a, 400, "malformed", "intermediary.malformed", 0);
	free(lines);
}
END_TEST

/* Each refusal of the page, counted; an honest client served after. */
START_TEST(test_refusals)
{
	char file[600], recs[600], bad[600], nonce[BASE32_LEN(16) + 1];
	uint8_t nb[16];
	struct harness_output o;
	struct imdnet_answer a;
	int limited = 0;

	imdnet_random_file(h, "two", 2 * 1000, file, sizeof(file));
	(void)snprintf(recs, sizeof(recs), "%s/two.rec", dir);
	o = imdnet_sh("%s put %s/tester 1000 %s %s", TOOL, dir, file, recs);
	ck_assert_int_eq(o.status, 0);
	harness_output_free(&o);
	a = request(NULL, NULL, "POST", "/v1/blocks", recs, NULL);
	expect_refusal(a, 401, "unauthorized", "intermediary.unauthorized", 0);
	a = request(NULL, NULL, "GET", "/v1/blocks/X", NULL,
	    "-H 'Authorization: Ferry nonsense'");
	expect_refusal(a, 401, "unauthorized", "intermediary.unauthorized", 1);
	a = request("tester", "bad", "POST", "/v1/blocks", recs, NULL);
	expect_refusal(a, 401, "unauthorized", "intermediary.unauthorized", 2);
	a = request("tester", "-1000", "POST", "/v1/blocks", recs, NULL);
	ck_assert_ptr_nonnull(strstr(a.headers, "Date: "));
	expect_refusal(a, 401, "stale", "intermediary.stale", 0);
	a = request("tester", "+1000", "POST", "/v1/blocks", recs, NULL);
	expect_refusal(a, 401, "stale", "intermediary.stale", 1);
	randombytes_buf(nb, sizeof(nb));
	base32_encode(nb, sizeof(nb), nonce);
	{
		char args[64];

		(void)snprintf(args, sizeof(args), "+0 %s", nonce);
		a = request("tester", args, "POST", "/v1/blocks", recs, NULL);
		ck_assert_int_eq(a.status, 200);
		imdnet_answer_free(&a);
		a = request("tester", args, "POST", "/v1/blocks", recs, NULL);
		expect_refusal(a, 401, "replayed", "intermediary.replayed", 0);
	}
	/* Over MAX_REQUEST_BYTES (8 MiB): refused from its Content-Length. */
	imdnet_random_file(h, "huge", 9 << 20, bad, sizeof(bad));
	a = request("tester", NULL, "POST", "/v1/blocks", bad, NULL);
	expect_refusal(a, 413, "too-large", "intermediary.too_large", 0);
	/* Not records: a len under 75. */
	imdnet_random_file(h, "junk", 100, bad, sizeof(bad));
	o = imdnet_sh("printf '\\000\\000\\000\\010' | cat - %s > %s.x", bad,
	    bad);
	harness_output_free(&o);
	(void)strcat(bad, ".x");
	a = request("tester", NULL, "POST", "/v1/blocks", bad, NULL);
	ck_assert_ptr_nonnull(strstr(a.body, "0 records before it"));
	ck_assert_ptr_nonnull(strstr(a.body, "\"relayed\": 0}"));
	expect_refusal(a, 400, "malformed", "intermediary.malformed", 0);
	/* A record with a spoiled signature is refused alone. */
	o = imdnet_sh("%s put %s/tester 1000 %s %s 3 +3600 1", TOOL, dir, file,
	    recs);
	harness_output_free(&o);
	a = request("tester", NULL, "POST", "/v1/blocks", recs, NULL);
	ck_assert_int_eq(a.status, 200);
	ck_assert_ptr_nonnull(strstr(a.body, "\"relayed\": 1, \"refused\": 1"));
	ck_assert_ptr_nonnull(strstr(a.body, "\"status\": \"bad-signature\""));
	imdnet_answer_free(&a);
	ck_assert_uint_ge(mesh_stat(d[0], "intermediary.records_refused"), 1);
	/* Over CLIENT_RATE (5 a second, bursts of 10): 20 requests signed
	 * first, then sent by one curl on one connection, so that they come
	 * faster than the rate however loaded the machine is (a curl each
	 * took longer than 0.2 s under load and never passed it). */
	burst("tester", "GET", "/v1/blocks/X", 20);
	for (int i = 0; i < 20 && limited == 0; i++) {
		a = burst_answer(i);
		if (a.status == 429) {
			ck_assert_ptr_nonnull(
			    strstr(a.headers, "Retry-After:"));
			expect_refusal(a, 429, "rate", "intermediary.rate", 0);
			limited = 1;
		} else {
			expect_refusal(a, 400, "malformed",
			    "intermediary.malformed", 0);
		}
	}
	ck_assert(limited);
	/* Over CLIENT_QUOTA (6 MiB a day): the records before it stay. */
	imdnet_random_file(h, "seven", 7 << 20, file, sizeof(file));
	o = imdnet_sh("%s put %s/hog 1048576 %s %s", TOOL, dir, file, recs);
	harness_output_free(&o);
	a = request("hog", NULL, "POST", "/v1/blocks", recs, NULL);
	ck_assert_ptr_nonnull(strstr(a.body, "the 6 records before it"));
	ck_assert_ptr_nonnull(strstr(a.body, "\"relayed\": 6}"));
	expect_refusal(a, 403, "quota", "intermediary.quota", 0);
	/* More than 4096 records (refused alone: replication 0) in one
	 * request. */
	imdnet_random_file(h, "many", 4097, file, sizeof(file));
	o = imdnet_sh("%s put %s/many 1 %s %s 0 >/dev/null", TOOL, dir, file,
	    recs);
	harness_output_free(&o);
	a = request("many", NULL, "POST", "/v1/blocks", recs, NULL);
	ck_assert_ptr_nonnull(strstr(a.body, "more than 4096 records"));
	expect_refusal(a, 413, "too-large", "intermediary.too_large", 1);
	/* After all that, an honest client. */
	o = imdnet_sh("%s put %s/later 1000 %s/two %s", TOOL, dir, dir, recs);
	harness_output_free(&o);
	a = request("later", NULL, "POST", "/v1/blocks", recs, NULL);
	ck_assert_int_eq(a.status, 200);
	ck_assert_ptr_nonnull(strstr(a.body, "\"relayed\": 2, \"refused\": 0"));
	imdnet_answer_free(&a);
}
END_TEST

/* A TLS connection to the intermediary. */
static SSL *
tls_open(SSL_CTX *ctx)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	SSL *ssl;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(harness_sin(d[0]->ip, port, &sin), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ssl = SSL_new(ctx);
	ck_assert_ptr_nonnull(ssl);
	ck_assert_int_eq(SSL_set_fd(ssl, fd), 1);
	ck_assert_int_eq(SSL_connect(ssl), 1);
	return ssl;
}

static void
tls_close(SSL *ssl)
{
	int fd = SSL_get_fd(ssl);

	SSL_free(ssl);
	(void)close(fd);
}

/* A client that trickles its request a byte every 300 ms is answered 408
 * at REQUEST_TIMEOUT (2 s) and cut off; another is served meanwhile. */
START_TEST(test_slowloris)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	const char *head =
	    "GET /v1/intermediaries HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	uint64_t slow = mesh_stat(d[0], "intermediary.slow"), t0;
	char buf[4096];
	size_t got = 0;
	struct imdnet_answer a;
	SSL *ssl;
	int n;

	ck_assert_ptr_nonnull(ctx);
	ssl = tls_open(ctx);
	t0 = harness_now_ms();
	ck_assert_int_eq(SSL_write(ssl, head, (int)strlen(head)),
	    (int)strlen(head));
	for (int i = 0; i < 20; i++) {
		struct pollfd p = { SSL_get_fd(ssl), POLLIN, 0 };

		if (poll(&p, 1, 300) > 0)
			break;
		if (SSL_write(ssl, "a", 1) != 1)
			break;
		if (i == 2) {
			a = request(NULL, NULL, "GET", "/v1/intermediaries",
			    NULL, NULL);
			ck_assert_int_eq(a.status, 200);
			imdnet_answer_free(&a);
		}
	}
	while ((n = SSL_read(ssl, buf + got, (int)(sizeof(buf) - 1 - got))) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	ck_assert_msg(strncmp(buf, "HTTP/1.1 408 ", 13) == 0, "%s", buf);
	ck_assert_ptr_nonnull(strstr(buf, "\"error\": \"slow\""));
	ck_assert_uint_ge(harness_now_ms() - t0, 1800);
	ck_assert_uint_le(harness_now_ms() - t0, 5000);
	ck_assert_uint_gt(mesh_stat(d[0], "intermediary.slow"), slow);
	tls_close(ssl);
	SSL_CTX_free(ctx);
}
END_TEST

/* An authenticated upload whose body trickles (a byte every 300 ms, not
 * the 1 KiB/s asked over each REQUEST_TIMEOUT) is cut off with 408. */
START_TEST(test_slow_body)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	uint64_t slow = mesh_stat(d[0], "intermediary.slow"), t0;
	char cmd[1024], auth[1024], head[2048], buf[4096];
	size_t got = 0;
	SSL *ssl;
	int n;

	(void)snprintf(cmd, sizeof(cmd),
	    "%s auth %s/trickler %s POST /v1/blocks", TOOL, dir, d[0]->id_str);
	sh_line(auth, sizeof(auth), cmd);
	n = snprintf(head, sizeof(head),
	    "POST /v1/blocks HTTP/1.1\r\n%s\r\nContent-Length: 100000\r\n\r\n",
	    auth);
	/* The body starts as a record of 1000 bytes would. */
	wire_put32(head + n, 74 + 1000);
	n += 4;
	ssl = tls_open(ctx);
	t0 = harness_now_ms();
	ck_assert_int_eq(SSL_write(ssl, head, n), n);
	for (int i = 0; i < 30; i++) {
		struct pollfd p = { SSL_get_fd(ssl), POLLIN, 0 };

		if (poll(&p, 1, 300) > 0 || SSL_write(ssl, "\0", 1) != 1)
			break;
	}
	while ((n = SSL_read(ssl, buf + got, (int)(sizeof(buf) - 1 - got))) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	ck_assert_msg(strncmp(buf, "HTTP/1.1 408 ", 13) == 0, "%s", buf);
	ck_assert_uint_ge(harness_now_ms() - t0, 1800);
	ck_assert_uint_le(harness_now_ms() - t0, 5000);
	ck_assert_uint_gt(mesh_stat(d[0], "intermediary.slow"), slow);
	tls_close(ssl);
	SSL_CTX_free(ctx);
}
END_TEST

/* MAX_CONNECTIONS (6) open: the next is told 503 busy; once they close,
 * requests are served again. */
START_TEST(test_max_connections)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	SSL *open_[6];
	struct imdnet_answer a;

	for (int i = 0; i < 6; i++)
		open_[i] = tls_open(ctx);
	harness_sleep_ms(100);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_ptr_nonnull(strstr(a.headers, "Retry-After:"));
	expect_refusal(a, 503, "busy", "intermediary.busy", 0);
	for (int i = 0; i < 6; i++)
		tls_close(open_[i]);
	harness_sleep_ms(200);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	imdnet_answer_free(&a);
	SSL_CTX_free(ctx);
}
END_TEST

START_TEST(test_tls12_refused)
{
	uint64_t before = mesh_stat(d[0], "intermediary.tls_failed");
	struct imdnet_answer a = request(NULL, NULL, "GET",
	    "/v1/intermediaries", NULL, "--tls-max 1.2");

	ck_assert_int_eq(a.status, 0);
	ck_assert_int_ne(a.curl_exit, 0);
	imdnet_answer_free(&a);
	ck_assert(
	    mesh_wait_stat(d[0], "intermediary.tls_failed", before + 1, 5000));
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, "--tlsv1.3");
	ck_assert_int_eq(a.status, 200);
	imdnet_answer_free(&a);
}
END_TEST

/* Every intermediary.* counter the daemon reports is in the STATISTICS
 * of ferry-intermediary(7). */
START_TEST(test_counters_documented)
{
	char path[PATH_MAX], *man, word[96];
	struct ferry_client *c;
	struct ferry_stat *st;
	size_t n, seen = 0;

	(void)snprintf(path, sizeof(path), "%s/man/ferry-intermediary.7",
	    FERRY_SOURCE_DIR);
	man = imdnet_read_file(path, NULL);
	ck_assert_int_eq(harness_daemon_client(d[0], &c), 0);
	ck_assert_int_eq(ferry_stats(c, &st, &n), 0);
	for (size_t i = 0; i < n; i++) {
		if (strncmp(st[i].name, "intermediary.", 13) != 0)
			continue;
		seen++;
		(void)snprintf(word, sizeof(word), "Cm %s", st[i].name + 13);
		if (strstr(man, word) == NULL)
			(void)snprintf(word, sizeof(word), " , %s",
			    st[i].name + 13);
		ck_assert_msg(strstr(man, word) != NULL,
		    "%s is not in ferry-intermediary(7)", st[i].name);
	}
	ck_assert_uint_ge(seen, 20);
	ferry_stats_free(st, n);
	ferry_client_close(c);
	free(man);
}
END_TEST

/* Sends raw bytes over a TLS connection of its own; what comes back
 * until the intermediary closes it, in buf. */
static void
raw_exchange(const char *req, size_t len, char *buf, size_t size)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	size_t got = 0;
	SSL *ssl;
	int n;

	ck_assert_ptr_nonnull(ctx);
	ssl = tls_open(ctx);
	ck_assert_int_eq(SSL_write(ssl, req, (int)len), (int)len);
	while (got < size - 1 &&
	    (n = SSL_read(ssl, buf + got, (int)(size - 1 - got))) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	tls_close(ssl);
	SSL_CTX_free(ctx);
}

/* Heads and bodies that are not HTTP/1.1 as the server reads it: 400
 * malformed; a head over MAX_HEADER_BYTES: 413; each closes its
 * connection, and is counted. */
START_TEST(test_malformed_http)
{
	static const char *const bad[] = {
		"get /v1/intermediaries HTTP/1.1\r\n\r\n",
		"GET http://x/v1/intermediaries HTTP/1.1\r\n\r\n",
		"GET /v1/intermediaries HTTP/2.0\r\n\r\n",
		"GET /v1/intermediaries HTTP/1.1\r\nBad Name: x\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"POST /v1/blocks HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
	};
	uint64_t before = mesh_stat(d[0], "intermediary.malformed");
	uint64_t large = mesh_stat(d[0], "intermediary.too_large");
	static char buf[16384], big[12000];
	struct imdnet_answer a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		raw_exchange(bad[i], strlen(bad[i]), buf, sizeof(buf));
		ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s: %s",
		    bad[i], buf);
		ck_assert_ptr_nonnull(strstr(buf, "\"error\": \"malformed\""));
		ck_assert_ptr_nonnull(strstr(buf, "Connection: close"));
	}
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.malformed"),
	    before + sizeof(bad) / sizeof(bad[0]));
	/* A chunked body whose chunk size is not hex, after a valid
	 * signature: read, then refused. */
	{
		char cmd[1024], auth[1024], req[2048];
		int n;

		(void)snprintf(cmd, sizeof(cmd),
		    "%s auth %s/chunker %s POST "
		    "/v1/blocks",
		    TOOL, dir, d[0]->id_str);
		sh_line(auth, sizeof(auth), cmd);
		n = snprintf(req, sizeof(req),
		    "POST /v1/blocks HTTP/1.1\r\n%s\r\n"
		    "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
		    auth);
		raw_exchange(req, (size_t)n, buf, sizeof(buf));
		ck_assert_msg(strncmp(buf, "HTTP/1.1 400 ", 13) == 0, "%s",
		    buf);
		ck_assert_uint_eq(mesh_stat(d[0], "intermediary.malformed"),
		    before + sizeof(bad) / sizeof(bad[0]) + 1);
	}
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	{
		char hdr[sizeof(big) + 32];

		(void)snprintf(hdr, sizeof(hdr), "-H 'X-Big: %s'", big);
		a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, hdr);
		expect_refusal(a, 413, "too-large", "intermediary.too_large",
		    large);
	}
}
END_TEST

/* A reload applies MAX_CONNECTIONS to connections that come after it. */
START_TEST(test_reload)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	struct imdnet_answer a;
	SSL *s1, *s2;

	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nMAX_CONNECTIONS = 2\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
	s1 = tls_open(ctx);
	s2 = tls_open(ctx);
	harness_sleep_ms(100);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_int_eq(a.status, 503);
	imdnet_answer_free(&a);
	tls_close(s1);
	tls_close(s2);
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nMAX_CONNECTIONS = 6\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
	harness_sleep_ms(200);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	imdnet_answer_free(&a);
	SSL_CTX_free(ctx);
}
END_TEST

/* GET /v1/intermediaries on ssl, kept alive: whether it is answered 200
 * (its body read whole, so that the connection stays usable). */
static bool
tls_get_ok(SSL *ssl)
{
	static const char req[] = "GET /v1/intermediaries HTTP/1.1\r\n"
	                          "Host: x\r\n\r\n";
	char buf[8192], *end = NULL, *cl;
	size_t got = 0, want = 0;
	int n;

	if (SSL_write(ssl, req, (int)strlen(req)) != (int)strlen(req))
		return false;
	while (got < sizeof(buf) - 1 && (end == NULL || got < want)) {
		n = SSL_read(ssl, buf + got, (int)(sizeof(buf) - 1 - got));
		if (n <= 0)
			return false;
		got += (size_t)n;
		buf[got] = '\0';
		if (end == NULL && (end = strstr(buf, "\r\n\r\n")) != NULL) {
			cl = strstr(buf, "Content-Length: ");
			if (cl == NULL || cl > end)
				return false;
			want = (size_t)(end + 4 - buf) +
			    strtoul(cl + 16, NULL, 10);
		}
	}
	return end != NULL && got == want &&
	    strncmp(buf, "HTTP/1.1 200 ", 13) == 0;
}

/* MAX_CONNECTIONS_PER_ADDRESS = 3 (by a reload, under MAX_CONNECTIONS
 * 6): with 3 open from 127.0.0.1, a 4th is closed unanswered and
 * counted; the 3 are served, and once one has closed a new connection
 * is. */
START_TEST(test_connections_per_address)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	uint64_t before = mesh_stat(d[0], "intermediary.address_busy");
	struct imdnet_answer a;
	SSL *open_[3];

	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(
	    harness_daemon_config(d[0],
	        "[intermediary]\nMAX_CONNECTIONS_PER_ADDRESS = 3\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
	for (int i = 0; i < 3; i++)
		open_[i] = tls_open(ctx);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_msg(a.status == 0 && a.curl_exit != 0,
	    "a 4th connection got %d (curl %d)", a.status, a.curl_exit);
	imdnet_answer_free(&a);
	ck_assert(mesh_wait_stat(d[0], "intermediary.address_busy", before + 1,
	    5000));
	for (int i = 0; i < 3; i++)
		ck_assert_msg(tls_get_ok(open_[i]), "connection %d", i);
	tls_close(open_[0]);
	harness_sleep_ms(200);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	imdnet_answer_free(&a);
	/* The other two were open all along. */
	ck_assert(tls_get_ok(open_[1]));
	ck_assert(tls_get_ok(open_[2]));
	tls_close(open_[1]);
	tls_close(open_[2]);
	SSL_CTX_free(ctx);
	ck_assert_int_eq(
	    harness_daemon_config(d[0],
	        "[intermediary]\nMAX_CONNECTIONS_PER_ADDRESS = 32\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
}
END_TEST

/* ADDRESS_RATE = 5 (bursts of 10, by a reload): 40 requests with one
 * badly signed Authorization, on one connection, faster than that. The
 * first 10 reach the signature check (401); of the rest, those over the
 * rate are answered 429 with Retry-After before it: the unauthorized
 * counter moves by the 401s only. After a pause the address is served
 * again. */
START_TEST(test_address_rate)
{
	uint64_t unauth = mesh_stat(d[0], "intermediary.unauthorized");
	uint64_t rated = mesh_stat(d[0], "intermediary.address_rate");
	char cmd[1024], auth[1024];
	unsigned n401 = 0, n429 = 0;
	struct harness_output o;
	struct imdnet_answer a;
	FILE *f;

	(void)snprintf(cmd, sizeof(cmd),
	    "%s auth %s/flooder %s GET /v1/blocks/X bad", TOOL, dir,
	    d[0]->id_str);
	sh_line(auth, sizeof(auth), cmd);
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nADDRESS_RATE = 5\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
	(void)snprintf(cmd, sizeof(cmd), "%s/flood.sh", dir);
	f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "exec curl");
	for (int i = 0; i < 40; i++)
		fprintf(f,
		    "%s -sS --cacert %s -o %s/resp.%d -D %s/hdrs.%d "
		    "-H '%s' '%s/v1/blocks/X'",
		    i > 0 ? " --next" : "", cert, dir, i, dir, i, auth, url);
	fprintf(f, "\n");
	ck_assert_int_eq(fclose(f), 0);
	o = imdnet_sh("sh %s", cmd);
	ck_assert_msg(o.status == 0, "flood: %s", o.err);
	harness_output_free(&o);
	for (int i = 0; i < 40; i++) {
		a = burst_answer(i);
		if (i < 10 || a.status == 401) {
			n401++;
			expect_refusal(a, 401, "unauthorized",
			    "intermediary.unauthorized", unauth);
			continue;
		}
		n429++;
		ck_assert_ptr_nonnull(strstr(a.headers, "Retry-After: 1\r\n"));
		expect_refusal(a, 429, "rate", "intermediary.address_rate",
		    rated);
	}
	ck_assert_uint_ge(n429, 1);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.unauthorized"),
	    unauth + n401);
	ck_assert_uint_eq(mesh_stat(d[0], "intermediary.address_rate"),
	    rated + n429);
	/* A second and a half later: 7 tokens. */
	harness_sleep_ms(1500);
	a = request(NULL, NULL, "GET", "/v1/intermediaries", NULL, NULL);
	ck_assert_int_eq(a.status, 200);
	imdnet_answer_free(&a);
	a = request("flooder", NULL, "GET", "/v1/blocks/X", NULL, NULL);
	expect_refusal(a, 400, "malformed", "intermediary.malformed", 0);
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[intermediary]\nADDRESS_RATE = 100\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d[0]), 0);
}
END_TEST

static Suite *
intermediary_suite(void)
{
	Suite *s = suite_create("intermediary");
	TCase *tc = tcase_create("https");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_upload_get);
	tcase_add_test(tc, test_upload_streamed);
	tcase_add_test(tc, test_receipts);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_slowloris);
	tcase_add_test(tc, test_slow_body);
	tcase_add_test(tc, test_max_connections);
	tcase_add_test(tc, test_malformed_http);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_connections_per_address);
	tcase_add_test(tc, test_address_rate);
	tcase_add_test(tc, test_tls12_refused);
	tcase_add_test(tc, test_counters_documented);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(intermediary_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
