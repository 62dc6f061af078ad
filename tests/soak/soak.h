/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The soak run of issue 6 ("Soak and restarts"): N real ferryd, each on
 * its own 127.0.0.N, with message traffic between random pairs and random
 * SIGKILL and restart, measuring reconnect times, delivery, RSS and
 * crashes. soak.c drives the daemons, soak_traffic.c the messages,
 * soak_report.c the figures. The program is built and run by
 * tests/soak/soak.sh.
 */
#ifndef FERRY_TESTS_SOAK_H
#define FERRY_TESTS_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ferry/client.h>

#include "harness.h"

#define SOAK_MAX_DAEMONS 32
#define SOAK_APP_TYPE    0x5a4b      /* the message type of the traffic */
#define SOAK_MAGIC       0x534f414bu /* "SOAK", first word of a message */
/* Message: u32 magic, u32 seq, u16 src, u16 dst, u32 len (all of it). */
#define SOAK_HDR         16
#define SOAK_WATCH_MAX   32 /* entries of soak_watch[] */

enum soak_state {
	SOAK_DOWN,         /* killed; restart_at_ms says when it comes back */
	SOAK_STARTING,     /* exec'd, socket not answering yet */
	SOAK_RECONNECTING, /* answering, links not all back */
	SOAK_UP,           /* steady: sends and receives traffic */
};

/* A time span when a daemon could not be expected to carry traffic:
 * from its kill to the end of its reconnection. */
struct soak_span {
	uint64_t from_ms;
	uint64_t to_ms; /* UINT64_MAX while open */
};

struct soak_daemon {
	struct harness_daemon *hd; /* owned by the harness */
	unsigned idx;              /* d<idx> */
	bool stable;               /* never killed */
	enum soak_state state;
	unsigned instance;       /* 0 for the first run, +1 per restart */
	unsigned kills;          /* SIGKILLs the soak sent */
	unsigned crashes;        /* exits the soak did not cause */
	uint64_t killed_ms;      /* last kill */
	uint64_t restart_at_ms;  /* DOWN: when to start it again */
	uint64_t started_ms;     /* last exec */
	uint64_t ready_ms;       /* last time its socket first answered */
	uint64_t instance_ms;    /* start of the current instance's samples */
	uint64_t next_check_ms;  /* RECONNECTING: next look at its peers */
	struct ferry_client *tx; /* requests and sends; NULL if down */
	struct ferry_client *rx; /* registered for SOAK_APP_TYPE */
	struct soak_span *spans; /* unavailable spans, in time order */
	size_t n_spans, cap_spans;
};

enum soak_msg_status {
	SOAK_MSG_SENT,      /* queued by its daemon, not seen yet */
	SOAK_MSG_REFUSED,   /* ferry_send_confirmed said no */
	SOAK_MSG_DELIVERED, /* arrived intact */
	SOAK_MSG_CORRUPT,   /* arrived with other bytes or length */
};

struct soak_msg {
	uint64_t sent_ms;
	uint64_t recv_ms; /* DELIVERED, CORRUPT */
	uint32_t len;
	uint8_t src, dst;
	uint8_t status;    /* enum soak_msg_status */
	int8_t send_err;   /* REFUSED: -errno, clamped */
};

struct soak_reconnect {
	unsigned daemon, instance;
	uint64_t killed_ms, started_ms, ready_ms;
	uint64_t done_ms;    /* 0 if it never completed */
	unsigned have, want; /* peers it had and needed at the end */
};

struct soak_sample {
	uint32_t t_ms; /* since the run phase began */
	uint16_t daemon;
	uint16_t instance;
	uint32_t rss_kib;
	int16_t peers; /* -1 if the daemon did not answer */
	uint8_t state; /* enum soak_state */
	uint64_t queue; /* core.queue_bytes: bytes queued for all peers */
};

