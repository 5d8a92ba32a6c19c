"""Shared code of the reliability suites (tests/reliability/test_*.py and
soak.py): raw-socket HTTP, database dumps with the sqlite3 module, the
crash-consistency run (posts from several threads into several sessions,
SIGKILL at random points, restart, verify) and the replay check.

Builds on tests/api/harness.py (server start/stop, the HTTP client, the test
runner). Python standard library only.
"""
import json
import os
import random
import socket
import sqlite3
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
from harness import (PG_QUICK, ROOT, Server, check, db_connect, eq, expect_status,  # noqa: E402,F401
                     pg_run, settle_pending, tico19, timeline)

OPTIONS = {"profile": "simianer2019", "stopwords": "iso"}
# Under valgrind (tests/run.sh VALGRIND=1) everything is ~30x slower.
SLOW = os.environ.get("ADAPTMON_UNDER_VALGRIND") == "1" or "valgrind" in os.path.basename(
    os.environ.get("ADAPTMON", ""))


def scale(n, slow_n, pg_n=None):
    """n normally, slow_n when the server runs under valgrind, pg_n (when
    given) in the quick PostgreSQL pass of `make test` (harness.PG_QUICK:
    for a size whose store path is the same at any size)."""
    if SLOW:
        return slow_n
    return pg_n if PG_QUICK and pg_n is not None else n


# ---- raw HTTP -----------------------------------------------------------------

def raw(port, data, timeout=10.0, chunks=None, pause=0.0):
    """Sends bytes (or a list of byte chunks with pause seconds between them)
    on a new connection and reads until the server closes it or timeout.
    Returns (status or None, headers dict (lower-case names), body bytes,
    closed_by_server)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        parts = chunks if chunks is not None else [data]
        for i, p in enumerate(parts):
            try:
                s.sendall(p)
            except (BrokenPipeError, ConnectionResetError):
                break
            if pause and i + 1 < len(parts):
                time.sleep(pause)
        buf = b""
        closed = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                s.settimeout(max(0.05, deadline - time.monotonic()))
                got = s.recv(65536)
            except socket.timeout:
                break
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
            if not got:
                closed = True
                break
            buf += got
            if _complete(buf):
                break
        return _parse(buf) + (closed,)
    finally:
        s.close()


def _complete(buf):
    """True when buf holds one whole response (Content-Length framed)."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            try:
                return len(body) >= int(v.strip())
            except ValueError:
                return False
    return False


def _parse(buf):
    if not buf.startswith(b"HTTP/"):
        return (None, {}, buf)
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return (None, {}, buf)
    hdrs = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        hdrs[k.strip().lower().decode("latin-1")] = v.strip().decode("latin-1")
    return (status, hdrs, body)


def problem_type(body):
    try:
        return json.loads(body.decode("utf-8")).get("type", "").rsplit("/", 1)[-1]
    except Exception:
        return None


# ---- the database -------------------------------------------------------------

TABLES = ("sessions", "segments", "vocab", "occurrences", "totals", "choices",
          "vocabularies")


def db_dump(path):
    """{table: sorted list of rows} of every table of the database file (the
    server must be stopped). Tables that do not exist are left out. path
    may be a PostgreSQL URL: its tables of the schema public."""
    if path.startswith("postgresql://"):
        con = db_connect(path)
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
            "AND table_type = 'BASE TABLE'")]
        return {t: sorted(con.execute("SELECT * FROM \"%s\"" % t).fetchall(), key=repr)
                for t in sorted(names)}
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
        out = {}
        for t in sorted(names):
            out[t] = sorted(con.execute("SELECT * FROM \"%s\"" % t).fetchall(), key=repr)
        return out
    finally:
        con.close()


def drop_ci_records(path):
    """Removes every segment row's stored ?ci= statistics (schema 013, and
    each staged result's, 014) in a stopped server's database (a SQLite path
    or a PostgreSQL URL), as rows written before those schemas have none: ?ci= then reads and scores every
    segment again, the seconds of CPU a budget or a client's close must
    stop (with the records a 64,000-segment ?ci= takes about a second)."""
    if path.startswith("postgresql://"):
        pg_run(path, "UPDATE segments SET stats = NULL; UPDATE segment_results SET stats = NULL;")
        return
    con = db_connect(path)
    with con:
        con.execute("UPDATE segments SET stats = NULL")
        con.execute("UPDATE segment_results SET stats = NULL")  # schema 014
    con.close()


