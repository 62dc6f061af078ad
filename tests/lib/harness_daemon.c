/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * One ferryd under test (see harness.h): its directory and configuration,
 * spawning it with its output in a log file, waiting for its socket to
 * answer, stopping, killing and restarting it.
 */
#include "harness_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* d<N>'s address must stay a unicast one of 127.0.0.0/24. */
_Static_assert(HARNESS_ADDR_BASE + HARNESS_MAX_DAEMONS <= 255,
    "harness daemons run out of 127.0.0.N addresses");

static int
harness_path(char *buf, size_t size, const char *a, const char *b)
{
	return snprintf(buf, size, "%s/%s", a, b) >= (int)size ? -ENAMETOOLONG
	                                                       : 0;
}

int
harness_daemon_new(struct harness *h, struct harness_daemon **ret)
{
	struct harness_daemon *d;
	char name[16];
	int r;

	if (h->n_daemons == HARNESS_MAX_DAEMONS)
		return -ENOSPC;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	d->h = h;
	d->index = (unsigned)h->n_daemons;
	d->use_config = true;
	if (getenv("FERRY_PLUGIN_DIR") != NULL)
		(void)harness_daemon_plugin_dir(d, getenv("FERRY_PLUGIN_DIR"));
	/* FERRY_TEST_FRESH_BOOT=1 runs every daemon with the clocks of a
	 * machine that has just booted (harness_daemon_fresh_boot()). */
	if (getenv("FERRY_TEST_FRESH_BOOT") != NULL &&
	    strcmp(getenv("FERRY_TEST_FRESH_BOOT"), "1") == 0 &&
	    harness_daemon_fresh_boot(d) < 0) {
		free(d);
		return -EPERM;
	}
	(void)snprintf(name, sizeof(name), "d%u", d->index);
	r = harness_path(d->dir, sizeof(d->dir), h->dir, name);
	if (r == 0)
		r = harness_path(d->state_dir, sizeof(d->state_dir), d->dir,
		    "state");
	if (r == 0)
		r = harness_path(d->runtime_dir, sizeof(d->runtime_dir), d->dir,
		    "run");
	if (r == 0)
		r = harness_path(d->socket, sizeof(d->socket), d->runtime_dir,
		    "ferryd.sock");
	if (r == 0)
		r = harness_path(d->config, sizeof(d->config), d->dir,
		    "ferryd.conf");
	if (r == 0)
		r = harness_path(d->log, sizeof(d->log), d->dir, "ferryd.log");
	if (r == 0 && mkdir(d->dir, 0700) < 0)
		r = -errno;
	/* Its own address (harness.h, "The test network"). */
	(void)snprintf(d->ip, sizeof(d->ip), "127.0.0.%u",
	    HARNESS_ADDR_BASE + d->index);
	if (r == 0)
		r = harness_free_port_at(d->ip, &d->port);
	if (r == 0)
		r = harness_sin(d->ip, d->port, &d->addr);
	if (r < 0) {
		free(d);
		return r;
	}
	h->daemons[h->n_daemons++] = d;
	*ret = d;
	return 0;
}

void
harness_daemon_free(struct harness_daemon *d)
{
	if (d == NULL)
		return;
	if (d->pid > 0 &&
	    harness_daemon_stop(d, HARNESS_STOP_TIMEOUT_MS, NULL) < 0)
		(void)harness_daemon_kill(d);
	for (size_t i = 0; i < d->n_env; i++)
		free(d->env[i]);
	free(d->env);
	for (size_t i = 0; i < d->n_args; i++)
		free(d->args[i]);
	free(d->args);
	for (size_t i = 0; i < d->n_wrap; i++)
		free(d->wrap[i]);
	free(d->wrap);
	free(d->program);
	free(d->extra);
	free(d);
}

int
harness_daemon_config(struct harness_daemon *d, const char *fmt, ...)
{
	size_t old = d->extra != NULL ? strlen(d->extra) : 0;
	char *text, *p;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	p = realloc(d->extra, old + (size_t)n + 1);
	if (p == NULL) {
		free(text);
		return -ENOMEM;
	}
	memcpy(p + old, text, (size_t)n + 1);
	free(text);
	d->extra = p;
	return 0;
}

int
harness_daemon_config_clear(struct harness_daemon *d)
{
	char names[sizeof(d->transports)];

	free(d->extra);
	d->extra = NULL;
	/* The transports' bindings live in the same text: put them back. */
	memcpy(names, d->transports, sizeof(names));
	return harness_daemon_transports(d, names);
}

int
harness_daemon_transports(struct harness_daemon *d, const char *names)
{
	static const char *const ip[] = { "udp", "tcp" };
	int r = 0;

	if (strlen(names) >= sizeof(d->transports))
		return -ENAMETOOLONG;
	memcpy(d->transports, names, strlen(names) + 1);
	for (size_t i = 0; r == 0 && i < 2; i++)
		if (strstr(names, ip[i]) != NULL)
			r = harness_daemon_config(d,
			    "[transport-%s]\nBIND_ADDRESS = %s\n"
			    "PORT = %u\nBLACKLIST =\n",
			    ip[i], d->ip, d->port);
	return r;
}

