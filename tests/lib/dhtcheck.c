/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The DHT integration tests' view of the network (see dhtcheck.h). */
#include "dhtcheck.h"

#include <stdlib.h>
#include <string.h>

#include <check.h>

struct ferry_client *
dhtcheck_client(struct harness_daemon *dd)
{
	struct ferry_client *c;

	ck_assert_int_eq(harness_daemon_client(dd, &c), 0);
	return c;
}

struct ferry_dht_status *
dhtcheck_status(struct harness_daemon *dd)
{
	struct ferry_client *c = dhtcheck_client(dd);
	struct ferry_dht_status *st;

	ck_assert_int_eq(ferry_dht_status(c, &st), 0);
	ferry_client_close(c);
	return st;
}

struct dhtcheck_figures
dhtcheck_figures(struct harness_daemon *dd)
{
	struct ferry_dht_status *st = dhtcheck_status(dd);
	struct dhtcheck_figures f = { st->entries, st->blocks };

	ferry_dht_status_free(st);
	return f;
}

/* qsort_r order of ids by their distance to the key at cls. */
static int
dhtcheck_by_distance(const void *a, const void *b, void *cls)
{
	const struct ferry_dht_key *key = cls;
	const uint8_t *x = a, *y = b;

	for (size_t i = 0; i < FERRY_DHT_KEY_LEN; i++) {
		uint8_t dx = x[i] ^ key->bytes[i];
		uint8_t dy = y[i] ^ key->bytes[i];

		if (dx != dy)
			return dx < dy ? -1 : 1;
	}
	return 0;
}

size_t
dhtcheck_closest(struct harness_daemon *const *d, size_t n,
    const struct ferry_dht_key *key, struct ferry_peer_id *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (harness_daemon_running(d[i]))
			out[m++] = d[i]->id;
	qsort_r(out, m, sizeof(out[0]), dhtcheck_by_distance, (void *)key);
	return m;
}

int
dhtcheck_index_of(struct harness_daemon *const *d, size_t n,
    const struct ferry_peer_id *id)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp(&d[i]->id, id, sizeof(*id)) == 0)
			return (int)i;
	return -1;
}

void
dhtcheck_wait_tables(struct harness *h, struct harness_daemon *const *d,
    size_t n, uint32_t want, uint64_t timeout_ms)
{
	uint64_t end = harness_now_ms() + timeout_ms;
	uint32_t got;

	for (size_t i = 0; i < n; i++)
		while ((got = dhtcheck_figures(d[i]).entries) < want) {
			if (harness_now_ms() > end) {
				harness_dump_logs(h);
				ck_abort_msg("d%u's table holds %u of %u peers",
				    d[i]->index, got, want);
			}
			harness_sleep_ms(100);
		}
}
