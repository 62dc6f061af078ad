/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The benchmark programs' common part (see bench.h): options, daemon
 * pairs through the integration harness, CPU placement, counters,
 * statistics and CSV output.
 */
#include "bench.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The -c file's text, for every daemon a program starts. */
static char *bench_extra_cfg;

static char *
bench_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t n = 0;

	if (f == NULL)
		return NULL;
	if (getdelim(&text, &n, '\0', f) < 0) {
		free(text);
		text = strdup("");
	}
	(void)fclose(f);
	return text;
}

static void
bench_usage(const char *prog, const char *usage, int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: %s [-o DIR] [-r REPS] [-q] [-p on|off|both] "
	    "[-t udp,tcp] [-c FILE] [-v]%s\n"
	    "  -o DIR   write CSV files into DIR (default ./bench-out)\n"
	    "  -r REPS  repetitions; medians and spreads are reported\n"
	    "  -q       quick smoke run with small counts\n"
	    "  -p MODE  CPU placement: on (daemon A and its client on CPU 0,\n"
	    "           B on CPU 1), off (scheduler's choice) or both\n"
	    "  -t LIST  transports to measure (default udp,tcp)\n"
	    "  -c FILE  configuration text added to every daemon's file\n"
	    "           (experiments: [core] INITIAL_WINDOW = 256 KiB ...)\n"
	    "  -v       progress on stderr\n",
	    prog, usage != NULL ? usage : "");
	exit(status);
}

void
bench_opts_parse(struct bench_opts *o, int argc, char **argv, const char *extra,
    bench_opt_fn *fn, void *cls, const char *usage)
{
	char optstr[64];
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->out_dir = "bench-out";
	o->reps = 5;
	o->pinned = o->unpinned = true;
	(void)snprintf(o->transports, sizeof(o->transports), "udp,tcp");
	(void)snprintf(optstr, sizeof(optstr), "ho:r:qp:t:c:v%s",
	    extra != NULL ? extra : "");
	while ((c = getopt(argc, argv, optstr)) != -1) {
		switch (c) {
		case 'h':
			bench_usage(argv[0], usage, 0);
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case 'r':
			o->reps = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || o->reps == 0 || o->reps > 1000)
				bench_usage(argv[0], usage, 2);
			break;
		case 'q':
			o->quick = true;
			break;
		case 'p':
			o->pinned = strcmp(optarg, "off") != 0;
			o->unpinned = strcmp(optarg, "on") != 0;
			if (strcmp(optarg, "on") != 0 &&
			    strcmp(optarg, "off") != 0 &&
			    strcmp(optarg, "both") != 0)
				bench_usage(argv[0], usage, 2);
			break;
		case 't':
			(void)snprintf(o->transports, sizeof(o->transports),
			    "%s", optarg);
			break;
		case 'c':
			o->extra_cfg = bench_read_file(optarg);
			if (o->extra_cfg == NULL) {
				fprintf(stderr, "%s: cannot read %s\n", argv[0],
				    optarg);
				exit(2);
			}
			bench_extra_cfg = o->extra_cfg;
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			if (c == '?' || fn == NULL || fn(c, optarg, cls) < 0)
				bench_usage(argv[0], usage, 2);
			break;
		}
	}
	if (optind != argc)
		bench_usage(argv[0], usage, 2);
}

bool
bench_want_transport(const struct bench_opts *o, const char *t)
{
	size_t n = strlen(t);
	const char *s = o->transports;

	while ((s = strstr(s, t)) != NULL) {
		if ((s == o->transports || s[-1] == ',') &&
		    (s[n] == '\0' || s[n] == ','))
			return true;
		s += n;
	}
	return false;
}

