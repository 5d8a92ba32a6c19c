#!/usr/bin/env python3
"""Black-box tests of what a POST reads from the database (issue 12),
against a spawned `adaptmon serve`: counts, never timings.

* The session's glossary is not read back on every POST: the reads of
  the server process per POST (read system calls, /proc/PID/io syscr) of a
  session with a 2,000-entry glossary exceed those of a session without
  one by at most a few. Before, the glossary text sat in the sessions row
  in front of the columns a POST reads (segments, version, incarnation,
  glossary version), so every POST's read snapshot walked the text's
  overflow pages (one pread each: the reader's page cache is dropped at
  every commit).
* Numbers are printed with the fewest digits that read back as the same
  double (0.6666666666666666, not 0.66666666666666663), in the answer of
  a POST (the stored text) and in GET answers.
* The glossary a session answers and scores with is the same after a
  restart and after a PUT, and a database whose sessions rows still hold
  the glossary text (schema 3) is migrated without losing it.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only; Linux (/proc).
"""
import json
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Server, check, db_query, eq, expect_status, run_tests,  # noqa: E402
                     settle_pending, sqlite_only, tico19)

S = None      # the server (no authentication)
C = None      # a client of S


def setup():
    global S, C
    S = Server()
    C = S.client()


def teardown():
    if C:
        C.close()
    if S:
        eq(S.stop(), 0, "exit status of adaptmon serve after SIGTERM")


def big_glossary_csv(n):
    """A CSV glossary of n entries (about 60 bytes each)."""
    rows = ["id,sourceLang,targetLang,sourceString,targetString"]
    rows += ["%d,en,fr,synthetic term number %d,terme synthétique numéro %d" % (i, i, i)
             for i in range(1, n + 1)]
    return "\n".join(rows) + "\n"


def syscr(pid):
    """Read system calls of process pid so far (/proc/PID/io)."""
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            if line.startswith("syscr:"):
                return int(line.split()[1])
    raise AssertionError("no syscr in /proc/%d/io" % pid)


def make_session(sid, glossary=None):
    C.create_session(id=sid, source_lang="en", target_lang="fr")
    if glossary:
        r = C.put("/v1/sessions/%s/glossary" % sid, glossary, ctype="text/csv")
        expect_status(r, 200, "PUT glossary")


def reads_per_post(sid, segs, first=0):
    """Mean read system calls of the server per POST of segs to sid, one after
    another (each POST is its own commit); ids from first on."""
    before = syscr(S.proc.pid)
    for i, s in enumerate(segs, first):
        C.jpost("/v1/sessions/%s/segments" % sid, dict(s, id="%s-%d" % (sid, i)), status=201)
    return (syscr(S.proc.pid) - before) / len(segs)


def test_post_reads_do_not_grow_with_the_glossary():
    segs = tico19()[:40]
    make_session("io-plain")
    make_session("io-gloss", big_glossary_csv(2000))
    # first POST of each builds its scorer (that reads the glossary once)
    reads_per_post("io-plain", segs[:2])
    reads_per_post("io-gloss", segs[:2])
    plain = reads_per_post("io-plain", segs[2:], 2)
    gloss = reads_per_post("io-gloss", segs[2:], 2)
    # the 2,000-entry glossary is ~130 KiB: ~33 pages of 4 KiB
    check(gloss - plain <= 4,
          "reads per POST with a 2,000-entry glossary %.1f vs %.1f without (the glossary "
          "must not be read back on every POST)" % (gloss, plain))


def glossary(sid):
    """(glossary version, GET …/glossary body) of session sid."""
    r = C.get("/v1/sessions/%s/glossary" % sid)
    expect_status(r, 200, "GET glossary")
    return C.jget("/v1/sessions/%s" % sid)["glossary"], r.body


