/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The intermediary never holds a plaintext, a chunk key or the client's
 * key (issue 15), checked rather than trusted: four real daemons, d0 an
 * honest intermediary logging at debug level; a file with a marker every
 * 4000 bytes and across each chunk boundary is put through it by `ferry
 * remote put` and got back through it by `ferry remote get`. Then every
 * file of d0's directory (its state directory: SQLite database and WAL,
 * block store, identity; its log, configuration and runtime directory)
 * and every readable mapping of the live ferryd's memory (/proc/PID/maps
 * and /proc/PID/mem) are searched for: the marker; each key the client
 * derived (computed here with the storage code from the file and the
 * client's convergence secret: the chunks' AEAD keys, the manifest
 * nodes', the root's, checked against the URI), the URI, and the secret;
 * the client's Ed25519 seed and its 64-byte libsodium form; each as raw
 * bytes, hex and base32. None may be found. The search is shown to work:
 * it finds the marker in a control file planted in the state directory,
 * reads the queue's database and the log, and finds in memory the
 * client's public key, which the intermediary holds by right.
 */
/* ctest: TIMEOUT=300 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "core/aead.h"
#include "core/identity.h"
#include "harness.h"
#include "imdnet.h"
#include "lib/base32.h"
#include "procstat.h"
#include "storage/chunk.h"
#include "storage/filesum.h"
#include "storage/manifest.h"
#include "storage/secret.h"
#include "storage/uri.h"

#define N          4
#define CHUNK      STORAGE_CHUNK_SIZE_DEFAULT /* the thin client's */
#define FILE_LEN   (4 * CHUNK + 7000)         /* 5 chunks */
#define MARK_EVERY 4000
#define NEEDLES    256
#define WINDOW     (1024 * 1024) /* of memory read at once */

static const char marker[] = "ferry-MARKER-7e41b0c9";

/* Something the intermediary must not hold, in one form. */
struct needle {
	char what[96];
	uint8_t b[160];
	size_t len;
	char found[4096 + 128]; /* where, "" if nowhere */
};

static struct needle needles[NEEDLES];
static size_t n_needles;
static struct harness *h;
static struct harness_daemon *d[N];
static char cert[600], url[64], client[600], file[600];

static void
setup(void)
{
	ck_assert_int_ge(sodium_init(), 0);
	ck_assert_int_eq(harness_new("remote-marker", &h), 0);
	imdnet_daemons(h, d, N);
	imdnet_cert(h, d, 1, cert, sizeof(cert));
	imdnet_listen(h, d[0], cert, url, sizeof(url));
	ck_assert_int_eq(harness_daemon_config(d[0],
	                     "[ferryd]\nLOG_LEVEL = debug\n"),
	    0);
	imdnet_start(h, d, N);
	(void)snprintf(client, sizeof(client), "%s/client", harness_dir(h));
	(void)snprintf(file, sizeof(file), "%s/marked.bin", harness_dir(h));
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
}

static void
add(const char *what, const void *b, size_t len)
{
	struct needle *nd = &needles[n_needles++];

	ck_assert_uint_le(n_needles, NEEDLES);
	ck_assert_uint_le(len, sizeof(nd->b));
	(void)snprintf(nd->what, sizeof(nd->what), "%s", what);
	memcpy(nd->b, b, len);
	nd->len = len;
	nd->found[0] = '\0';
}

