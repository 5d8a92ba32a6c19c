#!/usr/bin/env python3
"""The operator cannot destroy data (issue 10 §4, §5; issue 11 §5).

Every operator mistake on the command line gets a clear message on stderr, a
nonzero exit status, and changes nothing:

  * `adaptmon backup` onto the live database or its -wal/-shm file under any
    spelling (D/./x.db, D//x.db, a symlink, a relative path), onto a
    directory, into a missing directory, onto an existing file without
    --force; unknown flags; a source that is not an SQLite file;
  * `adaptmon serve` on a non-SQLite file, on a directory, with bad numbers
    or unknown flags, and a second `adaptmon serve` on a database another one
    serves (it would write with its own stale cache);
  * /readyz says 503 once the database file is deleted, replaced or damaged.
  * a full disk: writes answer 507 insufficient-storage (never a silent 500),
    the SQLite error and the request id are logged. The disk is made "full"
    portably with the documented option max-db-size (PRAGMA max_page_count on
    the writer), which makes SQLite fail with SQLITE_FULL exactly like a
    full file system does.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS  # noqa: E402
from harness import (ADAPTMON, Server, check, eq, expect_status, run_tests,  # noqa: E402
                     tmpdir)

SEG = {"source": "the virus spreads fast", "hypothesis": "le virus se propage vite",
       "translation": "le virus se propage vite"}


def cli(*args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    if env:
        e.update(env)
    return subprocess.run([ADAPTMON] + list(args), capture_output=True, text=True, timeout=60,
                          env=e)


def post_segments(c, sid, start, n):
    for i in range(start, start + n):
        r = c.post("/v1/sessions/%s/segments" % sid, dict(SEG, id="s%d" % i))
        expect_status(r, 201, "POST segment %d" % i)


def digest(*paths):
    """sha256 of each existing path (None for a missing one)."""
    out = []
    for p in paths:
        try:
            with open(p, "rb") as f:
                out.append(hashlib.sha256(f.read()).hexdigest())
        except FileNotFoundError:
            out.append(None)
    return out


def live_server():
    """A server on D/x.db with a session of 10 acknowledged segments."""
    d = tmpdir("adaptmon-op-")
    db = os.path.join(d, "x.db")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, 10)
    return d, db, srv, c


def segments_after_restart(srv, c):
    c.close()
    eq(srv.stop(), 0, "server exit status")
    srv.start()
    c2 = srv.client()
    n = c2.jget("/v1/sessions/a")["segments"]
    c2.close()
    return n


# ---- backup -------------------------------------------------------------------

def test_backup_onto_the_live_database_is_refused_under_every_spelling():
    d, db, srv, c = live_server()
    os.symlink(db, os.path.join(d, "link.db"))
    rel = os.path.relpath(db)
    spellings = [os.path.join(d, ".", "x.db"), d + "//x.db", os.path.join(d, "link.db"), rel,
                 db, db + "-wal", db + "-shm", os.path.join(d, ".", "x.db-wal")]
    for dest in spellings:
        r = cli("backup", "--db", db, dest)
        check(r.returncode != 0, "backup onto %s must fail, got 0: %s" % (dest, r.stdout))
        check("refusing" in r.stderr and "database" in r.stderr,
              "backup onto %s: message names the database: %r" % (dest, r.stderr))
    # the live database is whole: 50 more acknowledged segments survive a restart
    post_segments(c, "a", 10, 50)
    eq(segments_after_restart(srv, c), 60, "segments after the refused backups and a restart")
    srv.stop()


def test_backup_whose_temporary_file_is_the_database_is_refused():
    # DEST.tmp is written first and unlinked on failure: DEST = x (db x.tmp) would
    # have deleted the live database
    d = tmpdir("adaptmon-op-")
    db = os.path.join(d, "live.db.tmp")
    srv = Server(db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    post_segments(c, "a", 0, 5)
    r = cli("backup", "--db", db, os.path.join(d, "live.db"))
    check(r.returncode != 0, "backup whose .tmp is the database must fail")
    check("temporary" in r.stderr, "message names the temporary copy: %r" % r.stderr)
    check(os.path.exists(db), "the database is still there")
    post_segments(c, "a", 5, 5)
    eq(segments_after_restart(srv, c), 10, "segments after a restart")
    srv.stop()


def test_backup_to_a_directory_is_refused():
    d, db, srv, c = live_server()
    out = os.path.join(d, "out")
    os.mkdir(out)
    for dest in (out, out + "/"):
        r = cli("backup", "--db", db, dest)
        check(r.returncode != 0, "backup to directory %s must fail" % dest)
        check("directory" in r.stderr, "message says directory: %r" % r.stderr)
    eq(os.listdir(out), [], "nothing written into the directory")
    c.close()
    srv.stop()


def test_backup_into_a_missing_directory_is_refused_and_creates_nothing():
    d, db, srv, c = live_server()
    dest = os.path.join(d, "mnt", "bakup", "x.db")  # a mistyped mount point
    r = cli("backup", "--db", db, dest)
    check(r.returncode != 0, "backup into a missing directory must fail")
    check("does not exist" in r.stderr, "message: %r" % r.stderr)
    check(not os.path.exists(os.path.join(d, "mnt")), "no directory was created")
    c.close()
    srv.stop()


def test_backup_onto_an_existing_file_needs_force():
    d, db, srv, c = live_server()
    dest = os.path.join(d, "precious.txt")
    with open(dest, "w") as f:
        f.write("last year's only copy\n")
    before = digest(dest)
    r = cli("backup", "--db", db, dest)
    check(r.returncode != 0, "backup onto an existing file without --force must fail")
    check("--force" in r.stderr, "message mentions --force: %r" % r.stderr)
    eq(digest(dest), before, "the existing file is unchanged")
    r = cli("backup", "--db", db, "--force", dest)
    eq(r.returncode, 0, "backup --force: " + r.stderr)
    with open(dest, "rb") as f:
        eq(f.read(16), b"SQLite format 3\0", "the forced copy is a database")
    c.close()
    srv.stop()


def test_backup_over_another_running_servers_database_is_refused_even_with_force():
    d, db, srv, c = live_server()
    other_db = os.path.join(d, "other.db")
    other = Server(db=other_db)
    oc = other.client()
    oc.create_session(id="o", options=OPTIONS)
    r = cli("backup", "--db", db, "--force", other_db)
    check(r.returncode != 0, "backup --force over a served database must fail")
    check("running adaptmon serve" in r.stderr, "message: %r" % r.stderr)
    oc.close()
    eq(other.stop(), 0, "the other server's exit status")
    other.start()
    oc = other.client()
    eq([s["id"] for s in oc.jget("/v1/sessions")["sessions"]], ["o"], "its sessions survive")
    oc.close()
    other.stop()
    c.close()
    srv.stop()


def test_unwritable_places_give_a_clear_message():
    # /proc refuses new files even to root (a chmod'ed directory would not)
    d, db, srv, c = live_server()
    r = cli("backup", "--db", db, "/proc/adaptmon-backup.db")
    check(r.returncode != 0, "backup into /proc must fail")
    check("/proc/adaptmon-backup.db" in r.stderr, "message names the file: %r" % r.stderr)
    rc, out, err = serve_fails("--db", "/proc/adaptmon-test/x.db")
    check(rc != 0, "serve with its database under /proc must fail")
    check("/proc/adaptmon-test" in err, "message names the place: %r" % err)
    c.close()
    srv.stop()


def test_backup_usage_mistakes():
    d, db, srv, c = live_server()
    dest = os.path.join(d, "b.db")
    for args, what in ((["--db", db, "--bogus", dest], "unknown flag"),
                       (["--db"], "--db without a value"),
                       (["--db", db, dest, dest + "2"], "two destinations"),
                       (["--db", db], "no destination")):
        r = cli("backup", *args)
        eq(r.returncode, 2, "backup %s: exit status" % what)
        check(r.stderr.strip(), "backup %s: a message" % what)
    check(not os.path.exists(dest) and not os.path.exists(dest + "2"), "nothing written")
    c.close()
    srv.stop()


def test_backup_of_a_file_that_is_not_sqlite_is_refused_and_untouched():
    d = tmpdir("adaptmon-op-")
    src = os.path.join(d, "notes.txt")
    with open(src, "w") as f:
        f.write("this is not a database\n" * 10)
    before = digest(src, src + "-wal", src + "-shm")
    r = cli("backup", "--db", src, os.path.join(d, "b.db"))
    check(r.returncode != 0, "backup of a non-SQLite file must fail")
    check("not an SQLite database" in r.stderr, "message: %r" % r.stderr)
    eq(digest(src, src + "-wal", src + "-shm"), before, "source untouched, no side files")
    check(not os.path.exists(os.path.join(d, "b.db")), "no copy written")


def test_backup_of_a_live_database_still_works():
    d, db, srv, c = live_server()
    dest = os.path.join(d, "copy.db")
    r = cli("backup", "--db", db, dest)
    eq(r.returncode, 0, "backup of the live database: " + r.stderr)
    c.close()
    srv.stop()
    copy = Server(db=dest)
    c2 = copy.client()
    eq(c2.jget("/v1/sessions/a")["segments"], 10, "segments in the copy")
    c2.close()
    copy.stop()


# ---- serve ----------------------------------------------------------------------

def serve_fails(*args, timeout=20):
    """Runs `adaptmon serve --port 0 ARGS` expecting it to exit by itself."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    p = subprocess.Popen([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", "0"] + list(args),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise AssertionError("adaptmon serve %s did not exit (it started: %s)" % (args, out))
    return p.returncode, out, err


