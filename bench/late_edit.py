#!/usr/bin/env python3
"""The cost of a late edit (issue 13 §4): PUT and DELETE near the end of a
session of N segments.

A session (en-fr, standard profile = every metric, the TICO-19
f_en-fr_XX.csv glossary) gets N TICO-19 segments by batch POSTs (so each
POST leaves what the server keeps for replays, e.g. the checkpoints of
schema/008); then
segment N - 10 is replaced by PUT (REPS times, alternating two bodies) and
segments N - 10, N - 11, … are deleted (REPS DELETEs); last, segment 2 is
replaced once (a replay of the whole session, for comparison). Reports the
median wall time of each, the segments re-scored per edit
(adaptmon_replay_segments_total on /metrics; null for a binary without it)
and the most pages one write transaction wrote
(adaptmon_store_write_pages_max).

Usage: python3 bench/late_edit.py [ADAPTMON] [N] [REPS]
  ADAPTMON  the binary (default ./adaptmon)
  N         segments of the session (default 3000)
  REPS      edits of each kind (default 5)
Prints one JSON line.
"""
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reliability"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "api"))
if len(sys.argv) > 1:
    os.environ["ADAPTMON"] = os.path.abspath(sys.argv[1])
from rel import seg_body, tico19  # noqa: E402
from harness import Server, base  # noqa: E402


GLOSSARY = os.path.join(HERE, "..", "data", "glossaries", "tico19", "f_en-fr_XX.csv")


def gauge(c, name):
    m = re.search(r"^%s (\d+)$" % name, c.get("/metrics").text, re.M)
    return int(m.group(1)) if m else None


def replayed(c):
    return gauge(c, "adaptmon_replay_segments_total")


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    segs = tico19()
    srv = Server()
    try:
        c = srv.client()
        r = c.post("/v1/sessions", {"id": "big", "source_lang": "en", "target_lang": "fr"})
        assert r.status == 201, r.text
        with open(GLOSSARY, encoding="utf-8") as f:
            r = c.put(base("big") + "/glossary", f.read().encode(), ctype="text/csv")
        assert r.status == 200, r.text
        body = [seg_body(segs[k % len(segs)], "s%d" % k) for k in range(n)]
        for k in range(0, n, 500):
            r = c.post(base("big") + "/segments", body[k:k + 500])
            assert r.status == 200, r.text
        late = n - 10  # segment n - 10, id s{n - 11}
        put_s, put_n, del_s, del_n = [], [], [], []
        for i in range(reps):
            b = dict(body[late - 1])
            b["translation"] = b["hypothesis"] if i % 2 == 0 else body[late - 1]["translation"]
            r0 = replayed(c)
            t = time.monotonic()
            r = c.put(base("big") + "/segments/s%d" % (late - 1), b)
            put_s.append(time.monotonic() - t)
            assert r.status == 200, r.text
            put_n.append(None if r0 is None else replayed(c) - r0)
        for i in range(reps):
            r0 = replayed(c)
            t = time.monotonic()
            r = c.delete(base("big") + "/segments/s%d" % (late - 1 - i))
            del_s.append(time.monotonic() - t)
            assert r.status == 204, r.text
            del_n.append(None if r0 is None else replayed(c) - r0)
        b = dict(body[1], translation=body[1]["hypothesis"])
        t = time.monotonic()
        r = c.put(base("big") + "/segments/s1", b)
        early = time.monotonic() - t
        assert r.status == 200, r.text
        print(json.dumps({"segments": n, "edited": late, "reps": reps,
                          "put_s": round(statistics.median(put_s), 4), "put_rescored": put_n,
                          "delete_s": round(statistics.median(del_s), 4),
                          "delete_rescored": del_n, "put_segment_2_s": round(early, 4),
                          "write_pages_max": gauge(c, "adaptmon_store_write_pages_max")}))
        c.close()
        srv.stop()
    finally:
        srv.kill()


if __name__ == "__main__":
    main()
