/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Who may use the client socket, service layer (issue 6, "The service"):
 * the [service] ALLOW_* and ADMIN_* keys resolved to ids, the credentials
 * the kernel recorded for a client (SO_PEERCRED, SO_PEERGROUPS), and the
 * verdict on them. The socket's file mode is the first line of defence;
 * this check is the second, and holds when the mode was loosened or the
 * socket is reached some other way (a bind mount into a container).
 */
#ifndef FERRY_SERVICE_POLICY_H
#define FERRY_SERVICE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/cfg.h"

#define POLICY_IDS_MAX    64 /* names in one ALLOW_ or ADMIN_ key */
#define POLICY_RANGES_MAX 64 /* lines of an id map taken into account */

/* What a client may do; ordered, each level includes the one below. */
enum policy_level {
	POLICY_REFUSED = 0, /* closed as soon as it is accepted */
	POLICY_CLIENT,      /* every request except SHUTDOWN */
	POLICY_ADMIN,       /* every request */
};

/* One ALLOW_ or ADMIN_ key, resolved to numeric ids. */
struct policy_ids {
	size_t n;
	uint32_t id[POLICY_IDS_MAX];
};

/* The ids that are real inside this process's user namespace, from
 * /proc/self/uid_map or gid_map. Outside a restricted namespace (systemd's
 * PrivateUsers=) every id is; inside it, a client whose id is not mapped
 * shows up as the overflow id (nobody, 65534) and cannot be told apart. */
struct policy_idmap {
	size_t n;                          /* ranges below */
	uint32_t first[POLICY_RANGES_MAX]; /* first id of a range */
	uint32_t count[POLICY_RANGES_MAX]; /* its length */
	uint64_t total;                    /* ids mapped in all ranges */
	uint32_t overflow;                 /* what unmapped ids appear as */
};

struct policy {
	uid_t self_uid;       /* the daemon's own: always POLICY_ADMIN */
	bool group_write;     /* SOCKET_MODE lets the socket's group in */
	bool have_socket_gid; /* socket_gid is known */
	gid_t socket_gid;     /* group of the socket file */
	struct policy_ids allow_users;  /* ALLOW_USERS */
	struct policy_ids allow_groups; /* ALLOW_GROUPS */
	struct policy_ids admin_users;  /* ADMIN_USERS */
	struct policy_ids admin_groups; /* ADMIN_GROUPS */
};

/* A client's credentials as the kernel recorded them at connect(). */
struct policy_cred {
	pid_t pid;
	uid_t uid;     /* effective user */
	gid_t gid;     /* effective group */
	gid_t *groups; /* supplementary groups (malloc), NULL if none */
	size_t n_groups;
};

/*
 * Reads ALLOW_USERS, ALLOW_GROUPS, ADMIN_USERS and ADMIN_GROUPS of
 * [service] (names or ids; a name must exist) for a socket created with
 * socket_mode. Ids this process's user namespace cannot see are dropped
 * with a warning. Logs each problem; 0 or -EINVAL. The socket's group is
 * not known yet: see policy_set_socket_gid().
 */
int policy_parse(struct cfg *cfg, mode_t socket_mode, struct policy *ret);
/* Records the socket file's group, unless the user namespace cannot see
 * it (logged), in which case group membership grants nothing. */
void policy_set_socket_gid(struct policy *p, gid_t gid);
/* The level of a client with credentials c. */
enum policy_level policy_check(const struct policy *p,
    const struct policy_cred *c);

/* Parses the text of an id map ("inside outside count" lines) with the
 * overflow id unmapped ids appear as. 0, or -EINVAL (nothing written). */
int policy_idmap_parse(const char *text, uint32_t overflow,
    struct policy_idmap *ret);
/* This process's uid map (groups false) or gid map. Without /proc, every
 * id counts as mapped. */
void policy_idmap_load(bool groups, struct policy_idmap *ret);
/* True if a client can really have id: it is mapped, and it is not the
 * overflow id of a namespace that leaves ids unmapped. */
bool policy_idmap_usable(const struct policy_idmap *m, uint32_t id);
/* Removes the ids m cannot see from ids, logging a warning for each that
 * names key (and "uid" or "gid"). */
void policy_ids_filter(struct policy_ids *ids, const struct policy_idmap *m,
    const char *key, bool groups);

/* Fills *ret from the connected UNIX socket fd: SO_PEERCRED, and
 * SO_PEERGROUPS where the kernel has it. 0 or a negative errno (nothing
 * to free then). */
int policy_cred_get(int fd, struct policy_cred *ret);
/* Frees the groups; c stays valid with none. NULL is allowed. */
void policy_cred_done(struct policy_cred *c);

#endif /* FERRY_SERVICE_POLICY_H */
