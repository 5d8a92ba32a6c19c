#!/usr/bin/env python3
"""tests/tools/test_run.py — tests/run.sh on a tree of its own (fake unit
binaries that print cmocka's lines, fake suites that print "N passed,
N failed"): the totals line and the exit status must not depend on JOBS,
JOBS=2 must run two items at once, longest first by the durations file,
each item's output printed whole, each item run once, SERIAL_ITEMS alone
at the end, and an item that reads its standard input must not eat the
lanes' lists; the PostgreSQL pass's suites run in PG_JOBS lanes of their
own with ADAPTMON_TEST_PG_QUICK=1. Ends with "N passed, N failed";
APITEST_ONLY=<substring> selects cases by name."""
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "api"))
from harness import Skip, run_tests  # noqa: E402

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run.sh")

UNIT = """#!/bin/sh
echo "[==========] Running {n} test(s)."
{body}
echo "[  PASSED  ] {p} test(s)."
[ {f} -eq 0 ] || echo "[  FAILED  ] {f} test(s), listed below:"
exit {f}
"""

SUITE = """import os, sys, time
{body}
print("{line}")
sys.exit({rc})
"""


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def tree(d, units=(), suites=()):
    """units: (name, passed, failed, shell body); suites: (name, python body,
    summary line, exit status). Writes them under d (b/tests, tests/x)."""
    for name, p, f, body in units:
        write(os.path.join(d, "b", "tests", name), UNIT.format(n=p + f, p=p, f=f, body=body), 0o755)
    for name, body, line, rc in suites:
        write(os.path.join(d, "tests", "x", name), SUITE.format(body=body, line=line, rc=rc))


