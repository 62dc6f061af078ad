/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client's parts, shared by src/remote and its unit tests: the
 * config directory, the fetched block records on the wire, the JSON
 * bodies, receipt checks, and the HTTPS exchange. Layouts are in
 * ferry-intermediary(7); the upload records and the Authorization header
 * are intermediary/imdwire.h's, the codec the intermediary runs too.
 */
#ifndef FERRY_REMOTE_REMOTE_INT_H
#define FERRY_REMOTE_REMOTE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dht/dhtkey.h"
#include "dht/dhtmsg.h"
#include "lib/buf.h"
#include "remote/remote.h"
#include "storage/chunk.h"

struct identity;
struct map;
struct remote_http;

/* --- remote_dir.c: the config directory ----------------------------- */

#define REMOTE_KEY_FILE    "client.key"         /* identity format */
#define REMOTE_SECRET_FILE "convergence.key"    /* as the daemon's */
#define REMOTE_KNOWN_FILE  "intermediaries"     /* URL per line */
#define REMOTE_BAD_FILE    "bad-intermediaries" /* URL TIME WHY */
#define REMOTE_CURSOR_FILE "cursors"            /* PEER CURSOR per line */

/* The directory o_dir, or the default under $XDG_CONFIG_HOME or $HOME,
 * into path; made mode 0700 if missing; refused (-EPERM, why filled) if
 * not a directory of ours with no group or other bits. */
int remote_dir_open(const char *o_dir, char *path, size_t size, char *why,
    size_t why_size);
/* Lines of dir/name (without their newlines), at most max of them, into
 * a malloc'd array of malloc'd strings. A missing file is 0 lines. */
int remote_dir_lines(const char *dir, const char *name, size_t max, char ***ret,
    size_t *ret_n);
void remote_dir_lines_free(char **lines, size_t n);
/* Replaces dir/name with lines (mode 0600, atomically). */
int remote_dir_write_lines(const char *dir, const char *name,
    char *const *lines, size_t n);
/* The cursor remembered for peer (base32), 0 if none. */
uint64_t remote_dir_cursor(const char *dir, const char *peer);
int remote_dir_set_cursor(const char *dir, const char *peer, uint64_t c);

/* --- remote_fetch.c: the record stream of POST /v1/fetch ------------ */

enum remote_fetch_status {
	REMOTE_FETCH_FOUND = 0,
	REMOTE_FETCH_NOT_FOUND = 1,
	REMOTE_FETCH_TIMEOUT = 2,
	REMOTE_FETCH_BUSY = 3,
};
#define REMOTE_FETCH_HEAD 37 /* len, status, key */

/* One record: block is NULL unless status is FOUND; borrowed for the
 * call. A negative return stops the parser, which returns it. */
typedef int remote_fetch_fn(void *cls, unsigned status,
    const struct dhtkey *key, const uint8_t *block, size_t len);
/* An incremental parser: bytes in any pieces, records out whole. Memory:
 * one record. */
struct remote_fetch {
	uint8_t head[REMOTE_FETCH_HEAD];
	size_t head_have;
	uint8_t *block; /* the record's block, being filled */
	size_t block_len, block_have;
	remote_fetch_fn *fn;
	void *cls;
	unsigned records;
	int error; /* sticky */
};
void remote_fetch_init(struct remote_fetch *f, remote_fetch_fn *fn, void *cls);
/* Feeds len bytes. 0, -EBADMSG (a len, status or block out of the
 * page's ranges; sticky), -ENOMEM or fn's error. */
int remote_fetch_feed(struct remote_fetch *f, const void *data, size_t len);
/* 0 if the stream ended between records, else -EBADMSG. */
int remote_fetch_end(const struct remote_fetch *f);
void remote_fetch_done(struct remote_fetch *f);
/* What a remote_fetch_keys() callback returns for a record it did not
 * ask for (or had its answer to already): the intermediary's fault, said
 * once the stream ends, the other records still read. */
