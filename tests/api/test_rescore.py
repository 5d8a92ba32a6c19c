#!/usr/bin/env python3
"""Black-box tests of POST /v1/sessions/{id}/rescore against a spawned
`adaptmon serve`: a glossary PUT followed by a rescore gives the totals of
a session that had the glossary from the start; readers see the old or
the new results during a rescore, never a mix; POSTs racing a rescore are
counted exactly once; a deleted session answers 404; the progress arrives
on the event stream.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only.
"""
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (TEST_PG, TICO_GLOSSARY, Server, base, check, db_connect,  # noqa: E402
                     db_query, eq, expect_problem, expect_status, run_tests, serve, shutdown,
                     tico19)
from test_sse import Stream  # noqa: E402

S = None
C = None
WAIT = 120.0


def setup():
    global S, C
    # threads: POSTs of a session wait for its rescore, other requests must not
    S, C = serve("--threads", "16", "--max-connections", "200")


def teardown():
    shutdown(S, C)


def segs(n, start=0):
    """n TICO-19 segments from start, two systems each."""
    t = tico19()
    out = []
    for i in range(start, start + n):
        s = t[i % len(t)]
        out.append({"id": "s%d" % i, "source": s["source"], "translation": s["translation"],
                    "hypotheses": {"fairseq": s["hypothesis"], "echo": s["source"]}})
    return out


def glossary_csv():
    with open(TICO_GLOSSARY, "rb") as f:
        return f.read()


def put_glossary(c, sid):
    r = c.put(base(sid) + "/glossary", glossary_csv(), ctype="text/csv")
    expect_status(r, 200, "PUT glossary of " + sid)
    return r.json()


def post_all(c, sid, items):
    for s in items:
        r = c.post(base(sid) + "/segments", s)
        expect_status(r, 201, "POST %s to %s" % (s["id"], sid))


def systems(c, sid):
    return c.jget(base(sid) + "/metrics")["systems"]


def all_segments(c, sid):
    out, after = [], 0
    while True:
        page = c.jget(base(sid) + "/segments?after=%d&limit=1000" % after)
        items = page["segments"] if isinstance(page, dict) else page
        if not items:
            return out
        out.extend(items)
        after = items[-1]["seq"]


def fresh_with_glossary(sid, items):
    """A session that had the glossary from the start, items posted in order."""
    C.create_session(id=sid)
    put_glossary(C, sid)
    post_all(C, sid, items)
    return systems(C, sid)


def requests_of(c, sid):
    """The stored request bodies of a session, in seq order."""
    out = []
    for row in all_segments(c, sid):
        req = dict(row["request"]) if "request" in row else None
        if req is None:
            req = c.jget(base(sid) + "/segments/" + row["id"])["request"]
        out.append(req)
    return out


def terms_instances(sys_totals):
    return sum(t["terms"]["instances"] for t in sys_totals.values())


# ---- tests ------------------------------------------------------------------------------