/* b as raw bytes, lowercase hex, and base32 in both cases. */
static void
add_forms(const char *what, const uint8_t *b, size_t len)
{
	char name[96], text[2 * 64 + 1];

	ck_assert_uint_le(len, 64);
	add(what, b, len);
	sodium_bin2hex(text, sizeof(text), b, len);
	(void)snprintf(name, sizeof(name), "%s in hex", what);
	add(name, text, strlen(text));
	base32_encode(b, len, text);
	(void)snprintf(name, sizeof(name), "%s in base32", what);
	add(name, text, strlen(text));
	for (char *p = text; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	add(name, text, strlen(text));
}

/* A random file with the marker every MARK_EVERY bytes and across each
 * chunk boundary. */
static void
marked_file(void)
{
	uint8_t *data = malloc(FILE_LEN);
	size_t m = strlen(marker);
	FILE *f = fopen(file, "wb");

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(f);
	randombytes_buf(data, FILE_LEN);
	for (size_t off = 0; off + m <= FILE_LEN; off += MARK_EVERY)
		memcpy(data + off, marker, m);
	for (size_t c = CHUNK; c < FILE_LEN; c += CHUNK)
		memcpy(data + c - m / 2, marker, m);
	ck_assert_uint_eq(fwrite(data, 1, FILE_LEN, f), FILE_LEN);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
}

/* storage_emit_fn: a manifest node's key. */
static int
node_key(void *arg, const uint8_t *sealed, size_t len,
    const struct storage_ref *ref)
{
	(void)arg;
	(void)sealed;
	(void)len;
	add_forms("a manifest node's key", ref->key, STORAGE_KEY_LEN);
	return 0;
}

/* The keys the client derived for the file, as its put does (remote_put.c),
 * from its secret: the root's must be the URI's. */
static void
client_keys(const char *uri)
{
	uint8_t secret[STORAGE_SECRET_LEN], xxh[FILESUM_LEN];
	uint8_t *data = malloc(FILE_LEN);
	uint8_t *sealed = malloc(storage_sealed_len(CHUNK));
	struct storage_ref ref, root, want;
	struct manifest_builder *mb;
	struct storage_codec *codec;
	char path[700];
	FILE *f;

	ck_assert_ptr_nonnull(data);
	ck_assert_ptr_nonnull(sealed);
	f = fopen(file, "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fread(data, 1, FILE_LEN, f), FILE_LEN);
	(void)fclose(f);
	(void)snprintf(path, sizeof(path), "%s/convergence.key", client);
	ck_assert_int_eq(storage_secret_load(path, false, secret), 0);
	add_forms("the convergence secret", secret, sizeof(secret));
	ck_assert_int_eq(storage_codec_new(secret, STORAGE_ITERATIONS_DEFAULT,
	                     aead_aes_fast(), &codec),
	    0);
	ck_assert_int_eq(manifest_builder_new(codec, CHUNK, CHUNK, node_key,
	                     NULL, &mb),
	    0);
	for (size_t off = 0; off < FILE_LEN; off += CHUNK) {
		size_t len = FILE_LEN - off < CHUNK ? FILE_LEN - off : CHUNK;

		ck_assert_int_eq(storage_seal_pad(codec, data + off, len, CHUNK,
		                     sealed, &ref),
		    0);
		add_forms("a chunk's key", ref.key, STORAGE_KEY_LEN);
		ck_assert_int_eq(manifest_builder_add(mb, &ref), 0);
	}
	filesum_of(data, FILE_LEN, xxh);
	ck_assert_int_eq(manifest_builder_finish(mb, xxh, &root), 0);
	ck_assert_int_eq(storage_uri_parse(uri, &want, NULL), 0);
	ck_assert_msg(sodium_memcmp(root.key, want.key, STORAGE_KEY_LEN) == 0,
	    "the keys computed here are not the client's");
	add("the URI", uri, strlen(uri));
	manifest_builder_free(mb);
	storage_codec_free(codec);
	sodium_memzero(secret, sizeof(secret));
	free(sealed);
	free(data);
}

/* The client's key: its seed and libsodium's 64-byte form; its public
 * key returned (the control). */
static void
client_key(uint8_t pk[FERRY_PUBKEY_LEN])
{
	struct identity *id;
	char path[700];

	(void)snprintf(path, sizeof(path), "%s/client.key", client);
	ck_assert_int_eq(identity_load_path(path, &id), 0);
	add_forms("the client's seed", id->sk, 32);
	add_forms("the client's secret key", id->sk, 64);
	memcpy(pk, id->pk, FERRY_PUBKEY_LEN);
	identity_free(id);
}

/* Searches p[0..len), read from where, for every needle. */
static void
scan(const uint8_t *p, size_t len, const char *where)
{
	for (size_t i = 0; i < n_needles; i++)
		if (needles[i].found[0] == '\0' &&
		    memmem(p, len, needles[i].b, needles[i].len) != NULL)
			(void)snprintf(needles[i].found,
			    sizeof(needles[i].found), "%s", where);
}

static void
clear_found(void)
{
	for (size_t i = 0; i < n_needles; i++)
		needles[i].found[0] = '\0';
}

/* What the walk of a directory saw. */
struct walk {
	size_t files, bytes;
	bool queue_db, queue_wal, log; /* read intermediary.sqlite, its WAL,
	                                * ferryd.log */
};

static void
scan_file(const char *path, struct walk *w)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	struct stat st;
	uint8_t *buf;

	ck_assert_msg(fd >= 0, "%s", path);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	(void)close(fd);
	scan(buf, (size_t)st.st_size, path);
	w->files++;
	w->bytes += (size_t)st.st_size;
	if (strstr(path, "/intermediary.sqlite") != NULL && st.st_size > 0)
		w->queue_db = true;
	if (strstr(path, "/intermediary.sqlite-wal") != NULL && st.st_size > 0)
		w->queue_wal = true;
	if (strstr(path, "/ferryd.log") != NULL && st.st_size > 0)
		w->log = true;
	free(buf);
}

/* Every regular file under dir. */
static void
walk(const char *dir, struct walk *w)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[4096];

	ck_assert_msg(dd != NULL, "%s", dir);
	while ((e = readdir(dd)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) < 0)
			continue; /* gone meanwhile (a journal) */
		if (S_ISDIR(st.st_mode))
			walk(path, w);
		else if (S_ISREG(st.st_mode))
			scan_file(path, w);
	}
	(void)closedir(dd);
}

/* Every readable mapping of process pid; the bytes read. Windows
 * overlap by the longest needle, so that nothing across two is missed. */
