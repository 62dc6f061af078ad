/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One HTTPS connection to intermediaries, remote client: a single libcurl
 * easy handle reused for every request, so that its connection (and TLS
 * session) is kept alive between them; TLS 1.3 only, as the
 * intermediary; HTTP/2 where the server offers it by ALPN, else HTTP/1.1
 * keep-alive. Bodies go up from memory or from a read callback (chunked,
 * never whole in memory) and come down into a bounded buffer or a write
 * callback.
 */
#include "remote/remote_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

struct remote_http {
	CURL *easy;
	char *cacert;
	unsigned timeout_s;
	char errbuf[CURL_ERROR_SIZE];
	char error[CURL_ERROR_SIZE + 64];
};

/* The transfer in progress: what the callbacks see. */
struct remote_xfer {
	const struct remote_req *rq;
	struct remote_resp *resp;
	size_t body_off; /* of a body in memory */
	int cb_error;    /* a callback's abort */
};

int
remote_http_new(const char *cacert, unsigned timeout_s,
    struct remote_http **ret)
{
	static bool global_done;
	struct remote_http *h;

	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		global_done = true;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->easy = curl_easy_init();
	h->cacert = cacert != NULL ? strdup(cacert) : NULL;
	if (h->easy == NULL || (cacert != NULL && h->cacert == NULL)) {
		remote_http_free(h);
		return -ENOMEM;
	}
	h->timeout_s = timeout_s > 0 ? timeout_s : 30;
	*ret = h;
	return 0;
}

void
remote_http_free(struct remote_http *h)
{
	if (h == NULL)
		return;
	if (h->easy != NULL)
		curl_easy_cleanup(h->easy);
	free(h->cacert);
	free(h);
}

const char *
remote_http_error(const struct remote_http *h)
{
	return h->error;
}

void
remote_resp_done(struct remote_resp *resp)
{
	buf_done(&resp->body);
}

static size_t
remote_http_read_cb(char *buf, size_t size, size_t nitems, void *cls)
{
	struct remote_xfer *x = cls;
	const struct remote_req *rq = x->rq;
	size_t room = size * nitems, n;
	long got;

	if (rq->read == NULL) {
		n = rq->body_len - x->body_off;
		n = n < room ? n : room;
		memcpy(buf, (const uint8_t *)rq->body + x->body_off, n);
		x->body_off += n;
		return n;
	}
	got = rq->read(rq->read_cls, buf, room);
	if (got < 0) {
		x->cb_error = (int)got;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)got;
}

static size_t
remote_http_write_cb(char *data, size_t size, size_t nmemb, void *cls)
{
	struct remote_xfer *x = cls;
	size_t len = size * nmemb;
	int r;

	/* Only a success's body is streamed: an error's is JSON. */
	if (x->rq->write != NULL && x->resp->status == 200) {
		r = x->rq->write(x->rq->write_cls, data, len);
		if (r < 0) {
			x->cb_error = r;
			return 0;
		}
		return len;
	}
	if (buf_size(&x->resp->body) + len > REMOTE_BODY_MAX ||
	    buf_append(&x->resp->body, data, len) < 0) {
		x->cb_error = -EMSGSIZE;
		return 0;
	}
	return len;
}

/* Headers: the status line gives the status (for the write callback),
 * and Ferry-Intermediary and Date are kept. */
static size_t
remote_http_header_cb(char *data, size_t size, size_t nitems, void *cls)
{
	struct remote_xfer *x = cls;
	size_t len = size * nitems, n;
	char line[256];

	n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		const char *sp = strchr(line, ' ');

		x->resp->status = sp != NULL ? strtol(sp + 1, NULL, 10) : 0;
		x->resp->imd[0] = '\0';
		x->resp->date = -1;
	} else if (strncasecmp(line, "Ferry-Intermediary:", 19) == 0) {
		const char *v = line + 19 + strspn(line + 19, " \t");

		if (strlen(v) == REMOTE_PEER_STRLEN)
			memcpy(x->resp->imd, v, REMOTE_PEER_STRLEN + 1);
	} else if (strncasecmp(line, "Date:", 5) == 0) {
		time_t t =
		    curl_getdate(line + 5 + strspn(line + 5, " \t"), NULL);

		x->resp->date = t;
	}
	return len;
}

