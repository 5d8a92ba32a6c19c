"""Several adaptmon nodes on one PostgreSQL database (DESIGN-postgres.md §2.5,
issue 28 items 2 and 3).

Starts one throwaway PostgreSQL (tests/pgutil.py) and two `adaptmon serve`
nodes on the same database, then:

* test_alternate_posts_equal_serial_replay: the same session is posted
  through node A and node B alternately, with edits (PUT) through the other
  node; every request succeeds (a stale cache on one node is noticed and
  reloaded), and the metrics both nodes answer equal those of a serial
  replay of the final log into a fresh SQLite server;
* test_racing_posts_equal_serial_replay: two clients post one session
  through the two nodes at the same time (retrying 409/503 with the same id
  and body, as clients must); every id is stored exactly once, and the
  totals equal a serial replay of the final log, with PUTs, a DELETE and
  rescores through each node racing the other node's POSTs;
* test_racing_batch_equals_serial_replay: a client posts one session in
  batches through node A while another client posts, edits (PUT: a
  replay), deletes and rescores it through node B; every id is stored
  exactly once and the totals equal a serial replay of the final log (a
  batch's chunk is scored on a snapshot and its job must find the session
  at that snapshot's version under the row lock, as a POST's does);
* test_require_sync_refuses_writes: with --pg-require-sync on (the default)
  and no standby, writes answer 503 with Retry-After and reads still work;
* test_postgres_down_answers_503_and_recovers: with PostgreSQL stopped,
  writes answer 503 with Retry-After and /readyz 503 with a reason; once it
  is back, the node reconnects and stores the retried segment once.

Prints "N passed, N failed"; exits 1 on a failure. Skips (exit 0, saying
why) when the PostgreSQL server binaries are absent.
"""
import os
import sys
import threading
import time

import pgnodes  # noqa: E402  (tests/ and tests/api/ on sys.path; skips without PostgreSQL)
from pgnodes import (harness, pg, pgutil, post_batch_retry, post_retry, seg,  # noqa: E402
                     teardown, timeline)
from harness import Server, base, eq, check, expect_status, run_tests  # noqa: E402

# PGNODES_ONE=1 / PGNODES_SQLITE=1 run the same tests on one node (controls).


def two_nodes(db):
    if os.environ.get("PGNODES_SQLITE") == "1":  # the control: one SQLite node serves both
        a = Server()
        return a, a
    if os.environ.get("PGNODES_ONE") == "1":  # one PostgreSQL node serves both
        a = Server("--pg-require-sync", "off", db=db)
        return a, a
    a = Server("--pg-require-sync", "off", db=db)
    b = Server("--pg-require-sync", "off", db=db)
    return a, b


def systems(c, sid):
    return c.jget(base(sid) + "/metrics")["systems"]


def serial_replay(log):
    """The metrics of the final log posted one by one into a fresh SQLite server."""
    return pgnodes.serial_replay({"r": log})["r"]


def test_alternate_posts_equal_serial_replay():
    db = pg().create_db("alt")
    a, b = two_nodes(db)
    ca, cb = a.client(), b.client()
    ca.create_session(id="s", source_lang="en", target_lang="fr")
    for i in range(1, 41):  # past a 32-seq checkpoint and settle
        c = ca if i % 2 else cb
        body = dict(seg(i), id="x%d" % i)
        r = c.post(base("s") + "/segments", body)
        expect_status(r, 201, "POST x%d through node %s" % (i, "A" if i % 2 else "B"))
        if i % 7 == 0:  # an edit through the other node
            other = cb if c is ca else ca
            r = other.put(base("s") + "/segments/x%d" % (i - 3), seg(i - 3, edit=1))
            expect_status(r, 200, "PUT x%d" % (i - 3))
    ma, mb = systems(ca, "s"), systems(cb, "s")
    eq(ma, mb, "node A and node B answer the same metrics")
    log = timeline(ca, "s")
    eq([row["id"] for row in log], ["x%d" % i for i in range(1, 41)], "the log's order")
    eq(ma, serial_replay(log), "metrics equal a serial replay of the final log")
    harness.shutdown(a, ca)
    if b is not a:
        harness.shutdown(b, cb)


def retry_503(fn, what, ok, tries=40):
    """fn() until its status is in ok; 503 (another node's rewrite holds the
    session, or the session kept changing) is retried after a short pause."""
    for _ in range(tries):
        r = fn()
        if r.status in ok:
            return r
        check(r.status == 503, "%s: %d %r" % (what, r.status, r.body))
        time.sleep(0.05)
    raise AssertionError("%s: still 503 after %d tries" % (what, tries))