def grow_session(path, session, target):
    """Grows a session of a stopped server's database to `target` segments by
    copying its segments (new client ids) and occurrences in SQL, doubling,
    as posting them again would write them (vocab occ/last_seq recomputed):
    a big session in seconds, for tests whose expensive request is a replay
    of it. Works on every schema version (the segment columns are read).
    path may be a PostgreSQL URL (the PostgreSQL pass): the same SQL there."""
    if path.startswith("postgresql://"):
        return _pg_grow_session(path, session, target)
    db = sqlite3.connect(path)
    cols = [r[1] for r in db.execute("PRAGMA table_info(segments)")]
    sel = {"seq": "s.seq + m.mx", "client_id": "s.client_id || '-g' || m.mx"}
    collist = ", ".join(cols)
    sellist = ", ".join(sel.get(c, "s." + c) for c in cols)
    sid = db.execute("SELECT sid FROM sessions WHERE id = ?", (session,)).fetchone()[0]
    with db:
        settle_pending(db, sid)  # the pending words (schema/010) first: the copies are complete
        while True:
            mx = db.execute("SELECT max(seq) FROM segments WHERE sid = ?", (sid,)).fetchone()[0]
            if mx >= target:
                break
            db.execute("INSERT INTO occurrences SELECT o.sid, o.word, o.seq + ? FROM occurrences o "
                       "WHERE o.sid = ? AND o.seq + ? <= ?", (mx, sid, mx, target))
            db.execute("INSERT INTO segments (%s) SELECT %s FROM segments s, (SELECT ? AS mx) m "
                       "WHERE s.sid = ? AND s.seq + m.mx <= ?" % (collist, sellist),
                       (mx, sid, target))
        db.execute("UPDATE vocab SET occ = (SELECT count(*) FROM occurrences o WHERE o.sid = vocab.sid "
                   "AND o.word = vocab.word), last_seq = (SELECT max(seq) FROM occurrences o WHERE "
                   "o.sid = vocab.sid AND o.word = vocab.word) WHERE sid = ?", (sid,))
        db.execute("UPDATE sessions SET segments = (SELECT max(seq) FROM segments WHERE sid = ?), "
                   "version = version + 1 WHERE sid = ?", (sid, sid))
        if "settled" in [r[1] for r in db.execute("PRAGMA table_info(sessions)")]:
            # the copies' words are in occurrences already: settled (schema/010)
            db.execute("UPDATE sessions SET settled = segments WHERE sid = ?", (sid,))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def grown_db(n, *args):
    """The database of a stopped server (args) with session "g" of n
    segments: 40 TICO-19 segments posted (OPTIONS), then copied in SQL
    (grow_session)."""
    srv = Server(*args)
    try:
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        segs = tico19()
        for k in range(40):
            expect_status(c.post("/v1/sessions/g/segments", seg_body(segs[k], "s%d" % k)), 201)
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()
    grow_session(srv.db, "g", n)
    return srv.db


