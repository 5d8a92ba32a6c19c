#!/usr/bin/env python3
"""`make soak`: the long crash/concurrency run (tests/RELIABILITY.md).

 1. Crash consistency: SOAK_KILLS (default 25) rounds of 8 writer threads
    posting into 4 sessions, SIGKILL at a random moment (0.2–3 s into the
    round), restart, every acknowledged segment read back and compared; at
    the end integrity_check, gap-free seqs, unique client ids and totals
    equal to a replay of each session's log on a fresh server.
 2. Concurrency: SOAK_CONCURRENCY (default 3) runs of the 64-client test of
    tests/reliability/test_concurrency.py.

Prints a summary; exits non-zero on any violation. SOAK_SEED=N reproduces.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import CrashRun  # noqa: E402
import test_concurrency  # noqa: E402


def main():
    kills = int(os.environ.get("SOAK_KILLS", "25"))
    conc = int(os.environ.get("SOAK_CONCURRENCY", "3"))
    seed = int(os.environ.get("SOAK_SEED", time.time_ns() % 1000000))
    t0 = time.monotonic()
    print("soak: seed %d, %d kills, %d concurrency runs" % (seed, kills, conc), flush=True)
    ok = True
    try:
        run = CrashRun(rounds=kills, threads=8, sessions=4, seed=seed, min_run=0.2, max_run=3.0,
                       log=lambda m: print(m, flush=True))
        s = run.run()
        print("soak crash: %(kills)d kills, %(answers)d answers, %(acknowledged)d acknowledged, "
              "%(stored)d stored, 0 lost, 0 duplicated, replay equal, integrity ok, "
              "%(seconds)ss" % s, flush=True)
    except AssertionError as e:
        ok = False
        print("soak crash: FAILED: %s" % e, flush=True)
    for i in range(conc):
        t1 = time.monotonic()
        try:
            test_concurrency.test_64_clients_same_and_different_sessions()
            print("soak concurrency %d: 64 clients x %d posts, seqs gap-free, replay equal, "
                  "%.1fs" % (i + 1, test_concurrency.PER_CLIENT, time.monotonic() - t1),
                  flush=True)
        except AssertionError as e:
            ok = False
            print("soak concurrency %d: FAILED: %s" % (i + 1, e), flush=True)
    print("soak: %s in %.0fs" % ("PASSED" if ok else "FAILED", time.monotonic() - t0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
