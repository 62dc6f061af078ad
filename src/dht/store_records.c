/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The records a storing peer keeps (see store_records.h), dht layer: the
 * table dht_records in the block store's file, one row per topic and
 * signer. A put decides by dhtrec_admit() inside the store's write
 * transaction, from what the table holds then, so that two puts to one
 * topic queued together cannot both take its last place. Expired rows
 * are dropped a batch at a time by the puts (and ignored by everything
 * before that).
 *
 * Statements are prepared inside each job, as the transfers' (storage
 * layer, xfer_db.c) are: the connection is the store's, and nothing of
 * ours may outlive a job on it.
 */
#include "dht/store_records.h"
#include "dht/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "lib/sqlfile.h"

/* Expired rows one put drops, at most. */
#define STORE_REC_EXPIRE_BATCH 64

static const char store_rec_schema[] =
    "CREATE TABLE IF NOT EXISTS dht_records("
    "  topic BLOB NOT NULL,"
    "  signer BLOB NOT NULL,"
    "  seq INTEGER NOT NULL,"
    "  expiry INTEGER NOT NULL,"
    "  value BLOB NOT NULL,"
    "  sig BLOB NOT NULL,"
    "  PRIMARY KEY(topic, signer)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS dht_records_expiry"
    "  ON dht_records(expiry);";

/* A put's or a list's work, the worker's between submission and the
 * callback; a copy of everything it needs. */
struct store_rec_job {
	struct dhtrec rec; /* put: value points to value */
	uint8_t value[DHTREC_VALUE_MAX];
	uint64_t now;
	uint64_t per_topic, total_max; /* put */
	store_done_fn *done;           /* put */
	size_t max;                    /* list */
	struct dhtrec *found;          /* list: max of them */
	uint8_t *values;               /* list: max * DHTREC_VALUE_MAX */
	size_t n_found;
	store_records_fn *got; /* list */
	void *cls;
};

static void
store_rec_job_free(struct store_rec_job *j)
{
	free(j->found);
	free(j->values);
	free(j);
}

static int
store_rec_prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret)
{
	int rc = sqlite3_prepare_v2(db, sql, -1, ret, NULL);

	return rc == SQLITE_OK ? 0 : sqlfile_errno(rc);
}

/* Steps s, which returns no rows, to its end, and finalises it. */
static int
store_rec_run(sqlite3_stmt *s)
{
	int rc = sqlite3_step(s);

	(void)sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : sqlfile_errno(rc);
}

