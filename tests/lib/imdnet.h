/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Helpers of the integration tests that run the thin client against real
 * intermediaries (issue 15): a DHT of real daemons, one certificate that
 * names every daemon's address, the [intermediary] role switched on, and
 * `ferry remote` run as a user runs it. Every helper fails the Check test
 * (after dumping the daemons' logs) rather than return an error.
 */
#ifndef FERRY_TESTS_IMDNET_H
#define FERRY_TESTS_IMDNET_H

#include <stddef.h>

#include "harness.h"

/* A short DHT refresh and request timeout, as the thin-client tests use. */
#define IMDNET_DHT_CFG                                                         \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\n"

/* Output of a shell command (/bin/sh -c), run for at most 2 minutes. */
struct harness_output imdnet_sh(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* n new daemons of h (udp, IMDNET_DHT_CFG) into d; nothing runs yet. */
void imdnet_daemons(struct harness *h, struct harness_daemon **d, size_t n);
/* A self-signed certificate for every address of d[0..n), at
 * <harness dir>/cert.pem, its key at key.pem; the certificate's path is
 * written to cert. */
void imdnet_cert(struct harness *h, struct harness_daemon **d, size_t n,
    char *cert, size_t size);
/* Makes d an intermediary with that certificate, on a free port of its
 * address; its URL ("https://IP:PORT") is written to url. */
void imdnet_listen(struct harness *h, struct harness_daemon *d,
    const char *cert, char *url, size_t size);
/* Starts d[0], then the others bootstrapped from it, and waits until
 * every routing table holds the n - 1 others. */
void imdnet_start(struct harness *h, struct harness_daemon **d, size_t n);
/* `ferry remote ARGS --config-dir dir --cacert cert`; its output. */
struct harness_output imdnet_remote(const char *dir, const char *cert,
    const char *args);
/* The first line of out, into buf. */
void imdnet_first_line(const char *out, char *buf, size_t size);
/* Fails unless the files at a and b are the same bytes. */
void imdnet_same_files(const char *a, const char *b);

#endif /* FERRY_TESTS_IMDNET_H */
