#!/usr/bin/env python3
"""Replays after an edit start at the last checkpoint (issue 13 §4).

A PUT of an existing segment or a DELETE replays the session's log; it now
starts at the last checkpoint before the edited segment (schema/008: the
raw totals of every entry at every 32nd seq) with the history counted up to
it, instead of at segment 1.

* The result is the one of a full replay: after edits at the start, in the
  middle and at the end, by PUT and by DELETE, of a session with three
  systems (a baseline, pair totals, segments that carry only some
  systems), translators and a glossary change in between (each segment
  keeps the glossary version it was first scored with), every stored
  result and every raw totals row (systems, pair:…, tr:…) equals, byte for
  byte, those of a fresh session that got the final log posted serially;
  for PUTs (same seqs) the valid checkpoints equal the fresh session's too.
* Checkpoints a replay staged but did not switch in (a crash between the
  two) are not started from, and the next replay deletes them.
* A late edit re-scores only the segments after the last checkpoint: the
  counter adaptmon_replay_segments_total (/metrics) grows by at most
  (segments from the edited one on) + 32 for a PUT of segment 990 and a
  DELETE of segment 995 of 1,000 (before: 1,000 each); an edit of segment
  3 re-scores them all. Nothing is timed.

Python standard library only.
"""
import json
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (PENDING, base, check, db_connect, eq, expect_status, run_tests,  # noqa: E402
                     serve, shutdown, sqlite_only)

S = None
C = None

OPTS = {"baseline_system": "baseline"}  # new sessions keep pair totals
G1 = [{"source": "terrier", "targets": ["terrier", "Terrier"]},
      {"source": "park", "targets": ["park", "garden"]}]
G2 = [{"source": "dog", "targets": ["dog", "hound"]},
      {"source": "park", "targets": ["garden", "park"]}]
WORDS = ["terrier", "man", "woman", "dog", "lady", "walks", "bites", "feeds", "park", "cat",
         "garden", "hound", "Terrier", "child"]
TRANSLATORS = ["ann", "bob", None]


def setup():
    global S, C
    # under valgrind a full replay of 1,000 segments (the first edits, before
    # any checkpoint) needs more than the default 5 s CPU budget
    # the settle every 32nd seq, the checkpoints' interval (the default is
    # every 256th): the tests cross settles at 32 and 64
    S, C = serve("--settle-every", "32",
                 *(["--request-timeout-ms", "120000"] if os.environ.get("VALGRIND") == "1" else []))


def teardown():
    shutdown(S, C)


def seg(i, prefix="s", variant=0):
    """Segment i: its words recur (recall depends on the order), it carries
    the baseline, usually "ada" and every third time "big", and a
    translator (or none); variant changes its translation."""
    w = [WORDS[(i * 7 + k * 3 + variant * 5) % len(WORDS)] for k in range(5)]
    hyps = {"baseline": " ".join(reversed(w))}
    if i % 5 != 4:
        hyps["ada"] = "The %s %s the %s" % (w[0], w[2], w[1])
    if i % 3 == 0:
        hyps["big"] = "The %s %s the %s %s" % (w[0], w[1], w[2], w[4])
    s = {"id": "%s%d" % (prefix, i), "source": " ".join(w), "hypotheses": hyps,
         "translation": "The %s %s the %s near the %s" % (w[0], w[1], w[2], w[3])}
    t = TRANSLATORS[i % 3]
    if t:
        s["translator"] = t
    return s


def create(sid):
    C.delete(base(sid))
    r = C.post("/v1/sessions", {"id": sid, "source_lang": "en", "target_lang": "en",
                                "stopword_list": ["the", "near"], "glossary": G1,
                                "options": OPTS})
    expect_status(r, 201, "create " + sid)


def post_log(sid, log):
    """Posts log = [(segment, glossary version)] one at a time, putting G2
    before the first segment of version 2."""
    glossary = 1
    for s, v in log:
        if v != glossary:
            expect_status(C.put(base(sid) + "/glossary", G2), 200, "glossary G2 of " + sid)
            glossary = v
        expect_status(C.post(base(sid) + "/segments", s), 201, "POST %s to %s" % (s["id"], sid))


def db():
    return db_connect(S.db)


def json_each():
    """The words of a pending row p (a JSON array in p.words) as rows j(value)."""
    if S.db.startswith("postgresql://"):
        return "json_array_elements_text(p.words::json) j(value)"
    return "json_each(p.words) j"


