/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Networks of real daemons with intermediaries, for the thin client's
 * integration tests (imdnet.h). */
#include "imdnet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <sodium.h>

#include "dhtcheck.h"
#include "mesh.h"
#include "lib/base32.h"
#include "lib/wire.h"

#define IMDNET_SIGN FERRY_TOOL_DIR "/imd_sign"

struct harness_output
imdnet_sh(const char *fmt, ...)
{
	struct harness_output o;
	static char cmd[32768];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	va_list ap;

	va_start(ap, fmt);
	ck_assert_int_lt(vsnprintf(cmd, sizeof(cmd), fmt, ap), sizeof(cmd));
	va_end(ap);
	ck_assert_int_eq(harness_run(argv, NULL, 120000, &o), 0);
	return o;
}

void
imdnet_daemons(struct harness *h, struct harness_daemon **d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		ck_assert_int_eq(harness_daemon_transports(d[i], "udp"), 0);
		ck_assert_int_eq(harness_daemon_config(d[i], "%s",
		                     IMDNET_DHT_CFG),
		    0);
	}
}

void
imdnet_cert(struct harness *h, struct harness_daemon **d, size_t n, char *cert,
    size_t size)
{
	char san[4096] = "subjectAltName=";
	struct harness_output o;
	size_t len = strlen(san);

	for (size_t i = 0; i < n; i++) {
		int w = snprintf(san + len, sizeof(san) - len, "%sIP:%s",
		    i > 0 ? "," : "", d[i]->ip);

		ck_assert(w > 0 && (size_t)w < sizeof(san) - len);
		len += (size_t)w;
	}
	(void)snprintf(cert, size, "%s/cert.pem", harness_dir(h));
	o = imdnet_sh("openssl req -x509 -newkey ec "
	              "-pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
	              "-subj /CN=ferry-test -addext %s -keyout %s/key.pem "
	              "-out %s 2>&1",
	    san, harness_dir(h), cert);
	ck_assert_msg(o.status == 0, "openssl: %s", o.out);
	harness_output_free(&o);
}

void
imdnet_listen(struct harness *h, struct harness_daemon *d, const char *cert,
    char *url, size_t size)
{
	uint16_t port;

	ck_assert_int_eq(harness_free_port_at(d->ip, &port), 0);
	(void)snprintf(url, size, "https://%s:%u", d->ip, port);
	/* LEAVE_TIMEOUT 0: a teardown stops the daemons one after the
	 * other, and each intermediary's withdrawal would wait for the
	 * storing peers stopped before it (test_federation's test_leave
	 * sets it). */
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[intermediary]\nLISTEN = %s:%u\n"
	                     "CERTIFICATE = %s\nPRIVATE_KEY = %s/key.pem\n"
	                     "LEAVE_TIMEOUT = 0 s\n",
	                     d->ip, port, cert, harness_dir(h)),
	    0);
}

void
imdnet_start(struct harness *h, struct harness_daemon **d, size_t n)
{
	char *uri;

	if (harness_daemon_start_ready(d[0]) < 0) {
		harness_dump_logs(h);
		ck_abort_msg("d0 did not start");
	}
	uri = mesh_hello(d[0]);
	for (size_t i = 1; i < n; i++) {
		ck_assert_int_eq(harness_daemon_config(d[i],
		                     "[core]\nBOOTSTRAP = %s\n", uri),
		    0);
		if (harness_daemon_start_ready(d[i]) < 0) {
			harness_dump_logs(h);
			ck_abort_msg("d%zu did not start", i);
		}
	}
	free(uri);
	dhtcheck_wait_tables(h, d, n, (uint32_t)n - 1, 30000);
}

struct harness_output
imdnet_remote(const char *dir, const char *cert, const char *args)
{
	return imdnet_sh("%s remote %s --config-dir %s --cacert %s",
	    harness_cli_path(), args, dir, cert);
}

void
imdnet_first_line(const char *out, char *buf, size_t size)
{
	(void)snprintf(buf, size, "%.*s", (int)strcspn(out, "\n"), out);
}

