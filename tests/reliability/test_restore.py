#!/usr/bin/env python3
"""Restores cannot mix two databases or start on a damaged copy (issue 25 §4).

  * the issue's scenario: a server is SIGKILLed (its -wal/-shm stay), a
    backup taken at 50 segments is copied over the database by hand, and the
    server is started: SQLite alone recovers the old WAL into the copy (129
    segments served, totals that no replay gives). The server now refuses to
    start, with a message that says what to do; `adaptmon restore` then puts
    the backup in place (old database and WAL kept aside, as a pair that
    still starts with all 129 segments), and the server serves exactly the
    backup's 50;
  * a bit-flipped backup is refused by `adaptmon restore` (checksum) and
    changes nothing; copied by hand with its .sha256 file, the server refuses
    to start on it;
  * restore refuses while a server holds the database, and without a
    checksum file unless --no-checksum;
  * a legitimate crash (SIGKILL) still recovers every acknowledged segment
    (the WAL restarts themselves are covered by tests/unit/test_restore.c);
  * `adaptmon backup` only reads the live database (no checkpoint, no
    clean-up of the running server's work).
"""
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS  # noqa: E402
from harness import Server, check, eq, run_tests, tmpdir  # noqa: E402
from test_operator import cli, digest, post_segments, serve_fails  # noqa: E402


def crashed_server_with_backup(n_backup=50, n_total=129):
    """D/x.db: a server SIGKILLed at n_total segments, its -wal/-shm left;
    D/b.db (+ b.db.sha256): a backup taken at n_backup."""
    d = tmpdir("adaptmon-restore-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, n_backup)
    bak = os.path.join(d, "b.db")
    r = cli("backup", "--db", db, bak)
    eq(r.returncode, 0, "backup: " + r.stderr)
    check(os.path.exists(bak + ".sha256"), "the backup carries its checksum file")
    post_segments(c, "a", n_backup, n_total - n_backup)
    c.close()
    srv.kill()
    check(os.path.getsize(db + "-wal") > 0, "the crash left a WAL")
    return d, db, bak, srv


def segments(db):
    srv = Server(db=db)
    c = srv.client()
    n = c.jget("/v1/sessions/a")["segments"]
    c.close()
    eq(srv.stop(), 0, "server exit status")
    return n


def test_backup_copied_over_a_crashed_database_beside_its_wal_is_refused_then_restored():
    d, db, bak, srv = crashed_server_with_backup()
    shutil.copyfile(bak, db)  # the operator's cp, -wal/-shm still there
    before = digest(db, db + "-wal")
    rc, out, err = serve_fails("--db", db)
    check(rc != 0, "serve on a backup beside a foreign WAL must fail (it started)")
    check("does not belong" in err and "adaptmon restore" in err,
          "message says what is wrong and what to do: %r" % err[-600:])
    eq(digest(db, db + "-wal"), before, "the refused start changed nothing")
    r = cli("restore", "--db", db, bak)
    eq(r.returncode, 0, "restore: " + r.stderr)
    check(not os.path.exists(db + "-wal"), "the old WAL was moved aside")
    eq(segments(db), 50, "segments served after the restore (the backup's)")


def test_restore_over_a_crashed_database_keeps_it_whole_aside():
    d, db, bak, srv = crashed_server_with_backup()
    r = cli("restore", "--db", db, bak)
    eq(r.returncode, 0, "restore: " + r.stderr)
    check("pre-restore" in r.stdout, "it says where the old database went: %r" % r.stdout)
    aside = [f for f in os.listdir(d) if f.startswith("x.db.pre-restore-")]
    main = [f for f in aside if not f.endswith(("-wal", "-shm"))]
    eq(len(main), 1, "one kept copy of the old database: %s" % aside)
    check(main[0] + "-wal" in aside, "its WAL kept beside it under the same name: %s" % aside)
    eq(segments(db), 50, "segments served after the restore (the backup's)")
    # the kept pair is the crashed database, whole: it starts and recovers
    eq(segments(os.path.join(d, main[0])), 129, "segments of the database kept aside")


def test_bit_flipped_backup_is_refused_by_restore_and_changes_nothing():
    d, db, bak, srv = crashed_server_with_backup(20, 30)
    with open(bak, "r+b") as f:
        size = f.seek(0, 2)
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0x10]))
    before = digest(db, db + "-wal", db + "-shm")
    r = cli("restore", "--db", db, bak)
    eq(r.returncode, 1, "restore of a damaged backup: exit status (%s)" % r.stderr)
    check("does not match its checksum" in r.stderr, "message: %r" % r.stderr)
    eq(digest(db, db + "-wal", db + "-shm"), before, "database and WAL untouched")
    check(not [f for f in os.listdir(d) if "restore" in f], "no temporary or aside file left")
    eq(segments(db), 30, "the crashed database still recovers all its segments")


