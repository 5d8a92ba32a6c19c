#!/usr/bin/env python3
"""The in-memory history counts change no answer (issue 12).

A POST's recall lookups read the session's word counts from memory when
the whole history fits the server's --history-cache budget, and otherwise
the settled counts from the database plus the pending words from memory.
Three servers get the same traffic: the default budget (every session's
history in memory), --history-cache 0 (every lookup reads the database) and
a budget too small for more than a few sessions (both paths in one server,
and caches dropped when a commit grows them past the budget). The traffic
crosses the settles of the pending words (every 32nd seq), mixes single
POSTs with batch POSTs (whose lookups add the batch's own earlier items),
edits a segment (a replay), clears nothing by hand, and restarts the
servers with SIGKILL in the middle (the counts are rebuilt from the
database). Every answer must be identical across the three, byte for byte
but the fields that name the time; /metrics reports the cache's bytes
(0 with the budget 0, at most about the budget for the small one).

With the whole history in memory, a POST is scored from the session's
state in memory without reading the database (ingest.c, am_post_fast),
and its commit checks that no write came in between. So every other write
of a session is mixed in between POSTs: a glossary PUT and DELETE, a
segment DELETE, a rescore, a session deleted and re-created under the same
id, a batch, an edit, a restart; and POSTs that need what memory does not
hold (a translator's and a new system's first totals), re-posts of a
stored id with the same body (200, the stored answer) and another (409).
/metrics shows that the default server took the memory path, and the one
without a cache never did, and that both counted the same segments scored.

Python standard library only.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, base, check, eq, expect_status, run_tests  # noqa: E402

WORDS = ["terrier", "man", "woman", "dog", "lady", "walks", "bites", "feeds", "park", "cat",
         "garden", "hound", "Terrier", "child", "river", "bridge", "storm", "vaccine", "mask",
         "fever", "cough", "doctor", "nurse", "hospital"]
SESSIONS = ["h-%d" % i for i in range(6)]
SMALL = 24 * 1024  # bytes: a few sessions' counts, not six
VOLATILE = ("created_ms", "created_at", "request_id", "elapsed_ms", "rescored_ms")
SERVERS = {}
SETTLE = ("--settle-every", "32")


def seg(i, k, prefix="s"):
    """Segment i of session k: a few words recur often (recall depends on
    what came before), others are new. From seq 33 on, session 1 names a
    translator on every third segment, and from 55 on session 3 posts a
    second system on every other one: entries whose first totals are not
    in memory."""
    w = [WORDS[(i * (k + 3) + j * 5 + (i // 7)) % len(WORDS)] for j in range(5)]
    w.append("new%dx%d" % (k, i))  # a word seen once
    body = {"id": "%s%d" % (prefix, i), "source": " ".join(w),
            "hypotheses": {"mt": "The %s %s the %s" % (w[0], w[2], w[5])},
            "translation": "The %s %s the %s near the %s %s" % (w[0], w[1], w[2], w[3], w[5])}
    if k == 1 and i >= 33 and i % 3 == 0:
        body["translator"] = "t%d" % (i % 2)
    if k == 3 and i >= 55 and i % 2 == 0:
        body["hypotheses"]["mt2"] = "The %s the %s %s" % (w[0], w[3], w[5])
    return body


GLOSSARY = [{"source": "dog", "targets": ["hound"]}, {"source": "storm", "targets": ["storm"]}]


def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def setup():
    # settles every 32nd seq (the default is 256): 100 posts cross three
    SERVERS["all"] = Server(*SETTLE)
    SERVERS["none"] = Server(*SETTLE, "--history-cache", "0")
    SERVERS["small"] = Server(*SETTLE, "--history-cache", "24KiB")


def teardown():
    for s in SERVERS.values():
        s.stop()


def each(fn):
    """fn(client) on every server; the answers, by server name."""
    out = {}
    for name, s in SERVERS.items():
        c = s.client()
        try:
            out[name] = fn(c)
        finally:
            c.close()
    return out


def same(answers, what):
    texts = {n: json.dumps(clean(a), sort_keys=True) for n, a in answers.items()}
    eq(texts["none"], texts["all"], what + ": default budget vs none")
    eq(texts["none"], texts["small"], what + ": small budget vs none")


def post(sid, body, status=201):
    def fn(c):
        r = c.post(base(sid) + "/segments", body)
        expect_status(r, status, "POST to %s" % sid)
        return r.json()
    same(each(fn), "POST %s of %s" % (body["id"] if isinstance(body, dict) else "batch", sid))


def gauge(c, name):
    text = c.get("/metrics").text
    m = re.search(r"^%s (\d+)$" % name, text, re.M)
    check(m, "/metrics reports " + name)
    return int(m.group(1))


def cache_bytes(c):
    return gauge(c, "adaptmon_history_cache_bytes")


def write(method, sid, path, body, status):
    """A write other than a POST of a segment, on every server: the same
    status and answer everywhere."""
    def fn(c):
        r = c.request(method, base(sid) + path, body)
        expect_status(r, status, "%s %s%s" % (method, sid, path))
        return r.json() if r.body else None
    same(each(fn), "%s %s%s" % (method, sid, path))


def create_all(sids):
    def create(c):
        for sid in sids:
            c.delete(base(sid))
            expect_status(c.post("/v1/sessions", {"id": sid, "source_lang": "en",
                                                  "target_lang": "en"}), 201, "create " + sid)
    each(create)


def test_the_history_cache_changes_no_answer():
    create_all(SESSIONS)
    n = since_start = 0  # POSTs, and those since the restart (the counter's start)
    for i in range(1, 101):
        for k, sid in enumerate(SESSIONS):
            if i in (40, 41):  # a batch of two items, once
                if i == 40:
                    post(sid, [seg(40, k), seg(41, k)], 200)
                continue
            post(sid, seg(i, k))
            n += 1
            since_start += i > 50
        # the other writes of a session, each between two POSTs
        if i == 12:
            write("PUT", SESSIONS[0], "/glossary", GLOSSARY, 200)
        if i == 27:
            write("DELETE", SESSIONS[0], "/glossary", None, 204)
        if i == 45:  # re-posts of a stored id: the stored answer; another body: 409
            for k, sid in enumerate(SESSIONS):
                post(sid, seg(44, k), 200)
                other = seg(44, k)
                other["translation"] += " again"
                post(sid, other, 409)
        if i == 60:
            write("DELETE", SESSIONS[2], "/segments/s30", None, 204)
        if i == 64:
            write("POST", SESSIONS[4], "/rescore", {}, 200)
        if i == 80:  # deleted and re-created: the old session's state is not the new one's
            write("DELETE", SESSIONS[5], "", None, 204)
            create_all(SESSIONS[5:])
        if i == 50:  # SIGKILL and restart: the counts are read again
            for s in SERVERS.values():
                s.kill()
                s.start()
        if i == 70:  # an edit replays the log from a checkpoint
            for k, sid in enumerate(SESSIONS):
                body = seg(20, k)
                body["translation"] += " storm"

                def fn(c, sid=sid, body=body):
                    r = c.put(base(sid) + "/segments/s20", body)
                    expect_status(r, 200, "PUT s20 of " + sid)
                    return r.json()
                same(each(fn), "PUT s20 of " + sid)
    check(n > 500, "enough segments posted")
    for sid in SESSIONS:
        same(each(lambda c, sid=sid: c.jget(base(sid) + "/metrics")), "metrics of " + sid)
        same(each(lambda c, sid=sid: c.jget(base(sid) + "/segments?limit=1000")),
             "segments of " + sid)
    # each segment is counted as scored once, whichever path stored it: a
    # POST that leaves the memory path (an entry not in memory, a repeated
    # id, a write in between) is not counted twice
    scored = each(lambda c: gauge(c, "adaptmon_segments_scored_total"))
    eq(scored["all"], scored["none"], "segments scored, default budget vs none")
    mem = each(lambda c: gauge(c, "adaptmon_posts_from_memory_total"))
    eq(mem["none"], 0, "no POST from memory without a history cache")
    check(since_start * 3 // 4 < mem["all"] < since_start,
          "most POSTs since the restart from memory with the default budget (%d of %d)"
          % (mem["all"], since_start))
    got = each(cache_bytes)
    eq(got["none"], 0, "no history cache with --history-cache 0")
    check(got["all"] > 0, "the default budget holds the sessions' counts")
    check(0 < got["small"] <= SMALL, "the small budget holds some counts, within it (%d B)"
          % got["small"])


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))
