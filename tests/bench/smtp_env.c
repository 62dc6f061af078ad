/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The SMTP benchmark's mail path: fixture, users, daemons, Postfix's log
 * (see smtp_env.h). */
#include "smtp_env.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/*
 * The SMTP tests' C side of the fixture: its script's path (mta_script)
 * and run tag (mta_tag) are this benchmark's too. The header is made for
 * one Check test file each, so most of it stays unused here.
 */
#include "../mta/mta.h"

#define SMTP_ENV_SCRIPT_MS 120000 /* setup-mta.sh, apt-get included */

static int smtp_env_lock_fd = -1;
static unsigned smtp_env_lock_depth;

static const char *
smtp_env_getenv(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : def;
}

int
smtp_env_prepare(void)
{
	char *argv[] = { (char *)mta_script(), (char *)"setup", NULL };
	struct harness_output o;
	int r = harness_run(argv, NULL, SMTP_ENV_SCRIPT_MS, &o);

	if (r < 0)
		return r;
	r = o.status;
	if (r != 0 && r != SMTP_ENV_SKIP)
		fprintf(stderr, "bench_smtp: setup-mta.sh failed (%d):\n%s", r,
		    o.err);
	harness_output_free(&o);
	return r;
}

void
smtp_env_lock(void)
{
	char path[512];

	if (smtp_env_lock_depth++ > 0)
		return;
	(void)snprintf(path, sizeof(path), "%s/.test-lock",
	    smtp_env_getenv("FERRY_MTA_DIR", "/var/tmp/ferry-mta"));
	smtp_env_lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (smtp_env_lock_fd < 0)
		return; /* the fixture is broken; the runs will say so */
	if (flock(smtp_env_lock_fd, LOCK_EX | LOCK_NB) < 0) {
		fprintf(stderr,
		    "bench_smtp: waiting for a test program "
		    "using the MTA fixture\n");
		(void)flock(smtp_env_lock_fd, LOCK_EX);
	}
}

void
smtp_env_unlock(void)
{
	if (smtp_env_lock_depth == 0 || --smtp_env_lock_depth > 0)
		return;
	if (smtp_env_lock_fd >= 0)
		(void)close(smtp_env_lock_fd); /* lets the flock go */
	smtp_env_lock_fd = -1;
}

int
smtp_env_user(struct smtp_user *u, const char *name, bool fifo)
{
	char *argv[] = { (char *)mta_script(), (char *)"user", (char *)name,
		(char *)(fifo ? "fifo" : "maildir"), u->filter, NULL };
	struct harness_output o;
	size_t len;
	int r;

	memset(u, 0, sizeof(*u));
	(void)snprintf(u->name, sizeof(u->name), "%s", name);
	(void)snprintf(u->mail, sizeof(u->mail), "%s@localhost", name);
	(void)snprintf(u->filter, sizeof(u->filter), "X-Ferry-Bench: %s-%s",
	    mta_tag(), name);
	u->fifo = fifo;
	r = harness_run(argv, NULL, SMTP_ENV_SCRIPT_MS, &o);
	if (r < 0)
		return r;
	len = strcspn(o.out, "\n");
	if (o.status != 0 || len == 0 || len >= sizeof(u->inbox)) {
		fprintf(stderr,
		    "bench_smtp: setup-mta.sh user %s failed "
		    "(%d):\n%s",
		    name, o.status, o.err);
		harness_output_free(&o);
		return -EIO;
	}
	memcpy(u->inbox, o.out, len);
	u->inbox[len] = '\0';
	harness_output_free(&o);
	return 0;
}

/* What the daemons of a smtp_pair run with besides their users. */
struct smtp_pair_cfg {
	const struct smtp_pair *p;
	const char *extra;     /* may be NULL */
	const char *extra_cfg; /* likewise */
};

/* Only SMTP, with the [transport-smtp] section for side's user. */
static int
smtp_pair_config(struct harness_daemon *d, int side, void *cls)
{
	const struct smtp_pair_cfg *cfg = cls;
	const struct smtp_user *u = &cfg->p->u[side];
	int r = harness_daemon_transports(d, "smtp");

	if (r == 0)
		r = harness_daemon_config(d,
		    "[transport-smtp]\nSERVER = %s\nADDRESS = %s\n"
		    "FILTER = %s\nINBOX = %s\n"
		    "MAX_MAILS_PER_DEST_HOUR = %u\nMAX_MAILS_HOUR = %u\n",
		    SMTP_ENV_SERVER, u->mail, u->filter, u->inbox, SMTP_ENV_CAP,
		    SMTP_ENV_CAP);
	if (r == 0 && cfg->extra != NULL)
		r = harness_daemon_config(d, "%s\n", cfg->extra);
	if (r == 0 && cfg->extra_cfg != NULL)
		r = harness_daemon_config(d, "%s\n", cfg->extra_cfg);
	return r;
}

