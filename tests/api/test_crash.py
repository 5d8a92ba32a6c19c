#!/usr/bin/env python3
"""Crash test of adaptmon serve: `kill -9` in the middle of a stream of posts.

A writer posts the TICO-19 segments one by one; the server is killed with
SIGKILL after a random number of answers and restarted on the same database;
then everything is re-posted from the start and the server killed again
further on (ROUNDS times), and finally everything is re-posted once more.
Every acknowledged segment must have survived with its acknowledged result,
re-posts must be idempotent (200 with the stored result), and the final
totals must equal those of an uninterrupted run.

Prints "ok NAME" / "FAILED NAME" and ends with "N passed, N failed".
"""
import os
import random
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Server, check, eq, expect_status, run_tests, tico19, timeline)  # noqa: E402

N = 971          # every TICO-19 dev segment
ROUNDS = 3       # kill -9 rounds before the final uninterrupted re-post
OPTIONS = {"profile": "simianer2019", "stopwords": "iso"}


def body(s):
    return {"id": s["id"], "source": s["source"], "hypothesis": s["hypothesis"],
            "translation": s["translation"]}


def stream_and_kill(srv, sid, segs, kill_after):
    """Posts segs in order from a writer thread and SIGKILLs the server once
    kill_after answers arrived. Returns {id: (status, result)} of every answer."""
    acked = {}
    order = []
    stop = threading.Event()

    def writer():
        c = srv.client()
        try:
            for s in segs:
                if stop.is_set():
                    return
                r = c.post("/v1/sessions/%s/segments" % sid, body(s))
                if r.status not in (200, 201):
                    raise AssertionError("post %s: %d %r" % (s["id"], r.status, r.body[:300]))
                acked[s["id"]] = (r.status, r.json())
                order.append(s["id"])
        except (OSError, ConnectionError, AssertionError) as e:
            if not stop.is_set():
                acked["__error__"] = repr(e)
        except Exception as e:  # http.client errors after the kill
            if not stop.is_set():
                acked["__error__"] = repr(e)
        finally:
            c.close()

    t = threading.Thread(target=writer)
    t.start()
    deadline = time.monotonic() + 30
    while len(order) < kill_after and t.is_alive() and time.monotonic() < deadline:
        time.sleep(0.002)
    stop.set()
    srv.kill()  # kill -9 while the writer is (most likely) in the middle of a post
    t.join(30)
    check(not t.is_alive(), "the writer hangs after the kill")
    check("__error__" not in acked, "writer failed before the kill: %s" % acked.get("__error__"))
    return acked, order


def check_survivors(c, sid, segs, first, order, prev):
    """After a restart: the log is a prefix of segs numbered 1..n without gaps,
    holding every segment stored before (prev) and every one acknowledged in
    this round (order), plus at most the one in flight at the kill; every
    stored segment that was acknowledged has the acknowledged result."""
    tl = timeline(c, sid)
    ids = [x["id"] for x in tl]
    eq([x["seq"] for x in tl], list(range(1, len(tl) + 1)), "seq after restart")
    eq(ids, [s["id"] for s in segs[:len(ids)]], "stored log is a prefix of the stream")
    least = max(prev, len(order))
    check(len(ids) >= least, "acknowledged segments lost: %d stored, %d acknowledged"
          % (len(ids), least))
    check(len(ids) <= least + 1, "more segments stored (%d) than posted (%d + 1 in flight)"
          % (len(ids), least))
    for x in tl:
        if x["id"] in first:
            res = first[x["id"]]
            for k in ("seq", "id", "scores", "totals", "signature"):
                eq(x[k], res[k], "stored %s of acknowledged segment %s" % (k, x["id"]))
    return ids


def test_kill_9_mid_stream_then_repost_equals_uninterrupted():
    segs = tico19()[:N]
    seed = int(os.environ.get("APITEST_SEED", time.time_ns() % 100000))
    rnd = random.Random(seed)
    print("# seed %d (APITEST_SEED=%d reproduces the kill points)" % (seed, seed))
    srv = Server()
    try:
        c = srv.client()
        c.create_session(id="crash", options=dict(OPTIONS))
        c.close()
        first = {}      # id → the result acknowledged with 201 (the stored one)
        stored = []     # ids stored, in seq order, as read after the last restart
        for rnd_no in range(ROUNDS):
            # (re-)post everything from the start; kill -9 somewhere after the stored prefix
            kill_after = len(stored) + rnd.randint(40, 200)
            acked, order = stream_and_kill(srv, "crash", segs, kill_after)
            check(len(order) < N, "round %d: the stream ended before the kill" % rnd_no)
            for sid in order:
                st, res = acked[sid]
                if sid in stored:
                    eq(st, 200, "round %d: re-post of stored segment %s" % (rnd_no, sid))
                    if sid in first:
                        eq(res, first[sid], "re-post answers the stored result (%s)" % sid)
                else:
                    eq(st, 201, "round %d: first post of %s" % (rnd_no, sid))
                    first[sid] = res
            prev = len(stored)
            srv.start()  # same database, new port
            c = srv.client()
            expect_status(c.get("/readyz"), 200, "readyz after restart")
            stored = check_survivors(c, "crash", segs, first, order, prev)
            c.close()
            print("# round %d: %d answers before kill -9, %d stored after restart"
                  % (rnd_no, len(order), len(stored)))

        # the last re-post of everything, without interruption
        c = srv.client()
        for s in segs:
            r = c.post("/v1/sessions/crash/segments", body(s))
            expect_status(r, 200 if s["id"] in stored else 201, "final post of %s" % s["id"])
            if s["id"] in first:
                eq(r.json(), first[s["id"]], "final re-post answers the stored result")

        # the uninterrupted run
        c.create_session(id="ref", options=dict(OPTIONS))
        for s in segs:
            expect_status(c.post("/v1/sessions/ref/segments", body(s)), 201, "reference post")
        ma = c.get("/v1/sessions/crash/metrics").json()
        mb = c.get("/v1/sessions/ref/metrics").json()
        eq(ma["segments"], N, "segments after the crashes")
        eq(ma["systems"], mb["systems"], "totals after crashes vs uninterrupted run")
        ta, tb = timeline(c, "crash"), timeline(c, "ref")
        eq([x["id"] for x in ta], [x["id"] for x in tb], "order")
        for x, y in zip(ta, tb):
            eq(x["scores"], y["scores"], "scores of %s" % x["id"])
            eq(x["totals"], y["totals"], "running totals of %s" % x["id"])
        c.close()

        # a graceful stop keeps everything too
        eq(srv.stop(), 0, "exit status after SIGTERM")
        srv.start()
        c = srv.client()
        eq(c.get("/v1/sessions/crash/metrics").json()["systems"], mb["systems"],
           "totals after a graceful restart")
        c.close()
        eq(srv.stop(), 0, "exit status after SIGTERM")
    finally:
        srv.kill()


