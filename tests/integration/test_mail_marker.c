/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Nothing of a file's plaintext goes into mail (issue 13), checked rather
 * than trusted: two real ferryd processes with only the SMTP transport,
 * through the real Postfix and procmail of tests/mta/setup-mta.sh, link
 * by mail and run the DHT; a file with a marker planted every 4000 bytes
 * is put on one (one replica of each block: half of them are stored by
 * the other, by mail) and got on the other (the other half comes back by
 * mail). Each user's procmail keeps a copy of every mail for its inbox
 * (ferry consumes the inbox), and every mail file the test's users hold,
 * those copies, what is left in the inboxes, the fallback mailbox and
 * procmail's log, is searched for the marker, as given and hex-encoded,
 * both in its text and in the bytes its base64 lines decode to. As a
 * control that the search sees the transfer, the decoded bytes outweigh
 * the file. The UDP and TCP wire is test_wire_marker's, the block stores
 * and logs test_storage's. Without the MTA fixture the test skips, saying
 * so, unless FERRY_REQUIRE_MTA=1.
 */
/* ctest: TIMEOUT=900 RESOURCE_LOCK=mta LABELS=mta */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include <ferry/client.h>

#include "dhtcheck.h"
#include "harness.h"
#include "mesh.h"
#include "../mta/mta.h"

#define LINK_MS  120000 /* validation and key exchange by mail */
#define XFER_MS  300000 /* a put or a get of the file by mail */
#define FILE_LEN (20 * 1024 + 100)

static const char marker[] = "ferry-MARKER-3a9d54e1";

/* What the mail files held. */
struct scan {
	size_t files;    /* mail files read */
	size_t decoded;  /* bytes their base64 lines decode to */
	char found[512]; /* where the marker was, "" if nowhere */
};

/* The marker as given, and in hex both ways, in p[0..len). */
static const char *
marker_in(const uint8_t *p, size_t len)
{
	char hex[2 * sizeof(marker)], upper[2 * sizeof(marker)];

	sodium_bin2hex(hex, sizeof(hex), (const uint8_t *)marker,
	    strlen(marker));
	for (size_t i = 0; i < sizeof(upper); i++)
		upper[i] = (char)toupper((unsigned char)hex[i]);
	if (memmem(p, len, marker, strlen(marker)) != NULL)
		return "the marker";
	if (memmem(p, len, hex, strlen(hex)) != NULL ||
	    memmem(p, len, upper, strlen(upper)) != NULL)
		return "the marker's hex";
	return NULL;
}

static bool
base64_line(const char *p, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '+' &&
		    p[i] != '/' && p[i] != '=')
			return false;
	return true;
}

/* Decodes run[0..len) (base64 lines) and searches the bytes. */
static const char *
scan_run(struct scan *sc, const char *run, size_t len)
{
	uint8_t *bin = malloc(len + 1);
	const char *what = NULL;
	size_t got = 0;

	ck_assert_ptr_nonnull(bin);
	if (sodium_base642bin(bin, len + 1, run, len, "\r\n", &got, NULL,
	        sodium_base64_VARIANT_ORIGINAL) == 0) {
		sc->decoded += got;
		what = marker_in(bin, got);
	}
	free(bin);
	return what;
}

/* Decodes each run of base64 lines of text (a MIME part's body, as the
 * SMTP transport writes them) and searches the bytes. */
static const char *
scan_base64(struct scan *sc, const char *text, size_t len)
{
	const char *p = text, *end = text + len, *run = NULL, *eol;
	const char *what = NULL;
	size_t n;

	while (p < end && what == NULL) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL)
			eol = end;
		n = (size_t)(eol - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (base64_line(p, n)) {
			if (run == NULL)
				run = p;
		} else if (run != NULL) {
			what = scan_run(sc, run, (size_t)(p - run));
			run = NULL;
		}
		p = eol + 1;
	}
	if (what == NULL && run != NULL)
		what = scan_run(sc, run, (size_t)(end - run));
	return what;
}

/* Reads path whole (mail files are small); NULL if it cannot. */
static char *
read_all(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			buf = realloc(buf, cap + 1);
			ck_assert_ptr_nonnull(buf);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

static void
scan_file(struct scan *sc, const char *path)
{
	const char *what;
	size_t len;
	char *text = read_all(path, &len);

	if (text == NULL)
		return;
	sc->files++;
	what = marker_in((const uint8_t *)text, len);
	if (what == NULL && (what = scan_base64(sc, text, len)) != NULL)
		what = strcmp(what, "the marker") == 0
		    ? "the marker, base64-encoded"
		    : "the marker's hex, base64-encoded";
	if (what != NULL && sc->found[0] == '\0')
		(void)snprintf(sc->found, sizeof(sc->found), "%s in %s", what,
		    path);
	free(text);
}

/* Every file of a Maildir's tmp, new and cur. */
static void
scan_maildir(struct scan *sc, const char *dir)
{
	static const char *const subs[] = { "tmp", "new", "cur" };
	char path[1024];
	struct dirent *de;
	DIR *d;

	for (size_t i = 0; i < 3; i++) {
		(void)snprintf(path, sizeof(path), "%s/%s", dir, subs[i]);
		d = opendir(path);
		if (d == NULL)
			continue;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			(void)snprintf(path, sizeof(path), "%s/%s/%s", dir,
			    subs[i], de->d_name);
			scan_file(sc, path);
		}
		(void)closedir(d);
	}
}

