/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client socket's credential policy (see policy.h), service layer:
 * user and group names resolved once per configuration, the user
 * namespace's id maps, SO_PEERCRED and SO_PEERGROUPS, and the verdict.
 */
#define LOG_TAG "service"
#include "service/policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"

#define POLICY_OVERFLOW_ID 65534       /* the kernel's default overflow id */
#define POLICY_ID_LAST     4294967294u /* (uint32_t)-1 is no id */

/* A user (groups false) or group by name or number. 0, -ENOENT (no such
 * name) or -ERANGE (a number that is no id). */
static int
policy_resolve(const char *name, bool groups, uint32_t *ret)
{
	char buf[4096], *end;
	unsigned long long v;
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;

	if (isdigit((unsigned char)name[0])) {
		errno = 0;
		v = strtoull(name, &end, 10);
		if (*end != '\0' || errno != 0 || v > POLICY_ID_LAST)
			return -ERANGE;
		*ret = (uint32_t)v;
		return 0;
	}
	if (groups) {
		if (getgrnam_r(name, &gr, buf, sizeof(buf), &grr) != 0 ||
		    grr == NULL)
			return -ENOENT;
		*ret = (uint32_t)grr->gr_gid;
	} else {
		if (getpwnam_r(name, &pw, buf, sizeof(buf), &pwr) != 0 ||
		    pwr == NULL)
			return -ENOENT;
		*ret = (uint32_t)pwr->pw_uid;
	}
	return 0;
}

static int
policy_parse_ids(struct cfg *cfg, const char *key, bool groups,
    struct policy_ids *ret)
{
	const char *list = cfg_get(cfg, "service", key), *word;
	char name[256];
	size_t len;
	int r;

	ret->n = 0;
	while (list != NULL && cfg_next_word(&list, &word, &len)) {
		if (len >= sizeof(name))
			return cfg_fail(cfg, "service", key,
			    "'%.40s...' is too long", word);
		memcpy(name, word, len);
		name[len] = '\0';
		if (ret->n == POLICY_IDS_MAX)
			return cfg_fail(cfg, "service", key,
			    "more than %d names", POLICY_IDS_MAX);
		r = policy_resolve(name, groups, &ret->id[ret->n]);
		if (r == -ERANGE)
			return cfg_fail(cfg, "service", key,
			    "'%s' is not a valid %s", name,
			    groups ? "gid" : "uid");
		if (r < 0)
			return cfg_fail(cfg, "service", key,
			    "no %s called '%s'", groups ? "group" : "user",
			    name);
		ret->n++;
	}
	return 0;
}

int
policy_parse(struct cfg *cfg, mode_t socket_mode, struct policy *ret)
{
	static const struct {
		const char *key;
		bool groups;
		size_t off;
	} keys[] = {
		{ "ALLOW_USERS", false, offsetof(struct policy, allow_users) },
		{ "ALLOW_GROUPS", true, offsetof(struct policy, allow_groups) },
		{ "ADMIN_USERS", false, offsetof(struct policy, admin_users) },
		{ "ADMIN_GROUPS", true, offsetof(struct policy, admin_groups) },
	};
	struct policy_idmap uids, gids;
	struct policy p;
	int r = 0;

	memset(&p, 0, sizeof(p));
	p.self_uid = geteuid();
	/* The configured mode is the intent: a group the mode does not let
	 * write (connect) gets nothing from this check either. */
	p.group_write = (socket_mode & 0020) != 0;
	policy_idmap_load(false, &uids);
	policy_idmap_load(true, &gids);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct policy_ids *ids =
		    (struct policy_ids *)(void *)((char *)&p + keys[i].off);

		if (policy_parse_ids(cfg, keys[i].key, keys[i].groups, ids) <
		    0) {
			log_err("%s", cfg_error(cfg));
			r = -EINVAL;
			continue;
		}
		policy_ids_filter(ids, keys[i].groups ? &gids : &uids,
		    keys[i].key, keys[i].groups);
	}
	if (r == 0)
		*ret = p;
	return r;
}

void
policy_set_socket_gid(struct policy *p, gid_t gid)
{
	struct policy_idmap gids;

	policy_idmap_load(true, &gids);
	p->have_socket_gid = policy_idmap_usable(&gids, (uint32_t)gid);
	p->socket_gid = gid;
	if (!p->have_socket_gid && p->group_write)
		log_warn(
		    "the client socket's group %lu cannot be told apart from unmapped groups in this user namespace (systemd's PrivateUsers=?): its members get no access by group",
		    (unsigned long)gid);
}

static bool
policy_ids_has(const struct policy_ids *ids, uint32_t id)
{
	for (size_t i = 0; i < ids->n; i++)
		if (ids->id[i] == id)
			return true;
	return false;
}

