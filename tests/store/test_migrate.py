"""`adaptmon migrate`: SQLite databases written by real servers, copied into a
throwaway PostgreSQL (docs/migrate.md, DESIGN-postgres.md §2.8).

Two SQLite files are filled through `adaptmon serve` (tests/api/harness.py):
the README's session, sessions with glossary versions, edits (PUT replays),
segment deletions, a deleted session, two systems with a baseline, a session
past the 32-segment checkpoint and settle, a background vocabulary (the same
upload on both, as a fleet's shards hold it). Then, against a PostgreSQL
started as in tests/store/test_pg_schema.py (as "nobody" when run as root;
skipped when the server binaries are absent):

* every table's rows, SQLite against PostgreSQL (sqlite3 module and psql),
  equal after a migration, with the second shard's sids shifted;
* a second run into the same target is refused, nothing written;
* a wrong URL, a wrong file, an old schema version, two shards sharing an id,
  and a copy whose totals a replay contradicts are each a clear error with
  nothing written (the target keeps no table, or the rows it had);
* --dry-run writes nothing; identities and the incarnation counter end
  above the copied rows;
* a file a server is serving is read from one snapshot.

Prints "N passed, N failed"; exits 1 on a failure. APITEST_ONLY=<substring>
runs the tests whose name contains it.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# the schema version this build writes: the highest schema/NNN_*.sql
LATEST = max(int(f[:3]) for f in os.listdir(os.path.join(ROOT, "schema"))
             if f[:3].isdigit() and f.endswith(".sql"))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pgutil import Server as PgServer, bindir as pg_bindir  # noqa: E402

ADAPTMON = harness.ADAPTMON
NULL = "\x01NULL"
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + (": " + str(detail)[:2000] if detail else ""))


# ---- PostgreSQL -------------------------------------------------------------

def psql(pg, db, sql):
    """Rows of sql on database db as lists of text (NULL as NULL)."""
    p = subprocess.run(
        [os.path.join(pg.bindir, "psql"), "-X", "-q", "-At", "-h", "127.0.0.1", "-p",
         str(pg.port), "-U", "am", "-d", db, "-v", "ON_ERROR_STOP=1", "-F", "\x1f", "-R", "\x1e",
         "-P", "null=" + NULL, "-c", sql], capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(p.stderr)
    out = p.stdout[:-1] if p.stdout.endswith("\n") else p.stdout  # psql's last newline
    return [r.split("\x1f") for r in out.split("\x1e") if r != ""]


def url(pg, db):
    return "postgresql://am@127.0.0.1:%d/%s" % (pg.port, db)


def create_db(pg, db):
    rc, _, err = pg.psql("CREATE DATABASE %s;" % db)
    if rc:
        raise RuntimeError(err)


def pg_tables(pg, db):
    return sorted(r[0] for r in psql(pg, db, "SELECT tablename FROM pg_tables "
                                             "WHERE schemaname = 'public'"))


def migrate(*args):
    p = subprocess.run([ADAPTMON, "migrate"] + list(args), capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stderr


# ---- the SQLite files, through real servers -----------------------------------

README_SEGS = [
    {"id": "1", "source": "Der Terrier beißt die Frau", "hypothesis": "The dog bites the lady",
     "translation": "The terrier bites the woman"},
    {"id": "2", "source": "Der Mann beißt den Terrier", "hypothesis": "The terrier bites the man",
     "translation": "The man bites the terrier"},
]


def seg(i, word="virus"):
    return {"id": "s%d" % i, "source": "the %s spreads fast number %d" % (word, i),
            "hypothesis": "le %s se propage vite numéro %d" % (word, i),
            "translation": "le %s se répand vite numéro %d" % (word, i % 7)}


def post(C, sess, body, status=(200, 201)):
    r = C.post("/v1/sessions/%s/segments" % sess, body)
    harness.expect_status(r, status, "POST %s %s" % (sess, body.get("id")))


def fill_a(C):
    C.create_session(id="demo", source_lang="de", target_lang="en")
    for s in README_SEGS:
        post(C, "demo", s)
    # glossary versions, an edit (a replay), a deletion
    C.create_session(id="gloss")
    harness.expect_status(C.put("/v1/sessions/gloss/glossary", "source,target\nvirus,virus\n",
                                ctype="text/csv"), (200, 201), "glossary v1")
    for i in range(1, 6):
        post(C, "gloss", seg(i))
    harness.expect_status(C.put("/v1/sessions/gloss/glossary",
                                "source,target\nvirus,virus\nspreads,répand\n",
                                ctype="text/csv"), (200, 201), "glossary v2")
    for i in range(6, 10):
        post(C, "gloss", seg(i))
    b = dict(seg(3))
    b["translation"] = "le virus se propage très vite"
    harness.expect_status(C.put("/v1/sessions/gloss/segments/s3", b), 200, "PUT s3")
    harness.expect_status(C.delete("/v1/sessions/gloss/segments/s5"), 204, "DELETE s5")
    # two systems with a baseline, a translator
    C.create_session(id="pair", systems=["baseline", "adaptive"],
                     options={"baseline_system": "baseline"})
    for i in range(1, 5):
        b = seg(i, "vaccin")
        del b["hypothesis"]
        b["hypotheses"] = {"baseline": "le vaccin numéro %d" % i,
                           "adaptive": "le vaccin se répand vite numéro %d" % i}
        b["metadata"] = {"translator": "t%d" % (i % 2)}
        post(C, "pair", b)
    # past the 32nd seq: a checkpoint and a settle, then an edit before it
    C.create_session(id="long")
    for i in range(1, 41):
        post(C, "long", seg(i, ["virus", "vaccin", "masque"][i % 3]))
    b = dict(seg(35, "masque"))
    b["translation"] = "le masque change tout"
    harness.expect_status(C.put("/v1/sessions/long/segments/s35", b), 200, "PUT long s35")
    # a background vocabulary and a session naming it
    harness.expect_status(C.put("/v1/vocabularies/bg1", "1200 virus\n3 vaccin\n",
                                ctype="text/plain"), (200, 201), "vocabulary")
    C.create_session(id="novel", options={"background_vocabulary": "bg1", "rare_threshold": 5})
    for i in range(1, 4):
        post(C, "novel", seg(i))
    # a deleted session and an empty one
    C.create_session(id="gone")
    post(C, "gone", seg(1))
    harness.expect_status(C.delete("/v1/sessions/gone"), 204, "DELETE gone")
    C.create_session(id="empty")


def fill_b(C):
    harness.expect_status(C.put("/v1/vocabularies/bg1", "1200 virus\n3 vaccin\n",
                                ctype="text/plain"), (200, 201), "vocabulary")
    C.create_session(id="b-one")
    for i in range(1, 8):
        post(C, "b-one", seg(i, "masque"))
    C.create_session(id="b-two", options={"background_vocabulary": "bg1", "rare_threshold": 5})
    for i in range(1, 4):
        post(C, "b-two", seg(i))


def build(fill):
    srv = harness.Server()
    C = srv.client()
    try:
        fill(C)
    finally:
        C.close()
        srv.stop()
    return srv.db


# ---- comparing the rows ---------------------------------------------------------

def lite_rows(path, table, off=0):
    """The visible rows of table in the SQLite file, as sorted tuples of text,
    sids shifted by off (what migrate copies)."""
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(%s)" % table)]
    where = "1"
    if table == "sessions":
        where = "substr(id, 1, 1) <> '~'"
    elif "sid" in cols:
        where = "sid IN (SELECT sid FROM sessions WHERE substr(id, 1, 1) <> '~')"
    elif table == "vocabularies":
        where = "substr(name, 1, 1) <> '~'"
    elif table == "vocabulary_words":
        where = "vid IN (SELECT vid FROM vocabularies WHERE substr(name, 1, 1) <> '~')"
    out = []
    for r in db.execute("SELECT %s FROM %s WHERE %s" % (", ".join(cols), table, where)):
        row = []
        for c, v in zip(cols, r):
            if c == "sid":
                v += off
            row.append(NULL if v is None else str(v))
        out.append(tuple(row))
    db.close()
    return cols, sorted(out)


def pg_rows(pg, db, table, cols, where="true"):
    return sorted(tuple(r) for r in psql(pg, db, "SELECT %s FROM %s WHERE %s"
                                         % (", ".join(cols), table, where)))


def lite_tables(path):
    db = sqlite3.connect(path)
    t = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                  "AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'")]
    db.close()
    return sorted(t)


def compare_all(pg, db, shards, what):
    """Every table of the shards (path, sid offset) against the target."""
    for table in lite_tables(shards[0][0]):
        if table == "counters":
            continue
        want = []
        cols = None
        for i, (path, off) in enumerate(shards):
            cols, rows = lite_rows(path, table, off)
            if table in ("vocabularies", "vocabulary_words") and i > 0:
                continue  # the same vocabulary on every shard: merged into one
            want += rows
        got = pg_rows(pg, db, table, cols)
        if table == "vocabularies":  # vids may be renumbered; compare by name
            ci = cols.index("vid")
            want = sorted(r[:ci] + r[ci + 1:] for r in want)
            got = sorted(r[:ci] + r[ci + 1:] for r in got)
        check("%s: table %s (%d rows) equal" % (what, table, len(want)),
              want == sorted(got) and len(want) > 0 or (not want and not got),
              "missing %s; extra %s" % ([r for r in want if r not in got][:2],
                                        [r for r in got if r not in want][:2]))


def max_sid(path):
    db = sqlite3.connect(path)
    v = db.execute("SELECT coalesce(max(sid), 0) FROM sessions "
                   "WHERE substr(id, 1, 1) <> '~'").fetchone()[0]
    db.close()
    return v


# ---- the tests -------------------------------------------------------------------

def test_refusals(pg, a, tmp):
    create_db(pg, "refuse")
    # a server that does not answer
    rc, err = migrate("--from", a, "--to", "postgresql://am@127.0.0.1:%d/x" % harness.free_port())
    check("unreachable server: exit 1, says so", rc == 1 and "cannot connect" in err, err)
    rc, err = migrate("--from", a, "--to", "postgresql://am@127.0.0.1:%d/nope" % pg.port)
    check("unknown database: exit 1", rc == 1 and "nope" in err, err)
    rc, err = migrate("--from", a, "--to", "garbage")
    check("not a connection string: exit 2", rc == 2 and "connection string" in err, err)
    # wrong files
    txt = os.path.join(tmp, "notes.db")
    with open(txt, "w") as f:
        f.write("just some text, not a database\n")
    rc, err = migrate("--from", txt, "--to", url(pg, "refuse"))
    check("a text file: exit 2", rc == 2 and "notes.db" in err, err)
    rc, err = migrate("--from", os.path.join(tmp, "missing.db"), "--to", url(pg, "refuse"))
    check("a missing file: exit 2", rc == 2 and "no such database file" in err, err)
    other = os.path.join(tmp, "other.db")
    sqlite3.connect(other).execute("CREATE TABLE t (x INTEGER)").connection.commit()
    rc, err = migrate("--from", other, "--to", url(pg, "refuse"))
    check("an SQLite file of another program: exit 2",
          rc == 2 and "not an adaptmon database" in err, err)
    # an old schema version
    old = os.path.join(tmp, "old.db")
    shutil.copy(a, old)
    db = sqlite3.connect(old)
    db.execute("DELETE FROM schema_migrations WHERE version = ?", (LATEST,))
    db.commit()
    db.close()
    rc, err = migrate("--from", old, "--to", url(pg, "refuse"))
    check("an old schema: exit 2, names the upgrade",
          rc == 2 and "schema version %d" % (LATEST - 1) in err and "adaptmon serve --db" in err,
          err)
    rc, err = migrate("--from", a, "--from", os.path.join(os.path.dirname(a), ".", "a.db"),
                      "--to", url(pg, "refuse"))
    check("one file given twice: exit 2", rc == 2 and "are the same file" in err, err)
    # two shards sharing a session id
    dup = os.path.join(tmp, "dup.db")
    shutil.copy(a, dup)
    rc, err = migrate("--from", a, "--from", dup, "--to", url(pg, "refuse"))
    check("two shards with one id: exit 2", rc == 2 and "is in both" in err, err)
    # a copy whose totals a replay contradicts
    bad = os.path.join(tmp, "bad.db")
    shutil.copy(a, bad)
    db = sqlite3.connect(bad)
    sid = db.execute("SELECT sid FROM sessions WHERE id = 'demo'").fetchone()[0]
    system, stats = db.execute("SELECT system, stats FROM totals WHERE sid = ? "
                               "ORDER BY system LIMIT 1", (sid,)).fetchone()
    j = json.loads(stats)

    def bump(o):
        for k, v in (o.items() if isinstance(o, dict) else enumerate(o)):
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                o[k] = v + 1
                return True
            if isinstance(v, (dict, list)) and bump(v):
                return True
        return False

    check("a totals value to falsify", bump(j), stats)
    db.execute("UPDATE totals SET stats = ? WHERE sid = ? AND system = ?",
               (json.dumps(j), sid, system))
    db.commit()
    db.close()
    rc, err = migrate("--from", bad, "--to", url(pg, "refuse"), "--sample", "100")
    check("totals a replay contradicts: exit 1, names the session",
          rc == 1 and "'demo'" in err and "replay" in err, err)
    check("nothing written by any refusal", pg_tables(pg, "refuse") == [],
          pg_tables(pg, "refuse"))
    # --dry-run: every step, nothing written
    rc, err = migrate("--from", a, "--to", url(pg, "refuse"), "--dry-run")
    check("--dry-run passes", rc == 0 and "dry run passed" in err, err)
    check("--dry-run writes nothing", pg_tables(pg, "refuse") == [], pg_tables(pg, "refuse"))


def test_one_file(pg, a, b, tmp):
    create_db(pg, "one")
    rc, err = migrate("--from", a, "--to", url(pg, "one"))
    check("migrate one file: exit 0", rc == 0, err)
    # demo, gloss, pair, long, novel: the sessions with segments ("gone" is deleted)
    check("progress and summary on stderr",
          "read snapshot" in err and "a replay of 5 sampled sessions" in err
          and "migrated 1 file" in err, err)
    compare_all(pg, "one", [(a, 0)], "one file")
    ver = psql(pg, "one", "SELECT max(version) FROM schema_migrations")
    check("schema version %d recorded" % LATEST, ver == [[str(LATEST)]], ver)
    inc = psql(pg, "one", "SELECT c.value >= (SELECT max(incarnation) FROM sessions) "
                          "FROM counters c WHERE c.name = 'incarnation'")
    check("the incarnation counter is at least every incarnation", inc == [["t"]], inc)
    nxt = psql(pg, "one", "SELECT nextval(pg_get_serial_sequence('sessions', 'sid')) > "
                          "(SELECT max(sid) FROM sessions)")
    check("the sid identity continues above the copied sids", nxt == [["t"]], nxt)
    before = psql(pg, "one", "SELECT count(*) FROM segments")
    rc, err = migrate("--from", a, "--to", url(pg, "one"))
    check("a second run into the same target: exit 2, says why",
          rc == 2 and "holds" in err and "'demo'" in err, err)
    check("the second run wrote nothing", psql(pg, "one", "SELECT count(*) FROM segments")
          == before)
    # another file into the same, non-empty target: its sids go above the target's
    rc, err = migrate("--from", b, "--to", url(pg, "one"), "--sample", "1")
    check("another shard into a non-empty target: exit 0", rc == 0, err)
    compare_all(pg, "one", [(a, 0), (b, max_sid(a))], "one file, then another")


def test_two_shards(pg, a, b, tmp):
    create_db(pg, "two")
    rc, err = migrate("--from", a, "--from", b, "--to", url(pg, "two"))
    check("migrate two shards: exit 0", rc == 0, err)
    compare_all(pg, "two", [(a, 0), (b, max_sid(a))], "two shards")
    vocab = psql(pg, "two", "SELECT count(*) FROM vocabularies")
    check("the vocabulary both shards hold is stored once", vocab == [["1"]], vocab)
    ids = psql(pg, "two", "SELECT id FROM sessions ORDER BY sid")
    check("ids in shard order", [r[0] for r in ids][-2:] == ["b-one", "b-two"], ids)
    # a vocabulary of the same name with other counts is refused
    create_db(pg, "vocab")
    c = os.path.join(tmp, "c.db")
    shutil.copy(b, c)
    db = sqlite3.connect(c)
    db.execute("UPDATE vocabulary_words SET count = count + 1 WHERE word = 'vaccin'")
    db.execute("UPDATE sessions SET id = 'c-' || id")
    db.commit()
    db.close()
    rc, err = migrate("--from", a, "--from", c, "--to", url(pg, "vocab"))
    check("a vocabulary that differs from the target's: exit 2, names it",
          rc == 2 and "'bg1'" in err and "differs" in err, err)
    check("nothing written by the vocabulary refusal", pg_tables(pg, "vocab") == [],
          pg_tables(pg, "vocab"))


def test_hidden_rows(pg, a, tmp):
    """A deleted session not yet purged and an unfinished vocabulary upload
    (names starting with '~', purged at the server's next start) stay behind."""
    create_db(pg, "hidden")
    h = os.path.join(tmp, "hidden.db")
    shutil.copy(a, h)
    db = sqlite3.connect(h)
    cols = [r[1] for r in db.execute("PRAGMA table_info(sessions)") if r[1] not in ("sid", "id")]
    db.execute("INSERT INTO sessions (sid, id, %s) SELECT 99, '~del~99', %s FROM sessions "
               "WHERE id = 'demo'" % (", ".join(cols), ", ".join(cols)))
    scols = [r[1] for r in db.execute("PRAGMA table_info(segments)") if r[1] != "sid"]
    db.execute("INSERT INTO segments (sid, %s) SELECT 99, %s FROM segments WHERE sid = "
               "(SELECT sid FROM sessions WHERE id = 'demo')" % (", ".join(scols),
                                                                ", ".join(scols)))
    db.execute("INSERT INTO vocabularies (vid, name, words, created_at) "
               "VALUES (50, '~new~bg2~1', 1, 0)")
    db.execute("INSERT INTO vocabulary_words (vid, word, count) VALUES (50, 'x', 1)")
    db.commit()
    db.close()
    rc, err = migrate("--from", h, "--to", url(pg, "hidden"))
    check("a file with hidden rows: exit 0", rc == 0, err)
    got = psql(pg, "hidden", "SELECT count(*) FROM sessions WHERE id LIKE '~%' "
                             "UNION ALL SELECT count(*) FROM segments WHERE sid = 99 "
                             "UNION ALL SELECT count(*) FROM vocabularies WHERE name LIKE '~%'")
    check("hidden sessions, their rows and hidden vocabularies are not copied",
          got == [["0"], ["0"], ["0"]], got)
    compare_all(pg, "hidden", [(h, 0)], "hidden rows")


def test_live_file(pg, a, tmp):
    """A server keeps running (and writing) on the file: the copy is its
    snapshot, and the checks pass."""
    create_db(pg, "live")
    live = os.path.join(tmp, "live.db")
    shutil.copy(a, live)
    srv = harness.Server(db=live)
    C = srv.client()
    try:
        for i in range(1, 4):
            post(C, "demo", seg(i, "terrier"))
        rc, err = migrate("--from", live, "--to", url(pg, "live"))
        check("migrate a file a server is serving: exit 0", rc == 0, err)
        got = psql(pg, "live", "SELECT segments FROM sessions WHERE id = 'demo'")
        check("the copy holds what was committed before it started", got == [["5"]], got)
    finally:
        C.close()
        srv.stop()


def main():
    only = os.environ.get("APITEST_ONLY", "")
    bindir = pg_bindir()
    if not bindir:
        print("SKIP: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb); "
              "tools/deps.sh installs postgresql-15")
        print("0 passed, 0 failed, 1 skipped")
        return 0
    tmp = tempfile.mkdtemp(prefix="am-migrate-")
    pg = PgServer(bindir)
    try:
        a = os.path.join(tmp, "a.db")
        b = os.path.join(tmp, "b.db")
        shutil.copy(build(fill_a), a)
        shutil.copy(build(fill_b), b)
        tests = [("test_refusals", lambda: test_refusals(pg, a, tmp)),
                 ("test_one_file", lambda: test_one_file(pg, a, b, tmp)),
                 ("test_two_shards", lambda: test_two_shards(pg, a, b, tmp)),
                 ("test_hidden_rows", lambda: test_hidden_rows(pg, a, tmp)),
                 ("test_live_file", lambda: test_live_file(pg, a, tmp))]
        for name, fn in tests:
            if only and only not in name:
                continue
            try:
                fn()
            except Exception as e:  # a crash of one test is its failure
                check(name + " ran", False, repr(e))
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
