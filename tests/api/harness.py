"""Shared code of the black-box API tests (tests/api/test_*.py).

Starts `adaptmon serve` on a free 127.0.0.1 port with a temporary database,
talks to it with http.client, and stops it (SIGTERM; every server still
running at exit is killed, so no process is left behind). Python standard
library only.

With APITEST_RECORD_DIR=DIR set, every exchange of a Client (method, path,
status, headers, body) is appended as one JSON line to DIR/<pid>.jsonl;
tests/api/response_check.mjs then validates each against openapi.yaml
(tests/run.sh does this for the api and reliability suites).
"""
import atexit
import base64
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ADAPTMON = os.environ.get("ADAPTMON", os.path.join(ROOT, "adaptmon"))
if not os.path.isabs(ADAPTMON):
    ADAPTMON = os.path.join(ROOT, ADAPTMON)
DATA = os.path.join(ROOT, "data")
# Under valgrind (tests/run.sh VALGRIND=1 starts servers through
# tests/reliability/valgrind-adaptmon.sh) a server starts and exits (the
# leak check walks the heap) 20-50x slower than natively, more when two
# suites share the cores (JOBS=2): the waits for its start, for its exit
# on SIGTERM and for an answer (a request's default timeout) are bounds
# against a hang, not measurements, so they scale. A test that measures
# (a starvation bound) passes its own timeout, unscaled.
VG_SLOW = 4 if "valgrind" in os.path.basename(ADAPTMON) else 1
DEV = os.path.join(DATA, "tico19-enfr-dev")
SGM_SRC = os.path.join(DEV, "dev.en-fr.en.sgm")
SGM_REF = os.path.join(DEV, "dev.en-fr.fr.sgm")
SGM_HYP = os.path.join(DEV, "en-fr.dev.txt.truecased.sgm")
TICO_GLOSSARY = os.path.join(DATA, "glossaries", "tico19", "f_en-fr_XX.csv")
PROBLEM_BASE = "https://adaptmon.dev/problems/"

_servers = []
_tmpdirs = []


def _cleanup():
    for s in list(_servers):
        try:
            s.kill()
        except Exception:
            pass
    try:
        _pg_drop_all()
    except Exception:
        pass
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


atexit.register(_cleanup)


def _on_signal(signum, frame):
    _cleanup()
    sys.exit(128 + signum)


for _sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    try:
        signal.signal(_sig, _on_signal)
    except (ValueError, OSError):
        pass


def tmpdir(prefix="adaptmon-api-"):
    d = tempfile.mkdtemp(prefix=prefix)
    _tmpdirs.append(d)
    return d


