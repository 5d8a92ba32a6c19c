#!/usr/bin/env python3
"""GET /v1/sessions/{id}/curve — the dashboard's curves computed on the
server (running and moving-window values per system, downsampled).

Every expectation is recomputed here from the timeline (GET …/segments):
the running values from the stored totals, the moving-window values from
the per-segment counts. Python standard library only.

Prints "ok NAME" / "FAILED NAME" and ends with "N passed, N failed".
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (TICO_GLOSSARY, Server, check, db_query, db_restyle_json, eq,  # noqa: E402
                     expect_problem, expect_status, pg_run, run_tests, serve, shutdown, tico19)

S = None
C = None
N = 40


def setup():
    global S, C
    S, C = serve()
    # two systems and a glossary: "adapt" gets the confirmed translation on
    # two segments of three, "base" the MT output
    C.create_session(id="cv", source_lang="en", target_lang="fr",
                     options={"baseline_system": "base"})
    with open(TICO_GLOSSARY, encoding="utf-8") as f:
        expect_status(C.put("/v1/sessions/cv/glossary", f.read(), ctype="text/csv"), 200, "glossary")
    for i, s in enumerate(tico19()[:N]):
        r = C.post("/v1/sessions/cv/segments",
                   {"id": "c%d" % i, "source": s["source"], "translation": s["translation"],
                    "hypotheses": {"base": s["hypothesis"],
                                   "adapt": s["translation"] if i % 3 else s["hypothesis"]}})
        expect_status(r, 201, "POST c%d" % i)
    # no glossary, one system
    C.create_session(id="plain", source_lang="en", target_lang="fr")
    for i, s in enumerate(tico19()[:5]):
        expect_status(C.post("/v1/sessions/plain/segments",
                             {"id": "p%d" % i, "source": s["source"], "translation": s["translation"],
                              "hypothesis": s["hypothesis"]}), 201, "POST p%d" % i)
    C.create_session(id="empty", source_lang="en", target_lang="fr")


def teardown():
    shutdown(S, C)


def timeline(sid):
    out, after = [], 0
    while True:
        d = C.jget("/v1/sessions/%s/segments?after=%d&limit=1000" % (sid, after))
        out += d["segments"]
        if d["next"] is None:
            return out
        after = d["next"]


def close(a, b, what):
    if a is None or b is None:
        eq(a, b, what)
    else:
        check(abs(a - b) < 1e-12, "%s: %r vs %r" % (what, a, b))


def score(o):
    return o["score"] if isinstance(o, dict) else o


def test_running_curve_equals_the_stored_totals():
    tl = timeline("cv")
    d = C.jget("/v1/sessions/cv/curve")
    eq(d["segments"], N, "segments")
    eq(d["window"], 0, "window")
    eq(d["x"], list(range(1, N + 1)), "x: every segment while there are few")
    eq(sorted(d["systems"]), ["adapt", "base"], "systems")
    for sys_ in ("adapt", "base"):
        cv = d["systems"][sys_]
        for k, it in enumerate(tl):
            t = it["totals"][sys_]
            for key, exp in (("r0", score(t["r0"])), ("r1", score(t["r1"])), ("r01", score(t["r01"])),
                             ("term_exact_match", t["terms"]["exact_match"]),
                             ("window_overlap", t["terms"]["window_overlap"]["2"]["score"]),
                             ("one_minus_term", t["one_minus_term"])):
                close(cv[key][k], exp, "%s %s at %d" % (sys_, key, k + 1))


def test_moving_window_from_counts_and_clamped():
    tl = timeline("cv")
    W = 7
    d = C.jget("/v1/sessions/cv/curve?window=%d&wo=3" % W)
    eq(d["window"], W, "window")
    eq(d["window_overlap_width"], 3, "window-overlap width")
    seen_wo = 0
    for sys_ in ("adapt", "base"):
        cv = d["systems"][sys_]
        for k in range(len(tl)):
            win = [it["scores"]["systems"][sys_] for it in tl[max(0, k + 1 - W):k + 1]]
            for key in ("r0", "r1", "r01"):
                h = sum(s[key]["hits"] for s in win)
                t = sum(s[key]["total"] for s in win)
                close(cv[key][k], h / t if t else None, "%s window %s at %d" % (sys_, key, k + 1))
            inst = sum(s["terms"]["window_overlap"]["3"]["instances"] for s in win)
            num = sum((s["terms"]["window_overlap"]["3"]["score"] or 0)
                      * s["terms"]["window_overlap"]["3"]["instances"] for s in win)
            exp = min(1.0, num / inst) if inst else None
            close(cv["window_overlap"][k], exp, "%s window overlap at %d" % (sys_, k + 1))
            if exp is not None:
                seen_wo += 1
            for key in ("r0", "r1", "r01", "term_exact_match", "window_overlap"):
                v = cv[key][k]
                check(v is None or 0.0 <= v <= 1.0, "%s %s at %d outside [0, 1]: %r" % (sys_, key, k + 1, v))
    check(seen_wo > 0, "the glossary produced no window-overlap value")


def test_moving_window_over_a_deleted_segment_equals_a_fresh_session():
    """A DELETE leaves its seq unused (a gap): the moving window still spans
    the last W stored segments, as in a fresh session of the remaining log."""
    segs = tico19()[:12]
    for sid in ("gap", "gap-ref"):
        C.create_session(id=sid, source_lang="en", target_lang="fr")
    for i, s in enumerate(segs):
        body = {"id": "g%d" % i, "source": s["source"], "translation": s["translation"],
                "hypothesis": s["hypothesis"]}
        expect_status(C.post("/v1/sessions/gap/segments", body), 201, "POST g%d" % i)
        if i != 5:
            expect_status(C.post("/v1/sessions/gap-ref/segments", body), 201, "POST ref g%d" % i)
    expect_status(C.delete("/v1/sessions/gap/segments/g5"), 204, "DELETE g5")
    a = C.jget("/v1/sessions/gap/curve?window=4")
    b = C.jget("/v1/sessions/gap-ref/curve?window=4")
    eq([a["segments"], a["last_seq"], b["last_seq"]], [11, 12, 11], "count and highest seq")
    eq(a["x"], [k for k in range(1, 13) if k != 6], "x: the stored seqs, 6 a gap")
    eq(a["systems"], b["systems"], "windowed values vs a fresh session of the remaining log")


def test_downsampled_keeps_first_and_last():
    d = C.jget("/v1/sessions/cv/curve?points=9")
    eq(d["points"], 9, "points")
    eq(d["x"][0], 1, "first sample")
    eq(d["x"][-1], N, "last sample")
    check(all(a < b for a, b in zip(d["x"], d["x"][1:])), "x strictly increasing: %r" % d["x"])
    full = C.jget("/v1/sessions/cv/curve")
    for sys_ in ("adapt", "base"):
        eq(len(d["systems"][sys_]["r1"]), 9, "length of a downsampled series")
        for k, x in enumerate(d["x"]):
            eq(d["systems"][sys_]["r1"][k], full["systems"][sys_]["r1"][x - 1], "sample at %d" % x)


def test_downsampled_moving_window_reads_only_what_it_needs():
    # points × window small against the timeline: the server reads only the
    # windows before the samples; large: one pass. Both equal the full curve.
    for pts, w in ((5, 3), (9, 3), (4, 2)):
        d = C.jget("/v1/sessions/cv/curve?points=%d&window=%d" % (pts, w))
        full = C.jget("/v1/sessions/cv/curve?window=%d" % w)
        eq(len(d["x"]), pts, "points")
        for sys_ in ("adapt", "base"):
            for key in ("r0", "r1", "r01", "term_exact_match", "window_overlap", "one_minus_term"):
                for k, x in enumerate(d["x"]):
                    close(d["systems"][sys_][key][k], full["systems"][sys_][key][x - 1],
                          "points=%d window=%d %s %s at %d" % (pts, w, sys_, key, x))


def test_etag_differs_for_a_recreated_session():
    s = tico19()[0]
    seg = {"id": "r1", "source": s["source"], "translation": s["translation"], "hypothesis": s["hypothesis"]}
    C.create_session(id="again", source_lang="en", target_lang="fr")
    expect_status(C.post("/v1/sessions/again/segments", seg), 201, "POST")
    et = C.get("/v1/sessions/again/curve").header("ETag")
    expect_status(C.delete("/v1/sessions/again"), 204, "DELETE")
    C.create_session(id="again", source_lang="en", target_lang="fr", options={"windows": [4]})
    expect_status(C.post("/v1/sessions/again/segments", seg), 201, "POST")
    r = C.get("/v1/sessions/again/curve", headers={"If-None-Match": et})
    expect_status(r, 200, "the old ETag of a deleted and re-created session")
    eq(r.json()["window_overlap_width"], 4, "the re-created session's options")


def test_no_glossary_empty_and_missing_sessions():
    d = C.jget("/v1/sessions/plain/curve?window=3")
    eq(list(d["systems"]), ["default"], "one system")
    eq(d["systems"]["default"]["term_exact_match"], [None] * 5, "no glossary: no term values")
    check(all(v is not None for v in d["systems"]["default"]["r0"]), "R0 defined on every segment")
    d = C.jget("/v1/sessions/empty/curve")
    eq((d["segments"], d["x"], d["systems"]), (0, [], {}), "empty session")
    expect_problem(C.get("/v1/sessions/nothing/curve"), 404, "not-found", "unknown session")


def test_glossary_changes_from_the_stored_versions():
    """Where the glossary version changed, from the versions the segments
    were scored with (no page has to watch the change): a glossary set
    after segment 3, replaced after 5, removed after 7; a replayed segment
    keeps its version; not downsampled."""
    with open(TICO_GLOSSARY, encoding="utf-8") as f:
        gloss = f.read()
    C.create_session(id="gv", source_lang="en", target_lang="fr")
    segs = tico19()[:9]

    def post(i):
        s = segs[i]
        r = C.post("/v1/sessions/gv/segments", {"id": "g%d" % i, "source": s["source"],
                                               "translation": s["translation"], "hypothesis": s["hypothesis"]})
        expect_status(r, 201, "POST g%d" % i)
        return r.json()

    for i in range(3):
        post(i)
    eq(C.jget("/v1/sessions/gv/curve")["glossary_changes"], [], "no change yet")
    expect_status(C.put("/v1/sessions/gv/glossary", gloss, ctype="text/csv"), 200, "glossary v1")
    post(3)
    post(4)
    expect_status(C.put("/v1/sessions/gv/glossary", gloss, ctype="text/csv"), 200, "glossary v2")
    post(5)
    res = post(6)
    eq(res["glossary_version"], 2, "segment 7 scored with version 2")
    expect_status(C.delete("/v1/sessions/gv/glossary"), 204, "glossary removed (v3)")
    post(7)
    post(8)
    want = [{"seq": 4, "version": 1}, {"seq": 6, "version": 2}, {"seq": 8, "version": 3}]
    eq(C.jget("/v1/sessions/gv/curve")["glossary_changes"], want, "changes")
    eq(C.jget("/v1/sessions/gv/curve?points=2&window=3")["glossary_changes"], want,
       "changes are not downsampled")
    # a replay (PUT of segment 4) scores it with its own version again
    s = segs[3]
    expect_status(C.put("/v1/sessions/gv/segments/g3", {"source": s["source"], "translation": s["hypothesis"],
                                                      "hypothesis": s["hypothesis"]}), 200, "PUT g3")
    eq(C.jget("/v1/sessions/gv/curve")["glossary_changes"], want, "changes after a replay")
    eq(C.jget("/v1/sessions/cv/curve")["glossary_changes"], [], "a glossary from the first segment on")
    eq(C.jget("/v1/sessions/empty/curve")["glossary_changes"], [], "empty session")


def test_bad_parameters_are_400():
    for q in ("points=1", "points=abc", "points=100000", "window=-1", "window=1001", "wo=9", "wo=x"):
        expect_problem(C.get("/v1/sessions/cv/curve?" + q), 400, "bad-request", q)


def test_etag_and_304():
    r = C.get("/v1/sessions/cv/curve?points=50")
    expect_status(r, 200, "GET curve")
    et = r.header("ETag")
    check(et, "no ETag")
    expect_status(C.get("/v1/sessions/cv/curve?points=50", headers={"If-None-Match": et}), 304, "304")
    other = C.get("/v1/sessions/cv/curve?points=50&window=10").header("ETag")
    check(other != et, "a different window has a different ETag")
    # a new segment (in a copy of the session, the other tests read "cv")
    C.create_session(id="cv2", source_lang="en", target_lang="fr")
    for i, s in enumerate(tico19()[:4]):
        hyp = {"base": s["hypothesis"]} if i == 3 else {"base": s["hypothesis"], "adapt": s["translation"]}
        expect_status(C.post("/v1/sessions/cv2/segments", {"id": "e%d" % i, "source": s["source"],
                                                          "translation": s["translation"],
                                                          "hypotheses": hyp}), 201, "POST")
        r = C.get("/v1/sessions/cv2/curve?points=50", headers={"If-None-Match": et})
        expect_status(r, 200, "after a new segment")
        et = r.header("ETag")
        expect_status(C.get("/v1/sessions/cv2/curve?points=50", headers={"If-None-Match": et}), 304, "304")
    expect_status(r, 200, "after a new segment")
    d = json.loads(r.body)
    eq(d["x"][-1], 4, "the new segment is the last point")
    # "adapt" had no output for the last segment: its running values carry on
    eq(d["systems"]["adapt"]["r0"][-1], d["systems"]["adapt"]["r0"][-2], "adapt unchanged")


# ---- GET …/plot.svg: the same data as a figure -------------------------------

SVG = "{http://www.w3.org/2000/svg}"
KEYS = ("r0", "r1", "r01", "term_exact_match", "window_overlap", "one_minus_term")


def svg_series(body):
    """{(system, metric): (xs, ys)} of a plot.svg body, parsed as XML."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(body)
    eq(root.tag, SVG + "svg", "root element")
    out = {}

    def nums(v):
        return [None if t == "null" else float(t) for t in v.split()]
    for g in root.iter(SVG + "g"):
        if g.get("class") != "series":
            continue
        key = (g.get("data-system"), g.get("data-metric"))
        check(key not in out, "one series per system and metric: %r" % (key,))
        line = g.find(SVG + "polyline")
        check(line is not None, "a polyline in %r" % (key,))
        ys = nums(g.get("data-y"))
        eq(len(line.get("points").split()), sum(1 for y in ys if y is not None),
           "polyline points = finite values of %r" % (key,))
        out[key] = (nums(g.get("data-x")), ys)
    return root, out