int
smtp_pair_start(struct smtp_pair *p, const char *name,
    const struct smtp_user *ua, const struct smtp_user *ub, const char *extra,
    const char *extra_cfg)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->u[0] = *ua;
	p->u[1] = *ub;
	r = harness_new(name, &p->h);
	if (r < 0)
		return r;
	r = bench_pair_link(p->h, p->d, smtp_pair_config,
	    &(struct smtp_pair_cfg){ p, extra, extra_cfg }, SMTP_ENV_LINK_MS);
	if (r < 0) {
		fprintf(stderr, "bench_smtp: SMTP pair did not link: %s\n",
		    strerror(-r));
		harness_dump_logs(p->h);
		smtp_pair_free(p);
	}
	return r;
}

void
smtp_pair_free(struct smtp_pair *p)
{
	harness_free(p->h);
	memset(p, 0, sizeof(*p));
}

static const char *
smtp_env_log_path(void)
{
	return smtp_env_getenv("FERRY_MTA_LOG", "/var/log/ferry-mta.log");
}

long
smtp_env_log_mark(void)
{
	FILE *f = fopen(smtp_env_log_path(), "r");
	long end = 0;

	if (f == NULL)
		return 0;
	if (fseek(f, 0, SEEK_END) == 0)
		end = ftell(f);
	(void)fclose(f);
	return end < 0 ? 0 : end;
}

/* Growable arrays of the five delay figures. */
struct smtp_env_delays {
	double *v[5];
	unsigned n, cap;
};

static void
smtp_env_delays_add(struct smtp_env_delays *d, const double x[5])
{
	if (d->n == d->cap) {
		unsigned cap = d->cap ? 2 * d->cap : 1024;

		for (int k = 0; k < 5; k++) {
			double *p = realloc(d->v[k], cap * sizeof(double));

			if (p == NULL)
				return;
			d->v[k] = p;
		}
		d->cap = cap;
	}
	for (int k = 0; k < 5; k++)
		d->v[k][d->n] = x[k];
	d->n++;
}

/* One pass over the log after mark. */
static void
smtp_env_scan(long mark, const char *rcpt, struct smtp_env_delays *d,
    struct smtp_postfix *ret)
{
	char needle[128], line[4096];
	FILE *f = fopen(smtp_env_log_path(), "r");

	if (f == NULL)
		return;
	(void)snprintf(needle, sizeof(needle), "to=<%s>", rcpt);
	if (fseek(f, mark, SEEK_SET) == 0) {
		while (fgets(line, sizeof(line), f) != NULL) {
			const char *p;
			double x[5];

			if (strstr(line, needle) == NULL)
				continue;
			ret->deferred +=
			    strstr(line, "status=deferred") != NULL;
			ret->bounced += strstr(line, "status=bounced") != NULL;
			if (strstr(line, "status=sent") == NULL ||
			    (p = strstr(line, " delay=")) == NULL)
				continue;
			if (sscanf(p, " delay=%lf, delays=%lf/%lf/%lf/%lf",
			        &x[0], &x[1], &x[2], &x[3], &x[4]) == 5)
				smtp_env_delays_add(d, x);
		}
	}
	(void)fclose(f);
}

void
smtp_env_postfix(long mark, const char *rcpt, unsigned want, int wait_ms,
    struct smtp_postfix *ret)
{
	uint64_t end = harness_now_ms() + (uint64_t)wait_ms;
	struct smtp_env_delays d;
	struct bench_summary s[5];

	for (;;) {
		memset(&d, 0, sizeof(d));
		memset(ret, 0, sizeof(*ret));
		smtp_env_scan(mark, rcpt, &d, ret);
		if (d.n >= want || harness_now_ms() >= end)
			break;
		for (int k = 0; k < 5; k++)
			free(d.v[k]);
		harness_sleep_ms(100);
	}
	for (int k = 0; k < 5; k++) {
		bench_summarize(d.v[k], d.n, &s[k]);
		free(d.v[k]);
	}
	ret->n = d.n;
	ret->delay = s[0].median;
	ret->before_qmgr = s[1].median;
	ret->in_qmgr = s[2].median;
	ret->conn = s[3].median;
	ret->xmit = s[4].median;
}