def test_rescore_after_glossary_equals_fresh_session():
    items = segs(200)
    C.create_session(id="rs-late")
    post_all(C, "rs-late", items)
    put_glossary(C, "rs-late")
    before = systems(C, "rs-late")
    eq(terms_instances(before), 0, "term instances before the rescore (glossary came late)")
    r = C.post(base("rs-late") + "/rescore")
    expect_status(r, 200, "POST rescore")
    s = r.json()
    eq(s["segments"], 200, "segments rescored")
    eq(s["glossary_version"], 1, "glossary version of the rescore")
    eq(s["metrics"], "/v1/sessions/rs-late/metrics", "metrics link")
    after = systems(C, "rs-late")
    check(terms_instances(after) > 0, "term scores appear after the rescore")
    eq(s["systems"], after, "the rescore's totals are the metrics'")
    want = fresh_with_glossary("rs-early", items)
    eq(after, want, "totals after rescore vs a session with the glossary from the start")
    a = {x["id"]: x for x in all_segments(C, "rs-late")}
    b = {x["id"]: x for x in all_segments(C, "rs-early")}
    eq(sorted(a), sorted(b), "segment ids")
    for sid in ("s0", "s57", "s199"):
        ra = C.jget(base("rs-late") + "/segments/" + sid)
        rb = C.jget(base("rs-early") + "/segments/" + sid)
        eq(ra["glossary_version"], 1, "glossary_version recorded on " + sid)
        eq(ra["scores"], rb["scores"], "scores of " + sid)
        eq(ra["totals"], rb["totals"], "running totals of " + sid)
    # the translator's choices were rebuilt too (the check endpoint reads them)
    probe = {"source": items[0]["source"], "hypothesis": items[0]["translation"]}
    ca = C.jpost(base("rs-late") + "/check", probe, status=200)
    cb = C.jpost(base("rs-early") + "/check", probe, status=200)
    eq(ca["terms"], cb["terms"], "check (translator choices) after rescore vs fresh")
    # a second rescore changes nothing but the version
    s2 = C.post(base("rs-late") + "/rescore").json()
    eq(s2["systems"], after, "rescore is idempotent")
    check(s2["version"] > s["version"], "version moves on")


def test_old_results_visible_until_commit():
    items = segs(971)
    C.create_session(id="rs-big")
    post_all(C, "rs-big", items)
    put_glossary(C, "rs-big")
    old = systems(C, "rs-big")
    seen, errors, aborted = [], [], []
    stop = threading.Event()
    window = {}

    def reader():
        c = S.client()
        try:
            while not stop.is_set():
                t0 = time.monotonic()
                m = c.get(base("rs-big") + "/metrics")
                try:
                    page = c.get(base("rs-big") + "/segments?limit=50")
                except (http.client.HTTPException, OSError):
                    # the timeline is read a page at a time; a rescore
                    # committed between two pages ends the answer with an
                    # error instead of mixing old and new results
                    aborted.append(t0)
                    c.close()
                    continue
                t1 = time.monotonic()
                if m.status != 200 or page.status != 200:
                    errors.append((m.status, page.status))
                    continue
                p = page.json()
                rows = p["segments"] if isinstance(p, dict) else p
                gvs = set(row["glossary_version"] for row in rows)
                seen.append((t0, t1, m.json()["systems"], gvs))
                if "t1" in window and t0 > window["t1"]:
                    break  # a reading begun after the rescore answered: done
        finally:
            c.close()

    th = threading.Thread(target=reader)
    th.start()
    try:
        # one reading of the old totals before the rescore is sent (a fixed
        # sleep left that to the scheduler on a loaded machine)
        deadline = time.monotonic() + WAIT
        while not seen and not errors and th.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        window["t0"] = time.monotonic()
        r = S.client().post(base("rs-big") + "/rescore", timeout=600)
        window["t1"] = time.monotonic()
    finally:
        if "t1" not in window:
            stop.set()
        th.join(WAIT)  # the reader stops after its first reading of the new results
        stop.set()
    expect_status(r, 200, "POST rescore")
    new = systems(C, "rs-big")
    check(new != old, "the rescore changed the totals")
    eq(errors, [], "reader errors")
    n_old = n_new = during = 0
    for t0, t1, got, gvs in seen:
        if got == old:
            n_old += 1
        elif got == new:
            n_new += 1
        else:
            raise AssertionError("a reader saw totals that are neither the old nor the new ones")
        check(gvs in ({0}, {1}), "one page of segments mixes glossary versions: %r" % gvs)
        if t0 > window["t0"] and t1 < window["t1"]:
            during += 1
    print("  %d readings: %d old, %d new, %d entirely during the rescore (%.2f s), %d cut"
          % (len(seen), n_old, n_new, during, window["t1"] - window["t0"], len(aborted)))
    check(n_old > 0 and n_new > 0, "readings of both the old and the new totals")


