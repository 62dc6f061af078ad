/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The intermediary's TLS context (httpd.h): TLS 1.3 and nothing older,
 * the configured certificate chain and key, intermediary layer. */
#define LOG_TAG "intermediary"
#include "intermediary/httpd.h"

#include <errno.h>

#include <openssl/err.h>

#include "lib/log.h"

/* OpenSSL's reason for the last failure, once, and -EINVAL. */
static int
httpd_tls_fail(const char *what, const char *path)
{
	char reason[256];
	unsigned long e = ERR_peek_last_error();

	ERR_error_string_n(e, reason, sizeof(reason));
	ERR_clear_error();
	log_err("%s %s: %s", what, path, reason);
	return -EINVAL;
}

int
httpd_tls_new(const char *cert_path, const char *key_path, SSL_CTX **ret)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	int r = -EINVAL;

	if (ctx == NULL)
		return -ENOMEM;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, 0) != 1) {
		r = httpd_tls_fail("cannot require TLS 1.3 for", cert_path);
		goto fail;
	}
	/* No session tickets: a resumed session would skip nothing we care
	 * about, and tickets are a key to rotate. */
	(void)SSL_CTX_set_num_tickets(ctx, 0);
	(void)SSL_CTX_set_options(ctx,
	    SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	(void)SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_path) != 1) {
		r = httpd_tls_fail("cannot load the certificate", cert_path);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_path, SSL_FILETYPE_PEM) != 1) {
		r = httpd_tls_fail("cannot load the private key", key_path);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		r = httpd_tls_fail("the private key does not match", cert_path);
		goto fail;
	}
	*ret = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return r;
}
