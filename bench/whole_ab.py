#!/usr/bin/env python3
"""Interleaved A/B of whole-session GET routes on one grown session.

Usage: N=16000 ROUNDS=2 python3 bench/whole_ab.py BEFORE_BIN AFTER_BIN PATH...

One session as bench/scale.py's bench_whole builds it (standard profile,
systems `base` and `good`, 40 TICO-19 segments posted, then copied in SQL
to N by tests/reliability/rel.py's grow_session). Each round serves a fresh
copy of that database with BEFORE_BIN, then AFTER_BIN, and GETs each PATH
once (the first GET of a version: nothing cached), recording the server's
CPU seconds (/proc/PID/stat utime + stime) and the body's SHA-1. Prints per
path the CPU seconds of each round and whether every body was identical.

A PATH written "POST /v1/..." is POSTed (e.g. "POST /v1/sessions/w/rescore");
from then on in the round the bodies are compared with their clock
readings (..._ms, ..._at) and the session's version and rewrite count
zeroed, since a rescore stamps its own time: list GETs after it (metrics,
export?format=json) to compare the rescored state of both binaries.
"""
import hashlib
import os
import re
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
import harness  # noqa: E402
from rel import grow_session, seg_body, tico19  # noqa: E402


def cpu_s(pid):
    """The server's CPU seconds: the run time of its threads in ns
    (/proc/PID/task/*/schedstat), not /proc/PID/stat's 10 ms ticks, which
    made a 0.1 s answer read 0.09 or 0.11 at random (the server's threads
    live as long as it does, so no time is lost with an exited thread)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total / 1e9


def timeless(body):
    """body with clock readings and version counters zeroed (see above)."""
    return re.sub(rb'"([a-z_]*_(?:ms|at)|version|rewrites)":("[^"]*"|-?[0-9]+)', rb'"\1":0', body)


def build_db(binary, n):
    harness.ADAPTMON = binary
    srv = harness.Server("--request-timeout-ms", "0")
    c = srv.client()
    c.create_session(id="w", options={"baseline_system": "base"})
    segs = tico19()
    for k in range(40):
        body = dict(seg_body(segs[k], "s%d" % k))
        body.pop("hypothesis", None)
        body["hypotheses"] = {"base": segs[k]["hypothesis"], "good": segs[k]["translation"]}
        harness.expect_status(c.post("/v1/sessions/w/segments", body), 201, "POST %d" % k)
    c.close()
    db = srv.db
    srv.stop()
    grow_session(db, "w", n)
    return db


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bins = {"before": os.path.abspath(sys.argv[1]), "after": os.path.abspath(sys.argv[2])}
    paths = sys.argv[3:]
    n = int(os.environ.get("N", "4000"))
    db = build_db(bins["after"], n)
    master = db + ".master"
    shutil.copy(db, master)
    res = {}
    for _ in range(int(os.environ.get("ROUNDS", "2"))):
        for name, binary in bins.items():
            shutil.copy(master, db)
            for ext in ("-wal", "-shm"):
                if os.path.exists(db + ext):
                    os.remove(db + ext)
            harness.ADAPTMON = binary
            s = harness.Server("--request-timeout-ms", "0", db=db)
            cl = s.client()
            posted = False
            for p in paths:
                method, _, path = p.rpartition(" ")
                method = method or "GET"
                posted = posted or method != "GET"
                c0 = cpu_s(s.proc.pid)
                r = cl.request(method, path, timeout=3600)
                d = cpu_s(s.proc.pid) - c0
                harness.expect_status(r, 200, "%s %s" % (name, p))
                body = timeless(r.body) if posted else r.body
                res.setdefault((p, name), []).append((d, hashlib.sha1(body).hexdigest()))
            cl.close()
            s.stop()
    print("%d segments, server CPU s per round (thread run time, schedstat)" % n)
    for p in paths:
        b, a = res[(p, "before")], res[(p, "after")]
        same = all(x[1] == b[0][1] for x in a + b)
        print("%-45s before %s after %s %s" % (
            p, " ".join("%.3f" % x[0] for x in b), " ".join("%.3f" % x[0] for x in a),
            "bodies identical" if same else "BODIES DIFFER"))


if __name__ == "__main__":
    main()
