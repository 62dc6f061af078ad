/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The client socket's credential check with a real ferryd and clients
 * that really run as other users (issue 6, "The service"): strangers are
 * closed, counted and logged with their uid, gid and pid even when the
 * socket's mode lets them connect; the socket's group, ALLOW_USERS and
 * ALLOW_GROUPS let clients in; SHUTDOWN is only for root, the daemon's
 * user and ADMIN_USERS / ADMIN_GROUPS; a reload re-judges connected
 * clients; and in a user namespace like systemd's PrivateUsers=yes, where
 * unmapped users all look like nobody, listing them admits no one. Needs
 * root (to become other users); skips otherwise.
 */
/* ctest: TIMEOUT=300 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include <ferry/client.h>

#include "asuser.h"
#include "harness.h"

/* Numeric ids: none needs an entry in /etc/passwd. */
#define NOBODY       65534
#define SOCK_GROUP   4400 /* [service] SOCKET_GROUP */
#define MEMBER       4401 /* has SOCK_GROUP as a supplementary group */
#define STRANGER     4403 /* in no group that matters */
#define LISTED_USER  4501 /* in ALLOW_USERS */
#define ADMIN_USER   4502 /* in ADMIN_USERS */
#define LISTED_GROUP 4600 /* ALLOW_GROUPS */
#define DAEMON_USER  4700 /* ferryd's own user, in the last tests */
#define UNMAPPED     1000 /* a user PrivateUsers= does not map */

/* What a client child saw. */
enum probe_result {
	PROBE_OK = 0,       /* the request succeeded */
	PROBE_CLOSED = 1,   /* the daemon closed the connection */
	PROBE_NOACCESS = 2, /* connect(): EACCES, the socket's mode */
	PROBE_DENIED = 3,   /* RESULT -EPERM */
	PROBE_OTHER = 4,
};

enum probe_action {
	PROBE_STATUS,
	PROBE_SHUTDOWN,
	PROBE_HOLD, /* STATUS, wait for the parent, STATUS again */
};

struct probe {
	const char *socket;
	enum probe_action action;
	int ready_w; /* PROBE_HOLD: written once connected */
	int go_r;    /* PROBE_HOLD: read before the second STATUS */
};

static struct harness *h;

static void
setup(void)
{
	ck_assert_int_eq(harness_new("svcpol", &h), 0);
}

static void
teardown(void)
{
	harness_free(h);
	h = NULL;
	asuser_reset();
}

static int
probe_status(struct ferry_client *c)
{
	struct ferry_status *st;
	int r = ferry_status(c, &st);

	if (r == 0)
		ferry_status_free(st);
	return r;
}

static int
probe_map(int r)
{
	switch (r) {
	case 0:
		return PROBE_OK;
	case -ECONNRESET:
		return PROBE_CLOSED;
	case -EPERM:
		return PROBE_DENIED;
	default:
		fprintf(stderr, "probe: %s\n", strerror(-r));
		return PROBE_OTHER;
	}
}

/* Runs in a child as another user. */
static int
probe_fn(void *cls)
{
	struct probe *p = cls;
	struct ferry_client *c;
	char b = 0;
	int r = ferry_client_open(p->socket, &c);

	if (r == -EACCES)
		return PROBE_NOACCESS;
	if (r < 0)
		return probe_map(r);
	ferry_client_set_timeout(c, 5000);
	if (p->action == PROBE_SHUTDOWN) {
		r = ferry_shutdown(c);
	} else {
		r = probe_status(c);
		if (r == 0 && p->action == PROBE_HOLD) {
			if (write(p->ready_w, "r", 1) != 1 ||
			    read(p->go_r, &b, 1) != 1)
				r = -EPIPE;
			else
				r = probe_status(c);
		}
	}
	ferry_client_close(c);
	return probe_map(r);
}

static struct asuser
user(uid_t uid, gid_t gid, gid_t group)
{
	struct asuser u = { .uid = uid, .gid = gid };

	if (group != 0) {
		u.groups[0] = group;
		u.n_groups = 1;
	}
	return u;
}

/* What a client running as u gets for action; *ret_pid (may be NULL)
 * is its pid, for the log line. */
static int
probe(const struct harness_daemon *d, const struct asuser *u,
    enum probe_action action, pid_t *ret_pid)
{
	struct probe p = { d->socket, action, -1, -1 };
	pid_t pid;

	ck_assert_int_eq(asuser_spawn(u, probe_fn, &p, &pid), 0);
	if (ret_pid != NULL)
		*ret_pid = pid;
	return asuser_wait(pid);
}

