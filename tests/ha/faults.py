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

  HttpWriter  adaptmon's API: POST /v1/sessions/{id}/segments to a list of
              node URLs (2xx = acknowledged, 5xx or a broken/timed-out
              request = ambiguous, retried on the next node with the same id
              and body). Writer k starts on node k % 2, as a router spreads
              sessions. Every run of the plan (RUNS) uses it: two `adaptmon
              serve` nodes on the cluster (Nodes), reached through a libpq
              multi-host string with target_session_attrs=read-write.
  SqlWriter   the stand-in from before the driver landed: psycopg2, one
              transaction per segment on adaptmon's own tables (schema/pg/):
              lock the sessions row (FOR NO KEY UPDATE, as §2.5), answer a
              known client id with the stored row, else insert at seq + 1.
              Kept for `--sql` (SQL_RUNS): the cluster and the checker alone,
              with more acknowledgements per run, and the design's literal
              control (synchronous_commit=off in the writer's session, which
              adaptmon never sends).

The checker reads the surviving data through a reader: SqlReader (the
surviving primary's segments table) or HttpReader (GET …/segments pages of a
live node, backend-neutral; the SQLite run node_kill_sqlite).

Runs beyond the cluster faults: node_kill (an adaptmon node SIGKILLed),
node_cut (an adaptmon node cut from PostgreSQL by iptables while it still
serves HTTP), node_kill_replay (a node SIGKILLed during a replay; the other
node's replay must equal a serial post), role_sync_off (the am role's
default synchronous_commit is off: adaptmon must override it), control (an
asynchronous cluster: losses expected) and soak (faults in turn for
SOAK_SECONDS; only with --soak or --long, as are primary_kill_first and
rejoin_nostream, whose subject is the cluster rather than the writer).

Usage: python3 tests/ha/faults.py [--short | --long | --sql | --soak [SECONDS]]
                                  [--only NAME,…] [--table FILE]
Prints one line per run and a Markdown table, then "N passed, N failed".
--short runs primary_kill, standby_kill and control (about 2 minutes here).
primary_kill_first is primary_kill under synchronous_standby_names FIRST 1.
HA_KEEP_LOGS=DIR copies the adaptmon nodes' logs of each run to DIR/<run>.
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
        # sync_commit None: the role's default (run sql_role_sync_off)
        opt = "" if self.sync_commit is None else \
            " options='-c synchronous_commit=%s'" % self.sync_commit
        return ("host=%s port=%s user=am dbname=postgres target_session_attrs=read-write "
                "connect_timeout=2 keepalives=1 keepalives_idle=1 keepalives_interval=1 "
                "keepalives_count=2 tcp_user_timeout=2000%s"
                % (",".join("127.0.0.1" for _ in nodes), ",".join(str(n.port) for n in nodes),
                   opt))

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
                row = cur.fetchone()
                if row is None:  # the session's own row was lost (an asynchronous run)
                    c.rollback()
                    return "refused"
                sid, last = row
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

    def __init__(self, urls, timeout=10, first=0):
        self.urls = list(urls)
        self.i = first  # the node this writer tries first (writers spread over the nodes)
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


def run_primary_kill(c, load, am=None):
    """#1: kill -9 the primary under load; promote; rejoin the old one."""
    old = c.primary
    c.kill(old)
    c.note("killed primary %s" % old.name)
    _failover(c, "primary kill")
    time.sleep(4)
    return "old primary back by " + c.rejoin(old)


def run_primary_disk(c, load, am=None):
    """#2: kill -9 the primary and delete its data directory; rebuild it."""
    old = c.primary
    c.delete_data(old)
    c.note("deleted the data directory of %s" % old.name)
    _failover(c, "primary disk")
    time.sleep(4)
    return "old primary back by " + c.rejoin(old)


def run_standby_kill(c, load, am=None):
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


def run_rejoin_nostream(c, load, am=None):
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


def run_primary_cut(c, load, am=None):
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


def run_standby_full(c, load, am=None):
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


def run_control(c, load, am=None):
    """#12: asynchronous standby, synchronous_commit=off: kill -9 the
    primary; the checker must find lost acknowledgements."""
    old = c.primary
    c.kill(old)
    _failover(c, "control")
    time.sleep(3)
    return "asynchronous: losses expected"


def apply_schema(c):
    for f in sorted(glob.glob(os.path.join(ROOT, "schema", "pg", "*.sql"))):
        with open(f, encoding="utf-8") as fh:
            if c.psql(c.primary, fh.read(), timeout=60) is None:
                raise RuntimeError("schema %s does not apply" % f)


