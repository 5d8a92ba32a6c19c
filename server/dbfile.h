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

#endif