#define REMOTE_FETCH_UNASKED 1
/* One POST /v1/fetch of the n keys at keys (32 bytes each, 1 to 4096) at
 * the intermediary in use, each record to fn as it comes; a block found
 * is checked against its key first, and one that is not its key's is
 * the intermediary's fault, as REMOTE_FETCH_UNASKED. 0, or an error with
 * its sentence in rc->error (an answer not 200, a malformed or wrong
 * stream, fn's own error, the request's). */
int remote_fetch_keys(struct remote *rc, const uint8_t *keys, size_t n,
    remote_fetch_fn *fn, void *cls);

/* --- remote_json.c: the JSON bodies --------------------------------- */

/* {"self": ..., "intermediaries": [...]}: self into *self, the others
 * into a malloc'd array. 0 or -EBADMSG. */
int remote_json_imds(const char *body, size_t len, struct remote_imd *self,
    struct remote_imd **ret, size_t *ret_n);
/* A receipts page: 0 or -EBADMSG. */
int remote_json_receipts(const char *body, size_t len, uint64_t *cursor,
    bool *more, struct remote_entry **ret, size_t *ret_n);
/* One record of POST /v1/blocks's answer. */
struct remote_relay {
	uint8_t key[32];
	uint8_t put_hash[32];
	char status[16];
};
int remote_json_relays(const char *body, size_t len, struct remote_relay **ret,
    size_t *ret_n);
/* An error body's token into token (size bytes); "" if it has none. */
void remote_json_error(const char *body, size_t len, char *token, size_t size);

/* --- remote_receipt.c: what a receipt proves ------------------------ */

/* A block of a put and the storers that signed receipts for it. */
struct remote_block {
	struct dhtkey key;
	uint8_t put_hash[DHTMSG_HASH_LEN]; /* of the PUT signed for it */
	uint8_t n_storers;
	struct dhtkey storers[DHTMSG_REPL_MAX]; /* peer ids */
	bool sent;        /* in the current round's upload */
	bool relay_done;  /* the intermediary said "done" for it */
	bool node;        /* a manifest node, else a data block */
	bool check;       /* to be fetched back (remote_verify_choose()) */
	bool held;        /* fetched back through another intermediary */
	bool lost;        /* not found when fetched back */
	uint8_t answer;   /* the last fetch's status for it */
	uint64_t relayed; /* bit i: sent through the client's cand[i] */
	uint64_t vouched; /* bit i: a counted receipt came through cand[i] */
};

enum remote_receipt_verdict {
	REMOTE_RECEIPT_NEW = 0, /* a new storer: counted */
	REMOTE_RECEIPT_DUP,     /* a storer counted already */
	REMOTE_RECEIPT_OTHER,   /* another PUT's (another run's): ignored */
	REMOTE_RECEIPT_FULL,    /* more storers than a PUT can name */
};
/*
 * Checks receipt e for block b and counts its storer. The verdict, or
 * -EBADMSG for a forgery: a signature that is not the storer's over
 * key, storer, expiry and put_hash, or a receipt for another key.
 */
int remote_receipt_check(struct remote_block *b, const struct remote_entry *e);
/* 0 if e is a receipt whose signature is its storer's over its key,
 * expiry and put_hash (whatever PUT that names), with the storer's DHT id
 * in *ret_storer; -EBADMSG for a forgery or an end of relay. */
int remote_receipt_verify(const struct remote_entry *e,
    struct dhtkey *ret_storer);

/* --- remote_verify.c: blocks fetched back to check them -------------- */

/* Data blocks sampled when a file has more: an intermediary that
 * dropped a fraction f of them escapes with probability at most
 * (1 - f)^135: under 0.1% for f = 5%, 26% for f = 1%. */
#define REMOTE_VERIFY_K     135
#define REMOTE_VERIFY_TRIES 2    /* fetches of a block not found */
#define REMOTE_VERIFY_BATCH 4096 /* keys in one POST /v1/fetch (the page's) */

/* How many of n_data data blocks a check fetches back under mode: all of
 * them under REMOTE_VERIFY_ALL or when there are at most REMOTE_VERIFY_K,
 * REMOTE_VERIFY_K under REMOTE_VERIFY_SAMPLE, none under NONE. */
