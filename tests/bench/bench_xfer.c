/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Issue 13, benchmark 2 (tests/bench/README; seed 003's view of large
 * files): `ferry put` of a file of random bytes on one daemon and `ferry
 * get` of it on another, on 4 and on 16 real daemons, with one block in
 * flight ([storage] MAX_IN_FLIGHT = 1) and with the adaptive window; MB/s
 * of each, and the peak resident memory of the two ferry commands and of
 * the daemons, and the CPU time all processes spent per GiB (a figure
 * that holds on a loaded machine, where the rates do not). Medians of -r
 * runs, each with a file of its own, on a network started afresh for
 * each setting. A program, not a test.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sodium.h>

#include "bench.h"
#include "dht_bench.h"
#include "harness.h"
#include "procstat.h"

#define XB_MAX_SET 8
#define XB_BUF     (4u << 20)

static const char xb_usage[] =
    " [-N DAEMONS] [-s MIB] [-m MODES]\n"
    "  -N DAEMONS  network sizes (default 4,16)\n"
    "  -s MIB      file size in MiB (default 1024; -q 64)\n"
    "  -m MODES    1 (one block in flight) or 0 (the adaptive window under\n"
    "              the default cap), or another cap (default 1,0)";

struct xb_opts {
	struct bench_opts o;
	unsigned nets[XB_MAX_SET], n_nets;
	unsigned modes[XB_MAX_SET], n_modes;
	uint64_t size;
	char transport[16]; /* -t: one of them */
};

/* One run's figures. */
struct xb_run {
	double put_mbs, get_mbs;
	double put_cli_kib, get_cli_kib, daemon_kib;
	double put_cpu, get_cpu; /* CPU seconds of every process per GiB */
	/* of the putting daemon and its ferry command alone, and of the
	 * getting ones: what the ends would spend with the storing peers on
	 * other machines (each end stores its share of the blocks too) */
	double put_end_cpu, get_end_cpu;
};

static int
xb_list(const char *arg, unsigned *v, unsigned *n, unsigned max)
{
	char *end;

	*n = 0;
	for (const char *p = arg; *p != '\0';) {
		unsigned long x = strtoul(p, &end, 10);

		if (end == p || *n == max || (*end != ',' && *end != '\0'))
			return -1;
		v[(*n)++] = (unsigned)x;
		p = *end == ',' ? end + 1 : end;
	}
	return *n > 0 ? 0 : -1;
}

static int
xb_opt(int opt, const char *arg, void *cls)
{
	struct xb_opts *xo = cls;

	switch (opt) {
	case 'N':
		return xb_list(arg, xo->nets, &xo->n_nets, XB_MAX_SET);
	case 'm':
		return xb_list(arg, xo->modes, &xo->n_modes, XB_MAX_SET);
	case 's':
		xo->size = strtoull(arg, NULL, 10) << 20;
		return xo->size > 0 ? 0 : -1;
	default:
		return -1;
	}
}

/* A file of size random bytes (a ChaCha20 stream: fast); its path. */
static char *
xb_file(struct harness *h, uint64_t size, unsigned run)
{
	uint8_t key[crypto_stream_chacha20_KEYBYTES];
	uint8_t nonce[crypto_stream_chacha20_NONCEBYTES] = { 0 };
	uint8_t *buf = malloc(XB_BUF);
	char *path = NULL;
	int fd = -1;

	randombytes_buf(key, sizeof(key));
	if (buf == NULL || asprintf(&path, "%s/f%u", harness_dir(h), run) < 0)
		goto fail;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		goto fail;
	for (uint64_t off = 0; off < size; off += XB_BUF) {
		size_t n = size - off < XB_BUF ? (size_t)(size - off) : XB_BUF;

		nonce[0] = (uint8_t)(off / XB_BUF);
		nonce[1] = (uint8_t)(off / XB_BUF >> 8);
		crypto_stream_chacha20(buf, n, nonce, key);
		if (write(fd, buf, n) != (ssize_t)n)
			goto fail;
	}
	(void)close(fd);
	free(buf);
	return path;
fail:
	if (fd >= 0)
		(void)close(fd);
	free(buf);
	free(path);
	return NULL;
}

/* The CPU seconds the n daemons have used so far. */
static double
xb_daemons_cpu(struct harness_daemon **d, unsigned n)
{
	double sum = 0;

	for (unsigned i = 0; i < n; i++) {
		double s = procstat_cpu_s(d[i]->pid);

		sum += s > 0 ? s : 0;
	}
	return sum;
}

