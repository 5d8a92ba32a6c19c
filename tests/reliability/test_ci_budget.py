#!/usr/bin/env python3
"""GET /v1/sessions/{id}/metrics?ci=0.95 keeps to --request-timeout-ms: the
bootstrap of a big session (12,000 segments, two systems: seconds of CPU when
the rows carry no stored statistics, as rows written before schema 013 do)
is abandoned with 503 request-timeout like any request over its budget,
and the server goes on answering (the plain metrics, a small ?ci=).

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". Python standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, drop_ci_records, grow_session, seg_body, tico19  # noqa: E402
from harness import Server, check, eq, expect_problem, expect_status, run_tests  # noqa: E402


def test_ci_over_budget_is_503():
    srv = Server("--request-timeout-ms", "300")
    try:
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        c.create_session(id="small", options=dict(OPTIONS))
        segs = tico19()
        for k in range(40):
            expect_status(c.post("/v1/sessions/g/segments", seg_body(segs[k], "s%d" % k)), 201)
        for k in range(5):
            expect_status(c.post("/v1/sessions/small/segments", seg_body(segs[k], "s%d" % k)), 201)
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        grow_session(db, "g", 12000)
        drop_ci_records(db)  # with them the bootstrap fits 300 ms (~0.2 s)
        srv.kill()
        srv = Server("--request-timeout-ms", "300", db=db)
        c = srv.client()
        before = c.get("/v1/sessions/g/metrics")
        expect_status(before, 200)
        eq(before.json()["segments"], 12000, "segments of the grown session")
        r = c.get("/v1/sessions/g/metrics?ci=0.95", timeout=300)
        p = expect_problem(r, 503, "request-timeout", "?ci= on 12,000 segments over the budget")
        check("300 ms" in p["detail"], "the detail names the budget: %r" % p["detail"])
        eq(c.get("/v1/sessions/g/metrics").body, before.body, "plain metrics unchanged")
        small = c.get("/v1/sessions/small/metrics?ci=0.95")
        expect_status(small, 200, "a small session's ?ci=")
        check(small.json()["confidence"]["segments"] == 5, "small session answered")
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
