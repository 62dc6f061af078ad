/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The identity key (src/core/identity.c): creation with mode 0600, reload,
 * refusal of loose permissions and malformed files, Ed25519 signatures with
 * domain-separating prefixes (RFC 8032 vector), and the printable peer id.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include <ferry/proto.h>
#include <ferry/transport.h>

#include "lib/log.h"
#include "core/identity.h"
#include "unit.h"

static char dir[256];
static char keyfile[320];
static struct unit_log test_log;
static mode_t saved_umask;

static void
test_setup(void)
{
	unit_tmpdir(dir, sizeof(dir));
	(void)snprintf(keyfile, sizeof(keyfile), "%s/%s", dir, IDENTITY_FILE);
	unit_log_capture(&test_log, FERRY_LOG_DEBUG);
	saved_umask = umask(0);
}

static void
test_teardown(void)
{
	(void)umask(saved_umask);
	unit_log_release();
	unit_rmtree(dir);
}

static void
test_hex(const char *hex, uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

START_TEST(test_created_0600)
{
	struct identity *id = NULL;
	struct stat st;

	/* Even with umask 0 the key is private. */
	ck_assert_int_eq(identity_load(dir, &id), 0);
	ck_assert_ptr_nonnull(id);
	ck_assert_int_eq(stat(keyfile, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 40);
	ck_assert(unit_log_has(&test_log, "created a new identity key"));
	ck_assert_uint_eq(strlen(id->id_str), FERRY_PEER_ID_STRLEN);
	identity_free(id);
	identity_free(NULL);
}
END_TEST

START_TEST(test_reload_same_identity)
{
	struct identity *a = NULL, *b = NULL, *other = NULL;
	char dir2[256];

	ck_assert_int_eq(identity_load(dir, &a), 0);
	ck_assert_int_eq(identity_load(dir, &b), 0);
	ck_assert_mem_eq(a->pk, b->pk, sizeof(a->pk));
	ck_assert_int_eq(peer_id_cmp(&a->id, &b->id), 0);
	ck_assert_str_eq(a->id_str, b->id_str);
	/* Another directory, another key. */
	unit_tmpdir(dir2, sizeof(dir2));
	ck_assert_int_eq(identity_load(dir2, &other), 0);
	ck_assert_int_ne(peer_id_cmp(&a->id, &other->id), 0);
	unit_rmtree(dir2);
	identity_free(a);
	identity_free(b);
	identity_free(other);
}
END_TEST

/* A key file named by path (the thin client's) is the same key as the
 * one identity_load() finds in its directory, and refused as loosely. */
START_TEST(test_load_path)
{
	struct identity *a = NULL, *b = NULL;
	char path[512];

	(void)snprintf(path, sizeof(path), "%s/client.key", dir);
	ck_assert_int_eq(identity_load_path(path, &a), 0);
	ck_assert_int_eq(identity_load_path(path, &b), 0);
	ck_assert_mem_eq(a->pk, b->pk, sizeof(a->pk));
	identity_free(b);
	b = NULL;
	ck_assert_int_eq(rename(path, keyfile), 0);
	ck_assert_int_eq(identity_load(dir, &b), 0);
	ck_assert_mem_eq(a->pk, b->pk, sizeof(a->pk));
	identity_free(b);
	b = NULL;
	ck_assert_int_eq(chmod(keyfile, 0640), 0);
	ck_assert_int_eq(identity_load_path(keyfile, &b), -EPERM);
	ck_assert_ptr_null(b);
	identity_free(a);
}
END_TEST

START_TEST(test_loose_modes_refused)
{
	static const mode_t bad[] = { 0644, 0640, 0604, 0660, 0601, 0610,
		0666 };
	struct identity *id = NULL;

	ck_assert_int_eq(identity_load(dir, &id), 0);
	identity_free(id);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		id = NULL;
		ck_assert_int_eq(chmod(keyfile, bad[i]), 0);
		ck_assert_msg(identity_load(dir, &id) == -EPERM,
		    "mode %04o accepted", (unsigned)bad[i]);
		ck_assert_ptr_null(id);
	}
	ck_assert(unit_log_has(&test_log, "chmod 600"));
	/* Tighter than 0600 is fine. */
	ck_assert_int_eq(chmod(keyfile, 0400), 0);
	ck_assert_int_eq(identity_load(dir, &id), 0);
	identity_free(id);
}
END_TEST

START_TEST(test_foreign_owner_refused)
{
	struct identity *id = NULL;

	if (geteuid() != 0)
		return; /* only root can give a file away */
	ck_assert_int_eq(identity_load(dir, &id), 0);
	identity_free(id);
	id = NULL;
	ck_assert_int_eq(chown(keyfile, 65534, 65534), 0);
	ck_assert_int_eq(identity_load(dir, &id), -EPERM);
	ck_assert_ptr_null(id);
	ck_assert(unit_log_has(&test_log, "owned by uid 65534"));
}
END_TEST

static void
test_write_key(const void *data, size_t len)
{
	int fd = open(keyfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
}

START_TEST(test_malformed_files)
{
	uint8_t file[64];
	struct identity *id = NULL;

	memset(file, 0x11, sizeof(file));
	memcpy(file, "FERRYID1", 8);
	test_write_key(file, 40);
	ck_assert_int_eq(identity_load(dir, &id), 0);
	identity_free(id);
	id = NULL;
	/* One byte short, one byte long, empty. */
	test_write_key(file, 39);
	ck_assert_int_eq(identity_load(dir, &id), -EBADMSG);
	test_write_key(file, 41);
	ck_assert_int_eq(identity_load(dir, &id), -EBADMSG);
	test_write_key(file, 0);
	ck_assert_int_eq(identity_load(dir, &id), -EBADMSG);
	/* Wrong magic. */
	memcpy(file, "FERRYID2", 8);
	test_write_key(file, 40);
	ck_assert_int_eq(identity_load(dir, &id), -EBADMSG);
	ck_assert_ptr_null(id);
	ck_assert(unit_log_has(&test_log, "is not a ferry identity key"));
	/* A refused file is never replaced by a new key. */
	{
		uint8_t back[40];
		int fd = open(keyfile, O_RDONLY);

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(read(fd, back, sizeof(back)), 40);
		(void)close(fd);
		ck_assert_mem_eq(back, file, 40);
	}
}
END_TEST

START_TEST(test_not_a_regular_file)
{
	struct identity *id = NULL;
	char target[340];

	ck_assert_int_eq(mkdir(keyfile, 0700), 0);
	ck_assert_int_lt(identity_load(dir, &id), 0);
	ck_assert_ptr_null(id);
	ck_assert_int_eq(rmdir(keyfile), 0);
	/* A symlink is not followed, even to a good key. */
	(void)snprintf(target, sizeof(target), "%s/real.key", dir);
	{
		uint8_t file[40];

		memset(file, 0x22, sizeof(file));
		memcpy(file, "FERRYID1", 8);
		unit_write(dir, "real.key", file, sizeof(file));
		ck_assert_int_eq(chmod(target, 0600), 0);
	}
	ck_assert_int_eq(symlink(target, keyfile), 0);
	ck_assert_int_lt(identity_load(dir, &id), 0);
	ck_assert_ptr_null(id);
}
END_TEST

START_TEST(test_missing_state_dir)
{
	struct identity *id = NULL;
	char missing[300];

	(void)snprintf(missing, sizeof(missing), "%s/not/there", dir);
	ck_assert_int_eq(identity_load(missing, &id), -ENOENT);
	ck_assert_ptr_null(id);
}
END_TEST

/* RFC 8032, section 7.1, TEST 1: the empty message. */
static const char rfc_seed[] =
    "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
static const char rfc_pk[] =
    "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
static const char rfc_sig[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
    "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

START_TEST(test_rfc8032_vector)
{
	uint8_t seed[32], pk[32], sig[64], want[64];
	struct identity *id = NULL;
	struct ferry_peer_id expect;

	test_hex(rfc_seed, seed, 32);
	test_hex(rfc_pk, pk, 32);
	test_hex(rfc_sig, want, 64);
	ck_assert_int_eq(identity_from_seed(seed, &id), 0);
	/* The seed gives RFC 8032's key pair: the vector's signature of the
	 * empty message verifies under our public key. */
	ck_assert_mem_eq(id->pk, pk, 32);
	ck_assert_int_eq(crypto_sign_verify_detached(want,
			     (const unsigned char *)"", 0, id->pk),
	    0);
	/* What identity_sign signs is prefix, NUL, data: plain Ed25519 over
	 * exactly those bytes. */
	identity_sign(id, "", "", 0, sig);
	ck_assert_int_eq(crypto_sign_verify_detached(sig,
			     (const unsigned char *)"\0", 1, pk),
	    0);
	ck_assert_int_eq(identity_verify(pk, "", "", 0, sig), 0);
	identity_sign(id, "ab", "c", 1, sig);
	ck_assert_int_eq(crypto_sign_verify_detached(sig,
			     (const unsigned char *)"ab\0c", 4, pk),
	    0);
	/* The NUL ends the prefix: ("a", "bc") is another message. */
	ck_assert_int_eq(identity_verify(pk, "a", "bc", 2, sig), -EBADMSG);
	/* The peer id is BLAKE2b-256 of the public key. */
	test_hex(
	    "7849ac3049680be1ef762efe0d36e01733c3464eb0c7c558138acf24bb263bd3",
	    expect.bytes, 32);
	ck_assert_mem_eq(id->id.bytes, expect.bytes, 32);
	ck_assert_str_eq(id->id_str,
	    "F14TRC29D05Y3VVP5VZ0TDQ02WSW6HJEP33WAP0KHB7J9ES67F9G");
	identity_free(id);
}
END_TEST

START_TEST(test_sign_verify)
{
	uint8_t seed[32], data[4000], sig[64];
	struct identity *a = NULL, *b = NULL;

	memset(seed, 1, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &a), 0);
	seed[0] = 2;
	ck_assert_int_eq(identity_from_seed(seed, &b), 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	/* Short input (stack buffer) and long input (heap). */
	for (size_t len = 10; len <= sizeof(data); len += 3990) {
		identity_sign(a, "ferry helo v1", data, len, sig);
		ck_assert_int_eq(identity_verify(a->pk, "ferry helo v1", data,
		                     len, sig),
		    0);
		ck_assert_int_eq(identity_verify(b->pk, "ferry helo v1", data,
		                     len, sig),
		    -EBADMSG);
		data[len / 2] ^= 1;
		ck_assert_int_eq(identity_verify(a->pk, "ferry helo v1", data,
		                     len, sig),
		    -EBADMSG);
		data[len / 2] ^= 1;
		sig[5] ^= 0x80;
		ck_assert_int_eq(identity_verify(a->pk, "ferry helo v1", data,
		                     len, sig),
		    -EBADMSG);
		ck_assert_int_eq(identity_verify(a->pk, "ferry helo v1", data,
		                     len - 1, sig),
		    -EBADMSG);
	}
	identity_free(a);
	identity_free(b);
}
END_TEST

START_TEST(test_prefix_separation)
{
	static const char *const kinds[] = { "ferry helo v1", "ferry pong v1",
		"ferry kx v1", "" };
	uint8_t seed[32], data[80], sig[64];
	struct identity *id = NULL;

	memset(seed, 9, sizeof(seed));
	memset(data, 0x42, sizeof(data));
	ck_assert_int_eq(identity_from_seed(seed, &id), 0);
	/* A signature made for one message kind verifies as no other. */
	for (size_t i = 0; i < 4; i++) {
		identity_sign(id, kinds[i], data, sizeof(data), sig);
		for (size_t j = 0; j < 4; j++)
			ck_assert_int_eq(identity_verify(id->pk, kinds[j], data,
			                     sizeof(data), sig),
			    i == j ? 0 : -EBADMSG);
	}
	identity_free(id);
}
END_TEST

START_TEST(test_peer_id_strings)
{
	uint8_t seed[32];
	struct identity *id = NULL;
	struct ferry_peer_id back;
	char buf[FERRY_PEER_ID_STRLEN + 1], lower[FERRY_PEER_ID_STRLEN + 1];
	char shrt[PEER_SHORT_LEN + 1];

	memset(seed, 3, sizeof(seed));
	ck_assert_int_eq(identity_from_seed(seed, &id), 0);
	peer_id_format(&id->id, buf);
	ck_assert_str_eq(buf, id->id_str);
	ck_assert_uint_eq(strlen(buf), FERRY_PEER_ID_STRLEN);
	memset(&back, 0, sizeof(back));
	ck_assert_int_eq(peer_id_parse(buf, &back), 0);
	ck_assert_int_eq(peer_id_cmp(&back, &id->id), 0);
	for (size_t i = 0; i <= FERRY_PEER_ID_STRLEN; i++)
		lower[i] = (char)(buf[i] >= 'A' && buf[i] <= 'Z' ? buf[i] + 32
		                                                 : buf[i]);
	memset(&back, 0, sizeof(back));
	ck_assert_int_eq(peer_id_parse(lower, &back), 0);
	ck_assert_int_eq(peer_id_cmp(&back, &id->id), 0);
	ck_assert_str_eq(peer_id_short(&id->id, shrt), shrt);
	ck_assert_uint_eq(strlen(shrt), PEER_SHORT_LEN);
	ck_assert_int_eq(strncmp(shrt, buf, PEER_SHORT_LEN), 0);
	/* Malformed ids. */
	ck_assert_int_eq(peer_id_parse("", &back), -EINVAL);
	ck_assert_int_eq(peer_id_parse("ABC", &back), -EINVAL);
	buf[FERRY_PEER_ID_STRLEN - 1] = '\0';
	ck_assert_int_eq(peer_id_parse(buf, &back), -EINVAL);
	peer_id_format(&id->id, buf);
	buf[10] = 'U';
	ck_assert_int_eq(peer_id_parse(buf, &back), -EINVAL);
	/* Ordering is by bytes. */
	back = id->id;
	back.bytes[31] ^= 1;
	ck_assert_int_ne(peer_id_cmp(&back, &id->id), 0);
	ck_assert_int_eq(peer_id_cmp(&back, &id->id) > 0,
	    back.bytes[31] > id->id.bytes[31]);
	identity_free(id);
}
END_TEST

static Suite *
test_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("key file");

	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_created_0600);
	tcase_add_test(tc, test_reload_same_identity);
	tcase_add_test(tc, test_load_path);
	tcase_add_test(tc, test_loose_modes_refused);
	tcase_add_test(tc, test_foreign_owner_refused);
	tcase_add_test(tc, test_malformed_files);
	tcase_add_test(tc, test_not_a_regular_file);
	tcase_add_test(tc, test_missing_state_dir);
	suite_add_tcase(s, tc);
	tc = tcase_create("signatures and ids");
	tcase_add_checked_fixture(tc, test_setup, test_teardown);
	tcase_add_test(tc, test_rfc8032_vector);
	tcase_add_test(tc, test_sign_verify);
	tcase_add_test(tc, test_prefix_separation);
	tcase_add_test(tc, test_peer_id_strings);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return unit_run(test_suite());
}