# Where the stream of the next test stops: 12 segments after the checkpoint
# at 288 (one every 32nd seq) and 44 after the settle at 256 (--settle-every,
# 256 by default): the running totals of the last 12 and the content words of
# the last 44 are in no checkpoint and no settled history, only in the rows
# the POSTs wrote.
KILL_AT = 300


def same_answer(a, b, what):
    """a and b (POST or PUT answers) are equal but for the time they name."""
    for k in ("seq", "id", "scores", "totals", "signature", "glossary_version"):
        eq(a.get(k), b.get(k), "%s: %s" % (what, k))


def test_kill_9_between_checkpoints_then_cold_reads_equal_a_serial_run():
    """SIGKILL right after the KILL_AT-th acknowledged POST, then, with every
    cache cold (a new process), each read that rebuilds from the stored rows
    equals a session that got the same requests without a kill: the totals
    (/metrics), the word history of words of the settled and of the pending
    segments, the next POST (its recall reads the settled history and the
    pending words, its running totals the stored ones) and an edit (a replay
    from the checkpoint at 288, after settling the pending words)."""
    segs = tico19()[:KILL_AT + 1]
    srv = Server()
    try:
        c = srv.client()
        for sid in ("k", "ref"):
            c.create_session(id=sid, options=dict(OPTIONS))
        acked = {}
        for s in segs[:KILL_AT]:
            r = c.post("/v1/sessions/k/segments", body(s))
            expect_status(r, 201, "post of %s" % s["id"])
            acked[s["id"]] = r.json()
        c.close()
        srv.kill()  # every POST acknowledged; no graceful stop
        srv.start()
        c = srv.client()
        for s in segs[:KILL_AT]:  # the serial run, after the restart: nothing of it cold
            expect_status(c.post("/v1/sessions/ref/segments", body(s)), 201, "reference post")
        for x in timeline(c, "k"):
            same_answer(x, acked[x["id"]], "stored segment %s after the kill" % x["id"])
        ma, mb = c.jget("/v1/sessions/k/metrics"), c.jget("/v1/sessions/ref/metrics")
        eq(ma["segments"], KILL_AT, "segments after the kill")
        eq(ma["systems"], mb["systems"], "totals after the kill (cold) vs the serial run")
        eq(ma["systems"], acked[segs[KILL_AT - 1]["id"]]["totals"],
           "totals after the kill vs the last acknowledged answer's running totals")
        # words of a settled segment (the first) and of pending ones (the last two)
        words = set()
        for s in (segs[0], segs[KILL_AT - 2], segs[KILL_AT - 1]):
            words.update(w.strip(".,;:()\"'").lower() for w in s["translation"].split())
        checked = 0
        for w in sorted(x for x in words if x.isalpha() and len(x) > 3):
            q = urllib.parse.quote(w)
            ra = c.get("/v1/sessions/k/vocabulary/%s" % q)
            rb = c.get("/v1/sessions/ref/vocabulary/%s" % q)
            eq(ra.status, rb.status, "word history status of %r" % w)
            if ra.status == 200:
                ja, jb = ra.json(), rb.json()
                eq(ja.pop("session"), "k", "word history's session")
                jb.pop("session")
                eq(ja, jb, "word history of %r after the kill" % w)
                checked += 1
        check(checked >= 5, "only %d words with a history compared" % checked)
        # the next POST, scored cold (history and totals from the database)
        nxt = segs[KILL_AT]
        ra = c.post("/v1/sessions/k/segments", body(nxt))
        rb = c.post("/v1/sessions/ref/segments", body(nxt))
        expect_status(ra, 201, "next post after the kill")
        expect_status(rb, 201, "next reference post")
        same_answer(ra.json(), rb.json(), "the first POST after the kill")
        # an edit after the last checkpoint: replays from 288
        edited = dict(body(segs[KILL_AT - 10]), translation=segs[KILL_AT - 10]["hypothesis"])
        ra = c.put("/v1/sessions/k/segments/%s" % edited["id"], edited)
        rb = c.put("/v1/sessions/ref/segments/%s" % edited["id"], edited)
        eq(ra.status, rb.status, "edit status")
        expect_status(ra, 200, "edit after the kill")
        same_answer(ra.json(), rb.json(), "the edit after the kill")
        eq(c.jget("/v1/sessions/k/metrics")["systems"], c.jget("/v1/sessions/ref/metrics")["systems"],
           "totals after the edit")
        for x, y in zip(timeline(c, "k"), timeline(c, "ref")):
            same_answer(x, y, "segment %s after the edit" % x["id"])
        c.close()
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
