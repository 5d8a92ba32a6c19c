#!/usr/bin/env python3
"""adaptmon replay --server URL --session ID FILE against servers this test
starts on loopback (tests/api/harness.py): XLIFF, TSV and JSONL files end
with the same metrics as posting the segments directly; an interrupted
replay resumes (ids already stored are not posted again); a refused item
stops with its id and the problem detail; a server that is down, a bad
file and bad arguments exit non-zero with a message. Ends with
"N passed, N failed"."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
from harness import (ADAPTMON, base, check, eq, expect_status, free_port,  # noqa: E402
                     run_tests, serve, shutdown)

X = os.path.join(ROOT, "tests", "data", "xliff")
S = C = None
TMP = None


def setup():
    global S, C, TMP
    S, C = serve()
    TMP = tempfile.mkdtemp(prefix="replay-")


def teardown():
    shutdown(S, C)
    shutil.rmtree(TMP, ignore_errors=True)


def replay(*args, timeout=120, **kw):
    return subprocess.run([ADAPTMON, "replay"] + list(args), capture_output=True, text=True,
                          timeout=timeout, **kw)


def url():
    return "http://127.0.0.1:%d" % S.port


def write(name, text):
    p = os.path.join(TMP, name)
    with open(p, "w", encoding="utf-8") as f:
        f.write(text)
    return p


def systems(sid):
    return C.jget(base(sid) + "/metrics")["systems"]


def stored_ids(sid):
    d = C.jget(base(sid) + "/segments?limit=1000")
    return [s["id"] for s in d["segments"]]


def test_xliff_equals_direct_import():
    """Every CAT shape of tests/data/xliff replays to the metrics of the
    server's own XLIFF import of the same file."""
    for f in ("trados.sdlxliff", "memoq.mqxliff", "phrase.mxliff", "phrase-2.xlf", "omegat.xlf"):
        sid = "rx-" + f.replace(".", "-")
        ref = sid + "-ref"
        C.create_session(id=sid)
        C.create_session(id=ref)
        with open(os.path.join(X, f), "rb") as fh:
            r = C.post(base(ref) + "/import", fh.read(), ctype="application/xliff+xml")
        expect_status(r, 200, "import " + f)
        p = replay("--server", url(), "--session", sid, os.path.join(X, f))
        eq(p.returncode, 0, f + ": " + p.stderr)
        out = json.loads(p.stdout)
        eq(out["posted"], r.json()["imported"], f + ": posted")
        eq(systems(sid), systems(ref), f + ": metrics equal the server-side import")
        eq(stored_ids(sid), stored_ids(ref), f + ": same ids in the same order")


def test_tsv_and_jsonl():
    rows = [("the cat", "le chat", "le chat"), ("a black dog", "un chien", "un chien noir"),
            ("the dog barks", "le chien aboie", "le chien aboie")]
    C.create_session(id="rt-direct")
    for i, (s, h, t) in enumerate(rows, 1):
        C.jpost(base("rt-direct") + "/segments",
                {"id": "line-%d" % i, "source": s, "hypothesis": h, "translation": t}, 201)
    tsv = write("a.tsv", "".join("%s\t%s\t%s\n" % r for r in rows))
    C.create_session(id="rt-tsv")
    p = replay("--server", url(), "--session", "rt-tsv", tsv)
    eq(p.returncode, 0, p.stderr)
    eq(systems("rt-tsv"), systems("rt-direct"), "TSV replay = direct posts")
    eq(stored_ids("rt-tsv"), ["line-1", "line-2", "line-3"], "TSV ids")
    jl = write("a.jsonl", "".join(json.dumps({"id": "line-%d" % i, "source": s,
                                              "hypothesis": h, "translation": t}) + "\n\n"
                                  for i, (s, h, t) in enumerate(rows, 1)))
    C.create_session(id="rt-jsonl")
    p = replay("--server", url(), "--session", "rt-jsonl", jl)
    eq(p.returncode, 0, p.stderr)
    eq(systems("rt-jsonl"), systems("rt-direct"), "JSONL replay = direct posts")
    # a TSV header with named systems
    hdr = write("b.tsv", "id\tsource\thyp:base\thyp:adapt\ttranslation\n"
                         "s1\tthe cat\tle chat\tle chat\tle chat\n"
                         "s2\ta dog\tun chien\tle chien\tle chien\n")
    C.create_session(id="rt-hdr")
    p = replay("--server", url(), "--session", "rt-hdr", hdr)
    eq(p.returncode, 0, p.stderr)
    eq(sorted(systems("rt-hdr")), ["adapt", "base"], "systems from hyp:NAME columns")
    eq(stored_ids("rt-hdr"), ["s1", "s2"], "ids from the id column")
    check("replay: 2/2 segments" in p.stderr, "plain progress line when not a TTY: " + p.stderr)