static uint64_t
stat_value(const struct harness_daemon *d, const char *name)
{
	struct ferry_client *c;
	struct ferry_stat *st;
	uint64_t v = UINT64_MAX;
	size_t n;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_stats(c, &st, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (strcmp(st[i].name, name) == 0)
			v = st[i].value;
	ferry_stats_free(st, n);
	ferry_client_close(c);
	ck_assert_msg(v != UINT64_MAX, "no counter %s", name);
	return v;
}

/* A daemon on the loopback test transport with the [service] lines
 * given, whose socket every user can reach (the first line of defence
 * then is only the socket's own mode). */
static struct harness_daemon *
start_daemon(const char *service)
{
	struct harness_daemon *d;
	const char *dir = getenv("FERRY_TEST_PLUGIN_DIR");

	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_plugin_dir(d,
	                     dir != NULL && *dir != '\0'
	                         ? dir
	                         : FERRY_TEST_PLUGIN_DIR_DEFAULT),
	    0);
	ck_assert_int_eq(harness_daemon_transports(d, "test"), 0);
	ck_assert_int_eq(harness_daemon_config(d, "[service]\n%s\n", service),
	    0);
	ck_assert_int_eq(asuser_open_daemon(d), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start");
	}
	return d;
}

/* Waits for the log line "<what> uid U gid G pid P". */
static void
assert_log(const struct harness_daemon *d, const char *what, long uid, long gid,
    long pid)
{
	char needle[256];

	(void)snprintf(needle, sizeof(needle), "%s uid %ld gid %ld pid %ld",
	    what, uid, gid, pid);
	if (harness_daemon_wait_log(d, needle, 5000) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("no log line with '%s'", needle);
	}
}

/* The default: a loosened mode lets a stranger connect, the credential
 * check closes it, counts it and names it; root is still served. */
START_TEST(test_stranger_refused)
{
	struct harness_daemon *d;
	struct asuser nobody = user(NOBODY, NOBODY, 0);
	uint64_t accepted;
	pid_t pid;

	if (!asuser_root_or_skip("test_stranger_refused"))
		return;
	d = start_daemon("SOCKET_MODE = 0666");
	accepted = stat_value(d, "service.clients_accepted");
	ck_assert_int_eq(probe(d, &nobody, PROBE_STATUS, &pid), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 1);
	/* Two STATS of ours since, the refused one not among them. */
	ck_assert_uint_eq(stat_value(d, "service.clients_accepted"),
	    accepted + 2);
	assert_log(d, "refused a client:", NOBODY, NOBODY, (long)pid);
	ck_assert_int_eq(probe(d, &nobody, PROBE_SHUTDOWN, NULL), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 2);
	ck_assert(harness_daemon_running(d));
}
END_TEST

/* The socket's group, with SOCKET_MODE 0660: its members pass both
 * lines; others are stopped by the mode, and by the credential check
 * once the mode is loosened behind the daemon's back. Members may not
 * SHUTDOWN. */
START_TEST(test_socket_group)
{
	struct harness_daemon *d;
	struct asuser member = user(MEMBER, MEMBER, SOCK_GROUP);
	struct asuser primary = user(MEMBER + 1, SOCK_GROUP, 0);
	struct asuser stranger = user(STRANGER, STRANGER, 0);
	struct stat st;
	pid_t pid;

	if (!asuser_root_or_skip("test_socket_group"))
		return;
	d = start_daemon("SOCKET_GROUP = 4400\nSOCKET_MODE = 0660");
	ck_assert_int_eq(stat(d->socket, &st), 0);
	ck_assert_uint_eq(st.st_gid, SOCK_GROUP);
	ck_assert_uint_eq(st.st_mode & 0777, 0660);
	ck_assert_int_eq(probe(d, &member, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &primary, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &stranger, PROBE_STATUS, NULL),
	    PROBE_NOACCESS);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 0);
	ck_assert_int_eq(chmod(d->socket, 0666), 0);
	ck_assert_int_eq(probe(d, &stranger, PROBE_STATUS, NULL), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 1);
	/* A member's SHUTDOWN would stop the daemon for everyone. */
	ck_assert_int_eq(probe(d, &member, PROBE_SHUTDOWN, &pid), PROBE_DENIED);
	ck_assert_uint_eq(stat_value(d, "service.requests_denied"), 1);
	assert_log(d, "refused SHUTDOWN from", MEMBER, MEMBER, (long)pid);
	ck_assert(harness_daemon_running(d));
}
END_TEST

