#!/usr/bin/env python3
"""Black-box tests of GET /v1/sessions/{id}/metrics?ci=LEVEL (server/live/ingest_ci.c):
the metrics answer plus a paired bootstrap over the stored segments
(docs/metrics.md §5), cached and ETagged like the metrics answer.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (TICO_GLOSSARY, base, check, eq, expect_problem,  # noqa: E402
                     expect_status, pg_run, run_tests, serve, shutdown, sqlite_only, tico19)

S = None
C = None


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


def seg(i):
    """TICO-19 segment i: system 'base' is the Fairseq output, 'good' the
    confirmed translation itself."""
    t = tico19()[i]
    return {"id": "s%d" % i, "source": t["source"], "translation": t["translation"],
            "hypotheses": {"base": t["hypothesis"], "good": t["translation"]}}


def fill(sid, n, **options):
    C.create_session(id=sid, options=options)
    for i in range(n):
        expect_status(C.post(base(sid) + "/segments", seg(i)), 201, "POST %d" % i)


def ci(sid, level="0.95", headers=None):
    return C.get(base(sid) + "/metrics?ci=" + level, headers=headers)


def test_intervals_and_p_values():
    fill("ci-a", 60, baseline_system="base")
    r = ci("ci-a")
    expect_status(r, 200, "metrics?ci")
    d = r.json()
    conf = d["confidence"]
    eq((conf["test"], conf["n"], conf["seed"], conf["baseline"], conf["confidence"]),
       ("paired-bs", 1000, 12345, "base", 0.95), "header")
    eq(conf["segments"], 60, "segments")
    eq([x["system"] for x in conf["systems"]], ["base", "good"], "systems")
    for metric in ("R0", "R1", "R0+1", "TER", "1-TERm"):
        eq(conf["resampling"][metric], "segments", "one session: " + metric)
    b, g = conf["systems"]
    eq(b["R0"]["p_value"], None, "baseline p")
    eq(b["BLEU"]["score"], d["systems"]["base"]["bleu"], "BLEU = the total")
    eq(b["chrF2"]["score"], d["systems"]["base"]["chrf"], "chrF2 = the total")
    # the bootstrap's score is the session total
    eq(g["R0"]["score"], d["systems"]["good"]["r0"]["score"], "R0 = the total")
    eq(g["R0"]["score"], 1.0, "the translation itself recalls every word")
    eq(g["R0"]["ci"], 0.0, "no spread for a perfect system")
    check(b["R0"]["lo"] <= b["R0"]["mean"] <= b["R0"]["hi"] and b["R0"]["ci"] > 0,
          "baseline R0 interval %r" % b["R0"])
    check(g["R0"]["p_value"] < 0.01, "good vs base R0: p %r" % g["R0"]["p_value"])
    check(b["TER"]["score"] > 0 and g["TER"]["score"] == 0, "TER %r %r" % (b["TER"], g["TER"]))
    # the plain answer has no confidence and another ETag
    plain = C.get(base("ci-a") + "/metrics")
    check("confidence" not in plain.json(), "plain metrics without confidence")
    check(plain.header("ETag") != r.header("ETag"), "ETags differ")
    check(r.header("ETag").endswith('-ci0.95"'), "ETag %r" % r.header("ETag"))


def test_same_numbers_as_the_cli():
    """The session's BLEU, chrF2 and TER intervals and p-values equal those of
    `adaptmon score --paired-bs` on the same texts (same statistics, same
    draws)."""
    import json
    import subprocess
    import tempfile
    from harness import ADAPTMON
    fill("ci-cli", 60, baseline_system="base")
    d = C.get(base("ci-cli") + "/metrics?ci=0.95").json()["confidence"]
    tmp = tempfile.mkdtemp(prefix="adaptmon-ci-")
    files = {}
    for name, key in (("ref", "translation"), ("base", "hypothesis"), ("good", "translation")):
        files[name] = os.path.join(tmp, name)
        with open(files[name], "w", encoding="utf-8") as f:
            f.write("".join(tico19()[i][key] + "\n" for i in range(60)))
    p = subprocess.run([ADAPTMON, "score", "--ref", files["ref"], "--hyp", "base=" + files["base"],
                        "--hyp", "good=" + files["good"], "--paired-bs", "--json"],
                       capture_output=True, check=True, timeout=120)
    cli = json.loads(p.stdout)["significance"]
    for metric in ("BLEU", "chrF2", "chrF2++", "TER"):
        for a, b in zip(d["systems"], cli["systems"]):
            eq(a[metric], b[metric], "%s %s: API vs CLI" % (a["system"], metric))


def test_cached_etag_304_and_change():
    fill("ci-b", 12, baseline_system="base")
    r1 = ci("ci-b")
    r2 = ci("ci-b")
    expect_status(r2, 200, "second GET")
    eq(r2.body, r1.body, "repeated GET byte-identical")
    eq(r2.header("ETag"), r1.header("ETag"), "same ETag")
    r3 = ci("ci-b", headers={"If-None-Match": r1.header("ETag")})
    expect_status(r3, 304, "If-None-Match")
    for spelling in (".95", "0.950"):  # the same level, spelled otherwise: the same answer
        r4 = ci("ci-b", spelling)
        eq(r4.header("ETag"), r1.header("ETag"), "ETag of ci=%s" % spelling)
        eq(r4.body, r1.body, "answer of ci=%s" % spelling)
    other = ci("ci-b", "0.9")
    check(other.header("ETag") != r1.header("ETag"), "level in the ETag")
    b90 = other.json()["confidence"]["systems"][0]["R0"]
    b95 = r1.json()["confidence"]["systems"][0]["R0"]
    check(b90["hi"] - b90["lo"] <= b95["hi"] - b95["lo"], "90 %% interval not wider than 95 %%")
    expect_status(C.post(base("ci-b") + "/segments", seg(12)), 201, "POST")
    r4 = ci("ci-b", headers={"If-None-Match": r1.header("ETag")})
    expect_status(r4, 200, "after a POST")
    eq(r4.json()["confidence"]["segments"], 13, "segments after the POST")



def test_kept_statistics_equal_a_fresh_computation():
    """The statistics kept between ?ci= requests (server/live/ci_cache.c: a
    request reads only the segments posted since the last one; a PUT or a
    DELETE makes it start again) give the answer of a session that never
    asked: session "ci-inc" (two systems, a glossary) asks after every step
    of 151 POSTs, a PUT and a DELETE, at several levels; at each step a new
    session gets the same operations and asks once (from nothing): equal
    confidence objects."""
    glossary = open(TICO_GLOSSARY, encoding="utf-8").read()

    def new(sid):
        C.create_session(id=sid, options={"baseline_system": "base"})
        expect_status(C.put(base(sid) + "/glossary", glossary, ctype="text/csv"), 200, "glossary")

    def apply(sid, op):
        kind, i = op
        t = tico19()[i]
        good = t["hypothesis"] if (i % 3 == 0) != (kind == "put") else t["translation"]
        body = {"id": "s%d" % i, "source": t["source"], "translation": t["translation"],
                "hypotheses": {"base": t["hypothesis"], "good": good}}
        if kind == "post":
            r = C.post(base(sid) + "/segments", body)
        elif kind == "put":
            r = C.put(base(sid) + "/segments/s%d" % i, body)
        else:
            r = C.delete(base(sid) + "/segments/s%d" % i)
        check(r.status in (200, 201, 204), "%s %s %d: %d" % (sid, kind, i, r.status))

    def conf(sid, level):
        r = ci(sid, level)
        expect_status(r, 200, "%s ci=%s" % (sid, level))
        return r.json()["confidence"]

    ops = [("post", i) for i in range(150)] + [("put", 17), ("delete", 30), ("post", 150)]
    # (operations done, level): the steps at which both sessions are asked
    steps = [(40, "0.95"), (41, "0.9"), (100, "0.5"), (150, "0.95"), (151, "0.9"), (152, "0.95"),
             (153, "0.9")]
    new("ci-inc")
    done = 0
    for k, (n, level) in enumerate(steps):
        for op in ops[done:n]:
            apply("ci-inc", op)
        done = n
        inc = conf("ci-inc", level)
        if k == 0:
            check("term-EM" in inc["systems"][0], "the glossary's metrics are resampled")
        new("ci-fresh%d" % k)
        for op in ops[:n]:
            apply("ci-fresh%d" % k, op)
        eq(inc, conf("ci-fresh%d" % k, level), "kept vs fresh after %d operations" % n)
    eq(inc["segments"], 150, "151 POSTs, one DELETE")



def test_retries_over_budget_finish():
    """A ?ci= request over --request-timeout-ms answers 503, but what it read
    stays (ci_cache.c keeps the prefix of the segments it scored), so asking
    again goes on from there: a session too long for one budget is answered
    after a few retries, with the numbers of a server without a budget."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "reliability"))
    from harness import Server
    from rel import grow_session
    srv = Server("--request-timeout-ms", "0")
    try:
        c = srv.client()
        c.create_session(id="g", options={"baseline_system": "base"})
        for i in range(40):
            expect_status(c.post(base("g") + "/segments", seg(i)), 201, "POST %d" % i)
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        grow_session(db, "g", 6000)
        # without the rows' statistics records (schema/013): the first request
        # then parses and scores every stored segment, long enough to go over
        # a budget (records make it a few times the bootstrap alone)
        if db.startswith("postgresql://"):
            pg_run(db, "UPDATE segments SET stats = NULL;")
        else:
            import sqlite3
            con = sqlite3.connect(db)
            with con:
                con.execute("UPDATE segments SET stats = NULL")
            con.close()
        srv = Server("--request-timeout-ms", "0", db=db)
        c = srv.client()

        def cpu():
            with open("/proc/%d/stat" % srv.proc.pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        # the budget from this machine and build (sanitizers are slower):
        # 3 × a request from kept statistics (the bootstrap alone), which
        # the first request (every segment read and scored) must exceed
        c0 = cpu()
        want = c.get(base("g") + "/metrics?ci=0.95", timeout=600).json()["confidence"]
        c1 = cpu()
        expect_status(c.get(base("g") + "/metrics?ci=0.9", timeout=600), 200, "kept")
        kept = cpu() - c1
        check(c1 - c0 > 3 * kept, "the kept statistics spare the reading and scoring: "
              "%.2f s CPU from nothing, %.2f s from kept statistics" % (c1 - c0, kept))
        budget = int(3000 * kept) + 50
        c.close()
        eq(srv.stop(), 0, "exit status")
        srv = Server("--request-timeout-ms", str(budget), db=db)
        c = srv.client()
        codes = []
        while len(codes) < 40 and (not codes or codes[-1] != 200):
            r = c.get(base("g") + "/metrics?ci=0.95", timeout=600)
            codes.append(r.status)
        if (c1 - c0) * 1000 > 2 * budget:
            check(codes[0] == 503, "the first request is over %d ms: %r" % (budget, codes))
        eq(codes[-1], 200, "answered after %d requests (%d ms each)" % (len(codes), budget))
        eq(r.json()["confidence"], want, "the same numbers as without a budget")
        c.close()
    finally:
        srv.kill()

def _two_sessions(c, glossary, with_glossary, without):
    """Sessions with_glossary (on glossary) and without, both with the
    baseline system "base"."""
    c.create_session(id=with_glossary, options={"baseline_system": "base"})
    expect_status(c.put(base(with_glossary) + "/glossary", glossary, ctype="text/csv"), 200,
                  "glossary")
    c.create_session(id=without, options={"baseline_system": "base"})


def _rescore_and_replay(c, glossary, rescored, replayed):
    """Session `rescored` gets a third of glossary and a rescore (every row
    rewritten); session `replayed` has segment s3 PUT with its two
    hypotheses swapped (a replay rewrites every later result)."""
    lines = glossary.splitlines(True)
    expect_status(c.put(base(rescored) + "/glossary", "".join(lines[:len(lines) // 3]),
                        ctype="text/csv"), 200, "smaller glossary")
    expect_status(c.post(base(rescored) + "/rescore", timeout=600), 200, "rescore")
    t = tico19()[3]
    body = dict(seg(3), hypotheses={"base": t["translation"], "good": t["hypothesis"]})
    expect_status(c.put(base(replayed) + "/segments/s3", body), 200, "PUT s3")


def test_first_request_reads_records():
    """Each segment row keeps its ?ci= statistics (schema/013,
    server/live/ci_stats.c), so the first request after a start reads them
    instead of parsing and scoring every stored request. Its answer is the
    one of rows without records (a database written before, or records
    damaged): a server started on rows posted now (records), on the same rows
    with the records removed (parsed and scored as before), and with every
    record damaged in a different way all answer byte for byte the same, for
    a session with a glossary (term metrics) and extra references (chrF++'s
    own reference, TER's average length) and for one with a system missing
    from some segments. With records, the stored requests are not read: made
    unreadable, the first request still answers the same."""
    sqlite_only("it damages and restores the stored rows through sqlite3 in a dozen ways; the "
                "records are decoded by the same code on both backends, and every other ?ci= "
                "test here reads them on PostgreSQL too")
    import sqlite3
    from harness import Server
    glossary = open(TICO_GLOSSARY, encoding="utf-8").read()
    srv = Server("--request-timeout-ms", "0")
    try:
        c = srv.client()
        _two_sessions(c, glossary, "r1", "r2")
        for i in range(70):
            t = tico19()[i]
            body = seg(i)
            if i % 4 == 1:  # several references: sacreBLEU's best one per metric
                body["references"] = [t["hypothesis"], tico19()[i + 1]["translation"]]
            expect_status(c.post(base("r1") + "/segments", body), 201, "POST r1 %d" % i)
            b2 = seg(i)
            if i % 5 == 2:  # 'good' missing from this segment: adds 0
                b2["hypotheses"] = {"base": t["hypothesis"]}
            expect_status(c.post(base("r2") + "/segments", b2), 201, "POST r2 %d" % i)
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        con = sqlite3.connect(db)
        n = con.execute("SELECT count(*) FROM segments WHERE stats IS NOT NULL").fetchone()[0]
        eq(n, 140, "every POSTed row has its record")
        con.close()

        def first(sql=(), params=()):
            """The first answers of a fresh server after sql ran on the rows."""
            nonlocal srv
            con = sqlite3.connect(db)
            with con:
                for q in sql:
                    con.execute(q, params)
            con.close()
            srv = Server("--request-timeout-ms", "0", db=db)
            cl = srv.client()
            out = []
            for sid in ("r1", "r2"):
                r = cl.get(base(sid) + "/metrics?ci=0.95", timeout=600)
                expect_status(r, 200, "%s first ?ci" % sid)
                out.append(r.body)  # the whole answer, byte for byte
            cl.close()
            eq(srv.stop(), 0, "exit status")
            return out

        with_records = first()
        check(b'"term-EM"' in with_records[0], "the glossary's metrics are resampled")
        con = sqlite3.connect(db)
        saved = con.execute("SELECT sid, seq, stats, request FROM segments").fetchall()
        con.close()
        # the requests unreadable: only the records can answer
        eq(first(["UPDATE segments SET request = '{'"]), with_records,
           "records alone (requests unreadable)")

        def restore():
            con = sqlite3.connect(db)
            with con:
                con.executemany("UPDATE segments SET stats = ?, request = ? WHERE sid = ? AND seq = ?",
                                [(st, rq, sid, seq) for sid, seq, st, rq in saved])
            con.close()

        restore()
        eq(first(["UPDATE segments SET stats = NULL"]), with_records, "rows without records")
        damage = [
            "UPDATE segments SET stats = 'not base64!'",
            "UPDATE segments SET stats = substr(stats, 1, length(stats) - 8)",  # truncated
            # one character changed inside: the checksum rejects it
            "UPDATE segments SET stats = substr(stats, 1, 20) || "
            "CASE substr(stats, 21, 1) WHEN 'A' THEN 'B' ELSE 'A' END || substr(stats, 22)",
            "UPDATE segments SET stats = 'AgAAAAAAAAAAAAAA'",  # version 2, garbage
            "UPDATE segments SET stats = ''",
        ]
        for k, q in enumerate(damage):
            restore()
            eq(first([q]), with_records, "damaged records (%d) recomputed" % k)
        restore()
        # only some rows damaged: records and recomputed rows mixed
        eq(first(["UPDATE segments SET stats = 'AAAA' WHERE seq % 3 = 0"]), with_records,
           "some records damaged")
        restore()
        # a rescore with another glossary rewrites the results with new
        # records (test_rewritten_rows_keep_records): the old ones must not be
        # read; and an early segment changed: a replay rewrites every later result
        srv = Server("--request-timeout-ms", "0", db=db)
        cl = srv.client()
        _rescore_and_replay(cl, glossary, "r1", "r2")
        cl.close()
        eq(srv.stop(), 0, "exit status")
        rescored = first()
        check(rescored[0] != with_records[0], "the rescore changed the term numbers")
        check(rescored[1] != with_records[1], "the PUT changed the numbers")
        eq(rescored, first(["UPDATE segments SET stats = NULL"]),
           "after a rescore and a replay: the rewritten results, not stale records")
    finally:
        srv.kill()



def test_rewritten_rows_keep_records():
    """A rescore (the session copied with new results), a PUT and a DELETE
    (a replay: the later results staged in segment_results, schema/006) and
    an XLIFF import (the POST path) write each rewritten row's ?ci=
    statistics record with its new result (schema/013, and schema/014 for
    a staged result), on either backend: with every stored request made
    unreadable, the first ?ci= request after a start still answers byte for
    byte what it answers with the requests (only records can answer then;
    before this, every rewritten row had none and such a request failed),
    and with every record removed (the numbers recomputed from the requests
    and results) the same again: the records hold the rewritten results'
    statistics, not stale ones."""
    from harness import ROOT, Server, db_connect, db_query
    glossary = open(TICO_GLOSSARY, encoding="utf-8").read()
    srv = Server("--request-timeout-ms", "0")
    try:
        c = srv.client()
        _two_sessions(c, glossary, "rw1", "rw2")
        for i in range(70):
            for sid in ("rw1", "rw2"):
                expect_status(c.post(base(sid) + "/segments", seg(i)), 201,
                              "POST %s %d" % (sid, i))
        # a rescore with another glossary: every row rewritten
        # an early segment changed (every later result staged) and one
        # after the first checkpoint deleted (staged again, a second
        # generation over the first)
        _rescore_and_replay(c, glossary, "rw1", "rw2")
        expect_status(c.delete(base("rw2") + "/segments/s40"), 204, "DELETE s40")
        c.create_session(id="rw3")
        with open(os.path.join(ROOT, "tests", "data", "xliff", "omegat.xlf"), "rb") as f:
            expect_status(c.post(base("rw3") + "/import", f.read(),
                                 ctype="application/xliff+xml"), 200, "import")
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        # every row of the rescored session carries a record; the replay's
        # staged rows too
        eq(db_query(db, "SELECT count(*) FROM segments s JOIN sessions n ON n.sid = s.sid "
                        "WHERE n.id = 'rw1' AND s.stats IS NULL"), [(0,)], "rescored rows")
        eq(db_query(db, "SELECT count(*) FROM segment_results r JOIN sessions n ON "
                        "n.sid = r.sid WHERE n.id = 'rw2' AND r.gen = n.result_gen "
                        "AND r.stats IS NULL"), [(0,)], "staged rows of the replay")
        staged = db_query(db, "SELECT count(*) FROM segment_results r JOIN sessions n ON "
                              "n.sid = r.sid WHERE n.id = 'rw2' AND r.gen = n.result_gen")
        check(staged[0][0] >= 25, "the replay staged the later rows: %r" % staged)

        def first(sql=()):
            """The first answers of a fresh server after sql ran on the rows."""
            nonlocal srv
            con = db_connect(db)
            with con:
                for q in sql:
                    con.execute(q)
            con.close()
            srv = Server("--request-timeout-ms", "0", db=db)
            cl = srv.client()
            out = []
            for sid in ("rw1", "rw2", "rw3"):
                r = cl.get(base(sid) + "/metrics?ci=0.95", timeout=600)
                out.append((r.status, r.body))  # the whole answer, byte for byte
            cl.close()
            eq(srv.stop(), 0, "exit status")
            return out

        want = first()
        for sid, (status, _body) in zip(("rw1", "rw2", "rw3"), want):
            eq(status, 200, "%s first ?ci" % sid)
        check(b'"term-EM"' in want[0][1], "the glossary's metrics are resampled")
        eq(first(["CREATE TABLE saved_requests AS SELECT sid, seq, request FROM segments",
                  "UPDATE segments SET request = '{'"]), want,
           "records alone (requests unreadable)")
        eq(first(["UPDATE segments SET request = (SELECT v.request FROM saved_requests v "
                  "WHERE v.sid = segments.sid AND v.seq = segments.seq)",
                  "DROP TABLE saved_requests",
                  "UPDATE segments SET stats = NULL",
                  "UPDATE segment_results SET stats = NULL"]), want,
           "recomputed without records")
    finally:
        srv.kill()

def test_no_baseline_and_empty():
    fill("ci-c", 5)
    conf = ci("ci-c").json()["confidence"]
    eq(conf["baseline"], None, "no baseline_system")
    for row in conf["systems"]:
        eq(row["baseline"], False, "baseline flag")
        eq(row["R0"]["p_value"], None, "no p without a baseline")
    C.create_session(id="ci-empty")
    r = ci("ci-empty")
    expect_status(r, 200, "empty session")
    eq(r.json()["confidence"], None, "no segment: null")


def test_bad_level():
    fill("ci-d", 1)
    for bad in ("1.5", "0", "abc", "", "0.95x", "-0.5", "1e-1"):
        expect_problem(ci("ci-d", bad), 400, "bad-request", "ci=%r" % bad)
    expect_problem(ci("nope"), 404, "not-found", "unknown session")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))