def _role_sync_off(c, on):
    """Makes synchronous_commit=off the am role's default (on: else nothing)."""
    if on and c.psql(c.primary, "ALTER ROLE am SET synchronous_commit = off") is None:
        raise RuntimeError("ALTER ROLE am SET synchronous_commit = off failed")


def one_run(name, fn, kw, sync_commit, expect_loss, writers, warm):
    t0 = time.time()
    kw = dict(kw)
    role_off = kw.pop("role_sync_off", False)
    with pgcluster.Cluster(**kw) as c:
        apply_schema(c)
        _role_sync_off(c, role_off)
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


def _serve(adaptmon, port, db, workdir, args=()):
    """Starts `adaptmon serve` on port; returns the Popen once /readyz is 200."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    env["ADAPTMON_CONFIG"] = ""  # no host config file changes the node under test
    log = open(os.path.join(workdir, "serve-%d.log" % port), "ab")
    p = subprocess.Popen([adaptmon, "serve", "--listen", "127.0.0.1", "--port", str(port),
                          "--db", db] + list(args), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
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


class Nodes:
    """adaptmon nodes serving one PostgreSQL cluster c. Node i reaches the
    postmasters through hosts[i] (127.0.0.1, or 127.0.0.2 for a node that a
    run cuts off with c.cut_addr), with a libpq multi-host string and
    target_session_attrs=read-write; keepalives and tcp_user_timeout make a
    cut connection fail in ~2 s instead of hanging (a commit's wait is never
    cancelled by adaptmon, but a dead TCP connection ends it)."""

    def __init__(self, c, work, hosts=("127.0.0.1", "127.0.0.1"), args=()):
        self.c = c
        self.work = work
        self.hosts = list(hosts)
        self.args = list(args)
        self.adaptmon = os.path.join(ROOT, "build", "adaptmon")
        if not os.path.exists(self.adaptmon):
            raise RuntimeError("build/adaptmon absent: make all")
        self.ports = [pgcluster.free_port() for _ in self.hosts]
        self.procs = [None] * len(self.hosts)
        for i in range(len(self.hosts)):
            self.start(i)

    def dsn(self, i):
        nodes = self.c.nodes
        return ("host=%s port=%s user=am dbname=postgres target_session_attrs=read-write "
                "connect_timeout=2 keepalives=1 keepalives_idle=1 keepalives_interval=1 "
                "keepalives_count=2 tcp_user_timeout=2000"
                % (",".join(self.hosts[i] for _ in nodes), ",".join(str(n.port) for n in nodes)))

    def url(self, i):
        return "http://127.0.0.1:%d" % self.ports[i]

    def urls(self):
        return [self.url(i) for i in range(len(self.ports))]

    def start(self, i):
        self.procs[i] = _serve(self.adaptmon, self.ports[i], self.dsn(i), self.work, self.args)

    def kill(self, i):
        """SIGKILL to node i (by its PID)."""
        p = self.procs[i]
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(10)

    def live(self):
        return [i for i, p in enumerate(self.procs) if p is not None and p.poll() is None]

    def close(self):
        for i in range(len(self.procs)):
            self.kill(i)


def run_node_kill(c, load, am):
    """#9 (node side): one of two adaptmon nodes SIGKILLed under load; its
    sessions are served by the other at once."""
    am.kill(0)
    time.sleep(4)
    return "one of two adaptmon nodes killed (its sessions served by the other at once)"


def _post_one(url, session, cid, timeout=5):
    """One POST of a probe segment: the HTTP status, or None (no answer)."""
    seg = {"id": cid, "source": "probe", "hypothesis": "probe", "translation": "probe"}
    req = urllib.request.Request("%s/v1/sessions/%s/segments" % (url, session),
                                 data=json.dumps(seg).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (OSError, http.client.HTTPException):
        return None


def run_node_cut(c, load, am):
    """#6: adaptmon node 0 (which reaches PostgreSQL through 127.0.0.2) is
    cut off from every PostgreSQL node for at least 6 s (until a POST sent
    to it during the cut has answered) while it keeps serving HTTP:
    its in-flight POSTs fail (503, or no answer: ambiguous), the writers
    retry on node 1, which must not wait on row locks node 0's dead
    connections held (the servers' tcp_keepalives/tcp_user_timeout end
    them). After the heal node 0 must serve writes again by itself."""
    t_cut = time.time()
    c.cut_addr(am.hosts[0])
    c.note("cut adaptmon node 0 (%s) from PostgreSQL" % am.hosts[0])
    probe = "ha-cut-probe"
    HttpWriter([am.url(1)]).create(probe)
    st = cut_st = _post_one(am.url(0), probe, "during-cut", timeout=15)
    c.note("a POST to node 0 during the cut answered %s" % st)
    if st is not None and 200 <= st < 300:
        raise RuntimeError("node 0 acknowledged a POST while cut off from PostgreSQL")
    if st is not None and st != 503:  # a lost database is "retry", not an internal error
        raise RuntimeError("node 0 answered %d while cut off from PostgreSQL (want 503)" % st)
    time.sleep(max(0.0, 6 - (time.time() - t_cut)))
    with load.lock:
        during = len([t for t in load.acks if t > t_cut])
    c.heal()
    cut_for = time.time() - t_cut
    c.note("healed")
    deadline, n, st = time.time() + 30, 0, None
    while time.time() < deadline:
        n += 1
        st = _post_one(am.url(0), probe, "after-heal-%d" % n)
        if st is not None and 200 <= st < 300:
            break
        time.sleep(0.5)
    else:
        raise RuntimeError("node 0 does not serve writes 30 s after the heal (last %s)" % st)
    back = time.time() - t_cut - cut_for
    c.note("node 0 acknowledged a POST %.1f s after the heal" % back)
    return ("node 0 cut from PostgreSQL for %.1f s: its POST answered %s, %d acks (through node "
            "1) during the cut; node 0 writes again %.1f s after the heal"
            % (cut_for, cut_st or "nothing", during, back))


def run_control_nodes(c, load, am):
    """#12 with adaptmon: adaptmon forces synchronous_commit=on on every
    connection, so the control cannot turn it off; instead the cluster is
    asynchronous (synchronous_standby_names empty) and the nodes run with
    --pg-require-sync off, which adaptmon cannot override. The standbys'
    replication connections (through 127.0.0.3) are cut for 3 s, so they
    lag, then the primary is killed and the most advanced standby promoted:
    what was acknowledged in the lag is gone, and the checker must say so."""
    c.cut_addr(c.repl_host)
    c.note("cut the standbys' replication (%s)" % c.repl_host)
    time.sleep(3)
    old = c.primary
    c.kill(old)
    c.note("killed primary %s" % old.name)
    c.heal()
    _failover(c, "control")
    time.sleep(3)
    return "asynchronous cluster, --pg-require-sync off, standbys 3 s behind: losses expected"


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey").split()


def _replay_seg(i, variant=0):
    """Segment i of the replay run's log: recurring words (recall depends on
    the order), a baseline and a second system, one of two translators."""
    w = [WORDS[(i * 7 + k * 3 + variant * 5) % len(WORDS)] for k in range(5)]
    return {"id": "s%d" % i, "source": " ".join(w), "translator": "t%d" % (i % 2),
            "hypotheses": {"baseline": " ".join(reversed(w)),
                           "ada": "%s %s %s" % (w[0], w[2], w[1])},
            "translation": "%s %s %s near %s" % (w[0], w[1], w[2], w[3])}


def _call(url, method, path, body=None, timeout=60):
    """(status, parsed JSON or None); status None when no answer came."""
    req = urllib.request.Request(url + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        return e.code, None
    except (OSError, http.client.HTTPException):
        return None, None


def _must(url, method, path, body=None, want=(200, 201), retry=30.0):
    """_call until a wanted status (503 or no answer retried for retry s)."""
    deadline = time.time() + retry
    while True:
        st, d = _call(url, method, path, body)
        if st in want:
            return d
        if (st is not None and st != 503) or time.time() > deadline:
            raise RuntimeError("%s %s: %s" % (method, path, st))
        time.sleep(0.2)


def _results(url, session):
    """A session's stored results, without the fields naming the session,
    seq or time, in seq order."""
    out, after = [], 0
    while True:
        d = _must(url, "GET", "/v1/sessions/%s/segments?after=%d&limit=1000" % (session, after),
                  want=(200,))
        out += [json.dumps({k: v for k, v in x.items()
                            if k not in ("session", "seq", "created_ms", "created_at")},
                           sort_keys=True) for x in d["segments"]]
        if d["next"] is None:
            return out
        after = d["next"]


def _post_log(url, session, log):
    _must(url, "POST", "/v1/sessions", {"id": session, "source_lang": "en", "target_lang": "en"},
          want=(201,))
    for k in range(0, len(log), 100):
        d = _must(url, "POST", "/v1/sessions/%s/segments" % session, log[k:k + 100])
        if d.get("failed") is not None:
            raise RuntimeError("batch into %s failed at %s" % (session, d["failed"]))


REPLAY_N = 1500  # segments of the replayed session: a replay of some seconds here


def run_node_kill_replay(c, load, am):
    """#9: a replay (PUT of an early segment of a long session) through node
    0; node 0 SIGKILLed while it replays; node 1 then does the same PUT, and
    the session's results and totals must equal a serial post of the final
    log into a fresh session (no staged row of node 0's replay visible).

    Today's code has no cross-node rewrite lock (issue 28 §2.5, the
    "pglock" work): this run kills node 0, so no two replays overlap and it
    needs none; a dead node's staged rows are what it checks."""
    u0, u1 = am.url(0), am.url(1)
    log = [_replay_seg(i) for i in range(REPLAY_N)]
    _post_log(u0, "rp", log)
    t = time.time()  # a first replay, whole, to time it
    _must(u1, "PUT", "/v1/sessions/rp/segments/s1", _replay_seg(1, 1), want=(200,))
    took = time.time() - t
    c.note("a replay of %d segments took %.2f s" % (REPLAY_N, took))
    out = {}

    def put():
        out["st"] = _call(u0, "PUT", "/v1/sessions/rp/segments/s1", _replay_seg(1, 2),
                          timeout=120)[0]
    th = threading.Thread(target=put, daemon=True)
    th.start()
    time.sleep(took / 3)
    in_flight = th.is_alive()
    am.kill(0)
    th.join(10)
    c.note("node 0 killed %.2f s into its replay (%s; its PUT answered %s)"
           % (took / 3, "in flight" if in_flight else "ALREADY DONE", out.get("st")))
    _must(u1, "PUT", "/v1/sessions/rp/segments/s1", _replay_seg(1, 2), want=(200,))
    log[1] = _replay_seg(1, 2)
    _post_log(u1, "rp-ref", log)
    ra, rb = _results(u1, "rp"), _results(u1, "rp-ref")
    if len(ra) != REPLAY_N or ra != rb:
        bad = next((i for i, (a, b) in enumerate(zip(ra, rb)) if a != b), None)
        raise RuntimeError("replayed results differ from a serial post (%d vs %d rows, first "
                           "difference at %s)" % (len(ra), len(rb), bad))
    ma = _must(u1, "GET", "/v1/sessions/rp/metrics", want=(200,))
    mb = _must(u1, "GET", "/v1/sessions/rp-ref/metrics", want=(200,))
    for k in ("systems", "relative_to_baseline", "by_translator"):
        if json.dumps(ma.get(k), sort_keys=True) != json.dumps(mb.get(k), sort_keys=True):
            raise RuntimeError("metrics %s after the replay differ from a serial post" % k)
    staged = c.psql(c.primary, "SELECT (SELECT count(*) FROM segment_results r WHERE r.sid = s.sid"
                               " AND r.gen > s.result_gen), (SELECT count(*) FROM checkpoints k "
                               "WHERE k.sid = s.sid AND k.gen > s.result_gen) FROM sessions s "
                               "WHERE s.id = 'rp'")
    if not in_flight:
        raise RuntimeError("the kill came after node 0's replay had finished: nothing tested")
    return ("node 0 killed during a replay of %d segments (%.1f s); node 1's PUT done; results "
            "and totals = a serial post; rows above result_gen (results|checkpoints): %s"
            % (REPLAY_N, took, (staged or "?").strip()))