def test_posts_during_rescore_counted_once():
    base_items, extra = segs(400), segs(60, start=400)
    C.create_session(id="rs-race")
    post_all(C, "rs-race", base_items)
    put_glossary(C, "rs-race")
    result = {}

    def rescore():
        c = S.client()
        result["r"] = c.post(base("rs-race") + "/rescore")
        result["t1"] = time.monotonic()
        c.close()

    statuses, times = [], []

    def poster(part):
        c = S.client()
        for s in part:
            t = time.monotonic()
            r = c.post(base("rs-race") + "/segments", s)
            statuses.append(r.status)
            times.append(t)
        c.close()

    th = threading.Thread(target=rescore)
    th.start()
    time.sleep(0.05)
    posters = [threading.Thread(target=poster, args=(extra[i::4],)) for i in range(4)]
    for p in posters:
        p.start()
    for p in posters:
        p.join(WAIT)
    th.join(WAIT)
    expect_status(result["r"], 200, "POST rescore")
    eq(sorted(set(statuses)), [201], "statuses of the POSTs racing the rescore")
    print("  %d of %d POSTs were sent before the rescore answered"
          % (sum(1 for t in times if t < result["t1"]), len(times)))
    rows = all_segments(C, "rs-race")
    eq([x["seq"] for x in rows], list(range(1, 461)), "seqs: every segment once")
    eq(sorted(x["id"] for x in rows), sorted(s["id"] for s in base_items + extra), "ids")
    m = C.jget(base("rs-race") + "/metrics")
    eq(m["segments"], 460, "segments in the metrics")
    for name, t in m["systems"].items():
        eq(t["segments"], 460, "segments counted in the totals of " + name)
    # the same segments, in the same order, into a session that had the glossary first
    by_id = {s["id"]: s for s in base_items + extra}
    want = fresh_with_glossary("rs-race-fresh", [by_id[x["id"]] for x in rows])
    eq(m["systems"], want, "totals vs a fresh session with the glossary from the start")


def test_rescore_of_deleted_or_unknown_session_is_404():
    C.create_session(id="rs-del")
    post_all(C, "rs-del", segs(3))
    expect_status(C.delete(base("rs-del")), 204, "DELETE session")
    expect_problem(C.post(base("rs-del") + "/rescore"), 404, "not-found", "rescore of deleted")
    expect_problem(C.post(base("rs-nobody") + "/rescore"), 404, "not-found", "rescore unknown")
    # re-created: rescores the new incarnation only
    C.create_session(id="rs-del")
    post_all(C, "rs-del", segs(2, start=10))
    s = C.post(base("rs-del") + "/rescore").json()
    eq(s["segments"], 2, "segments of the re-created session")


def test_rescore_progress_on_event_stream():
    C.create_session(id="rs-sse")
    post_all(C, "rs-sse", segs(100))
    put_glossary(C, "rs-sse")
    st = Stream(S.port, base("rs-sse") + "/events")
    try:
        with st.cond:
            st.cond.wait_for(lambda: st.status is not None or st.eof, WAIT)
        eq(st.status, 200, "events status")
        time.sleep(0.2)  # registered before the rescore starts
        expect_status(C.post(base("rs-sse") + "/rescore"), 200, "POST rescore")

        def done():
            return any(e.get("event") == "rescore" and json.loads(e["data"])["state"] ==
                       "committed" for e in st.events)
        with st.cond:
            st.cond.wait_for(lambda: done() or st.eof, WAIT)
        evs = [json.loads(e["data"]) for e in st.events if e.get("event") == "rescore"]
    finally:
        st.close()
    states = [e["state"] for e in evs]
    eq(states[0], "started", "first rescore event")
    eq(states[-1], "committed", "last rescore event")
    check(states.count("running") >= 5, "progress events: %r" % states)
    dones = [e["done"] for e in evs]
    eq(dones, sorted(dones), "done never goes back")
    eq(set(e["total"] for e in evs), {100}, "total")
    eq(evs[-1]["done"], 100, "final done")
    eq(set(e["glossary_version"] for e in evs), {1}, "glossary version in the events")