def _final_check(a, ca, b, cb, want):
    """The end of a racing run: session s holds exactly the ids of want,
    both nodes answer the same metrics and those equal a serial replay of
    the final log; then both nodes stop."""
    log = timeline(ca, "s")
    eq(sorted(row["id"] for row in log), sorted(want),
       "every id stored exactly once, the deleted ones gone")
    eq(ca.jget(base("s"))["segments"], len(want), "the session's segment count")
    ma = systems(ca, "s")
    eq(ma, systems(cb, "s"), "node A and node B answer the same metrics")
    eq(ma, serial_replay(log), "metrics equal a serial replay of the final log")
    harness.shutdown(a, ca)
    if b is not a:
        harness.shutdown(b, cb)


def test_racing_posts_equal_serial_replay():
    """Two clients post one session through the two nodes at once, and each
    also rewrites it through its node while the other posts: PUTs of its own
    earlier segments (replays), a DELETE (a replay without the segment), and
    client a a rescore (a shadow copy swapped in). Rewrites on one node take
    the session's advisory lock on a pinned connection (DESIGN-postgres §2.5
    item 2), so two never stage over each other; POSTs are serialized on the
    session's row. The totals equal a serial replay of the final log."""
    db = pg().create_db("race")
    a, b = two_nodes(db)
    ca, cb = a.client(), b.client()
    ca.create_session(id="s", source_lang="en", target_lang="fr")
    errors = []
    n = 25
    deleted = {"a": 13, "b": 16}  # each client deletes one of its own segments

    def client(node, prefix):
        c = node.client()
        try:
            for i in range(n):
                post_retry(c, "s", dict(seg(i + (0 if prefix == "a" else 2)),
                                        id="%s%d" % (prefix, i)))
                if i % 3 == 2 and i >= 4 and i - 4 != deleted[prefix]:  # a replay
                    retry_503(lambda: c.put(base("s") + "/segments/%s%d" % (prefix, i - 4),
                                            seg(i, edit=2)), "PUT %s%d" % (prefix, i - 4), (200,))
                if i == deleted[prefix] + 3:
                    retry_503(lambda: c.delete(base("s") + "/segments/%s%d" % (prefix, i - 3)),
                              "DELETE %s%d" % (prefix, i - 3), (204,))
                if prefix == "a" and i in (4, 11):  # a whole rewrite (shadow copy), before seq 32
                    # (a rescore rebuilds the history: a later one would hide a wrong settle)
                    retry_503(lambda: c.post(base("s") + "/rescore", {}), "rescore", (200,))
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))
        finally:
            c.close()

    t0 = time.time()
    ts = [threading.Thread(target=client, args=(a, "a")),
          threading.Thread(target=client, args=(b, "b"))]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    eq(errors, [], "client errors")
    want = ["%s%d" % (p, i) for p in "ab" for i in range(n) if i != deleted[p]]
    _final_check(a, ca, b, cb, want)
    print("  racing run: %.1f s" % (time.time() - t0))


def long_seg(i, k):
    """A long segment i of batch k: a chunk of 100 takes a while to score."""
    s = seg(i, edit=k % 3)
    return {key: " ".join("%s [%d]" % (v, w) for w in range(12)) for key, v in s.items()}


