#!/usr/bin/env python3
"""Black-box tests of the GET /v1/sessions/{id}/metrics answer cache
(server/api/answer_cache.c) against a spawned `adaptmon serve`.

The cache keeps the finished body per (session, incarnation, version); these tests check
that what it serves is exactly what a fresh build produces: repeated GETs
are byte-identical, every change of the session (POST, PUT of a segment)
changes the ETag and the body, the cached body equals the one a restarted
server (empty cache) builds from the same database and the one of a second
session fed the same segments, 304 still answers, DELETE + re-create of the
same id never serves the old body, and GETs racing with POSTs always carry
a body whose version and segment count agree with the ETag.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only.
"""
import json
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (base, check, eq, expect_status, run_tests, serve, shutdown,  # noqa: E402
                     tico19)

S = None      # the server (no authentication)
C = None      # a client of S


def setup():
    global S, C
    S, C = serve()


def teardown():
    shutdown(S, C)


def seg(i, prefix="m"):
    """TICO-19 segment i with two systems (baseline 'base' and 'other')."""
    t = tico19()[i % len(tico19())]
    return {"id": "%s%d" % (prefix, i), "source": t["source"],
            "hypotheses": {"base": t["hypothesis"], "other": t["translation"]},
            "translation": t["translation"]}


def post(c, sid, s):
    r = c.post(base(sid) + "/segments", s)
    expect_status(r, 201, "POST segment %s to %s" % (s["id"], sid))


def metrics(c, sid, headers=None):
    r = c.get(base(sid) + "/metrics", headers=headers)
    return r


def get200(c, sid):
    r = metrics(c, sid)
    expect_status(r, 200, "GET metrics of %s" % sid)
    return r


def etag_version(etag, sid):
    """The VERSION of an ETag "<id>-<INCARNATION>-<VERSION>"."""
    check(etag and etag.startswith('"%s-' % sid) and etag.endswith('"'),
          "ETag %r has the form \"%s-INCARNATION-VERSION\"" % (etag, sid))
    inc, _, ver = etag[len(sid) + 2:-1].partition("-")
    check(inc.isdigit() and ver.isdigit(), "ETag %r: INCARNATION-VERSION" % etag)
    return int(ver)


def new_session(sid):
    C.create_session(id=sid, options={"baseline_system": "base"})


def test_repeated_get_identical():
    new_session("mc-rep")
    for i in range(5):
        post(C, "mc-rep", seg(i))
    a = get200(C, "mc-rep")
    b = get200(C, "mc-rep")
    eq(b.body, a.body, "second GET body (cached) vs first")
    eq(b.header("ETag"), a.header("ETag"), "ETag of both GETs")
    eq(b.header("Content-Type"), a.header("Content-Type"), "Content-Type of both GETs")
    eq(b.header("Cache-Control"), a.header("Cache-Control"), "Cache-Control of both GETs")
    eq(b.header("Content-Type").split(";")[0], "application/json", "Content-Type")
    j = b.json()
    eq(j["segments"], 5, "segments")
    eq(j["version"], etag_version(b.header("ETag"), "mc-rep"), "body version vs ETag")
    eq(sorted(j["systems"]), ["base", "other"], "systems")


def test_post_changes_answer_and_etag():
    new_session("mc-chg")
    seen = set()
    prev = None
    for i in range(6):
        post(C, "mc-chg", seg(i))
        a = get200(C, "mc-chg")
        b = get200(C, "mc-chg")
        eq(b.body, a.body, "cached vs built body after %d posts" % (i + 1))
        et = a.header("ETag")
        check(et not in seen, "ETag %s is new after post %d" % (et, i + 1))
        seen.add(et)
        eq(a.json()["segments"], i + 1, "segments after %d posts" % (i + 1))
        if prev is not None:
            check(a.body != prev, "body changed after post %d" % (i + 1))
        prev = a.body


def test_same_as_twin_session():
    """A session fed the same segments builds the same answer (up to its id)
    as the cached answer of the first, after every post."""
    new_session("mc-a")
    new_session("mc-b")
    for i in range(8):
        post(C, "mc-a", seg(i, "t"))
        get200(C, "mc-a")                     # fills the cache for mc-a
        post(C, "mc-b", seg(i, "t"))
        a = get200(C, "mc-a")                 # served from the cache
        b = get200(C, "mc-b")                 # built (first GET of this version)
        ja, jb = a.json(), b.json()
        eq(ja.pop("session"), "mc-a", "session of a")
        eq(jb.pop("session"), "mc-b", "session of b")
        eq(ja["segments"], i + 1, "segments of the cached answer after %d posts" % (i + 1))
        eq(ja, jb, "answers of the twin sessions after %d posts" % (i + 1))
        eq(a.body.replace(b'"mc-a"', b'"mc-b"'), b.body,
           "bytes of the twin answers after %d posts" % (i + 1))


