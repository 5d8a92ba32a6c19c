#!/usr/bin/env python3
"""No lock waits on itself (issue 25, item 1; docs/architecture.md "Locks").

* A segment PUT whose replay meets a segment scored with an older glossary
  version, with one pooled reader (--readers 1): before the fix the replay
  held the reader (its snapshot) and asked for a second one for the
  session row, and waited on itself for good; now it answers, and the
  server still answers /healthz and exits cleanly.
* Every route with one pooled reader: the API and edits suites run with
  --readers 1 (APITEST_SERVE_ARGS) and must pass, not hang. The server's
  lock-order check (server/base/lockck.h) aborts on any path that takes a
  second reader, and a test that saw the abort fails on its exit status.
* Churn: 6 clients mixing DELETE, create, glossary PUT, segment PUT and
  POST on two session ids (the issue's reproduction) for
  ADAPTMON_CHURN_SECONDS (default 25; the issue's "minutes": 300), with
  two readers: every answer within REQUEST_LIMIT seconds, never a 5xx,
  /healthz answering throughout, each surviving session equal to its log
  posted serially into a fresh session, and a clean exit.
"""
import functools
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import (OPTS_A, new_session, run_threads, scale, seg_body, tico19,  # noqa: E402
                 timeline)
from harness import (ROOT, Server, base, check, eq, expect_status, run_tests)  # noqa: E402

CHURN_SECONDS = float(os.environ.get("ADAPTMON_CHURN_SECONDS", scale(25, 10, 10)))
REQUEST_LIMIT = scale(20, 120)  # seconds: far above any answer, far below a hang
GLOSSARY_1 = [{"source": "virus", "targets": ["virus"]},
              {"source": "vaccine", "targets": ["vaccin"]}]
GLOSSARY_2 = [{"source": "health", "targets": ["santé"]},
              {"source": "virus", "targets": ["virus"]}]


def test_replay_over_an_older_glossary_version_with_one_reader():
    srv = Server("--readers", "1", "--threads", "4")
    try:
        c = srv.client()
        segs = tico19()
        expect_status(new_session(c, "g", OPTS_A, GLOSSARY_1), 201, "create")
        for i in range(3):
            expect_status(c.post(base("g") + "/segments", seg_body(segs[i], "s%d" % i)), 201,
                          "POST s%d" % i)
        expect_status(c.put(base("g") + "/glossary", GLOSSARY_2), 200, "PUT glossary")
        expect_status(c.post(base("g") + "/segments", seg_body(segs[3], "s3")), 201, "POST s3")
        # replaces s0: the replay scores s0..s2 with glossary version 1, s3 with 2
        t0 = time.monotonic()
        r = c.put(base("g") + "/segments/s0", seg_body(segs[7], "s0"), timeout=REQUEST_LIMIT)
        expect_status(r, 200, "PUT s0 (a replay over two glossary versions)")
        check(time.monotonic() - t0 < REQUEST_LIMIT, "the replay answered in time")
        # and a DELETE replays the same way
        expect_status(c.delete(base("g") + "/segments/s1", timeout=REQUEST_LIMIT), 204,
                      "DELETE s1")
        expect_status(c.get("/healthz", timeout=5), 200, "/healthz after the replays")
        # the replays' totals equal the log posted afresh, the glossary at the same point
        expect_status(new_session(c, "g-ref", OPTS_A, GLOSSARY_1), 201, "create g-ref")
        for i, body in ((0, seg_body(segs[7], "s0")), (2, seg_body(segs[2], "s2"))):
            expect_status(c.post(base("g-ref") + "/segments", body), 201, "POST ref s%d" % i)
        expect_status(c.put(base("g-ref") + "/glossary", GLOSSARY_2), 200, "PUT ref glossary")
        expect_status(c.post(base("g-ref") + "/segments", seg_body(segs[3], "s3")), 201, "ref s3")
        eq(c.jget(base("g") + "/metrics")["systems"], c.jget(base("g-ref") + "/metrics")["systems"],
           "totals after the replays vs the log posted afresh")
        c.close()
        eq(srv.stop(), 0, "exit status (a lock-order abort would be -6)")
    finally:
        srv.kill()


def _suite_with_one_reader(suite):
    env = dict(os.environ, APITEST_SERVE_ARGS="--readers 1")
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "api", suite)], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=scale(600, 3600))
    out = p.stdout.decode("utf-8", "replace")
    tail = out.strip().splitlines()[-1] if out.strip() else ""
    check(p.returncode == 0 and tail.endswith(" 0 failed"),
          "%s with --readers 1: %s\n%s" % (suite, tail, out[-3000:]))


