"""The fault plan of DESIGN-postgres.md §6 as runs, with a checker.

Each run starts a fresh cluster (tests/ha/pgcluster.py), puts it under load
from a load generator, injects one fault, repairs it the way an HA manager
would (promote the most advanced standby, re-point the other, rejoin or
rebuild the old primary), and then compares what the generator was told was
committed with what the surviving primary holds:

  acknowledged  segments whose commit returned (the writer's ack)
  ambiguous     attempts whose outcome the writer could not know (the
                connection broke after the COMMIT may have been sent); the
                generator retries them with the same client id until they
                are acknowledged, as adaptmon's clients must
  lost          acknowledged segments the surviving primary does not hold:
                must be 0 (the control run must show > 0)
  gap           the longest time between two acknowledgements (all
                writers together) in the run: the write outage

The generator drives pluggable writers (writer.post(session, cid, body) ->
"acked" | "ambiguous" | "refused"):

  SqlWriter   a stand-in for adaptmon's PostgreSQL driver until it lands:
              psycopg2 with a libpq multi-host string and
              target_session_attrs=read-write, one transaction per segment
              on adaptmon's own tables (schema/pg/): lock the sessions row
              (FOR NO KEY UPDATE, as §2.5), answer a known client id with the
              stored row (idempotent retry), else insert at seq + 1 and bump
              the session's counters. Commit returned = acknowledged.
  HttpWriter  adaptmon's API: POST /v1/sessions/{id}/segments to a list of
              node URLs (2xx = acknowledged, 5xx or a broken/timed-out
              request = ambiguous, retried on the next node with the same id
              and body). Used by run "node_kill" against adaptmon nodes; with
              `--db postgresql://…` once the driver lands (HA_ADAPTMON_DB).

The checker reads the surviving data through a reader: SqlReader (the
surviving primary's segments table) or HttpReader (GET …/segments pages of a
live node, backend-neutral).

Usage: python3 tests/ha/faults.py [--short] [--only NAME,…] [--table FILE]
Prints one line per run and a Markdown table, then "N passed, N failed".
--short runs primary_kill, standby_kill and control (about 2 minutes here).
primary_kill_first is primary_kill under synchronous_standby_names FIRST 1.
"""
import argparse
import glob
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import pgcluster  # noqa: E402

try:
    import psycopg2
except ImportError:  # Debian's python3-psycopg2 under another interpreter (pyenv)
    for _p in glob.glob("/usr/lib/python3/dist-packages"):
        sys.path.append(_p)
    try:
        import psycopg2
    except ImportError:
        psycopg2 = None

DETECT = 1.0  # seconds the stand-in manager takes to notice a dead primary


# ---- writers -----------------------------------------------------------------

