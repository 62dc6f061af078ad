/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One client connection, service layer: large non-blocking reads, frames
 * parsed in place, output batched into few writes, and the rule that a
 * client is not read while it is blocked by back-pressure (DESIGN.md,
 * BPCC) or while its replies pile up beyond CLIENT_BUFFER.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/log.h"
#include "lib/time.h"
#include "lib/wire.h"

static void client_on_read(evutil_socket_t fd, short what, void *cls);
static void client_on_write(evutil_socket_t fd, short what, void *cls);

int
client_new(struct service *svc, int fd, struct policy_cred *cred,
    enum policy_level level, struct client **ret)
{
	struct client *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		policy_cred_done(cred);
		(void)close(fd);
		return -ENOMEM;
	}
	c->svc = svc;
	c->fd = fd;
	c->cred = *cred;
	c->level = level;
	buf_init(&c->in);
	buf_init(&c->out);
	buf_init(&c->reasm);
	LIST_INIT(&c->pings);
	TAILQ_INSERT_TAIL(&svc->clients, c, link);
	svc->n_clients++;
	(*svc->c.clients_connected)++;
	(*svc->c.clients_accepted)++;
	c->ev_read =
	    event_new(svc->base, fd, EV_READ | EV_PERSIST, client_on_read, c);
	c->ev_write =
	    event_new(svc->base, fd, EV_WRITE | EV_PERSIST, client_on_write, c);
	if (c->ev_read == NULL || c->ev_write == NULL) {
		client_free(c);
		return -ENOMEM;
	}
	client_update_reading(c);
	log_debug("client fd %d (pid %ld, uid %lu, gid %lu) connected%s", fd,
	    (long)c->cred.pid, (unsigned long)c->cred.uid,
	    (unsigned long)c->cred.gid,
	    level == POLICY_ADMIN ? " with SHUTDOWN rights" : "");
	*ret = c;
	return 0;
}

void
client_free(struct client *c)
{
	struct service *svc;

	if (c == NULL)
		return;
	svc = c->svc;
	relay_client_gone(c);
	ping_client_gone(c);
	requests_dht_client_gone(c);
	requests_storage_client_gone(c);
	while (c->n_fds > 0)
		(void)close(client_take_fd(c));
	client_backlog_add(c, -(int64_t)buf_size(&c->out));
	if (c->ev_read != NULL)
		event_free(c->ev_read);
	if (c->ev_write != NULL)
		event_free(c->ev_write);
	(void)close(c->fd);
	policy_cred_done(&c->cred);
	buf_done(&c->in);
	buf_done(&c->out);
	buf_done(&c->reasm);
	TAILQ_REMOVE(&svc->clients, c, link);
	svc->n_clients--;
	(*svc->c.clients_connected)--;
	log_debug("client fd %d (pid %ld) disconnected", c->fd,
	    (long)c->cred.pid);
	/* A client that asked for shutdown and left before its answer was
	 * written still gets the shutdown. */
	if (c->shutdown_requested && !c->shutdown_done)
		svc->on_shutdown(svc->on_shutdown_cls);
	free(c);
	service_client_gone(svc);
}

int
client_drop(struct client *c, uint32_t req_id, int status, const char *why)
{
	(*c->svc->c.malformed)++;
	service_log_policy(c->svc,
	    "client fd %d (pid %ld, uid %lu): %s; disconnecting", c->fd,
	    (long)c->cred.pid, (unsigned long)c->cred.uid, why);
	/* Told why, so that a client under development need not read the
	 * daemon's log; a RESULT that cannot be queued is not worth more
	 * than the disconnect itself. */
	(void)reply_result(c, req_id, status, why);
	c->closing = true;
	c->closing_until_us = time_mono_us() + SERVICE_LINGER_US;
	return status;
}

void
client_end(struct client *c)
{
	if (!c->closing) {
		client_free(c);
		return;
	}
	/* Nothing more comes in or is queued: only the output goes on. */
	relay_client_gone(c);
	ping_client_gone(c);
	requests_dht_client_gone(c);
	requests_storage_client_gone(c);
	if (c->reading)
		(void)event_del(c->ev_read);
	c->reading = false;
	buf_done(&c->in);
	if (client_flush(c) < 0 || buf_size(&c->out) == 0)
		client_free(c);
}

/* The write side of a client cut off for a protocol violation: it goes
 * once its output is written, fails, or SERVICE_LINGER_US has passed. */
static void
client_linger(struct client *c, short what)
{
	if (!(what & EV_WRITE) || time_mono_us() >= c->closing_until_us ||
	    client_flush(c) < 0 || buf_size(&c->out) == 0)
		client_free(c);
}

static bool
client_out_full(const struct client *c)
{
	return buf_size(&c->out) > c->svc->cfg.client_buffer;
}