/* All the mail user u holds. */
static void
scan_user(struct scan *sc, const struct mta_user *u)
{
	char path[1024];

	scan_maildir(sc, u->kept);
	scan_maildir(sc, u->inbox);
	(void)snprintf(path, sizeof(path), "%s/Mailbox", u->home);
	scan_file(sc, path);
	(void)snprintf(path, sizeof(path), "%s/procmail.log", u->home);
	scan_file(sc, path);
}

/* The SMTP transport as user u, the DHT on, one replica of each block,
 * small chunks (many blocks from a small file). */
static void
mail_config(struct harness_daemon *d, const struct mta_user *u)
{
	ck_assert_int_eq(harness_daemon_transports(d, "smtp"), 0);
	ck_assert_int_eq(
	    harness_daemon_config(d,
	        "[ferryd]\nLOG_LEVEL = info\n"
	        "[dht]\nENABLE = yes\nREQUEST_TIMEOUT = 60 s\n"
	        "[storage]\nCHUNK_SIZE = 1 KiB\nITERATIONS = 10\n"
	        "REPLICATION = 1\n"
	        "[transport-smtp]\nADDRESS = %s\nFILTER = %s\nINBOX = %s\n"
	        "MAX_MAILS_PER_DEST_HOUR = 100000\nMAX_MAILS_HOUR = 100000\n",
	        u->mail, u->filter, u->inbox),
	    0);
}

/* ferry ARGS on dd, given XFER_MS; its output in o. */
static void
run_cli(struct harness *h, struct harness_daemon *dd, struct harness_output *o,
    const char *a1, const char *a2, const char *a3, const char *a4)
{
	char *argv[] = { (char *)harness_cli_path(), (char *)"--socket",
		dd->socket, (char *)a1, (char *)a2, (char *)a3, (char *)a4,
		NULL };

	ck_assert_int_eq(harness_run(argv, NULL, XFER_MS, o), 0);
	if (o->status != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferry %s: status %d: %s", a1, o->status, o->err);
	}
}