void
imdnet_same_files(const char *a, const char *b)
{
	struct harness_output o = imdnet_sh("cmp %s %s 2>&1", a, b);

	ck_assert_msg(o.status == 0, "%s and %s differ: %s", a, b, o.out);
	harness_output_free(&o);
}

void
imdnet_random_file(struct harness *h, const char *name, size_t len, char *path,
    size_t size)
{
	uint8_t *data = malloc(len);
	FILE *f;

	(void)snprintf(path, size, "%s/%s", harness_dir(h), name);
	ck_assert_ptr_nonnull(data);
	randombytes_buf(data, len);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(data);
}

char *
imdnet_read_file(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "%s cannot be read", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	(void)fclose(f);
	if (ret_len != NULL)
		*ret_len = (size_t)n;
	return buf;
}

struct imdnet_answer
imdnet_request(struct harness *h, const char *cert,
    const struct harness_daemon *d, const char *url, const char *key,
    const char *auth_args, const char *method, const char *target,
    const char *body, const char *extra)
{
	static char auth[1024], data[700], resp[600], hdrs[600];
	const char *dir = harness_dir(h);
	struct imdnet_answer a;
	struct harness_output o;

	auth[0] = data[0] = '\0';
	if (key != NULL)
		(void)snprintf(auth, sizeof(auth),
		    "-H \"$(%s auth %s/%s %s %s '%s' %s)\"", IMDNET_SIGN, dir,
		    key, d->id_str, method, target,
		    auth_args != NULL ? auth_args : "");
	if (body != NULL)
		(void)snprintf(data, sizeof(data), "--data-binary @%s", body);
	(void)snprintf(resp, sizeof(resp), "%s/resp", dir);
	(void)snprintf(hdrs, sizeof(hdrs), "%s/hdrs", dir);
	(void)unlink(resp);
	(void)unlink(hdrs);
	o = imdnet_sh("curl -sS --cacert %s -o %s -D %s -w '%%{http_code}' "
	              "-X %s %s %s %s '%s%s'",
	    cert, resp, hdrs, method, auth, data, extra != NULL ? extra : "",
	    url, target);
	memset(&a, 0, sizeof(a));
	a.curl_exit = o.status;
	a.status = atoi(o.out);
	harness_output_free(&o);
	if (access(resp, R_OK) == 0)
		a.body = imdnet_read_file(resp, &a.body_len);
	if (access(hdrs, R_OK) == 0)
		a.headers = imdnet_read_file(hdrs, NULL);
	return a;
}

void
imdnet_answer_free(struct imdnet_answer *a)
{
	free(a->body);
	free(a->headers);
	memset(a, 0, sizeof(*a));
}

void
imdnet_check_receipt(const char *p, const char *lines)
{
	char k[64], hh[64], pk[64], sg[128], want[160];
	uint8_t m[21 + 32 + 32 + 8 + 32], sig[64];
	unsigned long long cur, expiry;

	ck_assert_int_eq(sscanf(p,
	                     "{\"cursor\": %llu, \"type\": \"receipt\", "
	                     "\"key\": \"%63[0-9A-Z]\", \"put_hash\": "
	                     "\"%63[0-9A-Z]\", \"storer\": \"%63[0-9A-Z]\", "
	                     "\"expiry\": %llu, \"sig\": \"%127[0-9A-Z]\"}",
	                     &cur, k, hh, pk, &expiry, sg),
	    6);
	(void)snprintf(want, sizeof(want), "%s %s\n", k, hh);
	ck_assert_ptr_nonnull(strstr(lines, want));
	/* "ferry dht receipt v1" NUL || key || storer || expiry ||
	 * put_hash, signed by the storer. */
	memcpy(m, "ferry dht receipt v1", 21);
	ck_assert_int_eq(base32_decode(k, strlen(k), m + 21, 32), 0);
	ck_assert_int_eq(base32_decode(pk, strlen(pk), m + 53, 32), 0);
	wire_put64(m + 85, expiry);
	ck_assert_int_eq(base32_decode(hh, strlen(hh), m + 93, 32), 0);
	ck_assert_int_eq(base32_decode(sg, strlen(sg), sig, 64), 0);
	ck_assert_int_eq(crypto_sign_verify_detached(sig, m, sizeof(m), m + 53),
	    0);
}