def _restart_standby(c, sb):
    c._point(sb, c.primary, reload=False)
    c.start(sb)
    if not c.wait_streaming(sb, c.primary, 30):
        raise RuntimeError("%s does not stream again" % sb.name)


SOAK_SECONDS = 600


def run_soak(c, load, am):
    """#11: for SOAK_SECONDS, in turn: the primary killed (fail over,
    rejoin), an adaptmon node killed and restarted, a standby killed and
    restarted; the checker runs once at the end over everything."""
    end, i, done = time.time() + SOAK_SECONDS, 0, []
    while time.time() < end:
        k = i % 3
        if k == 0:
            run_primary_kill(c, load)
        elif k == 1:
            am.kill(i % 2)
            time.sleep(3)
            am.start(i % 2)
        else:
            sb = [n for n in c.nodes if n is not c.primary][i % 2]
            c.kill(sb)
            time.sleep(3)
            _restart_standby(c, sb)
        done.append(("primary", "node", "standby")[k])
        i += 1
        time.sleep(2)
    return "%d faults in %d s (%d primary kills, %d node kills, %d standby kills)" % (
        len(done), SOAK_SECONDS, done.count("primary"), done.count("node"),
        done.count("standby"))


def one_nodes_run(name, fn, kw, expect_loss, writers, warm, hosts=("127.0.0.1", "127.0.0.1"),
                  args=()):
    """One run of the plan with adaptmon itself as the writer: two adaptmon
    nodes on a primary and two synchronous standbys (fsync on), HttpWriter
    load failing over between them, fault fn(c, load, am); the checker reads
    the surviving primary's tables (adaptmon's own, schema/pg/)."""
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="am-ha-pg-")
    am = None
    try:
        kw = dict(kw)
        role_off = kw.pop("role_sync_off", False)
        # fsync off, as in every run: the faults kill processes, none
        # crashes the kernel, so the page cache survives them all
        with pgcluster.Cluster(**kw) as c:
            c.note("cluster up")
            _role_sync_off(c, role_off)
            am = Nodes(c, work, hosts, args)
            c.note("adaptmon nodes up")
            made = []

            def writer():  # writer k starts on node k % 2, as a router spreads sessions
                made.append(HttpWriter(am.urls(), first=len(made)))
                return made[-1]
            load = Load(writer, writers, prefix="ha-%s-" % name)
            load.start()
            c.note("load started")
            time.sleep(warm)
            try:
                detail = fn(c, load, am)
            finally:
                time.sleep(1)
                load.finish()
            res = check(load, SqlReader(c))
            res["detail"] = detail
            res["events"] = list(c.events)
    finally:
        if am is not None:
            am.close()
        keep = os.environ.get("HA_KEEP_LOGS")  # a directory: the nodes' logs are copied there
        if keep:
            shutil.copytree(work, os.path.join(keep, name), dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    res["name"] = name
    res["seconds"] = time.time() - t0
    if expect_loss:
        res["ok"] = res["lost"] > 0
    else:
        res["ok"] = res["lost"] == 0 and not res["problems"] and res["acked"] > 0
    return res


# What adaptmon's sessions would lose with synchronous_commit=off: the WAL
# writer flushes (and the walsender sends) only every 5 s.
LAZY_WAL = ("wal_writer_delay = 5000ms", "wal_writer_flush_after = 64MB")

SQL_RUNS = [
    # The stand-in writer (SqlWriter), `--sql`: the cluster and the checker
    # without adaptmon, several times faster (more acknowledgements per run),
    # and the design's literal control: synchronous_commit=off in the
    # writer's own session, which adaptmon never sends.
    # name, function, cluster kwargs, writer synchronous_commit, expect losses
    ("sql_primary_kill", run_primary_kill, {}, "on", False),
    ("sql_primary_kill_first", run_primary_kill, {"sync": "FIRST 1"}, "on", False),
    ("sql_primary_disk", run_primary_disk, {}, "on", False),
    ("sql_standby_kill", run_standby_kill, {}, "on", False),
    ("sql_rejoin_nostream", run_rejoin_nostream, {}, "on", False),
    ("sql_primary_cut", run_primary_cut, {}, "on", False),
    ("sql_standby_disk_full", run_standby_full, {"wal_tmpfs": ("n2",)}, "on", False),
    ("sql_control", run_control, {"sync": "", "extra": LAZY_WAL}, "off", True),
    # role_sync_off's setting with a writer that leaves it alone: it loses,
    # so role_sync_off's 0 is adaptmon's per-connection SET at work
    ("sql_role_sync_off", run_primary_kill, {"extra": LAZY_WAL, "role_sync_off": True}, None,
     True),
]

NODE_HOSTS = ("127.0.0.1", "127.0.0.1")
CUT_HOSTS = ("127.0.0.2", "127.0.0.1")  # node 0 through the door that node_cut closes
NO_SYNC = ("--pg-require-sync", "off")

RUNS = [
    # adaptmon itself on PostgreSQL: two nodes, HttpWriter load.
    # name, function, cluster kwargs, node hosts, node args, expect losses
    ("primary_kill", run_primary_kill, {}, NODE_HOSTS, (), False),
    ("primary_kill_first", run_primary_kill, {"sync": "FIRST 1"}, NODE_HOSTS, (), False),
    ("primary_disk", run_primary_disk, {}, NODE_HOSTS, (), False),
    ("standby_kill", run_standby_kill, {}, NODE_HOSTS, (), False),
    ("rejoin_nostream", run_rejoin_nostream, {}, NODE_HOSTS, (), False),
    ("primary_cut", run_primary_cut, {}, NODE_HOSTS, (), False),
    ("standby_disk_full", run_standby_full, {"wal_tmpfs": ("n2",)}, NODE_HOSTS, (), False),
    # the am role's default is synchronous_commit=off and the WAL lazy: the
    # stand-in loses rows this way (sql_control); adaptmon sets it on per
    # connection, so a primary kill must still lose nothing
    ("role_sync_off", run_primary_kill, {"extra": LAZY_WAL, "role_sync_off": True},
     NODE_HOSTS, (), False),
    ("control", run_control_nodes, {"sync": "", "repl_host": "127.0.0.3"}, NODE_HOSTS, NO_SYNC,
     True),
    ("node_kill", run_node_kill, {}, NODE_HOSTS, (), False),
    ("node_cut", run_node_cut, {}, CUT_HOSTS, (), False),
    ("node_kill_replay", run_node_kill_replay, {}, NODE_HOSTS, (), False),
    ("soak", run_soak, {}, NODE_HOSTS, (), False),
]
SHORT = ("primary_kill", "standby_kill", "control")
# Only in the long mode (--long; make test-ha HA_LONG=1) or when named: the
# soak, and two runs whose subject is the cluster, not the writer (the
# FIRST 1 rule; the rejoin that never streams), both also under --sql.
LONG_ONLY = ("primary_kill_first", "rejoin_nostream", "soak")
SQLITE_RUNS = ("node_kill_sqlite",)


def table(results):
    lines = ["| run | acknowledged | ambiguous (of which committed) | lost | longest write gap "
             "| result | what happened |", "|---|---:|---:|---:|---:|---|---|"]
    for r in results:
        lines.append("| %s | %d | %d (%d) | %d | %.2f s | %s | %s |" % (
            r["name"], r["acked"], r["ambiguous"], r["amb_committed"], r["lost"], r["gap"],
            "ok" if r["ok"] else "FAIL", r.get("detail", "")))
    return "\n".join(lines)


def main():
    global SOAK_SECONDS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--writers", type=int, default=4)
    ap.add_argument("--warm", type=float, default=3.0, help="seconds of load before the fault")
    ap.add_argument("--table", help="also write the Markdown table to this file")
    ap.add_argument("--sql", action="store_true",
                    help="the runs with the stand-in writer (SqlWriter) instead")
    ap.add_argument("--long", action="store_true",
                    help="every run, with primary_kill_first, rejoin_nostream and the soak")
    ap.add_argument("--soak", type=int, nargs="?", const=SOAK_SECONDS, default=0,
                    metavar="SECONDS", help="only the soak (default %d s)" % SOAK_SECONDS)
    a = ap.parse_args()
    why = pgcluster.available() or (None if psycopg2 else "python3-psycopg2 absent")
    if why:
        print("skipped: " + why)
        print("0 passed, 0 failed")
        return 0
    if a.soak:
        SOAK_SECONDS = a.soak
    names = [r[0] for r in RUNS] + list(SQLITE_RUNS) + [r[0] for r in SQL_RUNS]
    if a.only:
        want = [x for x in a.only.split(",") if x]
        bad = [x for x in want if x not in names]
        if bad:
            ap.error("unknown run %s (runs: %s)" % (", ".join(bad), ", ".join(names)))
    elif a.soak:
        want = ["soak"]
    elif a.long:
        want = [r[0] for r in RUNS] + list(SQLITE_RUNS)
    elif a.short:
        want = list(SHORT)
    elif a.sql:
        want = [r[0] for r in SQL_RUNS]
    else:
        want = [r[0] for r in RUNS if r[0] not in LONG_ONLY] + list(SQLITE_RUNS)
    byname = {r[0]: r for r in RUNS}
    sqlname = {r[0]: r for r in SQL_RUNS}
    results = []
    for name in want:
        try:
            if name in SQLITE_RUNS:
                r = one_http_run(name, a.writers, a.warm)
            elif name in sqlname:
                _n, fn, kw, sc, loss = sqlname[name]
                r = one_run(name, fn, kw, sc, loss, a.writers, a.warm)
            else:
                _n, fn, kw, hosts, args, loss = byname[name]
                writers = 8 if name == "soak" else a.writers
                r = one_nodes_run(name, fn, kw, loss, writers, a.warm, hosts, args)
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
