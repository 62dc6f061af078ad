/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The raw mail path: libcurl -> Postfix -> procmail -> inbox -> reader
 * (see smtp_raw.h). */
#include "smtp_raw.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "bench.h"

#define RAW_LINE        76            /* base64 characters per line */
#define RAW_CHUNK       (64 * 1024)   /* one read() of the FIFO */
#define RAW_PIPE_SIZE   (1024 * 1024) /* as ferryd asks for */
#define RAW_TAIL        4096          /* where a Maildir file's marker is */
#define RAW_MARKER_MAX  96            /* "--<boundary>--" */
#define RAW_BULK_MAX_NS (900ull * 1000000000u) /* a reader's whole life */

/* --- composing ------------------------------------------------------- */

/* The headers and the opening of the ferry-shaped part, for boundary b. */
static int
raw_head(const struct smtp_raw_path *p, const char *b, char *out, size_t size)
{
	char date[64];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	(void)gmtime_r(&now, &tm);
	(void)strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	n = snprintf(out, size,
	    "Date: %s\r\n"
	    "From: Mail Delivery System <MAILER-DAEMON@localhost>\r\n"
	    "To: <%s>\r\n"
	    "Subject: Undelivered Mail Returned to Sender\r\n"
	    "Message-ID: <%s@localhost>\r\n"
	    "MIME-Version: 1.0\r\n"
	    "Auto-Submitted: auto-replied\r\n"
	    "%s\r\n"
	    "Content-Type: multipart/report; report-type=delivery-status;\r\n"
	    "\tboundary=\"%s\"\r\n"
	    "\r\n"
	    "--%s\r\n"
	    "Content-Type: application/octet-stream\r\n"
	    "Content-Transfer-Encoding: base64\r\n"
	    "\r\n",
	    date, p->rcpt, b, p->filter, b, b);
	return n > 0 && (size_t)n < size ? n : -ENAMETOOLONG;
}

/*
 * A mail to p with boundary b whose base64 body has chars characters in
 * lines of RAW_LINE; or, with chars 0, as close to total bytes as the
 * line structure allows. *ret is malloc'd.
 */
static int
raw_compose(const struct smtp_raw_path *p, const char *b, size_t chars,
    size_t total, char **ret, size_t *ret_len)
{
	char head[2048], tail[RAW_MARKER_MAX + 8];
	int hn = raw_head(p, b, head, sizeof(head));
	int tn = snprintf(tail, sizeof(tail), "--%s--\r\n", b);
	size_t body, off, left;
	char *m;

	if (hn < 0 || tn <= 0 || (size_t)tn >= sizeof(tail))
		return -ENAMETOOLONG;
	if (chars == 0) {
		/* total = head + chars + 2 per line + tail */
		left = total > (size_t)(hn + tn) + 3 ? total - (size_t)(hn + tn)
		                                     : 3;
		chars = left / (RAW_LINE + 2) * RAW_LINE;
		if (left % (RAW_LINE + 2) > 2)
			chars += left % (RAW_LINE + 2) - 2;
	}
	body = chars + 2 * ((chars + RAW_LINE - 1) / RAW_LINE);
	m = malloc((size_t)hn + body + (size_t)tn + 1);
	if (m == NULL)
		return -ENOMEM;
	memcpy(m, head, (size_t)hn);
	off = (size_t)hn;
	for (left = chars; left > 0;) {
		size_t n = left < RAW_LINE ? left : RAW_LINE;

		memset(m + off, 'A', n);
		memcpy(m + off + n, "\r\n", 2);
		off += n + 2;
		left -= n;
	}
	memcpy(m + off, tail, (size_t)tn);
	off += (size_t)tn;
	m[off] = '\0';
	*ret = m;
	*ret_len = off;
	return 0;
}

static size_t
raw_b64_chars(size_t payload)
{
	return (payload + 2) / 3 * 4;
}

size_t
smtp_raw_mail_size(const struct smtp_raw_path *p, size_t payload)
{
	char *m;
	size_t len = 0;

	if (raw_compose(p, "rawend-0000000000-0000000000",
	        raw_b64_chars(payload), 0, &m, &len) == 0)
		free(m);
	return len;
}

/* --- submitting ------------------------------------------------------ */