def free_port():
    """A port that was free a moment ago (bind port 0 and ask)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- PostgreSQL (ADAPTMON_TEST_PG=1) -----------------------------------------

# With ADAPTMON_TEST_PG=1 every Server started without an explicit db gets a
# fresh database of a PostgreSQL server instead of a SQLite file: the suites
# then run against the PostgreSQL driver. A test that names its db (a file it
# opens itself) keeps SQLite.
#  - ADAPTMON_TEST_PG_SHARED=PORT (tests/run.sh's PostgreSQL pass: a primary
#    with one synchronous standby, `tests/pgutil.py start`): the databases are
#    made on that cluster, dropped at exit, and the servers run with
#    --pg-require-sync on (the default), as users run them.
#  - unset (make test-pg, a suite run by hand): one throwaway primary of this
#    process (tests/pgutil.py: loopback, data under /tmp, stopped at exit); it
#    has no standby, so PG_ARGS add --pg-require-sync off.
# APITEST_PG_ARGS: more flags for the PostgreSQL servers.
#  - ADAPTMON_TEST_PG_QUICK=1 (set by tests/run.sh for the PostgreSQL pass of
#    `make test`, not by `make test-pg`): a suite may use smaller sizes
#    (pg_quick(), rel.scale's pg_n) where the store's path is the same at any
#    size, and skip a test that starts no server (no_store()); the SQLite
#    pass and `make test-pg` keep the full sizes, so the sizes are still run
#    on PostgreSQL, only not on every `make test` (its time budget).
TEST_PG = os.environ.get("ADAPTMON_TEST_PG") == "1"
PG_QUICK = TEST_PG and os.environ.get("ADAPTMON_TEST_PG_QUICK") == "1"
PG_SHARED = os.environ.get("ADAPTMON_TEST_PG_SHARED", "")
PG_ARGS = ([] if PG_SHARED else ["--pg-require-sync", "off"]) + \
    os.environ.get("APITEST_PG_ARGS", "").split()
_pg = []  # [the pgutil server or attachment, databases made so far]


def _pgutil():
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import pgutil
    return pgutil


def pg_server():
    """The PostgreSQL server of this process's databases (started on first use
    unless shared)."""
    if not _pg:
        pgutil = _pgutil()
        _pg.append(pgutil.shared() or pgutil.Server())
        _pg.append(0)
    return _pg[0]


def pg_url():
    """A fresh database on the PostgreSQL server of pg_server()."""
    srv = pg_server()
    _pg[1] += 1
    return srv.create_db("api_%d_%d" % (os.getpid(), _pg[1]))


def _pg_drop_all():
    """Drops the databases this process made on a shared cluster (a throwaway
    server goes whole at exit); after the servers are killed."""
    if PG_SHARED and _pg:
        for i in range(1, _pg[1] + 1):
            _pg[0].drop_db("api_%d_%d" % (os.getpid(), i))


def pg_run(url, script, raw=False):
    """Runs script (SQL statements, psql's -At output; stops at the first
    error, raised) on the PostgreSQL database of url
    ("postgresql://am@127.0.0.1:PORT/DB", what pg_url() gives); the rows as
    tuples of strings, None for NULL (raw: psql's output text as it is)."""
    pgutil = _pgutil()
    port = int(re.match(r"postgresql://[^@]*@[^:]*:(\d+)/", url).group(1))
    dbname = url.rsplit("/", 1)[1]
    # NULL shown as \N so it can be told from an empty string
    rc, out, err = pgutil.Attached(port).psql("\\pset null '\\N'\n" + script, dbname)
    if rc != 0:
        raise AssertionError("psql: %s (%s)" % (err.strip(), script[:300]))
    if raw:
        return out
    return [tuple(None if c == "\\N" else c for c in line.split("|"))
            for line in out.splitlines() if line]


def _pg_literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


def _pg_inline(sql, params):
    """sql with each ? replaced by the literal of the next param (the
    suites' SQL holds no ? inside its own string literals)."""
    parts = sql.split("?")
    if len(parts) != len(params) + 1:
        raise ValueError("%d ? marks but %d parameters: %s" % (len(parts) - 1, len(params), sql))
    return parts[0] + "".join(_pg_literal(p) + rest for p, rest in zip(params, parts[1:]))


class PgCursor:
    """What sqlite3's execute returns, for PgConnection: fetchone, fetchall,
    iteration."""

    def __init__(self, rows):
        self.rows = rows

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return list(self.rows)

    def __iter__(self):
        return iter(self.rows)


class PgConnection:
    """The part of a sqlite3 connection the suites use to look into (and, on
    a stopped server, edit) its database, on a PostgreSQL database: execute
    with ? parameters, commit, close, `with con:`. Each statement commits on
    its own (psql). A query's rows come typed as sqlite3 gives them (bigint
    → int, text → str, NULL → None): psql prints them as one JSON array per
    statement, so a '|' or a newline in a text cannot split a row."""

    def __init__(self, url):
        self.url = url

    def execute(self, sql, params=()):
        text = _pg_inline(sql, tuple(params)).strip().rstrip(";")
        if not re.match(r"(?is)\s*(SELECT|WITH|VALUES)\b", text):
            pg_run(self.url, text + ";")
            return PgCursor([])
        out = pg_run(self.url, "SELECT coalesce(json_agg(t), '[]') FROM (%s) t;" % text, raw=True)
        # a row is an object of its columns in order; pairs keep two of one name
        return PgCursor([tuple(v for _k, v in row)
                         for row in json.loads(out, object_pairs_hook=list)])

    def commit(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def db_connect(db, timeout=10):
    """A connection to db (a Server, a SQLite file's path or a PostgreSQL URL):
    sqlite3's for a file, a PgConnection for PostgreSQL. For a suite's
    assertions on what the store holds, on either backend."""
    db = getattr(db, "db", db)
    if db.startswith("postgresql://"):
        return PgConnection(db)
    import sqlite3
    return sqlite3.connect(db, timeout=timeout)


def db_query(server, sql, params=()):
    """The rows of a query on server's database (db_connect), whichever
    backend it uses; sql in the SQL both accept, with ? parameters."""
    con = db_connect(server)
    try:
        return [tuple(r) for r in con.execute(sql, params).fetchall()]
    finally:
        con.close()


def db_restyle_json(server, table, cols):
    """Rewrites the JSON text in columns cols of every row of table in the
    database of a stopped server as json.dumps(indent=1) would (whitespace
    a reader must parse through, as an older writer left it), on either
    backend; returns the number of values rewritten."""
    n = 0
    if server.db.startswith("postgresql://"):
        # hex: the texts may hold '|' and other characters psql's output would split on
        rows = pg_run(server.db, "SELECT ctid, %s FROM %s;" % (", ".join(
            "encode(convert_to(%s, 'UTF8'), 'hex')" % c for c in cols), table))
        script = ["BEGIN;"]
        for row in rows:
            sets = []
            for c, hx in zip(cols, row[1:]):
                text = json.dumps(json.loads(bytes.fromhex(hx).decode("utf-8")), indent=1)
                sets.append("%s = '%s'" % (c, text.replace("'", "''")))
                n += 1
            script.append("UPDATE %s SET %s WHERE ctid = '%s';" % (table, ", ".join(sets), row[0]))
        script.append("COMMIT;")
        pg_run(server.db, "\n".join(script))
        return n
    import sqlite3
    con = sqlite3.connect(server.db)
    try:
        for col in cols:
            for rowid, text in con.execute("SELECT rowid, %s FROM %s" % (col, table)).fetchall():
                con.execute("UPDATE %s SET %s = ? WHERE rowid = ?" % (table, col),
                            (json.dumps(json.loads(text), indent=1), rowid))
                n += 1
        con.commit()
    finally:
        con.close()
    return n


# ---- the server ------------------------------------------------------------

class Server:
    """One `adaptmon serve` process on 127.0.0.1:PORT with database DB."""

    def __init__(self, *args, db=None, ready_timeout=15.0 * VG_SLOW):
        self.dir = tmpdir()
        # a restart on a PostgreSQL database it was given keeps the PostgreSQL flags
        self.pg = TEST_PG and (db is None or db.startswith("postgresql://"))
        self.db = db or (pg_url() if self.pg else os.path.join(self.dir, "adaptmon.db"))
        self.args = list(args) + (PG_ARGS if self.pg else [])
        self.proc = None
        self.port = None
        self.ready_timeout = ready_timeout
        self.start()

    def start(self):
        """Starts (or restarts) the process on a new free port."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
        # an empty ADAPTMON_CONFIG reads no file: a host's /etc/adaptmon/adaptmon.conf
        # (read by default when present) must not change the servers under test
        env["ADAPTMON_CONFIG"] = ""
        last = ""
        for _attempt in range(3):
            self.port = free_port()
            self.out_path = os.path.join(self.dir, "stdout-%d.log" % self.port)
            self.err_path = os.path.join(self.dir, "stderr-%d.log" % self.port)
            out = open(self.out_path, "wb")
            err = open(self.err_path, "wb")
            # APITEST_SERVE_ARGS: flags added to every server a suite starts,
            # e.g. "--readers 1" runs it with one pooled reader (lock order)
            cmd = [ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(self.port),
                   "--db", self.db] + self.args + os.environ.get("APITEST_SERVE_ARGS", "").split()
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         cwd=self.dir, env=env)
            out.close()
            err.close()
            _servers.append(self)
            deadline = time.monotonic() + self.ready_timeout
            self.saw_line = False
            while time.monotonic() < deadline:
                with open(self.out_path, "rb") as f:
                    text = f.read().decode("utf-8", "replace")
                if "adaptmon listening on http://" in text:
                    self.saw_line = True
                    return
                if self.proc.poll() is not None:
                    break
                # fallback (the line may sit in a stdio buffer): /readyz answers
                if time.monotonic() > deadline - self.ready_timeout / 2 and self._ready():
                    return
                time.sleep(0.02)
            last = self.logs()
            self.kill()
        raise AssertionError("adaptmon serve did not start (%s):\n%s" % (" ".join(cmd), last))

    def _ready(self):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
            c.request("GET", "/readyz")
            ok = c.getresponse().status == 200
            c.close()
            return ok
        except OSError:
            return False

    def logs(self, tail=3000):
        text = ""
        for p in (self.out_path, self.err_path):
            try:
                with open(p, "rb") as f:
                    text += f.read().decode("utf-8", "replace")[-tail:]
            except OSError:
                pass
        return text

    def stop(self, timeout=15 * VG_SLOW):
        """SIGTERM and wait; returns the exit status."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("adaptmon serve ignored SIGTERM for %ds" % timeout)
        self.proc = None
        if self in _servers:
            _servers.remove(self)
        if rc != 0:
            # show why (a sanitizer report, a failed checkpoint, …)
            try:
                with open(self.err_path, "rb") as f:
                    tail = f.read()[-4000:].decode("utf-8", "replace")
                print("# adaptmon serve exited %r; end of its stderr:\n%s" % (rc, tail))
            except OSError:
                pass
        return rc

    def kill(self):
        """SIGKILL (kill -9) and wait."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc = None
        if self in _servers:
            _servers.remove(self)

    def client(self, token=None):
        return Client(self.port, token)


def serve(*args):
    """Starts `adaptmon serve` with the flags args; returns (server, a
    client of it). Stop both with shutdown()."""
    s = Server(*args)
    return s, s.client()


def shutdown(server, client=None):
    """Closes client and stops server with SIGTERM (either may be None);
    fails unless adaptmon serve exits 0."""
    if client:
        client.close()
    if server:
        eq(server.stop(), 0, "exit status of adaptmon serve after SIGTERM")


def base(sid):
    """The URL path of session sid."""
    return "/v1/sessions/" + sid


def metric_value(c, name):
    """The value of the unlabelled sample `name` in c's GET /metrics."""
    r = c.get("/metrics")
    expect_status(r, 200, "/metrics")
    m = re.search(r"(?m)^" + re.escape(name) + r" (\S+)$", r.text)
    if not m:
        raise AssertionError(name + " missing from /metrics")
    return float(m.group(1))


def timeline(c, sid):
    """Every segment of session sid's timeline through client c (pages of
    1000)."""
    segs, after = [], 0
    while True:
        r = c.get(base(sid) + "/segments?after=%d&limit=1000" % after)
        expect_status(r, 200, "timeline of %s" % sid)
        d = r.json()
        segs += d["segments"]
        if d["next"] is None:
            return segs
        after = d["next"]


# ---- HTTP ------------------------------------------------------------------

RECORD_DIR = os.environ.get("APITEST_RECORD_DIR")
RECORD_MAX_BODY = 4 << 20       # longer bodies are recorded truncated (not validated)
_record_lock = threading.Lock()


def record(method, path, status, headers, body):
    """Appends one exchange to DIR/<pid>.jsonl when APITEST_RECORD_DIR is set.
    headers: list of (name, value); body: bytes."""
    if not RECORD_DIR:
        return
    rec = {"method": method, "path": path, "status": status,
           "headers": [[k, v] for k, v in headers], "truncated": len(body) > RECORD_MAX_BODY}
    chunk = body[:RECORD_MAX_BODY]
    try:
        rec["body"] = chunk.decode("utf-8")
    except UnicodeDecodeError:
        rec["body_b64"] = base64.b64encode(chunk).decode("ascii")
    line = json.dumps(rec, ensure_ascii=False) + "\n"
    with _record_lock:
        with open(os.path.join(RECORD_DIR, "%d.jsonl" % os.getpid()), "a", encoding="utf-8") as f:
            f.write(line)

class Response:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers          # list of (name, value)
        self.body = body                # bytes

    def header(self, name):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    @property
    def content_type(self):
        ct = self.header("Content-Type") or ""
        return ct.split(";")[0].strip().lower()

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except Exception as e:
            raise AssertionError("body is not JSON (%s): %r" % (e, self.body[:300]))

    @property
    def text(self):
        return self.body.decode("utf-8", "replace")

    def __repr__(self):
        return "<%d %s %r>" % (self.status, self.content_type, self.body[:400])


class Client:
    """A keep-alive HTTP/1.1 client for one thread (reconnects when needed)."""

    def __init__(self, port, token=None):
        self.port = port
        self.token = token
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, body=None, headers=None, ctype=None, token=None,
                timeout=60 * VG_SLOW):
        """Sends one request; body: dict/list (JSON), str or bytes."""
        h = {}
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode("utf-8")
            h["Content-Type"] = "application/json"
        elif isinstance(body, str):
            body = body.encode("utf-8")
        if ctype is not None:
            h["Content-Type"] = ctype
        tok = token if token is not None else self.token
        if tok:
            h["Authorization"] = "Bearer " + tok
        if headers:
            h.update(headers)
        for attempt in (0, 1):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            try:
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                resp = Response(r.status, r.getheaders(), data)
                record(method, path, r.status, resp.headers, data)
                if (r.getheader("Connection") or "").lower() == "close":
                    self.close()
                return resp
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest, http.client.ResponseNotReady):
                # a kept-alive connection the server closed: retry once on a new one
                self.close()
                if attempt:
                    raise

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    # JSON shortcuts that assert the status
    def jget(self, path, status=200):
        r = self.get(path)
        expect_status(r, status, "GET " + path)
        return r.json()

    def jpost(self, path, body, status=(200, 201)):
        r = self.post(path, body)
        expect_status(r, status, "POST " + path)
        return r.json()

    def create_session(self, **fields):
        fields.setdefault("source_lang", "en")
        fields.setdefault("target_lang", "fr")
        r = self.post("/v1/sessions", fields)
        expect_status(r, 201, "POST /v1/sessions %r" % (fields,))
        return r.json()