def test_racing_batch_equals_serial_replay():
    """In rounds: client b posts segment b<k> through node B (the log's
    tail), client a posts a batch of 100 long items through node A (one
    chunk: scored on one snapshot for a while, then written by one
    group-commit job), and while the chunk is scored client b rewrites the
    session through node B: a PUT of b<k> (a replay of the tail: short, so
    it often lands inside the chunk's scoring; sent at offsets that sweep
    the last batch's time), in round 1 a DELETE of it, in round 2 a rescore
    (early: a whole rewrite recomputes the totals and would hide an earlier
    chunk's damage). A chunk whose snapshot such a rewrite overtook must
    not be written from the old totals (the rewrite changes the totals and
    the history, not the last seq): the job checks the snapshot's version
    under the row lock, as a POST's does, and the chunk is scored again.
    The totals equal a serial replay of the final log, and every id is
    stored once. A race: before the fix it failed 3 runs of 3 (it passes
    3 of 3 with it)."""
    db = pg().create_db("batchrace")
    a, b = two_nodes(db)
    ca, cb = a.client(), b.client()
    ca.create_session(id="s", source_lang="en", target_lang="fr")
    rounds, per = 16, 100
    stats = {"batch_requests": 0, "rewrites": 0}
    deleted = []
    t0, took = time.time(), 0.3
    for k in range(rounds):
        post_retry(cb, "s", dict(seg(k), id="b%d" % k))
        bodies = [dict(long_seg(i, k), id="a%d" % i) for i in range(k * per, (k + 1) * per)]
        out = []
        tb = time.time()
        th = threading.Thread(target=lambda: out.append(post_batch_retry(ca, "s", bodies)))
        th.start()
        # into the chunk's scoring: offsets from its start to past its middle
        time.sleep(took * 0.12 * (k % 5))
        if k == 1:  # early: a rewrite recomputes the totals, hiding earlier damage
            r = cb.delete(base("s") + "/segments/b%d" % k)
            what, ok = "DELETE b%d" % k, 204
        elif k == 2:
            r = cb.post(base("s") + "/rescore", {})
            what, ok = "rescore", 200
        else:
            r = cb.put(base("s") + "/segments/b%d" % k, seg(k, edit=1 + k % 4))
            what, ok = "PUT b%d" % k, 200
        check(r.status in (ok, 503), "%s: %d %r" % (what, r.status, r.body))  # 503: nothing done
        stats["rewrites"] += r.status == ok
        if r.status == 204:
            deleted.append("b%d" % k)
        th.join(120)
        check(len(out) == 1, "the batch of round %d answered" % k)
        took = time.time() - tb
        stats["batch_requests"] += out[0]
        eq(systems(ca, "s"), systems(cb, "s"), "round %d: node A and node B agree" % k)
    want = ["a%d" % i for i in range(rounds * per)] + \
        ["b%d" % k for k in range(rounds) if "b%d" % k not in deleted]
    _final_check(a, ca, b, cb, want)
    print("  batch race: %.1f s (last batch %.2f s), %d rounds: %d batch requests, %d rewrites done on B"
          % (time.time() - t0, took, rounds, stats["batch_requests"], stats["rewrites"]))


def test_require_sync_refuses_writes():
    db = pg().create_db("sync")
    s = Server(db=db)  # --pg-require-sync on: the default
    c = s.client()
    r = c.post("/v1/sessions", {"id": "s", "source_lang": "en", "target_lang": "fr"})
    harness.expect_problem(r, 503, "unavailable", "a write without a synchronous standby")
    eq(r.header("Retry-After"), "1", "Retry-After")
    expect_status(c.get("/v1/sessions"), 200, "reads still answer")
    expect_status(c.get("/readyz"), 200, "ready: the database answers")
    check("no synchronous standby" in s.logs(), "the start warns")
    harness.shutdown(s, c)


def test_postgres_down_answers_503_and_recovers():
    server = pgutil.Server()  # its own: this test stops it
    try:
        s = Server("--pg-require-sync", "off", db=server.create_db("down"))
        c = s.client()
        c.create_session(id="s", source_lang="en", target_lang="fr")
        expect_status(c.post(base("s") + "/segments", dict(seg(1), id="x1")), 201, "POST up")
        server.halt()
        r = c.post(base("s") + "/segments", dict(seg(2), id="x2"))
        harness.expect_problem(r, 503, "unavailable", "a write while PostgreSQL is down")
        eq(r.header("Retry-After"), "1", "Retry-After (%r)" % r.body)
        r = c.get("/readyz")
        expect_status(r, 503, "/readyz while PostgreSQL is down")
        check("PostgreSQL" in r.json().get("reason", ""), "/readyz says why: %r" % r.body)
        server.start()
        for _ in range(50):  # the broken connections are reopened by the next statement
            r = c.post(base("s") + "/segments", dict(seg(2), id="x2"))
            if r.status in (200, 201):
                break
            check(r.status == 503, "503 until the reconnect: %d %r" % (r.status, r.body))
        expect_status(r, 201, "POST after PostgreSQL is back")
        expect_status(c.get("/readyz"), 200, "ready again")
        r = c.get(base("s"))
        check(r.status == 200, "GET after the restart: %r\n%s" % (r.body, s.logs(6000)))
        eq(r.json()["segments"], 2, "both segments stored once")
        harness.shutdown(s, c)
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(run_tests(globals(), teardown=teardown))
