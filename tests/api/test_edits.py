#!/usr/bin/env python3
"""Black-box tests of segment edits, batches and translators (issue 13
§3-§5): DELETE of a segment, PUT of an unknown id (upsert), batch POSTs
(JSON array, NDJSON) and the per-translator breakdown.

The expected state after an edit is never written down here: it is the
state of a second session that got the final log posted straight (a fresh
replay), compared field by field. Python standard library only.
"""
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Client, base, check, eq, expect_problem, expect_status,  # noqa: E402
                     run_tests, serve, shutdown)
from test_api import REPLAY  # noqa: E402

S = None
C = None

GLOSSARY = [{"source": "terrier", "targets": ["terrier"]}]

LOG = REPLAY  # the five segments of test_api's replay tests


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


def new_session(sid, **kw):
    C.create_session(id=sid, source_lang="en", target_lang="en", stopword_list=["the"],
                     glossary=GLOSSARY, **kw)


def post(sid, seg, status=201):
    r = C.post(base(sid) + "/segments", seg)
    expect_status(r, status, "POST segment %s" % seg.get("id"))
    return r.json()


def timeline(sid):
    segs, after = [], 0
    while True:
        d = C.jget(base(sid) + "/segments?after=%d&limit=1000" % after)
        segs += d["segments"]
        if d["next"] is None:
            return segs
        after = d["next"]


def _seqs_mapped(v, m):
    """v (a word history) with each seq replaced by m[seq]."""
    return [dict(h, seq=m.get(h["seq"], -h["seq"])) for h in v]


def same_as_fresh(sid, log, what, words=("terrier", "man", "dog", "woman", "lady"), seqs=None):
    """The session sid equals a fresh session that got log posted in order:
    metrics, every timeline row (id, scores, running totals; seq as in seqs,
    default 1..n: a DELETE leaves its seq unused), word histories (seqs
    mapped) and the translator's term choices."""
    ref = sid + "-ref"
    C.delete(base(ref))
    new_session(ref)
    for s in log:
        post(ref, s)
    ma, mb = C.jget(base(sid) + "/metrics"), C.jget(base(ref) + "/metrics")
    eq(ma["segments"], len(log), "%s: segments" % what)
    eq(ma["systems"], mb["systems"], "%s: metrics vs a fresh replay" % what)
    ta, tb = timeline(sid), timeline(ref)
    eq([x["id"] for x in ta], [y["id"] for y in tb], "%s: timeline ids" % what)
    eq([y["seq"] for y in tb], list(range(1, len(log) + 1)), "%s: fresh seqs" % what)
    eq([x["seq"] for x in ta], seqs if seqs is not None else [y["seq"] for y in tb],
       "%s: timeline seqs (increasing, gaps where segments were deleted)" % what)
    m = {x["seq"]: y["seq"] for x, y in zip(ta, tb)}
    for x, y in zip(ta, tb):
        eq([x["scores"], x["totals"]], [y["scores"], y["totals"]],
           "%s: scores and running totals of %s" % (what, x["id"]))
        got = C.jget(base(sid) + "/segments/" + x["id"])
        eq(got["seq"], x["seq"], "%s: GET %s seq" % (what, x["id"]))
    for w in words:
        ra = C.get(base(sid) + "/vocabulary/" + w)
        rb = C.get(base(ref) + "/vocabulary/" + w)
        eq(ra.status, rb.status, "%s: vocabulary %r status" % (what, w))
        if ra.status == 200:
            eq([ra.json()["occurrences"], _seqs_mapped(ra.json()["history"], m)],
               [rb.json()["occurrences"], rb.json()["history"]],
               "%s: history of %r vs a fresh replay" % (what, w))
    q = {"source": "the terrier", "hypothesis": "le terrier"}
    eq(C.jpost(base(sid) + "/check", q, 200)["terms"], C.jpost(base(ref) + "/check", q, 200)["terms"],
       "%s: translator choices vs a fresh replay" % what)


# ---- DELETE ----------------------------------------------------------------------