def test_bit_flipped_backup_copied_by_hand_with_its_checksum_file_does_not_start():
    d = tmpdir("adaptmon-restore-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, 10)
    bak = os.path.join(d, "b.db")
    eq(cli("backup", "--db", db, bak).returncode, 0, "backup")
    c.close()
    srv.stop()
    # the good copy, by hand with its checksum file, starts
    new = os.path.join(d, "new.db")
    shutil.copyfile(bak, new)
    shutil.copyfile(bak + ".sha256", new + ".sha256")
    eq(segments(new), 10, "segments of a good hand-made restore")
    # a flipped byte deep in the data: SQLite's integrity check cannot see it
    bad = os.path.join(d, "bad.db")
    shutil.copyfile(bak, bad)
    shutil.copyfile(bak + ".sha256", bad + ".sha256")
    with open(bad, "r+b") as f:
        f.seek(-100, 2)
        b = f.read(1)
        f.seek(-100, 2)
        f.write(bytes([b[0] ^ 0x01]))
    rc, out, err = serve_fails("--db", bad)
    check(rc != 0, "serve on a damaged restored backup must fail")
    check("does not match its checksum" in err, "message: %r" % err[-600:])


def test_restore_refusals():
    d = tmpdir("adaptmon-restore-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, 5)
    bak = os.path.join(d, "b.db")
    eq(cli("backup", "--db", db, bak).returncode, 0, "backup")
    r = cli("restore", "--db", db, bak)
    eq(r.returncode, 2, "restore onto a served database: %s" % r.stderr)
    check("running adaptmon serve" in r.stderr, "message: %r" % r.stderr)
    c.close()
    srv.stop()
    os.rename(bak + ".sha256", bak + ".sum")
    r = cli("restore", "--db", db, bak)
    eq(r.returncode, 1, "restore without a checksum file: %s" % r.stderr)
    check("--no-checksum" in r.stderr, "message names --no-checksum: %r" % r.stderr)
    r = cli("restore", "--db", db, "--no-checksum", bak)
    eq(r.returncode, 0, "restore --no-checksum: %s" % r.stderr)
    eq(segments(db), 5, "segments after restore --no-checksum")
    for args in (["--db", db], ["--db", db, bak, bak], ["--db", db, "--bogus", bak]):
        eq(cli("restore", *args).returncode, 2, "restore %s: usage" % args)
    r = cli("restore", "--db", db, db)
    eq(r.returncode, 2, "restore of the database onto itself")
    # a damaged database (its header overwritten) is what a restore is for:
    # replaced, and kept aside as it was
    with open(db, "r+b") as f:
        f.write(b"\0" * 100)
    damaged = digest(db)[0]
    r = cli("restore", "--db", db, "--no-checksum", bak)
    eq(r.returncode, 0, "restore over a damaged database: %s" % r.stderr)
    aside = [os.path.join(d, f) for f in os.listdir(d)
             if f.startswith("x.db.pre-restore-") and not f.endswith(("-wal", "-shm"))]
    check(damaged in [digest(a)[0] for a in aside], "the damaged file is kept aside")
    eq(segments(db), 5, "segments after restoring over a damaged database")
    r = cli("restore", "--db", d, "--no-checksum", bak)
    eq(r.returncode, 2, "restore onto a directory: %s" % r.stderr)


def test_crash_recovery_keeps_working():
    # a crashed server's WAL is recognised as the database's own (its
    # page-1 frames carry the id of this life) and recovered, twice
    d = tmpdir("adaptmon-restore-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    text = " ".join("word%d" % k for k in range(200))
    for i in range(400):
        r = c.post("/v1/sessions/a/segments",
                   {"id": "s%d" % i, "source": text, "hypothesis": text, "translation": text})
        eq(r.status, 201, "POST %d" % i)
    c.close()
    srv.kill()
    srv.start()
    c = srv.client()
    eq(c.jget("/v1/sessions/a")["segments"], 400, "segments after SIGKILL and restart")
    c.close()
    srv.kill()
    srv.start()
    c = srv.client()
    eq(c.jget("/v1/sessions/a")["segments"], 400, "after a second SIGKILL")
    c.close()
    srv.stop()


def test_backup_only_reads_the_live_database():
    # it used to open a whole store on it: migrations, clean-ups of the
    # running server's unfinished work, and a TRUNCATE checkpoint at close
    d = tmpdir("adaptmon-restore-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, 30)
    time.sleep(0.3)  # the server is idle: nothing else writes
    before = (digest(db, db + "-wal"), os.path.getsize(db + "-wal"))
    check(before[1] > 0, "the live WAL holds frames")
    r = cli("backup", "--db", db, os.path.join(d, "b.db"))
    eq(r.returncode, 0, "backup: " + r.stderr)
    eq((digest(db, db + "-wal"), os.path.getsize(db + "-wal")), before,
       "database file and WAL unchanged by the backup")
    post_segments(c, "a", 30, 5)
    c.close()
    eq(srv.stop(), 0, "exit status")
    eq(segments(os.path.join(d, "b.db")), 30, "segments in the copy")


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