/* A SOCKET_MODE that gives the group nothing is the intent the check
 * keeps, whatever the file's mode becomes. */
START_TEST(test_mode_without_group)
{
	struct harness_daemon *d;
	struct asuser member = user(MEMBER, MEMBER, SOCK_GROUP);

	if (!asuser_root_or_skip("test_mode_without_group"))
		return;
	d = start_daemon("SOCKET_GROUP = 4400\nSOCKET_MODE = 0600");
	ck_assert_int_eq(probe(d, &member, PROBE_STATUS, NULL), PROBE_NOACCESS);
	ck_assert_int_eq(chmod(d->socket, 0666), 0);
	ck_assert_int_eq(probe(d, &member, PROBE_STATUS, NULL), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 1);
}
END_TEST

/* ALLOW_USERS (by name and number), ALLOW_GROUPS and ADMIN_USERS. */
START_TEST(test_allow_and_admin)
{
	struct harness_daemon *d;
	struct asuser nobody = user(NOBODY, NOBODY, 0);
	struct asuser listed = user(LISTED_USER, LISTED_USER, 0);
	struct asuser grouped =
	    user(LISTED_GROUP + 1, LISTED_GROUP + 1, LISTED_GROUP);
	struct asuser admin = user(ADMIN_USER, ADMIN_USER, 0);
	struct asuser stranger = user(STRANGER, STRANGER, 0);
	int status;

	if (!asuser_root_or_skip("test_allow_and_admin"))
		return;
	d = start_daemon("SOCKET_MODE = 0666\n"
	                 "ALLOW_USERS = nobody, 4501\n"
	                 "ALLOW_GROUPS = 4600\n"
	                 "ADMIN_USERS = 4502\n");
	ck_assert_int_eq(probe(d, &nobody, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &listed, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &grouped, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &stranger, PROBE_STATUS, NULL), PROBE_CLOSED);
	ck_assert_int_eq(probe(d, &listed, PROBE_SHUTDOWN, NULL), PROBE_DENIED);
	ck_assert_int_eq(probe(d, &grouped, PROBE_SHUTDOWN, NULL),
	    PROBE_DENIED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 1);
	ck_assert_uint_eq(stat_value(d, "service.requests_denied"), 2);
	ck_assert(harness_daemon_running(d));
	ck_assert_int_eq(probe(d, &admin, PROBE_SHUTDOWN, NULL), PROBE_OK);
	ck_assert_int_eq(harness_daemon_wait_exit(d, 10000, &status), 0);
	ck_assert_int_eq(status, 0);
}
END_TEST

/* A reload that takes a user off ALLOW_USERS closes its connection. */
START_TEST(test_reload_rechecks)
{
	struct harness_daemon *d;
	struct asuser listed = user(LISTED_USER, LISTED_USER, 0);
	int ready[2], go[2];
	struct probe p;
	pid_t pid;
	char b;

	if (!asuser_root_or_skip("test_reload_rechecks"))
		return;
	d = start_daemon("SOCKET_MODE = 0666\nALLOW_USERS = 4501\n");
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(go), 0);
	p = (struct probe){ d->socket, PROBE_HOLD, ready[1], go[0] };
	ck_assert_int_eq(asuser_spawn(&listed, probe_fn, &p, &pid), 0);
	ck_assert_int_eq(read(ready[0], &b, 1), 1);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 0);
	ck_assert_int_eq(harness_daemon_config_clear(d), 0);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[service]\n"
	                     "SOCKET_MODE = 0666\n"),
	    0);
	ck_assert_int_eq(harness_daemon_reload(d), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_int_eq(asuser_wait(pid), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 1);
	(void)close(ready[0]);
	(void)close(ready[1]);
	(void)close(go[0]);
	(void)close(go[1]);
}
END_TEST

/* ferryd as an unprivileged user of its own: another process of that
 * user may SHUTDOWN (it could kill the daemon anyway), a member of the
 * daemon's group may connect but not SHUTDOWN, root may connect. */