int
harness_daemon_plugin_dir(struct harness_daemon *d, const char *dir)
{
	if (strlen(dir) >= sizeof(d->plugin_dir))
		return -ENAMETOOLONG;
	memcpy(d->plugin_dir, dir, strlen(dir) + 1);
	return 0;
}

static int
harness_push(char ***list, size_t *n, char *s)
{
	char **p;

	if (s == NULL)
		return -ENOMEM;
	p = realloc(*list, (*n + 1) * sizeof(*p));
	if (p == NULL) {
		free(s);
		return -ENOMEM;
	}
	p[(*n)++] = s;
	*list = p;
	return 0;
}

int
harness_daemon_setenv(struct harness_daemon *d, const char *name,
    const char *value)
{
	char *s;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	return harness_push(&d->env, &d->n_env, s);
}

int
harness_daemon_arg(struct harness_daemon *d, const char *arg)
{
	return harness_push(&d->args, &d->n_args, strdup(arg));
}

int
harness_daemon_wrap(struct harness_daemon *d, const char *word)
{
	return harness_push(&d->wrap, &d->n_wrap, strdup(word));
}

int
harness_daemon_program(struct harness_daemon *d, const char *path)
{
	char *p = strdup(path);

	if (p == NULL)
		return -ENOMEM;
	free(d->program);
	d->program = p;
	return 0;
}

int
harness_daemon_no_config(struct harness_daemon *d, const char *socket)
{
	if (strlen(socket) >= sizeof(d->socket))
		return -ENAMETOOLONG;
	memcpy(d->socket, socket, strlen(socket) + 1);
	d->use_config = false;
	return 0;
}