def run(d, jobs, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("VALGRIND", "SUITES", "VALGRIND_SUITES", "DURATIONS", "SERIAL_ITEMS",
                      "APITEST_RECORD_DIR", "JOBS")}
    e.update(BUILD="b", SUITES="tests/x/test_*.py", JOBS=str(jobs), DURATIONS="none.txt")
    e.update(env)
    p = subprocess.run(["sh", RUN], cwd=d, env=e, stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout


def mixed(d):
    tree(d, units=[("test_u1", 3, 0, "sleep 0.3"), ("test_u2", 2, 1, "")],
         suites=[("test_a.py", "time.sleep(0.3)", "4 passed, 0 failed", 0),
                 ("test_b.py", "", "5 passed, 0 failed, 2 skipped", 0),
                 ("test_c.py", "", "1 passed, 0 failed", 3),
                 ("test_d.py", "", "6 passed, 1 failed", 1)])


def test_totals_and_status_same_for_any_jobs():
    with tempfile.TemporaryDirectory() as d:
        mixed(d)
        seen = set()
        for jobs in (1, 2, 3):
            rc, out = run(d, jobs)
            last = out.strip().splitlines()[-1]
            # 3+2 units, 4+5+1+6 suites; u2 1 failed, c exited 3 (one more), d 1 failed
            assert last == "21 passed, 3 failed, 2 skipped", (jobs, out)
            assert rc == 1, (jobs, rc)
            assert "!! tests/x/test_c.py exited with status 3" in out, out
            seen.add(last)
        assert len(seen) == 1


def test_all_green_exits_zero():
    with tempfile.TemporaryDirectory() as d:
        tree(d, units=[("test_u", 1, 0, "")], suites=[("test_a.py", "", "2 passed, 0 failed", 0)])
        rc, out = run(d, 2)
        assert rc == 0 and out.strip().endswith("3 passed, 0 failed"), out


def test_two_jobs_run_at_once():
    # each item waits (up to 10 s) for the other's start mark: with one lane
    # the first would give up, with two both see each other
    body = """open(os.path.join("{d}", sys.argv[0][-4:-3]), "w").close()
other = os.path.join("{d}", "a" if sys.argv[0].endswith("b.py") else "b")
t = time.time()
while not os.path.exists(other) and time.time() - t < {wait}:
    time.sleep(0.05)
print("saw other" if os.path.exists(other) else "alone")"""
    with tempfile.TemporaryDirectory() as d:
        for name in ("test_a.py", "test_b.py"):
            tree(d, suites=[(name, body.format(d=d, wait=10), "1 passed, 0 failed", 0)])
        rc, out = run(d, 2)
        assert rc == 0 and out.count("saw other") == 2, out
        os.remove(os.path.join(d, "a"))
        os.remove(os.path.join(d, "b"))
        for name in ("test_a.py", "test_b.py"):
            tree(d, suites=[(name, body.format(d=d, wait=1), "1 passed, 0 failed", 0)])
        rc, out = run(d, 1)
        assert out.count("alone") == 1, out


def test_output_whole_and_each_item_once():
    body = """for i in range(5):
    print("{n} line %d" % i, flush=True)
    time.sleep(0.05)
open(os.path.join("{d}", "ran"), "a").write("{n}\\n")"""
    with tempfile.TemporaryDirectory() as d:
        names = ["s%d" % i for i in range(6)]
        for n in names:
            tree(d, suites=[("test_%s.py" % n, body.format(n=n, d=d), "1 passed, 0 failed", 0)])
        rc, out = run(d, 3)
        assert rc == 0 and out.strip().endswith("6 passed, 0 failed"), out
        for n in names:
            block = re.search(r"(?s)== tests/x/test_%s\.py\n(.*?)-- tests/x/test_%s\.py: \d+ s\n"
                              % (n, n), out)
            assert block, out
            assert block.group(1) == "".join("%s line %d\n" % (n, i) for i in range(5)) + \
                "1 passed, 0 failed\n", block.group(1)
        with open(os.path.join(d, "ran")) as f:
            assert sorted(f.read().split()) == names


def test_longest_first_unknown_first_serial_last():
    body = """open(os.path.join("{d}", "order"), "a").write("{n}\\n")"""
    with tempfile.TemporaryDirectory() as d:
        for n in ("short", "long", "mid", "new", "alone"):
            tree(d, suites=[("test_%s.py" % n, body.format(n=n, d=d), "1 passed, 0 failed", 0)])
        write(os.path.join(d, "dur.txt"), "-- tests/x/test_short.py: 2 s\n"
              "-- tests/x/test_long.py: 90 s\n-- tests/x/test_mid.py: 30 s\n"
              "-- tests/x/test_alone.py: 500 s\n")
        rc, out = run(d, 1, DURATIONS="dur.txt", SERIAL_ITEMS="*alone*", JOBS="1")
        # one job: the serial order (alphabetical here), SERIAL_ITEMS still last
        with open(os.path.join(d, "order")) as f:
            assert f.read().split() == ["long", "mid", "new", "short", "alone"]
        os.remove(os.path.join(d, "order"))
        rc, out = run(d, 2, DURATIONS="dur.txt", SERIAL_ITEMS="tests/*/*alone*")
        assert rc == 0 and out.strip().endswith("5 passed, 0 failed"), out
        with open(os.path.join(d, "order")) as f:
            order = f.read().split()
        # the lanes take unknown, then longest; who starts first of the two
        # taken at once is a race, so compare the pairs
        assert set(order[:2]) == {"new", "long"}, order
        assert order[2:] == ["mid", "short", "alone"], order


def test_stdin_reader_does_not_eat_the_list():
    with tempfile.TemporaryDirectory() as d:
        tree(d, suites=[("test_a.py", "sys.stdin.read()", "1 passed, 0 failed", 0),
                        ("test_b.py", "", "1 passed, 0 failed", 0),
                        ("test_c.py", "", "1 passed, 0 failed", 0)])
        for jobs in (1, 2):
            rc, out = run(d, jobs)
            assert out.strip().endswith("3 passed, 0 failed"), out


def test_bad_jobs_refused():
    with tempfile.TemporaryDirectory() as d:
        tree(d, suites=[("test_a.py", "", "1 passed, 0 failed", 0)])
        for bad in ("0", "x", "-1"):
            rc, out = run(d, bad)
            assert rc == 2 and "passed" not in out, (bad, rc, out)
        for bad in ("0", "x"):
            rc, out = run(d, 1, PG_JOBS=bad)
            assert rc == 2 and "passed" not in out, (bad, rc, out)


# a stand-in for tests/pgutil.py in the temporary tree: "start" prints a port
FAKE_PGUTIL = """import sys
if sys.argv[1] == "start":
    open(sys.argv[2], "w").write("5999\\n")
    print(5999)
"""


def test_pg_pass_runs_in_its_own_lanes_with_quick_sizes():
    # the PostgreSQL pass's two suites wait (up to 10 s) for each other's
    # start mark: with PG_JOBS=2 (the default) they run at once although
    # JOBS=1, after the plain suites; with PG_JOBS=1 the first gives up (the
    # second sees the mark it left)
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):  # run.sh's own test
        raise Skip("no PostgreSQL server binaries: run.sh skips its pass")
    body = """pg = os.environ.get("ADAPTMON_TEST_PG") == "1"
quick = os.environ.get("ADAPTMON_TEST_PG_QUICK")
mark = os.path.join("{d}", ("pg-" if pg else "") + sys.argv[0][-4:-3])
open(mark, "w").close()
open(os.path.join("{d}", "order"), "a").write(os.path.basename(mark) + " " + str(quick) + "\\n")
other = os.path.join("{d}", "pg-" + ("a" if sys.argv[0].endswith("b.py") else "b"))
t = time.time()
while pg and not os.path.exists(other) and time.time() - t < {wait}:
    time.sleep(0.05)
print(("saw other" if os.path.exists(other) else "alone") if pg else "plain")"""
    with tempfile.TemporaryDirectory() as d:
        write(os.path.join(d, "tests", "pgutil.py"), FAKE_PGUTIL)
        write(os.path.join(d, "tests", "pg-suites.txt"),
              "# the pass\ntests/x/test_a.py\ntests/x/test_b.py  # both\n")
        for wait, jobs, alone in ((10, "2", 0), (1, "1", 1)):
            for name in ("test_a.py", "test_b.py"):
                tree(d, suites=[(name, body.format(d=d, wait=wait), "1 passed, 0 failed", 0)])
            for f in ("order", "a", "b", "pg-a", "pg-b"):
                if os.path.exists(os.path.join(d, f)):
                    os.remove(os.path.join(d, f))
            rc, out = run(d, 1, PG_PASS="1", PG_JOBS=jobs)
            assert rc == 0 and out.strip().endswith("4 passed, 0 failed"), out
            assert out.count("alone") == alone and out.count("plain") == 2, (jobs, out)
            assert out.count("(PostgreSQL)") == 2, out
            with open(os.path.join(d, "order")) as f:
                order = f.read().splitlines()
            # the plain suites first (JOBS=1: in order), without the quick
            # sizes; the pass's with them
            assert order[:2] == ["a 0", "b 0"], order
            assert sorted(order[2:]) == ["pg-a 1", "pg-b 1"], order



if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