# ---- assertions --------------------------------------------------------------

def eq(got, exp, what):
    if got != exp:
        raise AssertionError("%s: got %r, expected %r" % (what, got, exp))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def expect_status(r, status, what=""):
    ok = r.status in status if isinstance(status, (tuple, list, set)) else r.status == status
    if not ok:
        raise AssertionError("%s: status %d, expected %r; body %r"
                             % (what, r.status, status, r.body[:600]))


def expect_problem(r, status, slug, what=""):
    """An RFC 9457 problem+json with the given status and stable type."""
    expect_status(r, status, what)
    eq(r.content_type, "application/problem+json", what + " Content-Type")
    p = r.json()
    for k in ("type", "title", "status", "detail"):
        check(k in p, "%s: problem lacks %r: %r" % (what, k, p))
    eq(p["status"], status, what + " problem.status")
    check(isinstance(p["title"], str) and p["title"], what + " problem.title empty")
    check(isinstance(p["detail"], str), what + " problem.detail not a string")
    if slug is not None:
        exp = slug if isinstance(slug, (tuple, list)) else (slug,)
        check(p["type"] in [PROBLEM_BASE + s for s in exp],
              "%s: problem type %r, expected %s" % (what, p["type"],
                                                    " or ".join(PROBLEM_BASE + s for s in exp)))
    return p