START_TEST(test_daemon_user)
{
	struct harness_daemon *d;
	struct asuser self = user(DAEMON_USER, DAEMON_USER, 0);
	struct asuser member = user(MEMBER, MEMBER, DAEMON_USER);
	const char *dir = getenv("FERRY_TEST_PLUGIN_DIR");
	struct stat st;
	int status;

	if (!asuser_root_or_skip("test_daemon_user"))
		return;
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_plugin_dir(d,
	                     dir != NULL && *dir != '\0'
	                         ? dir
	                         : FERRY_TEST_PLUGIN_DIR_DEFAULT),
	    0);
	ck_assert_int_eq(harness_daemon_transports(d, "test"), 0);
	ck_assert_int_eq(asuser_daemon(d, &self), 0);
	ck_assert_int_eq(asuser_open_daemon(d), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start as uid %d", DAEMON_USER);
	}
	/* It is that user, and the socket is its group's (mode 0660). */
	ck_assert_int_eq(stat(d->socket, &st), 0);
	ck_assert_uint_eq(st.st_uid, DAEMON_USER);
	ck_assert_uint_eq(st.st_gid, DAEMON_USER);
	ck_assert_int_eq(probe(d, &member, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &member, PROBE_SHUTDOWN, NULL), PROBE_DENIED);
	ck_assert_uint_eq(stat_value(d, "service.requests_denied"), 1);
	ck_assert_int_eq(probe(d, &self, PROBE_SHUTDOWN, NULL), PROBE_OK);
	ck_assert_int_eq(harness_daemon_wait_exit(d, 10000, &status), 0);
	ck_assert_int_eq(status, 0);
}
END_TEST

/* systemd's PrivateUsers=yes, as the shipped unit sets it: ferryd sees
 * only root and its own user and group. Members of its group are still
 * let in (SO_PEERGROUPS shows the mapped group); ALLOW_USERS naming an
 * unmapped user or nobody is dropped with a warning, since every unmapped
 * client appears as nobody and would be let in with it. */
START_TEST(test_private_users)
{
	struct harness_daemon *d;
	struct asuser self = user(DAEMON_USER, DAEMON_USER, 0);
	struct asuser member = user(MEMBER, MEMBER, DAEMON_USER);
	struct asuser unmapped = user(UNMAPPED, UNMAPPED, 0);
	struct asuser nobody = user(NOBODY, NOBODY, 0);
	const char *dir = getenv("FERRY_TEST_PLUGIN_DIR");
	pid_t pid;

	if (!asuser_root_or_skip("test_private_users"))
		return;
	self.private_users = true;
	ck_assert_int_eq(harness_daemon_new(h, &d), 0);
	ck_assert_int_eq(harness_daemon_plugin_dir(d,
	                     dir != NULL && *dir != '\0'
	                         ? dir
	                         : FERRY_TEST_PLUGIN_DIR_DEFAULT),
	    0);
	ck_assert_int_eq(harness_daemon_transports(d, "test"), 0);
	ck_assert_int_eq(harness_daemon_config(d,
	                     "[service]\n"
	                     "SOCKET_MODE = 0666\n"
	                     "ALLOW_USERS = 1000 nobody\n"),
	    0);
	ck_assert_int_eq(asuser_daemon(d, &self), 0);
	ck_assert_int_eq(asuser_open_daemon(d), 0);
	if (harness_daemon_start_ready(d) != 0) {
		harness_dump_logs(h);
		ck_abort_msg("ferryd did not start in a user namespace");
	}
	ck_assert(harness_daemon_log_has(d,
	    "ALLOW_USERS: uid 1000 cannot be told apart"));
	ck_assert(harness_daemon_log_has(d,
	    "ALLOW_USERS: uid 65534 cannot be told apart"));
	ck_assert_int_eq(probe(d, &member, PROBE_STATUS, NULL), PROBE_OK);
	ck_assert_int_eq(probe(d, &unmapped, PROBE_STATUS, &pid), PROBE_CLOSED);
	/* The kernel showed it as nobody. */
	assert_log(d, "refused a client:", NOBODY, NOBODY, (long)pid);
	ck_assert_int_eq(probe(d, &nobody, PROBE_STATUS, NULL), PROBE_CLOSED);
	ck_assert_uint_eq(stat_value(d, "service.clients_refused"), 2);
}
END_TEST

static Suite *
service_policy_suite(void)
{
	Suite *s = suite_create("service_policy");
	TCase *tc = tcase_create("service_policy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stranger_refused);
	tcase_add_test(tc, test_socket_group);
	tcase_add_test(tc, test_mode_without_group);
	tcase_add_test(tc, test_allow_and_admin);
	tcase_add_test(tc, test_reload_rechecks);
	tcase_add_test(tc, test_daemon_user);
	tcase_add_test(tc, test_private_users);
	suite_add_tcase(s, tc);
	return s;
}

int
main(int argc, char **argv)
{
	SRunner *sr;
	int failed;

	/* This program also starts ferryd in a user namespace. */
	asuser_main(argc, argv);
	sr = srunner_create(service_policy_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
