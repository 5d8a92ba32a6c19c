#!/usr/bin/env python3
"""The scoring gate (--scoring-threads, issue 27 goal 1): at most that many
requests score a segment at once; the others wait for a slot.

With one slot and many concurrent writers — single POSTs to several
sessions, a batch and a PUT replay at the same time — every request is
answered, and every session's totals equal those of the same segments
posted one at a time to a server with the default gate: waiting at the
gate changes no answer and deadlocks nothing. /metrics shows the slots in
effect (the online CPUs by default) and the count of waits.

Python standard library only.
"""
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, base, eq, expect_status, metric_value, run_tests, shutdown, tico19  # noqa: E402

SESSIONS = 6
PER_SESSION = 12




def segs_of(k):
    segs = tico19()
    return [dict(segs[(k * PER_SESSION + i) % len(segs)], id="g%d-%d" % (k, i))
            for i in range(PER_SESSION)]


def fill(srv, concurrent):
    """Sessions s0…s5 get their segments (one by one, or concurrently: a
    thread per session, s0's as one batch, and s1's third segment PUT
    again after the others, a replay); returns each session's metrics."""
    c = srv.client()
    for k in range(SESSIONS):
        c.create_session(id="s%d" % k)
    errors = []

    def writer(k):
        w = srv.client()
        try:
            segs = segs_of(k)
            if k == 0 and concurrent:
                r = w.post(base("s0") + "/segments", segs, timeout=120)
                expect_status(r, 200, "batch")
                eq([it["status"] for it in r.json()["items"]], [201] * len(segs), "batch items")
            else:
                for s in segs:
                    expect_status(w.post(base("s%d" % k) + "/segments", s, timeout=120), 201,
                                  "POST s%d %s" % (k, s["id"]))
            if k == 1:  # a late edit: a replay from the last checkpoint
                s = dict(segs[2], translation=segs[2]["translation"] + " encore")
                r = w.put(base("s1") + "/segments/" + s["id"], s, timeout=120)
                expect_status(r, 200, "PUT replay")
        except Exception as e:  # reported by the main thread
            errors.append(e)
        finally:
            w.close()

    if concurrent:
        threads = [threading.Thread(target=writer, args=(k,)) for k in range(SESSIONS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
    else:
        for k in range(SESSIONS):
            writer(k)
    if errors:
        raise errors[0]
    out = []
    for k in range(SESSIONS):
        m = c.get(base("s%d" % k) + "/metrics").json()
        out.append((m["segments"], m["systems"]))
    c.close()
    return out


def test_one_slot_answers_as_the_default():
    one = Server("--scoring-threads", "1")
    try:
        c = one.client()
        eq(metric_value(c, "adaptmon_scoring_slots"), 1, "the slots of --scoring-threads 1")
        got = fill(one, True)
        # how many found the slot taken depends on timing (tests/unit/test_wspool.c
        # counts them deterministically); here only that the counter is there
        if metric_value(c, "adaptmon_scoring_waits_total") < 0:
            raise AssertionError("a negative count of scoring waits")
    finally:
        shutdown(one, c)
    ref = Server()
    try:
        c = ref.client()
        eq(metric_value(c, "adaptmon_scoring_slots"), os.cpu_count(), "the default: the online CPUs")
        want = fill(ref, False)
    finally:
        shutdown(ref, c)
    for k in range(SESSIONS):
        eq(got[k], want[k], "session s%d's totals" % k)


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