static int
remote_http_errno(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
		return -EHOSTUNREACH;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

static void
remote_http_setup(struct remote_http *h, const char *url,
    const struct remote_req *rq, struct remote_xfer *x, struct curl_slist *hdrs)
{
	CURL *e = h->easy;
	unsigned timeout = rq->timeout_s > 0 ? rq->timeout_s : h->timeout_s;

	/* The handle keeps its connection cache across resets. */
	curl_easy_reset(e);
	(void)curl_easy_setopt(e, CURLOPT_URL, url);
	(void)curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https");
	(void)curl_easy_setopt(e, CURLOPT_SSLVERSION,
	    (long)(CURL_SSLVERSION_TLSv1_3 | CURL_SSLVERSION_MAX_DEFAULT));
	(void)curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
	    (long)CURL_HTTP_VERSION_2TLS);
	if (h->cacert != NULL)
		(void)curl_easy_setopt(e, CURLOPT_CAINFO, h->cacert);
	(void)curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	(void)curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
	(void)curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	(void)curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)h->timeout_s);
	/* A streamed upload or download may be long; a stalled one is not:
	 * under 1 byte/s for the timeout ends it. Others have a deadline. */
	if (rq->read != NULL || rq->write != NULL) {
		(void)curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
		(void)curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
		    (long)timeout);
	} else {
		(void)curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)timeout);
	}
	(void)curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf);
	(void)curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
	(void)curl_easy_setopt(e, CURLOPT_HEADERFUNCTION,
	    remote_http_header_cb);
	(void)curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	(void)curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, remote_http_write_cb);
	(void)curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	(void)curl_easy_setopt(e, CURLOPT_USERAGENT,
	    "ferry-remote/" FERRY_VERSION);
	if (strcmp(rq->method, "POST") == 0) {
		(void)curl_easy_setopt(e, CURLOPT_POST, 1L);
		(void)curl_easy_setopt(e, CURLOPT_READFUNCTION,
		    remote_http_read_cb);
		(void)curl_easy_setopt(e, CURLOPT_READDATA, x);
		/* A streamed body's size is not known: chunked. */
		(void)curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
		    rq->read != NULL ? (curl_off_t)-1
		                     : (curl_off_t)rq->body_len);
	}
}

static int
remote_http_header(struct curl_slist **l, const char *line)
{
	struct curl_slist *n = curl_slist_append(*l, line);

	if (n == NULL)
		return -ENOMEM;
	*l = n;
	return 0;
}

int
remote_http_do(struct remote_http *h, const char *base,
    const struct remote_req *rq, struct remote_resp *resp)
{
	struct remote_xfer x = { .rq = rq, .resp = resp };
	struct curl_slist *hdrs = NULL;
	char url[REMOTE_URL_MAX + 512], ct[128];
	CURLcode c;
	int r = 0;

	memset(resp, 0, sizeof(*resp));
	buf_init(&resp->body);
	resp->date = -1;
	h->errbuf[0] = h->error[0] = '\0';
	if ((size_t)snprintf(url, sizeof(url), "%s%s", base, rq->target) >=
	    sizeof(url))
		return -ENAMETOOLONG;
	/* No "Expect: 100-continue": the body follows the headers at once. */
	r = remote_http_header(&hdrs, "Expect:");
	if (r == 0 && rq->auth != NULL)
		r = remote_http_header(&hdrs, rq->auth);
	if (r == 0 && rq->content_type != NULL) {
		(void)snprintf(ct, sizeof(ct), "Content-Type: %s",
		    rq->content_type);
		r = remote_http_header(&hdrs, ct);
	}
	if (r < 0) {
		curl_slist_free_all(hdrs);
		return r;
	}
	remote_http_setup(h, url, rq, &x, hdrs);
	c = curl_easy_perform(h->easy);
	curl_slist_free_all(hdrs);
	if (x.cb_error < 0) {
		r = x.cb_error;
	} else if (c != CURLE_OK) {
		r = remote_http_errno(c);
		(void)snprintf(h->error, sizeof(h->error), "%s: %s", base,
		    h->errbuf[0] != '\0' ? h->errbuf : curl_easy_strerror(c));
	}
	if (r == 0 && resp->status != 200)
		remote_json_error((const char *)buf_head(&resp->body),
		    buf_size(&resp->body), resp->error, sizeof(resp->error));
	return r;
}