void
client_update_reading(struct client *c)
{
	/* Requests not yet answered stay in the kernel's socket buffer, not
	 * ours: read only when what was read before is (nearly) handled. */
	bool want = !c->blocked && !client_out_full(c) && !c->closing &&
	    !c->shutdown_requested && buf_size(&c->in) < SERVICE_READ_CHUNK;

	if (want == c->reading)
		return;
	if (want)
		(void)event_add(c->ev_read, NULL);
	else
		(void)event_del(c->ev_read);
	c->reading = want;
}

/* Why a frame whose decoder said -EMSGSIZE is refused: only a SEND or a
 * DHT_PUT says so, and only with its fixed part whole. */
static void
client_why_oversize(const struct msg_frame *f, char *why, size_t size)
{
	if (f->type == FERRY_C_DHT_PUT)
		(void)snprintf(why, size,
		    "DHT_PUT of a block of %lu bytes, over FERRY_DHT_BLOCK_MAX",
		    (unsigned long)wire_get32(f->p + 20));
	else
		(void)snprintf(why, size,
		    "SEND of a message of %lu bytes, over FERRY_APP_MSG_MAX",
		    (unsigned long)wire_get32(f->p + 44));
}

/* One frame: 0 consumed, 1 blocked (leave it), negative: cut off. */
static int
client_frame(struct client *c, const struct msg_frame *f)
{
	const struct request_kind *kind;
	struct msg_req req;
	char why[96];
	int r;

	if (!msgparse_chunk_allows(&c->chunks, f->type)) {
		(void)snprintf(why, sizeof(why),
		    "request interleaved with a chunked %s",
		    requests_kind(c->chunks.type)->name);
		return client_drop(c, msgparse_req_id(f), -EBADMSG, why);
	}
	r = requests_decode(f, &kind, &req);
	if (r == -EOPNOTSUPP) {
		(*c->svc->c.unknown_type)++;
		return reply_result(c, msgparse_req_id(f), -EOPNOTSUPP,
		    "unknown request type");
	}
	if (r == -EMSGSIZE) {
		client_why_oversize(f, why, sizeof(why));
		return client_drop(c, msgparse_req_id(f), r, why);
	}
	if (r < 0) {
		(void)snprintf(why, sizeof(why),
		    "malformed %s request (type 0x%04x, %u bytes)",
		    requests_kind(f->type)->name, f->type, f->size);
		return client_drop(c, msgparse_req_id(f), r, why);
	}
	if (c->level < kind->level)
		return requests_refuse(c, kind, &req);
	return kind->handle(c, &req);
}

int
client_take_fd(struct client *c)
{
	int fd;

	if (c->n_fds == 0)
		return -1;
	fd = c->fds[0];
	memmove(c->fds, c->fds + 1, --c->n_fds * sizeof(c->fds[0]));
	return fd;
}

/* Keeps the descriptors of a recvmsg(); false if there were more than
 * SERVICE_FDS_MAX waiting (those are closed). */
static bool
client_keep_fds(struct client *c, struct msghdr *mh)
{
	bool ok = (mh->msg_flags & MSG_CTRUNC) == 0;
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		size_t n;
		int fd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			    sizeof(fd));
			if (c->n_fds < SERVICE_FDS_MAX)
				c->fds[c->n_fds++] = fd;
			else {
				(void)close(fd);
				ok = false;
			}
		}
	}
	return ok;
}

int
client_process(struct client *c)
{
	struct msg_frame f;
	int r;

	while (!c->blocked && !client_out_full(c) && !c->shutdown_requested) {
		r = msgparse_frame(buf_head(&c->in), buf_size(&c->in), &f);
		if (r == 0)
			break;
		if (r < 0)
			return client_drop(c, 0, r, "frame size field below 4");
		r = client_frame(c, &f);
		if (r < 0)
			return r;
		if (r > 0)
			break;
		(*c->svc->c.frames_in)++;
		buf_consume(&c->in, f.size);
	}
	/* A descriptor arrives with the first byte of its frame: one left
	 * when no frame is half read came with a frame that takes none. */
	if (c->n_fds > 0 && buf_size(&c->in) == 0 && !c->closing)
		return client_drop(c, 0, -EBADMSG,
		    "file descriptor sent with a request that takes none");
	return 0;
}