# The pending words (schema/010) as rows (sid, seq, words): those of the
# segments after their session's settled seq, kept in the segment's row.
PENDING = ("(SELECT p.sid AS sid, p.seq AS seq, p.words AS words FROM segments p "
           "JOIN sessions ss ON ss.sid = p.sid WHERE p.seq > ss.settled AND p.words IS NOT NULL)")


def settle_pending(db, sid=None):
    """Moves the pending words (schema/010; 009 kept them in a table of
    their own) of session sid (all sessions with None) into vocab and
    occurrences on an open sqlite3 connection of a stopped server's
    database, as the server's settle does (am_store_tx_history_settle): for
    tests that rewrite the database to an older schema or copy a session's
    history in SQL."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    seg_cols = [r[1] for r in db.execute("PRAGMA table_info(segments)")]
    if "pending_words" in tables:
        src = "pending_words"
    elif "words" in seg_cols:
        src = PENDING
    else:
        return
    where = "" if sid is None else " WHERE p.sid = %d" % sid
    db.execute("INSERT INTO vocab (sid, word, occ, first_seq, last_seq) SELECT p.sid, j.value, "
               "count(*), min(p.seq), max(p.seq) FROM %s p, json_each(p.words) j%s "
               "%s GROUP BY p.sid, j.value ON CONFLICT (sid, word) DO UPDATE SET "
               "occ = occ + excluded.occ, first_seq = min(first_seq, excluded.first_seq), "
               "last_seq = max(last_seq, excluded.last_seq)"
               % (src, where, "AND true" if where else "WHERE true"))
    db.execute("INSERT INTO occurrences (sid, word, seq) SELECT p.sid, j.value, p.seq FROM "
               "%s p, json_each(p.words) j%s" % (src, where))
    if src == "pending_words":
        db.execute("DELETE FROM pending_words" + where.replace("p.sid", "sid"))
    else:
        db.execute("UPDATE sessions SET settled = segments" + where.replace("p.sid", "sid"))


def count(c):
    """[hits, total] of a Count object."""
    return [c["hits"], c["total"]]


# ---- data --------------------------------------------------------------------

_ENT = re.compile(r"&(lt|gt|amp|quot|apos|#[0-9]+|#[xX][0-9a-fA-F]+);")


def _decode(s):
    def rep(m):
        e = m.group(1)
        if e[0] == "#":
            return chr(int(e[2:], 16) if e[1] in "xX" else int(e[1:]))
        return {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}[e]
    return _ENT.sub(rep, s)


def read_sgm(path):
    """{(docid, segid): text} and the keys in file order; text = tags removed,
    entities decoded once, whitespace collapsed (as data/README.md says)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out, order = {}, []
    for doc in re.finditer(r'<doc\b([^>]*)>(.*?)</doc>', text, re.S):
        docid = re.search(r'docid="([^"]*)"', doc.group(1)).group(1)
        for seg in re.finditer(r'<seg id="([^"]*)"\s*>(.*?)</seg>', doc.group(2), re.S):
            plain = re.sub(r"<[^>]*>", "", seg.group(2))
            key = (docid, seg.group(1))
            out[key] = " ".join(_decode(plain).split())
            order.append(key)
    return out, order


