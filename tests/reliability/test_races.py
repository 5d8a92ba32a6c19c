#!/usr/bin/env python3
"""Races give the right answer (issue 10 §3).

* POSTs racing a DELETE and a re-create of the same session id: every stored
  segment is scored as the session that holds it (its options, its
  glossary) would score it: each round's surviving session is compared,
  segment by segment and in its totals, with the same requests posted
  serially into a fresh reference session. No 5xx ever.
* Every write path racing a DELETE (glossary PUT/DELETE, session create and
  delete, segment POST/PUT, vocabulary PUT/DELETE) answers 2xx, 404 or 409:
  never a 5xx.
* The metrics ETag changes with the session's incarnation: an old
  If-None-Match after delete + re-create gets 200 and the new numbers.
* A glossary applies to segments posted after it, also in a replay: post 2
  segments, PUT a glossary, post 1, PUT segment 1: totals equal the stored
  per-segment results summed and a fresh replay of the log.

Rounds are bounded (scale()); nothing is timed.
"""
import functools
import http.client
import os
import sqlite3
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import (OPTS_A, OPTS_B, new_session, run_threads, scale, seg_body,  # noqa: E402
                 timeline, tico19)
from harness import (Server, base, check, eq, expect_status, run_tests, settle_pending,  # noqa: E402
                     sqlite_only)

ROUNDS = scale(40, 4)
WRITERS = 6


def _no_5xx(r, what, errors, allowed):
    if r.status >= 500 or r.status not in allowed:
        errors.append("%s: %d %s" % (what, r.status, r.body[:300]))


def _compare_with_serial(c, sid, ref, opts, what):
    """Posts sid's stored requests serially into a new session ref with opts
    and compares every segment's signature/scores/totals and the metrics."""
    segs = timeline(c, sid)
    expect_status(new_session(c, ref, opts), 201, "create " + ref)
    for s in segs:
        body = s["request"]
        r = c.post(base(ref) + "/segments", body)
        expect_status(r, 201, "%s serial post" % what)
        got = r.json()
        for k in ("signature", "scores", "totals"):
            eq(s[k], got[k], "%s: %s of %s seq %d vs a serial post into a fresh session"
               % (what, k, sid, s["seq"]))
    m = c.jget(base(sid) + "/metrics")
    mr = c.jget(base(ref) + "/metrics")
    eq(m["systems"], mr["systems"], "%s: totals of %s vs serial" % (what, sid))
    eq(m["signature"], mr["signature"], "%s: signature of %s" % (what, sid))
    return len(segs)


