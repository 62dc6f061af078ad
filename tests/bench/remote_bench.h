/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * What bench_remote's parts share (issue 15, "Benchmark: seed 001 Fig. 5
 * and Fig. 6"): a small DHT of real ferryd processes on loopback, its
 * first daemon an HTTPS intermediary with a certificate made here; a
 * full ferry peer on the client's side whose every unit is delayed; and
 * the thin client's path to the intermediary through a delaying TCP
 * relay (tests/lib/delayrelay.h). Timed: 1 MiB put until its URI is
 * printed, which both clients do only once every block has receipts.
 */
#ifndef FERRY_BENCH_REMOTE_BENCH_H
#define FERRY_BENCH_REMOTE_BENCH_H

#include <netinet/in.h>
#include <stdint.h>

#include "bench.h"
#include "harness.h"

#define RB_DHT_MAX 16
#define RB_FILE    (1024u * 1024) /* bytes put: 1 MB as in the seed */

/* The DHT and its intermediary. */
struct rb_env {
	struct harness *h;
	struct harness_daemon *d[RB_DHT_MAX]; /* d[0]: the intermediary */
	unsigned n;
	char *hello;                 /* d[0]'s HELO URI, the bootstrap */
	char cert[600];              /* the intermediary's certificate */
	struct sockaddr_in imd_addr; /* where it listens for clients */
	unsigned files;              /* files made so far */
	const char *extra;           /* configuration text for every daemon */
};

/*
 * Starts n daemons on UDP (d[0] the intermediary, the others
 * bootstrapping from it) with extra configuration text for all (may be
 * NULL), waits until every routing table holds every other daemon, then
 * turns their refresh lookups off so that the network is quiet between
 * the puts; extra goes to the full peer too. 0 or a negative errno (logs
 * dumped).
 */
int rb_env_start(struct rb_env *e, unsigned n, const char *extra);
/* Stops everything and removes the directories. */
void rb_env_free(struct rb_env *e);

/*
 * (Re)starts the full peer of the client's side, *ret (made if NULL: one
 * daemon for the whole run, so that the DHT's tables never hold a peer
 * that is gone): a daemon whose every unit is sent rtt_ms late
 * ([testing] DELAY; the DHT's daemons add none, so that each of its
 * round trips through them takes rtt_ms), bootstrapping from d[0]; waits
 * until its table holds the n DHT daemons and it is quiet. 0 or a
 * negative errno.
 */
int rb_peer_start(struct rb_env *e, unsigned rtt_ms,
    struct harness_daemon **ret);
/* Waits until d has sent no unit for two round trips and a margin: the
 * receipts, ACKs and key exchanges of what came before are over. */
void rb_peer_wait_idle(const struct harness_daemon *d, unsigned rtt_ms);

/* A new file of RB_FILE random bytes under the harness's directory; its
 * path (free it) or NULL. */
char *rb_file(struct rb_env *e);

/*
 * Runs ferry with args (NULL-terminated, after the program's name) and
 * its standard output into out: *ret_s is the time from the fork until
 * its first line (the URI) arrived. The exit status, or a negative errno.
 */
int rb_cli(const char *const *args, char *out, size_t size, double *ret_s);

#endif /* FERRY_BENCH_REMOTE_BENCH_H */