def test_plot_svg_is_the_curve_data():
    for q in ("", "?window=7&wo=3", "?points=9"):
        r = C.get("/v1/sessions/cv/plot.svg" + q)
        expect_status(r, 200, "plot.svg" + q)
        eq(r.content_type, "image/svg+xml", "content type")
        root, series = svg_series(r.body)
        d = C.jget("/v1/sessions/cv/curve" + q)
        eq(sorted(series), sorted((s, k) for s in d["systems"] for k in KEYS),
           "one series per system and metric" + q)
        for (sys_, key), (xs, ys) in series.items():
            eq(xs, [float(x) for x in d["x"]], "x of %s %s%s" % (sys_, key, q))
            eq(len(ys), d["points"], "points of %s %s%s" % (sys_, key, q))
            for a, b in zip(ys, d["systems"][sys_][key]):
                close(a, b, "%s %s%s" % (sys_, key, q))
        # self-contained, readable in print
        text = r.text
        for bad in ("<script", "href=", "@import", "url("):
            check(bad not in text, "no external reference or script: %s" % bad)
        check(root.find(SVG + "title") is not None, "a title")
        legend = [g for g in root.iter(SVG + "g") if g.get("class") == "legend"]
        eq(len(legend), 2, "a legend entry per system")
        dashes = {g.find(SVG + "line").get("stroke-dasharray") for g in legend}
        eq(len(dashes), 2, "a dash pattern per system")
        shapes = {g[1].tag for g in legend}
        eq(len(shapes), 2, "a marker shape per system")


