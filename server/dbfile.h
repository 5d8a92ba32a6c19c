/*
 * dbfile.h — the database as a file, for the commands that must not
 * destroy it: file identity (is this path the live database or one of its
 * WAL/SHM/journal side files?), "is this an SQLite file?", the exclusive
 * lock one `adaptmon serve` holds on its database for its whole life, and
 * the readiness check that the file being served is still there and whole.
 * No SQL here (server/store/sql.h holds all of the SQL).
 */
#ifndef AM_DBFILE_H
#define AM_DBFILE_H

#include "am.h"

#include <stdint.h>
#include <sys/types.h>

/* The directory part of path (caller frees): "." for a bare name, "/"
 * for a file in the root. path borrowed. */
char *am_dbfile_dir(const char *path);

/* Creates the missing directories above path (mode 0777 & ~umask).
 * Returns AM_OK or AM_ERR_IO with a message in err. path borrowed. */
int am_dbfile_mkdir_parents(const char *path, am_buf *err);

/* Does path name the same directory entry or file as live? Compared by
 * identity, not by text: when both exist, their (st_dev, st_ino) after
 * following symlinks; when neither exists, the (st_dev, st_ino) of their
 * directories and their base names. One existing and one not: different.
 * Both strings borrowed. */
int am_dbfile_same(const char *path, const char *live);

/* Is path (borrowed) the database db or one of the files SQLite keeps next
 * to it (db-wal, db-shm, db-journal)? db must exist. Returns 1 and the
 * name of the live file it collides with in which (static string: "the
 * database", "its WAL", …), or 0. */
int am_dbfile_is_live(const char *path, const char *db, const char **which);

/* Classifies the file at path: AM_OK when it is missing, empty or starts
 * with the SQLite header; AM_ERR_PARSE when it is something else (err says
 * what); AM_ERR_IO when it cannot be read or is not a regular file. */
int am_dbfile_check_kind(const char *path, am_buf *err);

/* Opens (creating it when missing, 0644) the database file at path and
 * takes an exclusive flock on it, held until am_dbfile_unlock. flock locks
 * are independent of SQLite's POSIX byte-range locks on Linux local file
 * systems, so SQLite's own locking and other readers (adaptmon backup) are
 * unaffected. Returns AM_OK with *fd set; AM_ERR_CONFLICT when another
 * process holds the lock; AM_ERR_IO with a message in err otherwise. The
 * parent directory must exist. */
int am_dbfile_lock(const char *path, int *fd, am_buf *err);
/* Is the file at path (borrowed) a database some adaptmon serve holds
 * (its am_dbfile_lock)? 0 when it is free or cannot be opened. */
int am_dbfile_in_use(const char *path);
/* Releases the lock and closes fd (after SQLite closed the database: a
 * close drops the process's POSIX locks on the file). No-op for fd < 0. */
void am_dbfile_unlock(int fd);

/* Readiness of the served database: the path still names the file open
 * as fd (not deleted, not replaced) and the file still starts with the
 * SQLite header. Returns AM_OK, or AM_ERR_NOTFOUND / AM_ERR_PARSE /
 * AM_ERR_IO with a reason (static string) in *why. */
int am_dbfile_still_ours(int fd, const char *path, const char **why);

/* ---- backups, restores and the WAL's owner ---------------------------------
 *
 * Database identity. Page 1 of the database carries two 32-bit fields of
 * SQLite's header that the store sets (store/open.c; SQLite itself never
 * writes them): user_version, the id of the database's current life — a
 * random value each server start and each backup writes, and each WAL
 * generation writes again (in a transaction touching page 1 only) — and
 * application_id, the id the life before it had, or AM_DBFILE_BACKUP_MARK
 * in a backup nothing has written to since. So page 1 of a WAL's frames
 * names the life the WAL belongs to, and a database file copied from a
 * backup never carries an id that a WAL of another life holds.
 */
#define AM_DBFILE_BACKUP_MARK 0x616d626bu /* "ambk": an untouched backup */

/* The SHA-256 of the file at path (borrowed) as 64 hex digits into hex.
 * Returns AM_OK, or AM_ERR_IO with a message in err. */
int am_dbfile_sha256(const char *path, char hex[65], am_buf *err);
/* The checksum file of path: path + ".sha256", one line "HEX  NAME" as
 * sha256sum(1) writes and checks it. Reads its digest into hex: AM_OK,
 * AM_ERR_NOTFOUND when there is no such file, AM_ERR_PARSE when it does
 * not start with 64 hex digits (err says so). */
int am_dbfile_sidecar_read(const char *path, char hex[65], am_buf *err);
/* Writes path's checksum file atomically (a temporary file, fsync,
 * rename, fsync of the directory). AM_OK or AM_ERR_IO (err). */
int am_dbfile_sidecar_write(const char *path, const char *hex, am_buf *err);

/* The two ids of page 1 of the database at path (see above): AM_OK with
 * *life (user_version) and *prev (application_id) set; AM_ERR_NOTFOUND
 * when the file is missing or shorter than its header; AM_ERR_IO. */
int am_dbfile_ids(const char *path, uint32_t *life, uint32_t *prev, am_buf *err);

/* Before the first connection opens the database at db (borrowed), when no
 * other process has it open: refuses what SQLite would silently accept —
 *   - a WAL (db-wal) with committed frames that belongs to another life of
 *     the database (the id in its page-1 frames is neither the database's
 *     nor the one the database had when the WAL started; or its page size
 *     differs; or the database is missing): recovering it would mix two
 *     databases' pages;
 *   - an untouched backup (application_id AM_DBFILE_BACKUP_MARK, no WAL
 *     frames) whose checksum file db.sha256 exists and does not match.
 * Returns AM_OK, or AM_ERR_CONFLICT (foreign WAL) / AM_ERR_PARSE (checksum)
 * / AM_ERR_IO with a message in err that says what to do. A WAL without any
 * page-1 frame (a crash right after the WAL restarted, before the store
 * wrote its id) cannot be attributed and is accepted. */
int am_dbfile_check_wal(const char *db, am_buf *err);

#endif
