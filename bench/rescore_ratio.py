#!/usr/bin/env python3
"""Instructions of a rescore against the scoring alone, for binaries A/B.

Usage: N=1000 ROUNDS=1 python3 bench/rescore_ratio.py BIN...

The session of bench/whole_ab.py (standard profile, systems `base` and
`good`, 40 TICO-19 segments posted, copied in SQL to N), built by the
first BIN (the oldest schema: a later binary migrates the copy it is
given when it opens it, before any request). Each round serves a fresh
copy with each BIN in turn under `valgrind --tool=callgrind
--toggle-collect=am_api_rescore` and POSTs one rescore, so only the
request's instructions are counted; then reads from callgrind_annotate
the request's total and the inclusive instructions of am_score_segment
(the scoring a POST does for the same segments) and prints both, per
segment, and their ratio (issue 27 goal 4: a rescore <= 2x the scoring).
Instructions, not time: the machine is shared and noisy, and perf has
no hardware counters here. About 2.5 minutes per binary at N=1000.
KEEP=DIR copies each callgrind file there (callgrind_annotate --tree=calling
for the profile).
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
import harness  # noqa: E402
import whole_ab  # noqa: E402


def annotate(out):
    """(total, am_score_segment inclusive) instructions of a callgrind file."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], check=True,
                          capture_output=True, text=True).stdout

    def num(pattern):
        m = re.search(r"^\s*([0-9,]+) .*" + pattern, text, re.M)
        return int(m.group(1).replace(",", "")) if m else 0
    return num(r"PROGRAM TOTALS"), num(r"score\.c:am_score_segment \[")


def one(binary, master, tag):
    """Instructions of one rescore by binary on a copy of master."""
    work = harness.tmpdir("adaptmon-rsratio-")
    db = os.path.join(work, "w.db")
    shutil.copy(master, db)
    out = os.path.join(work, "callgrind.%s.out" % tag)
    wrapper = os.path.join(work, "vg.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s "
                "--toggle-collect=am_api_rescore %s \"$@\"\n" % (out, binary))
    os.chmod(wrapper, 0o755)
    harness.ADAPTMON = wrapper
    srv = harness.Server("--request-timeout-ms", "0", db=db, ready_timeout=600)
    try:
        c = srv.client()
        r = c.request("POST", "/v1/sessions/w/rescore", timeout=7200)
        harness.expect_status(r, 200, "rescore by " + binary)
        c.close()
        srv.stop(timeout=600)
    finally:
        srv.kill()
    if os.environ.get("KEEP"):
        shutil.copy(out, os.environ["KEEP"])
    return annotate(out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    bins = [os.path.abspath(b) for b in sys.argv[1:]]
    n = int(os.environ.get("N", "1000"))
    master = whole_ab.build_db(bins[0], n) + ".master"
    shutil.copy(master[:-len(".master")], master)
    print("%d segments: instructions of the rescore request (callgrind)" % n)
    for rnd in range(int(os.environ.get("ROUNDS", "1"))):
        for i, b in enumerate(bins):
            total, scoring = one(b, master, "%d-%d" % (rnd, i))
            print("%-50s total %13d (%7d/segment)  scoring %13d (%7d/segment)  ratio %.2f" % (
                b, total, total // n, scoring, scoring // n,
                total / scoring if scoring else float("nan")), flush=True)


if __name__ == "__main__":
    main()