def wilson(h, t):
    """Wilson score interval at 95%, clipped into [0, 1]; (None, None) without words."""
    if not t:
        return None, None
    z = 1.959963984540054
    p = h / t
    mid = (p + z * z / (2 * t)) / (1 + z * z / t)
    half = z * (p * (1 - p) / t + z * z / (4 * t * t)) ** 0.5 / (1 + z * z / t)
    return (0.0 if h <= 0 else min(mid - half, p)), (1.0 if h >= t else max(mid + half, p))


def counts(o, key):
    if key == "term_exact_match":
        return o["terms"]["exact"], o["terms"]["instances"]
    return o[key]["hits"], o[key]["total"]


def test_ci_bands_are_wilson_of_the_counts():
    tl = timeline("cv")
    check("ci" not in C.jget("/v1/sessions/cv/curve")["systems"]["adapt"], "no bands unless asked")
    W = 5
    for q in ("?ci=1", "?ci=1&window=%d" % W):
        d = C.jget("/v1/sessions/cv/curve" + q)
        for sys_ in ("adapt", "base"):
            ci = d["systems"][sys_]["ci"]
            eq(sorted(ci), sorted(["r0", "r1", "r01", "term_exact_match"]), "bands" + q)
            for key, band in ci.items():
                for k in range(len(tl)):
                    if "window" in q:
                        win = [it["scores"]["systems"][sys_] for it in tl[max(0, k + 1 - W):k + 1]]
                        h = sum(counts(s, key)[0] for s in win)
                        t = sum(counts(s, key)[1] for s in win)
                    else:
                        h, t = counts(tl[k]["totals"][sys_], key)
                    lo, hi = wilson(h, t)
                    close(band["lo"][k], lo, "%s %s lo at %d%s" % (sys_, key, k + 1, q))
                    close(band["hi"][k], hi, "%s %s hi at %d%s" % (sys_, key, k + 1, q))
                    v = d["systems"][sys_][key][k]
                    check(v is None or band["lo"][k] <= v <= band["hi"][k], "inside its band")
    # the figure draws exactly those bands
    r = C.get("/v1/sessions/cv/plot.svg?ci=1")
    expect_status(r, 200, "plot.svg?ci=1")
    import xml.etree.ElementTree as ET
    root = ET.fromstring(r.body)
    d = C.jget("/v1/sessions/cv/curve?ci=1")
    bands = 0
    for g in root.iter(SVG + "g"):
        if g.get("class") != "series":
            continue
        poly = g.find(SVG + "polygon")
        band = d["systems"][g.get("data-system")].get("ci", {}).get(g.get("data-metric"))
        eq(poly is not None, band is not None, "a band where the curve has one")
        if band:
            bands += 1
            lo = [None if v == "null" else float(v) for v in poly.get("data-lo").split()]
            for a, b in zip(lo, band["lo"]):
                close(a, b, "drawn lower bound")
    eq(bands, 8, "four bands per system")
    check(C.get("/v1/sessions/cv/plot.svg?ci=1").header("ETag")
          != C.get("/v1/sessions/cv/plot.svg").header("ETag"), "ci changes the ETag")
    expect_problem(C.get("/v1/sessions/cv/curve?ci=2"), 400, "bad-request", "ci=2")


