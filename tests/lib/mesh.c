/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Helpers for integration tests with networks of daemons (see mesh.h). */
#include "mesh.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

static void
mesh_fail(struct harness *h, const char *what)
{
	if (h != NULL)
		harness_dump_logs(h);
	ck_abort_msg("%s", what);
}

char *
mesh_hello(struct harness_daemon *d)
{
	struct ferry_client *c;
	char *uri = NULL;
	int r;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	r = ferry_hello(c, &uri);
	ferry_client_close(c);
	ck_assert_msg(r == 0, "ferry_hello: %s", strerror(-r));
	return uri;
}

void
mesh_start(struct harness *h, struct harness_daemon **d, size_t n,
    const char *transports, const char *extra)
{
	char *uri = NULL;

	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(harness_daemon_new(h, &d[i]), 0);
		ck_assert_int_eq(harness_daemon_transports(d[i], transports),
		    0);
		if (extra != NULL)
			ck_assert_int_eq(
			    harness_daemon_config(d[i], "%s\n", extra), 0);
		if (i > 0)
			ck_assert_int_eq(harness_daemon_config(d[i],
					     "[core]\nBOOTSTRAP = %s\n", uri),
			    0);
		if (harness_daemon_start_ready(d[i]) != 0)
			mesh_fail(h, "daemon did not start");
		if (i == 0)
			uri = mesh_hello(d[0]);
	}
	free(uri);
}

size_t
mesh_peer_count(struct harness_daemon *d)
{
	struct ferry_client *c;
	struct ferry_peer_info *pi;
	size_t n = 0;

	if (harness_daemon_client(d, &c) != 0)
		return 0;
	if (ferry_peers(c, &pi, &n) == 0)
		ferry_peers_free(pi);
	else
		n = 0;
	ferry_client_close(c);
	return n;
}

void
mesh_wait_peers(struct harness *h, struct harness_daemon *d, size_t n,
    int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;
	char msg[128];

	while (mesh_peer_count(d) < n) {
		if (harness_now_ms() > end) {
			(void)snprintf(msg, sizeof(msg),
			    "d%u has %zu peers, expected %zu", d->index,
			    mesh_peer_count(d), n);
			mesh_fail(h, msg);
		}
		harness_sleep_ms(50);
	}
}

const char *
mesh_peer_transport(struct harness_daemon *d, const struct ferry_peer_id *peer,
    char *buf, size_t size)
{
	struct ferry_client *c;
	struct ferry_peer_info *pi;
	size_t n = 0;

	buf[0] = '\0';
	if (harness_daemon_client(d, &c) != 0)
		return buf;
	if (ferry_peers(c, &pi, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (memcmp(&pi[i].id, peer, sizeof(*peer)) == 0)
				(void)snprintf(buf, size, "%s",
				    pi[i].transport);
		ferry_peers_free(pi);
	}
	ferry_client_close(c);
	return buf;
}

uint64_t
mesh_stat(struct harness_daemon *d, const char *name)
{
	struct ferry_client *c;
	struct ferry_stat *st;
	uint64_t v = 0;
	size_t n;

	if (harness_daemon_client(d, &c) != 0)
		return 0;
	if (ferry_stats(c, &st, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (strcmp(st[i].name, name) == 0)
				v = st[i].value;
		ferry_stats_free(st, n);
	}
	ferry_client_close(c);
	return v;
}

bool
mesh_wait_stat(struct harness_daemon *d, const char *name, uint64_t value,
    int timeout_ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)timeout_ms;

	while (mesh_stat(d, name) < value) {
		if (harness_now_ms() > end)
			return false;
		harness_sleep_ms(50);
	}
	return true;
}

struct ferry_client *
mesh_listener(struct harness_daemon *d)
{
	uint16_t type = MESH_APP_TYPE;
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(d, &c), 0);
	ck_assert_int_eq(ferry_register(c, &type, 1), 0);
	return c;
}

void
mesh_send(struct harness_daemon *from, struct harness_daemon *to,
    const void *data, size_t len)
{
	struct ferry_client *c;
	int r;

	ck_assert_int_eq(harness_daemon_client(from, &c), 0);
	r = ferry_send_confirmed(c, &to->id, MESH_APP_TYPE, data, len);
	ferry_client_close(c);
	ck_assert_msg(r == 0, "send d%u -> d%u: %s", from->index, to->index,
	    strerror(-r));
}

void
mesh_send_lossy(struct harness_daemon *from, struct harness_daemon *to,
    const void *data, size_t len)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(from, &c), 0);
	(void)ferry_send(c, &to->id, MESH_APP_TYPE, data, len);
	(void)ferry_flush(c);
	ferry_client_close(c);
}

void
mesh_expect(struct harness *h, struct ferry_client *c,
    struct harness_daemon *from, const void *data, size_t len,
    int timeout_ms)
{
	struct ferry_message m;
	int r = ferry_receive(c, &m, timeout_ms);

	if (r != 0)
		mesh_fail(h, "expected message did not arrive");
	ck_assert_mem_eq(&m.peer, &from->id, sizeof(m.peer));
	ck_assert_uint_eq(m.type, MESH_APP_TYPE);
	ck_assert_uint_eq(m.len, len);
	ck_assert_int_eq(memcmp(m.data, data, len), 0);
}

void
mesh_drain(struct ferry_client *c, int quiet_ms)
{
	struct ferry_message m;

	while (ferry_receive(c, &m, quiet_ms) == 0)
		;
}

void
mesh_reload(struct harness_daemon *d)
{
	ck_assert_int_eq(harness_daemon_reload(d), 0);
}