def _timeless(text):
    """An answer's text with its clock readings (…_ms, …_at) and the
    session's version and rewrite count zeroed: a rescore stamps its own
    time and is a new version; nothing else may differ."""
    return re.sub(r'"([a-z_]*_(?:ms|at)|version|rewrites)":("[^"]*"|-?[0-9]+)', r'"\1":0', text)


def test_rescore_with_unchanged_glossary_changes_no_number():
    """A rescore that changes nothing (same glossary, same options) leaves
    every answer as it was, byte for byte but for the clock: the full
    metrics, every segment (scores, running totals) and the JSON export,
    on a session with a glossary, a baseline (pair totals), three systems,
    translators, an edited and a deleted segment. The rescore writes its
    results through its own code (rescore.c), the POSTs and the edit's
    replay through theirs: this pins them to each other."""
    items = segs(61)
    for i, s in enumerate(items):
        s["hypotheses"]["good"] = s["translation"]
        if i % 3:
            s["translator"] = "t%d" % (i % 2)
    # texts with escapes and non-ASCII (the rescore reads stored requests as
    # text: decoded as jansson decodes them), a request with references and
    # one with metadata (references: the rescore parses that one whole)
    items[5]["translation"] += ' "cité"\tà\\ la\nligne \u00e9\u2014\U0001F600'
    items[5]["hypotheses"]["fairseq"] += " \u0001 ctl"
    items[9]["references"] = [items[10]["translation"]]
    items[12]["metadata"] = {"doc": "d1", "n": [1, 2]}
    items[14]["source"] = None
    for sid in ("rs-same", "rs-twin"):  # rs-twin is never rescored
        C.create_session(id=sid, options={"baseline_system": "fairseq"})
        put_glossary(C, sid)
        post_all(C, sid, items[:60])
        edited = dict(items[7], translation=items[8]["translation"])
        expect_status(C.put(base(sid) + "/segments/s7", edited), 200, "PUT s7")
        expect_status(C.delete(base(sid) + "/segments/s31"), 204, "DELETE s31")
    sid = "rs-same"
    words = sorted({w["word"] for row in all_segments(C, sid) for w in row["scores"]["words"]})
    check(len(words) > 100, "%d distinct words in the history" % len(words))
    paths = ["/metrics", "/metrics?by=translator", "/segments?limit=1000", "/export?format=json",
             "/export?format=csv", "/segments/s7", "/segments/s59"]

    def answers():
        out = {}
        for p in paths:
            r = C.get(base(sid) + p)
            expect_status(r, 200, "GET " + p)
            out[p] = _timeless(r.body.decode("utf-8"))
        for w in words:  # the history, word by word: occurrences and seqs
            r = C.get(base(sid) + "/vocabulary/" + urllib.parse.quote(w, safe=""))
            expect_status(r, 200, "GET vocabulary/" + w)
            out["/vocabulary/" + w] = _timeless(r.body.decode("utf-8"))
        return out
    before = answers()
    check(terms_instances(systems(C, sid)) > 0, "the glossary is used")
    r = C.post(base(sid) + "/rescore")
    expect_status(r, 200, "POST rescore")
    eq(r.json()["segments"], 59, "segments rescored")
    after = answers()
    eq(sorted(before), sorted(after), "answers compared")
    for p in sorted(before):
        if before[p] != after[p]:
            a, b = before[p], after[p]
            i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            raise AssertionError("GET %s differs after the rescore at byte %d: %r vs %r"
                                 % (p, i, a[max(0, i - 80):i + 80], b[max(0, i - 80):i + 80]))
    # the next POST is scored on the rescored history as on the twin's
    ra = C.post(base(sid) + "/segments", items[60])
    rb = C.post(base("rs-twin") + "/segments", items[60])
    expect_status(ra, 201, "POST after the rescore")
    expect_status(rb, 201, "POST to the twin")
    for k in ("scores", "totals", "seq"):
        eq(ra.json()[k], rb.json()[k], "the next POST's %s vs the twin's" % k)


