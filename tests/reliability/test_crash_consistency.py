#!/usr/bin/env python3
"""Crash consistency (short version; `make soak` runs the long one).

Several writer threads post unique segments into several sessions; the server
is killed with SIGKILL (kill -9) at random moments (KILLS times) and
restarted on the same database. After every restart every segment that got a
201 is read back (GET …/segments/{id}) and must equal the acknowledged
answer; the timelines have seqs 1..n and unique client ids. At the end, with
the server stopped, PRAGMA integrity_check is ok, the segment log has no
gap or duplicate, and every session's totals (/metrics "systems") equal a
replay of its stored requests, in seq order, on a fresh server.

Unlike tests/api/test_crash.py (one writer, one session, re-posting the same
stream), the writers here race each other in the same and in different
sessions. APITEST_SEED=N reproduces the kill points.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import CrashRun, scale  # noqa: E402
from harness import check, run_tests  # noqa: E402


def test_kill_9_with_racing_writers_loses_nothing():
    seed = int(os.environ.get("APITEST_SEED", time.time_ns() % 100000))
    print("# seed %d" % seed)
    run = CrashRun(rounds=scale(4, 3), threads=6, sessions=3, seed=seed,
                   min_run=scale(0.3, 3.0), max_run=scale(1.0, 6.0))
    s = run.run()
    print("# %(kills)d kills, %(acknowledged)d acknowledged, %(stored)d stored, %(seconds)ss" % s)
    check(s["kills"] >= 3, "at least 3 kills")
    check(s["acknowledged"] > 0, "some segments were acknowledged")


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