START_TEST(test_mail_marker)
{
	struct harness_daemon *d[2];
	struct harness_output o;
	struct mta_user ua, ub;
	struct scan sc = { 0 };
	struct harness *h;
	char *uri, *path, *out;
	uint64_t mails;
	uint8_t *data;
	FILE *f;

	if (!mta_available())
		return;
	mta_user_kept(&ua, "ferry-it-ka");
	mta_user_kept(&ub, "ferry-it-kb");
	ck_assert_int_eq(harness_new("mail-marker", &h), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d[0]), 0);
	ck_assert_int_eq(harness_daemon_new(h, &d[1]), 0);
	mail_config(d[0], &ua);
	mail_config(d[1], &ub);
	ck_assert_int_eq(harness_daemon_start_ready(d[0]), 0);
	uri = mesh_hello(d[0]);
	ck_assert_int_eq(harness_daemon_config(d[1], "[core]\nBOOTSTRAP = %s\n",
	                     uri),
	    0);
	free(uri);
	ck_assert_int_eq(harness_daemon_start_ready(d[1]), 0);
	mesh_wait_peers(h, d[1], 1, LINK_MS);
	mesh_wait_peers(h, d[0], 1, LINK_MS);
	/* Both tables hold the other: with one replica a block is where
	 * the closest of the two is, as each sees it. */
	dhtcheck_wait_tables(h, d, 2, 1, LINK_MS);

	/* The marker every 4000 bytes, across chunk boundaries too. */
	data = malloc(FILE_LEN);
	ck_assert_ptr_nonnull(data);
	randombytes_buf(data, FILE_LEN);
	for (size_t off = 100; off + strlen(marker) <= FILE_LEN; off += 4000)
		memcpy(data + off, marker, strlen(marker));
	ck_assert_int_gt(asprintf(&path, "%s/marked", harness_dir(h)), 0);
	ck_assert_int_gt(asprintf(&out, "%s/marked.got", harness_dir(h)), 0);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, FILE_LEN, f), FILE_LEN);
	ck_assert_int_eq(fclose(f), 0);

	run_cli(h, d[1], &o, "put", path, NULL, NULL);
	o.out[strcspn(o.out, "\n")] = '\0';
	uri = strdup(o.out);
	harness_output_free(&o);
	/* Twice in CI runs (of many, both under ASan on a loaded machine)
	 * the get found no holder of a manifest block right after the
	 * put's receipts (exit 6, not found), and once a second get a
	 * second later did too: a DHT race over slow mail that is not
	 * this test's subject and is not understood yet (the closing note
	 * of 2026-11-26). A get resumes, so it is asked again, up to 5
	 * times a second apart, with what each daemon's DHT knew said on
	 * stderr for the next who looks; the marker checks below are
	 * unchanged. */
	for (int tries = 1;; tries++) {
		char *argv[] = { (char *)harness_cli_path(),
			(char *)"--socket", d[0]->socket, (char *)"get", uri,
			(char *)"-o", out, NULL };

		ck_assert_int_eq(harness_run(argv, NULL, XFER_MS, &o), 0);
		if (o.status == 0)
			break;
		if (o.status != 6 || tries == 5) {
			harness_dump_logs(h);
			ck_abort_msg("ferry get (try %d): status %d: %s", tries,
			    o.status, o.err);
		}
		fprintf(stderr, "mail marker: get (try %d) said %s", tries,
		    o.err);
		for (int i = 0; i < 2; i++) {
			fprintf(stderr,
			    "  d%d: stored %llu served %llu not_found %llu "
			    "no_route %llu timeouts %llu entries_failed %llu\n",
			    i,
			    (unsigned long long)mesh_stat(d[i], "dht.stored"),
			    (unsigned long long)mesh_stat(d[i], "dht.served"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.not_found"),
			    (unsigned long long)mesh_stat(d[i], "dht.no_route"),
			    (unsigned long long)mesh_stat(d[i], "dht.timeouts"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.entries_failed"));
			/* Whether the other was in the table and linked, and
			 * whether the get sent anything its way: a get that
			 * ends in a few ms cannot have waited for mail. */
			fprintf(stderr,
			    "  d%d: entries %u links %llu requests_in %llu "
			    "requests_out %llu forwarded %llu retries %llu "
			    "receipts_implausible %llu\n",
			    i, dhtcheck_figures(d[i]).entries,
			    (unsigned long long)mesh_stat(d[i], "dht.links"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.requests_in"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.requests_out"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.forwarded"),
			    (unsigned long long)mesh_stat(d[i], "dht.retries"),
			    (unsigned long long)mesh_stat(d[i],
			        "dht.receipts_implausible"));
		}
		harness_output_free(&o);
		harness_sleep_ms(1000);
	}
	harness_output_free(&o);
	f = fopen(out, "rb");
	ck_assert_ptr_nonnull(f);
	{
		uint8_t *got = malloc(FILE_LEN + 1);

		ck_assert_ptr_nonnull(got);
		ck_assert_uint_eq(fread(got, 1, FILE_LEN + 1, f), FILE_LEN);
		ck_assert_int_eq(memcmp(got, data, FILE_LEN), 0);
		free(got);
	}
	fclose(f);
	/* Half the blocks each way: both daemons stored some by mail. */
	ck_assert_uint_gt(mesh_stat(d[0], "dht.stored"), 0);
	ck_assert_uint_gt(mesh_stat(d[1], "dht.served"), 0);

	mails =
	    mesh_stat(d[0], "smtp.tx_mails") + mesh_stat(d[1], "smtp.tx_mails");
	/* Stopped first: nothing more is being written. */
	ck_assert_int_eq(harness_daemon_stop(d[0], 10000, NULL), 0);
	ck_assert_int_eq(harness_daemon_stop(d[1], 10000, NULL), 0);
	scan_user(&sc, &ua);
	scan_user(&sc, &ub);
	fprintf(stderr,
	    "mail marker: %zu mail files searched (%llu mails sent), %zu bytes "
	    "decoded from their base64 (the file: %d bytes)\n",
	    sc.files, (unsigned long long)mails, sc.decoded, FILE_LEN);
	ck_assert_msg(sc.found[0] == '\0', "%s", sc.found);
	/* The search saw the transfer: every block went by mail once. */
	ck_assert_uint_gt(sc.files, 10);
	ck_assert_uint_gt(sc.decoded, FILE_LEN);
	free(data);
	free(uri);
	free(path);
	free(out);
	harness_free(h);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("mail_marker");
	TCase *tc = tcase_create("mail_marker");

	tcase_set_timeout(tc, 800);
	tcase_add_test(tc, test_mail_marker);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr;
	int failed;

	if (sodium_init() < 0)
		return 1;
	(void)mta_prepare(); /* once, before the tests fork */
	sr = srunner_create(test_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