def _answers(c, sid, paths, ok=(200,)):
    """The status and timeless text of GET base(sid) + p for each p (a
    status in ok), the session's id, incarnation (a counter of the
    database) and request id left out."""
    out = {}
    for p in paths:
        r = c.get(base(sid) + p)
        expect_status(r, ok, "GET %s%s" % (sid, p))
        text = _timeless(r.body.decode("utf-8").replace(sid, "SID"))
        text = re.sub(r'"request_id":"[^"]*"', '"request_id":""', text)
        out[p] = "%d %s" % (r.status, re.sub(r'"incarnation":[0-9]+', '"incarnation":0', text))
    return out


def _same_answers(a, b, what):
    eq(sorted(a), sorted(b), "answers compared (%s)" % what)
    for p in sorted(a):
        if a[p] != b[p]:
            x, y = a[p], b[p]
            i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            raise AssertionError("GET %s differs (%s) at byte %d: %r vs %r"
                                 % (p, what, i, x[max(0, i - 80):i + 80], y[max(0, i - 80):i + 80]))


def test_rescore_stages_results_and_later_writes_use_its_glossary():
    """The rescore stages its results as a new result generation and
    switches them in (schema/006, 015): no segment row is copied, the
    session keeps its sid and its rows, and its segments count as scored
    with the rescore's glossary version. So, on a session whose glossary
    came after 60 segments, rescored, then 10 more POSTs, a PUT of seq 41
    (a replay from the checkpoint the rescore staged at seq 32, with the
    glossary version of each segment) and a DELETE: every answer — metrics,
    segments, JSON export, the curve's glossary changes — equals a twin
    that had the glossary from the start."""
    items = segs(72)
    sid, twin = "rg-late", "rg-early"
    C.create_session(id=sid)
    post_all(C, sid, items[:60])
    put_glossary(C, sid)
    before = db_query(S, "SELECT sid FROM sessions WHERE id = ?", (sid,))
    rows = db_query(S, "SELECT count(*) FROM segments s JOIN sessions USING (sid) WHERE id = ?",
                    (sid,))
    expect_status(C.post(base(sid) + "/rescore"), 200, "POST rescore")
    eq(db_query(S, "SELECT sid FROM sessions WHERE id = ?", (sid,)), before,
       "the session keeps its sid (no copy swapped in)")
    eq(db_query(S, "SELECT count(*) FROM sessions WHERE id LIKE '~%'"), [(0,)],
       "no hidden session")
    eq(db_query(S, "SELECT count(*) FROM segments s JOIN sessions USING (sid) WHERE id = ?",
                (sid,)), rows, "segment rows")
    eq(db_query(S, "SELECT count(*), count(r.stats) FROM segment_results r JOIN sessions s "
                   "USING (sid) WHERE s.id = ? AND r.gen = s.result_gen", (sid,)), [(60, 60)],
       "60 staged results of the current generation, each with its ?ci= record")
    eq(db_query(S, "SELECT gv_floor FROM sessions WHERE id = ?", (sid,)), [(1,)],
       "the rescore's glossary version")
    C.create_session(id=twin)
    put_glossary(C, twin)
    post_all(C, twin, items[:60])
    for s_ in (sid, twin):
        post_all(C, s_, items[60:70])
        edited = dict(items[40], translation=items[41]["translation"])
        expect_status(C.put(base(s_) + "/segments/s40", edited), 200, "PUT s40 of " + s_)
        expect_status(C.delete(base(s_) + "/segments/s50"), 204, "DELETE s50 of " + s_)
    paths = ["/metrics", "/segments?limit=1000", "/export?format=json", "/curve?window=10",
             "/segments/s40", "/segments/s69"]
    _same_answers(_answers(C, sid, paths), _answers(C, twin, paths),
                  "rescored, then written, vs the twin")
    eq(C.jget(base(sid) + "/curve?window=10")["glossary_changes"], [],
       "no glossary change after the rescore")
    # a second rescore rewrites the spare generation in place: two rows a segment at most
    expect_status(C.post(base(sid) + "/rescore"), 200, "second rescore")
    expect_status(C.post(base(sid) + "/rescore"), 200, "third rescore")
    eq(db_query(S, "SELECT max(n) FROM (SELECT count(*) AS n FROM segment_results r JOIN "
                   "sessions s USING (sid) WHERE s.id = ? GROUP BY r.seq) t", (sid,)), [(2,)],
       "at most two staged rows a segment")
    _same_answers(_answers(C, sid, paths), _answers(C, twin, paths),
                  "after two more rescores vs the twin")