def test_every_route_with_one_reader():
    for suite in ("test_api.py", "test_edits.py"):
        _suite_with_one_reader(suite)


def test_churn_on_two_sessions_never_hangs():
    srv = Server("--readers", "2", "--threads", "8")
    try:
        c = srv.client()
        segs = tico19()
        ids = ("a", "b")
        for sid in ids:
            expect_status(new_session(c, sid, OPTS_A, GLOSSARY_1), 201, "create " + sid)
        errors = []
        slow = []
        counts = {}
        stop = threading.Event()
        lock = threading.Lock()

        def note(what, r, t0, allowed):
            took = time.monotonic() - t0
            with lock:
                counts[what] = counts.get(what, 0) + 1
                if took > REQUEST_LIMIT:
                    slow.append("%s took %.1f s" % (what, took))
                if r.status >= 500 or r.status not in allowed:
                    errors.append("%s: %d %s" % (what, r.status, r.body[:300]))

        def call(cl, what, allowed, fn, *a, **kw):
            t0 = time.monotonic()
            note(what, fn(*a, timeout=REQUEST_LIMIT + 10, **kw), t0, allowed)

        def client(no):
            cl = srv.client()
            i = 0
            try:
                while not stop.is_set():
                    sid = ids[(no + i) % 2]
                    k = (no * 7 + i) % 5
                    s = segs[(no * 31 + i) % len(segs)]
                    cid = "c%d" % ((no + i) % 9)
                    if k == 0 and i % 3 == 0:
                        call(cl, "DELETE session", (204, 404), cl.delete, base(sid))
                        call(cl, "create", (201, 409), cl.post, "/v1/sessions",
                             {"id": sid, "source_lang": "en", "target_lang": "fr",
                              "options": dict(OPTS_A), "glossary": GLOSSARY_1})
                    elif k == 1:
                        g = GLOSSARY_2 if i % 2 else GLOSSARY_1
                        call(cl, "PUT glossary", (200, 404), cl.put, base(sid) + "/glossary", g)
                    elif k == 2:
                        call(cl, "PUT segment", (200, 201, 404), cl.put,
                             base(sid) + "/segments/" + cid, seg_body(s, cid))
                    else:
                        # 409: the id was posted (or put) before with another body
                        call(cl, "POST segment", (201, 200, 404, 409), cl.post,
                             base(sid) + "/segments", seg_body(s, "n%d-%d" % (no, i)))
                    i += 1
            except Exception as e:  # noqa: BLE001  (a timeout is a hang)
                with lock:
                    errors.append("client %d: %r" % (no, e))
            finally:
                cl.close()

        def health():
            cl = srv.client()
            try:
                while not stop.is_set():
                    t0 = time.monotonic()
                    try:
                        r = cl.get("/healthz", timeout=5)
                        ok = r.status == 200
                    except Exception as e:  # noqa: BLE001
                        ok, r = False, e
                    if not ok or time.monotonic() - t0 > 5:
                        with lock:
                            errors.append("/healthz: %r after %.1f s" % (r, time.monotonic() - t0))
                    time.sleep(0.5)
            finally:
                cl.close()

        def timer():
            time.sleep(CHURN_SECONDS)
            stop.set()

        run_threads([functools.partial(client, n) for n in range(6)] + [health, timer],
                    CHURN_SECONDS + REQUEST_LIMIT + 60)
        stop.set()
        check(not errors, "%d bad answers: %s" % (len(errors), errors[:5]))
        check(not slow, "answers slower than %d s (a lock wait): %s" % (REQUEST_LIMIT, slow[:5]))
        check(counts.get("PUT segment", 0) > 0 and counts.get("PUT glossary", 0) > 0,
              "the churn ran every write: %r" % counts)
        print("  churn %.0f s: %r" % (CHURN_SECONDS, counts))
        for sid in ids:  # a full replay (the first segment replaced by itself) changes nothing
            stored = timeline(c, sid) if c.get(base(sid)).status == 200 else []
            if not stored:
                continue
            before = c.jget(base(sid) + "/metrics")["systems"]
            first = stored[0]["request"]
            expect_status(c.put(base(sid) + "/segments/" + first["id"], first), 200,
                          "replay of %s after the churn" % sid)
            eq(c.jget(base(sid) + "/metrics")["systems"], before,
               "totals of %s after a full replay" % sid)
        c.close()
        eq(srv.stop(), 0, "exit status (a lock-order abort would be -6)")
    finally:
        srv.kill()


if __name__ == "__main__":
    run_tests(globals())
