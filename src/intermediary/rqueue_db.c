/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The receipt queue's SQLite database (see rqueue.h), intermediary
 * layer: its schema, upgrade and tuning, and its opening before the
 * worker runs; rqueue_sql.c has the statements. Creating, checking and
 * opening it are lib/sqlfile.c's, shared with the block store, whose
 * choices it follows (src/dht/store.c: WAL, synchronous=FULL, one
 * process, a new file built aside and renamed into place) for the same
 * reasons: an entry is acknowledged to the DHT side only once it would
 * survive a power cut.
 */
#define LOG_TAG "intermediary"
#include "intermediary/rqueue_int.h"

#include <sqlite3.h>

#include "lib/sqlfile.h"

/*
 * What a new database is made of; RQUEUE_SCHEMA_VERSION names it.
 * clients.last is the last cursor given to the client: cursors grow from
 * it and are never given twice. A client's row goes once it has had no
 * entries for RECEIPT_KEEP; meta's floor keeps the largest last of the
 * rows gone, and a new row starts from it, so that a client that comes
 * back after its row went never gets a cursor it has acknowledged. A
 * new client's first cursor thus shows the largest count of a client
 * long gone, no more: cursors are not one sequence for all clients,
 * which would show every client how many entries the others get. n is
 * kept by the triggers: the bound per client without a count.
 * origins (version 2) keeps, for a client's entries pushed by another
 * intermediary forwarding them, the last of that intermediary's cursors
 * pushed here: a batch sent again after its acknowledgement was lost is
 * not queued twice (rqueue_push_from). Its rows go with the client's.
 */
#define RQUEUE_DB_ORIGINS                                                      \
	"CREATE TABLE origins("                                                \
	"  client BLOB NOT NULL,"                                              \
	"  origin BLOB NOT NULL,"                                              \
	"  last INTEGER NOT NULL,"                                             \
	"  PRIMARY KEY(client, origin)) WITHOUT ROWID;"
static const char rqueue_db_schema[] =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    "  WITHOUT ROWID;"
    "INSERT INTO meta VALUES('floor', 0);"
    "CREATE TABLE clients("
    "  client BLOB PRIMARY KEY,"
    "  last INTEGER NOT NULL,"
    "  n INTEGER NOT NULL,"
    "  pushed INTEGER NOT NULL) WITHOUT ROWID;"
    "CREATE INDEX clients_idle ON clients(pushed) WHERE n = 0;"
    "CREATE TABLE entries("
    "  client BLOB NOT NULL,"
    "  cursor INTEGER NOT NULL,"
    "  queued INTEGER NOT NULL,"
    "  type INTEGER NOT NULL,"
    "  key BLOB NOT NULL,"
    "  put_hash BLOB NOT NULL,"
    "  storer BLOB,"
    "  expiry INTEGER,"
    "  sig BLOB,"
    "  status INTEGER,"
    "  receipts INTEGER,"
    "  PRIMARY KEY(client, cursor)) WITHOUT ROWID;"
    "CREATE INDEX entries_queued ON entries(queued);"
    "CREATE TRIGGER entries_in AFTER INSERT ON entries BEGIN"
    "  UPDATE clients SET n = n + 1 WHERE client = new.client; END;"
    "CREATE TRIGGER entries_out AFTER DELETE ON entries BEGIN"
    "  UPDATE clients SET n = n - 1 WHERE client = old.client; END;" RQUEUE_DB_ORIGINS;

/* The receipt queue's file for lib/sqlfile.c. Entries are small: the
 * WAL is folded back every 1000 pages of 4 KiB, SQLite's default. */
static const struct sqlfile_spec rqueue_db_spec = {
	.what = "receipt queue",
	.tag = LOG_TAG,
	.application_id = RQUEUE_APPLICATION_ID,
	.version = RQUEUE_SCHEMA_VERSION,
	/* Version 1, from before forwarding, gains the origins table. */
	.min_version = 1,
	.schema = rqueue_db_schema,
	.upgrade = RQUEUE_DB_ORIGINS,
	.tuning = "PRAGMA journal_size_limit=4194304;"
	          " PRAGMA recursive_triggers=OFF",
};

int
rqueue_db_open(const char *path, unsigned max_entries, uint64_t *ret_entries,
    struct rqueue_db **ret_db)
{
	sqlite3 *db = NULL;
	int r;

	r = sqlfile_open(&rqueue_db_spec, path, &db);
	if (r < 0)
		return r;
	r = rqueue_sql_new(db, path, max_entries, ret_entries, ret_db);
	if (r < 0)
		(void)sqlite3_close(db);
	return r;
}