def test_plot_svg_etag_and_errors():
    r = C.get("/v1/sessions/cv/plot.svg?points=50")
    et = r.header("ETag")
    check(et and et != C.get("/v1/sessions/cv/curve?points=50").header("ETag"),
          "the figure has its own ETag: %r" % et)
    expect_status(C.get("/v1/sessions/cv/plot.svg?points=50", headers={"If-None-Match": et}),
                  304, "304")
    expect_problem(C.get("/v1/sessions/nothing/plot.svg"), 404, "not-found", "unknown session")
    expect_problem(C.get("/v1/sessions/cv/plot.svg?points=1"), 400, "bad-request", "points=1")
    # an empty session is an empty figure, still valid XML
    r = C.get("/v1/sessions/empty/plot.svg")
    expect_status(r, 200, "empty session")
    _, series = svg_series(r.body)
    eq(series, {}, "no series without segments")


CURVE_VARIANTS = ("", "?ci=1", "?window=4", "?window=3&ci=1&wo=3", "?window=1000&points=2",
                  "?points=7&ci=1")


def _glossary_session(sid):
    """A server and its client with session sid (baseline "base", windows
    2 and 3) on the TICO-19 glossary."""
    srv = Server()
    c = srv.client()
    c.create_session(id=sid, source_lang="en", target_lang="fr",
                     options={"baseline_system": "base", "windows": [2, 3]})
    with open(TICO_GLOSSARY, encoding="utf-8") as f:
        expect_status(c.put("/v1/sessions/%s/glossary" % sid, f.read(), ctype="text/csv"), 200,
                      "glossary")
    return srv, c


