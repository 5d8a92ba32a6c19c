#!/usr/bin/env python3
"""How long one long write makes the other sessions wait (issue 10 §2).

For each long write (a PUT replay of segment 2, a DELETE of segment 2, a
rescore, a DELETE of the session) of a session grown to N segments (20 posted, the rest grown in SQL
as tests/reliability/rel.py grow_session does), a probe posts one TICO-19
segment every 10 ms into another session while the write runs, and reports
the probe's worst and median POST latency during the write, the write's own
duration, and the /metrics gauge adaptmon_store_write_pages_max (the most
pages one write transaction wrote).

Usage: python3 bench/holds.py [ADAPTMON] [N] [OPS]
  ADAPTMON  the binary (default ./adaptmon)
  N         segments of the grown session (default 30000)
  OPS       comma list of replay,segdelete,rescore,delete (default all)
Prints one JSON line per operation.
"""
import json
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "reliability"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "api"))
if len(sys.argv) > 1:
    os.environ["ADAPTMON"] = os.path.abspath(sys.argv[1])
from rel import OPTS_A, grow_session, new_session, seg_body, tico19  # noqa: E402
from harness import Server, base  # noqa: E402


def one(op, n, segs):
    srv = Server()
    try:
        c = srv.client()
        new_session(c, "big", OPTS_A)
        new_session(c, "other", OPTS_A)
        for k in range(20):
            c.post(base("big") + "/segments", seg_body(segs[k], "s%d" % k))
        c.close()
        srv.stop()
        grow_session(srv.db, "big", n)
        srv.start()
        c = srv.client()
        stop = threading.Event()
        lat = []
        window = []

        def probe():
            pc = srv.client()
            i = 0
            while not stop.is_set():
                t = time.perf_counter()
                pc.post(base("other") + "/segments", seg_body(segs[i % len(segs)], "o%d" % i))
                lat.append((t, time.perf_counter() - t))
                i += 1
                time.sleep(0.01)
            pc.close()

        th = threading.Thread(target=probe)
        th.start()
        time.sleep(0.5)
        t0 = time.perf_counter()
        if op == "replay":
            ch = seg_body(segs[1], "s1")
            ch["hypothesis"] = segs[1]["translation"]
            r = c.put(base("big") + "/segments/s1", ch)
        elif op == "segdelete":
            r = c.delete(base("big") + "/segments/s1")
        elif op == "rescore":
            r = c.post(base("big") + "/rescore")
        else:
            r = c.delete(base("big"))
        t1 = time.perf_counter()
        time.sleep(0.3)
        stop.set()
        th.join()
        window = sorted(d for t, d in lat if t0 <= t <= t1)
        m = re.search(r"^adaptmon_store_write_pages_max (\d+)$", c.get("/metrics").text, re.M)
        pages = int(m.group(1)) if m else None  # older binaries have no such gauge
        c.close()
        srv.stop()
        return {"op": op, "segments": n, "status": r.status, "seconds": round(t1 - t0, 3),
                "probe_posts": len(window),
                "probe_max_ms": round(1000 * window[-1], 1) if window else None,
                "probe_p50_ms": round(1000 * window[len(window) // 2], 1) if window else None,
                "write_pages_max": pages}
    finally:
        srv.kill()


def main():
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 30000
    ops = (sys.argv[3] if len(sys.argv) > 3 else "replay,segdelete,rescore,delete").split(",")
    segs = tico19()
    for op in ops:
        print(json.dumps(one(op, n, segs)), flush=True)


if __name__ == "__main__":
    main()
