/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client request table, service layer: for each request type its
 * name, the decoder of its layout, its handler and the least policy
 * level that may use it, in one place, so that a new request is one
 * line in its family's table. A family is the requests that one layer
 * answers: the message layer's (requests.c), the DHT's
 * (requests_dht.c) and the storage layer's (requests_storage.c).
 */
#ifndef FERRY_SERVICE_REQUESTS_H
#define FERRY_SERVICE_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "service/msgparse.h"
#include "service/policy.h"

struct client;

/* Handles one decoded request. 0, 1 if the client now blocks on
 * back-pressure (the frame stays unconsumed), or negative: cut it off
 * (conn_end). */
typedef int requests_fn(struct client *c, const struct msg_req *req);

struct request_kind {
	uint16_t type;              /* FERRY_C_* */
	const char *name;           /* for logs, "STATUS" */
	msgparse_decode_fn *decode; /* checks the layout */
	requests_fn *handle;
	enum policy_level level; /* least level that may ask */
};

/* The requests of one layer, in one table. */
struct request_family {
	const char *name;                 /* "base", "dht" */
	const struct request_kind *kinds; /* its table */
	size_t n;                         /* entries in it */
};

/* The DHT's family (requests_dht.c). */
extern const struct request_family requests_dht_family;
/* The storage layer's family (requests_storage.c). */
extern const struct request_family requests_storage_family;

/* The families the service answers: i < requests_family_count(). */
size_t requests_family_count(void);
const struct request_family *requests_family(size_t i);

/* The kind of request of type, or NULL if type is not a request. */
const struct request_kind *requests_kind(uint16_t type);

/*
 * Looks f's type up and decodes it: 0 with *ret filled and *ret_kind
 * (may be NULL) set, -EOPNOTSUPP for a type that is not a request
 * (answer with RESULT), or the decoder's -EBADMSG / -EMSGSIZE.
 */
int requests_decode(const struct msg_frame *f,
    const struct request_kind **ret_kind, struct msg_req *ret);

#endif /* FERRY_SERVICE_REQUESTS_H */