COLS = {"totals": "system, stats", "checkpoints": "seq, system, stats",
        "choices": "entry, alt, count"}
# the checkpoints a replay may start from (schema/008)
VALID = {"checkpoints": " AND gen <= (SELECT result_gen FROM sessions WHERE sid = t.sid) AND "
         "(seq <= (SELECT ckpt_after FROM sessions WHERE sid = t.sid) OR "
         "gen >= (SELECT ckpt_gen FROM sessions WHERE sid = t.sid))"}


def raw_rows(sid, table):
    """A session's rows of a table, as stored (text); of checkpoints, the
    valid ones."""
    con = db()
    try:
        return con.execute("SELECT %s FROM %s t WHERE sid = (SELECT sid FROM sessions WHERE id = ?)"
                           "%s ORDER BY %s" % (COLS[table], table, VALID.get(table, ""),
                                               COLS[table]), (sid,)).fetchall()
    finally:
        con.close()


def history(sid):
    """A session's word history as stored: every (word, seq) of the settled
    occurrences and of the pending words (schema/010), and per word (occ,
    first seq, last seq) of vocab merged with the pending words."""
    con = db()
    try:
        q = ("WITH s AS (SELECT sid FROM sessions WHERE id = ?), "
             "h AS (SELECT word, seq FROM occurrences WHERE sid = (SELECT sid FROM s) UNION ALL "
             "SELECT j.value, p.seq FROM " + PENDING + " p, " + json_each() + " "
             "WHERE p.sid = (SELECT sid FROM s)) ")
        occ = con.execute(q + "SELECT word, seq FROM h ORDER BY word, seq", (sid,)).fetchall()
        pend = dict((w, (n, a, b)) for w, n, a, b in con.execute(
            q + "SELECT j.value, count(*), min(p.seq), max(p.seq) FROM " + PENDING + " p, "
            + json_each() + " WHERE p.sid = (SELECT sid FROM s) GROUP BY j.value", (sid,)))
        voc = {}
        for w, n, a, b in con.execute("SELECT word, occ, first_seq, last_seq FROM vocab WHERE sid = "
                                      "(SELECT sid FROM sessions WHERE id = ?)", (sid,)):
            voc[w] = (n, a, b)
        for w, (n, a, b) in pend.items():
            o = voc.get(w)
            voc[w] = (n, a, b) if o is None else (o[0] + n, min(o[1], a), max(o[2], b))
        return occ, sorted(voc.items())
    finally:
        con.close()


def results(sid):
    """The stored result texts of a session by id, without the fields that
    name the session, the seq and the time."""
    out, after = [], 0
    while True:
        d = C.jget(base(sid) + "/segments?after=%d&limit=1000" % after)
        for x in d["segments"]:
            x = {k: v for k, v in x.items() if k not in ("session", "seq", "created_ms", "created_at")}
            out.append(json.dumps(x, sort_keys=True))
        if d["next"] is None:
            return out
        after = d["next"]


def same_as_serial(sid, log, what, same_seqs):
    ref = sid + "-ref"
    create(ref)
    post_log(ref, log)
    ra, rb = results(sid), results(ref)
    eq(len(ra), len(log), "%s: segments" % what)
    for a, b in zip(ra, rb):
        eq(a, b, "%s: stored result vs a serial post" % what)
    ta, tb = raw_rows(sid, "totals"), raw_rows(ref, "totals")
    check(any(s.startswith("pair:") for s, _ in tb) and any(s.startswith("tr:") for s, _ in tb),
          "%s: the log has pair and translator totals" % what)
    eq(ta, tb, "%s: every raw totals row vs a serial post" % what)
    ca, cb = raw_rows(sid, "choices"), raw_rows(ref, "choices")
    check(len(cb) > 1, "%s: the log has term choices" % what)
    eq(ca, cb, "%s: the translator's term choices vs a serial post" % what)
    if same_seqs:
        (oa, va), (ob, vb) = history(sid), history(ref)
        check(len(ob) > 0, "%s: the serial post has a word history" % what)
        eq(oa, ob, "%s: the word history vs a serial post" % what)
        eq(va, vb, "%s: the vocabulary (occ, first and last seq) vs a serial post" % what)
    ma, mb = C.jget(base(sid) + "/metrics"), C.jget(base(ref) + "/metrics")
    for k in ("systems", "relative_to_baseline", "by_translator"):
        eq(json.dumps(ma.get(k), sort_keys=True), json.dumps(mb.get(k), sort_keys=True),
           "%s: metrics %s vs a serial post" % (what, k))
    if same_seqs:
        ca, cb = raw_rows(sid, "checkpoints"), raw_rows(ref, "checkpoints")
        check(len(cb) > 0, "%s: the serial post wrote checkpoints" % what)
        eq(ca, cb, "%s: checkpoints vs a serial post" % what)


