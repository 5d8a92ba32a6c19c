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
VOLATILE = ("created_ms", "created_at", "request_id", "elapsed_ms")
SERVERS = {}


def seg(i, k, prefix="s"):
    """Segment i of session k: a few words recur often (recall depends on
    what came before), others are new."""
    w = [WORDS[(i * (k + 3) + j * 5 + (i // 7)) % len(WORDS)] for j in range(5)]
    w.append("new%dx%d" % (k, i))  # a word seen once
    return {"id": "%s%d" % (prefix, i), "source": " ".join(w),
            "hypotheses": {"mt": "The %s %s the %s" % (w[0], w[2], w[5])},
            "translation": "The %s %s the %s near the %s %s" % (w[0], w[1], w[2], w[3], w[5])}


def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x


def setup():
    SERVERS["all"] = Server()
    SERVERS["none"] = Server("--history-cache", "0")
    SERVERS["small"] = Server("--history-cache", "24KiB")


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


def cache_bytes(c):
    text = c.get("/metrics").text
    m = re.search(r"^adaptmon_history_cache_bytes (\d+)$", text, re.M)
    check(m, "/metrics reports adaptmon_history_cache_bytes")
    return int(m.group(1))


def test_the_history_cache_changes_no_answer():
    def create(c):
        for sid in SESSIONS:
            c.delete(base(sid))
            expect_status(c.post("/v1/sessions", {"id": sid, "source_lang": "en",
                                                  "target_lang": "en"}), 201, "create " + sid)
    each(create)
    n = 0
    for i in range(1, 101):
        for k, sid in enumerate(SESSIONS):
            if i in (40, 41):  # a batch of two items, once
                if i == 40:
                    post(sid, [seg(40, k), seg(41, k)], 200)
                continue
            post(sid, seg(i, k))
            n += 1
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
    got = each(cache_bytes)
    eq(got["none"], 0, "no history cache with --history-cache 0")
    check(got["all"] > 0, "the default budget holds the sessions' counts")
    check(0 < got["small"] <= SMALL, "the small budget holds some counts, within it (%d B)"
          % got["small"])


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))