def test_resume_posts_only_what_is_missing():
    n = 40
    lines = ["%d\tsource %d\tword%d hyp\tword%d conf\n" % (i, i, i % 7, i % 5) for i in range(n)]
    tsv = write("big.tsv", "".join(lines))
    C.create_session(id="rr-full")
    p = replay("--server", url(), "--session", "rr-full", tsv)
    eq(p.returncode, 0, p.stderr)
    # "interrupted": the first 17 segments were posted by an earlier run
    C.create_session(id="rr")
    part = write("part.tsv", "".join(lines[:17]))
    eq(replay("--server", url(), "--session", "rr", part).returncode, 0, "partial run")
    p = replay("--server", url(), "--session", "rr", tsv)
    eq(p.returncode, 0, p.stderr)
    out = json.loads(p.stdout)
    eq([out["already_stored"], out["posted"]], [17, n - 17], "resumed: only the rest posted")
    eq(systems("rr"), systems("rr-full"), "a resumed replay = one full replay")
    eq(C.jget(base("rr") + "/metrics")["segments"], n, "each segment once")
    p = replay("--server", url(), "--session", "rr", tsv)
    eq(json.loads(p.stdout)["posted"], 0, "a finished replay posts nothing")


def test_refused_item_stops_with_id_and_detail():
    C.create_session(id="rbad")
    jl = write("bad.jsonl", json.dumps({"id": "ok1", "hypothesis": "a", "translation": "a"}) +
               "\n" + json.dumps({"id": "bad2", "hypothesis": "a", "translation": "a",
                                  "bogus": 1}) +
               "\n" + json.dumps({"id": "ok3", "hypothesis": "a", "translation": "a"}) + "\n")
    p = replay("--server", url(), "--session", "rbad", jl)
    eq(p.returncode, 1, "exit status")
    check("'bad2'" in p.stderr and "422" in p.stderr and "bogus" in p.stderr,
          "id, status and detail: " + p.stderr)
    eq(stored_ids("rbad"), ["ok1"], "stopped at the refused item")


def test_errors():
    C.create_session(id="rerr")
    good = write("g.tsv", "a\tb\tc\n")
    # server down: a port nothing listens on
    p = replay("--server", "http://127.0.0.1:%d" % free_port(), "--session", "rerr", good)
    eq(p.returncode, 1, "server down")
    check("cannot reach" in p.stderr, p.stderr)
    p = replay("--server", url(), "--session", "nosuch", good)
    eq(p.returncode, 1, "no such session")
    check("404" in p.stderr, p.stderr)
    p = replay("--server", url(), "--session", "rerr", write("x.xlf", "<xliff><file>"))
    eq(p.returncode, 1, "bad XLIFF")
    check("invalid XLIFF" in p.stderr, p.stderr)
    p = replay("--server", url(), "--session", "rerr", write("x.jsonl", "{nope\n"))
    eq(p.returncode, 1, "bad JSONL")
    check("line 1" in p.stderr, p.stderr)
    p = replay("--server", url(), "--session", "rerr", write("x.tsv", "only one column\n"))
    eq(p.returncode, 1, "short TSV row")
    p = replay("--server", url(), "--session", "rerr", os.path.join(TMP, "missing.tsv"))
    eq(p.returncode, 1, "missing file")
    eq(replay("--session", "rerr", good).returncode, 2, "usage: no --server")
    eq(replay("--server", url(), "--session", "a b", good).returncode, 2, "bad session id")
    eq(stored_ids("rerr"), [], "nothing stored by the failed runs")
    p = subprocess.run([ADAPTMON, "--help"], capture_output=True, text=True)
    check("replay" in p.stdout, "documented in adaptmon --help")