uint64_t remote_verify_sample_size(enum remote_verify mode, uint64_t n_data);
/* Sets check on the blocks of all[0..n) a check fetches back, of those not
 * held already: every node, and of the data blocks a uniform random
 * sample of remote_verify_sample_size() (chosen here, with the system's
 * CSPRNG, after the receipts came: an intermediary cannot know it).
 * Clears it on the others. Returns how many are set. */
size_t remote_verify_choose(struct remote_block *const *all, size_t n,
    enum remote_verify mode);
/* The chance that a uniform sample of k of n blocks misses every one of
 * d: C(n - d, k) / C(n, k). */
double remote_verify_miss(uint64_t n, uint64_t d, uint64_t k);

/* What remote_verify() found. */
struct remote_verify_result {
	size_t asked;     /* blocks fetched back */
	size_t held;      /* of them, found and right */
	size_t lost;      /* of them, not found (or timed out) every time */
	size_t unchecked; /* no intermediary could check them */
	uint64_t blamed;  /* bit i: cand[i] vouched for a lost block */
	uint64_t used;    /* bit i: cand[i] checked blocks */
};
/*
 * Fetches back the blocks marked check and not held yet, each through
 * one of rc's candidates that neither relayed it nor passed a receipt for
 * it, is not in skip and not remembered as bad: the first of them that
 * answers, in one POST /v1/fetch for them all (per REMOTE_VERIFY_BATCH),
 * those not found asked once more. Each that comes back hashing to its
 * key is held; one not found (or timed out) REMOTE_VERIFY_TRIES times is
 * lost, and its vouchers blamed. blocks maps keys to all's blocks. 0 with
 * *ret filled, -ENOMEM, or -EBADMSG when an intermediary sent a block
 * that is not the one asked (rc's error says which).
 */
int remote_verify(struct remote *rc, struct map *blocks,
    struct remote_block *const *all, size_t n, uint64_t skip,
    struct remote_verify_result *ret);
/*
 * The check of a put whose blocks all have their receipts, as rc's verify
 * asks: chooses, fetches back (skip as for remote_verify()) and says on
 * stderr what came of it. 0 when done; -EAGAIN when candidates (bits in
 * *ret_blamed, remembered as bad here) vouched for blocks not found: the
 * receipts of every block they vouched for are dropped, to be put again;
 * -ENOLINK under REMOTE_VERIFY_ALL when blocks could not be checked (the
 * error says so); -ENOMEM.
 */
int remote_verify_put(struct remote *rc, struct map *blocks,
    struct remote_block *const *all, size_t n, uint64_t skip,
    uint64_t *ret_blamed);

/* --- remote_http.c: one HTTPS connection ---------------------------- */

/* What a request sends. */
struct remote_req {
	const char *method;       /* "GET" or "POST" */
	const char *target;       /* "/v1/..." */
	const char *auth;         /* the Authorization header line or NULL */
	const char *content_type; /* of the body, NULL without one */
	const void *body;         /* a body in memory, or */
	size_t body_len;
	/* a streamed body: fills up to size bytes, returns how many (0 at
	 * the end) or < 0 to abort the request */
	long (*read)(void *cls, void *buf, size_t size);
	void *read_cls;
	/* the answer's body streamed (NULL: kept in the answer, up to
	 * REMOTE_BODY_MAX); < 0 aborts */
	int (*write)(void *cls, const void *data, size_t len);
	void *write_cls;
	unsigned timeout_s; /* 0: the connection's default */
};
#define REMOTE_BODY_MAX (16u * 1024 * 1024)

struct remote_resp {
	long status;                      /* HTTP status, 0 if none came */
	struct buf body;                  /* unless streamed */
	char imd[REMOTE_PEER_STRLEN + 1]; /* Ferry-Intermediary, or "" */
	int64_t date;                     /* Date header, -1 if none */
	char error[16];                   /* error body's token, or "" */
};

int remote_http_new(const char *cacert, unsigned timeout_s,
    struct remote_http **ret);
void remote_http_free(struct remote_http *h);
/* Sends rq to base (scheme, host, port) and fills resp (init'd here;
 * remote_resp_done() it). 0 when an answer came, whatever its status;
 * -EHOSTUNREACH, -ETIMEDOUT, -ECONNRESET, -EPROTO for transport
 * failures (why in the connection's error), or the callbacks' errors. */