def test_edits_equal_a_serial_post_of_the_final_log():
    n = 130  # checkpoints at seqs 32, 64, 96, 128; G2 from segment 60 on
    log = [(seg(i), 1 if i < 60 else 2) for i in range(n)]
    create("ck")
    post_log("ck", log)
    same_as_serial("ck", log, "before any edit", True)
    for at, where in ((1, "start"), (70, "middle"), (n - 2, "end")):
        new = seg(at, variant=1)
        expect_status(C.put(base("ck") + "/segments/" + new["id"], new), 200,
                      "PUT at the %s" % where)
        log[at] = (new, log[at][1])  # it keeps the glossary version it was scored with
        same_as_serial("ck", log, "after a PUT at the %s" % where, True)
    for at, where in ((0, "start"), (64, "middle"), (-1, "end")):
        at = at % len(log)
        sid = log[at][0]["id"]
        expect_status(C.delete(base("ck") + "/segments/" + sid), 204, "DELETE at the %s" % where)
        del log[at]
        same_as_serial("ck", log, "after a DELETE at the %s" % where, False)
    # a PUT after the DELETEs (gaps: the checkpoints follow the stored seqs)
    new = seg(100, variant=2)
    expect_status(C.put(base("ck") + "/segments/s100", new), 200, "PUT after the DELETEs")
    log = [(new, v) if s["id"] == "s100" else (s, v) for s, v in log]
    same_as_serial("ck", log, "after a PUT after the DELETEs", False)


def test_checkpoints_an_interrupted_replay_staged_are_not_used_and_deleted():
    """A replay stages its checkpoints at its new result generation before
    the switch; a crash in between leaves them above the session's
    result_gen. Such rows (made here in SQL: seq 64 with the totals of seq
    32, which would give wrong totals if read) are not started from, and
    the next replay deletes them."""
    log = [(seg(i), 1) for i in range(70)]
    create("ab")
    post_log("ab", log)
    con = db_connect(S.db, timeout=30)
    try:
        with con:
            sid, gen = con.execute("SELECT sid, result_gen FROM sessions WHERE id = 'ab'").fetchone()
            con.execute("INSERT INTO checkpoints (sid, seq, gen, system, stats) SELECT sid, 64, "
                        "gen + 1, system, stats FROM checkpoints WHERE sid = ? AND seq = 32",
                        (sid,))
    finally:
        con.close()
    new = seg(66, variant=1)
    expect_status(C.put(base("ab") + "/segments/s66", new), 200, "PUT of segment 67")
    log[66] = (new, 1)
    same_as_serial("ab", log, "after a replay next to abandoned checkpoints", True)
    con = db()
    try:
        eq(con.execute("SELECT count(*) FROM checkpoints WHERE sid = ? AND gen > ?",
                       (sid, gen + 1)).fetchone()[0], 0, "no rows above the new generation")
        eq(con.execute("SELECT count(*) FROM checkpoints WHERE sid = ? AND seq = 64",
                       (sid,)).fetchone()[0], 12, "seq 64: the POST's rows only (12 entries)")
    finally:
        con.close()


