#!/usr/bin/env python3
"""What the server's log says, in each --log-format (issue 29, "logs that
say why"):

  * an access line of a 4xx/5xx carries the problem's type and detail, in
    the plain format as problem_type=… problem_detail="…" after the human
    message, and as fields in json and logfmt;
  * --log-format json writes one JSON object per line with the stable
    field names of docs/operations.md (ts, level, request_id, msg, event,
    method, path, status, bytes, duration_ms, ended, problem_type,
    problem_detail; from_version, to_version, db for a migration), numbers
    as numbers; logfmt the same pairs; a bad value refuses to start;
  * a client closing an event stream is not a WARN: the access line says
    "client closed the event stream";
  * a migration run at open is logged once with from/to versions, and a
    reopen of a current database logs none.
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import scale  # noqa: E402,F401
from harness import ADAPTMON, Server, check, eq, run_tests  # noqa: E402

# One logfmt pair: key=bare or key="quoted with \" and \\ escapes".
LOGFMT_PAIR = re.compile(r'([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ "]*)(?: |$)')
ACCESS_FIELDS = {"event", "method", "path", "status", "bytes", "duration_ms"}


def stderr_lines(srv):
    with open(srv.err_path, "rb") as f:
        return f.read().decode("utf-8").splitlines()


def logfmt(line):
    """The pairs of one logfmt line as a dict (quoted values unescaped);
    fails unless the pairs cover the whole line."""
    out, pos = {}, 0
    for m in LOGFMT_PAIR.finditer(line):
        check(m.start() == pos, "logfmt line parses at %d: %r" % (pos, line))
        v = m.group(2)
        if v.startswith('"'):
            v = re.sub(r'\\(.)', r'\1', v[1:-1])
        out[m.group(1)] = v
        pos = m.end()
    eq(pos, len(line), "logfmt pairs cover the line %r" % line)
    return out


def exercise(srv):
    """A 201, a 404 with a problem body, a 422 and an event stream the
    client closes; returns once the server has noticed the close."""
    c = srv.client()
    c.jpost("/v1/sessions", {"id": "a", "source_lang": "en", "target_lang": "fr"})
    eq(c.get("/v1/sessions/nope").status, 404, "unknown session")
    eq(c.post("/v1/sessions", b'{"id": "b", "source_lang": 5}',
              ctype="application/json").status, 422, "bad session")
    c.close()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
    s.sendall(b"GET /v1/sessions/a/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    check(s.recv(4096).startswith(b"HTTP/1.1 200"), "event stream opened")
    s.close()  # as a browser tab does
    deadline = time.monotonic() + scale(10, 60)
    while time.monotonic() < deadline:
        if any("/events" in ln and "closed the event stream" in ln for ln in stderr_lines(srv)):
            return
        time.sleep(0.1)
    raise AssertionError("no access line for the closed stream:\n" + srv.logs())


def test_plain_access_line_says_why():
    srv = Server("--sse-heartbeat", "1")
    try:
        exercise(srv)
        lines = stderr_lines(srv)
        miss = [ln for ln in lines if " GET /v1/sessions/nope 404 " in ln]
        eq(len(miss), 1, "one access line for the 404: %r" % lines)
        check(re.search(r" INFO  \[req [0-9a-f]+\] GET /v1/sessions/nope 404 \d+B [\d.]+ms "
                        r"problem_type=\S+/not-found problem_detail=\"no session 'nope'\"$",
                        miss[0]), "404 line: %r" % miss[0])
        bad = [ln for ln in lines if " POST /v1/sessions 422 " in ln]
        check(len(bad) == 1 and "problem_type=" in bad[0] and "problem_detail=" in bad[0],
              "422 line: %r" % bad)
        ok = [ln for ln in lines if " POST /v1/sessions 201 " in ln]
        check(len(ok) == 1 and "problem_" not in ok[0], "a 2xx line has no problem: %r" % ok)
        stream = [ln for ln in lines if "/v1/sessions/a/events 200" in ln]
        check(stream and stream[0].endswith("(client closed the event stream)"),
              "stream line: %r" % stream)
        warns = [ln for ln in lines if " WARN " in ln or " ERROR " in ln]
        eq(warns, [], "no WARN or ERROR for a client closing a stream")
    finally:
        srv.stop()


def test_json_lines_have_stable_fields():
    srv = Server("--log-format", "json", "--sse-heartbeat", "1")
    try:
        exercise(srv)
        events = []
        for ln in stderr_lines(srv):
            events.append(json.loads(ln))  # every line is one JSON object
        for e in events:
            check({"ts", "level", "msg"} <= set(e), "base fields: %r" % e)
            check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", e["ts"]), "ts: %r" % e)
            check(e["level"] in ("error", "warn", "info", "debug"), "level: %r" % e)
        mig = [e for e in events if e.get("event") == "migration"]
        eq(len(mig), 1, "one migration event for a new database")
        eq((mig[0]["from_version"], type(mig[0]["to_version"])), (0, int), "migration versions")
        check(mig[0]["to_version"] >= 1, "to_version: %r" % mig[0])
        access = [e for e in events if e.get("event") == "access"]
        check(len(access) >= 4, "access events: %r" % access)
        for e in access:
            check(ACCESS_FIELDS <= set(e), "access fields: %r" % e)
            check(isinstance(e["status"], int) and isinstance(e["bytes"], int)
                  and isinstance(e["duration_ms"], float), "numbers are numbers: %r" % e)
            check(re.match(r"^[0-9a-f]{16}$", e["request_id"]), "request_id: %r" % e)
        nf = [e for e in access if e["status"] == 404]
        eq(len(nf), 1, "one 404")
        check(nf[0]["problem_type"].endswith("/not-found"), "404 type: %r" % nf[0])
        eq(nf[0]["problem_detail"], "no session 'nope'", "404 detail")
        eq(nf[0]["path"], "/v1/sessions/nope", "404 path")
        check(all("problem_type" not in e for e in access if e["status"] < 400),
              "no problem fields on a success")
        st = [e for e in access if e["path"] == "/v1/sessions/a/events"]
        eq(st[0].get("ended"), "client closed the event stream", "stream end")
        eq([e for e in events if e["level"] in ("warn", "error")], [], "no warn/error")
    finally:
        srv.stop()


def test_logfmt_lines_parse():
    srv = Server("--log-format", "logfmt", "--sse-heartbeat", "1")
    try:
        exercise(srv)
        pairs = [logfmt(ln) for ln in stderr_lines(srv)]
        check(all({"ts", "level", "msg"} <= set(p) for p in pairs), "base pairs: %r" % pairs)
        nf = [p for p in pairs if p.get("event") == "access" and p.get("status") == "404"]
        eq(len(nf), 1, "one 404 access line")
        eq(nf[0]["problem_detail"], "no session 'nope'", "logfmt 404 detail (unquoted)")
        check(ACCESS_FIELDS <= set(nf[0]), "logfmt access fields: %r" % nf[0])
        check(any(p.get("event") == "migration" and p.get("from_version") == "0"
                  for p in pairs), "logfmt migration line")
    finally:
        srv.stop()


def test_reopen_logs_no_migration_and_bad_format_refused():
    srv = Server("--log-format", "json")
    db = srv.db
    srv.stop()
    srv2 = Server("--log-format", "json", db=db)
    try:
        events = [json.loads(ln) for ln in stderr_lines(srv2)]
        eq([e for e in events if e.get("event") == "migration"], [],
           "a current database migrates nothing")
    finally:
        srv2.stop()
    r = subprocess.run([ADAPTMON, "serve", "--port", "0", "--db", ":memory:", "--log-format",
                        "yaml"], capture_output=True, text=True, timeout=10,
                       env={"PATH": os.environ.get("PATH", ""), "ADAPTMON_CONFIG": ""})
    eq(r.returncode, 2, "exit status for --log-format yaml")
    check("log-format" in r.stderr and "plain" in r.stderr, "message: %r" % r.stderr)


def test_control_characters_stay_on_one_line():
    """A path with an escaped newline and a non-UTF-8 byte: one line, valid JSON."""
    srv = Server("--log-format", "json")
    try:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(b"GET /v1/sessions/%0A\xff\"x HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Connection: close\r\n\r\n")
        while s.recv(4096):
            pass
        s.close()
        time.sleep(0.2)
        lines = stderr_lines(srv)
        events = [json.loads(ln) for ln in lines]
        acc = [e for e in events if e.get("event") == "access"]
        eq(len(acc), 1, "one access line: %r" % lines)
        eq(acc[0]["path"], "/v1/sessions/%0A\ufffd\"x", "raw path kept, bad byte replaced")
    finally:
        srv.stop()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