def test_glossary_survives_restart_and_put():
    segs = tico19()[:3]
    make_session("io-keep", big_glossary_csv(50))
    g1 = glossary("io-keep")
    C.jpost("/v1/sessions/io-keep/segments", dict(segs[0], id="k0"), status=201)
    S.stop()
    S.start()
    C.port = S.port
    C.close()
    eq(glossary("io-keep"), g1, "glossary after a restart")
    r = C.put("/v1/sessions/io-keep/glossary", big_glossary_csv(7), ctype="text/csv")
    expect_status(r, 200, "second PUT glossary")
    g3 = glossary("io-keep")
    check(g3[1] != g1[1], "the PUT changed the glossary")
    eq(g3[0]["version"], g1[0]["version"] + 1, "glossary version")
    eq(g3[0]["entries"], 7, "glossary entries")
    C.jpost("/v1/sessions/io-keep/segments", dict(segs[1], id="k1"), status=201)
    S.stop()
    S.start()
    C.port = S.port
    C.close()
    eq(glossary("io-keep"), g3, "glossary after the PUT and a restart")


def test_schema3_database_keeps_its_glossary():
    """A sessions row that still holds the glossary text (schema 3, before the
    text moved to the glossaries table only) is migrated without loss."""
    sqlite_only("the SQLite schema history (schema/pg starts at 012)")
    segs = tico19()[:3]
    make_session("io-old", big_glossary_csv(20))
    C.jpost("/v1/sessions/io-old/segments", dict(segs[0], id="o0"), status=201)
    before = glossary("io-old")
    S.stop()
    db = sqlite3.connect(S.db)
    cols = [r[1] for r in db.execute("PRAGMA table_info(sessions)")]
    check("glossary" in cols, "sessions still has its glossary column")
    top = db.execute("SELECT max(version) FROM schema_migrations").fetchone()[0]
    check(top >= 4, "schema version %d" % top)
    # back to what schema 3 stored: the current glossary in the sessions row
    # too (and, for the oldest databases, not in the glossaries table)
    db.execute("UPDATE sessions SET glossary = (SELECT g.entries FROM glossaries g WHERE "
               "g.sid = sessions.sid AND g.version = sessions.glossary_version) WHERE id = 'io-old'")
    db.execute("DELETE FROM glossaries WHERE sid = (SELECT sid FROM sessions WHERE id = 'io-old')")
    db.execute("ALTER TABLE sessions DROP COLUMN rewrites")  # 005
    db.execute("DROP TABLE segment_results")  # 006
    db.execute("ALTER TABLE sessions DROP COLUMN result_gen")  # 006
    db.execute("ALTER TABLE sessions DROP COLUMN removed")  # 007
    db.execute("DROP TABLE checkpoints")  # 008
    db.execute("ALTER TABLE sessions DROP COLUMN ckpt_after")  # 008
    db.execute("ALTER TABLE sessions DROP COLUMN ckpt_gen")  # 008
    settle_pending(db)  # 010: the pending words back where schema 8 kept them
    db.execute("ALTER TABLE segments DROP COLUMN words")  # 010
    db.execute("ALTER TABLE sessions DROP COLUMN settled")  # 010
    for col in ("tokenizer", "lang", "source_lang"):  # 012
        db.execute("ALTER TABLE vocabularies DROP COLUMN " + col)
    db.execute("ALTER TABLE segments DROP COLUMN stats")  # 013
    db.execute("ALTER TABLE sessions DROP COLUMN gv_floor")  # 015
    db.execute("DELETE FROM schema_migrations WHERE version >= 4")
    db.commit()
    db.close()
    S.start()
    C.port = S.port
    C.close()
    eq(glossary("io-old"), before, "glossary after the migration")
    r = C.jpost("/v1/sessions/io-old/segments", dict(segs[1], id="o1"), status=201)
    check(json.dumps(r).find("glossary_version") >= 0, "POST answers after the migration")


def sig_digits(tok):
    """Significant digits of a JSON number token."""
    mant = re.split("[eE]", tok)[0].lstrip("-").replace(".", "")
    return len(mant.strip("0")) or 1


def reals(body):
    """The JSON number tokens of body (text) that are not integers."""
    return [t for t in re.findall(r'(?<![\w"])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?', body)
            if "." in t or "e" in t or "E" in t]


def check_shortest(body, what):
    toks = reals(body)
    check(toks, "%s has real numbers" % what)
    for t in toks:
        eq(float(json.dumps(float(t))), float(t), "round trip")
        eq(sig_digits(t), sig_digits(repr(float(t))),
           "%s prints %s, the shortest text of that double is %s" % (what, t, repr(float(t))))