def test_delete_segment_leaves_a_gap_and_replays():
    new_session("del")
    for s in LOG:
        post("del", s)
    r = C.delete(base("del") + "/segments/b")
    expect_status(r, 204, "DELETE segment b")
    expect_problem(C.get(base("del") + "/segments/b"), 404, "not-found", "GET after DELETE")
    same_as_fresh("del", [s for s in LOG if s["id"] != "b"], "after DELETE of b",
                  seqs=[1, 3, 4, 5])
    sess = C.jget(base("del"))
    eq([sess["segments"], sess["last_seq"]], [4, 5], "session: count and highest seq")
    m = C.jget(base("del") + "/metrics")
    eq([m["segments"], m["last_seq"]], [4, 5], "metrics: count and highest seq")
    page = C.jget(base("del") + "/segments?after=0&limit=2")
    eq([[x["seq"] for x in page["segments"]], page["next"], page["total"]], [[1], 2, 4],
       "a timeline page is a seq range (seq 2 is a gap); total is the count")
    page = C.jget(base("del") + "/segments?after=2&limit=2")
    eq([[x["seq"] for x in page["segments"]], page["next"]], [[3, 4], 4], "the next page")
    exp = C.get(base("del") + "/export?format=json")
    expect_status(exp, 200, "export")
    eq([exp.json()["count"], [x["seq"] for x in exp.json()["segments"]]], [4, [1, 3, 4, 5]],
       "export: the count and every stored seq")
    eq(C.jget(base("del") + "/curve")["last_seq"], 5, "curve: the x axis runs to the highest seq")
    # the next POST takes the highest seq + 1: seq 2 is never given out again
    f = {"id": "f", "source": "The lady walks", "hypothesis": "The lady walks",
         "translation": "The woman walks"}
    eq(post("del", f)["seq"], 6, "seq of a POST after a DELETE")
    # the last one, then the first one
    expect_status(C.delete(base("del") + "/segments/f"), 204, "DELETE the last segment")
    expect_status(C.delete(base("del") + "/segments/a"), 204, "DELETE the first segment")
    same_as_fresh("del", [s for s in LOG if s["id"] not in ("a", "b")], "after DELETE of f, a",
                  seqs=[3, 4, 5])
    # a deleted id may be posted again: it is appended (after the deleted f's seq 6)
    eq(post("del", LOG[1])["seq"], 7, "re-POST of a deleted id")
    same_as_fresh("del", [LOG[2], LOG[3], LOG[4], LOG[1]], "after re-POST of b",
                  seqs=[3, 4, 5, 7])
    # a rescore keeps the gaps and the count (its results are staged for the same seqs)
    expect_status(C.post(base("del") + "/rescore"), 200, "rescore after the DELETEs")
    sess = C.jget(base("del"))
    eq([sess["segments"], sess["last_seq"]], [4, 7], "count and highest seq after a rescore")
    same_as_fresh("del", [LOG[2], LOG[3], LOG[4], LOG[1]], "after a rescore", seqs=[3, 4, 5, 7])


def test_delete_early_segment_of_a_long_session():
    """More later results than one staging chunk (server/store/segments.c): every one is
    recomputed under its unchanged seq."""
    segs = many(300, prefix="L")
    new_session("del-long")
    batch("del-long", segs)
    expect_status(C.delete(base("del-long") + "/segments/L4"), 204, "DELETE L4")
    expect_status(C.put(base("del-long") + "/segments/L9", dict(segs[9], translation="A cat")),
                  200, "PUT L9 after the DELETE")
    final = [dict(s, translation="A cat") if s["id"] == "L9" else s for s in segs if s["id"] != "L4"]
    ref = "del-long-ref"
    new_session(ref)
    batch(ref, final)
    eq(C.jget(base("del-long") + "/metrics")["systems"], C.jget(base(ref) + "/metrics")["systems"],
       "metrics after DELETE + PUT vs a fresh batch of the final log")
    ta, tb = timeline("del-long"), timeline(ref)
    eq([[x["id"], x["scores"], x["totals"]] for x in ta],
       [[y["id"], y["scores"], y["totals"]] for y in tb],
       "timeline after DELETE + PUT vs a fresh batch")
    eq([x["seq"] for x in ta], [k for k in range(1, 301) if k != 5],
       "seq 5 (L4) left unused, the later seqs kept")


def test_delete_errors_change_nothing():
    new_session("del-err")
    for s in LOG[:3]:
        post("del-err", s)
    before = (C.jget(base("del-err") + "/metrics"), timeline("del-err"))
    expect_problem(C.delete(base("del-err") + "/segments/zz"), 404, "not-found", "unknown segment")
    expect_problem(C.delete(base("nope") + "/segments/a"), 404, "not-found", "unknown session")
    after = (C.jget(base("del-err") + "/metrics"), timeline("del-err"))
    eq(after, before, "failed DELETEs changed nothing")


