/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The service's lifecycle (see service.h), service layer: the [service]
 * keys, accepting clients up to MAX_CLIENTS that the credential policy
 * lets in (policy.c), and the statistics counters. Socket and lock are in
 * listen.c, one client in client.c, its connection in conn.c.
 */
#define LOG_TAG "service"
#include "service/service_int.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/core.h"
#include "lib/cfg.h"
#include "lib/dirs.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "service/registry.h"

const struct cfg_schema_key service_cfg_keys[] = {
	{ "service", "SOCKET", NULL,
	    "client socket path (default: <runtime dir>/ferryd.sock)" },
	{ "service", "SOCKET_MODE", "0660",
	    "permissions of the client socket, in octal" },
	{ "service", "SOCKET_GROUP", "",
	    "group owning the client socket, by name or gid (empty: the daemon's group)" },
	{ "service", "MAX_CLIENTS", "256",
	    "client connections served at once; more wait in the listen queue" },
	{ "service", "CLIENT_BUFFER", "8 MiB",
	    "output held for a client before messages for it are dropped; one message may take it past this" },
	{ "service", "STALL_TIMEOUT", "1 s",
	    "a client that takes none of its output for this long no longer holds peers back until it reads" },
	{ "service", "ALLOW_USERS", "",
	    "users (names or uids) let in besides root, the daemon's user and the socket's group" },
	{ "service", "ALLOW_GROUPS", "",
	    "groups (names or gids) whose members are let in" },
	{ "service", "ADMIN_USERS", "",
	    "users who may also SHUTDOWN the daemon, besides root and its own user" },
	{ "service", "ADMIN_GROUPS", "",
	    "groups whose members may also SHUTDOWN the daemon" },
	{ NULL, NULL, NULL, NULL },
};

static int
service_cfg_socket(struct cfg *cfg, const char *runtime_dir, struct svc_cfg *sc)
{
	const char *s = cfg_get(cfg, "service", "SOCKET");
	int n;

	if (s != NULL && *s != '\0')
		n = snprintf(sc->socket, sizeof(sc->socket), "%s", s);
	else if (runtime_dir != NULL)
		n = snprintf(sc->socket, sizeof(sc->socket), "%s/%s",
		    runtime_dir, DIRS_SOCKET_NAME);
	else
		return 0;
	/* The lock file's name adds ".lock"; sun_path bounds the rest. */
	if (n < 0 || (size_t)n >= sizeof(sc->socket))
		return cfg_fail(cfg, "service", "SOCKET",
		    "path longer than %zu bytes", sizeof(sc->socket) - 1);
	return 0;
}

static int
service_cfg_group(struct cfg *cfg, struct svc_cfg *sc)
{
	const char *g = cfg_get(cfg, "service", "SOCKET_GROUP");
	struct group gr, *res = NULL;
	char tmp[4096];
	char *end;
	unsigned long gid;

	sc->set_gid = false;
	if (g == NULL || *g == '\0')
		return 0;
	errno = 0;
	gid = strtoul(g, &end, 10);
	if (*end == '\0' && errno == 0 && gid <= (gid_t)-2) {
		sc->gid = (gid_t)gid;
		sc->set_gid = true;
		return 0;
	}
	if (getgrnam_r(g, &gr, tmp, sizeof(tmp), &res) != 0 || res == NULL)
		return cfg_fail(cfg, "service", "SOCKET_GROUP",
		    "no group called '%s'", g);
	sc->gid = res->gr_gid;
	sc->set_gid = true;
	return 0;
}

static int
service_cfg_mode(struct cfg *cfg, struct svc_cfg *sc)
{
	const char *m = cfg_get(cfg, "service", "SOCKET_MODE");
	char *end;
	unsigned long mode;

	if (m == NULL || *m == '\0')
		return cfg_fail(cfg, "service", "SOCKET_MODE",
		    "expected an octal mode such as 0660");
	errno = 0;
	mode = strtoul(m, &end, 8);
	if (*end != '\0' || errno != 0 || mode > 0777)
		return cfg_fail(cfg, "service", "SOCKET_MODE",
		    "expected an octal mode such as 0660, not '%s'", m);
	sc->mode = (mode_t)mode;
	return 0;
}

