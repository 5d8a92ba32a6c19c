"""Long rewrites with several adaptmon nodes on one PostgreSQL database
(DESIGN-postgres.md §2.5 item 2 and fault #9; issue 28 item 2).

A replay (PUT/DELETE of a segment), a rescore and a session's purge take the
session's rewrite lock, a session-level advisory lock keyed by its sid
(pg_advisory_lock(1634562679, sid)), on a connection pinned to the rewrite,
and stage everything on that connection (server/store/drv_pg.c). Starts one
throwaway PostgreSQL (tests/pgutil.py) and adaptmon nodes on it, then:

* test_startup_purge_spares_live_shadow: a node starting up purges the
  hidden copies ('~new~<sid>~…' shadows, '~del~<sid>' purges) whose owner's
  lock is free, and leaves the one whose lock another node (here a psql
  session standing in for it) holds; while it is held, a PUT of that
  session answers 503 with Retry-After; once the holder is gone, the next
  rewrite purges the abandoned shadow;
* test_node_killed_mid_replay: node A is killed (SIGKILL) while it stages
  the replay of a long session's PUT; its lock goes with its connection,
  node B's PUT of the same segment completes, no staged row of A's
  generation is left, and the metrics equal a serial replay of the final
  log.

Prints "N passed, N failed"; exits 1 on a failure. Skips (exit 0, saying
why) when the PostgreSQL server binaries are absent.
"""
import os
import subprocess
import sys
import threading
import time

import pgnodes  # noqa: E402  (tests/ and tests/api/ on sys.path; skips without PostgreSQL)
from pgnodes import harness, pg, serial_replay as _replay, teardown, timeline  # noqa: E402
from harness import Server, base, eq, check, expect_status, run_tests  # noqa: E402

RW_KEY = 1634562679  # drv_pg.c AM_PG_RW_KEY


def node(db):
    return Server("--pg-require-sync", "off", db=db)


def seg(i, edit=0):
    words = ["patient", "fever", "hands", "home", "virus", "mask", "public", "doctor",
             "water", "rest", "cough", "school"]
    w = [words[(i * 7 + k + edit) % len(words)] for k in range(4)]
    return {"source": "The %s and the %s (%d)." % (w[0], w[1], i),
            "hypothesis": "Le %s et le %s %s (%d)." % (w[0], w[1], w[2], i),
            "translation": "Le %s et la %s %s (%d)." % (w[0], w[1], w[3], i)}


def sid_of(dbname, session):
    rows = pg().query("SELECT sid FROM sessions WHERE id = '%s'" % session, dbname)
    return int(rows[0][0])


def hidden_ids(dbname):
    return [r[0] for r in pg().query("SELECT id FROM sessions WHERE id >= '~' ORDER BY id",
                                     dbname)]


def hide_copy(dbname, session, hidden):
    """A hidden sessions row copied from session's (what a rescore's
    shadow_begin or a session's deletion leaves while it runs)."""
    pg().query("INSERT INTO sessions (id, options, signature, created_at, updated_at) "
               "SELECT '%s', options, signature, created_at, updated_at FROM sessions "
               "WHERE id = '%s'" % (hidden, session), dbname)


def rw_locks(dbname):
    """The rewrite locks granted in dbname: their objids."""
    rows = pg().query("SELECT l.objid FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                      "WHERE l.locktype = 'advisory' AND l.classid = %d AND l.granted AND "
                      "d.datname = '%s'" % (RW_KEY, dbname))
    return sorted(int(r[0]) for r in rows)


class Holder:
    """A psql session holding sid's rewrite lock: another node's rewrite."""

    def __init__(self, dbname, sid):
        p = pg()
        self.proc = subprocess.Popen(
            [os.path.join(p.bindir, "psql"), "-X", "-q", "-At", "-h", "127.0.0.1", "-p",
             str(p.port), "-U", "am", "-d", dbname],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            text=True)
        self.proc.stdin.write("SELECT pg_advisory_lock(%d, %d);\n" % (RW_KEY, sid))
        self.proc.stdin.flush()
        deadline = time.time() + 10
        while sid not in rw_locks(dbname):
            check(time.time() < deadline, "the holder got the lock")
            time.sleep(0.02)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def serial_replay(log):
    """The metrics of the final log posted one by one into a fresh SQLite server."""
    return _replay({"r": log})["r"]