static int
store_rec_schema_make(sqlite3 *db)
{
	int rc = sqlite3_exec(db, store_rec_schema, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sqlfile_errno(rc);
}

/* Binds ?1 topic, and ?2 signer if given. */
static int
store_rec_bind_key(sqlite3_stmt *s, const struct dhtrec *r, bool signer)
{
	int rc = sqlite3_bind_blob(s, 1, r->topic.b, DHTKEY_LEN, SQLITE_STATIC);

	if (rc == SQLITE_OK && signer)
		rc = sqlite3_bind_blob(s, 2, r->signer, FERRY_PUBKEY_LEN,
		    SQLITE_STATIC);
	return rc == SQLITE_OK ? 0 : sqlfile_errno(rc);
}

/* Drops a batch of expired rows. */
static int
store_rec_expire(sqlite3 *db, uint64_t now)
{
	sqlite3_stmt *s;
	int r = store_rec_prepare(db,
	    "DELETE FROM dht_records WHERE (topic, signer) IN (SELECT topic,"
	    " signer FROM dht_records WHERE expiry <= ?1 ORDER BY expiry"
	    " LIMIT ?2)",
	    &s);

	if (r < 0)
		return r;
	if (sqlite3_bind_int64(s, 1, (int64_t)now) != SQLITE_OK ||
	    sqlite3_bind_int(s, 2, STORE_REC_EXPIRE_BATCH) != SQLITE_OK) {
		(void)sqlite3_finalize(s);
		return -EIO;
	}
	return store_rec_run(s);
}

/* The held record of r's signer at r's topic, into room. */
static int
store_rec_room_signer(sqlite3 *db, const struct dhtrec *r, uint64_t now,
    struct dhtrec_room *room)
{
	sqlite3_stmt *s;
	int rc,
	    err = store_rec_prepare(db,
	        "SELECT seq, sig FROM dht_records WHERE topic = ?1 AND"
	        " signer = ?2 AND expiry > ?3",
	        &s);

	if (err < 0)
		return err;
	err = store_rec_bind_key(s, r, true);
	if (err == 0 && sqlite3_bind_int64(s, 3, (int64_t)now) != SQLITE_OK)
		err = -EIO;
	if (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const void *sig = sqlite3_column_blob(s, 1);

		room->has_signer = true;
		room->signer_seq = (uint64_t)sqlite3_column_int64(s, 0);
		room->signer_same = room->signer_seq == r->seq && sig != NULL &&
		    sqlite3_column_bytes(s, 1) == FERRY_SIG_LEN &&
		    memcmp(sig, r->sig, FERRY_SIG_LEN) == 0;
	} else if (err == 0 && rc != SQLITE_DONE) {
		err = sqlfile_errno(rc);
	}
	(void)sqlite3_finalize(s);
	return err;
}

/* How many unexpired rows (of r's topic, if topic) and the earliest
 * expiry among them. */
static int
store_rec_count(sqlite3 *db, const struct dhtrec *r, uint64_t now, bool topic,
    uint64_t *ret_n, uint64_t *ret_first)
{
	sqlite3_stmt *s;
	int rc,
	    err = store_rec_prepare(db,
	        topic ? "SELECT count(*), min(expiry) FROM dht_records WHERE"
	                " topic = ?1 AND expiry > ?2"
	              : "SELECT count(*), min(expiry) FROM dht_records WHERE"
	                " expiry > ?2",
	        &s);

	if (err < 0)
		return err;
	if (topic)
		err = store_rec_bind_key(s, r, false);
	if (err == 0 && sqlite3_bind_int64(s, 2, (int64_t)now) != SQLITE_OK)
		err = -EIO;
	if (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		*ret_n = (uint64_t)sqlite3_column_int64(s, 0);
		*ret_first = (uint64_t)sqlite3_column_int64(s, 1);
	} else if (err == 0) {
		err = sqlfile_errno(rc);
	}
	(void)sqlite3_finalize(s);
	return err;
}

/* Drops the earliest expiring row, of r's topic if topic. */
static int
store_rec_evict(sqlite3 *db, const struct dhtrec *r, bool topic)
{
	sqlite3_stmt *s;
	int err = store_rec_prepare(db,
	    topic ? "DELETE FROM dht_records WHERE (topic, signer) IN (SELECT"
	            " topic, signer FROM dht_records WHERE topic = ?1 ORDER"
	            " BY expiry LIMIT 1)"
	          : "DELETE FROM dht_records WHERE (topic, signer) IN (SELECT"
	            " topic, signer FROM dht_records ORDER BY expiry LIMIT 1)",
	    &s);

	if (err < 0)
		return err;
	if (topic && (err = store_rec_bind_key(s, r, false)) < 0) {
		(void)sqlite3_finalize(s);
		return err;
	}
	return store_rec_run(s);
}

/* Writes r's row, replacing its signer's. */
static int
store_rec_write(sqlite3 *db, const struct dhtrec *r)
{
	static const uint8_t none;
	sqlite3_stmt *s;
	int err = store_rec_prepare(db,
	    "INSERT OR REPLACE INTO dht_records(topic, signer, seq, expiry,"
	    " value, sig) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	    &s);

	if (err < 0)
		return err;
	err = store_rec_bind_key(s, r, true);
	if (err == 0 &&
	    (sqlite3_bind_int64(s, 3, (int64_t)r->seq) != SQLITE_OK ||
	        sqlite3_bind_int64(s, 4, (int64_t)r->expiry) != SQLITE_OK ||
	        sqlite3_bind_blob(s, 5, r->value_len > 0 ? r->value : &none,
	            (int)r->value_len, SQLITE_STATIC) != SQLITE_OK ||
	        sqlite3_bind_blob(s, 6, r->sig, FERRY_SIG_LEN, SQLITE_STATIC) !=
	            SQLITE_OK))
		err = -EIO;
	if (err < 0) {
		(void)sqlite3_finalize(s);
		return err;
	}
	return store_rec_run(s);
}

/* What the table holds where j's record is to go. */
static int
store_rec_room(sqlite3 *db, const struct store_rec_job *j,
    struct dhtrec_room *room)
{
	int err;

	memset(room, 0, sizeof(*room));
	err = store_rec_room_signer(db, &j->rec, j->now, room);
	if (err == 0)
		err = store_rec_count(db, &j->rec, j->now, true,
		    &room->in_topic, &room->topic_first);
	if (err == 0)
		err = store_rec_count(db, &j->rec, j->now, false, &room->total,
		    &room->total_first);
	return err;
}

/* On the worker thread: the put, by the keeping rule. */
static int
store_rec_put_run(sqlite3 *db, void *cls)
{
	struct store_rec_job *j = cls;
	struct dhtrec_room room;
	int err = store_rec_schema_make(db);

	if (err == 0)
		err = store_rec_expire(db, j->now);
	if (err == 0)
		err = store_rec_room(db, j, &room);
	if (err < 0)
		return err;
	switch (dhtrec_admit(&room, &j->rec, j->per_topic, j->total_max)) {
	case DHTREC_HELD:
		return 0;
	case DHTREC_STALE:
		return -ESTALE;
	case DHTREC_FULL:
		return -ENOSPC;
	case DHTREC_EVICT_TOPIC:
		err = store_rec_evict(db, &j->rec, true);
		break;
	case DHTREC_EVICT_ANY:
		err = store_rec_evict(db, &j->rec, false);
		break;
	default: /* REPLACE, ADD */
		break;
	}
	return err < 0 ? err : store_rec_write(db, &j->rec);
}

static void
store_rec_put_done(void *cls, int status)
{
	struct store_rec_job *j = cls;

	j->done(j->cls, status);
	store_rec_job_free(j);
}

int
store_record_put(struct store *st, const struct dhtrec *r, uint64_t now,
    uint64_t per_topic, uint64_t total_max, store_done_fn *cb, void *cls)
{
	struct store_rec_job *j;
	int err;

	if (r->value_len > DHTREC_VALUE_MAX || cb == NULL)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	j->rec = *r;
	if (r->value_len > 0)
		memcpy(j->value, r->value, r->value_len);
	j->rec.value = r->value_len > 0 ? j->value : NULL;
	j->now = now;
	j->per_topic = per_topic;
	j->total_max = total_max;
	j->done = cb;
	j->cls = cls;
	err = store_job(st, store_rec_put_run, store_rec_put_done, j);
	if (err < 0)
		store_rec_job_free(j);
	return err;
}

/* One row of a list into j's next place. */
static void
store_rec_take_row(struct store_rec_job *j, sqlite3_stmt *s)
{
	struct dhtrec *r = &j->found[j->n_found];
	uint8_t *value = j->values + j->n_found * DHTREC_VALUE_MAX;
	const void *signer = sqlite3_column_blob(s, 0);
	const void *v = sqlite3_column_blob(s, 3);
	const void *sig = sqlite3_column_blob(s, 4);
	int vlen = sqlite3_column_bytes(s, 3);

	/* A row this code did not write is skipped, not trusted. */
	if (signer == NULL || sqlite3_column_bytes(s, 0) != FERRY_PUBKEY_LEN ||
	    sig == NULL || sqlite3_column_bytes(s, 4) != FERRY_SIG_LEN ||
	    vlen < 0 || vlen > DHTREC_VALUE_MAX || (vlen > 0 && v == NULL))
		return;
	memset(r, 0, sizeof(*r));
	r->topic = j->rec.topic;
	memcpy(r->signer, signer, FERRY_PUBKEY_LEN);
	r->seq = (uint64_t)sqlite3_column_int64(s, 1);
	r->expiry = (uint64_t)sqlite3_column_int64(s, 2);
	if (vlen > 0)
		memcpy(value, v, (size_t)vlen);
	r->value = vlen > 0 ? value : NULL;
	r->value_len = (size_t)vlen;
	memcpy(r->sig, sig, FERRY_SIG_LEN);
	j->n_found++;
}

/* On the worker thread: the topic's rows. */
static int
store_rec_list_run(sqlite3 *db, void *cls)
{
	struct store_rec_job *j = cls;
	sqlite3_stmt *s;
	int rc, err = store_rec_schema_make(db);

	if (err == 0)
		err = store_rec_prepare(db,
		    "SELECT signer, seq, expiry, value, sig FROM dht_records"
		    " WHERE topic = ?1 AND expiry > ?2 ORDER BY expiry DESC"
		    " LIMIT ?3",
		    &s);
	if (err < 0)
		return err;
	err = store_rec_bind_key(s, &j->rec, false);
	if (err == 0 &&
	    (sqlite3_bind_int64(s, 2, (int64_t)j->now) != SQLITE_OK ||
	        sqlite3_bind_int64(s, 3, (int64_t)j->max) != SQLITE_OK))
		err = -EIO;
	while (err == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW &&
	    j->n_found < j->max)
		store_rec_take_row(j, s);
	if (err == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		err = sqlfile_errno(rc);
	(void)sqlite3_finalize(s);
	return err;
}

static void
store_rec_list_done(void *cls, int status)
{
	struct store_rec_job *j = cls;

	if (status < 0)
		j->got(j->cls, status, NULL, 0);
	else
		j->got(j->cls, 0, j->found, j->n_found);
	store_rec_job_free(j);
}

int
store_record_list(struct store *st, const struct dhtkey *topic, uint64_t now,
    size_t max, store_records_fn *cb, void *cls)
{
	struct store_rec_job *j;
	int err;

	if (max == 0 || cb == NULL)
		return -EINVAL;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	j->found = calloc(max, sizeof(*j->found));
	j->values = malloc(max * DHTREC_VALUE_MAX);
	if (j->found == NULL || j->values == NULL) {
		store_rec_job_free(j);
		return -ENOMEM;
	}
	j->rec.topic = *topic;
	j->now = now;
	j->max = max;
	j->got = cb;
	j->cls = cls;
	err = store_job(st, store_rec_list_run, store_rec_list_done, j);
	if (err < 0)
		store_rec_job_free(j);
	return err;
}
