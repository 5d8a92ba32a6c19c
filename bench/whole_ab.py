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
BUILD_WITH=before builds the database with BEFORE_BIN (default: AFTER_BIN).
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


def cpu_sample(pid):
    """(run time in ns of each of the server's threads, from
    /proc/PID/task/*/schedstat; CPU seconds of the whole process from
    /proc/PID/stat, which keeps the time of exited threads but counts in
    10 ms ticks)."""
    ns = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                ns[t] = int(f.read().split()[0])
        except OSError:
            pass
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return ns, (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def cpu_delta(a, b):
    """The server's CPU seconds between samples a and b: in ns from the
    threads, unless the ticks say more by over two ticks (a thread that
    ran in between has exited: a whole-session request may run on a
    thread of its own, whose time only the process total keeps)."""
    ns = sum(v - a[0].get(t, 0) for t, v in b[0].items() if t in a[0] or v) / 1e9
    ticks = b[1] - a[1]
    return ticks if ticks - ns > 0.02 else ns


def cpu_s(pid):
    """CPU seconds of the process in ticks (whole_ab's callers before the
    sampling above; kept for bench/scale.py-style use)."""
    return cpu_sample(pid)[1]


def timeless(body):
    """body with clock readings and version counters zeroed (see above)."""
    return re.sub(rb'"([a-z_]*_(?:ms|at)|version|rewrites)":("[^"]*"|-?[0-9]+)', rb'"\1":0', body)


def build_db(binary, n, good=None):
    """The database of session "w" (systems base and good, 40 TICO-19
    segments posted, grown to n): good(seg) is system good's hypothesis
    (default: the translation itself)."""
    harness.ADAPTMON = binary
    srv = harness.Server("--request-timeout-ms", "0")
    c = srv.client()
    c.create_session(id="w", options={"baseline_system": "base"})
    segs = tico19()
    for k in range(40):
        body = dict(seg_body(segs[k], "s%d" % k))
        body.pop("hypothesis", None)
        body["hypotheses"] = {"base": segs[k]["hypothesis"],
                              "good": good(segs[k]) if good else segs[k]["translation"]}
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
    # BUILD_WITH=before: the database made by the before binary, for an
    # after binary with a newer schema (it migrates its copy at open; the
    # before binary would refuse the after binary's schema)
    db = build_db(bins[os.environ.get("BUILD_WITH", "after")], n)
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
            for i, p in enumerate(paths):
                method, _, path = p.rpartition(" ")
                method = method or "GET"
                posted = posted or method != "GET"
                c0 = cpu_sample(s.proc.pid)
                r = cl.request(method, path, timeout=3600)
                d = cpu_delta(c0, cpu_sample(s.proc.pid))
                harness.expect_status(r, 200, "%s %s" % (name, p))
                body = timeless(r.body) if posted else r.body
                res.setdefault((i, name), []).append((d, hashlib.sha1(body).hexdigest()))
            cl.close()
            s.stop()
    print("%d segments, server CPU s per round (thread run time, schedstat)" % n)
    for i, p in enumerate(paths):
        b, a = res[(i, "before")], res[(i, "after")]
        same = all(x[1] == b[0][1] for x in a + b)
        print("%-45s before %s after %s %s" % (
            p, " ".join("%.3f" % x[0] for x in b), " ".join("%.3f" % x[0] for x in a),
            "bodies identical" if same else "BODIES DIFFER"))


if __name__ == "__main__":
    main()