struct soak_opts {
	unsigned n;          /* daemons */
	unsigned duration_s; /* of the run phase */
	unsigned stable;     /* d0..d<stable-1> are never killed */
	unsigned kill_min_ms, kill_max_ms; /* between kills */
	unsigned down_min_ms, down_max_ms; /* a killed daemon stays down */
	unsigned small_per_s;  /* small messages per second, in total */
	unsigned big_every_ms; /* one large message this often */
	unsigned small_max, big_min, big_max; /* message sizes, bytes */
	unsigned reconnect_limit_ms;          /* the pass mark */
	unsigned reconnect_give_up_ms;        /* stop waiting for one */
	unsigned msg_timeout_ms; /* a message not there by then is lost */
	unsigned sample_ms;      /* RSS and peer sampling period */
	unsigned interval_s;     /* delivery is reported per interval */
	unsigned mesh_timeout_s; /* for the full mesh at the start */
	double min_delivery;     /* pass mark for eligible messages */
	double max_slope;        /* KiB/min for never-killed daemons; <0 off */
	unsigned warmup_s;       /* samples skipped after a (re)start */
	unsigned per_source;     /* [core] KX_RATE_PER_SOURCE; 0: default */
	uint64_t seed;
	const char *out_dir;
	const char *label; /* for the summary: "Release", "ASan" */
};

struct soak {
	struct soak_opts o;
	struct harness *h;
	struct soak_daemon d[SOAK_MAX_DAEMONS];
	uint64_t rng;
	uint64_t t0_ms;   /* the run phase began */
	uint64_t end_ms;  /* and ends */
	uint64_t mesh_ms; /* time the initial full mesh took */
	uint64_t next_kill_ms;
	uint64_t next_sample_ms;
	FILE *events; /* events.log */
	/* traffic */
	struct soak_msg *msgs;
	size_t n_msgs, cap_msgs;
	uint64_t next_small_ms, next_big_ms;
	uint64_t small_due_us; /* next small message, past t0 */
	uint8_t *buf;          /* message bytes, big_max long */
	uint64_t dups, strays;
	/* reconnections and samples */
	struct soak_reconnect *rec;
	size_t n_rec, cap_rec;
	struct soak_sample *samples;
	size_t n_samples, cap_samples;
	/* outcome */
	uint64_t watch[SOAK_WATCH_MAX]; /* soak_watch[] summed at the end */
	unsigned n_crashes;
	int exit_status[SOAK_MAX_DAEMONS]; /* at the final SIGTERM */
	bool failed;
};

/* soak.c */
/* Milliseconds since the run phase began, for event lines. */
double soak_t(const struct soak *s, uint64_t ms);
/* Appends a printf-formatted line to events.log and, with -v, stderr. */
void soak_event(struct soak *s, uint64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Uniform random number in [lo, hi]. */
uint64_t soak_rand(struct soak *s, uint64_t lo, uint64_t hi);
/* Grows *v (of *cap elements of size sz) to hold n + 1; 0 or -ENOMEM. */
int soak_grow(void **v, size_t *cap, size_t n, size_t sz);
/* True if d carries traffic now. */
bool soak_available(const struct soak_daemon *d);

/* soak_traffic.c */
/* Sends what is due at now_ms between available daemons. */
void soak_traffic_send(struct soak *s, uint64_t now_ms);
/* Waits up to timeout_ms for messages and takes all that came. */
void soak_traffic_poll(struct soak *s, int timeout_ms);
/* Opens d's clients and registers its listener. 0 or negative errno. */
int soak_traffic_open(struct soak_daemon *d);
/* Closes d's clients. */
void soak_traffic_close(struct soak_daemon *d);
/* True if message m counts: both ends were available for its lifetime,
 * or it arrived anyway. */
bool soak_msg_eligible(const struct soak *s, const struct soak_msg *m);

/* soak_report.c */
/* Counters summed over the daemons for the summary, NULL-terminated. */
extern const char *const soak_watch[];
/* Samples RSS and peer count of every running daemon. */
void soak_sample_all(struct soak *s, uint64_t now_ms);
/* Writes the CSV files and summary.txt into the output directory and
 * prints the summary; sets s->failed for every failed criterion. */
void soak_report(struct soak *s);

#endif /* FERRY_TESTS_SOAK_H */
