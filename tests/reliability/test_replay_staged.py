#!/usr/bin/env python3
"""A long replay never holds the writer for long (issue 10 §2, schema/006).

A PUT of an early segment rewrites the stored result of every later one
(each result embeds the running totals). Those results are now staged a
short transaction at a time and switched in at once, then folded into the
segments a chunk at a time, so other sessions' writes go on in between.

* The most rows one write transaction changed (the /metrics gauge
  adaptmon_store_write_rows_max) stays at a chunk's size during the replay
  of a session of N segments; before, the replay wrote all N - 1 results in
  one transaction. Nothing is timed: the count of rows decides.
* Every stored result after two replays equals posting the final log
  serially into a fresh session; no staged row is left, and the session's
  result generation advanced once per replay.
* Staged rows left by a crash (a current generation not yet folded, and an
  abandoned one) are settled when the server opens the database: the
  current ones become the stored results, the others are deleted.
"""
import json
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTS_A, grow_session, new_session, scale, seg_body, timeline, tico19  # noqa: E402
from harness import Server, base, check, eq, expect_status, run_tests  # noqa: E402

CHUNK = 128  # AM_RESULT_CHUNK in server/store.c


def _rows_max(c):
    r = c.get("/metrics")
    expect_status(r, 200, "GET /metrics")
    m = re.search(r"^adaptmon_store_write_rows_max (\d+)$", r.text, re.M)
    check(m is not None, "adaptmon_store_write_rows_max in /metrics")
    return int(m.group(1))


def test_replay_writes_in_short_transactions_and_equals_a_serial_post():
    n = scale(1200, 300)
    segs = tico19()
    srv = Server()
    try:
        c = srv.client()
        expect_status(new_session(c, "big", OPTS_A), 201, "create")
        for k in range(20):  # posted one at a time: each write is one POST's rows
            expect_status(c.post(base("big") + "/segments", seg_body(segs[k], "s%d" % k)), 201,
                          "post")
        c.close()
        eq(srv.stop(), 0, "exit status")
        grow_session(srv.db, "big", n)
        srv.start()
        c = srv.client()
        before = _rows_max(c)
        check(before < CHUNK, "no write so far changed %d rows or more (%d)" % (CHUNK, before))
        # two replays: segment 2 and segment 5 changed (the hypothesis becomes the translation)
        for k in (1, 4):
            changed = seg_body(segs[k], "s%d" % k)
            changed["hypothesis"] = segs[k]["translation"]
            r = c.put(base("big") + "/segments/s%d" % k, changed)
            expect_status(r, 200, "PUT segment %d" % (k + 1))
        after = _rows_max(c)
        check(after <= 2 * CHUNK + 64,  # a fold chunk: 128 updates + 128 deletes
              "the replays of %d segments changed at most %d rows per write transaction "
              "(got %d; one transaction with every later result would be %d)"
              % (n, 2 * CHUNK + 64, after, n - 2))
        stored = timeline(c, "big")
        eq(len(stored), n, "segments after the replays")
        # the same final log posted serially into a fresh session
        expect_status(new_session(c, "ref", OPTS_A), 201, "create ref")
        for s in stored:
            # grown segments keep the request text of the one they copy: its id differs
            got = c.post(base("ref") + "/segments", dict(s["request"], id=s["id"]))
            expect_status(got, 201, "serial post of seq %d" % s["seq"])
            g = got.json()
            for key in ("scores", "totals"):
                eq(s[key], g[key], "%s of seq %d after the replays vs a serial post" % (key, s["seq"]))
        eq(c.jget(base("big") + "/metrics")["systems"], c.jget(base("ref") + "/metrics")["systems"],
           "totals vs a serial post")
        c.close()
        eq(srv.stop(), 0, "exit status")
        db = sqlite3.connect("file:%s?mode=ro" % srv.db, uri=True)
        try:
            eq(db.execute("SELECT count(*) FROM segment_results").fetchone()[0], 0,
               "staged rows left after the replays")
            eq(db.execute("SELECT result_gen FROM sessions WHERE id = 'big'").fetchone()[0], 2,
               "one result generation per replay")
        finally:
            db.close()
    finally:
        srv.kill()


def test_staged_results_left_by_a_crash_are_settled_at_open():
    segs = tico19()
    srv = Server()
    try:
        c = srv.client()
        expect_status(new_session(c, "cr", OPTS_A), 201, "create")
        for k in range(5):
            expect_status(c.post(base("cr") + "/segments", seg_body(segs[k], "s%d" % k)), 201,
                          "post")
        orig = c.jget(base("cr") + "/segments/s2")
        c.close()
        eq(srv.stop(), 0, "exit status")
        db = sqlite3.connect(srv.db)
        with db:
            sid, res = db.execute("SELECT s.sid, g.result FROM sessions s JOIN segments g "
                                  "ON g.sid = s.sid WHERE s.id = 'cr' AND g.seq = 3").fetchone()
            staged = json.loads(res)
            staged["created_ms"] += 1  # a result that differs from the stored one
            # the replay of generation 4 switched in but not yet folded …
            db.execute("UPDATE sessions SET result_gen = 4 WHERE sid = ?", (sid,))
            db.execute("INSERT INTO segment_results (sid, gen, seq, result) VALUES (?, 4, 3, ?)",
                       (sid, json.dumps(staged)))
            # … and one abandoned before its switch
            db.execute("INSERT INTO segment_results (sid, gen, seq, result) VALUES (?, 5, 2, 'x')",
                       (sid,))
        db.close()
        srv.start()
        c = srv.client()
        got = c.jget(base("cr") + "/segments/s2")
        eq(got["created_ms"], orig["created_ms"] + 1, "the current staged result is the stored one")
        eq(c.jget(base("cr") + "/segments/s1")["seq"], 2, "seq 2 untouched by the abandoned row")
        c.close()
        eq(srv.stop(), 0, "exit status")
        db = sqlite3.connect("file:%s?mode=ro" % srv.db, uri=True)
        try:
            eq(db.execute("SELECT count(*) FROM segment_results").fetchone()[0], 0,
               "staged rows settled at open")
            eq(json.loads(db.execute("SELECT result FROM segments WHERE seq = 3").fetchone()[0])
               ["created_ms"], orig["created_ms"] + 1, "folded into segments.result")
        finally:
            db.close()
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
