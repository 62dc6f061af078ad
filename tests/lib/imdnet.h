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
#include <stdint.h>

#include "harness.h"

/* A short DHT refresh and request timeout, as the thin-client tests use. */
#define IMDNET_DHT_CFG                                                         \
	"[dht]\nREFRESH_INTERVAL = 2 s\nREQUEST_TIMEOUT = 3 s\n"               \
	"PER_NETWORK = 0\n"

/* Output of a shell command (/bin/sh -c, up to 32 KiB), run for at most
 * 2 minutes. */
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
/* A random file of len bytes at <harness dir>/name; its path into path. */
void imdnet_random_file(struct harness *h, const char *name, size_t len,
    char *path, size_t size);
/* The whole file at path, NUL-terminated, malloc'd (free it); its length
 * into *ret_len unless NULL. Fails if it cannot be read. */
char *imdnet_read_file(const char *path, size_t *ret_len);

/* An intermediary's answer to imdnet_request(). */
struct imdnet_answer {
	int status;    /* HTTP status, 0 if curl failed */
	int curl_exit; /* curl's exit status */
	char *body;    /* NULL if none came */
	size_t body_len;
	char *headers; /* the response head, NULL if none came */
};

/* method target at d, an intermediary at url, with curl (the
 * command-line tool) trusting cert: signed by tests/tools/imd_sign with
 * the client key file <harness dir>/key (NULL: no Authorization) and
 * auth_args after the target (TIME [NONCE], "bad"; NULL: none), the body
 * from the file body (NULL: none), extra curl options (NULL: none). */
struct imdnet_answer imdnet_request(struct harness *h, const char *cert,
    const struct harness_daemon *d, const char *url, const char *key,
    const char *auth_args, const char *method, const char *target,
    const char *body, const char *extra);
void imdnet_answer_free(struct imdnet_answer *a);
/* Fails unless the receipt entry of a GET /v1/receipts answer at p is
 * a storing peer's signature (ferry-protocol(7)) over its key, storer,
 * expiry and put_hash, for a key and put_hash imd_sign printed in lines
 * ("KEY PUT_HASH" lines). */
void imdnet_check_receipt(const char *p, const char *lines);

#endif /* FERRY_TESTS_IMDNET_H */
