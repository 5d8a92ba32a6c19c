#!/usr/bin/env python3
"""The session cache holds at most its memory budget (issue 25, item 2).

* Large glossaries in many sessions (--session-memory 32MiB, ten sessions
  with 20,000-entry glossaries, ~14 MB compiled each): after every round of
  POSTs into all of them /metrics counts at most the budget
  (adaptmon_session_memory_bytes), the evictions are counted, RSS stays
  flat from one round to the next, and after the sessions are DELETEd the
  counted bytes are 0 and RSS falls back near where it started.
* A replay over five glossary versions builds one older version at a
  time: the peak the cache counted is at most the budget plus one runtime
  (before: one scorer per version, all at once).

Unbounded, the ten sessions alone held ~140 MB of compiled scorers.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import (OPTS_A, SLOW, new_session, scale, seg_body, tico19)  # noqa: E402
from harness import (Server, base, check, eq, expect_status, run_tests)  # noqa: E402

MIB = 1 << 20
# RSS is glibc malloc's under test; valgrind's and ASan's allocators keep their own
NO_RSS = SLOW or "asan" in os.environ.get("ADAPTMON", "")
ENTRIES = scale(20000, 4000)
# under valgrind the glossaries are a fifth as big: so is the budget, so that
# ten of them still overflow it and evictions are exercised
BUDGET = scale(32, 6) * MIB
SESSIONS = 10


def glossary(n, salt):
    return [{"source": "term%d w%d" % (k, salt), "targets": ["terme%d" % k, "mot%d" % k]}
            for k in range(n)]


def rss(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def metrics(c):
    r = c.get("/metrics")
    expect_status(r, 200, "/metrics")
    out = {}
    for line in r.text.splitlines():
        if line.startswith("adaptmon_session") or line.startswith("adaptmon_sessions_cached"):
            name, value = line.split()
            out[name] = float(value)
    return out


def test_large_glossaries_in_many_sessions_stay_within_the_budget():
    srv = Server("--session-memory", "%dMiB" % (BUDGET // MIB))
    try:
        c = srv.client()
        segs = tico19()
        rss0 = rss(srv)
        m = metrics(c)
        eq(m["adaptmon_session_memory_budget_bytes"], BUDGET, "the budget in /metrics")
        ids = ["m%d" % i for i in range(SESSIONS)]
        for i, sid in enumerate(ids):
            expect_status(new_session(c, sid, OPTS_A), 201, "create " + sid)
            expect_status(c.put(base(sid) + "/glossary", glossary(ENTRIES, i)), 200, "glossary")
        per_round = []
        for rnd in range(2):
            for i, sid in enumerate(ids):
                body = seg_body(segs[(rnd * SESSIONS + i) % len(segs)], "r%d" % rnd)
                expect_status(c.post(base(sid) + "/segments", body), 201, "POST into " + sid)
                m = metrics(c)
                check(m["adaptmon_session_memory_bytes"] <= BUDGET,
                      "counted %d bytes > budget %d after POST into %s"
                      % (m["adaptmon_session_memory_bytes"], BUDGET, sid))
            per_round.append(rss(srv))
        m = metrics(c)
        check(m["adaptmon_session_evictions_total"] >= 2 * SESSIONS - 4,
              "evictions counted: %r" % m)
        check(m["adaptmon_session_memory_bytes"] > BUDGET / 4, "the cache is in use: %r" % m)
        print("  rss: start %.0f MB, rounds %s MB, counted %.0f MB"
              % (rss0 / MIB, ["%.0f" % (x / MIB) for x in per_round],
                 m["adaptmon_session_memory_bytes"] / MIB))
        if NO_RSS:  # another allocator: its RSS says nothing about ours
            per_round = [0, 0]
        # flat: the second round holds what the first did (unbounded: +10 scorers)
        check(per_round[1] - per_round[0] < 24 * MIB,
              "RSS grew %.0f MB between two rounds" % ((per_round[1] - per_round[0]) / MIB))
        for sid in ids:
            expect_status(c.delete(base(sid)), 204, "DELETE " + sid)
        m = metrics(c)
        eq(m["adaptmon_session_memory_bytes"], 0, "counted bytes after the deletes")
        after = 0 if NO_RSS else rss(srv)
        rss0 = 0 if NO_RSS else rss0
        print("  rss after the deletes: %.0f MB" % (after / MIB))
        check(after - rss0 < BUDGET + 24 * MIB,
              "RSS %.0f MB after the deletes, %.0f MB at start" % (after / MIB, rss0 / MIB))
        check(after < per_round[1] - 8 * MIB or per_round[1] - rss0 < 16 * MIB,
              "memory returned after the deletes: %.0f -> %.0f MB"
              % (per_round[1] / MIB, after / MIB))
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_replay_over_many_glossary_versions_builds_one_at_a_time():
    srv = Server("--session-memory", "%dMiB" % (BUDGET // MIB), "--request-timeout-ms", "0")
    try:
        c = srv.client()
        segs = tico19()
        expect_status(new_session(c, "v", OPTS_A), 201, "create")
        versions = 5
        for k in range(versions):
            expect_status(c.put(base("v") + "/glossary", glossary(ENTRIES, 100 + k)), 200,
                          "glossary version %d" % (k + 1))
            expect_status(c.post(base("v") + "/segments", seg_body(segs[k], "s%d" % k)), 201,
                          "POST s%d" % k)
        one = metrics(c)["adaptmon_session_memory_bytes"]  # the session's own runtime
        before = c.jget(base("v") + "/metrics")["systems"]
        r = c.put(base("v") + "/segments/s0", seg_body(segs[0], "s0"), timeout=120)
        expect_status(r, 200, "the replay over %d glossary versions" % versions)
        eq(c.jget(base("v") + "/metrics")["systems"], before, "totals after s0 replaced by itself")
        m = metrics(c)
        print("  one runtime %.1f MB, peak %.1f MB" % (one / MIB,
                                                       m["adaptmon_session_memory_peak_bytes"] / MIB))
        check(m["adaptmon_session_memory_peak_bytes"] <= BUDGET + 1.2 * one,
              "peak %d > budget + one runtime (%d)" % (m["adaptmon_session_memory_peak_bytes"], one))
        check(m["adaptmon_session_memory_bytes"] <= BUDGET, "at rest within the budget")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


if __name__ == "__main__":
    run_tests(globals())
