#!/usr/bin/env python3
"""Compact glossaries of evicted sessions (issue 27 goal 2).

Thousands of sessions, each on a glossary of its own (10 … 60 entries,
some of them words of the TICO-19 segments, so that terms match, deviate
and are forbidden), post round-robin to a server whose --session-memory
holds only a part of their compiled scorers: nearly every POST rebuilds its
session's runtime, from the compact glossary the eviction kept instead of
the stored JSON (server/live/sess_share.c). Every answer must be byte for
byte that of a server with the default budget, where no runtime is ever
evicted, and /metrics must show the rebuilds made from compact glossaries
(before the change: none; the counter did not exist).

GLOSSARY_FORMS_SESSIONS sets the number of sessions (default 300 in make test;
the budget scales with it; 2000 sessions take ~5.5 min on a loaded 2-core machine).
Python standard library only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, base, eq, expect_status, metric_value, run_tests, shutdown, tico19  # noqa: E402

SESSIONS = int(os.environ.get("GLOSSARY_FORMS_SESSIONS", "300"))
ROUNDS = 2
# room for about a third of the compiled scorers (each ~35 KiB counted), and
# a quarter of it for the compact glossaries (~1.5 … 6 KiB each)
BUDGET = SESSIONS * 16 << 10


def glossary(i, segs):
    """Session i's glossary: words of a segment mapped to words of its
    translation or not (deviations), one forbidden, one case-sensitive, and
    entries of its own."""
    seg = segs[i % len(segs)]
    src = [w for w in seg["source"].split() if len(w) > 3]
    tgt = [w for w in seg["translation"].split() if len(w) > 3]
    g = []
    for k, w in enumerate(src[:1 + i % 5]):
        g.append({"source": w, "targets": [tgt[(k + i) % len(tgt)] if tgt else "x%d" % i]})
    if len(src) > 5:
        g.append({"source": src[5], "targets": [src[5]], "forbidden": True})
    g.append({"source": "Own%d" % i, "targets": ["Propre%d" % i], "case_sensitive": True})
    for k in range(10 + (i * 7) % 51 - len(g)):
        g.append({"source": "s%dt%d word" % (i, k), "targets": ["c%dt%d mot" % (i, k), "alt%d" % k]})
    return g




def run(srv):
    """Creates the sessions, posts ROUNDS rounds round-robin; returns every
    answer (its creation time removed) in order."""
    segs = tico19()
    c = srv.client()
    for i in range(SESSIONS):
        c.create_session(id="f%d" % i)
        expect_status(c.put(base("f%d" % i) + "/glossary", glossary(i, segs)), 200,
                      "PUT glossary f%d" % i)
    out = []
    for rnd in range(ROUNDS):
        for i in range(SESSIONS):
            seg = dict(segs[(i + rnd) % len(segs)], id="r%d" % rnd)
            r = c.post(base("f%d" % i) + "/segments", seg)
            expect_status(r, 201, "POST f%d round %d" % (i, rnd))
            body = r.json()
            body.pop("created_ms", None)
            out.append(json.dumps(body, sort_keys=True))
    return c, out


def test_rebuilt_from_compact_glossaries_answers_as_never_evicted():
    small = Server("--session-memory", str(BUDGET))
    try:
        c, got = run(small)
        evictions = metric_value(c, "adaptmon_session_evictions_total")
        builds = metric_value(c, "adaptmon_session_glossary_form_builds_total")
        used = metric_value(c, "adaptmon_session_memory_bytes")
        forms = metric_value(c, "adaptmon_session_glossary_form_bytes")
    finally:
        shutdown(small, c)
    if evictions < SESSIONS // 2:
        raise AssertionError("the budget was meant to evict: %d evictions" % evictions)
    # the second round rebuilt most runtimes, from the forms the first kept
    if builds < SESSIONS // 4:
        raise AssertionError("%d runtimes built from compact glossaries (%d evictions)" %
                             (builds, evictions))
    if used > BUDGET or forms > BUDGET // 4:
        raise AssertionError("over the budget: %d bytes used, %d in forms" % (used, forms))
    ref = Server()
    try:
        c, want = run(ref)
        eq(metric_value(c, "adaptmon_session_evictions_total"), 0, "no eviction with the default budget")
    finally:
        shutdown(ref, c)
    eq(len(got), len(want), "answers")
    for k, (a, b) in enumerate(zip(got, want)):
        if a != b:
            raise AssertionError("answer %d (session f%d) differs:\n%s\n%s" %
                                 (k, k % SESSIONS, a[:600], b[:600]))


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