def _pg_grow_session(url, session, target):
    """grow_session on a PostgreSQL database (schema/pg: the current schema
    only, pending words in segments.words above sessions.settled), in one
    transaction: the settle, the doublings, the recount."""
    sid = int(pg_run(url, "SELECT sid FROM sessions WHERE id = '%s';"
                     % session.replace("'", "''"))[0][0])
    cols = [r[0] for r in pg_run(url, "SELECT column_name FROM information_schema.columns "
                                      "WHERE table_name = 'segments' ORDER BY ordinal_position;")]
    sel = {"seq": "s.seq + %(mx)d", "client_id": "s.client_id || '-g' || %(mx)d"}
    collist = ", ".join(cols)
    sellist = ", ".join(sel.get(c, "s." + c) for c in cols)
    mx = int(pg_run(url, "SELECT max(seq) FROM segments WHERE sid = %d;" % sid)[0][0])
    # the settle first (am_store_tx_history_settle): the copies are complete
    script = [
        "BEGIN;",
        "INSERT INTO vocab (sid, word, occ, first_seq, last_seq) SELECT p.sid, j.value, count(*), "
        "min(p.seq), max(p.seq) FROM segments p JOIN sessions ss ON ss.sid = p.sid, "
        "json_array_elements_text(p.words::json) j(value) WHERE p.sid = %d AND p.seq > ss.settled "
        "AND p.words IS NOT NULL GROUP BY p.sid, j.value ON CONFLICT (sid, word) DO UPDATE SET "
        "occ = vocab.occ + excluded.occ, first_seq = least(vocab.first_seq, excluded.first_seq), "
        "last_seq = greatest(vocab.last_seq, excluded.last_seq);" % sid,
        "INSERT INTO occurrences (sid, word, seq) SELECT p.sid, j.value, p.seq FROM segments p "
        "JOIN sessions ss ON ss.sid = p.sid, json_array_elements_text(p.words::json) j(value) "
        "WHERE p.sid = %d AND p.seq > ss.settled AND p.words IS NOT NULL;" % sid,
    ]
    while mx < target:  # the doublings: mx is known without asking (min(2 mx, target))
        script.append("INSERT INTO occurrences SELECT o.sid, o.word, o.seq + %d FROM occurrences o "
                      "WHERE o.sid = %d AND o.seq + %d <= %d;" % (mx, sid, mx, target))
        script.append("INSERT INTO segments (%s) SELECT %s FROM segments s WHERE s.sid = %d AND "
                      "s.seq + %d <= %d;" % (collist, sellist % {"mx": mx}, sid, mx, target))
        mx = min(2 * mx, target)
    script += [
        "UPDATE vocab SET occ = (SELECT count(*) FROM occurrences o WHERE o.sid = vocab.sid "
        "AND o.word = vocab.word), last_seq = (SELECT max(seq) FROM occurrences o WHERE "
        "o.sid = vocab.sid AND o.word = vocab.word) WHERE sid = %d;" % sid,
        "UPDATE sessions SET segments = (SELECT max(seq) FROM segments WHERE sid = %d), "
        "version = version + 1, settled = (SELECT max(seq) FROM segments WHERE sid = %d) "
        "WHERE sid = %d;" % (sid, sid, sid),
        "COMMIT;",
    ]
    pg_run(url, "\n".join(script))


def integrity(path):
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        return [r[0] for r in con.execute("PRAGMA integrity_check")]
    finally:
        con.close()


def db_segments(path):
    """{session id: [(seq, client_id, request JSON text, result JSON text)]}
    in seq order, plus {session id: (options, segments column)}; path may
    be a PostgreSQL URL."""
    if path.startswith("postgresql://"):
        return _pg_db_segments(path)
    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        sess = {r[0]: (r[1], r[2], r[3]) for r in con.execute(
            "SELECT id, sid, options, segments FROM sessions")}
        segs = {}
        for sid_text, (sid, _o, _n) in sess.items():
            segs[sid_text] = con.execute(
                "SELECT seq, client_id, request, result FROM segments WHERE sid=? ORDER BY seq",
                (sid,)).fetchall()
        return segs, {k: (v[1], v[2]) for k, v in sess.items()}
    finally:
        con.close()


def _pg_db_segments(url):
    """db_segments on PostgreSQL (texts hex-encoded: psql's output would split
    on a '|' or a newline in them)."""
    def text(hx):
        return bytes.fromhex(hx).decode("utf-8") if hx is not None else None
    sess = {r[0]: (int(r[1]), text(r[2]), int(r[3])) for r in pg_run(
        url, "SELECT encode(convert_to(id, 'UTF8'), 'hex'), sid, "
        "encode(convert_to(options, 'UTF8'), 'hex'), segments FROM sessions;")}
    sess = {text(k): v for k, v in sess.items()}
    segs = {}
    for sid_text, (sid, _o, _n) in sess.items():
        segs[sid_text] = [
            (int(r[0]), text(r[1]), text(r[2]), text(r[3])) for r in pg_run(
                url, "SELECT seq, encode(convert_to(client_id, 'UTF8'), 'hex'), "
                "encode(convert_to(request, 'UTF8'), 'hex'), "
                "encode(convert_to(result, 'UTF8'), 'hex') FROM segments WHERE sid = %d "
                "ORDER BY seq;" % sid)]
    return segs, {k: (v[1], v[2]) for k, v in sess.items()}