def test_same_as_restarted_server():
    """The cached body equals the body a restarted server (empty cache)
    builds from the same database, byte for byte, with the same ETag."""
    new_session("mc-rs")
    for i in range(10):
        post(C, "mc-rs", seg(i, "r"))
    get200(C, "mc-rs")
    a = get200(C, "mc-rs")
    C.close()
    eq(S.stop(), 0, "exit status of the first server")
    S.start()
    c2 = S.client()
    b = get200(c2, "mc-rs")
    c2.close()
    C.port = S.port
    eq(b.body, a.body, "body after restart vs cached body")
    eq(b.header("ETag"), a.header("ETag"), "ETag after restart")


def test_segment_put_changes_answer():
    new_session("mc-put")
    for i in range(3):
        post(C, "mc-put", seg(i, "p"))
    a = get200(C, "mc-put")
    get200(C, "mc-put")
    s = seg(1, "p")
    s["hypotheses"]["other"] = "rien du tout"
    r = C.put(base("mc-put") + "/segments/p1", s)
    check(r.status in (200, 201), "PUT segment: status %d %r" % (r.status, r.body[:200]))
    b = get200(C, "mc-put")
    check(b.header("ETag") != a.header("ETag"), "ETag changed after PUT")
    check(b.body != a.body, "body changed after PUT")
    eq(get200(C, "mc-put").body, b.body, "cached body after PUT")


def test_if_none_match_304():
    new_session("mc-304")
    post(C, "mc-304", seg(0))
    a = get200(C, "mc-304")
    get200(C, "mc-304")
    et = a.header("ETag")
    r = metrics(C, "mc-304", headers={"If-None-Match": et})
    eq(r.status, 304, "GET with the current ETag")
    eq(r.header("ETag"), et, "ETag of the 304")
    eq(r.body, b"", "304 body")
    post(C, "mc-304", seg(1))
    r = metrics(C, "mc-304", headers={"If-None-Match": et})
    eq(r.status, 200, "GET with the old ETag after a post")
    check(r.header("ETag") != et, "new ETag")
    eq(r.json()["segments"], 2, "segments")


def test_delete_recreate_no_stale_body():
    sid = "mc-del"
    C.create_session(id=sid, options={"baseline_system": "base"})
    for i in range(3):
        post(C, sid, seg(i, "d"))
    old = get200(C, sid)
    get200(C, sid)
    expect_status(C.delete(base(sid)), 204, "DELETE")
    expect_status(metrics(C, sid), 404, "GET metrics of the deleted session")
    # re-created with another baseline and fed other segments up to the same version
    C.create_session(id=sid, options={"baseline_system": "other"})
    for i in range(3):
        post(C, sid, seg(i + 20, "e"))
    new = get200(C, sid)
    j = new.json()
    eq(j.get("baseline_system"), "other", "baseline of the re-created session")
    check(new.body != old.body, "the old body is not served after re-creation")
    eq(get200(C, sid).body, new.body, "cached body of the re-created session")
    # a fresh empty re-creation (version back at the start) neither
    expect_status(C.delete(base(sid)), 204, "DELETE again")
    C.create_session(id=sid, options={"baseline_system": "base"})
    e = get200(C, sid)
    eq(e.json()["segments"], 0, "segments of the empty re-created session")


def test_concurrent_gets_during_posts():
    """Readers hammer GET while a writer posts: every 200 body's version
    equals its ETag's and its segment count never goes backwards."""
    sid = "mc-conc"
    new_session(sid)
    post(C, sid, seg(0, "c"))
    stop = threading.Event()
    errors = []
    counts = [0] * 4
    pairs = {}   # version -> segments, must be a function
    lock = threading.Lock()

    def reader(k):
        c = S.client()
        last = -1
        try:
            while not stop.is_set():
                r = metrics(c, sid)
                if r.status != 200:
                    errors.append("status %d" % r.status)
                    return
                j = r.json()
                v = etag_version(r.header("ETag"), sid)
                if j["version"] != v:
                    errors.append("body version %d vs ETag %s" % (j["version"], r.header("ETag")))
                if j["segments"] < last:
                    errors.append("segments went back %d -> %d" % (last, j["segments"]))
                last = j["segments"]
                with lock:
                    if pairs.setdefault(v, j["segments"]) != j["segments"]:
                        errors.append("version %d with segments %d and %d"
                                      % (v, pairs[v], j["segments"]))
                counts[k] += 1
        except Exception as e:  # reported below
            errors.append(repr(e))
        finally:
            c.close()

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    w = S.client()
    try:
        for i in range(1, 40):
            post(w, sid, seg(i, "c"))
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        w.close()
    eq(errors, [], "errors seen by the readers")
    check(sum(counts) > 0, "readers got answers")
    final = get200(C, sid).json()
    eq(final["segments"], 40, "final segments")
    # each version maps to one segment count, and counts grow with versions
    vs = sorted(pairs)
    check(all(pairs[a] <= pairs[b] for a, b in zip(vs, vs[1:])),
          "segments grow with the version: %r" % sorted(pairs.items()))


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