int
service_cfg_parse(struct cfg *cfg, const char *runtime_dir, struct svc_cfg *ret)
{
	struct svc_cfg sc;
	uint64_t v;
	int r = 0;

	memset(&sc, 0, sizeof(sc));
	if (service_cfg_socket(cfg, runtime_dir, &sc) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	if (service_cfg_mode(cfg, &sc) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	if (service_cfg_group(cfg, &sc) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	if (policy_parse(cfg, sc.mode, &sc.policy) < 0)
		r = -EINVAL;
	if (cfg_get_uint(cfg, "service", "MAX_CLIENTS", 1, 65536, &v) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	} else {
		sc.max_clients = (uint32_t)v;
	}
	if (cfg_get_duration(cfg, "service", "STALL_TIMEOUT", 10 * 1000,
	        3600ull * 1000 * 1000, &sc.stall_us) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	/* At least one whole RECEIVE frame must fit. */
	if (cfg_get_size(cfg, "service", "CLIENT_BUFFER", 64 * 1024,
	        (uint64_t)1 << 40, &sc.client_buffer) < 0) {
		log_err("%s", cfg_error(cfg));
		r = -EINVAL;
	}
	if (r == 0)
		*ret = sc;
	return r;
}

int
service_config_check(struct cfg *cfg)
{
	struct svc_cfg sc;

	return service_cfg_parse(cfg, NULL, &sc);
}

static int
service_counters(struct service *svc)
{
	static const struct stats_slot slots[] = {
#define SC(f) STATS_SLOT(struct svc_counters, f)
		SC(clients_connected), SC(clients_accepted),
		SC(clients_refused), SC(requests_denied), SC(accept_paused),
		SC(frames_in), SC(frames_out), SC(bytes_in), SC(bytes_out),
		SC(malformed), SC(unknown_type), SC(send_ok), SC(send_notconn),
		SC(send_again), SC(send_inval), SC(send_other),
		SC(send_blocked), SC(recv_delivered), SC(recv_dropped),
		SC(clients_stalled), SC(recv_no_listener),
#undef SC
	};

	return stats_bind_prefix(svc->stats, "service", &svc->c, slots,
	    sizeof(slots) / sizeof(slots[0]));
}

static void
service_pause_accept(struct service *svc, bool pause)
{
	if (pause == svc->accept_paused)
		return;
	/* Connections beyond the limit wait in the kernel's listen queue
	 * instead of being accepted and closed. */
	if (pause)
		(void)event_del(svc->ev_accept);
	else
		(void)event_add(svc->ev_accept, NULL);
	svc->accept_paused = pause;
}

void
service_client_gone(struct service *svc)
{
	if (svc->accept_paused && svc->n_clients < svc->cfg.max_clients)
		service_pause_accept(svc, false);
}

/* The core stops reading peers while clients' output is large. */
static void
service_on_backlog(void *cls, uint64_t bytes)
{
	struct service *svc = cls;

	core_rx_account_set(svc->rx_acct, bytes);
}

/* The client socket's connections: bounds, counters, backlog. */
static void
service_conns_init(struct service *svc)
{
	const struct conn_limits lim = {
		.in_max = SERVICE_READ_CHUNK,
		.out_max = svc->cfg.client_buffer,
		.stall_us = svc->cfg.stall_us,
		.linger_us = SERVICE_LINGER_US,
		.idle_us = 0, /* a client may wait for messages for ever */
	};
	const struct conn_counters c = {
		.bytes_in = svc->c.bytes_in,
		.bytes_out = svc->c.bytes_out,
		.stalled = svc->c.clients_stalled,
		/* Cannot happen: a frame is less than the input holds. */
		.overflow = svc->c.malformed,
		.idle = NULL,
	};

	conn_set_init(&svc->conns, svc->base, "client", &lim, &c,
	    service_on_backlog, svc);
}

static void
service_refuse(struct service *svc, const struct policy_cred *cred)
{
	(*svc->c.clients_refused)++;
	conn_set_log(&svc->conns,
	    "refused a client: uid %lu gid %lu pid %ld is not root, the daemon's user, in the socket's group, nor in [service] ALLOW_USERS, ALLOW_GROUPS, ADMIN_USERS or ADMIN_GROUPS",
	    (unsigned long)cred->uid, (unsigned long)cred->gid,
	    (long)cred->pid);
}

/* Checks a new connection's credentials and sets it up or closes it. */
static void
service_admit(struct service *svc, int fd)
{
	struct policy_cred cred;
	enum policy_level level;
	struct client *c;
	int r = policy_cred_get(fd, &cred);

	if (r < 0) {
		/* Without credentials there is nothing to judge by. */
		(*svc->c.clients_refused)++;
		conn_set_log(&svc->conns,
		    "refused a client whose credentials cannot be read: %s",
		    strerror(-r));
		(void)close(fd);
		return;
	}
	level = policy_check(&svc->cfg.policy, &cred);
	if (level == POLICY_REFUSED) {
		service_refuse(svc, &cred);
		policy_cred_done(&cred);
		(void)close(fd);
		return;
	}
	r = client_new(svc, fd, &cred, level, &c);
	if (r < 0)
		log_warn_errno(r, "cannot set up a client");
}

static void
service_on_accept(evutil_socket_t fd, short what, void *cls)
{
	struct service *svc = cls;
	int cfd, err = 0;

	(void)what;
	/* Take what is waiting now, up to the limit, then yield. */
	for (int i = 0; i < 64; i++) {
		if (svc->n_clients >= svc->cfg.max_clients) {
			(*svc->c.accept_paused)++;
			service_pause_accept(svc, true);
			return;
		}
		cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			err = errno;
			break;
		}
		service_admit(svc, cfd);
	}
	if (err == EMFILE || err == ENFILE) {
		/* Out of descriptors: stop accepting until a client
		 * leaves, rather than spin on a listener that stays
		 * readable. */
		log_warn(
		    "out of file descriptors; accepting again when a client leaves");
		(*svc->c.accept_paused)++;
		service_pause_accept(svc, true);
	}
}

static int
service_start(struct service *svc)
{
	int r = service_counters(svc);

	if (r < 0)
		return log_err_errno(r, "service counters");
	service_conns_init(svc);
	svc->reg = registry_new();
	if (svc->reg == NULL)
		return log_err_errno(-ENOMEM, "service registry");
	r = listen_open(svc);
	if (r < 0)
		return r;
	svc->ev_accept = event_new(svc->base, svc->listen_fd,
	    EV_READ | EV_PERSIST, service_on_accept, svc);
	if (svc->ev_accept == NULL || event_add(svc->ev_accept, NULL) < 0)
		return log_err_errno(-ENOMEM, "service accept event");
	r = relay_init(svc);
	if (r < 0)
		return log_err_errno(r, "cannot receive application messages");
	log_info("listening on %s", svc->cfg.socket);
	return 0;
}

int
service_new(struct event_base *base, struct cfg *cfg, struct stats *stats,
    struct core *core, struct dht *dht, struct xfer *xfer,
    const char *runtime_dir,
    service_shutdown_fn *on_shutdown, void *cls, struct service **ret)
{
	struct service *svc = calloc(1, sizeof(*svc));
	int r;

	if (svc == NULL)
		return log_err_errno(-ENOMEM, "service");
	svc->base = base;
	svc->stats = stats;
	svc->core = core;
	svc->dht = dht;
	svc->xfer = xfer;
	svc->on_shutdown = on_shutdown;
	svc->on_shutdown_cls = cls;
	svc->listen_fd = -1;
	svc->lock_fd = -1;
	svc->started_us = time_mono_us();
	TAILQ_INIT(&svc->clients);
	TAILQ_INIT(&svc->blocked);
	r = service_cfg_parse(cfg, runtime_dir, &svc->cfg);
	if (r == 0)
		r = core_rx_account_new(core, &svc->rx_acct);
	if (r == 0)
		r = service_start(svc);
	if (r < 0) {
		service_free(svc);
		return r;
	}
	*ret = svc;
	return 0;
}

void
service_free(struct service *svc)
{
	struct client *c;

	if (svc == NULL)
		return;
	relay_done(svc);
	while ((c = TAILQ_FIRST(&svc->clients)) != NULL)
		client_free(c);
	if (svc->ev_accept != NULL)
		event_free(svc->ev_accept);
	listen_close(svc);
	registry_free(svc->reg);
	/* Last: freeing the clients above took their output off it. */
	core_rx_account_free(svc->rx_acct);
	free(svc);
}

/* Judges the connected clients again by a new policy. */
static void
service_recheck(struct service *svc)
{
	struct client *c, *next;

	for (c = TAILQ_FIRST(&svc->clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, link);
		c->level = policy_check(&svc->cfg.policy, &c->cred);
		if (c->level != POLICY_REFUSED)
			continue;
		service_refuse(svc, &c->cred);
		client_free(c);
	}
}

int
service_reload(struct service *svc, struct cfg *cfg)
{
	struct svc_cfg sc;
	int r = service_cfg_parse(cfg, NULL, &sc);

	if (r < 0)
		return r;
	if ((sc.socket[0] != '\0' && strcmp(sc.socket, svc->cfg.socket) != 0) ||
	    sc.mode != svc->cfg.mode || sc.set_gid != svc->cfg.set_gid ||
	    (sc.set_gid && sc.gid != svc->cfg.gid))
		log_notice(
		    "[service] SOCKET, SOCKET_MODE and SOCKET_GROUP take effect after a restart");
	svc->cfg.max_clients = sc.max_clients;
	svc->cfg.client_buffer = sc.client_buffer;
	svc->conns.lim.out_max = sc.client_buffer;
	/* From the next output that waits. */
	svc->cfg.stall_us = sc.stall_us;
	svc->conns.lim.stall_us = sc.stall_us;
	/* The socket stays as it is, and so does what its mode and group
	 * grant. */
	sc.policy.group_write = svc->cfg.policy.group_write;
	sc.policy.have_socket_gid = svc->cfg.policy.have_socket_gid;
	sc.policy.socket_gid = svc->cfg.policy.socket_gid;
	svc->cfg.policy = sc.policy;
	service_recheck(svc);
	if (svc->n_clients < svc->cfg.max_clients)
		service_pause_accept(svc, false);
	return 0;
}