static size_t
scan_memory(pid_t pid)
{
	char path[64], line[1024], where[128];
	size_t total = 0, overlap = 0;
	uint8_t *buf = malloc(WINDOW + 256);
	FILE *maps;
	int fd;

	for (size_t i = 0; i < n_needles; i++)
		if (needles[i].len > overlap)
			overlap = needles[i].len;
	ck_assert_ptr_nonnull(buf);
	(void)snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "r");
	(void)snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	ck_assert_ptr_nonnull(maps);
	ck_assert_int_ge(fd, 0);
	while (fgets(line, sizeof(line), maps) != NULL) {
		uint64_t start, end;
		char perms[8];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s", &start, &end,
		        perms) != 3 ||
		    perms[0] != 'r')
			continue;
		line[strcspn(line, "\n")] = '\0';
		(void)snprintf(where, sizeof(where), "memory %.100s", line);
		for (uint64_t a = start; a < end; a += WINDOW) {
			size_t want = end - a < WINDOW + overlap
			    ? (size_t)(end - a)
			    : WINDOW + overlap;
			ssize_t n = pread(fd, buf, want, (off_t)a);

			if (n <= 0)
				break; /* [vvar] and the like */
			scan(buf, (size_t)n, where);
			total += (size_t)(n < WINDOW ? n : WINDOW);
		}
	}
	(void)fclose(maps);
	(void)close(fd);
	free(buf);
	return total;
}

/* Fails for every needle found, naming where. */
static void
assert_none(const char *in)
{
	char all[4096] = "";
	size_t len = 0;

	for (size_t i = 0; i < n_needles && len < sizeof(all); i++)
		if (needles[i].found[0] != '\0')
			len += (size_t)snprintf(all + len, sizeof(all) - len,
			    "\n  %s in %s", needles[i].what, needles[i].found);
	ck_assert_msg(len == 0, "the intermediary's %s holds:%s", in, all);
}

START_TEST(test_marker)
{
	char uri[256], got[700], args[2048], control[PATH_MAX + 16];
	uint8_t pk[FERRY_PUBKEY_LEN];
	struct harness_output o;
	struct walk w = { 0 };
	size_t read_mem;
	FILE *f;

	marked_file();
	(void)snprintf(args, sizeof(args), "put --intermediary %s %s", url,
	    file);
	o = imdnet_remote(client, cert, args);
	ck_assert_msg(o.status == 0, "ferry remote put: %d %s", o.status,
	    o.err);
	imdnet_first_line(o.out, uri, sizeof(uri));
	harness_output_free(&o);
	(void)snprintf(got, sizeof(got), "%s/got.bin", harness_dir(h));
	(void)snprintf(args, sizeof(args), "get --intermediary %s -o %s %s",
	    url, got, uri);
	o = imdnet_remote(client, cert, args);
	ck_assert_msg(o.status == 0, "ferry remote get: %d %s", o.status,
	    o.err);
	harness_output_free(&o);
	imdnet_same_files(file, got);

	add("the marker", marker, strlen(marker));
	{
		char hex[2 * sizeof(marker)];

		sodium_bin2hex(hex, sizeof(hex), (const uint8_t *)marker,
		    strlen(marker));
		add("the marker in hex", hex, strlen(hex));
	}
	client_keys(uri);
	client_key(pk);

	/* The daemon's files, with a control file planted among them. */
	(void)snprintf(control, sizeof(control), "%s/control.txt",
	    d[0]->state_dir);
	f = fopen(control, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "a control: %s\n", marker);
	ck_assert_int_eq(fclose(f), 0);
	walk(d[0]->dir, &w);
	ck_assert_msg(strcmp(needles[0].found, control) == 0,
	    "the search did not find the control file's marker (%s)",
	    needles[0].found);
	ck_assert_msg(w.queue_db && w.queue_wal && w.log,
	    "the search missed the queue's database, its WAL or the log");
	needles[0].found[0] = '\0';
	assert_none("files");

	/* The live daemon's memory; the client's public key is its own.
	 * Not under ASan: its shadow and allocator regions are terabytes
	 * of address space, readable and mostly unbacked, and the heap is
	 * inside them; the gcc build's run of this test scans memory. */
	if (procstat_asan()) {
		fprintf(stderr,
		    "searched %zu files (%zu bytes) for %zu "
		    "needles; memory not searched under ASan\n",
		    w.files, w.bytes, n_needles);
		return;
	}
	clear_found();
	add("the client's public key (the control)", pk, sizeof(pk));
	read_mem = scan_memory(d[0]->pid);
	ck_assert_uint_gt(read_mem, 1024 * 1024);
	ck_assert_msg(needles[n_needles - 1].found[0] != '\0',
	    "the search of memory did not find the client's public key");
	n_needles--;
	assert_none("memory");
	fprintf(stderr,
	    "searched %zu files (%zu bytes) and %zu bytes of memory "
	    "for %zu needles\n",
	    w.files, w.bytes, read_mem, n_needles);
}
END_TEST

static Suite *
remote_marker_suite(void)
{
	Suite *s = suite_create("remote_marker");
	TCase *tc = tcase_create("intermediary holds no secret");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, test_marker);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner *sr = srunner_create(remote_marker_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
