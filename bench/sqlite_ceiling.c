/*
 * sqlite_ceiling.c — the storage ceiling for `make bench`: a minimal SQLite
 * loop, each transaction commits one segment row plus eight vocabulary
 * upserts (with their occurrence rows), the shape of one POST's writes,
 * in WAL mode with the given synchronous level. With GROUP > 1 it commits
 * GROUP such segments per transaction (the group-commit ceiling).
 *   usage: sqlite_ceiling DBFILE NORMAL|FULL SECONDS [GROUP]
 * Prints "commits/s segments/s".
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double sc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sc_check(sqlite3 *db, int rc, const char *what)
{
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite_ceiling: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static void sc_exec(sqlite3 *db, const char *sql)
{
    sc_check(db, sqlite3_exec(db, sql, NULL, NULL, NULL), sql);
}

static void sc_step(sqlite3 *db, sqlite3_stmt *s, const char *what)
{
    sc_check(db, sqlite3_step(s), what);
    sqlite3_reset(s);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: sqlite_ceiling DBFILE NORMAL|FULL SECONDS [GROUP]\n");
        return 2;
    }
    double secs = atof(argv[3]);
    int group = argc > 4 ? atoi(argv[4]) : 1;
    if (group < 1)
        group = 1;
    unlink(argv[1]);
    char wal[4096];
    snprintf(wal, sizeof wal, "%s-wal", argv[1]);
    unlink(wal);
    sqlite3 *db;
    sc_check(NULL, sqlite3_open(argv[1], &db), "open");
    sc_exec(db, "PRAGMA journal_mode=WAL");
    sc_exec(db, strcmp(argv[2], "FULL") ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL");
    sc_exec(db, "CREATE TABLE segments (sid INTEGER, seq INTEGER, client_id TEXT, request TEXT, "
                "result TEXT, PRIMARY KEY (sid, seq)) WITHOUT ROWID;"
                "CREATE TABLE vocab (sid INTEGER, word TEXT, occ INTEGER, first_seq INTEGER, "
                "last_seq INTEGER, PRIMARY KEY (sid, word)) WITHOUT ROWID;"
                "CREATE TABLE occurrences (sid INTEGER, word TEXT, seq INTEGER, "
                "PRIMARY KEY (sid, word, seq)) WITHOUT ROWID;");
    sqlite3_stmt *seg, *voc, *occ, *beg, *com;
    sqlite3_prepare_v2(db, "INSERT INTO segments VALUES (?1, ?2, ?3, ?4, ?5)", -1, &seg, NULL);
    sqlite3_prepare_v2(db,
                       "INSERT INTO vocab VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (sid, word) "
                       "DO UPDATE SET occ = occ + 1, last_seq = excluded.last_seq",
                       -1, &voc, NULL);
    sqlite3_prepare_v2(db, "INSERT INTO occurrences VALUES (?1, ?2, ?3)", -1, &occ, NULL);
    sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &beg, NULL);
    sqlite3_prepare_v2(db, "COMMIT", -1, &com, NULL);
    static const char *const words[] = {"virus",    "patients", "coronavirus", "symptoms",
                                        "health",   "vaccine",  "masque",      "distance",
                                        "hospital", "test",     "fever",       "cough",
                                        "world",    "people",   "country",     "cases"};
    char req[600], res[900];
    memset(req, 'r', sizeof req - 1);
    req[sizeof req - 1] = 0;
    memset(res, 's', sizeof res - 1);
    res[sizeof res - 1] = 0;
    long commits = 0, segs = 0;
    double t0 = sc_now();
    while (sc_now() - t0 < secs) {
        sc_step(db, beg, "begin");
        for (int g = 0; g < group; g++) {
            long seq = segs + 1, sid = segs % 1000;
            char cid[32];
            snprintf(cid, sizeof cid, "seg-%ld", seq);
            sqlite3_bind_int64(seg, 1, sid);
            sqlite3_bind_int64(seg, 2, seq);
            sqlite3_bind_text(seg, 3, cid, -1, SQLITE_STATIC);
            sqlite3_bind_text(seg, 4, req, -1, SQLITE_STATIC);
            sqlite3_bind_text(seg, 5, res, -1, SQLITE_STATIC);
            sc_step(db, seg, "segment");
            for (int k = 0; k < 8; k++) {
                const char *w = words[(seq * 3 + k) % 16];
                sqlite3_bind_int64(voc, 1, sid);
                sqlite3_bind_text(voc, 2, w, -1, SQLITE_STATIC);
                sqlite3_bind_int64(voc, 3, seq);
                sc_step(db, voc, "vocab");
                sqlite3_bind_int64(occ, 1, sid);
                sqlite3_bind_text(occ, 2, w, -1, SQLITE_STATIC);
                sqlite3_bind_int64(occ, 3, seq);
                sc_step(db, occ, "occurrence");
            }
            segs++;
        }
        sc_step(db, com, "commit");
        commits++;
    }
    double dt = sc_now() - t0;
    printf("%.0f %.0f\n", (double)commits / dt, (double)segs / dt);
    sqlite3_finalize(seg);
    sqlite3_finalize(voc);
    sqlite3_finalize(occ);
    sqlite3_finalize(beg);
    sqlite3_finalize(com);
    sqlite3_close(db);
    unlink(argv[1]);
    unlink(wal);
    return 0;
}