def test_second_serve_on_the_same_database_refuses_to_start():
    d, db, srv, c = live_server()
    os.symlink(db, os.path.join(d, "alias.db"))
    for path in (db, os.path.join(d, ".", "x.db"), os.path.join(d, "alias.db")):
        rc, out, err = serve_fails("--db", path, timeout=8)
        check(rc != 0, "a second serve on %s must fail" % path)
        check("in use by another adaptmon serve" in err, "message: %r" % err)
        check("listening" not in out, "the second server never listened")
    # the first one still serves, and nothing was lost
    post_segments(c, "a", 10, 5)
    eq(segments_after_restart(srv, c), 15, "segments after a restart")
    # the lock goes with the process: a restart (above) took it again, and a
    # SIGKILLed server leaves no stale lock
    srv.kill()
    srv.start()
    eq(srv.client().jget("/v1/sessions/a")["segments"], 15, "after kill -9 and restart")
    srv.stop()


def test_serve_on_a_file_that_is_not_sqlite_is_refused_and_untouched():
    d = tmpdir("adaptmon-op-")
    path = os.path.join(d, "notes.txt")
    with open(path, "w") as f:
        f.write("meeting notes, not a database\n" * 20)
    before = digest(path, path + "-wal", path + "-shm", path + "-journal")
    rc, out, err = serve_fails("--db", path)
    check(rc != 0, "serve on a non-SQLite file must fail")
    check("not an SQLite database" in err, "message: %r" % err)
    eq(digest(path, path + "-wal", path + "-shm", path + "-journal"), before, "file untouched")