def test_curve_read_from_the_text_equals_the_parsed_results():
    """The curve reads its numbers from the compact stored text without
    parsing it (api_curve.c am_cv_row_text); text that is not compact is
    parsed with jansson as before. The same timeline stored both ways
    (the results re-indented in SQL while the server is stopped) gives
    the same curves to the last bit: a glossary (terms, window overlap),
    a system missing from some segments, a deleted segment."""
    srv, c = _glossary_session("tx")
    for i, s in enumerate(tico19()[:24]):
        hyps = {"base": s["hypothesis"], "adapt": s["translation"] if i % 3 else s["hypothesis"]}
        if i % 4 == 1:
            hyps["late"] = s["hypothesis"]  # a system that appears on segment 2
        expect_status(c.post("/v1/sessions/tx/segments",
                             {"id": "t%d" % i, "source": s["source"],
                              "translation": s["translation"], "hypotheses": hyps}), 201, "POST t%d" % i)
    expect_status(c.delete("/v1/sessions/tx/segments/t9"), 204, "DELETE t9")
    compact = {v: c.jget("/v1/sessions/tx/curve" + v) for v in CURVE_VARIANTS}
    c.close()
    eq(srv.stop(), 0, "exit status")
    n = sum(db_restyle_json(srv, table, ("result",)) for table in ("segments", "segment_results"))
    check(n >= 23, "results rewritten: %d" % n)
    # the window variants read the rows' ?ci= records when there are
    # (test_curve_window_from_records_equals_from_results): without them
    # they parse the re-indented results here
    _sql(srv, ["UPDATE segments SET stats = NULL"])
    srv2 = Server(db=srv.db)
    c = srv2.client()
    try:
        for v in CURVE_VARIANTS:
            parsed = c.jget("/v1/sessions/tx/curve" + v)
            eq(sorted(parsed["systems"]), sorted(compact[v]["systems"]), "curve%s: systems" % v)
            for name, series in compact[v]["systems"].items():
                for key, values in series.items():
                    eq(json.dumps(parsed["systems"][name][key], sort_keys=True),
                       json.dumps(values, sort_keys=True), "curve%s: %s %s" % (v, name, key))
            eq(parsed["x"], compact[v]["x"], "curve%s: x" % v)
        d = compact["?window=3&ci=1&wo=3"]
        check(any(x is not None for x in d["systems"]["adapt"]["window_overlap"]),
              "the glossary produced window-overlap values")
        check(d["systems"]["late"]["r0"][0] is None, "the late system starts with nulls")
    finally:
        c.close()
        eq(srv2.stop(), 0, "exit status")