struct raw_curl {
	CURL *easy;
	struct curl_slist *rcpt;
	const char *data; /* the mail in flight */
	size_t len, off;
};

static size_t
raw_curl_read(char *buf, size_t size, size_t nitems, void *userp)
{
	struct raw_curl *c = userp;
	size_t n = size * nitems;

	if (n > c->len - c->off)
		n = c->len - c->off;
	memcpy(buf, c->data + c->off, n);
	c->off += n;
	return n;
}

static void
raw_curl_done(struct raw_curl *c)
{
	if (c->easy != NULL)
		curl_easy_cleanup(c->easy); /* says QUIT */
	curl_slist_free_all(c->rcpt);
	memset(c, 0, sizeof(*c));
}

static int
raw_curl_init(struct raw_curl *c, const struct smtp_raw_path *p)
{
	static bool global;

	memset(c, 0, sizeof(*c));
	if (!global && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	global = true;
	c->easy = curl_easy_init();
	c->rcpt = curl_slist_append(NULL, p->rcpt);
	if (c->easy == NULL || c->rcpt == NULL) {
		raw_curl_done(c);
		return -ENOMEM;
	}
	/* As the plugin submits: an empty envelope sender, one connection
	 * kept between mails (the easy handle's cache). */
	(void)curl_easy_setopt(c->easy, CURLOPT_URL, p->server);
	(void)curl_easy_setopt(c->easy, CURLOPT_MAIL_FROM, "<>");
	(void)curl_easy_setopt(c->easy, CURLOPT_MAIL_RCPT, c->rcpt);
	(void)curl_easy_setopt(c->easy, CURLOPT_UPLOAD, 1L);
	(void)curl_easy_setopt(c->easy, CURLOPT_READFUNCTION, raw_curl_read);
	(void)curl_easy_setopt(c->easy, CURLOPT_READDATA, c);
	(void)curl_easy_setopt(c->easy, CURLOPT_NOSIGNAL, 1L);
	(void)curl_easy_setopt(c->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	return 0;
}

/* Submits one mail and waits for the MTA's answer to it. */
static int
raw_curl_send(struct raw_curl *c, const char *mail, size_t len)
{
	CURLcode rc;

	c->data = mail;
	c->len = len;
	c->off = 0;
	(void)curl_easy_setopt(c->easy, CURLOPT_INFILESIZE_LARGE,
	    (curl_off_t)len);
	rc = curl_easy_perform(c->easy);
	if (rc != CURLE_OK) {
		fprintf(stderr, "bench_smtp: raw submission: %s\n",
		    curl_easy_strerror(rc));
		return -EIO;
	}
	return 0;
}

/* --- reading --------------------------------------------------------- */

struct raw_reader {
	bool fifo;
	int fd;       /* the FIFO, or inotify on new/ */
	DIR *dir;     /* new/ (Maildir) */
	char *buf;    /* a Maildir file, or carry + a FIFO chunk */
	size_t cap;   /* of buf */
	size_t carry; /* FIFO: bytes kept from the last chunk */
};

static void
raw_reader_close(struct raw_reader *r)
{
	if (r->fd >= 0)
		(void)close(r->fd);
	if (r->dir != NULL)
		(void)closedir(r->dir);
	free(r->buf);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

static int
raw_reader_open(struct raw_reader *r, const struct smtp_raw_path *p)
{
	char sub[512];

	memset(r, 0, sizeof(*r));
	r->fifo = p->fifo;
	r->cap = RAW_CHUNK + RAW_MARKER_MAX;
	r->buf = malloc(r->cap);
	if (r->buf == NULL)
		return -ENOMEM;
	if (p->fifo) {
		/* As ferryd: a writer closing its end is no EOF. */
		r->fd = open(p->inbox, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (r->fd < 0)
			goto fail;
		(void)fcntl(r->fd, F_SETPIPE_SZ, RAW_PIPE_SIZE);
		return 0;
	}
	(void)snprintf(sub, sizeof(sub), "%s/new", p->inbox);
	r->dir = opendir(sub);
	r->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (r->dir == NULL || r->fd < 0 ||
	    inotify_add_watch(r->fd, sub, IN_CREATE | IN_MOVED_TO) < 0)
		goto fail;
	return 0;
fail : {
	int e = -errno;

	raw_reader_close(r);
	return e;
}
}

static unsigned
raw_count(const char *buf, size_t len, const char *marker, size_t mlen)
{
	unsigned n = 0;
	const char *s = buf, *end = buf + len;

	while ((s = memmem(s, (size_t)(end - s), marker, mlen)) != NULL) {
		n++;
		s += mlen;
	}
	return n;
}

/* Reads what the FIFO holds now; counts markers across chunks. */
static int
raw_reader_fifo(struct raw_reader *r, const char *marker, uint64_t *bytes)
{
	size_t mlen = strlen(marker);
	unsigned found = 0;
	ssize_t n;

	for (;;) {
		n = read(r->fd, r->buf + r->carry, RAW_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		*bytes += (uint64_t)n;
		found += raw_count(r->buf, r->carry + (size_t)n, marker, mlen);
		/* Keep mlen - 1 bytes: a marker cut in two, never one
		 * already counted. */
		if (r->carry + (size_t)n >= mlen - 1) {
			memmove(r->buf,
			    r->buf + r->carry + (size_t)n - (mlen - 1),
			    mlen - 1);
			r->carry = mlen - 1;
		} else {
			r->carry += (size_t)n;
		}
	}
	return (int)found;
}

/* Reads, counts and deletes every file in new/ (one pass, as ferryd). */
static int
raw_reader_maildir(struct raw_reader *r, const char *marker, uint64_t *bytes)
{
	size_t mlen = strlen(marker);
	char ev[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	struct dirent *de;
	unsigned found = 0;

	while (read(r->fd, ev, sizeof(ev)) > 0)
		;
	rewinddir(r->dir);
	while ((de = readdir(r->dir)) != NULL) {
		int fd = -1;
		struct stat st;
		size_t got = 0, tail;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(r->dir), de->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			goto next;
		if ((size_t)st.st_size > r->cap) {
			char *b = realloc(r->buf, (size_t)st.st_size);

			if (b == NULL)
				goto next;
			r->buf = b;
			r->cap = (size_t)st.st_size;
		}
		while (got < (size_t)st.st_size) {
			ssize_t n =
			    read(fd, r->buf + got, (size_t)st.st_size - got);

			if (n <= 0)
				break;
			got += (size_t)n;
		}
		*bytes += got;
		tail = got > RAW_TAIL ? got - RAW_TAIL : 0;
		found += raw_count(r->buf + tail, got - tail, marker, mlen) > 0;
		(void)unlinkat(dirfd(r->dir), de->d_name, 0);
next:
		if (fd >= 0)
			(void)close(fd);
	}
	return (int)found;
}

/* Waits up to timeout_ms for mail, reads all there is, and returns how
 * many markers it held (0 after a timeout), or a negative errno. */
static int
raw_reader_poll(struct raw_reader *r, const char *marker, int timeout_ms,
    uint64_t *bytes)
{
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 0;
	return r->fifo ? raw_reader_fifo(r, marker, bytes)
	               : raw_reader_maildir(r, marker, bytes);
}

/* --- the runs -------------------------------------------------------- */

/* Waits until the reader saw marker, up to timeout_ms. */
static int
raw_wait(struct raw_reader *rd, const char *marker, int timeout_ms)
{
	uint64_t end = bench_now_ns() + (uint64_t)timeout_ms * 1000000u;
	uint64_t bytes = 0;
	int n;

	for (;;) {
		uint64_t now = bench_now_ns();

		if (now >= end)
			return -ETIMEDOUT;
		n = raw_reader_poll(rd, marker,
		    (int)((end - now) / 1000000u) + 1, &bytes);
		if (n != 0)
			return n < 0 ? n : 0;
	}
}

int
smtp_raw_seq(const struct smtp_raw_path *p, size_t mail_size, unsigned count,
    unsigned warmup, int timeout_ms, uint64_t *per_msg_ns, uint64_t *ret_ns)
{
	struct raw_reader rd;
	struct raw_curl c;
	uint64_t t0 = 0;
	int r;

	r = raw_reader_open(&rd, p);
	if (r < 0)
		return r;
	r = raw_curl_init(&c, p);
	if (r < 0) {
		raw_reader_close(&rd);
		return r;
	}
	for (unsigned i = 0; r == 0 && i < warmup + count; i++) {
		char b[64], marker[RAW_MARKER_MAX];
		char *mail;
		size_t len;
		uint64_t ts;

		(void)snprintf(b, sizeof(b), "raw-%ld-%u", (long)getpid(), i);
		(void)snprintf(marker, sizeof(marker), "--%s--", b);
		r = raw_compose(p, b, 0, mail_size, &mail, &len);
		if (r < 0)
			break;
		if (i == warmup)
			t0 = bench_now_ns();
		ts = bench_now_ns();
		r = raw_curl_send(&c, mail, len);
		free(mail);
		if (r == 0)
			r = raw_wait(&rd, marker, timeout_ms);
		if (r == 0 && i >= warmup && per_msg_ns != NULL)
			per_msg_ns[i - warmup] = bench_now_ns() - ts;
	}
	*ret_ns = bench_now_ns() - t0;
	raw_curl_done(&c);
	raw_reader_close(&rd);
	return r;
}

/* Shared by the submitting and the reading process of a bulk run. */
struct raw_bulk_shared {
	volatile uint64_t send_end_ns;
	volatile uint64_t received;
	volatile uint64_t last_ns;
	volatile int ready;
	volatile int failed;
};

static _Noreturn void
raw_bulk_reader(const struct smtp_raw_path *p, const char *marker,
    unsigned count, unsigned drain_ms, struct raw_bulk_shared *sh)
{
	uint64_t born = bench_now_ns(), bytes = 0;
	struct raw_reader rd;
	int r;

	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	r = raw_reader_open(&rd, p);
	if (r < 0) {
		sh->failed = -r;
		_exit(1);
	}
	sh->ready = 1;
	while (sh->received < count) {
		uint64_t now;

		r = raw_reader_poll(&rd, marker, 20, &bytes);
		now = bench_now_ns();
		if (r < 0) {
			sh->failed = -r;
			_exit(2);
		}
		if (r > 0) {
			sh->received += (uint64_t)r;
			sh->last_ns = now;
			continue;
		}
		if ((sh->send_end_ns != 0 &&
		        now > sh->send_end_ns + drain_ms * 1000000ull) ||
		    now - born > RAW_BULK_MAX_NS)
			break;
	}
	raw_reader_close(&rd);
	_exit(0);
}

int
smtp_raw_bulk(const struct smtp_raw_path *p, size_t payload, unsigned count,
    unsigned drain_ms, struct smtp_raw_bulk *ret)
{
	struct raw_bulk_shared *sh = bench_shared(sizeof(*sh));
	char b[64], marker[RAW_MARKER_MAX];
	struct raw_curl c;
	char *mail = NULL;
	size_t len = 0;
	pid_t pid;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (sh == NULL)
		return -ENOMEM;
	/* One boundary for the run: the reader counts its closing lines. */
	(void)snprintf(b, sizeof(b), "rawend-%ld-%ld", (long)getpid(),
	    (long)bench_now_ns() % 1000000000l);
	(void)snprintf(marker, sizeof(marker), "--%s--", b);
	r = raw_compose(p, b, raw_b64_chars(payload), 0, &mail, &len);
	if (r < 0)
		goto out;
	ret->mail_bytes = len;
	(void)fflush(NULL);
	pid = fork();
	if (pid == 0)
		raw_bulk_reader(p, marker, count, drain_ms, sh);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	while (!sh->ready && !sh->failed)
		(void)usleep(1000);
	r = sh->failed ? -sh->failed : raw_curl_init(&c, p);
	if (r == 0) {
		ret->start_ns = bench_now_ns();
		for (unsigned i = 0; r == 0 && i < count; i++) {
			r = raw_curl_send(&c, mail, len);
			if (r == 0)
				ret->sent++;
		}
		ret->send_end_ns = sh->send_end_ns = bench_now_ns();
		raw_curl_done(&c);
	} else {
		sh->send_end_ns = 1; /* let the reader go */
	}
	if (bench_wait_child(pid) < 0 && r == 0)
		r = sh->failed ? -sh->failed : -ECHILD;
	ret->received = (unsigned)sh->received;
	ret->payload = (uint64_t)ret->received * payload;
	ret->last_ns = sh->last_ns;
out:
	free(mail);
	bench_shared_free(sh, sizeof(*sh));
	return r;
}