static int
harness_daemon_write_config(const struct harness_daemon *d)
{
	FILE *f = fopen(d->config, "w");
	int r = 0;

	if (f == NULL)
		return -errno;
	fprintf(f,
	    "# Written by the ferry test harness (tests/lib).\n"
	    "[paths]\nSTATE_DIR = %s\nRUNTIME_DIR = %s\n"
	    "[service]\nSOCKET = %s\n"
	    "[core]\nTRANSPORTS = %s\n",
	    d->state_dir, d->runtime_dir, d->socket, d->transports);
	if (d->plugin_dir[0] != '\0')
		fprintf(f, "PLUGIN_DIR = %s\n", d->plugin_dir);
	if (d->extra != NULL)
		fputs(d->extra, f);
	if (ferror(f))
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

/* In the child: output to the log, a clean environment, exec. */
static _Noreturn void
harness_daemon_exec(const struct harness_daemon *d, char **argv)
{
	int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int r;

	/* Daemons must not outlive a crashed test. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 ||
	    dup2(fd, STDERR_FILENO) < 0)
		_exit(126);
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0)
		(void)dup2(fd, STDIN_FILENO);
	/* What systemd or a developer's shell may have set would send the
	 * daemon elsewhere. */
	(void)unsetenv("NOTIFY_SOCKET");
	(void)unsetenv("STATE_DIRECTORY");
	(void)unsetenv("RUNTIME_DIRECTORY");
	(void)unsetenv("JOURNAL_STREAM");
	(void)unsetenv("FERRY_SOCKET");
	for (size_t i = 0; i < d->n_env; i++)
		(void)putenv(d->env[i]);
	r = d->fresh_boot ? harness_boot_enter() : 0;
	if (r < 0) {
		fprintf(stderr, "harness: cannot make a time namespace: %s\n",
		    strerror(-r));
		_exit(127);
	}
	execv(argv[0], argv);
	fprintf(stderr, "harness: cannot run %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

int
harness_daemon_start(struct harness_daemon *d)
{
	char *argv[10 + 64 + 64];
	size_t n = 0;
	pid_t pid;
	int r;

	if (d->pid > 0)
		return -EALREADY;
	if (d->n_args > 64 || d->n_wrap > 64)
		return -E2BIG;
	if (d->use_config) {
		r = harness_daemon_write_config(d);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < d->n_wrap; i++)
		argv[n++] = d->wrap[i];
	argv[n++] =
	    d->program != NULL ? d->program : (char *)harness_ferryd_path();
	if (d->use_config) {
		argv[n++] = (char *)"-c";
		argv[n++] = d->config;
	}
	for (size_t i = 0; i < d->n_args; i++)
		argv[n++] = d->args[i];
	/* FERRY_TEST_VERBOSE=1 (or 2) logs info (or debug) lines of every
	 * daemon, for looking into a failing test. */
	if (getenv("FERRY_TEST_VERBOSE") != NULL) {
		argv[n++] = (char *)"-v";
		if (strcmp(getenv("FERRY_TEST_VERBOSE"), "2") == 0)
			argv[n++] = (char *)"-v";
	}
	argv[n] = NULL;
	(void)fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		harness_daemon_exec(d, argv);
	d->pid = pid;
	d->exit_status = -1;
	return 0;
}

bool
harness_daemon_running(struct harness_daemon *d)
{
	if (d->pid <= 0)
		return false;
	if (harness_reap(d->pid, &d->exit_status)) {
		d->pid = 0;
		return false;
	}
	return true;
}

int
harness_daemon_wait_ready(struct harness_daemon *d, int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	struct ferry_client *c;
	struct ferry_status *st;

	do {
		if (!harness_daemon_running(d))
			return -ECHILD;
		if (harness_daemon_client(d, &c) == 0) {
			ferry_client_set_timeout(c, 1000);
			if (ferry_status(c, &st) == 0) {
				d->id = st->id;
				ferry_peer_id_to_string(&d->id, d->id_str);
				ferry_status_free(st);
				ferry_client_close(c);
				return 0;
			}
			ferry_client_close(c);
		}
		harness_sleep_ms(20);
	} while (harness_now_ms() < end);
	return -ETIMEDOUT;
}

int
harness_daemon_start_ready(struct harness_daemon *d)
{
	int r = harness_daemon_start(d);

	if (r < 0)
		return r;
	return harness_daemon_wait_ready(d, HARNESS_READY_TIMEOUT_MS);
}

int
harness_daemon_wait_exit(struct harness_daemon *d, int timeout_ms,
    int *ret_status)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;

	while (harness_daemon_running(d)) {
		if (harness_now_ms() >= end)
			return -ETIMEDOUT;
		harness_sleep_ms(10);
	}
	if (ret_status != NULL)
		*ret_status = d->exit_status;
	return 0;
}

int
harness_daemon_stop(struct harness_daemon *d, int timeout_ms, int *ret_status)
{
	int r;

	if (harness_daemon_running(d) && kill(d->pid, SIGTERM) < 0)
		return -errno;
	r = harness_daemon_wait_exit(d, timeout_ms, ret_status);
	if (r == -ETIMEDOUT) {
		(void)harness_daemon_kill(d);
		if (ret_status != NULL)
			*ret_status = d->exit_status;
	}
	return r;
}

int
harness_daemon_kill(struct harness_daemon *d)
{
	if (!harness_daemon_running(d))
		return 0;
	if (kill(d->pid, SIGKILL) < 0)
		return -errno;
	return harness_daemon_wait_exit(d, HARNESS_STOP_TIMEOUT_MS, NULL);
}

/* How often the log says needle. */
static size_t
harness_daemon_log_count(const struct harness_daemon *d, const char *needle)
{
	char *log = harness_daemon_log(d), *p;
	size_t n = 0;

	for (p = log; p != NULL && (p = strstr(p, needle)) != NULL; p++)
		n++;
	free(log);
	return n;
}

int
harness_daemon_reload(struct harness_daemon *d)
{
	static const char line[] = "reloading the configuration";
	size_t before = harness_daemon_log_count(d, line);
	uint64_t end = harness_now_ms() + HARNESS_READY_TIMEOUT_MS;
	int r;

	if (!harness_daemon_running(d))
		return -ESRCH;
	if (d->use_config) {
		r = harness_daemon_write_config(d);
		if (r < 0)
			return r;
	}
	if (kill(d->pid, SIGHUP) < 0)
		return -errno;
	while (harness_daemon_log_count(d, line) == before) {
		if (harness_now_ms() >= end)
			return -ETIMEDOUT;
		harness_sleep_ms(10);
	}
	/* The reload runs in one event-loop callback: an answer after the
	 * log line means it is complete. */
	return harness_daemon_wait_ready(d, HARNESS_READY_TIMEOUT_MS);
}

int
harness_daemon_restart(struct harness_daemon *d)
{
	int r = 0;

	if (harness_daemon_running(d))
		r = harness_daemon_stop(d, HARNESS_STOP_TIMEOUT_MS, NULL);
	if (r < 0 && r != -ETIMEDOUT)
		return r;
	return harness_daemon_start_ready(d);
}

int
harness_daemon_client(const struct harness_daemon *d, struct ferry_client **ret)
{
	return ferry_client_open(d->socket, ret);
}

char *
harness_daemon_log(const struct harness_daemon *d)
{
	FILE *f = fopen(d->log, "r");
	char *text = NULL;
	size_t len = 0;
	long size;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		text = malloc((size_t)size + 1);
		if (text != NULL) {
			len = fread(text, 1, (size_t)size, f);
			text[len] = '\0';
		}
	}
	(void)fclose(f);
	return text;
}

bool
harness_daemon_log_has(const struct harness_daemon *d, const char *needle)
{
	char *log = harness_daemon_log(d);
	bool has = log != NULL && strstr(log, needle) != NULL;

	free(log);
	return has;
}

int
harness_daemon_wait_log(const struct harness_daemon *d, const char *needle,
    int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;

	while (!harness_daemon_log_has(d, needle)) {
		if (harness_now_ms() >= end)
			return -ETIMEDOUT;
		harness_sleep_ms(20);
	}
	return 0;
}