def _sql(srv, statements):
    """Runs statements on a stopped server's database, on either backend."""
    if srv.db.startswith("postgresql://"):
        pg_run(srv.db, "\n".join(q + ";" for q in statements))
        return
    import sqlite3
    con = sqlite3.connect(srv.db)
    with con:
        for q in statements:
            con.execute(q)
    con.close()


WINDOW_VARIANTS = ("?window=4", "?window=3&ci=1&wo=3", "?window=2&wo=2&points=5",
                   "?window=1000&points=2", "?window=1&ci=1")


def test_curve_window_from_records_equals_from_results():
    """With window=W the curve sums per-segment counts it reads from the
    rows' ?ci= statistics records (schema/013, ci_stats.h; api_curve.c
    am_cv_row_rec) instead of scanning each stored result: the bodies are
    byte-identical to the ones the results give once the records are
    removed. A glossary (terms, two window widths), a system appearing on
    segment 2, a deleted segment, a PUT (its row's result rewritten), and
    two damaged records (read again from their results)."""
    srv, c = _glossary_session("rx")
    segs = tico19()[:30]
    for i, s in enumerate(segs):
        hyps = {"base": s["hypothesis"], "adapt": s["translation"] if i % 3 else s["hypothesis"]}
        if i % 4 == 1:
            hyps["late"] = s["hypothesis"]
        expect_status(c.post("/v1/sessions/rx/segments",
                             {"id": "r%d" % i, "source": s["source"],
                              "translation": s["translation"], "hypotheses": hyps}), 201, "POST r%d" % i)
    expect_status(c.delete("/v1/sessions/rx/segments/r9"), 204, "DELETE r9")
    s = segs[12]
    expect_status(c.put("/v1/sessions/rx/segments/r12",
                        {"id": "r12", "source": s["source"], "translation": s["hypothesis"],
                         "hypotheses": {"base": s["translation"], "adapt": s["hypothesis"]}}),
                  200, "PUT r12")
    c.close()
    eq(srv.stop(), 0, "exit status")
    n = db_query(srv, "SELECT count(*) FROM segments WHERE stats IS NOT NULL")[0][0]
    check(n >= 25, "rows with records: %d" % n)
    _sql(srv, ["UPDATE segments SET stats = 'AAAA' || substr(stats, 5) WHERE seq = 5",
               "UPDATE segments SET stats = substr(stats, 1, 40) WHERE seq = 17"])
    bodies = {}
    for phase in ("records", "results"):
        if phase == "results":
            _sql(srv, ["UPDATE segments SET stats = NULL"])
        s2 = Server(db=srv.db)
        c = s2.client()
        try:
            for v in WINDOW_VARIANTS:
                r = c.get("/v1/sessions/rx/curve" + v)
                expect_status(r, 200, "curve%s (%s)" % (v, phase))
                bodies[(phase, v)] = r.body
        finally:
            c.close()
            eq(s2.stop(), 0, "exit status")
    for v in WINDOW_VARIANTS:
        eq(bodies[("records", v)], bodies[("results", v)], "curve%s: records vs results" % v)
    d = json.loads(bodies[("records", "?window=3&ci=1&wo=3")])
    check(any(x is not None for x in d["systems"]["adapt"]["window_overlap"]),
          "the glossary produced window-overlap values")
    check(d["systems"]["late"]["r0"][0] is None, "the late system starts with nulls")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