int remote_http_do(struct remote_http *h, const char *base,
    const struct remote_req *rq, struct remote_resp *resp);
const char *remote_http_error(const struct remote_http *h);
void remote_resp_done(struct remote_resp *resp);

/* --- remote.c: the client and its intermediaries -------------------- */

#define REMOTE_CAND_MAX 64 /* intermediaries a client tries */

struct remote {
	char dir[4096];
	struct identity *key;        /* the client key */
	struct storage_codec *codec; /* the convergence secret's */
	struct remote_http *http;
	unsigned replication;
	uint64_t lifetime_s;
	unsigned receipt_wait_s;
	enum remote_verify verify;
	bool verbose;
	char *cand[REMOTE_CAND_MAX]; /* URLs to try, in order */
	size_t n_cand;
	/* the intermediary in use (remote_use()) */
	const char *url;
	bool known; /* its GET /v1/intermediaries answered on this handle */
	uint8_t imd[32]; /* its peer id */
	char imd_str[REMOTE_PEER_STRLEN + 1];
	int64_t clock_off; /* its clock minus ours, seconds */
	bool ack_pending;  /* a put's last receipts taken, not acknowledged */
	char error[512];
};

/* The FILE_PROGRESS reports of a put or get: to fn, every ms at most. */
struct remote_progress {
	ferry_file_progress_fn *fn; /* NULL: none */
	void *cls;
	uint32_t ms; /* 0: none */
	uint64_t last_us;
};
/* True when a report is due now (force, or ms since the last), which it
 * then counts as sent; false without a callback or a period. */
bool remote_progress_due(struct remote_progress *pr, bool force);

/* Says (with --verbose, or always when warn) on stderr. */
void remote_say(const struct remote *rc, bool warn, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets rc's error sentence and returns r. */
int remote_fail(struct remote *rc, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Makes cand[i] the intermediary in use: asks it GET /v1/intermediaries
 * for its peer id and clock, and remembers the others it names; not
 * again while it stays in use (a reused connection's next put or get
 * would pay a round trip for what it knows). 0, or a negative errno with
 * the error set. */
int remote_use(struct remote *rc, size_t i);
/* Whether url is remembered as bad. */
bool remote_is_bad(const struct remote *rc, const char *url);
/* Remembers the intermediary in use as bad, for why. */
void remote_mark_bad(struct remote *rc, const char *why);
/* Remembers the intermediary at url as bad, for why, saying so. */
void remote_mark_bad_url(struct remote *rc, const char *url, const char *why);
/* Sends rq, signed for the intermediary in use (rq->auth is set here);
 * a 401 "stale" corrects the clock offset from the answer's Date and, for
 * a body that can be sent again (not streamed), signs and sends once
 * more. As remote_http_do(). */
int remote_request(struct remote *rc, struct remote_req *rq,
    struct remote_resp *resp);
/* A sentence for an answer that is not 200. */
int remote_fail_status(struct remote *rc, const char *what,
    const struct remote_resp *resp);

/* remote_queue.c: one take of the receipt queue at the intermediary in
 * use: entries past *cursor, waiting up to wait seconds for one, at most
 * max (0: the page's default); *cursor moves to the page's. The caller
 * remembers it (remote_dir_set_cursor()) once it has used the entries:
 * the next take acknowledges them. A cursor the intermediary says it
 * never gave (400: its queue was lost, or the cursor is another's) is
 * dropped and the take made again from 0. 0, -EPROTO for a malformed
 * answer, or another request's error. */
int remote_take(struct remote *rc, uint64_t *cursor, unsigned wait,
    unsigned max, struct remote_entry **ret, size_t *ret_n, bool *more);

/* Acknowledges the entries a put took last, if not done yet (by a take
 * since): the intermediary drops them now rather than keeping them for
 * RECEIPT_KEEP. Called once the put's result is out (by the next request
 * on the handle, before another intermediary is used, or when the handle
 * is freed), so that it costs the put no round trip. */
void remote_ack(struct remote *rc);

/* remote_put.c, remote_get.c, remote_queue.c: the commands. */

#endif /* FERRY_REMOTE_REMOTE_INT_H */