def test_posts_racing_delete_and_recreate_land_scored_by_their_session():
    srv = Server("--threads", "8")
    try:
        c = srv.client()
        segs = tico19()
        errors = []
        stored = 0
        for rnd in range(ROUNDS):
            sid = "race%d" % rnd
            first, second = (OPTS_A, OPTS_B) if rnd % 2 == 0 else (OPTS_B, OPTS_A)
            expect_status(new_session(c, sid, first), 201, "create " + sid)
            barrier = threading.Barrier(WRITERS + 1)
            recreated = threading.Event()

            def writer(no):
                # Posts through the whole delete + re-create window (at least
                # 3, then until the re-create has answered) and one more
                # after it, so each round stores some segments in the new
                # session whatever the backend's speed (PostgreSQL's delete
                # is slower than SQLite's: a fixed 3 could all come first).
                cl = srv.client()
                try:
                    barrier.wait(30)
                    k = 0
                    while k < 3 or (not recreated.is_set() and k < 400):
                        s = segs[(rnd * 31 + no * 7 + k) % len(segs)]
                        r = cl.post(base(sid) + "/segments",
                                    seg_body(s, "w%d-%d" % (no, k)))
                        _no_5xx(r, "POST %s" % sid, errors, (201, 404))
                        k += 1
                    recreated.wait(30)
                    s = segs[(rnd * 31 + no * 7 + k) % len(segs)]
                    r = cl.post(base(sid) + "/segments", seg_body(s, "w%d-%d" % (no, k)))
                    _no_5xx(r, "POST %s after the re-create" % sid, errors, (201,))
                finally:
                    cl.close()

            def toggler():
                cl = srv.client()
                try:
                    barrier.wait(30)
                    r = cl.delete(base(sid))
                    _no_5xx(r, "DELETE %s" % sid, errors, (204,))
                    r = new_session(cl, sid, second)
                    _no_5xx(r, "re-create %s" % sid, errors, (201,))
                finally:
                    recreated.set()
                    cl.close()

            run_threads([functools.partial(writer, i) for i in range(WRITERS)] + [toggler])
            check(not errors, "round %d: %s" % (rnd, errors[:5]))
            stored += _compare_with_serial(c, sid, "ref%d" % rnd, second, "round %d" % rnd)
        check(stored > 0, "some posts landed in re-created sessions (%d)" % stored)
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_writes_racing_delete_never_answer_5xx():
    srv = Server("--threads", "8")
    try:
        c = srv.client()
        segs = tico19()
        errors = []
        n = scale(200, 10)
        gloss = [{"source": "virus", "targets": ["virus"]}]
        expect_status(new_session(c, "x", OPTS_A), 201, "create x")
        barrier = threading.Barrier(6)

        def run(fn):
            cl = srv.client()
            try:
                barrier.wait(30)
                for i in range(n):
                    fn(cl, i)
            except Exception as e:  # noqa: BLE001
                errors.append(repr(e))
            finally:
                cl.close()

        def deleter(cl, i):
            _no_5xx(cl.delete(base("x")), "DELETE session", errors, (204, 404))
            _no_5xx(new_session(cl, "x", OPTS_A, gloss if i % 2 else None),
                    "create session", errors, (201, 409))

        def glossary(cl, i):
            if i % 3 == 2:
                _no_5xx(cl.delete(base("x") + "/glossary"), "DELETE glossary", errors,
                        (204, 404))
            else:
                _no_5xx(cl.put(base("x") + "/glossary", gloss), "PUT glossary", errors,
                        (200, 404))

        def creator(cl, i):
            _no_5xx(new_session(cl, "x", OPTS_A, gloss), "create session (2)", errors,
                    (201, 409))

        def poster(cl, i):
            s = segs[i % len(segs)]
            # 409: the putter's upsert may have appended this id with another body first
            _no_5xx(cl.post(base("x") + "/segments", seg_body(s, "p%d" % i)), "POST segment",
                    errors, (201, 404, 409))

        def putter(cl, i):
            if i % 4 == 3:  # a segment DELETE replays like a PUT
                _no_5xx(cl.delete(base("x") + "/segments/p%d" % (i // 2)), "DELETE segment",
                        errors, (204, 404))
                return
            s = segs[(i + 5) % len(segs)]
            # 201: a PUT of an id not (or no longer) there appends it (upsert)
            _no_5xx(cl.put(base("x") + "/segments/p%d" % (i // 2), seg_body(s, "p%d" % (i // 2))),
                    "PUT segment", errors, (200, 201, 404))

        def vocab(cl, i):
            if i % 2:
                _no_5xx(cl.delete("/v1/vocabularies/bg"), "DELETE vocabulary", errors,
                        (204, 404))
            else:
                _no_5xx(cl.put("/v1/vocabularies/bg", "3 virus\n2 the\n", ctype="text/plain"),
                        "PUT vocabulary", errors, (200, 201))

        run_threads([functools.partial(run, f)
                     for f in (deleter, glossary, creator, poster, putter, vocab)], 300)
        check(not errors, "%d bad answers: %s" % (len(errors), errors[:5]))
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_session_whose_vocabulary_was_deleted_answers_409():
    srv = Server()
    try:
        c = srv.client()
        expect_status(c.put("/v1/vocabularies/bgv", "3 virus\n2 the\n", ctype="text/plain"), 201,
                      "PUT vocabulary")
        opts = dict(OPTS_A, background_vocabulary="bgv")
        expect_status(new_session(c, "bgs", opts), 201, "create with the vocabulary")
        expect_status(c.delete("/v1/vocabularies/bgv"), 204, "DELETE vocabulary")
        seg = seg_body(tico19()[0], "v1")
        r = c.post(base("bgs") + "/segments", seg)
        eq(r.status, 409, "POST into a session whose vocabulary is gone (%s)" % r.body[:200])
        check(b"bgv" in r.body, "the problem names the vocabulary")
        eq(c.get(base("bgs") + "/metrics").status, 409, "metrics")
        expect_status(c.put("/v1/vocabularies/bgv", "3 virus\n", ctype="text/plain"), 201, "again")
        expect_status(c.post(base("bgs") + "/segments", seg), 201, "POST after the vocabulary is back")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_metrics_etag_changes_with_the_incarnation():
    srv = Server()
    try:
        c = srv.client()
        segs = tico19()
        expect_status(new_session(c, "e", OPTS_A), 201, "create")
        for k in range(2):
            expect_status(c.post(base("e") + "/segments", seg_body(segs[k], "a%d" % k)), 201,
                          "post")
        r = c.get(base("e") + "/metrics")
        expect_status(r, 200, "metrics")
        etag, old = r.header("ETag"), r.json()
        check(etag, "an ETag")
        expect_status(c.delete(base("e")), 204, "delete")
        expect_status(new_session(c, "e", OPTS_B), 201, "re-create")
        for k in range(2):  # same number of changes: the same version number
            expect_status(c.post(base("e") + "/segments", seg_body(segs[k + 5], "b%d" % k)),
                          201, "post")
        r = c.get(base("e") + "/metrics", headers={"If-None-Match": etag})
        eq(r.status, 200, "GET metrics with the old incarnation's ETag")
        check(r.header("ETag") != etag, "a new ETag (%s)" % r.header("ETag"))
        new = r.json()
        check(new["systems"] != old["systems"], "new numbers")
        eq(new["signature"] != old["signature"], True, "the new session's signature")
        # the new ETag still validates
        r2 = c.get(base("e") + "/metrics", headers={"If-None-Match": r.header("ETag")})
        eq(r2.status, 304, "the current ETag")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


GLOSSARY = [{"source": "virus", "targets": ["virus"]},
            {"source": "vaccine", "targets": ["vaccin"]},
            {"source": "health", "targets": ["santé"]}]


def _gl_segments():
    segs = [s for s in tico19()
            if any(g["source"] in s["source"].lower() for g in GLOSSARY)]
    check(len(segs) >= 3, "TICO-19 segments with glossary terms")
    return segs[:3]


def test_replay_scores_each_segment_with_its_glossary_version():
    srv = Server()
    try:
        c = srv.client()
        s = _gl_segments()
        expect_status(new_session(c, "g", OPTS_B), 201, "create")
        for k in range(2):
            expect_status(c.post(base("g") + "/segments", seg_body(s[k], "s%d" % k)), 201, "post")
        expect_status(c.put(base("g") + "/glossary", GLOSSARY), 200, "PUT glossary")
        expect_status(c.post(base("g") + "/segments", seg_body(s[2], "s2")), 201, "post 3")
        before = c.jget(base("g") + "/metrics")
        # the first segment replaced by itself: nothing may change
        r = c.put(base("g") + "/segments/s0", seg_body(s[0], "s0"))
        expect_status(r, 200, "PUT segment 1")
        after = c.jget(base("g") + "/metrics")
        eq(after["systems"], before["systems"], "totals after replacing segment 1 by itself")
        # a fresh replay of the log: same posts, the glossary at the same point
        expect_status(new_session(c, "g-fresh", OPTS_B), 201, "create fresh")
        fresh = []
        for k in range(3):
            if k == 2:
                expect_status(c.put(base("g-fresh") + "/glossary", GLOSSARY), 200, "PUT gl")
            fresh.append(c.jpost(base("g-fresh") + "/segments", seg_body(s[k], "s%d" % k)))
        mf = c.jget(base("g-fresh") + "/metrics")
        eq(after["systems"], mf["systems"], "totals vs a fresh replay")
        stored = timeline(c, "g")
        for st, fr in zip(stored, fresh):
            eq(st["scores"], fr["scores"], "stored scores of seq %d vs fresh" % st["seq"])
        eq(stored[-1]["totals"], after["systems"], "last stored totals = metrics")
        # the glossary versions: segment 1-2 none (0), segment 3 version 1
        eq([x.get("glossary_version") for x in stored], [0, 0, 1], "glossary_version per segment")
        # a real change of segment 2 keeps its glossary version (none)
        changed = dict(seg_body(s[1], "s1"))
        changed["hypothesis"] = s[1]["translation"]
        expect_status(c.put(base("g") + "/segments/s1", changed), 200, "PUT segment 2")
        expect_status(new_session(c, "g-fresh2", OPTS_B), 201, "create fresh 2")
        for k in range(3):
            if k == 2:
                expect_status(c.put(base("g-fresh2") + "/glossary", GLOSSARY), 200, "PUT gl")
            c.jpost(base("g-fresh2") + "/segments", changed if k == 1 else seg_body(s[k], "s%d" % k))
        eq(c.jget(base("g") + "/metrics")["systems"], c.jget(base("g-fresh2") + "/metrics")["systems"],
           "totals after a change vs a fresh replay")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_event_stream_of_a_deleted_incarnation_is_not_resumed():
    srv = Server()
    try:
        c = srv.client()
        segs = tico19()
        first = new_session(c, "ev", OPTS_A)
        expect_status(first, 201, "create")
        inc1 = first.json()["incarnation"]
        for k in range(3):
            expect_status(c.post(base("ev") + "/segments", seg_body(segs[k], "a%d" % k)), 201,
                          "post")
        expect_status(c.delete(base("ev")), 204, "delete")
        second = new_session(c, "ev", OPTS_A)
        expect_status(second, 201, "re-create")
        inc2 = second.json()["incarnation"]
        check(inc2 != inc1, "a new incarnation (%r, %r)" % (inc1, inc2))
        eq(c.jget(base("ev"))["incarnation"], inc2, "GET session incarnation")

        def status(inc):
            h = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
            try:
                h.request("GET", base("ev") + "/events?incarnation=%d" % inc,
                          headers={"Last-Event-ID": "3", "Accept": "text/event-stream"})
                return h.getresponse().status
            finally:
                h.close()
        # an EventSource of the old incarnation reconnecting after seq 3
        eq(status(inc1), 404, "reconnect with the deleted incarnation")
        eq(status(inc2), 200, "the current incarnation's stream")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_upgrade_of_a_database_without_incarnations_and_glossary_versions():
    """A database as schema 001 left it (built here by removing what
    migration 002 added) is upgraded at start: incarnations, the current
    glossary as its stored version, segments recorded with it."""
    sqlite_only("the SQLite schema history (schema/pg starts at 012)")
    srv = Server()
    try:
        c = srv.client()
        s = _gl_segments()
        expect_status(new_session(c, "up", OPTS_B), 201, "create")
        for k in range(2):
            expect_status(c.post(base("up") + "/segments", seg_body(s[k], "s%d" % k)), 201, "post")
        expect_status(c.put(base("up") + "/glossary", GLOSSARY), 200, "PUT glossary")
        expect_status(c.post(base("up") + "/segments", seg_body(s[2], "s2")), 201, "post 3")
        before = c.jget(base("up") + "/metrics")
        c.close()
        eq(srv.stop(), 0, "exit status")
        con = sqlite3.connect(srv.db)
        settle_pending(con)  # 010: the pending words back where schema 001 kept them
        con.executescript("""
            -- schema 001 kept the current glossary in the sessions row (004 moved it out)
            UPDATE sessions SET glossary = (SELECT g.entries FROM glossaries g
                WHERE g.sid = sessions.sid AND g.version = sessions.glossary_version);
            DROP TABLE glossaries; DROP TABLE counters;
            DROP INDEX segments_glossary;  -- 003 (indexes glossary_version)
            ALTER TABLE segments DROP COLUMN glossary_version;
            ALTER TABLE sessions DROP COLUMN incarnation;
            ALTER TABLE sessions DROP COLUMN rewrites;  -- 005
            DROP TABLE segment_results; ALTER TABLE sessions DROP COLUMN result_gen;  -- 006
            ALTER TABLE sessions DROP COLUMN removed;  -- 007
            DROP TABLE checkpoints;  -- 008
            ALTER TABLE sessions DROP COLUMN ckpt_after; ALTER TABLE sessions DROP COLUMN ckpt_gen;
            ALTER TABLE segments DROP COLUMN words;  -- 010
            ALTER TABLE sessions DROP COLUMN settled;  -- 010
            ALTER TABLE vocabularies DROP COLUMN tokenizer;  -- 012
            ALTER TABLE vocabularies DROP COLUMN lang; ALTER TABLE vocabularies DROP COLUMN source_lang;
            ALTER TABLE segments DROP COLUMN stats;  -- 013
            ALTER TABLE sessions DROP COLUMN gv_floor;  -- 015
            DELETE FROM schema_migrations WHERE version >= 2;""")
        con.commit()
        con.close()
        srv.start()
        c = srv.client()
        eq(c.jget(base("up") + "/metrics")["systems"], before["systems"], "totals after upgrade")
        con = sqlite3.connect("file:%s?mode=ro" % srv.db, uri=True)
        try:
            eq(con.execute("SELECT glossary_version FROM segments ORDER BY seq").fetchall(),
               [(1,), (1,), (1,)], "existing segments get the current glossary version")
            eq(con.execute("SELECT version FROM glossaries").fetchall(), [(1,)],
               "the current glossary kept as version 1")
            eq(con.execute("SELECT incarnation = sid FROM sessions").fetchall(), [(1,)],
               "incarnation of an existing session")
        finally:
            con.close()
        # best effort: a replay now scores all three with the glossary
        expect_status(c.put(base("up") + "/segments/s0", seg_body(s[0], "s0")), 200, "PUT")
        expect_status(new_session(c, "up-fresh", OPTS_B, GLOSSARY), 201, "fresh")
        for k in range(3):
            c.jpost(base("up-fresh") + "/segments", seg_body(s[k], "s%d" % k))
        eq(c.jget(base("up") + "/metrics")["systems"],
           c.jget(base("up-fresh") + "/metrics")["systems"], "replay after the upgrade")
        # a new session's incarnation is above every existing one
        inc_up = c.jget(base("up"))["incarnation"]
        check(c.jget(base("up-fresh"))["incarnation"] > inc_up, "incarnations grow")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
