/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * bench_remote's network (see remote_bench.h): the DHT with its
 * intermediary, the delayed full peer, the files and the timed ferry
 * commands.
 */
#include "remote_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "dht_bench.h"

/* As test_remote's and test_dht's: refreshes every 2 s while the tables
 * fill, no bound per network (all of 127.0.0.0/24), and one signer's
 * blocks never over a quota in a long run. */
#define RB_DHT_CFG                                                             \
	"[dht]\nREFRESH_INTERVAL = 2 s\nPER_NETWORK = 0\nORIGIN_QUOTA = 0\n"   \
	"QUOTA = 16 GiB\n"
/* Once the tables are full: quiet between the puts. */
#define RB_DHT_QUIET "[dht]\nREFRESH_INTERVAL = 86400 s\n"
#define RB_TABLE_MS  60000

static int
rb_sh(const char *cmd)
{
	char *argv[] = { "/bin/sh", "-c", (char *)cmd, NULL };
	struct harness_output o;
	int r = harness_run(argv, NULL, 60000, &o);

	if (r == 0 && o.status != 0) {
		fprintf(stderr, "bench_remote: %s: %s%s\n", cmd, o.out, o.err);
		r = -EIO;
	}
	if (r == 0)
		harness_output_free(&o);
	return r;
}

/* A P-256 certificate for the intermediary's address and for 127.0.0.1,
 * where the relays listen. */
static int
rb_cert(struct rb_env *e)
{
	char cmd[2048];
	const char *dir = harness_dir(e->h), *ip = e->d[0]->ip;

	(void)snprintf(e->cert, sizeof(e->cert), "%s/cert.pem", dir);
	(void)snprintf(cmd, sizeof(cmd),
	    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
	    "-nodes -days 2 -subj /CN=%s "
	    "-addext subjectAltName=IP:%s,IP:127.0.0.1 "
	    "-keyout %s/key.pem -out %s 2>&1",
	    ip, ip, dir, e->cert);
	return rb_sh(cmd);
}

static int
rb_wait_table(const struct harness_daemon *d, unsigned want)
{
	uint64_t end = harness_now_ms() + RB_TABLE_MS;

	while (dbnet_table_size(d) < want) {
		if (harness_now_ms() > end) {
			fprintf(stderr,
			    "bench_remote: d%u's table holds %u of %u peers\n",
			    d->index, dbnet_table_size(d), want);
			return -ETIMEDOUT;
		}
		harness_sleep_ms(100);
	}
	return 0;
}

static int
rb_spawn(struct rb_env *e, const char *extra)
{
	struct ferry_client *c;
	uint16_t port;
	int r = 0;

	for (unsigned i = 0; r == 0 && i < e->n; i++) {
		struct harness_daemon *d;

		r = harness_daemon_new(e->h, &e->d[i]);
		if (r < 0)
			break;
		d = e->d[i];
		r = harness_daemon_transports(d, "udp");
		if (r == 0)
			r = harness_daemon_config(d, "%s", RB_DHT_CFG);
		if (r == 0 && extra != NULL)
			r = harness_daemon_config(d, "%s\n", extra);
		if (r == 0 && i == 0) {
			r = harness_free_port_at(d->ip, &port);
			if (r == 0)
				r = harness_sin(d->ip, port, &e->imd_addr);
			if (r == 0)
				r = rb_cert(e);
			if (r == 0)
				r = harness_daemon_config(d,
				    "[intermediary]\nLISTEN = %s:%u\n"
				    "CERTIFICATE = %s\n"
				    "PRIVATE_KEY = %s/key.pem\n"
				    "CLIENT_QUOTA = 16 GiB\n",
				    d->ip, port, e->cert, harness_dir(e->h));
		}
		if (r == 0 && i > 0)
			r = harness_daemon_config(d, "[core]\nBOOTSTRAP = %s\n",
			    e->hello);
		if (r == 0)
			r = harness_daemon_start_ready(d);
		if (r == 0 && i == 0 &&
		    (r = harness_daemon_client(d, &c)) == 0) {
			r = ferry_hello(c, &e->hello);
			ferry_client_close(c);
		}
	}
	return r;
}