_tico = None


def tico19():
    """The 971 TICO-19 dev segments in reference order: list of dicts with
    id, source, hypothesis (Fairseq), translation (the reference)."""
    global _tico
    if _tico is None:
        src, _ = read_sgm(SGM_SRC)
        ref, order = read_sgm(SGM_REF)
        hyp, _ = read_sgm(SGM_HYP)
        _tico = [{"id": re.sub(r"[^A-Za-z0-9._-]", "_", "%s.%s" % k),
                  "source": src[k], "hypothesis": hyp[k], "translation": ref[k]}
                 for k in order]
    return _tico


def golden():
    with open(os.path.join(DATA, "golden", "tico19-enfr-dev.json"), encoding="utf-8") as f:
        return json.load(f)


# ---- the runner --------------------------------------------------------------

class Skip(Exception):
    """Raised by a test that cannot run in this environment (say why); it is
    reported as "skip NAME: why" and counted apart, never as passed."""


def sqlite_only(why):
    """In the PostgreSQL pass (ADAPTMON_TEST_PG=1) a test that is about the
    SQLite file itself (its schema history, its size cap, a copy of it)
    calls this first: it is skipped there, saying why. Anything it asserts
    about stored rows belongs in db_query instead, which works on both."""
    if TEST_PG:
        raise Skip("SQLite only: " + why)


