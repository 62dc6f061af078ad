/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The mail path the SMTP benchmark (bench_smtp.c, issue 5 "Benchmarks")
 * runs on: the project's Postfix + procmail fixture (tests/mta/setup-mta.sh)
 * driven from C without Check, its lock shared with the SMTP tests, test
 * users with Maildir or FIFO inboxes, two ferryd with only the SMTP
 * transport loaded, and Postfix's own account of where a mail's time went
 * (the delays= field of its log).
 */
#ifndef FERRY_BENCH_SMTP_ENV_H
#define FERRY_BENCH_SMTP_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"

#define SMTP_ENV_SKIP    77 /* setup-mta.sh: cannot run here */
#define SMTP_ENV_SERVER  "smtp://127.0.0.1:25"
#define SMTP_ENV_LINK_MS 180000 /* validation and key exchange by mail */
/* The transport's caps, raised so that they never bound a benchmark
 * (SMTP_CAP_MAX of plugins/smtp/smtp_cfg.c). */
#define SMTP_ENV_CAP     10000000

/* A test user of the fixture and its inbox. */
struct smtp_user {
	char name[33];    /* login, "ferry-bench-ma" */
	char mail[64];    /* name@localhost */
	char filter[128]; /* "X-Ferry-Bench: <run tag>-<name>" */
	char inbox[256];  /* its Maildir or FIFO */
	bool fifo;        /* FIFO rather than Maildir */
};

/* Two daemons with only SMTP, as users u[0] and u[1]; side A is d[0]. */
struct smtp_pair {
	struct harness *h;
	struct harness_daemon *d[2];
	struct smtp_user u[2];
};

/* What Postfix logged about the mails to one recipient: medians of
 * delay= and of the four parts of delays= (before the queue manager,
 * in it, connection setup, transmission: for local(8) the procmail
 * run), in seconds at Postfix's 10 ms resolution. */
struct smtp_postfix {
	unsigned n; /* "status=sent" lines */
	double delay, before_qmgr, in_qmgr, conn, xmit;
	unsigned deferred; /* "status=deferred" lines */
	unsigned bounced;  /* "status=bounced" lines */
};

/* Runs setup-mta.sh (install, configure, start Postfix): 0, or
 * SMTP_ENV_SKIP if it cannot run here, or another exit status. */
int smtp_env_prepare(void);
/* Takes the fixture's lock that the SMTP tests take (tests/mta/mta.h),
 * waiting for a test program that holds it; smtp_env_unlock lets it go.
 * Nesting is counted. */
void smtp_env_lock(void);
void smtp_env_unlock(void);
/* (Re)makes user name with an empty inbox of the given kind and a filter
 * line carrying this run's tag. 0 or a negative errno. */
int smtp_env_user(struct smtp_user *u, const char *name, bool fifo);

/*
 * Starts two daemons with only SMTP loaded as users ua and ub (caps
 * raised to SMTP_ENV_CAP), extra configuration text for both (may be
 * NULL) and the -c file's text (may be NULL), B bootstrapping from A's
 * HELO, and waits up to SMTP_ENV_LINK_MS until each lists the other. 0 or
 * a negative errno (logs dumped).
 */
int smtp_pair_start(struct smtp_pair *p, const char *name,
    const struct smtp_user *ua, const struct smtp_user *ub, const char *extra,
    const char *extra_cfg);
/* Stops both daemons and removes their directories. NULL-safe fields. */
void smtp_pair_free(struct smtp_pair *p);

/* Where Postfix's log ends now. */
long smtp_env_log_mark(void);
/* Reads the log after mark for mail to rcpt (waits up to wait_ms for the
 * log to hold at least want "status=sent" lines: postlogd writes
 * asynchronously). */
void smtp_env_postfix(long mark, const char *rcpt, unsigned want, int wait_ms,
    struct smtp_postfix *ret);

#endif /* FERRY_BENCH_SMTP_ENV_H */
