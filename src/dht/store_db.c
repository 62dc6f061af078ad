/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * The block store's SQLite database (see store.h), dht layer: its schema
 * and tuning, and its opening before the worker runs (creating and
 * checking it are lib/sqlfile.c's, shared with the receipt queue);
 * store_sql.c has the statements run on it. Decisions on the layout, the
 * journal and durability are written down at the top of store.c.
 */
#define LOG_TAG "dht"
#include "dht/store_int.h"

#include <limits.h>

#include <sqlite3.h>

#include "lib/fsutil.h"
#include "lib/log.h"
#include "lib/sqlfile.h"

/* What a new database is made of; STORE_SCHEMA_VERSION names it. Rows
 * keep the block's bytes last, so that reading the other columns never
 * touches a block's overflow pages. dist is key XOR own id, indexed (with
 * size) so that the farthest blocks are found without reading them. */
static const char store_db_schema[] =
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL);"
    "CREATE TABLE blocks("
    "  id INTEGER PRIMARY KEY,"
    "  key BLOB NOT NULL UNIQUE,"
    "  dist BLOB NOT NULL,"
    "  expiry INTEGER NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  data BLOB NOT NULL);"
    "CREATE INDEX blocks_dist ON blocks(dist, size);"
    "CREATE INDEX blocks_expiry ON blocks(expiry);";

/* The block store's file for lib/sqlfile.c. The WAL is folded back every
 * 256 pages (16 MiB of 64 KiB pages) and cut back to 16 MiB after a
 * larger transaction. */
static const struct sqlfile_spec store_db_spec = {
	.what = "block store",
	.tag = LOG_TAG,
	.application_id = STORE_APPLICATION_ID,
	.version = STORE_SCHEMA_VERSION,
	.min_version = STORE_SCHEMA_VERSION,
	.schema = store_db_schema,
	.page_size = STORE_PAGE_SIZE,
	.tuning = "PRAGMA wal_autocheckpoint=256;"
	          " PRAGMA journal_size_limit=16777216",
};

int
store_db_open(const char *dir, const uint8_t own_id[STORE_KEY_LEN],
    uint64_t quota, store_db_row_fn *fn, void *cls, struct store_db **ret_db)
{
	char path[PATH_MAX];
	sqlite3 *db = NULL;
	struct store_db *d = NULL;
	int r;

	r = fs_path_join(path, sizeof(path), dir, STORE_DB_FILE);
	if (r < 0) {
		log_err("block store %s: path too long", dir);
		return r;
	}
	r = sqlfile_open(&store_db_spec, path, &db);
	if (r < 0)
		return r;
	r = store_sql_new(db, path, own_id, quota, fn, cls, &d);
	if (r < 0) {
		(void)sqlite3_close(db);
		return r;
	}
	*ret_db = d;
	return 0;
}