int
rb_env_start(struct rb_env *e, unsigned n, const char *extra)
{
	int r;

	memset(e, 0, sizeof(*e));
	if (n < 2 || n > RB_DHT_MAX)
		return -EINVAL;
	e->n = n;
	e->extra = extra;
	r = harness_new("bench-remote", &e->h);
	if (r < 0)
		return r;
	r = rb_spawn(e, extra);
	for (unsigned i = 0; r == 0 && i < n; i++)
		r = rb_wait_table(e->d[i], n - 1);
	for (unsigned i = 0; r == 0 && i < n; i++) {
		r = harness_daemon_config(e->d[i], "%s", RB_DHT_QUIET);
		if (r == 0)
			r = harness_daemon_reload(e->d[i]);
	}
	if (r < 0) {
		fprintf(stderr, "bench_remote: the network did not form: %s\n",
		    strerror(-r));
		harness_dump_logs(e->h);
		rb_env_free(e);
	}
	return r;
}

void
rb_env_free(struct rb_env *e)
{
	harness_free(e->h);
	free(e->hello);
	memset(e, 0, sizeof(*e));
}

int
rb_peer_start(struct rb_env *e, unsigned rtt_ms, struct harness_daemon **ret)
{
	struct harness_daemon *d = *ret;
	int r = 0;

	if (d == NULL) {
		r = harness_daemon_new(e->h, &d);
		if (r == 0)
			r = harness_daemon_transports(d, "udp");
		if (r < 0)
			return r;
		*ret = d;
	}
	r = harness_daemon_config_clear(d);
	/* Quiet from the start: a reload would make its link emulation
	 * anew, dropping what it holds. */
	if (r == 0)
		r = harness_daemon_config(d, "%s%s[core]\nBOOTSTRAP = %s\n",
		    RB_DHT_CFG, RB_DHT_QUIET, e->hello);
	/* The emulation delays what this daemon sends, not what it gets:
	 * the whole round trip on its side. */
	if (r == 0 && rtt_ms > 0)
		r = harness_daemon_config(d,
		    "[testing]\nENABLE = yes\nDELAY = %u ms\n", rtt_ms);
	if (r == 0 && e->extra != NULL)
		r = harness_daemon_config(d, "%s\n", e->extra);
	if (r == 0)
		r = harness_daemon_restart(d);
	if (r == 0)
		r = rb_wait_table(d, e->n);
	if (r == 0)
		rb_peer_wait_idle(d, rtt_ms);
	if (r < 0)
		harness_dump_logs(e->h);
	return r;
}

static uint64_t
rb_units(const struct harness_daemon *d)
{
	struct bench_counters c;
	uint64_t n;

	if (bench_counters_get(d, &c) < 0)
		return UINT64_MAX;
	n = bench_counter(&c, "udp.units_out");
	bench_counters_free(&c);
	return n;
}

void
rb_peer_wait_idle(const struct harness_daemon *d, unsigned rtt_ms)
{
	uint64_t end = harness_now_ms() + 20000;
	uint64_t before = rb_units(d), now;

	for (;;) {
		harness_sleep_ms(2 * rtt_ms + 300);
		now = rb_units(d);
		if (now == before || harness_now_ms() > end)
			return;
		before = now;
	}
}

char *
rb_file(struct rb_env *e)
{
	uint8_t *data = malloc(RB_FILE);
	char *path = NULL;
	int fd = -1;

	if (data == NULL ||
	    asprintf(&path, "%s/f%u.bin", harness_dir(e->h), e->files++) < 0) {
		free(data);
		return NULL;
	}
	randombytes_buf(data, RB_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, RB_FILE) != (ssize_t)RB_FILE) {
		free(path);
		path = NULL;
	}
	if (fd >= 0)
		(void)close(fd);
	free(data);
	return path;
}

int
rb_cli(const char *const *args, char *out, size_t size, double *ret_s)
{
	const char *argv[24] = { harness_cli_path() };
	uint64_t t0, t_line = 0;
	int pipefd[2], status;
	size_t n = 1, got = 0;
	ssize_t k;
	pid_t pid;

	while (*args != NULL && n < 23)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	t0 = bench_now_ns();
	pid = fork();
	if (pid == 0) {
		(void)dup2(pipefd[1], 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	(void)close(pipefd[1]);
	while (got + 1 < size &&
	    (k = read(pipefd[0], out + got, size - 1 - got)) > 0) {
		got += (size_t)k;
		out[got] = '\0';
		if (t_line == 0 && strchr(out, '\n') != NULL)
			t_line = bench_now_ns();
	}
	out[got] = '\0';
	(void)close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -ECHILD;
	*ret_s = (double)((t_line ? t_line : bench_now_ns()) - t0) / 1e9;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
