"""Several group committers in PostgreSQL mode (--pg-committers,
DESIGN-postgres.md §2.3; issue 28 item 7).

Starts one throwaway PostgreSQL (tests/pgutil.py) and adaptmon nodes on it
with --pg-committers 1 and 4, then:

* test_committers_have_their_own_connections: K committers open K - 1
  writer connections beyond the writer (pg_stat_activity counts them), and
  /metrics says adaptmon_pg_committers K;
* test_k1_many_clients / test_k4_many_clients: many sessions, many
  concurrent clients (two per session, so a session's POSTs race each
  other), two nodes on the same database: every acknowledged segment is
  stored exactly once, every session's seqs run 1..n without a gap, and each
  session's metrics equal a serial replay of its final log into a fresh
  SQLite server;
* test_k4_batch_route: a batch POST goes to its session's committer too
  (the same checks, batches racing single POSTs);
* test_committers_out_of_range_refused: --pg-committers 0 and 65 refuse to
  start; SQLite accepts the flag and keeps its single writer.

Prints "N passed, N failed"; exits 1 on a failure. Skips (exit 0, saying
why) when the PostgreSQL server binaries are absent. PGCOMMIT_SESSIONS and
PGCOMMIT_POSTS size the load (default 8 sessions, 12 POSTs per client).
"""
import os
import subprocess
import sys
import threading
import time

import pgnodes  # noqa: E402  (tests/ and tests/api/ on sys.path; skips without PostgreSQL)
from pgnodes import harness, pg, post_retry, seg, serial_replay, teardown, timeline  # noqa: E402
from harness import Server, base, eq, check, expect_status, run_tests  # noqa: E402

SESSIONS = int(os.environ.get("PGCOMMIT_SESSIONS", "8"))
POSTS = int(os.environ.get("PGCOMMIT_POSTS", "12"))


def node(db, k, *extra):
    return Server("--pg-require-sync", "off", "--pg-committers", str(k), *extra, db=db)


def batch_retry(c, sid, items, tries=100):
    """POSTs a batch (a JSON array) until every item is stored (201) or found
    stored (200); a batch stopped at a 409/503 item is re-posted whole."""
    for _ in range(tries):
        r = c.post(base(sid) + "/segments", items)
        check(r.status in (200, 409, 503), "batch: status %d %r" % (r.status, r.body))
        if r.status == 200:
            statuses = [it["status"] for it in r.json()["items"]]
            if all(st in (200, 201) for st in statuses):
                return
            check(all(st in (200, 201, 409, 503, None) for st in statuses),
                  "batch item statuses %r" % statuses)
    raise AssertionError("batch %s… never stored" % items[0]["id"])


def load(nodes, batches=False):
    """Two clients per session (one through each node), all at once; returns
    the acknowledged ids per session."""
    cs = nodes[0].client()
    sids = ["s%d" % i for i in range(SESSIONS)]
    for sid in sids:
        cs.create_session(id=sid, source_lang="en", target_lang="fr")
    cs.close()
    acked = {sid: [] for sid in sids}
    lock = threading.Lock()
    errors = []

    def client(n, sid, prefix):
        c = n.client()
        try:
            i = 0
            while i < POSTS:
                if batches and i % 4 == 0 and i + 3 <= POSTS:
                    items = [dict(seg(i + k), id="%s%d" % (prefix, i + k)) for k in range(3)]
                    batch_retry(c, sid, items)
                    done = [it["id"] for it in items]
                    i += 3
                else:
                    post_retry(c, sid, dict(seg(i), id="%s%d" % (prefix, i)))
                    done = ["%s%d" % (prefix, i)]
                    i += 1
                with lock:
                    acked[sid] += done
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))
        finally:
            c.close()

    ts = []
    for j, sid in enumerate(sids):
        for k, n in enumerate(nodes):
            ts.append(threading.Thread(target=client, args=(n, sid, "%s-%d-" % (sid, k))))
    for t in ts:
        t.start()
    for t in ts:
        t.join(300)
    eq(errors, [], "client errors")
    return acked


def check_sessions(c, acked):
    logs = {}
    for sid, ids in sorted(acked.items()):
        log = timeline(c, sid)
        got = [row["id"] for row in log]
        eq(sorted(got), sorted(ids), "%s: every acknowledged segment stored exactly once" % sid)
        eq([row["seq"] for row in log], list(range(1, len(log) + 1)), "%s: seqs gapless" % sid)
        eq(c.jget(base(sid))["segments"], len(ids), "%s: the segment count" % sid)
        logs[sid] = log
    want = serial_replay(logs)
    for sid in sorted(acked):
        eq(c.jget(base(sid) + "/metrics")["systems"], want[sid],
           "%s: metrics equal a serial replay of the final log" % sid)


def run_many(k, dbname, batches=False):
    db = pg().create_db(dbname)
    a, b = node(db, k), node(db, k)
    acked = load([a, b], batches)
    ca, cb = a.client(), b.client()
    check_sessions(ca, acked)
    for sid in acked:  # the other node reads the same state
        eq(cb.jget(base(sid))["segments"], len(acked[sid]), "node B's count of " + sid)
    harness.shutdown(a, ca)
    harness.shutdown(b, cb)


def writer_conns(dbname):
    rows = pg().query("SELECT count(*) FROM pg_stat_activity WHERE datname = '%s'" % dbname)
    return int(rows[0][0])


def test_committers_have_their_own_connections():
    db = pg().create_db("conns")
    counts = {}
    for k in (1, 4):
        s = node(db, k, "--readers", "2")
        c = s.client()
        expect_status(c.get("/readyz"), 200, "ready with %d committers" % k)
        counts[k] = writer_conns("conns")
        gauge = None
        for _ in range(50):  # the gauges come with the first standby probe
            lines = [ln for ln in c.get("/metrics").text.splitlines()
                     if ln.startswith("adaptmon_pg_committers ")]
            if lines:
                gauge = lines[0].split()[1]
                break
            time.sleep(0.1)
        eq(gauge, str(k), "/metrics adaptmon_pg_committers with --pg-committers %d" % k)
        harness.shutdown(s, c)
    eq(counts[4] - counts[1], 3, "three more connections with 4 committers (%r)" % counts)


def test_k1_many_clients():
    run_many(1, "k1")


def test_k4_many_clients():
    run_many(4, "k4")


def test_k4_batch_route():
    run_many(4, "k4b", batches=True)


def test_committers_out_of_range_refused():
    db = pg().create_db("range")
    for bad in ("0", "65"):
        p = subprocess.run([harness.ADAPTMON, "serve", "--port", "0", "--db", db,
                            "--pg-require-sync", "off", "--pg-committers", bad],
                           capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, ADAPTMON_CONFIG=""))
        check(p.returncode != 0, "--pg-committers %s refused (exit %d)" % (bad, p.returncode))
        check("pg-committers" in p.stderr, "the error names the option: %r" % p.stderr)
    s = Server("--pg-committers", "8")  # SQLite: accepted, one writer
    c = s.client()
    c.create_session(id="q", source_lang="en", target_lang="fr")
    expect_status(c.post(base("q") + "/segments", dict(seg(1), id="x1")), 201, "SQLite POST")
    harness.shutdown(s, c)


if __name__ == "__main__":
    sys.exit(run_tests(globals(), teardown=teardown))