class SqlWriter:
    """One connection (one thread) writing segments as adaptmon's POST does."""

    def __init__(self, cluster, sync_commit="on"):
        self.cluster = cluster
        self.sync_commit = sync_commit
        self.conn = None

    def dsn(self):
        nodes = self.cluster.nodes
        return ("host=%s port=%s user=am dbname=postgres target_session_attrs=read-write "
                "connect_timeout=2 keepalives=1 keepalives_idle=1 keepalives_interval=1 "
                "keepalives_count=2 tcp_user_timeout=2000 options='-c synchronous_commit=%s'"
                % (",".join("127.0.0.1" for _ in nodes), ",".join(str(n.port) for n in nodes),
                   self.sync_commit))

    def _connect(self):
        if self.conn is None:
            self.conn = psycopg2.connect(self.dsn())
        return self.conn

    def drop(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 (a broken connection closes as it can)
                pass
            self.conn = None

    def create(self, session):
        c = self._connect()
        with c.cursor() as cur:
            now = int(time.time() * 1000)
            cur.execute("INSERT INTO sessions (id, options, signature, created_at, updated_at) "
                        "VALUES (%s, '{}', 'ha', %s, %s) ON CONFLICT (id) DO NOTHING",
                        (session, now, now))
        c.commit()

    def post(self, session, cid, body):
        try:
            c = self._connect()
        except psycopg2.Error:
            return "refused"  # nothing was sent: not ambiguous, just retried
        try:
            with c.cursor() as cur:
                cur.execute("SELECT sid, segments FROM sessions WHERE id = %s "
                            "FOR NO KEY UPDATE", (session,))
                sid, last = cur.fetchone()
                cur.execute("SELECT seq FROM segments WHERE sid = %s AND client_id = %s",
                            (sid, cid))
                if cur.fetchone() is None:
                    now = int(time.time() * 1000)
                    cur.execute("INSERT INTO segments (sid, seq, client_id, body_hash, request, "
                                "result, created_at, updated_at) VALUES "
                                "(%s, %s, %s, md5(%s), %s, '{}', %s, %s)",
                                (sid, last + 1, cid, body, body, now, now))
                    cur.execute("UPDATE sessions SET segments = %s, version = version + 1, "
                                "updated_at = %s WHERE sid = %s", (last + 1, now, sid))
            c.commit()  # returns once the commit is on the primary and a quorum
            return "acked"
        except psycopg2.Error:
            self.drop()
            return "ambiguous"


class HttpWriter:
    """adaptmon's POST through a list of node URLs (fail over on error)."""

    def __init__(self, urls, timeout=10):
        self.urls = list(urls)
        self.i = 0
        self.timeout = timeout

    def _req(self, method, path, body=None):
        url = self.urls[self.i % len(self.urls)] + path
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def create(self, session):
        st, _ = self._req("POST", "/v1/sessions", {"id": session, "source_lang": "en",
                                                    "target_lang": "fr"})
        if st not in (201, 409):
            raise RuntimeError("session %s: HTTP %d" % (session, st))

    def post(self, session, cid, body):
        seg = {"id": cid, "source": body, "hypothesis": body, "translation": body}
        try:
            st, _ = self._req("POST", "/v1/sessions/%s/segments" % session, seg)
        except ConnectionRefusedError:
            self.i += 1
            return "refused"
        except (OSError, http.client.HTTPException) as e:  # URLError is an OSError
            self.i += 1
            if isinstance(getattr(e, "reason", None), ConnectionRefusedError):
                return "refused"
            return "ambiguous"
        if 200 <= st < 300:
            return "acked"
        if st >= 500:
            self.i += 1
            return "ambiguous"
        raise RuntimeError("POST %s/%s: HTTP %d" % (session, cid, st))

    def drop(self):
        pass


# ---- readers (what the surviving system holds) ------------------------------

class SqlReader:
    def __init__(self, cluster):
        self.cluster = cluster

    def segments(self, prefix):
        """{session: [(seq, client_id)]} of sessions whose id starts with prefix."""
        out = self.cluster.psql(self.cluster.primary,
                                "SELECT s.id, g.seq, g.client_id FROM segments g JOIN sessions s"
                                " USING (sid) WHERE s.id LIKE '%s%%' ORDER BY 1, 2" % prefix,
                                timeout=60)
        if out is None:
            raise RuntimeError("the surviving primary %s does not answer" % self.cluster.primary)
        res = {}
        for ln in out.splitlines():
            s, q, c = ln.split("|")
            res.setdefault(s, []).append((int(q), c))
        return res


class HttpReader:
    def __init__(self, url, sessions):
        self.url = url
        self.sessions = sessions

    def segments(self, _prefix):
        res = {}
        for s in self.sessions:
            after, rows = 0, []
            while True:
                with urllib.request.urlopen("%s/v1/sessions/%s/segments?after=%d&limit=1000"
                                            % (self.url, s, after), timeout=30) as r:
                    d = json.loads(r.read())
                rows += [(g["seq"], g["id"]) for g in d["segments"]]
                if d["next"] is None:
                    break
                after = d["next"]
            res[s] = rows
        return res


# ---- the load generator ------------------------------------------------------

class Load:
    """n writer threads, each on a session of its own, posting segments with
    client ids '<session>-<n>' as fast as acknowledgements come."""

    def __init__(self, make_writer, n, prefix="ha-w"):
        self.writers = [make_writer() for _ in range(n)]
        self.sessions = ["%s%d" % (prefix, i) for i in range(n)]
        self.prefix = prefix
        self.acked = {}  # cid -> ack time
        self.ambiguous = set()  # cids that had an ambiguous attempt
        self.pending = set()  # cids still unresolved when the run stopped
        self.acks = []  # ack times, all writers
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = []

    def start(self):
        for w, s in zip(self.writers, self.sessions):
            w.create(s)
        self.t0 = time.time()
        for i in range(len(self.writers)):
            t = threading.Thread(target=self._run, args=(i,), daemon=True)
            t.start()
            self.threads.append(t)

    def _run(self, i):
        w, s = self.writers[i], self.sessions[i]
        n = 0
        while not self.stop.is_set():
            n += 1
            cid = "%s-%d" % (s, n)
            body = "segment %d of %s" % (n, s)
            while True:
                r = w.post(s, cid, body)
                if r == "acked":
                    now = time.time()
                    with self.lock:
                        self.acked[cid] = now
                        self.acks.append(now)
                    break
                if r == "ambiguous":
                    with self.lock:
                        self.ambiguous.add(cid)
                if self.stop.is_set():
                    with self.lock:
                        self.pending.add(cid)
                    return
                time.sleep(0.05)

    def finish(self, grace=30):
        """Stops after the in-flight posts resolve (or grace seconds)."""
        self.stop.set()
        for t in self.threads:
            t.join(grace)
        for w in self.writers:
            w.drop()
        self.t1 = time.time()

    def gap(self):
        ts = sorted(self.acks)
        if len(ts) < 2:
            return float("inf")
        return max(b - a for a, b in zip(ts, ts[1:]))


def check(load, reader):
    """Compares the acknowledged with what the reader sees: a dict of counts
    and the problems found (lost ids, duplicates, seq holes)."""
    held = reader.segments(load.prefix)
    stored = {}
    problems = []
    for s, rows in held.items():
        seqs = [q for q, _ in rows]
        if seqs != list(range(1, len(seqs) + 1)) and not _increasing(seqs):
            problems.append("%s: seqs not increasing" % s)
        for _q, cid in rows:
            if cid in stored:
                problems.append("%s: client id %s twice" % (s, cid))
            stored[cid] = s
    lost = sorted(c for c in load.acked if c not in stored)
    amb_committed = sum(1 for c in load.ambiguous if c in stored)
    return {"acked": len(load.acked), "ambiguous": len(load.ambiguous),
            "amb_committed": amb_committed, "lost": len(lost), "lost_ids": lost[:5],
            "stored": len(stored), "gap": load.gap(), "problems": problems}


def _increasing(seqs):
    return all(a < b for a, b in zip(seqs, seqs[1:]))


# ---- the runs ----------------------------------------------------------------

def _failover(c, note):
    """The stand-in manager: wait DETECT, promote the most advanced standby."""
    time.sleep(DETECT)
    n = c.most_advanced()
    took = c.promote(n)
    c.note("%s: promoted %s in %.2f s" % (note, n.name, took))
    return n


def run_primary_kill(c, load):
    """#1: kill -9 the primary under load; promote; rejoin the old one."""
    old = c.primary
    c.kill(old)
    c.note("killed primary %s" % old.name)
    _failover(c, "primary kill")
    time.sleep(4)
    return "old primary back by " + c.rejoin(old)


def run_primary_disk(c, load):
    """#2: kill -9 the primary and delete its data directory; rebuild it."""
    old = c.primary
    c.delete_data(old)
    c.note("deleted the data directory of %s" % old.name)
    _failover(c, "primary disk")
    time.sleep(4)
    return "old primary back by " + c.rejoin(old)


def run_standby_kill(c, load):
    """#3: kill -9 one standby (quorum: no gap), then the primary too: the
    promoted node has no standby, so commits wait (never acknowledged
    without a second copy) until the killed standby returns."""
    sb = c.nodes[2]
    t_kill = time.time()
    c.kill(sb)
    c.note("killed standby %s" % sb.name)
    time.sleep(3)
    with load.lock:
        during = [t for t in load.acks if t > t_kill]
    old = c.primary
    c.kill(old)
    c.note("killed primary %s while %s is down" % (old.name, sb.name))
    _failover(c, "double fault")
    time.sleep(3)
    with load.lock:
        blocked = len([t for t in load.acks if t > time.time() - 2.5])
    c._point(sb, c.primary, reload=False)
    c.start(sb)
    c.wait_streaming(sb, c.primary)
    time.sleep(2)
    how = c.rejoin(old)
    return ("%d acks in the 3 s after the standby kill; %d acks while the new primary had no "
            "standby; old primary back by %s" % (len(during), blocked, how))


def run_rejoin_nostream(c, load):
    """#4: the design's rejoined primary that never streams (pg_rewind
    before the new primary's first checkpoint), detected and rebuilt; then a
    second primary kill must still lose nothing and not hang."""
    old = c.primary
    c.kill(old)
    _failover(c, "first kill")
    time.sleep(1)
    how = c.rejoin(old, checkpoint_first=False)
    c.note("rejoin without checkpoint: %s" % how)
    time.sleep(2)
    second = c.primary
    c.kill(second)
    c.note("killed the second primary %s" % second.name)
    _failover(c, "second kill")
    time.sleep(4)
    return "first rejoin by %s (%s); second failover done" % (
        how, "streaming check caught it" if how == "rebuild" else "no fork this time")


def run_primary_cut(c, load):
    """#5: network cut of the primary; promote on the other side; fence the
    old primary (stop it: it cannot commit anyway, its standbys are cut
    off), heal, rewind it."""
    old = c.primary
    c.cut(old)
    c.note("cut %s" % old.name)
    _failover(c, "primary cut")
    time.sleep(5)
    c.stop(old)
    c.heal()
    c.note("healed")
    return "old primary back by " + c.rejoin(old)


def run_standby_full(c, load):
    """#7: a standby's pg_wal tmpfs fills; quorum keeps commits going; space
    freed: it catches up. Then the primary is killed: 0 lost."""
    sb = c.nodes[2]
    t_fill = time.time()
    c.fill_disk(sb)
    # The standby writes into a preallocated 16 MB segment until it needs the
    # next one: a WAL switch on the primary makes it need one now.
    c.psql(c.primary, "SELECT pg_switch_wal()")
    c.note("filled pg_wal of %s, switched WAL" % sb.name)
    deadline = time.time() + 15
    while time.time() < deadline and c.replication(c.primary).get(sb.name, ("",))[0] == \
            "streaming":
        time.sleep(0.2)
    state = c.replication(c.primary).get(sb.name)
    c.note("%s's replication now %s" % (sb.name, state))
    time.sleep(3)
    with load.lock:
        during = len([t for t in load.acks if t > t_fill])
    c.free_disk(sb)
    ok = c.wait_streaming(sb, c.primary, 30)
    old = c.primary
    c.kill(old)
    _failover(c, "kill after disk full")
    time.sleep(3)
    if state and state[0] == "streaming":
        raise RuntimeError("%s still streams with a full pg_wal" % sb.name)
    state = "%s gone from pg_stat_replication" % sb.name if state is None else state
    return ("%d acks while %s's disk was full (%s); caught up: %s; then "
            "primary killed, old primary back by %s" % (during, sb.name, state, ok,
                                                         c.rejoin(old)))


def run_control(c, load):
    """#12: asynchronous standby, synchronous_commit=off: kill -9 the
    primary; the checker must find lost acknowledgements."""
    old = c.primary
    c.kill(old)
    _failover(c, "control")
    time.sleep(3)
    return "asynchronous: losses expected"


RUNS = [
    # name, function, cluster kwargs, writer synchronous_commit, expect losses
    ("primary_kill", run_primary_kill, {}, "on", False),
    ("primary_kill_first", run_primary_kill, {"sync": "FIRST 1"}, "on", False),
    ("primary_disk", run_primary_disk, {}, "on", False),
    ("standby_kill", run_standby_kill, {}, "on", False),
    ("rejoin_nostream", run_rejoin_nostream, {}, "on", False),
    ("primary_cut", run_primary_cut, {}, "on", False),
    ("standby_disk_full", run_standby_full, {"wal_tmpfs": ("n2",)}, "on", False),
    ("control", run_control, {"sync": "", "extra": ("wal_writer_delay = 5000ms",
                                                          "wal_writer_flush_after = 64MB")}, "off",
     True),
]
SHORT = ("primary_kill", "standby_kill", "control")
HTTP_RUNS = ("node_kill", "node_kill_pg", "primary_kill_nodes")


def apply_schema(c):
    for f in sorted(glob.glob(os.path.join(ROOT, "schema", "pg", "*.sql"))):
        with open(f, encoding="utf-8") as fh:
            if c.psql(c.primary, fh.read(), timeout=60) is None:
                raise RuntimeError("schema %s does not apply" % f)


def one_run(name, fn, kw, sync_commit, expect_loss, writers, warm):
    t0 = time.time()
    with pgcluster.Cluster(**kw) as c:
        apply_schema(c)
        load = Load(lambda: SqlWriter(c, sync_commit), writers)
        load.start()
        time.sleep(warm)
        try:
            detail = fn(c, load)
        finally:
            time.sleep(1)
            load.finish()
        res = check(load, SqlReader(c))
        res["detail"] = detail
        res["events"] = c.events
    res["name"] = name
    res["seconds"] = time.time() - t0
    if expect_loss:
        res["ok"] = res["lost"] > 0
    else:
        res["ok"] = res["lost"] == 0 and not res["problems"] and res["acked"] > 0
    return res


def _serve(adaptmon, port, db, workdir):
    """Starts `adaptmon serve` on port; returns the Popen once /readyz is 200."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    env["ADAPTMON_CONFIG"] = ""  # no host config file changes the node under test
    log = open(os.path.join(workdir, "serve-%d.log" % port), "ab")
    p = subprocess.Popen([adaptmon, "serve", "--listen", "127.0.0.1", "--port", str(port),
                          "--db", db], stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                         cwd=workdir, env=env)
    log.close()
    deadline = time.time() + 30
    while time.time() < deadline:
        if p.poll() is not None:
            raise RuntimeError("adaptmon serve exited %d (%s)" % (p.returncode, workdir))
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=2) as r:
                if r.status == 200:
                    return p
        except OSError:
            pass
        time.sleep(0.1)
    p.kill()
    raise RuntimeError("adaptmon serve not ready on %d" % port)


def one_http_run(name, writers, warm):
    """#9 (node side): adaptmon nodes under HTTP load, one killed with
    SIGKILL. With HA_ADAPTMON_DB (a postgresql:// string, once the driver
    lands) two nodes share that database and the writers fail over to the
    survivor; without it one node on a SQLite file is restarted on the same
    file (what a single-machine deployment does). The checker reads the
    survivor's GET …/segments pages."""
    adaptmon = os.path.join(ROOT, "build", "adaptmon")
    if not os.path.exists(adaptmon):
        raise RuntimeError("build/adaptmon absent: make all")
    pgdb = os.environ.get("HA_ADAPTMON_DB")
    work = tempfile.mkdtemp(prefix="am-ha-http-")
    db = pgdb or os.path.join(work, "adaptmon.db")
    ports = [pgcluster.free_port() for _ in range(2 if pgdb else 1)]
    procs = {}
    t0 = time.time()
    try:
        for port in ports:
            procs[port] = _serve(adaptmon, port, db, work)
        urls = ["http://127.0.0.1:%d" % p for p in ports]
        load = Load(lambda: HttpWriter(urls), writers, prefix="ha-h")
        load.start()
        time.sleep(warm)
        try:
            victim = ports[0]
            procs[victim].kill()
            procs[victim].wait(10)
            if len(ports) == 1:
                time.sleep(1)
                procs[victim] = _serve(adaptmon, victim, db, work)
                detail = "SQLite: the node killed and restarted on its file"
            else:
                detail = "%s: one of two nodes killed" % pgdb.split("?")[0]
            time.sleep(4)
        finally:
            load.finish()
        live = [p for p in ports if procs[p].poll() is None][0]
        res = check(load, HttpReader("http://127.0.0.1:%d" % live, load.sessions))
        res["detail"] = detail
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    res["events"] = []
    res["name"] = name
    res["seconds"] = time.time() - t0
    res["ok"] = res["lost"] == 0 and not res["problems"] and res["acked"] > 0
    return res


def one_http_pg_run(name, writers, warm):
    """#1 and #9 with adaptmon itself on PostgreSQL: two adaptmon nodes on a
    primary and two synchronous standbys (ANY 1, fsync on), reached through a
    libpq multi-host string with target_session_attrs=read-write, under HTTP
    load from writers that fail over between the nodes. node_kill_pg: one
    node SIGKILLed (its sessions must be served by the other at once);
    primary_kill_nodes: the primary SIGKILLed, the most advanced standby
    promoted, the old primary rejoined. The checker reads every session back
    through the surviving node."""
    adaptmon = os.path.join(ROOT, "build", "adaptmon")
    if not os.path.exists(adaptmon):
        raise RuntimeError("build/adaptmon absent: make all")
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="am-ha-pg-")
    procs = {}
    try:
        with pgcluster.Cluster(standbys=2, sync="ANY 1", fsync=True) as c:
            db = ("host=%s port=%s user=am dbname=postgres target_session_attrs=read-write "
                  "connect_timeout=2" % (",".join("127.0.0.1" for _ in c.nodes),
                                         ",".join(str(n.port) for n in c.nodes)))
            ports = [pgcluster.free_port() for _ in range(2)]
            for port in ports:
                procs[port] = _serve(adaptmon, port, db, work)
            urls = ["http://127.0.0.1:%d" % p for p in ports]
            load = Load(lambda: HttpWriter(urls), writers, prefix="ha-%s-" % name[:4])
            load.start()
            time.sleep(warm)
            try:
                if name == "node_kill_pg":
                    procs[ports[0]].kill()
                    procs[ports[0]].wait(10)
                    detail = "one of two adaptmon nodes on PostgreSQL killed"
                    time.sleep(4)
                else:
                    detail = "two adaptmon nodes on PostgreSQL; " + run_primary_kill(c, load)
                    time.sleep(1)
            finally:
                load.finish()
            live = [p for p in ports if procs[p].poll() is None][0]
            res = check(load, HttpReader("http://127.0.0.1:%d" % live, load.sessions))
            res["detail"] = detail
            res["events"] = list(c.events)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    res["name"] = name
    res["seconds"] = time.time() - t0
    res["ok"] = res["lost"] == 0 and not res["problems"] and res["acked"] > 0
    return res