def test_startup_purge_spares_live_shadow():
    db = pg().create_db("purge")
    a = node(db)
    ca = a.client()
    for s in ("s", "t"):
        ca.create_session(id=s, source_lang="en", target_lang="fr")
        for i in range(1, 4):
            expect_status(ca.post(base(s) + "/segments", dict(seg(i), id="x%d" % i)), 201,
                          "POST %s x%d" % (s, i))
    s_sid, t_sid = sid_of("purge", "s"), sid_of("purge", "t")
    live = "~new~%d~live" % s_sid  # a rescore of s running on another node
    dead = "~new~%d~dead" % t_sid  # a rescore of t whose node died
    hide_copy("purge", "s", live)
    hide_copy("purge", "t", dead)
    hide_copy("purge", "t", "~del~tmp")  # a deleted session whose purger died
    pg().query("UPDATE sessions SET id = '~del~' || sid::text WHERE id = '~del~tmp'", "purge")
    holder = Holder("purge", s_sid)
    try:
        b = node(db)  # its start-up purge runs now
        cb = b.client()
        eq(hidden_ids("purge"), [live], "only the copy whose owner holds its lock is left")
        expect_status(cb.get(base("s") + "/metrics"), 200, "s still answers")
        t0 = time.time()
        r = cb.put(base("s") + "/segments/x2", seg(2, edit=1))
        harness.expect_problem(r, 503, "unavailable", "a PUT while another node rewrites s")
        eq(r.header("Retry-After"), "1", "Retry-After")
        check(time.time() - t0 < 10, "the lock was waited for a bounded time")
        check("another node" in r.json().get("detail", ""), "the answer says why: %r" % r.body)
    finally:
        holder.close()
    r = cb.put(base("s") + "/segments/x2", seg(2, edit=1))
    expect_status(r, 200, "the PUT once the other node's lock is gone")
    eq(hidden_ids("purge"), [], "the rewrite purged the shadow its dead owner left")
    eq(rw_locks("purge"), [], "no rewrite lock is left held")
    expect_status(cb.delete(base("t")), 204, "DELETE t")
    eq(hidden_ids("purge"), [], "the deleted session was purged under its lock")
    harness.shutdown(a, ca)
    harness.shutdown(b, cb)


def staged_above(dbname):
    """Rows staged above the session's result generation (a replay's, not
    switched in): invisible to readers, deleted by the next replay."""
    return int(pg().query("SELECT count(*) FROM segment_results r JOIN sessions s USING (sid) "
                          "WHERE s.id = 's' AND r.gen > s.result_gen", dbname)[0][0])


def test_node_killed_mid_replay():
    db = pg().create_db("kill")
    a, b = node(db), node(db)
    ca, cb = a.client(), b.client()
    ca.create_session(id="s", source_lang="en", target_lang="fr")
    n = 900
    for i in range(1, n + 1):
        c = ca if i % 2 else cb
        expect_status(c.post(base("s") + "/segments", dict(seg(i), id="x%d" % i)), 201,
                      "POST x%d" % i)
    killed = False
    out = {}
    for target in ("x2", "x3", "x4"):  # each try replays ~n segments on A
        def put():
            c = a.client()
            try:
                out[target] = c.put(base("s") + "/segments/" + target, seg(2, edit=5)).status
            except OSError:
                out[target] = "killed"
        th = threading.Thread(target=put)
        th.start()
        deadline = time.time() + 30
        while th.is_alive() and time.time() < deadline:
            if staged_above("kill") > 0 and rw_locks("kill"):  # A stages under its lock
                a.proc.kill()  # SIGKILL: no clean-up of any kind
                killed = True
                break
            time.sleep(0.002)
        th.join(30)
        if killed:
            break
    check(killed, "node A was killed while it staged a replay (%r)" % out)
    left = staged_above("kill")
    check(left > 0, "A's staged rows are in the table, above the session's generation")
    deadline = time.time() + 10
    while rw_locks("kill"):
        check(time.time() < deadline, "A's rewrite lock went with its connection")
        time.sleep(0.05)
    r = cb.put(base("s") + "/segments/" + target, seg(2, edit=5))
    expect_status(r, 200, "node B's PUT of the segment A was replaying")
    eq(staged_above("kill"), 0, "no staged row of A's generation is left (%d were)" % left)
    log = timeline(cb, "s")
    eq(len(log), n, "the log's length")
    eq([row["id"] for row in log if row["request"]["source"] == seg(2, edit=5)["source"]],
       [target], "the replaced segment's body is B's")
    eq(cb.jget(base("s") + "/metrics")["systems"], serial_replay(log),
       "metrics equal a serial replay of the final log")
    harness.shutdown(b, cb)
    a.proc.wait()


if __name__ == "__main__":
    sys.exit(run_tests(globals(), teardown=teardown))