def test_pending_words_settle_every_settle_every_th_seq():
    """A POST's content words wait in its segment's row; the POST of every
    --settle-every-th seq (256 by default, bench/README.md "A POST near its
    floor") moves them into vocab and occurrences, and the checkpoints stay
    every 32nd seq. A session's settled seq after 40 and 260 POSTs: 0 and
    256 by default, 32 with --settle-every 32 (before the option, every
    32nd seq settled). The word histories answer the same either way."""
    segs = tico19()[:260]
    other = Server("--settle-every", "32")
    try:
        oc = other.client()
        for srv, c in ((S, C), (other, oc)):
            c.create_session(id="settle", source_lang="en", target_lang="fr")
            for s in segs[:40]:
                c.jpost("/v1/sessions/settle/segments", s, status=201)

        def state(srv):
            return db_query(srv, "SELECT settled, segments FROM sessions WHERE id = 'settle'")[0]

        eq(state(S), (0, 40), "settled seq after 40 posts (default --settle-every 256)")
        eq(state(other), (32, 40), "settled seq after 40 posts with --settle-every 32")
        eq(db_query(S, "SELECT count(DISTINCT seq) FROM checkpoints c JOIN sessions s "
                       "ON s.sid = c.sid WHERE s.id = 'settle'")[0][0], 1,
           "checkpoints after 40 posts: the one at 32, whatever the settle")
        for s in segs[40:]:
            C.jpost("/v1/sessions/settle/segments", s, status=201)
            oc.jpost("/v1/sessions/settle/segments", s, status=201)
        eq(state(S), (256, 260), "settled seq after 260 posts (default)")
        eq(state(other), (256, 260), "settled seq after 260 posts with --settle-every 32")
        words = sorted({w.lower() for s in segs[250:] for w in s["translation"].split()
                        if w.isalpha() and w.isascii() and len(w) > 3})
        found = 0
        for w in words[:30]:
            ra, rb = C.get("/v1/sessions/settle/vocabulary/" + w), oc.get(
                "/v1/sessions/settle/vocabulary/" + w)
            eq(ra.status, rb.status, "the word history of %r: status" % w)
            if ra.status == 200:
                eq(ra.json(), rb.json(), "the word history of %r" % w)
                found += 1
        check(found >= 5, "only %d word histories compared" % found)
        oc.close()
    finally:
        other.kill()


def test_reals_are_printed_shortest():
    segs = tico19()
    make_session("io-short", big_glossary_csv(5))
    for i in range(6):
        r = C.post("/v1/sessions/io-short/segments", dict(segs[i], id="r%d" % i))
        expect_status(r, 201, "POST")
        check_shortest(r.body.decode("utf-8"), "POST answer %d" % i)
    r = C.get("/v1/sessions/io-short/metrics")
    expect_status(r, 200, "GET metrics")
    check_shortest(r.body.decode("utf-8"), "metrics answer")
    # the idempotent re-post answers the stored text, byte for byte
    first = C.post("/v1/sessions/io-short/segments", dict(segs[5], id="r5"))
    expect_status(first, 200, "re-POST")
    check_shortest(first.body.decode("utf-8"), "re-POST answer")
    # a body with reals (metadata) re-posts idempotently: the same bytes, 200
    body = dict(segs[7], id="meta", metadata={"qe": 2 / 3, "w": 0.1})
    a = C.post("/v1/sessions/io-short/segments", body)
    expect_status(a, 201, "POST with metadata")
    b = C.post("/v1/sessions/io-short/segments", body)
    expect_status(b, 200, "re-POST with metadata")
    eq(b.body, a.body, "re-POST answer")
    # a third of 2 is 0.6666666666666666 (16 digits), not 0.66666666666666663
    r = C.post("/v1/sessions/io-short/segments",
               {"id": "third", "source": "a b c", "hypothesis": "alpha beta gamma",
                "translation": "alpha beta delta"})
    expect_status(r, 201, "POST")
    check("0.66666666666666663" not in r.text and "0.33333333333333331" not in r.text,
          "17-digit thirds in %s" % r.text[:400])


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