def test_delete_every_segment_empties_the_session():
    new_session("del-all")
    for s in LOG[:2]:
        post("del-all", s)
    for s in LOG[:2]:
        expect_status(C.delete(base("del-all") + "/segments/" + s["id"]), 204, "DELETE")
    m = C.jget(base("del-all") + "/metrics")
    eq([m["segments"], m["systems"]], [0, {}], "metrics of an emptied session")
    eq(timeline("del-all"), [], "timeline of an emptied session")
    eq(C.jget(base("del-all"))["segments"], 0, "segments of an emptied session")
    eq(post("del-all", LOG[2])["seq"], 3, "first POST after emptying: seqs are never reused")


# ---- upsert PUT ------------------------------------------------------------------

def test_put_of_unknown_id_appends():
    new_session("ups")
    for s in LOG[:2]:
        post("ups", s)
    r = C.put(base("ups") + "/segments/c", LOG[2])
    expect_status(r, 201, "PUT of an unknown id")
    eq(r.header("Location"), "/v1/sessions/ups/segments/c", "Location of an upsert")
    eq([r.json()["id"], r.json()["seq"]], ["c", 3], "upsert result")
    # the id from the URL alone
    r = C.put(base("ups") + "/segments/d", {k: v for k, v in LOG[3].items() if k != "id"})
    expect_status(r, 201, "PUT of an unknown id without a body id")
    # now known: a PUT replaces (200), an identical POST is idempotent
    expect_status(C.put(base("ups") + "/segments/d", LOG[3]), 200, "PUT of a known id")
    expect_status(C.post(base("ups") + "/segments", LOG[2]), 200, "re-POST of an upserted body")
    post("ups", LOG[4])
    same_as_fresh("ups", LOG, "after upserts")
    # an invalid upsert stores nothing
    before = timeline("ups")
    expect_problem(C.put(base("ups") + "/segments/zz", {"translation": "x"}), 422,
                   "missing-field", "upsert without hypothesis")
    eq(timeline("ups"), before, "a failed upsert changed nothing")


# ---- batches ---------------------------------------------------------------------

def many(n, prefix="m"):
    """n distinct segments whose words recur (so recall depends on order)."""
    words = ["terrier", "man", "woman", "dog", "lady", "walks", "bites", "feeds", "park", "cat"]
    out = []
    for i in range(n):
        w = [words[(i * 7 + k * 3) % len(words)] for k in range(4)]
        out.append({"id": "%s%d" % (prefix, i), "source": " ".join(w),
                    "hypothesis": " ".join(reversed(w)),
                    "translation": "The %s %s the %s" % (w[0], w[1], w[2])})
    return out


def batch(sid, body, status=200, ctype=None):
    r = C.post(base(sid) + "/segments", body, ctype=ctype)
    expect_status(r, status, "batch POST")
    return r.json()


def test_batch_array_equals_single_posts():
    new_session("ba")
    d = batch("ba", LOG)
    eq([d["created"], d["unchanged"], d["failed"], d["not_attempted"]], [5, 0, None, 0],
       "batch counts")
    eq([(it["index"], it["id"], it["status"], it["result"]["seq"]) for it in d["items"]],
       [(i, s["id"], 201, i + 1) for i, s in enumerate(LOG)], "batch items")
    # each item's result is the stored one
    for it in d["items"]:
        got = C.jget(base("ba") + "/segments/" + it["id"])
        got.pop("request")
        eq(got, it["result"], "stored result of %s" % it["id"])
    same_as_fresh("ba", LOG, "after a batch")
    # the same batch again: every item idempotent, nothing counted twice
    d = batch("ba", LOG)
    eq([d["created"], d["unchanged"]], [0, 5], "re-posted batch")
    same_as_fresh("ba", LOG, "after a re-posted batch")


