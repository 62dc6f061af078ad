/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The thin client (issue 15; seed 001 sections IV-V): files stored and
 * fetched through an HTTPS intermediary (ferry-intermediary(7)) by a
 * machine with no ferryd of its own. The file is sealed here with the
 * storage layer's own code (ferry_codec), each block's DHT PUT signed
 * with the client's key, and a put counts as done only once every block
 * has receipts signed by distinct storing peers for that very PUT.
 * This is the interface of the `ferry remote` command.
 */
#ifndef FERRY_REMOTE_REMOTE_H
#define FERRY_REMOTE_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ferry/client.h>

#define REMOTE_URL_MAX              512
#define REMOTE_PEER_STRLEN          52            /* base32 of a 32-byte id */
#define REMOTE_LIFETIME_DEFAULT     (30u * 86400) /* as [storage] LIFETIME */
#define REMOTE_REPLICATION_DEFAULT  3             /* as [dht] REPLICATION */
#define REMOTE_RECEIPT_WAIT_DEFAULT 60 /* seconds, --receipt-timeout */

/* A client: its key, secret, config directory and HTTP connection. */
struct remote;

/* What a put checks besides receipts (--verify; ferry(1)): blocks
 * fetched back through an intermediary other than the one that relayed
 * them, which finds them only if the DHT holds them. */
enum remote_verify {
	REMOTE_VERIFY_SAMPLE = 0, /* every manifest node and a random
				   * sample of the data blocks (default) */
	REMOTE_VERIFY_ALL,        /* every block; failing if none can */
	REMOTE_VERIFY_NONE,       /* receipts only */
};

struct remote_opts {
	const char *dir;         /* config directory; NULL: the default */
	const char *const *urls; /* --intermediary URLs, tried first */
	size_t n_urls;
	const char *cacert;        /* CA file; NULL: the system's */
	unsigned replication;      /* storing peers per block; 0: default */
	uint64_t lifetime_s;       /* how long they keep it; 0: default */
	unsigned receipt_wait_s;   /* receipts awaited; 0: default */
	unsigned timeout_s;        /* one HTTP exchange; 0: 30 */
	enum remote_verify verify; /* what a put fetches back */
	bool verbose;              /* say on stderr what happens */
};

/*
 * Opens the client: the config directory ($XDG_CONFIG_HOME/ferry/remote,
 * or ~/.config/ferry/remote), made mode 0700 if missing, with its key
 * and convergence secret (made mode 0600 if missing; looser modes are
 * refused). 0, or a negative errno with remote_open_error() saying why:
 * -EPERM (modes or owner), -EBADMSG (a malformed key file), -ENOMEM.
 */
int remote_open(const struct remote_opts *o, struct remote **ret);
/* The sentence of remote_open()'s last failure (a static buffer). */
const char *remote_open_error(void);
/* Closes and wipes. NULL is allowed. */
void remote_free(struct remote *rc);
/* A sentence naming the cause of the last failure, "" if none. */
const char *remote_error(const struct remote *rc);

/*
 * Puts the file at path: every block sealed and signed here, uploaded,
 * and its receipts checked; through another intermediary for the blocks
 * one did not get receipts for in time, or that gave a forged receipt
 * (which is then remembered as bad). Then the blocks the options' verify
 * names are fetched back through another intermediary than the one that
 * passed their receipts; one whose blocks are not found is remembered as
 * bad, and its blocks put again through the others. fn (may be NULL)
 * gets progress every progress_ms. 0 with *ret filled once every block
 * has its receipts (and was found, where checked), or: -ENOENT/-EISDIR/...
 * the file; -ESTALE it changed; -EHOSTUNREACH no intermediary answered;
 * -ETIMEDOUT receipts missing on every intermediary; -ENOLINK under
 * REMOTE_VERIFY_ALL, blocks no other intermediary could check; -ENOMEM.
 */
int remote_put(struct remote *rc, const char *path, uint32_t progress_ms,
    ferry_file_progress_fn *fn, void *cls, struct ferry_file_result *ret);

/*
 * Gets the file of uri into fd (a regular file open O_RDWR, truncated
 * here to the file's size), each block checked against its key and the
 * whole against its XXH128. 0 with *ret filled, or: -EINVAL a malformed
 * URI; -ENOENT a block no intermediary could fetch; -EBADMSG the file is
 * damaged; -EHOSTUNREACH no intermediary answered; a write's errno.
 */
int remote_get(struct remote *rc, const char *uri, int fd, uint32_t progress_ms,
    ferry_file_progress_fn *fn, void *cls, struct ferry_file_result *ret);

/* One entry of the receipt queue (ferry-intermediary(7) RECEIPTS). */
struct remote_entry {
	uint64_t cursor;
	bool done; /* "done", else "receipt" */
	uint8_t key[32];
	uint8_t put_hash[32];
	uint8_t storer_pk[32]; /* receipt */
	uint64_t expiry;       /* receipt */
	uint8_t sig[64];       /* receipt */
	char status[16];       /* done */
	uint32_t receipts;     /* done */
};

/* Called per entry with valid: whether the receipt's signature holds
 * (always true for "done", which is unsigned). */
typedef void remote_entry_fn(void *cls, const char *url,
    const struct remote_entry *e, bool valid);
/*
 * Takes the client's queue at the first intermediary that answers: every
 * entry past the cursor remembered for it is passed to fn, and
 * acknowledged (so never sent again). 0, -EHOSTUNREACH or -EBADMSG.
 */
int remote_receipts(struct remote *rc, remote_entry_fn *fn, void *cls);

/* An intermediary as listed. */
struct remote_imd {
	char url[REMOTE_URL_MAX];
	char peer[REMOTE_PEER_STRLEN + 1]; /* "" if not known */
	uint64_t expires;                  /* 0: not announced */
	bool self;                         /* the one that answered */
	bool bad;                          /* remembered as bad */
};
typedef void remote_imd_fn(void *cls, const struct remote_imd *imd);
/*
 * Lists the intermediaries: asks the first that answers for those of the
 * federation it knows, remembers them, and passes each to fn, with the
 * ones remembered as bad. 0 or -EHOSTUNREACH.
 */
int remote_intermediaries(struct remote *rc, remote_imd_fn *fn, void *cls);

#endif /* FERRY_REMOTE_REMOTE_H */