def test_kill_during_rescore_leaves_old_or_new_state():
    """SIGKILL at several points of a rescore (scoring, staging, switch),
    then a restart: every answer equals the state before the rescore or the
    one after it, byte for byte but for the clock; what a killed rescore
    staged stays invisible, and the next rescore (which settles it) gives
    the state after. The kill points are fractions of the time a full
    rescore of a copy took. SQLite only (the database file is copied)."""
    if TEST_PG:
        print("# skipped: copies a SQLite database file")
        return
    import shutil
    srv = Server()
    c = srv.client()
    sid = "rk"
    try:
        c.create_session(id=sid)
        post_all(c, sid, segs(400))
        put_glossary(c, sid)
    finally:
        shutdown(srv, c)
    tmpl = srv.db + ".tmpl"
    shutil.copyfile(srv.db, tmpl)
    paths = ["/metrics", "/segments?limit=1000", "/export?format=json", "/curve?window=50",
             "/segments/s123"]

    def copy(i):
        path = os.path.join(srv.dir, "k%d.db" % i)
        shutil.copyfile(tmpl, path)
        return path

    # the states before and after, and how long the rescore takes
    s0 = Server(db=copy(0))
    c0 = s0.client()
    try:
        old = _answers(c0, sid, paths)
        t0 = time.monotonic()
        expect_status(c0.post(base(sid) + "/rescore"), 200, "the full rescore")
        took = time.monotonic() - t0
        new = _answers(c0, sid, paths)
    finally:
        shutdown(s0, c0)
    check(old != new, "the rescore changes the answers (the glossary came late)")
    seen = []
    for i, frac in enumerate((0.2, 0.5, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 5.0), 1):
        s1 = Server(db=copy(i))
        sock = http.client.HTTPConnection("127.0.0.1", s1.port, timeout=60)
        sock.request("POST", base(sid) + "/rescore", body=b"",
                     headers={"Content-Length": "0"})
        time.sleep(frac * took)
        s1.kill()
        sock.close()
        s1.start()
        c1 = s1.client()
        try:
            got = _answers(c1, sid, paths)
            state = "old" if got == old else "new" if got == new else None
            if state is None:
                _same_answers(got, old, "after a kill at %.2f of the rescore" % frac)
            seen.append(state)
            expect_status(c1.post(base(sid) + "/rescore"), 200, "a rescore after the restart")
            _same_answers(_answers(c1, sid, paths), new, "the rescore after the restart")
            eq(db_query(s1, "SELECT count(*) FROM segment_results r JOIN sessions s USING (sid) "
                            "WHERE r.gen > s.result_gen"), [(0,)],
               "nothing staged left above the current generation")
        finally:
            shutdown(s1, c1)
    print("# rescore %.2f s; states after the kills: %s" % (took, ", ".join(seen)))
    check("new" in seen, "a kill after the rescore's commit keeps the new state")


