#!/usr/bin/env python3
"""Interleaved A/B of GET …/metrics?ci=0.95 on one grown session, cold and warm.

Usage: SIZES=1000,4000,16000,64000 ROUNDS=1 python3 bench/ci_ab.py BEFORE_BIN AFTER_BIN

The session of bench/whole_ab.py (standard profile, systems `base` and
`good`, 40 TICO-19 segments posted, copied in SQL to N). Each round serves
a fresh copy of the database with BEFORE_BIN, then AFTER_BIN, and measures
the server's CPU seconds (/proc/PID/stat utime + stime) of
  cold: the first GET …/metrics?ci=0.95 (nothing kept in memory), then
  warm: one more segment POSTed and GET …/metrics?ci=0.95 again (the
        version after a POST: the dashboard's case),
and compares the bodies (SHA-1) of the two binaries. "peak MB" is the
server's peak resident memory (VmHWM) after the cold GET: the database's
pages, the statistics kept for the next request (ci_cache) and the
request's transient memory.

The database is built by AFTER_BIN. Since schema/013 the segment rows carry
their ?ci= statistics records (server/live/ci_stats.h): a BEFORE_BIN that
predates that migration is served a copy downgraded to schema 12 (the column
dropped, which it would refuse otherwise), and a third line, "norec", serves
AFTER_BIN the rows with their records removed (a database written before
schema/013: the rows are parsed and scored as before).

DIFFERENT=1: the system `good` is not the reference translation itself (as
in bench/whole_ab.py's session) but the translation with every fifth word
dropped, so the two systems' statistics differ from each other and from the
reference side.
"""
import hashlib
import os
import shutil
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
sys.path.insert(0, os.path.join(ROOT, "tests", "reliability"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import harness  # noqa: E402
from rel import seg_body, tico19  # noqa: E402
from whole_ab import build_db, cpu_s  # noqa: E402

PATH = "/v1/sessions/w/metrics?ci=0.95"


def one(binary, master, db, n):
    shutil.copy(master, db)
    for ext in ("-wal", "-shm"):
        if os.path.exists(db + ext):
            os.remove(db + ext)
    harness.ADAPTMON = binary
    s = harness.Server("--request-timeout-ms", "0", db=db)
    cl = s.client()
    out = []
    for step in ("cold", "warm"):
        if step == "warm":
            t = tico19()[7]
            body = dict(seg_body(t, "extra"))
            body.pop("hypothesis", None)
            body["hypotheses"] = {"base": t["hypothesis"], "good": t["translation"]}
            harness.expect_status(cl.post("/v1/sessions/w/segments", body), 201, "POST")
        c0 = cpu_s(s.proc.pid)
        r = cl.request("GET", PATH, timeout=3600)
        d = cpu_s(s.proc.pid) - c0
        harness.expect_status(r, 200, "%s %s" % (binary, step))
        out.append((d, hashlib.sha1(r.body).hexdigest(), peak_mb(s.proc.pid)))
    cl.close()
    s.stop()
    return out


def peak_mb(pid):
    """The process's peak resident memory so far, MB (VmHWM)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def good_less_fifth_words(seg):
    """System good's hypothesis with DIFFERENT=1: the translation less
    every fifth word."""
    words = seg["translation"].split()
    return " ".join(w for i, w in enumerate(words) if i % 5 != 4)


def build_db_different(binary, n):
    """whole_ab.build_db's session with good = good_less_fifth_words."""
    return build_db(binary, n, good_less_fifth_words)


def knows_records(binary):
    """Whether binary embeds schema/013 (the rows' statistics records)."""
    with open(binary, "rb") as f:
        return b"013_segment_stats" in f.read()


def variant(master, suffix, sql):
    """A copy of master with sql run on it (None: master itself)."""
    if not sql:
        return master
    out = master + suffix
    shutil.copy(master, out)
    con = sqlite3.connect(out)
    with con:
        for q in sql:
            con.execute(q)
    con.execute("VACUUM")
    con.close()
    return out


DOWNGRADE = ["ALTER TABLE segments DROP COLUMN stats", "DELETE FROM schema_migrations WHERE version >= 13"]
NOREC = ["UPDATE segments SET stats = NULL"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    bins = [("before", os.path.abspath(sys.argv[1])), ("after", os.path.abspath(sys.argv[2]))]
    if knows_records(bins[1][1]):
        bins.append(("norec", bins[1][1]))
    sizes = [int(x) for x in os.environ.get("SIZES", "1000,4000,16000").split(",")]
    rounds = int(os.environ.get("ROUNDS", "1"))
    print("N        binary  cold CPU s   warm CPU s (after one POST)   peak MB after cold")
    for n in sizes:
        build = build_db_different if os.environ.get("DIFFERENT") == "1" else build_db
        db = build(bins[1][1], n)
        master = db + ".master"
        shutil.copy(db, master)
        new = knows_records(bins[1][1])
        masters = {name: variant(master, "." + name,
                                 NOREC if name == "norec" else
                                 DOWNGRADE if new and not knows_records(binary) else None)
                   for name, binary in bins}
        res = {}
        for _ in range(rounds):
            for name, binary in bins:
                res.setdefault(name, []).append(one(binary, masters[name], db, n))
        hashes = set()
        for name, _ in bins:
            cold = " ".join("%.2f" % r[0][0] for r in res[name])
            warm = " ".join("%.2f" % r[1][0] for r in res[name])
            peak = " ".join("%.0f" % r[0][2] for r in res[name])
            print("%-8d %-7s %-12s %-29s %s" % (n, name, cold, warm, peak))
            for r in res[name]:
                hashes.add((r[0][1], "cold"))
                hashes.add((r[1][1], "warm"))
        print("%-8d bodies %s" % (n, "identical" if len(hashes) == 2 else "DIFFER"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