def table(results):
    lines = ["| run | acknowledged | ambiguous (of which committed) | lost | longest write gap "
             "| result | what happened |", "|---|---:|---:|---:|---:|---|---|"]
    for r in results:
        lines.append("| %s | %d | %d (%d) | %d | %.2f s | %s | %s |" % (
            r["name"], r["acked"], r["ambiguous"], r["amb_committed"], r["lost"], r["gap"],
            "ok" if r["ok"] else "FAIL", r.get("detail", "")))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--warm", type=float, default=3.0, help="seconds of load before the fault")
    ap.add_argument("--table", help="also write the Markdown table to this file")
    a = ap.parse_args()
    why = pgcluster.available() or (None if psycopg2 else "python3-psycopg2 absent")
    if why:
        print("skipped: " + why)
        print("0 passed, 0 failed")
        return 0
    want = [x for x in a.only.split(",") if x] or (list(SHORT) if a.short else
                                                   [r[0] for r in RUNS] + list(HTTP_RUNS))
    results = []
    for name, fn, kw, sc, loss in RUNS + [(n, None, None, None, False) for n in HTTP_RUNS]:
        if name not in want:
            continue
        try:
            if fn is None and name == "node_kill":
                r = one_http_run(name, a.writers, a.warm)
            elif fn is None:
                r = one_http_pg_run(name, a.writers, a.warm)
            else:
                r = one_run(name, fn, kw, sc, loss, a.writers, a.warm)
        except Exception as e:  # noqa: BLE001 (a broken run is a failed run, the rest go on)
            r = {"name": name, "acked": 0, "ambiguous": 0, "amb_committed": 0, "lost": 0,
                 "gap": float("inf"), "ok": False, "detail": "error: %s" % e, "problems": [],
                 "events": [], "seconds": 0}
        print("%s %s: acked %d, ambiguous %d (%d committed), lost %d %s, gap %.2f s, %.0f s; %s"
              % ("ok  " if r["ok"] else "FAIL", r["name"], r["acked"], r["ambiguous"],
                 r["amb_committed"], r["lost"], r.get("lost_ids", ""), r["gap"], r["seconds"],
                 r["detail"]), flush=True)
        for p in r["problems"][:5]:
            print("     problem: " + p)
        for e in r["events"]:
            print("     event: " + e)
        results.append(r)
    t = table(results)
    print(t)
    if a.table:
        with open(a.table, "w") as f:
            f.write(t + "\n")
    ok = sum(1 for r in results if r["ok"])
    print("%d passed, %d failed" % (ok, len(results) - ok))
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