void
bench_env_init(void)
{
	/* The harness takes the plugins from here; the build's own. */
	if (getenv("FERRY_PLUGIN_DIR") == NULL)
		(void)setenv("FERRY_PLUGIN_DIR", FERRY_PLUGIN_DIR_DEFAULT, 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
}

void
bench_log(const struct bench_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->verbose)
		return;
	va_start(ap, fmt);
	fputs("bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

uint64_t
bench_now_ns(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int
bench_client(const struct harness_daemon *d, bool listen,
    struct ferry_client **ret)
{
	uint16_t type = BENCH_APP_TYPE;
	struct ferry_client *c;
	int r = harness_daemon_client(d, &c);

	if (r < 0)
		return r;
	ferry_client_set_timeout(c, 120000);
	if (listen && (r = ferry_register(c, &type, 1)) < 0) {
		ferry_client_close(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* True once d lists peer as connected. */
static bool
bench_sees(const struct harness_daemon *d, const struct ferry_peer_id *peer)
{
	struct ferry_client *c;
	struct ferry_peer_info *pi;
	bool found = false;
	size_t n;

	if (harness_daemon_client(d, &c) < 0)
		return false;
	if (ferry_peers(c, &pi, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (memcmp(&pi[i].id, peer, sizeof(*peer)) == 0)
				found = true;
		ferry_peers_free(pi);
	}
	ferry_client_close(c);
	return found;
}

int
bench_pair_link(struct harness *h, struct harness_daemon *d[2],
    bench_config_fn *fn, void *cls, unsigned link_ms)
{
	uint64_t end;
	char *uri = NULL;
	int r;

	for (int i = 0; i < 2; i++) {
		r = harness_daemon_new(h, &d[i]);
		if (r == 0)
			r = fn(d[i], i, cls);
		if (r == 0 && i == 1)
			r = harness_daemon_config(d[i],
			    "[core]\nBOOTSTRAP = %s\n", uri);
		if (r == 0)
			r = harness_daemon_start_ready(d[i]);
		if (r == 0 && i == 0) {
			struct ferry_client *c;

			r = harness_daemon_client(d[0], &c);
			if (r == 0) {
				r = ferry_hello(c, &uri);
				ferry_client_close(c);
			}
		}
		if (r < 0)
			break;
	}
	free(uri);
	if (r < 0)
		return r;
	end = harness_now_ms() + link_ms;
	while (!bench_sees(d[0], &d[1]->id) || !bench_sees(d[1], &d[0]->id)) {
		if (harness_now_ms() > end)
			return -ETIMEDOUT;
		harness_sleep_ms(20);
	}
	return 0;
}

/* What both daemons of a bench_pair run with, besides the -c file. */
struct bench_pair_cfg {
	const char *transport;
	const char *extra; /* may be NULL */
};

static int
bench_pair_config(struct harness_daemon *d, int side, void *cls)
{
	const struct bench_pair_cfg *cfg = cls;
	int r = harness_daemon_transports(d, cfg->transport);

	(void)side;
	if (r == 0 && cfg->extra != NULL)
		r = harness_daemon_config(d, "%s\n", cfg->extra);
	if (r == 0 && bench_extra_cfg != NULL)
		r = harness_daemon_config(d, "%s\n", bench_extra_cfg);
	return r;
}

int
bench_pair_start(struct bench_pair *p, const char *name, const char *transport,
    const char *extra)
{
	int r;

	memset(p, 0, sizeof(*p));
	(void)snprintf(p->transport, sizeof(p->transport), "%s", transport);
	r = harness_new(name, &p->h);
	if (r < 0)
		return r;
	r = bench_pair_link(p->h, p->d, bench_pair_config,
	    &(struct bench_pair_cfg){ p->transport, extra }, BENCH_LINK_MS);
	if (r < 0) {
		fprintf(stderr, "bench: %s pair did not link: %s\n", transport,
		    strerror(-r));
		harness_dump_logs(p->h);
		bench_pair_free(p);
	}
	return r;
}

void
bench_pair_free(struct bench_pair *p)
{
	harness_free(p->h);
	memset(p, 0, sizeof(*p));
}

int
bench_side_cpu(enum bench_place place, int side)
{
	return place == BENCH_PINNED ? side : BENCH_CPU_ANY;
}

const char *
bench_place_name(enum bench_place place)
{
	return place == BENCH_PINNED ? "pinned" : "unpinned";
}

int
bench_pair_place(struct bench_pair *p, enum bench_place place)
{
	int r = bench_pin(p->d[0]->pid, bench_side_cpu(place, 0));

	if (r == 0)
		r = bench_pin(p->d[1]->pid, bench_side_cpu(place, 1));
	return r;
}

static int
bench_pin_tid(pid_t tid, int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	if (cpu == BENCH_CPU_ANY)
		for (long i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, &set);
	else
		CPU_SET(cpu % (n > 0 ? (int)n : 1), &set);
	return sched_setaffinity(tid, sizeof(set), &set) < 0 ? -errno : 0;
}

int
bench_pin(pid_t pid, int cpu)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int r = 0;

	if (pid == 0)
		pid = getpid();
	(void)snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	dir = opendir(path);
	if (dir == NULL)
		return bench_pin_tid(pid, cpu);
	while (r == 0 && (e = readdir(dir)) != NULL)
		if (e->d_name[0] != '.')
			r = bench_pin_tid((pid_t)atol(e->d_name), cpu);
	(void)closedir(dir);
	return r;
}

uint64_t
bench_cpu_ns(pid_t pid)
{
	char path[96];
	struct dirent *e;
	uint64_t sum = 0;
	DIR *dir;

	if (pid == 0)
		pid = getpid();
	(void)snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	dir = opendir(path);
	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL) {
		unsigned long long ns = 0;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		(void)snprintf(path, sizeof(path),
		    "/proc/%ld/task/%.16s/schedstat", (long)pid, e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		(void)fclose(f);
	}
	(void)closedir(dir);
	return sum;
}

uint64_t
bench_udp_rcvbuf_errors(void)
{
	char names[1024], values[1024];
	unsigned long long v = 0;
	char *ns, *vs, *n, *val;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (f == NULL)
		return 0;
	/* Two lines per protocol: "Udp: Name ..." then "Udp: 1 2 ...". */
	while (fgets(names, sizeof(names), f) != NULL &&
	    fgets(values, sizeof(values), f) != NULL) {
		if (strncmp(names, "Udp:", 4) != 0)
			continue;
		n = strtok_r(names, " \n", &ns);
		val = strtok_r(values, " \n", &vs);
		while (n != NULL && val != NULL) {
			if (strcmp(n, "RcvbufErrors") == 0)
				v = strtoull(val, NULL, 10);
			n = strtok_r(NULL, " \n", &ns);
			val = strtok_r(NULL, " \n", &vs);
		}
		break;
	}
	(void)fclose(f);
	return v;
}

int
bench_counters_get(const struct harness_daemon *d, struct bench_counters *ret)
{
	struct ferry_client *c;
	int r = harness_daemon_client(d, &c);

	memset(ret, 0, sizeof(*ret));
	if (r < 0)
		return r;
	r = ferry_stats(c, &ret->st, &ret->n);
	ferry_client_close(c);
	return r;
}

uint64_t
bench_counter(const struct bench_counters *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->st[i].name, name) == 0)
			return c->st[i].value;
	return 0;
}

uint64_t
bench_counter_delta(const struct bench_counters *before,
    const struct bench_counters *after, const char *name)
{
	return bench_counter(after, name) - bench_counter(before, name);
}

void
bench_counters_free(struct bench_counters *c)
{
	if (c->st != NULL)
		ferry_stats_free(c->st, c->n);
	memset(c, 0, sizeof(*c));
}

static int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void
bench_summarize(const double *v, unsigned n, struct bench_summary *ret)
{
	double *s = calloc(n + 1, sizeof(*s));
	unsigned k = 0;

	ret->n = 0;
	ret->median = ret->min = ret->max = NAN;
	if (s == NULL)
		return;
	for (unsigned i = 0; i < n; i++)
		if (!isnan(v[i]))
			s[k++] = v[i];
	if (k > 0) {
		qsort(s, k, sizeof(*s), bench_cmp_double);
		ret->n = k;
		ret->min = s[0];
		ret->max = s[k - 1];
		ret->median = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	}
	free(s);
}

void *
bench_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void
bench_shared_free(void *p, size_t size)
{
	if (p != NULL)
		(void)munmap(p, size);
}

int
bench_wait_child(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

static int
bench_mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

FILE *
bench_csv_open(const struct bench_opts *o, const char *name, const char *header)
{
	char path[4096];
	FILE *f;
	int r = bench_mkdirs(o->out_dir);

	if (r < 0) {
		fprintf(stderr, "bench: cannot create %s: %s\n", o->out_dir,
		    strerror(-r));
		return NULL;
	}
	(void)snprintf(path, sizeof(path), "%s/%s", o->out_dir, name);
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "bench: cannot write %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	fprintf(f, "%s\n", header);
	return f;
}