def no_store(why):
    """In the quick PostgreSQL pass (PG_QUICK) a test that starts no server
    and reads no database (the CLI on files, a build) would only repeat the
    SQLite pass's run: it is skipped there, saying why. `make test-pg` still
    runs it."""
    if PG_QUICK:
        raise Skip("no store: " + why)


def pg_quick(n, quick_n):
    """n, or quick_n in the quick PostgreSQL pass (PG_QUICK): for a size
    whose store path is the same at any size (the suite says why at the
    call)."""
    return quick_n if PG_QUICK else n


GONE = 'adaptmon_requests_abandoned_total{reason="client_gone"}'


def abandoned(c):
    """The server's count of requests abandoned because their client had
    gone (GONE in /metrics), read through client c."""
    r = c.get("/metrics")
    expect_status(r, 200, "/metrics")
    m = re.search(r"(?m)^" + re.escape(GONE) + r" (\S+)$", r.text)
    check(m, GONE + " in /metrics")
    return float(m.group(1))


def cpu_seconds(pid):
    """utime + stime of process pid (/proc/PID/stat), in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_tests(namespace, setup=None, teardown=None):
    """Runs every test_* function of namespace in name order; prints
    "ok NAME", "skip NAME: why" or "FAILED NAME" + traceback and ends with
    "N passed, N failed" (", N skipped" when any was). Returns the exit
    status."""
    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_") and callable(f)]
    only = os.environ.get("APITEST_ONLY")
    if only:
        tests = [(n, f) for n, f in tests if re.search(only, n)]
    passed = failed = skipped = 0
    try:
        if setup:
            setup()
    except Exception:
        print("FAILED setup")
        traceback.print_exc(file=sys.stdout)
        print("%d passed, %d failed" % (0, len(tests) or 1))
        _cleanup()
        return 1
    try:
        for name, fn in tests:
            t0 = time.monotonic()
            try:
                fn()
                print("ok     %s (%.2fs)" % (name, time.monotonic() - t0))
                passed += 1
            except Skip as why:
                print("skip   %s: %s" % (name, why))
                skipped += 1
            except Exception:
                print("FAILED %s (%.2fs)" % (name, time.monotonic() - t0))
                traceback.print_exc(file=sys.stdout)
                failed += 1
            sys.stdout.flush()
    finally:
        if teardown:
            try:
                teardown()
            except Exception:
                print("FAILED teardown")
                traceback.print_exc(file=sys.stdout)
                failed += 1
        _cleanup()
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0