def test_rescore_rewrites_a_history_that_differs():
    """The rescore leaves the history's rows alone when the recomputed
    history equals the stored one, occurrence for occurrence, and repairs
    the difference (in its switch) when it does not. Here the stored history of a
    stopped server is damaged (an occurrence removed, one moved to another
    seq, a word added, the pending words of the last rows emptied): the
    rescore puts back the history a twin posted the same segments has, word
    by word, and the next POST is scored on it as on the twin. The server
    settles every 32nd seq (--settle-every; the default 256 would leave
    all 44 segments' words pending): the history has settled rows to
    damage and pending words after them."""
    srv = Server("--settle-every", "32")
    c = srv.client()
    items = segs(45)
    try:
        for s_ in ("qq-dmg", "qq-twin"):
            c.create_session(id=s_)
            post_all(c, s_, items[:44])
        words = sorted({w["word"] for row in all_segments(c, "qq-dmg")
                        for w in row["scores"]["words"]})
    finally:
        shutdown(srv, c)
    con = db_connect(srv)
    with con:
        sid = con.execute("SELECT sid FROM sessions WHERE id = 'qq-dmg'").fetchone()[0]
        w1, q1 = con.execute("SELECT word, max(seq) FROM occurrences WHERE sid = ? "
                             "GROUP BY word ORDER BY word LIMIT 1", (sid,)).fetchone()
        con.execute("DELETE FROM occurrences WHERE sid = ? AND word = ? AND seq = ?",
                    (sid, w1, q1))
        con.execute("UPDATE vocab SET occ = occ - 1 WHERE sid = ? AND word = ?", (sid, w1))
        w2, q2 = con.execute("SELECT word, min(seq) FROM occurrences WHERE sid = ? AND word > ? "
                             "GROUP BY word ORDER BY word LIMIT 1", (sid, w1)).fetchone()
        con.execute("UPDATE occurrences SET seq = 44 WHERE sid = ? AND word = ? AND seq = ?",
                    (sid, w2, q2))
        con.execute("INSERT INTO vocab (sid, word, occ, first_seq, last_seq) "
                    "VALUES (?, 'zzzbogus', 1, 3, 3)", (sid,))
        con.execute("INSERT INTO occurrences (sid, word, seq) VALUES (?, 'zzzbogus', 3)", (sid,))
        con.execute("UPDATE segments SET words = '[]' WHERE sid = ? AND seq > "
                    "(SELECT settled FROM sessions WHERE sid = ?)", (sid, sid))
    con.close()
    srv.start()
    c = srv.client()
    try:
        paths = ["/vocabulary/" + urllib.parse.quote(w, safe="") for w in words + ["zzzbogus"]]
        damaged = _answers(c, "qq-dmg", paths, (200, 404))
        twin = _answers(c, "qq-twin", paths, (200, 404))
        check(damaged != twin, "the damaged history answers otherwise than the twin's")
        expect_status(c.post(base("qq-dmg") + "/rescore"), 200, "POST rescore")
        _same_answers(_answers(c, "qq-dmg", paths, (200, 404)), twin, "the history after the rescore")
        eq(db_query(srv, "SELECT count(*) FROM segments WHERE sid = ? AND seq > "
                         "(SELECT settled FROM sessions WHERE sid = ?)", (sid, sid)), [(0,)],
           "every word of the rewritten history is settled")
        eq(db_query(srv, "SELECT count(*) FROM vocab v WHERE v.sid = ? AND (v.occ <> (SELECT "
                         "count(*) FROM occurrences o WHERE o.sid = v.sid AND o.word = v.word) "
                         "OR v.first_seq <> (SELECT min(seq) FROM occurrences o WHERE o.sid = "
                         "v.sid AND o.word = v.word) OR v.last_seq <> (SELECT max(seq) FROM "
                         "occurrences o WHERE o.sid = v.sid AND o.word = v.word))", (sid,)), [(0,)],
           "every vocab row of the repaired history agrees with its occurrences")
        eq(db_query(srv, "SELECT count(DISTINCT word) FROM occurrences o WHERE o.sid = ? AND NOT "
                         "EXISTS (SELECT 1 FROM vocab v WHERE v.sid = o.sid AND v.word = o.word)",
                    (sid,)), [(0,)], "every occurrence's word has its vocab row")
        ra = c.post(base("qq-dmg") + "/segments", items[44])
        rb = c.post(base("qq-twin") + "/segments", items[44])
        for k in ("scores", "totals", "seq"):
            eq(ra.json()[k], rb.json()[k], "the next POST's %s vs the twin's" % k)
    finally:
        shutdown(srv, c)


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