/* Runs ferry with argv on d; its output (the last line) into out, its
 * peak RSS in KiB, its CPU seconds. Exit status. */
static int
xb_cli(struct harness_daemon *d, const char *const *args, char *out,
    size_t size, double *ret_kib, double *ret_s, double *ret_cpu)
{
	const char *argv[12] = { harness_cli_path(), "--socket", d->socket };
	uint64_t t0 = bench_now_ns();
	struct rusage ru;
	int pipefd[2], status;
	size_t n = 3, got = 0;
	ssize_t k;
	pid_t pid;

	while (*args != NULL && n < 11)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe(pipefd) < 0)
		return -errno;
	pid = fork();
	if (pid == 0) {
		(void)dup2(pipefd[1], 1);
		(void)close(pipefd[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	(void)close(pipefd[1]);
	while (got + 1 < size &&
	    (k = read(pipefd[0], out + got, size - 1 - got)) > 0)
		got += (size_t)k;
	out[got] = '\0';
	(void)close(pipefd[0]);
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -ECHILD;
	*ret_s = (double)(bench_now_ns() - t0) / 1e9;
	*ret_kib = (double)ru.ru_maxrss;
	*ret_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Starts n daemons with MAX_IN_FLIGHT mode (0: the default), with full
 * tables (dht_net.c, as bench_dht's). 0 or a negative errno. */
static int
xb_net(const struct xb_opts *xo, struct dbnet *net, unsigned n, unsigned mode)
{
	char cfg[1024], flight[64] = "";

	if (mode > 0)
		(void)snprintf(flight, sizeof(flight),
		    "[storage]\nMAX_IN_FLIGHT = %u\n", mode);
	/* One signer's blocks pass ORIGIN_QUOTA, and each daemon holds
	 * 3/n of every file of a setting. */
	(void)snprintf(cfg, sizeof(cfg),
	    "[dht]\nQUOTA = 64 GiB\nORIGIN_QUOTA = 0\n%s%s", flight,
	    xo->o.extra_cfg != NULL ? xo->o.extra_cfg : "");
	return dbnet_start(net, "bench-xfer", n, xo->transport, 0, cfg, 60000);
}

static int
xb_one(const struct xb_opts *xo, struct harness *h, struct harness_daemon **d,
    unsigned n, unsigned run, struct xb_run *ret)
{
	char out[4096], uri[512], *file = xb_file(h, xo->size, run), *got;
	double secs, kib, cli_cpu, cpu0, end0;
	double gib = (double)xo->size / (1u << 30);
	int r;

	if (file == NULL || asprintf(&got, "%s.got", file) < 0)
		return -ENOMEM;
	cpu0 = xb_daemons_cpu(d, n);
	end0 = procstat_cpu_s(d[0]->pid);
	r = xb_cli(d[0], (const char *[]){ "put", file, NULL }, out,
	    sizeof(out), &kib, &secs, &cli_cpu);
	ret->put_mbs = (double)xo->size / 1e6 / secs;
	ret->put_cli_kib = kib;
	ret->put_cpu = (xb_daemons_cpu(d, n) - cpu0 + cli_cpu) / gib;
	ret->put_end_cpu = (procstat_cpu_s(d[0]->pid) - end0 + cli_cpu) / gib;
	(void)snprintf(uri, sizeof(uri), "%.*s", (int)strcspn(out, "\n"), out);
	cpu0 = xb_daemons_cpu(d, n);
	end0 = procstat_cpu_s(d[n - 1]->pid);
	if (r == 0)
		r = xb_cli(d[n - 1],
		    (const char *[]){ "get", uri, "-o", got, NULL }, out,
		    sizeof(out), &kib, &secs, &cli_cpu);
	ret->get_mbs = (double)xo->size / 1e6 / secs;
	ret->get_cli_kib = kib;
	ret->get_cpu = (xb_daemons_cpu(d, n) - cpu0 + cli_cpu) / gib;
	ret->get_end_cpu =
	    (procstat_cpu_s(d[n - 1]->pid) - end0 + cli_cpu) / gib;
	ret->daemon_kib = 0;
	for (unsigned i = 0; i < n; i++) {
		double k = (double)procstat_kib(d[i]->pid, "VmHWM");

		if (k > ret->daemon_kib)
			ret->daemon_kib = k;
	}
	(void)unlink(file);
	(void)unlink(got);
	free(file);
	free(got);
	return r == 0 ? 0 : -EIO;
}

static double
xb_median(double *v, unsigned n)
{
	struct bench_summary s;

	bench_summarize(v, n, &s);
	return s.median;
}

int
main(int argc, char **argv)
{
	struct xb_opts xo = { .nets = { 4, 16 },
		.n_nets = 2,
		.modes = { 1, 0 },
		.n_modes = 2,
		.size = 1024ull << 20 };
	struct dbnet net;
	FILE *csv;

	if (sodium_init() < 0)
		return 1;
	bench_env_init();
	bench_opts_parse(&xo.o, argc, argv, "N:s:m:", xb_opt, &xo, xb_usage);
	if (xo.o.quick && xo.size == 1024ull << 20)
		xo.size = 64ull << 20;
	/* One transport: UDP unless -t names another (the first listed). */
	(void)snprintf(xo.transport, sizeof(xo.transport), "%.*s",
	    strcmp(xo.o.transports, "udp,tcp") == 0
	        ? 3
	        : (int)strcspn(xo.o.transports, ","),
	    xo.o.transports);
	csv = bench_csv_open(&xo.o, "xfer.csv",
	    "transport,daemons,max_in_flight,run,put_mbs,get_mbs,put_cli_kib,"
	    "get_cli_kib,daemon_kib,put_cpu_s_gib,get_cpu_s_gib,put_end_cpu_s_gib,"
	    "get_end_cpu_s_gib");
	if (csv == NULL)
		return 1;
	printf("%llu MiB over %s, medians of %u runs; CPU: seconds per GiB "
	       "of all processes (all) and of the putting or getting daemon "
	       "and command (end)\n"
	       "daemons  in flight   put MB/s  get MB/s   CPU put all/end  "
	       "get all/end   RSS put/get/daemon MiB\n",
	    (unsigned long long)(xo.size >> 20), xo.transport, xo.o.reps);
	for (unsigned ni = 0; ni < xo.n_nets; ni++)
		for (unsigned mi = 0; mi < xo.n_modes; mi++) {
			unsigned n = xo.nets[ni], mode = xo.modes[mi];
			double put[16], get[16], pk[16], gk[16], dk[16];
			double pc[16], gc[16], pe[16], ge[16];
			struct xb_run r;
			unsigned runs = 0;

			if (xb_net(&xo, &net, n, mode) < 0) {
				(void)fclose(csv);
				return 1;
			}
			for (unsigned k = 0; k < xo.o.reps && k < 16; k++) {
				if (xb_one(&xo, net.h, net.d, n, k, &r) < 0) {
					fprintf(stderr,
					    "bench_xfer: run failed\n");
					harness_dump_logs(net.h);
					break;
				}
				fprintf(csv,
				    "%s,%u,%u,%u,%.1f,%.1f,%.0f,%.0f,%.0f,%.2f,"
				    "%.2f,%.2f,%.2f\n",
				    xo.transport, n, mode, k, r.put_mbs,
				    r.get_mbs, r.put_cli_kib, r.get_cli_kib,
				    r.daemon_kib, r.put_cpu, r.get_cpu,
				    r.put_end_cpu, r.get_end_cpu);
				pe[runs] = r.put_end_cpu;
				ge[runs] = r.get_end_cpu;
				pc[runs] = r.put_cpu;
				gc[runs] = r.get_cpu;
				put[runs] = r.put_mbs;
				get[runs] = r.get_mbs;
				pk[runs] = r.put_cli_kib;
				gk[runs] = r.get_cli_kib;
				dk[runs++] = r.daemon_kib;
			}
			if (runs > 0)
				printf("%7u  %9s  %9.1f %9.1f   %5.1f / %4.1f   "
				       "%4.1f / %4.1f   %.1f / %.1f / %.1f\n",
				    n,
				    mode == 1       ? "1"
				        : mode == 0 ? "adaptive"
				                    : "cap",
				    xb_median(put, runs), xb_median(get, runs),
				    xb_median(pc, runs), xb_median(pe, runs),
				    xb_median(gc, runs), xb_median(ge, runs),
				    xb_median(pk, runs) / 1024,
				    xb_median(gk, runs) / 1024,
				    xb_median(dk, runs) / 1024);
			dbnet_free(&net);
		}
	return fclose(csv) == 0 ? 0 : 1;
}