def test_serve_on_a_directory_is_refused():
    d = tmpdir("adaptmon-op-")
    rc, out, err = serve_fails("--db", d)
    check(rc != 0, "serve on a directory must fail")
    check("directory" in err, "message names the directory: %r" % err)


def test_serve_flag_mistakes_exit_2_with_a_message():
    d = tmpdir("adaptmon-op-")
    db = os.path.join(d, "x.db")
    for args, what in ((["--port", "eighty"], "port"), (["--threads", "0"], "threads"),
                       (["--max-body", "1XB"], "max-body"), (["--bogus", "1"], "bogus"),
                       (["--durability", "fast"], "durability"), (["--db"], "db")):
        rc, out, err = serve_fails("--db", db, *args)
        eq(rc, 2, "serve %s: exit status" % args)
        check(what in err, "serve %s: message names %s: %r" % (args, what, err))
    check(not os.path.exists(db), "no database created by a refused start")


def test_readyz_is_503_when_the_database_file_is_deleted():
    d, db, srv, c = live_server()
    expect_status(c.get("/readyz"), 200, "readyz before")
    os.unlink(db)
    r = c.get("/readyz")
    expect_status(r, 503, "readyz after the database file was deleted")
    check("deleted" in r.json().get("reason", ""), "reason: %r" % r.json())
    c.close()
    srv.kill()