def check_log(path, what=""):
    """PRAGMA integrity_check = ok; in every session seq = 1..n without gaps or
    duplicates, client ids unique, sessions.segments = n. Returns the
    segments of db_segments."""
    if not path.startswith("postgresql://"):  # SQLite's own check; the rest hold on both
        eq(integrity(path), ["ok"], what + " PRAGMA integrity_check")
    segs, sess = db_segments(path)
    for sid, rows in segs.items():
        eq([r[0] for r in rows], list(range(1, len(rows) + 1)), "%s seqs of %s" % (what, sid))
        ids = [r[1] for r in rows]
        eq(len(set(ids)), len(ids), "%s client ids of %s unique" % (what, sid))
        eq(sess[sid][1], len(rows), "%s sessions.segments of %s" % (what, sid))
    return segs, sess


def replay_equals(srv_metrics, segs_by_session, options, what=""):
    """Posts every session's stored requests in seq order into a fresh session
    of a fresh server and compares its /metrics "systems" with srv_metrics
    ({session: metrics JSON}) exactly."""
    fresh = Server()
    try:
        c = fresh.client()
        for sid, rows in sorted(segs_by_session.items()):
            c.create_session(id=sid, options=json.loads(options[sid]) if isinstance(
                options[sid], str) else options[sid])
            for _seq, _cid, req, _res in rows:
                r = c.post("/v1/sessions/%s/segments" % sid, json.loads(req))
                expect_status(r, 201, "%s replay of %s" % (what, sid))
            m = c.jget("/v1/sessions/%s/metrics" % sid)
            eq(m["segments"], len(rows), "%s replayed segments of %s" % (what, sid))
            eq(m["systems"], srv_metrics[sid]["systems"],
               "%s totals of %s vs a replay of its segment log" % (what, sid))
        c.close()
        eq(fresh.stop(), 0, "exit status of the replay server")
    finally:
        fresh.kill()


# ---- the crash-consistency run ----------------------------------------------------

def seg_body(s, cid):
    """The POST body of TICO-19 segment s under client id cid."""
    return {"id": cid, "source": s["source"], "hypothesis": s["hypothesis"],
            "translation": s["translation"]}


# Two option sets that score differently (profile, hence signature and
# stopwords, differ): a segment scored with the wrong one is visible.
OPTS_A = {"profile": "simianer2019", "stopwords": "iso"}
OPTS_B = {"profile": "standard", "stopwords": "none"}


def new_session(c, sid, opts, glossary=None):
    """POSTs session sid (en-fr, options opts, an inline glossary when
    given) with client c; returns the response (not checked)."""
    body = {"id": sid, "source_lang": "en", "target_lang": "fr", "options": dict(opts)}
    if glossary is not None:
        body["glossary"] = glossary
    return c.post("/v1/sessions", body)


def run_threads(targets, timeout=120):
    """Runs each callable of targets in its own thread, all at once, and
    joins them (timeout seconds each)."""
    ts = [threading.Thread(target=f) for f in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)