def test_batch_larger_than_a_commit_chunk():
    segs = many(1203)
    new_session("bbig")
    d = batch("bbig", segs)
    eq([d["created"], d["failed"]], [1203, None], "big batch counts")
    eq([it["result"]["seq"] for it in d["items"]], list(range(1, 1204)), "big batch seqs")
    ref = "bbig-ref"
    new_session(ref)
    for s in segs:
        post(ref, s)
    eq(C.jget(base("bbig") + "/metrics")["systems"], C.jget(base(ref) + "/metrics")["systems"],
       "big batch metrics vs single posts")
    ta, tb = timeline("bbig"), timeline(ref)
    eq([[x["seq"], x["id"], x["scores"], x["totals"]] for x in ta],
       [[y["seq"], y["id"], y["scores"], y["totals"]] for y in tb],
       "big batch timeline vs single posts")


def test_batch_stops_at_the_first_bad_item():
    new_session("bbad")
    post("bbad", LOG[0])
    conflicting = dict(LOG[0], translation="Another translation")
    d = batch("bbad", [LOG[0], LOG[1], conflicting, LOG[2]])
    eq([it["status"] for it in d["items"]], [200, 201, 409, None], "item statuses")
    eq([d["created"], d["unchanged"], d["failed"], d["not_attempted"]], [1, 1, 2, 1], "counts")
    eq(d["items"][2]["problem"]["status"], 409, "problem of the conflicting item")
    check(d["items"][2]["problem"]["type"].endswith("/conflict"), "problem type")
    same_as_fresh("bbad", LOG[:2], "after a batch with a conflict")
    # an invalid item: the ones before it are stored, the later ones not attempted
    d = batch("bbad", [LOG[2], {"id": "x", "translation": "no hypothesis"}, LOG[3]])
    eq([it["status"] for it in d["items"]], [201, 422, None], "statuses with an invalid item")
    eq(d["items"][1]["problem"]["field"], "hypothesis", "the invalid item's field")
    same_as_fresh("bbad", LOG[:3], "after a batch with an invalid item")
    # an item that is not an object
    d = batch("bbad", [LOG[3], "nope"])
    eq([it["status"] for it in d["items"]], [201, 422], "a non-object item")
    # the same id twice in one batch: the second is a re-post of the first
    d = batch("bbad", [LOG[4], LOG[4]])
    eq([it["status"] for it in d["items"]], [201, 200], "the same item twice")
    eq(d["items"][0]["result"], d["items"][1]["result"], "both answers are the stored result")
    same_as_fresh("bbad", LOG, "after all the batches")


def test_batch_ndjson():
    new_session("bnd")
    lines = [json.dumps(s) for s in LOG[:2]] + ["", "{not json", json.dumps(LOG[2])]
    d = batch("bnd", "\r\n".join(lines) + "\n", ctype="application/x-ndjson")
    eq([it["status"] for it in d["items"]], [201, 201, 400, None], "NDJSON item statuses")
    check("line 4" in d["items"][2]["problem"]["detail"], "the bad line is named: %r"
          % d["items"][2]["problem"]["detail"])
    d = batch("bnd", "\n".join(json.dumps(s) for s in LOG[2:]), ctype="application/x-ndjson")
    eq([it["status"] for it in d["items"]], [201, 201, 201], "NDJSON without a final newline")
    same_as_fresh("bnd", LOG, "after NDJSON batches")
    # a body saved by an editor that writes a UTF-8 byte order mark
    new_session("bbom")
    d = batch("bbom", "\ufeff" + "\n".join(json.dumps(s) for s in LOG[:2]) + "\n",
              ctype="application/x-ndjson")
    eq([it["status"] for it in d["items"]], [201, 201], "NDJSON starting with a BOM")


def test_batch_whole_request_errors_change_nothing():
    new_session("berr")
    post("berr", LOG[0])
    before = timeline("berr")
    expect_problem(C.post(base("berr") + "/segments", []), 422, "invalid-value", "empty batch")
    expect_problem(C.post(base("berr") + "/segments", "", ctype="application/x-ndjson"), 422,
                   "invalid-value", "empty NDJSON batch")
    expect_problem(C.post(base("berr") + "/segments", "[{]", ctype="application/json"), 400,
                   "bad-json", "malformed array")
    expect_problem(C.post(base("nope") + "/segments", LOG[:2]), 404, "not-found",
                   "batch to an unknown session")
    eq(timeline("berr"), before, "failed batches changed nothing")
    s2, c2 = serve("--max-batch", "3")
    try:
        c2.create_session(id="lim", source_lang="en", target_lang="en")
        expect_problem(c2.post(base("lim") + "/segments", LOG[:4]), 422, "too-many-items",
                       "a batch over max-batch")
        eq(c2.jget(base("lim") + "/metrics")["segments"], 0, "nothing stored")
        expect_status(c2.post(base("lim") + "/segments", LOG[:3]), 200, "a batch of max-batch")
    finally:
        shutdown(s2, c2)