def test_readyz_is_503_when_the_database_file_is_replaced_or_damaged():
    d, db, srv, c = live_server()
    # damaged: the header overwritten in place
    with open(db, "r+b") as f:
        f.write(b"\0" * 100)
    r = c.get("/readyz")
    expect_status(r, 503, "readyz after the header was overwritten")
    check("damaged" in r.json().get("reason", ""), "reason: %r" % r.json())
    c.close()
    srv.kill()
    d, db, srv, c = live_server()
    # replaced: another file renamed over the path
    other = os.path.join(d, "other.db")
    with open(other, "wb") as f:
        f.write(b"SQLite format 3\0" + b"\0" * 4080)
    os.rename(other, db)
    r = c.get("/readyz")
    expect_status(r, 503, "readyz after the file was replaced")
    c.close()
    srv.kill()


# ---- a full disk ------------------------------------------------------------------

def test_full_database_answers_507_logs_the_cause_and_loses_nothing_acknowledged():
    d = tmpdir("adaptmon-op-")
    db = os.path.join(d, "x.db")
    srv = Server("--max-db-size", "160KiB", db=db)
    c = srv.client()
    c.create_session(id="a", options=OPTIONS)
    acked, full = [], None
    text = " ".join("word%d" % k for k in range(60))
    for i in range(3000):
        body = {"id": "s%d" % i, "source": text, "hypothesis": text, "translation": text}
        r = c.post("/v1/sessions/a/segments", body, headers={"X-Request-Id": "fill-%d" % i})
        if r.status == 201:
            acked.append(body["id"])
            continue
        full = (i, r)
        break
    check(full is not None, "the database never filled up (%d segments)" % len(acked))
    i, r = full
    eq(r.status, 507, "status when the database is full: %s" % r.body[:300])
    eq(r.content_type, "application/problem+json", "507 Content-Type")
    eq(r.json()["type"], "https://adaptmon.dev/problems/insufficient-storage", "problem type")
    check(len(acked) >= 5, "some segments were stored first: %d" % len(acked))
    # nothing half-stored
    expect_status(c.get("/v1/sessions/a/segments/s%d" % i), 404, "the refused segment")
    # other writes get 507 too, not 500: a 200 KB glossary cannot fit
    csv = "source,target\n" + "".join("term%d,terme%d\n" % (k, k) for k in range(12000))
    r = c.put("/v1/sessions/a/glossary", csv, ctype="text/csv")
    eq(r.status, 507, "glossary PUT on a full database: %s" % r.body[:300])
    c.close()
    eq(srv.stop(), 0, "exit status")
    log = srv.logs(tail=200000)
    check(re.search(r"ERROR .*sqlite \(13\).*full", log), "SQLite's SQLITE_FULL is logged:\n" +
          log[-3000:])
    check(re.search(r"ERROR \[req fill-%d\].*507.*insufficient-storage" % i, log) or
          re.search(r"ERROR .*fill-%d.*507" % i, log),
          "the 507 is logged with its request id:\n" + log[-3000:])
    # every acknowledged segment survives a restart without the limit
    srv.args = []
    srv.start()
    c = srv.client()
    eq(c.jget("/v1/sessions/a")["segments"], len(acked), "segments after the restart")
    for sid in (acked[0], acked[-1]):
        expect_status(c.get("/v1/sessions/a/segments/%s" % sid), 200, "segment %s" % sid)
    c.close()
    srv.stop()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