class CrashRun:
    """Writers post unique segments into a few sessions; the server is killed
    with SIGKILL at random points and restarted on the same database."""

    RESULT_KEYS = ("seq", "id", "scores", "totals", "signature")

    def __init__(self, rounds, threads, sessions, seed, min_run=0.3, max_run=1.2, log=print):
        self.rounds = rounds
        self.threads = threads
        self.sessions = ["crash%d" % i for i in range(sessions)]
        self.rnd = random.Random(seed)
        self.seed = seed
        self.min_run, self.max_run = min_run, max_run
        self.log = log
        self.acked = {}        # (session, client id) -> result JSON of the 201
        self.lock = threading.Lock()
        self.posts = 0         # answers received (2xx)
        self.kills = 0
        self.counter = 0
        self.segs = tico19()

    def _writer(self, srv, wno, stop, errors):
        rnd = random.Random(self.seed * 1000 + wno + 17 * self.kills)
        sess = self.sessions[wno % len(self.sessions)]
        c = srv.client()
        try:
            while not stop.is_set():
                with self.lock:
                    self.counter += 1
                    n = self.counter
                cid = "w%d-k%d-n%d" % (wno, self.kills, n)
                s = self.segs[rnd.randrange(len(self.segs))]
                try:
                    r = c.post("/v1/sessions/%s/segments" % sess, seg_body(s, cid), timeout=30)
                except Exception:
                    if not stop.is_set():
                        errors.append("writer %d: post failed before the kill" % wno)
                    return
                if r.status != 201:
                    if not stop.is_set():
                        errors.append("writer %d: %d %r" % (wno, r.status, r.body[:200]))
                    return
                with self.lock:
                    self.acked[(sess, cid)] = r.json()
                    self.posts += 1
                # sometimes re-post an acknowledged one: idempotent 200, same answer
                if rnd.random() < 0.05:
                    try:
                        r2 = c.post("/v1/sessions/%s/segments" % sess, seg_body(s, cid),
                                    timeout=30)
                    except Exception:
                        return
                    if r2.status not in (200,) and not stop.is_set():
                        errors.append("writer %d: re-post %d" % (wno, r2.status))
                        return
        finally:
            c.close()

    def verify_acked(self, srv, what):
        """Every acknowledged segment is stored with its acknowledged result."""
        c = srv.client()
        try:
            for (sess, cid), res in sorted(self.acked.items()):
                r = c.get("/v1/sessions/%s/segments/%s" % (sess, cid))
                expect_status(r, 200, "%s: acknowledged segment %s/%s" % (what, sess, cid))
                got = r.json()
                for k in self.RESULT_KEYS:
                    eq(got.get(k), res.get(k), "%s: stored %s of %s/%s" % (what, k, sess, cid))
            for sess in self.sessions:
                tl = timeline(c, sess)
                eq([x["seq"] for x in tl], list(range(1, len(tl) + 1)),
                   "%s: timeline seqs of %s" % (what, sess))
                ids = [x["id"] for x in tl]
                eq(len(set(ids)), len(ids), "%s: client ids of %s unique" % (what, sess))
        finally:
            c.close()

    def run(self):
        """Returns a summary dict; raises AssertionError on a violation."""
        t0 = time.monotonic()
        srv = Server()
        try:
            c = srv.client()
            for sess in self.sessions:
                c.create_session(id=sess, options=dict(OPTIONS))
            c.close()
            for rno in range(self.rounds):
                stop = threading.Event()
                errors = []
                ws = [threading.Thread(target=self._writer, args=(srv, i, stop, errors))
                      for i in range(self.threads)]
                for w in ws:
                    w.start()
                time.sleep(self.rnd.uniform(self.min_run, self.max_run))
                stop.set()
                srv.kill()
                self.kills += 1
                for w in ws:
                    w.join(60)
                    check(not w.is_alive(), "a writer hangs after the kill")
                check(not errors, "round %d: %s" % (rno, errors[:3]))
                srv.start()
                self.verify_acked(srv, "after kill %d" % self.kills)
                self.log("# kill %d: %d acknowledged so far" % (self.kills, len(self.acked)))
            # final state: metrics, graceful stop, database checks, replay
            c = srv.client()
            metrics = {s: c.jget("/v1/sessions/%s/metrics" % s) for s in self.sessions}
            c.close()
            eq(srv.stop(), 0, "exit status after SIGTERM")
            segs, sess = check_log(srv.db, "after %d kills:" % self.kills)
            stored = sum(len(v) for v in segs.values())
            check(stored >= len(self.acked), "fewer stored (%d) than acknowledged (%d)"
                  % (stored, len(self.acked)))
            # at most one unacknowledged (in-flight) segment per writer per kill
            check(stored <= len(self.acked) + self.threads * self.kills,
                  "more stored (%d) than acknowledged + in flight" % stored)
            for s in self.sessions:
                eq(metrics[s]["segments"], len(segs[s]), "metrics.segments of %s" % s)
            replay_equals(metrics, segs, {s: OPTIONS for s in self.sessions},
                          "after %d kills:" % self.kills)
            return {"kills": self.kills, "acknowledged": len(self.acked), "stored": stored,
                    "answers": self.posts, "seconds": round(time.monotonic() - t0, 1)}
        finally:
            srv.kill()