def test_resume_refuses_a_file_changed_since_the_last_run():
    """Resuming trusts an id only when the stored body is the file's item:
    a line inserted at the top of an id-less TSV shifts every "line-N", and
    an edited line keeps its id. Before, both were counted as "already
    stored" (exit 0): the new first line was never posted and an old line
    was stored a second time under the next id."""
    C.create_session(id="rchg")
    tsv = write("chg.tsv", "one two\tun deux\tun deux\nthree four\ttrois\ttrois quatre\n")
    eq(replay("--server", url(), "--session", "rchg", tsv).returncode, 0, "first run")
    write("chg.tsv", "five six\tcinq\tcinq six\none two\tun deux\tun deux\n"
                     "three four\ttrois\ttrois quatre\n")
    p = replay("--server", url(), "--session", "rchg", tsv)
    eq(p.returncode, 1, "a shifted file is refused: " + p.stdout + p.stderr)
    check("'line-1'" in p.stderr and "changed" in p.stderr, "names the item: " + p.stderr)
    eq(stored_ids("rchg"), ["line-1", "line-2"], "nothing posted")
    write("chg.tsv", "one two\tun deux\tun deux changed\n")
    p = replay("--server", url(), "--session", "rchg", tsv)
    eq(p.returncode, 1, "an edited line is refused: " + p.stdout + p.stderr)
    eq(C.jget(base("rchg") + "/metrics")["segments"], 2, "still the two segments")


def test_server_url_mistakes():
    """A trailing slash is the same server (before: 404 "no resource at this
    path" from "//v1/…"); a URL that is not http(s) is a usage error (exit 2;
    before: exit 1 "cannot reach" after libcurl tried FILE or FTP)."""
    C.create_session(id="rurl")
    good = write("u.tsv", "a\tb\tc\n")
    p = replay("--server", url() + "/", "--session", "rurl", good)
    eq(p.returncode, 0, "trailing slash: " + p.stderr)
    eq(stored_ids("rurl"), ["line-1"], "posted")
    for bad in ("file:///tmp", "ftp://127.0.0.1:%d" % S.port, "127.0.0.1:%d" % S.port):
        p = replay("--server", bad, "--session", "rurl", good)
        eq(p.returncode, 2, bad + ": " + p.stderr)
        check("http://" in p.stderr, bad + ": says what is expected: " + p.stderr)


def test_silent_server_times_out():
    """A server that accepts the connection and never answers (stopped with
    SIGSTOP, a wrong port on a silent service): before, replay waited
    forever; now --timeout (default 300 s) ends it with exit 1."""
    import socket
    good = write("t.tsv", "a\tb\tc\n")
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    try:
        p = replay("--server", "http://127.0.0.1:%d" % ls.getsockname()[1], "--session", "s",
                   "--timeout", "1", good, timeout=60)
        eq(p.returncode, 1, "exit status: " + p.stderr)
        check("cannot reach" in p.stderr and "imed out" in p.stderr, p.stderr)
    finally:
        ls.close()
    eq(replay("--server", url(), "--session", "s", "--timeout", "0", good).returncode, 2,
       "--timeout 0 is a usage error")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup, teardown))