/* True if the client's effective or a supplementary group is gid. */
static bool
policy_cred_in_group(const struct policy_cred *c, gid_t gid)
{
	if (c->gid == gid)
		return true;
	for (size_t i = 0; i < c->n_groups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

static bool
policy_cred_in_any(const struct policy_cred *c, const struct policy_ids *ids)
{
	for (size_t i = 0; i < ids->n; i++)
		if (policy_cred_in_group(c, (gid_t)ids->id[i]))
			return true;
	return false;
}

enum policy_level
policy_check(const struct policy *p, const struct policy_cred *c)
{
	/* root and the daemon's own user can stop or read the daemon by
	 * other means anyway; refusing them would protect nothing. */
	if (c->uid == 0 || c->uid == p->self_uid)
		return POLICY_ADMIN;
	if (policy_ids_has(&p->admin_users, (uint32_t)c->uid) ||
	    policy_cred_in_any(c, &p->admin_groups))
		return POLICY_ADMIN;
	if (policy_ids_has(&p->allow_users, (uint32_t)c->uid) ||
	    policy_cred_in_any(c, &p->allow_groups))
		return POLICY_CLIENT;
	if (p->group_write && p->have_socket_gid &&
	    policy_cred_in_group(c, p->socket_gid))
		return POLICY_CLIENT;
	return POLICY_REFUSED;
}

/* --- user namespace id maps ---------------------------------------------- */

/* One unsigned number after blanks; false if there is none. */
static bool
policy_next_number(const char **s, uint64_t *ret)
{
	const char *p = *s;
	uint64_t v = 0;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*s = p;
	*ret = v;
	return true;
}

int
policy_idmap_parse(const char *text, uint32_t overflow,
    struct policy_idmap *ret)
{
	struct policy_idmap m;
	const char *p = text;
	uint64_t inside, outside, count;

	memset(&m, 0, sizeof(m));
	m.overflow = overflow;
	while (*p != '\0') {
		if (*p == '\n') {
			p++;
			continue;
		}
		if (!policy_next_number(&p, &inside) ||
		    !policy_next_number(&p, &outside) ||
		    !policy_next_number(&p, &count) ||
		    inside + count > (uint64_t)UINT32_MAX + 1)
			return -EINVAL;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '\n' && *p != '\0')
			return -EINVAL;
		/* Ranges past the limit count as unmapped: their ids are
		 * then dropped, which errs on the safe side. */
		if (m.n < POLICY_RANGES_MAX && count > 0) {
			m.first[m.n] = (uint32_t)inside;
			m.count[m.n] = (uint32_t)count;
			m.total += count;
			m.n++;
		}
	}
	*ret = m;
	return 0;
}

/* Reads a small /proc file (whose size stat() does not tell) into buf. */
static int
policy_read_proc(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	(void)close(fd);
	buf[len] = '\0';
	return 0;
}

void
policy_idmap_load(bool groups, struct policy_idmap *ret)
{
	char text[8192];
	uint32_t overflow = POLICY_OVERFLOW_ID;
	unsigned long v;

	/* systemd's ProcSubset=pid hides /proc/sys: the default then. */
	if (policy_read_proc(groups ? "/proc/sys/kernel/overflowgid"
	                            : "/proc/sys/kernel/overflowuid",
	        text, sizeof(text)) == 0 &&
	    sscanf(text, "%lu", &v) == 1 && v <= POLICY_ID_LAST)
		overflow = (uint32_t)v;
	if (policy_read_proc(groups ? "/proc/self/gid_map"
	                            : "/proc/self/uid_map",
	        text, sizeof(text)) == 0 &&
	    policy_idmap_parse(text, overflow, ret) == 0)
		return;
	/* No /proc (or no user namespaces): every id is what it says. */
	log_debug("cannot read the %s map; taking every id as mapped",
	    groups ? "gid" : "uid");
	(void)policy_idmap_parse("0 0 4294967295\n", overflow, ret);
}

bool
policy_idmap_usable(const struct policy_idmap *m, uint32_t id)
{
	bool mapped = false;

	for (size_t i = 0; i < m->n && !mapped; i++)
		mapped = id >= m->first[i] && id - m->first[i] < m->count[i];
	if (!mapped)
		return false;
	/* With every id mapped nobody appears as the overflow id but the
	 * one who really has it. */
	return m->total >= (uint64_t)POLICY_ID_LAST + 1 || id != m->overflow;
}

void
policy_ids_filter(struct policy_ids *ids, const struct policy_idmap *m,
    const char *key, bool groups)
{
	size_t o = 0;

	for (size_t i = 0; i < ids->n; i++) {
		if (policy_idmap_usable(m, ids->id[i])) {
			ids->id[o++] = ids->id[i];
			continue;
		}
		log_warn(
		    "[service] %s: %s %lu cannot be told apart from unmapped ids in this user namespace (systemd's PrivateUsers=?); ignored",
		    key, groups ? "gid" : "uid", (unsigned long)ids->id[i]);
	}
	ids->n = o;
}

/* --- credentials ---------------------------------------------------------- */

static int
policy_cred_groups(int fd, struct policy_cred *c)
{
	socklen_t len = 32 * sizeof(gid_t);
	gid_t *g = NULL, *ng;
	int err = 0;

	/* The kernel says how much room it needs when it has too little;
	 * the set is fixed at connect(), so one retry suffices. */
	for (int tries = 0; tries < 2; tries++) {
		ng = realloc(g, len > 0 ? len : sizeof(gid_t));
		if (ng == NULL) {
			free(g);
			return -ENOMEM;
		}
		g = ng;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) == 0) {
			c->n_groups = len / sizeof(gid_t);
			c->groups = c->n_groups > 0 ? g : NULL;
			if (c->groups == NULL)
				free(g);
			return 0;
		}
		err = errno;
		if (err != ERANGE)
			break;
	}
	free(g);
	/* Before Linux 4.13: the effective group is all there is. */
	return err == ENOPROTOOPT ? 0 : -err;
}

int
policy_cred_get(int fd, struct policy_cred *ret)
{
	struct policy_cred c;
	struct ucred uc;
	socklen_t len = sizeof(uc);
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
		return -errno;
	if (len != sizeof(uc))
		return -EIO;
	memset(&c, 0, sizeof(c));
	c.pid = uc.pid;
	c.uid = uc.uid;
	c.gid = uc.gid;
	r = policy_cred_groups(fd, &c);
	if (r < 0)
		return r;
	*ret = c;
	return 0;
}

void
policy_cred_done(struct policy_cred *c)
{
	if (c == NULL)
		return;
	free(c->groups);
	c->groups = NULL;
	c->n_groups = 0;
}