int
client_flush(struct client *c)
{
	struct service *svc = c->svc;
	ssize_t n;

	while (buf_size(&c->out) > 0) {
		/* MSG_NOSIGNAL: a client gone is an error here, never a
		 * SIGPIPE, whatever the daemon's signal setup. */
		n = send(c->fd, buf_head(&c->out), buf_size(&c->out),
		    MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			log_debug_errno(-errno, "client fd %d: write", c->fd);
			return -errno;
		}
		if (c->stalled && n > 0) {
			/* Reading again: its output counts again. */
			c->stalled = false;
			service_backlog_add(svc, (int64_t)buf_size(&c->out));
		}
		buf_consume(&c->out, (size_t)n);
		(*svc->c.bytes_out) += (uint64_t)n;
		client_backlog_add(c, -(int64_t)n);
	}
	if (buf_size(&c->out) > 0) {
		client_flush_later(c);
		return 0;
	}
	if (c->writing) {
		(void)event_del(c->ev_write);
		c->writing = false;
	}
	if (c->shutdown_requested && !c->shutdown_done) {
		c->shutdown_done = true;
		svc->on_shutdown(svc->on_shutdown_cls);
	}
	return 0;
}

void
client_backlog_add(struct client *c, int64_t delta)
{
	if (!c->stalled)
		service_backlog_add(c->svc, delta);
}

void
client_flush_later(struct client *c)
{
	static const struct timeval stall = {
		.tv_sec = SERVICE_STALL_US / 1000000,
		.tv_usec = SERVICE_STALL_US % 1000000,
	};

	if (c->writing || buf_size(&c->out) == 0)
		return;
	/* The timeout tells a client that stopped reading (client_on_write). */
	(void)event_add(c->ev_write, &stall);
	c->writing = true;
}

/*
 * Goes on for as long as the output drains completely: a pipelining
 * client's requests may all be in c->in already, and once the output is
 * empty neither a write nor a read event will come for them. Progress is
 * a request handled or a full output written out; the second is the case
 * of a write event after a short write had left the output over
 * CLIENT_BUFFER, when no request could be handled before the flush.
 */
int
client_work(struct client *c)
{
	bool progress;
	size_t before;
	int r;

	do {
		before = buf_size(&c->in);
		progress = client_out_full(c);
		r = client_process(c);
		if (r == 0)
			r = client_flush(c);
		if (r < 0)
			return r;
		progress = progress || buf_size(&c->in) < before;
	} while (progress && buf_size(&c->out) == 0 && !c->blocked &&
	    !c->shutdown_requested);
	return 0;
}

static void
client_on_read(evutil_socket_t fd, short what, void *cls)
{
	struct client *c = cls;
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(SERVICE_FDS_MAX * sizeof(int))];
	} cm;
	struct iovec iov;
	struct msghdr mh;
	uint8_t *p;
	ssize_t n;

	(void)what;
	p = buf_reserve(&c->in, SERVICE_READ_CHUNK);
	if (p == NULL) {
		log_warn("client fd %d: out of memory; disconnecting", c->fd);
		client_free(c);
		return;
	}
	/* Files come as descriptors (FILE_PUT, FILE_GET): the daemon never
	 * opens a path a client names. */
	iov.iov_base = p;
	iov.iov_len = SERVICE_READ_CHUNK;
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.b;
	mh.msg_controllen = sizeof(cm.b);
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n > 0 && !client_keep_fds(c, &mh)) {
		buf_commit(&c->in, (size_t)n);
		(void)client_drop(c, 0, -EBADMSG,
		    "more file descriptors sent than requests to take them");
		client_end(c);
		return;
	}
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0)
			log_debug_errno(-errno, "client fd %d: read", c->fd);
		client_free(c);
		return;
	}
	buf_commit(&c->in, (size_t)n);
	(*c->svc->c.bytes_in) += (uint64_t)n;
	if (client_work(c) < 0) {
		client_end(c);
		return;
	}
	client_update_reading(c);
}

static void
client_on_write(evutil_socket_t fd, short what, void *cls)
{
	struct client *c = cls;

	(void)fd;
	if (c->closing) {
		client_linger(c, what);
		return;
	}
	/*
	 * The core stops reading from peers while clients' output exceeds
	 * RECV_WINDOW, so that slow clients catch up instead of losing
	 * messages. A client that takes nothing at all for SERVICE_STALL_US
	 * is not slow but stuck: it must not hold every peer back for as
	 * long as it stays connected, so its output leaves the backlog (and
	 * what comes for it is dropped at CLIENT_BUFFER) until it reads.
	 */
	if (!(what & EV_WRITE)) {
		if (!c->stalled && buf_size(&c->out) > 0) {
			log_debug("client fd %d (pid %ld) takes no output; its "
				  "%zu bytes no longer hold peers back",
			    c->fd, (long)c->cred.pid, buf_size(&c->out));
			service_backlog_add(c->svc,
			    -(int64_t)buf_size(&c->out));
			c->stalled = true;
			(*c->svc->c.clients_stalled)++;
		}
		return;
	}
	/* Requests held back while replies piled up can go on now. */
	if (client_work(c) < 0) {
		client_end(c);
		return;
	}
	client_update_reading(c);
}