# ---- translators --------------------------------------------------------------------

def by_translator_from_timeline(sid):
    """{translator: {system: [r0 hits, r0 total, r1 hits, r1 total, segments]}} summed from
    the timeline's per-segment scores (the counts of the segment where they are counted)."""
    out = {}
    for x in timeline(sid):
        who = x["request"].get("translator")
        if who is None:
            continue
        for sys_, sc in x["scores"]["systems"].items():
            v = out.setdefault(who, {}).setdefault(sys_, [0, 0, 0, 0, 0])
            v[0] += sc["r0"]["hits"]
            v[1] += sc["r0"]["total"]
            v[2] += sc["r1"]["hits"]
            v[3] += sc["r1"]["total"]
            v[4] += 1
    return out


def by_translator_from_metrics(sid):
    m = C.jget(base(sid) + "/metrics")
    return {who: {s: [t["r0"]["hits"], t["r0"]["total"], t["r1"]["hits"], t["r1"]["total"],
                      t["segments"]] for s, t in systems.items()}
            for who, systems in m["by_translator"].items()}


def test_translator_breakdown_edits_and_exports():
    new_session("tr")
    who = ["ann", "bob", None, "ann", "bob"]
    log = [dict(s, translator=w) if w else dict(s) for s, w in zip(LOG, who)]
    for s in log[:3]:
        post("tr", s)
    batch("tr", log[3:])
    want = by_translator_from_timeline("tr")
    eq(sorted(want), ["ann", "bob"], "translators in the timeline")
    eq(by_translator_from_metrics("tr"), want, "by_translator vs the per-segment scores")
    m = C.jget(base("tr") + "/metrics")
    total = m["systems"]["default"]
    unattributed = [s for s in timeline("tr") if "translator" not in s["request"]]
    eq(sum(t["default"]["segments"] for t in m["by_translator"].values()) + len(unattributed),
       total["segments"], "translators' segments + the unattributed = the session's")
    # a PUT that changes a segment's translator, then a DELETE: still what the scores say
    expect_status(C.put(base("tr") + "/segments/c", dict(LOG[2], translator="cy")), 200,
                  "PUT with a translator")
    expect_status(C.delete(base("tr") + "/segments/a"), 204, "DELETE ann's first segment")
    want = by_translator_from_timeline("tr")
    eq(sorted(want), ["ann", "bob", "cy"], "translators after the edits")
    eq(by_translator_from_metrics("tr"), want, "by_translator after PUT and DELETE")
    # exports
    r = C.get(base("tr") + "/export?format=csv")
    expect_status(r, 200, "CSV export")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    eq([(x["id"], x["translator"]) for x in rows], [("b", "bob"), ("c", "cy"), ("d", "ann"),
                                                    ("e", "bob")], "CSV translator column")
    r = C.get(base("tr") + "/export?format=tmx")
    check('tuid="c" changeid="cy"' in r.text, "TMX changeid of c")
    d = C.jget(base("tr") + "/export?format=json")
    eq([x["request"].get("translator") for x in d["segments"]], ["bob", "cy", "ann", "bob"],
       "JSON export request.translator")
    # an invalid translator is refused and changes nothing
    before = timeline("tr")
    for bad in ("", "a b", 3, "x" * 129):
        expect_problem(C.post(base("tr") + "/segments", dict(LOG[0], id="z", translator=bad)),
                       422, "invalid-value", "translator %r" % (bad,))
    eq(timeline("tr"), before, "invalid translators changed nothing")


def test_translator_totals_survive_a_rescore():
    new_session("trr")
    for s, w in zip(LOG, ["ann", "bob", "ann", "bob", "ann"]):
        post("trr", dict(s, translator=w))
    before = by_translator_from_metrics("trr")
    expect_status(C.put(base("trr") + "/glossary", [{"source": "man", "targets": ["man"]}]), 200,
                  "new glossary")
    r = C.post(base("trr") + "/rescore", {})
    expect_status(r, 200, "rescore")
    eq(by_translator_from_metrics("trr"), by_translator_from_timeline("trr"),
       "by_translator after a rescore")
    eq(sorted(before), ["ann", "bob"], "translators before the rescore")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
