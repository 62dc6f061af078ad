/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * ferryd: reads the configuration, starts the subsystems from one ordered
 * table, runs the event loop and stops them in reverse (STYLE.md section
 * 1; tor's subsystem_list.c). Nothing else lives here; main() is main.c's,
 * so that a test build (tests/tools/ferryd_hostile.c) runs this daemon.
 */
#define LOG_TAG "ferryd"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>
#include <sodium.h>

#include "core/core.h"
#include "core/core_cfg.h"
#include "core/transport.h"
#include "daemon/ferryd.h"
#include "daemon/schema.h"
#include "dht/dhtnode.h"
#include "daemon/sdnotify.h"
#include "intermediary/imd.h"
#include "intermediary/rqueue.h"
#include "lib/cfg.h"
#include "lib/dirs.h"
#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/stats.h"
#include "lib/time.h"
#include "service/service.h"
#include "storage/xfer.h"

#define FERRYD_DEFAULT_CONFIG FERRY_SYSCONF_DIR "/ferryd.conf"
#define FERRYD_MAX_OVERRIDES 64

const struct cfg_schema_key ferryd_cfg_keys[] = {
	{ "paths", "STATE_DIR", NULL,
	    "identity and peer book (default: $STATE_DIRECTORY, /var/lib/ferry for root, else ~/.local/state/ferry)" },
	{ "paths", "RUNTIME_DIR", NULL,
	    "client socket (default: $RUNTIME_DIRECTORY, /run/ferry for root, else $XDG_RUNTIME_DIR/ferry)" },
	{ "ferryd", "LOG_LEVEL", "notice",
	    "error, warning, notice, info or debug; -v and -q adjust it" },
	{ NULL, NULL, NULL, NULL },
};

struct ferryd {
	const char *config_path;  /* -c, or NULL */
	const char *overrides[FERRYD_MAX_OVERRIDES]; /* -o SECTION.KEY=VALUE */
	size_t n_overrides;
	int verbosity;		  /* -v minus -q */
	struct event_base *base;
	struct cfg *cfg;
	struct stats *stats;
	char state_dir[PATH_MAX];
	char runtime_dir[PATH_MAX];
	struct core *core;
	struct dhtnode *dht; /* NULL when [dht] ENABLE = no */
	struct xfer *xfer;   /* NULL without the DHT */
	struct service *service;
	struct imd *imd;     /* NULL when [intermediary] LISTEN is unset */
	struct event *sig_term, *sig_int, *sig_hup;
	bool stopping; /* a stop signal came: the next ends the loop */
	int exit_code;
};

static int ferryd_core_init(struct ferryd *d);
static int ferryd_core_start(struct ferryd *d);
static int ferryd_core_reload(struct ferryd *d, struct cfg *cfg);
static void ferryd_core_shutdown(struct ferryd *d);
static int ferryd_dht_init(struct ferryd *d);
static int ferryd_dht_start(struct ferryd *d);
static int ferryd_dht_reload(struct ferryd *d, struct cfg *cfg);
static void ferryd_dht_shutdown(struct ferryd *d);
static int ferryd_storage_init(struct ferryd *d);
static int ferryd_storage_reload(struct ferryd *d, struct cfg *cfg);
static void ferryd_storage_shutdown(struct ferryd *d);
static int ferryd_service_init(struct ferryd *d);
static int ferryd_service_reload(struct ferryd *d, struct cfg *cfg);
static void ferryd_service_shutdown(struct ferryd *d);
static int ferryd_imd_init(struct ferryd *d);
static int ferryd_imd_reload(struct ferryd *d, struct cfg *cfg);
static void ferryd_imd_shutdown(struct ferryd *d);

/*
 * Every subsystem, in the order they start; they stop in reverse. keys
 * is its configuration schema; check judges a configuration without
 * running anything (--check-config, and every reload before any
 * subsystem applies it); init builds the subsystem; start (may be NULL),
 * once every subsystem is built, lets traffic in, so that the core's
 * peers come only after the layers above are there to choose links
 * (core_links_claim); reload applies a checked configuration, which the
 * subsystem may keep pointers into from then on.
 */
static const struct subsystem {
	const char *name;
	const struct cfg_schema_key *keys;
	int (*check)(struct cfg *cfg);
	int (*init)(struct ferryd *d);
	int (*start)(struct ferryd *d);
	int (*reload)(struct ferryd *d, struct cfg *cfg);
	void (*shutdown)(struct ferryd *d);
} subsystems[] = {
	{ "core", core_cfg_keys, core_config_check, ferryd_core_init,
	    ferryd_core_start, ferryd_core_reload, ferryd_core_shutdown },
	{ "dht", dhtnode_cfg_keys, dhtnode_config_check, ferryd_dht_init,
	    ferryd_dht_start, ferryd_dht_reload, ferryd_dht_shutdown },
	{ "storage", xfer_cfg_keys, xfer_config_check, ferryd_storage_init,
	    NULL, ferryd_storage_reload, ferryd_storage_shutdown },
	{ "service", service_cfg_keys, service_config_check,
	    ferryd_service_init, NULL, ferryd_service_reload,
	    ferryd_service_shutdown },
	{ "intermediary", imd_cfg_keys, imd_config_check, ferryd_imd_init,
	    NULL, ferryd_imd_reload, ferryd_imd_shutdown },
};
#define N_SUBSYSTEMS (sizeof(subsystems) / sizeof(subsystems[0]))

static void
ferryd_usage(FILE *f)
{
	fprintf(f,
	    "Usage: ferryd [OPTION]...\n"
	    "Run the ferry peer-to-peer daemon in the foreground.\n\n"
	    "  -c, --config FILE        read FILE (default %s if it exists)\n"
	    "  -o, --set SECTION.KEY=VALUE\n"
	    "                           override one configuration value\n"
	    "      --check-config       check the configuration and exit\n"
	    "      --dump-schema        list every key with its default and exit\n"
	    "  -v, --verbose            log more (repeat for debug)\n"
	    "  -q, --quiet              log only warnings and errors\n"
	    "  -h, --help               show this help\n"
	    "  -V, --version            show the version\n\n"
	    "See ferryd(8) and ferryd.conf(5).\n",
	    FERRYD_DEFAULT_CONFIG);
}

static int
ferryd_parse_level(const char *s, int *ret)
{
	static const char *const names[] = { "emerg", "alert", "crit",
		"error", "warning", "notice", "info", "debug" };

	for (int i = FERRY_LOG_ERR; i <= FERRY_LOG_DEBUG; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

static int
ferryd_apply_override(struct cfg *cfg, const char *arg)
{
	char section[128], key[128];
	const char *dot = strchr(arg, '.'), *eq = strchr(arg, '=');

	if (dot == NULL || eq == NULL || dot > eq || dot == arg ||
	    eq == dot + 1 || (size_t)(dot - arg) >= sizeof(section) ||
	    (size_t)(eq - dot - 1) >= sizeof(key)) {
		log_err("-o %s: expected SECTION.KEY=VALUE", arg);
		return -EINVAL;
	}
	memcpy(section, arg, (size_t)(dot - arg));
	section[dot - arg] = '\0';
	memcpy(key, dot + 1, (size_t)(eq - dot - 1));
	key[eq - dot - 1] = '\0';
	return cfg_set(cfg, section, key, eq + 1);
}

static void
ferryd_warn_cb(void *cls, const char *msg)
{
	(void)cls;
	log_warn("%s", msg);
}

/* Builds a configuration from the file and -o overrides. */
static int
ferryd_load_cfg(struct ferryd *d, struct cfg **ret)
{
	struct cfg *cfg = cfg_new();
	const char *path = d->config_path;
	struct stat st;
	int level, r;

	if (cfg == NULL)
		return -ENOMEM;
	r = cfg_add_schema(cfg, ferryd_cfg_keys);
	for (size_t i = 0; i < N_SUBSYSTEMS && r == 0; i++)
		r = cfg_add_schema(cfg, subsystems[i].keys);
	/* The intermediary's receipt queue reads its own [intermediary]
	 * keys. */
	if (r == 0)
		r = cfg_add_schema(cfg, rqueue_cfg_keys);
	if (r < 0 || cfg_add_schema_prefix(cfg, "transport-") < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if (path == NULL && stat(FERRYD_DEFAULT_CONFIG, &st) == 0)
		path = FERRYD_DEFAULT_CONFIG;
	if (path != NULL) {
		r = cfg_load_file(cfg, path);
		if (r < 0) {
			log_err("%s", cfg_error(cfg));
			goto fail;
		}
	}
	for (size_t i = 0; i < d->n_overrides; i++) {
		r = ferryd_apply_override(cfg, d->overrides[i]);
		if (r < 0)
			goto fail;
	}
	if (ferryd_parse_level(cfg_get(cfg, "ferryd", "LOG_LEVEL"), &level) <
	    0) {
		r = cfg_fail(cfg, "ferryd", "LOG_LEVEL",
		    "expected error, warning, notice, info or debug");
		log_err("%s", cfg_error(cfg));
		goto fail;
	}
	level += d->verbosity;
	if (level < FERRY_LOG_ERR)
		level = FERRY_LOG_ERR;
	if (level > FERRY_LOG_DEBUG)
		level = FERRY_LOG_DEBUG;
	log_set_level(level);
	transport_set_log_level(level);
	*ret = cfg;
	return 0;
fail:
	cfg_free(cfg);
	return r;
}

/* A directory we keep keys or a socket in must be ours and writable by
 * nobody else: a /tmp fallback another user created first is refused. */
static int
ferryd_check_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return log_err_errno(-errno, "%s", path);
	if (!S_ISDIR(st.st_mode)) {
		log_err("%s is not a directory", path);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		log_err("%s belongs to uid %lu, not to this user (uid %lu)",
		    path, (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -EPERM;
	}
	if ((st.st_mode & 022) != 0) {
		log_err("%s is writable by group or others (mode %04o)", path,
		    (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int
ferryd_dirs(struct ferryd *d)
{
	const char *s = cfg_get(d->cfg, "paths", "STATE_DIR");
	const char *rt = cfg_get(d->cfg, "paths", "RUNTIME_DIR");
	int r;

	if (s != NULL && *s != '\0')
		r = snprintf(d->state_dir, sizeof(d->state_dir), "%s", s) >=
			(int)sizeof(d->state_dir)
		    ? -ENAMETOOLONG
		    : 0;
	else
		r = dirs_state(d->state_dir, sizeof(d->state_dir));
	if (r < 0)
		return log_err_errno(r, "cannot determine the state directory");
	if (rt != NULL && *rt != '\0')
		r = snprintf(d->runtime_dir, sizeof(d->runtime_dir), "%s",
			rt) >= (int)sizeof(d->runtime_dir)
		    ? -ENAMETOOLONG
		    : 0;
	else
		r = dirs_runtime(d->runtime_dir, sizeof(d->runtime_dir));
	if (r < 0)
		return log_err_errno(r,
		    "cannot determine the runtime directory");
	r = fs_mkdir_p(d->state_dir, 0700);
	if (r < 0)
		return log_err_errno(r, "cannot create %s", d->state_dir);
	r = fs_mkdir_p(d->runtime_dir, 0755);
	if (r < 0)
		return log_err_errno(r, "cannot create %s", d->runtime_dir);
	r = ferryd_check_dir(d->state_dir);
	if (r == 0)
		r = ferryd_check_dir(d->runtime_dir);
	return r;
}

static int
ferryd_core_init(struct ferryd *d)
{
	return core_new(d->base, d->cfg, d->stats, d->state_dir, &d->core);
}

static int
ferryd_core_start(struct ferryd *d)
{
	return core_start(d->core);
}

static int
ferryd_core_reload(struct ferryd *d, struct cfg *cfg)
{
	return core_reload(d->core, cfg);
}

static void
ferryd_core_shutdown(struct ferryd *d)
{
	core_free(d->core);
	d->core = NULL;
}

static int
ferryd_dht_init(struct ferryd *d)
{
	return dhtnode_new(d->base, d->cfg, d->stats, d->core, d->state_dir,
	    &d->dht);
}

static int
ferryd_dht_start(struct ferryd *d)
{
	return dhtnode_start(d->dht);
}

static int
ferryd_dht_reload(struct ferryd *d, struct cfg *cfg)
{
	return dhtnode_reload(d->dht, cfg);
}

static void
ferryd_dht_shutdown(struct ferryd *d)
{
	dhtnode_free(d->dht);
	d->dht = NULL;
}

static int
ferryd_storage_init(struct ferryd *d)
{
	return xfer_new(d->base, d->cfg, d->stats, dhtnode_dht(d->dht),
	    dhtnode_store(d->dht), d->state_dir, &d->xfer);
}

static int
ferryd_storage_reload(struct ferryd *d, struct cfg *cfg)
{
	return xfer_reload(d->xfer, cfg);
}

static void
ferryd_storage_shutdown(struct ferryd *d)
{
	xfer_free(d->xfer);
	d->xfer = NULL;
}

static void
ferryd_on_client_shutdown(void *cls)
{
	struct ferryd *d = cls;

	log_notice("shutdown requested by a client");
	(void)event_base_loopexit(d->base, NULL);
}

static int
ferryd_service_init(struct ferryd *d)
{
	return service_new(d->base, d->cfg, d->stats, d->core,
	    dhtnode_dht(d->dht), d->xfer, d->runtime_dir,
	    ferryd_on_client_shutdown, d,
	    &d->service);
}

static int
ferryd_service_reload(struct ferryd *d, struct cfg *cfg)
{
	return service_reload(d->service, cfg);
}

static void
ferryd_service_shutdown(struct ferryd *d)
{
	service_free(d->service);
	d->service = NULL;
}

static int
ferryd_imd_init(struct ferryd *d)
{
	return imd_new(d->base, d->cfg, d->stats, d->state_dir, d->core,
	    dhtnode_dht(d->dht), &d->imd);
}

static int
ferryd_imd_reload(struct ferryd *d, struct cfg *cfg)
{
	return imd_reload(d->imd, cfg);
}

static void
ferryd_imd_shutdown(struct ferryd *d)
{
	imd_free(d->imd);
	d->imd = NULL;
}

/* The intermediary has left (imd_leave): the loop ends. */
static void
ferryd_on_left(void *cls)
{
	struct ferryd *d = cls;

	(void)event_base_loopexit(d->base, NULL);
}

/*
 * The first stop signal lets an intermediary leave first, within its
 * LEAVE_TIMEOUT (the others told, its relays ended); everything else
 * stops at once, as before. A second signal does not wait.
 */
static void
ferryd_on_stop_signal(evutil_socket_t sig, short what, void *cls)
{
	struct ferryd *d = cls;

	(void)what;
	if (!d->stopping && d->imd != NULL &&
	    imd_leave(d->imd, ferryd_on_left, d) == 0) {
		d->stopping = true;
		log_notice("received %s, shutting down after the intermediary "
		           "left (a second signal: at once)",
		    strsignal((int)sig));
		return;
	}
	log_notice("received %s, shutting down", strsignal((int)sig));
	(void)event_base_loopexit(d->base, NULL);
}

/* Every subsystem's check of cfg; each logs its own problems. */
static int
ferryd_check_all(struct cfg *cfg)
{
	int r = 0;

	for (size_t i = 0; i < N_SUBSYSTEMS; i++)
		if (subsystems[i].check(cfg) < 0)
			r = -EINVAL;
	return r;
}

static void
ferryd_on_hup(evutil_socket_t sig, short what, void *cls)
{
	struct ferryd *d = cls;
	struct cfg *cfg;

	(void)sig;
	(void)what;
	(void)sdnotify("RELOADING=1");
	log_notice("SIGHUP: reloading the configuration");
	if (ferryd_load_cfg(d, &cfg) < 0 || ferryd_check_all(cfg) < 0) {
		log_err("reload failed; keeping the running configuration");
		cfg_free(cfg);
		goto out;
	}
	(void)cfg_warnings(cfg, ferryd_warn_cb, NULL);
	/* Checked, so only running out of memory can fail here; a subsystem
	 * that fails keeps its old settings, but others may already hold
	 * pointers into cfg, which therefore replaces the old one. */
	for (size_t i = 0; i < N_SUBSYSTEMS; i++)
		if (subsystems[i].reload(d, cfg) < 0)
			log_err("%s could not apply the new configuration and "
				"keeps its old settings",
			    subsystems[i].name);
	cfg_free(d->cfg);
	d->cfg = cfg;
out:
	(void)sdnotify("READY=1");
}

static int
ferryd_signals(struct ferryd *d)
{
	(void)signal(SIGPIPE, SIG_IGN);
	d->sig_term = evsignal_new(d->base, SIGTERM, ferryd_on_stop_signal, d);
	d->sig_int = evsignal_new(d->base, SIGINT, ferryd_on_stop_signal, d);
	d->sig_hup = evsignal_new(d->base, SIGHUP, ferryd_on_hup, d);
	if (d->sig_term == NULL || d->sig_int == NULL || d->sig_hup == NULL ||
	    evsignal_add(d->sig_term, NULL) < 0 ||
	    evsignal_add(d->sig_int, NULL) < 0 ||
	    evsignal_add(d->sig_hup, NULL) < 0)
		return log_err_errno(-ENOMEM, "cannot install signal handlers");
	return 0;
}

static int
ferryd_check_config(struct ferryd *d)
{
	size_t warnings;
	int r = ferryd_check_all(d->cfg);

	warnings = cfg_warnings(d->cfg, ferryd_warn_cb, NULL);
	if (r == 0)
		fprintf(stdout, "configuration OK%s\n",
		    warnings ? " (with warnings)" : "");
	return r;
}

enum ferryd_mode { FERRYD_RUN, FERRYD_CHECK, FERRYD_SCHEMA };

static int
ferryd_parse_args(struct ferryd *d, int argc, char **argv,
    enum ferryd_mode *mode)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "set", required_argument, NULL, 'o' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "dump-schema", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:o:vqhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d->config_path = optarg;
			break;
		case 'o':
			if (d->n_overrides == FERRYD_MAX_OVERRIDES) {
				fprintf(stderr, "ferryd: too many -o\n");
				return 2;
			}
			d->overrides[d->n_overrides++] = optarg;
			break;
		case 'C':
			*mode = FERRYD_CHECK;
			break;
		case 'S':
			*mode = FERRYD_SCHEMA;
			break;
		case 'v':
			d->verbosity++;
			break;
		case 'q':
			d->verbosity--;
			break;
		case 'h':
			ferryd_usage(stdout);
			return 0;
		case 'V':
			printf("ferryd %s\n", FERRY_VERSION);
			return 0;
		default:
			ferryd_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "ferryd: unexpected argument '%s'\n",
		    argv[optind]);
		return 2;
	}
	return -1;
}

/* Timers to the microsecond (timerfd): ACK delays, probe timeouts and the
 * link emulator work in µs, and epoll's millisecond timeouts would round
 * each up by as much as a whole millisecond. */
static struct event_base *
ferryd_event_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;

	if (ec == NULL)
		return NULL;
	(void)event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

static void
ferryd_free(struct ferryd *d)
{
	if (d->sig_term != NULL)
		event_free(d->sig_term);
	if (d->sig_int != NULL)
		event_free(d->sig_int);
	if (d->sig_hup != NULL)
		event_free(d->sig_hup);
	if (d->base != NULL)
		event_base_free(d->base);
	cfg_free(d->cfg);
	stats_free(d->stats);
}

int
ferryd_main(int argc, char **argv)
{
	enum ferryd_mode mode = FERRYD_RUN;
	struct ferryd d;
	size_t started = 0;
	int r;

	memset(&d, 0, sizeof(d));
	log_init("ferryd", FERRY_LOG_NOTICE);
	r = ferryd_parse_args(&d, argc, argv, &mode);
	if (r >= 0)
		return r;
	if (sodium_init() < 0)
		fatal("libsodium failed to initialise");
	if (ferryd_load_cfg(&d, &d.cfg) < 0)
		return 1;
	if (mode != FERRYD_RUN) {
		r = mode == FERRYD_CHECK ? ferryd_check_config(&d)
					 : schema_dump(d.cfg, stdout);
		cfg_free(d.cfg);
		return r < 0 ? 1 : 0;
	}
	d.stats = stats_new();
	d.base = ferryd_event_base();
	if (d.stats == NULL || d.base == NULL)
		fatal("cannot set up the event loop");
	d.exit_code = 1;
	if (ferryd_dirs(&d) < 0 || ferryd_signals(&d) < 0)
		goto out;
	for (; started < N_SUBSYSTEMS; started++) {
		if (subsystems[started].init(&d) < 0) {
			log_err("cannot start %s", subsystems[started].name);
			goto out;
		}
	}
	for (size_t i = 0; i < N_SUBSYSTEMS; i++) {
		if (subsystems[i].start == NULL)
			continue;
		if (subsystems[i].start(&d) < 0) {
			log_err("cannot start %s", subsystems[i].name);
			goto out;
		}
	}
	/* Only now do the loaded transports' sections have a schema. */
	(void)cfg_warnings(d.cfg, ferryd_warn_cb, NULL);
	log_notice("ferryd %s running as %s", FERRY_VERSION,
	    core_identity_string(d.core));
	(void)sdnotifyf("READY=1\nSTATUS=running as %s",
	    core_identity_string(d.core));
	if (event_base_dispatch(d.base) < 0)
		log_err("event loop failed");
	else
		d.exit_code = 0;
	(void)sdnotify("STOPPING=1");
out:
	while (started > 0) {
		started--;
		subsystems[started].shutdown(&d);
	}
	ferryd_free(&d);
	return d.exit_code;
}
