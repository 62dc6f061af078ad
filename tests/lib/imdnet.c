/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Networks of real daemons with intermediaries, for the thin client's
 * integration tests (imdnet.h). */
#include "imdnet.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "dhtcheck.h"
#include "mesh.h"

struct harness_output
imdnet_sh(const char *fmt, ...)
{
	struct harness_output o;
	char cmd[8192];
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
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[intermediary]\nLISTEN = %s:%u\n"
	                     "CERTIFICATE = %s\nPRIVATE_KEY = %s/key.pem\n",
	                     d->ip, port, cert, harness_dir(h)),
	    0);
}

void
imdnet_start(struct harness *h, struct harness_daemon **d, size_t n)
{
	uint64_t end;
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
	end = harness_now_ms() + 30000;
	for (size_t i = 0; i < n; i++)
		while (dhtcheck_figures(d[i]).entries < n - 1) {
			if (harness_now_ms() > end) {
				harness_dump_logs(h);
				ck_abort_msg("d%zu's table is not full", i);
			}
			harness_sleep_ms(100);
		}
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
