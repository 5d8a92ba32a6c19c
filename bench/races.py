#!/usr/bin/env python3
"""Races: POSTs racing DELETE + re-create of the same session id (issue 10 §3).

Each round creates session "r<N>" with one option set, lets WRITERS threads
post 3 segments each while another thread deletes the session and re-creates
it with the other option set, then checks every stored segment against the
same requests posted serially into a fresh session with the re-created
session's options. Prints the answers by status and the number of stored
segments whose result differs from the serial one (scored with the other
incarnation's options).

usage: ADAPTMON=./adaptmon python3 bench/races.py [ROUNDS]   (default 300)
A count, not a timing: the numbers depend on scheduling, not on speed.
"""
import collections
import functools
import os
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "api"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "reliability"))
from harness import Server, base, tico19  # noqa: E402
from rel import OPTS_A, OPTS_B, new_session, run_threads, seg_body, timeline  # noqa: E402

OPTS = (OPTS_A, OPTS_B)
WRITERS = 6


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    segs = tico19()
    statuses = collections.Counter()
    stored = wrong = 0
    lock = threading.Lock()
    srv = Server("--threads", "8")
    try:
        c = srv.client()
        for rnd in range(rounds):
            sid = "r%d" % rnd
            first, second = OPTS[rnd % 2], OPTS[1 - rnd % 2]
            new_session(c, sid, first)
            barrier = threading.Barrier(WRITERS + 1)

            def writer(no):
                cl = srv.client()
                barrier.wait(30)
                for k in range(3):
                    s = segs[(rnd * 31 + no * 7 + k) % len(segs)]
                    r = cl.post(base(sid) + "/segments", seg_body(s, "w%d-%d" % (no, k)))
                    with lock:
                        statuses["POST %d" % r.status] += 1
                cl.close()

            def toggler():
                cl = srv.client()
                barrier.wait(30)
                r1 = cl.delete(base(sid))
                r2 = new_session(cl, sid, second)
                with lock:
                    statuses["DELETE %d" % r1.status] += 1
                    statuses["create %d" % r2.status] += 1
                cl.close()

            run_threads([functools.partial(writer, i) for i in range(WRITERS)] + [toggler])
            got = timeline(c, sid)
            ref = "ref%d" % rnd
            new_session(c, ref, second)
            for g in got:
                r = c.post(base(ref) + "/segments", g["request"]).json()
                stored += 1
                if any(g[k] != r[k] for k in ("signature", "scores", "totals")):
                    wrong += 1
        c.close()
        srv.stop()
    finally:
        srv.kill()
    print("rounds %d, writers %d x 3 posts" % (rounds, WRITERS))
    for k, v in sorted(statuses.items()):
        print("  %-12s %d" % (k, v))
    print("stored in re-created sessions: %d, scored with the wrong options: %d" % (stored, wrong))


if __name__ == "__main__":
    main()