def test_pending_words_of_schema_9_are_settled_by_the_upgrade():
    """A database of schema 9 kept a segment's pending words in a table of
    their own (pending_words); schema 10 keeps them in the segment's row
    with the session's settled seq. The upgrade settles them: the stored
    history (every (word, seq), each word's occ, first and last seq), the
    word-history answers and the metrics are those before it, and the
    session then goes on (POSTs past the next settle at 64, an edit) as a
    serial post of the same log that never was upgraded."""
    sqlite_only("the SQLite schema history (schema/pg starts at 012)")
    log = [(seg(i), 1) for i in range(45)]  # 33..45 pending, after the settle at 32
    create("mg")
    post_log("mg", log)
    occ, voc = history("mg")
    words = sorted(set(w for w, _ in occ))
    answers = [C.jget(base("mg") + "/vocabulary/" + w) for w in words]
    metrics = C.jget(base("mg") + "/metrics")
    eq(S.stop(), 0, "exit status")
    con = sqlite3.connect(S.db)
    try:
        with con:  # back to what schema 9 stored
            con.execute("CREATE TABLE pending_words (sid INTEGER NOT NULL REFERENCES sessions (sid) "
                        "ON DELETE CASCADE, seq INTEGER NOT NULL, words TEXT NOT NULL, "
                        "PRIMARY KEY (sid, seq)) WITHOUT ROWID")
            con.execute("INSERT INTO pending_words SELECT sid, seq, words FROM " + PENDING)
            eq(con.execute("SELECT min(seq), max(seq) FROM pending_words p JOIN sessions s "
                           "USING (sid) WHERE s.id = 'mg'").fetchone(), (33, 45),
               "schema 9: seqs 33..45 pending")
            con.execute("ALTER TABLE segments DROP COLUMN words")
            con.execute("ALTER TABLE sessions DROP COLUMN settled")
            for col in ("tokenizer", "lang", "source_lang"):  # 012
                con.execute("ALTER TABLE vocabularies DROP COLUMN " + col)
            con.execute("ALTER TABLE segments DROP COLUMN stats")  # 013
            con.execute("ALTER TABLE segment_results DROP COLUMN stats")  # 014
            con.execute("ALTER TABLE sessions DROP COLUMN gv_floor")  # 015
            con.execute("DELETE FROM schema_migrations WHERE version >= 10")
    finally:
        con.close()
    S.start()
    C.port = S.port
    C.close()
    con = db()
    try:
        eq(con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'pending_words'").fetchone()[0],
           0, "pending_words dropped")
        eq(con.execute("SELECT settled FROM sessions WHERE id = 'mg'").fetchone()[0], 45,
           "settled up to the last seq")
    finally:
        con.close()
    eq(history("mg"), (occ, voc), "the stored history after the upgrade")
    for w, a in zip(words, answers):
        eq(C.jget(base("mg") + "/vocabulary/" + w), a, "word history of %r after the upgrade" % w)
    eq(C.jget(base("mg") + "/metrics"), metrics, "metrics after the upgrade")
    more = [(seg(i), 1) for i in range(45, 70)]
    post_log("mg", more)
    log += more
    new = seg(40, variant=1)
    expect_status(C.put(base("mg") + "/segments/s40", new), 200, "PUT of segment 41")
    log[40] = (new, 1)
    same_as_serial("mg", log, "after the upgrade, the settle at 64 and an edit", True)


def replayed():
    text = C.get("/metrics").text
    m = re.search(r"^adaptmon_replay_segments_total (\d+)$", text, re.M)
    check(m is not None, "/metrics has adaptmon_replay_segments_total")
    return int(m.group(1))


def test_late_edit_rescores_only_the_segments_after_the_last_checkpoint():
    n = 1000
    create("late")
    body = [seg(i, prefix="L") for i in range(n)]
    for k in range(0, n, 500):
        r = C.post(base("late") + "/segments", body[k:k + 500])
        expect_status(r, 200, "batch")
        eq(r.json()["created"], 500, "batch items created")
    before = replayed()
    new = seg(989, prefix="L", variant=1)  # segment 990 (seq 990)
    expect_status(C.put(base("late") + "/segments/L989", new), 200, "PUT of segment 990")
    got = replayed() - before
    check(got <= (n - 990 + 1) + 32,
          "a PUT of segment 990 of %d re-scored %d segments (at most %d)" % (n, got, n - 990 + 33))
    check(got >= n - 990 + 1, "the PUT re-scored the segments from 990 on (%d)" % got)
    before = replayed()
    expect_status(C.delete(base("late") + "/segments/L994"), 204, "DELETE of segment 995")
    got = replayed() - before
    check(got <= (n - 995) + 32,
          "a DELETE of segment 995 of %d re-scored %d segments (at most %d)" % (n, got, n - 995 + 32))
    check(got >= n - 995, "the DELETE re-scored the segments after 995 (%d)" % got)
    # an early edit replays (nearly) everything: the counter counts what it says
    before = replayed()
    new = seg(2, prefix="L", variant=1)
    expect_status(C.put(base("late") + "/segments/L2", new), 200, "PUT of segment 3")
    eq(replayed() - before, n - 1, "a PUT of segment 3 re-scored every remaining segment")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
