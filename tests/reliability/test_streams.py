#!/usr/bin/env python3
"""Connection budgets (issue 25, items 3 and 7): event streams have caps of
their own, a few connections stay reserved for the probes, streams end at
their maximum age with a reconnect hint, and the HTTP layer refuses framing
that a proxy would read differently.

  --max-streams-per-session N   the N+1-th stream of a session gets 429
                                too-many-streams (limit "session") with
                                Retry-After; another session still streams
  --max-streams-per-client N    the N+1-th stream from one address gets 429
                                (limit "client"); another address (127.0.0.2)
                                still streams
  --max-streams N               the N+1-th stream on the server gets 503
                                (limit "server"); closing one admits another
  /metrics                      open streams and refusals by cap
  --max-connections N           N streams take every ordinary connection:
                                /healthz, /readyz and /metrics still answer
                                (reserved connections), anything else there
                                gets 503 + Retry-After and the connection closes
  default options               1,100 stream requests from one address (the
                                issue's attack) do not stop /healthz
  --stream-max-age N            a stream ends after N s (within a heartbeat)
                                with "id: LAST" + "event: reconnect", and the
                                resume from that id loses nothing
  header framing                a NUL in a header, two Host headers, two
                                Content-Length, Transfer-Encoding with
                                Content-Length: 400; a Transfer-Encoding other
                                than chunked: 501 at once (it used to hang
                                until conn-timeout); nothing is stored
  Host on other connections     without read-token, a request from another
                                machine naming a DNS host (a rebinding page) is
                                403 forbidden-host; an IP literal or an
                                allowed-host passes; with read-token any Host
                                passes (the token is the defence)
  --listen 0.0.0.0 w/o tokens   starts with a WARN; tokens under 16 characters
                                are refused at start
  rescore on a full database    507 insufficient-storage, not 500

Prints "ok NAME" / "FAILED NAME" per test and "N passed, N failed".
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, raw  # noqa: E402
from harness import (ADAPTMON, Server, check, eq, expect_problem, expect_status,  # noqa: E402
                     run_tests, tmpdir)

HOST = b"Host: 127.0.0.1\r\n"


# ---- helpers ------------------------------------------------------------------------

def open_stream(port, sid, src="127.0.0.1", headers=b"", timeout=10.0):
    """GET /v1/sessions/SID/events on a new socket from address src. Returns
    (socket, status, head bytes, first body bytes); the socket stays open
    (the caller closes it)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /v1/sessions/%s/events HTTP/1.1\r\n" % sid.encode() + HOST +
              b"Accept: text/event-stream\r\n" + headers + b"\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.match(rb"HTTP/1\.1 (\d+)", head)
    return s, int(m.group(1)) if m else None, head, rest


def header(head, name):
    m = re.search(rb"(?im)^" + name.encode() + rb":\s*(.*?)\r?$", head)
    return m.group(1).decode() if m else None


def problem_of(s, rest, head):
    """The JSON body of a non-stream answer on socket s."""
    n = int(header(head, "Content-Length") or 0)
    body = rest
    while len(body) < n:
        d = s.recv(65536)
        if not d:
            break
        body += d
    return json.loads(body[:n] or b"{}")


def get(port, path, src="127.0.0.1", timeout=5.0):
    """A GET on a new connection (Connection: close): (status, body)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET %s HTTP/1.1\r\n" % path.encode() + HOST + b"Connection: close\r\n\r\n")
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            buf += d
    except socket.timeout:
        pass
    s.close()
    m = re.match(rb"HTTP/1\.1 (\d+)", buf)
    return (int(m.group(1)) if m else None), buf.partition(b"\r\n\r\n")[2]


def metric(port, name):
    st, body = get(port, "/metrics")
    eq(st, 200, "/metrics")
    m = re.search(rb"(?m)^" + re.escape(name.encode()) + rb" (\S+)$", body)
    check(m, "%s in /metrics" % name)
    return float(m.group(1))


def wait_metric(port, name, ok, timeout=10.0):
    """Polls /metrics until ok(value of name); returns whether it came."""
    deadline = time.monotonic() + timeout
    while True:
        if ok(metric(port, name)):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def refused(s, st, head, rest, status, limit, what):
    eq(st, status, what)
    check(header(head, "Retry-After"), "%s: Retry-After" % what)
    p = problem_of(s, rest, head)
    slug = "too-many-streams" if status == 429 else "unavailable"
    eq(p.get("type"), "https://adaptmon.dev/problems/" + slug, what + " type")
    eq(p.get("cap"), limit, what + " cap")
    s.close()


# ---- caps ---------------------------------------------------------------------------

def test_stream_caps_per_session_client_and_server():
    srv = Server("--max-streams", "6", "--max-streams-per-client", "4",
                 "--max-streams-per-session", "3", "--sse-heartbeat", "1")
    held = []
    try:
        c = srv.client()
        for sid in ("a", "b", "c", "d"):
            c.create_session(id=sid, options=dict(OPTIONS))
        c.close()
        # per session: 3 on "a", the 4th refused (from another address: not the client cap)
        for _ in range(3):
            s, st, _, _ = open_stream(srv.port, "a")
            eq(st, 200, "stream of a")
            held.append(s)
        s, st, head, rest = open_stream(srv.port, "a", src="127.0.0.2")
        refused(s, st, head, rest, 429, "session", "4th stream of one session")
        # per client: 127.0.0.1 holds 3; one more on b is its 4th, the 5th is refused
        s, st, _, _ = open_stream(srv.port, "b")
        eq(st, 200, "4th stream of 127.0.0.1")
        held.append(s)
        s, st, head, rest = open_stream(srv.port, "c")
        refused(s, st, head, rest, 429, "client", "5th stream of one address")
        # another address still streams; the server cap (6) then refuses with 503
        for sid in ("c", "d"):
            s, st, _, _ = open_stream(srv.port, sid, src="127.0.0.2")
            eq(st, 200, "stream of %s from 127.0.0.2" % sid)
            held.append(s)
        s, st, head, rest = open_stream(srv.port, "d", src="127.0.0.3")
        refused(s, st, head, rest, 503, "server", "7th stream on the server")
        eq(get(srv.port, "/healthz")[0], 200, "/healthz with every stream taken")
        eq(metric(srv.port, "adaptmon_event_streams_open"), 6, "open streams")
        for limit in ("server", "client", "session"):
            eq(metric(srv.port, 'adaptmon_event_streams_refused_total{limit="%s"}' % limit), 1,
               "refusals by the %s cap" % limit)
        # a closed stream gives its place back (the count follows the close)
        held.pop().close()
        # the next heartbeat notices the closed socket
        check(wait_metric(srv.port, "adaptmon_event_streams_open", lambda v: v <= 5),
              "the closed stream is no longer counted")
        s, st, _, _ = open_stream(srv.port, "d", src="127.0.0.3")
        eq(st, 200, "a stream after one closed")
        held.append(s)
        for s in held:
            s.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        for s in held:
            s.close()
        srv.kill()


def test_concurrent_stream_requests_never_overshoot_a_cap():
    """40 stream requests for one session at once with a per-session cap of
    5: exactly 5 are admitted (the count is checked and taken under one
    lock), and the other 35 get 429."""
    import threading
    srv = Server("--max-streams-per-session", "5", "--max-streams-per-client", "0",
                 "--threads", "8")
    held, statuses = [], []
    lock = threading.Lock()
    go = threading.Event()
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        c.close()

        def one():
            go.wait()
            try:
                s, st, _, _ = open_stream(srv.port, "a")
            except OSError:
                s, st = None, None
            with lock:
                statuses.append(st)
                if s:
                    held.append(s)
        threads = [threading.Thread(target=one) for _ in range(40)]
        for t in threads:
            t.start()
        go.set()
        for t in threads:
            t.join(30)
        eq(statuses.count(200), 5, "admitted: %r" % sorted(statuses, key=str))
        eq(statuses.count(429), 35, "refused")
        eq(metric(srv.port, "adaptmon_event_streams_open"), 5, "open streams")
        for s in held:
            s.close()
        held = []
        eq(srv.stop(), 0, "exit status")
    finally:
        for s in held:
            s.close()
        srv.kill()


def test_streams_off_with_max_streams_0():
    srv = Server("--max-streams", "0")
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        expect_problem(c.get("/v1/sessions/a/events"), 503, "unavailable", "streams off")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


# ---- reserved connections -------------------------------------------------------------

def test_streams_in_every_connection_leave_the_probes_answering():
    n = 4
    srv = Server("--max-connections", str(n), "--max-streams-per-client", "0",
                 "--max-streams-per-session", "0", "--sse-heartbeat", "1")
    held = []
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        c.close()
        time.sleep(0.3)
        for _ in range(n):
            s, st, _, _ = open_stream(srv.port, "a")
            eq(st, 200, "stream")
            held.append(s)
        for path in ("/healthz", "/readyz", "/metrics"):
            st, _ = get(srv.port, path)
            eq(st, 200, "%s with every ordinary connection held by a stream" % path)
        st, hdrs, _, _ = raw(srv.port, b"GET /v1/sessions HTTP/1.1\r\n" + HOST + b"\r\n",
                             timeout=5)
        eq(st, 503, "another route on a reserved connection")
        check(hdrs.get("retry-after"), "Retry-After on the 503: %r" % hdrs)
        check("close" in str(hdrs.get("connection", "")).lower(),
              "the reserved connection is closed after the 503: %r" % hdrs)
        check(metric(srv.port, "adaptmon_reserved_connection_refusals_total") >= 1,
              "the refusal is counted")
        # an idle holder of a reserved connection is dropped quickly
        idle = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        t0 = time.monotonic()
        got = idle.recv(100)
        eq(got, b"", "idle reserved connection closed")
        check(time.monotonic() - t0 < 8, "within a few seconds (%.1f)" % (time.monotonic() - t0))
        idle.close()
        for s in held:
            s.close()
        held = []
        eq(srv.stop(), 0, "exit status")
    finally:
        for s in held:
            s.close()
        srv.kill()


def test_1100_stream_requests_with_default_options_leave_healthz_answering():
    """The issue's attack: 1,100 GET …/events from one address (a read token
    suffices) used to take all 1,024 connections."""
    srv = Server()
    socks = []
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        c.close()
        statuses = {}
        for i in range(1100):
            try:
                s, st, _, _ = open_stream(srv.port, "a", timeout=5)
            except (socket.timeout, ConnectionError, OSError):
                st, s = None, None
            statuses[st] = statuses.get(st, 0) + 1
            if s:
                socks.append(s)  # kept open, as the attacker does
        print("# statuses of 1,100 stream requests: %r" % statuses)
        eq(statuses.get(200), 32, "streams admitted (max-streams-per-client)")
        t0 = time.monotonic()
        st, _ = get(srv.port, "/healthz", timeout=10)
        eq(st, 200, "/healthz with 1,100 held connections")
        print("# /healthz answered in %.3f s" % (time.monotonic() - t0))
        for s in socks:
            s.close()
        socks = []
        eq(srv.stop(), 0, "exit status")
    finally:
        for s in socks:
            s.close()
        srv.kill()


# ---- maximum age -----------------------------------------------------------------------

def read_events(s, rest, until, timeout=15):
    """Reads the chunked SSE body of s until the bytes hold `until` or the
    stream ends; returns the decoded text (chunk framing removed loosely:
    the tests only look for whole lines)."""
    buf = rest
    deadline = time.monotonic() + timeout
    s.settimeout(1)
    while until not in buf and time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        buf += d
    return buf


def test_stream_ends_at_max_age_with_a_reconnect_id_and_resumes_without_a_gap():
    srv = Server("--stream-max-age", "2", "--sse-heartbeat", "1")
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        seg = {"source": "the virus", "hypothesis": "le virus", "translation": "le virus"}
        expect_status(c.post("/v1/sessions/a/segments", dict(seg, id="s1")), 201, "POST s1")
        s, st, _, rest = open_stream(srv.port, "a")
        eq(st, 200, "stream")
        expect_status(c.post("/v1/sessions/a/segments", dict(seg, id="s2")), 201, "POST s2")
        t0 = time.monotonic()
        body = read_events(s, rest, b"0\r\n\r\n", timeout=20)
        age = time.monotonic() - t0
        check(b"event: segment" in body, "the live segment came first: %r" % body[:300])
        m = re.search(rb"id: (\d+)\nevent: reconnect\ndata: (\{.*?\})\n", body)
        check(m, "a reconnect event ends the stream: %r" % body[-300:])
        eq(int(m.group(1)), 2, "its id is the last segment sent")
        eq(json.loads(m.group(2))["reason"], "max-age", "reason")
        check(body.endswith(b"0\r\n\r\n"), "the chunked body ends (not a reset)")
        check(1 <= age < 8, "ended after about max-age + a heartbeat (%.1f s)" % age)
        s.close()
        # the resume from that id: what was posted meanwhile, nothing twice
        expect_status(c.post("/v1/sessions/a/segments", dict(seg, id="s3")), 201, "POST s3")
        s, st, _, rest = open_stream(srv.port, "a", headers=b"Last-Event-ID: 2\r\n")
        eq(st, 200, "resumed stream")
        body = read_events(s, rest, b"\"s3\"", timeout=10)
        ids = re.findall(rb"id: (\d+)\nevent: segment", body)
        eq(ids, [b"3"], "the resume sends only the later segment")
        s.close()
        # counted when the response is freed, just after the connection ends
        check(wait_metric(srv.port, 'adaptmon_event_streams_ended_total{reason="max_age"}',
                          lambda v: v >= 1), "the expiry is counted")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_stream_whose_writes_cannot_progress_is_closed_after_conn_timeout():
    """A client that keeps its stream open but never reads: once the socket
    buffers are full the server's writes cannot progress, and the connection
    timeout closes it (libmicrohttpd counts no activity), freeing its slot."""
    t = 3
    srv = Server("--conn-timeout", str(t), "--max-body", "8MiB", "--max-glossary-body", "8MiB",
                 "--max-batch", "2000", "--sse-heartbeat", "1")
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", srv.port))
        s.sendall(b"GET /v1/sessions/a/events HTTP/1.1\r\n" + HOST + b"\r\n")
        time.sleep(0.5)
        eq(metric(srv.port, "adaptmon_event_streams_open"), 1, "the stream is open")
        text = " ".join("word%d" % k for k in range(300))
        stalled_at, closed_at = None, None
        t0 = time.monotonic()  # under valgrind the first batch alone can outlast t
        for b in range(40):
            batch = [{"id": "b%d-%d" % (b, i), "source": text, "hypothesis": text,
                      "translation": text} for i in range(200)]
            r = c.post("/v1/sessions/a/segments", batch)
            check(r.status in (200, 201, 207), "batch %d: %s" % (b, r.body[:200]))
            if metric(srv.port, "adaptmon_event_streams_open") == 0:
                closed_at = time.monotonic()
                break
            if stalled_at is None:
                stalled_at = time.monotonic()
        deadline = time.monotonic() + t + 10
        while closed_at is None and time.monotonic() < deadline:
            if metric(srv.port, "adaptmon_event_streams_open") == 0:
                closed_at = time.monotonic()
                break
            time.sleep(0.25)
        check(closed_at is not None, "the stalled stream was closed")
        print("# stalled stream closed %.1f s after the first batch (backlog drops: %d)" %
              (closed_at - (stalled_at or t0),
               metric(srv.port, 'adaptmon_event_streams_ended_total{reason="backlog"}')))
        s.close()
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


# ---- header framing -------------------------------------------------------------------

def test_header_framing_is_refused_at_once():
    srv = Server("--conn-timeout", "30")
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        c.close()
        body = b'{"id":"x","source":"a","hypothesis":"b","translation":"b"}'
        post = b"POST /v1/sessions/a/segments HTTP/1.1\r\n" + HOST + \
            b"Content-Type: application/json\r\n"
        cases = [
            ("NUL in a header value", 400,
             b"GET /healthz HTTP/1.1\r\n" + HOST + b"X-A: a\x00b\r\nConnection: close\r\n\r\n"),
            ("NUL in the last header", 400,
             b"GET /healthz HTTP/1.1\r\n" + HOST + b"Connection: close\r\nX-A: a\x00\x00b\r\n\r\n"),
            ("NUL hiding a Host suffix", 400,
             b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\x00.evil.example\r\n\r\n"),
            ("two Host headers", 400,
             b"GET /healthz HTTP/1.1\r\n" + HOST + b"Host: evil.example\r\n\r\n"),
            ("two Host headers, the foreign one first", 400,
             b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\n" + HOST + b"\r\n"),
            ("two Content-Length", 400,
             post + b"Content-Length: %d\r\nContent-Length: 5\r\n\r\n" % len(body) + body),
            ("Transfer-Encoding and Content-Length", 400,
             post + b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n\r\n" % len(body) +
             b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"),
            ("two Transfer-Encoding", 400,
             post + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" +
             b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"),
            ("Transfer-Encoding: gzip", 501,
             post + b"Transfer-Encoding: gzip\r\n\r\n" + body),
            ("Transfer-Encoding: gzip, chunked", 501,
             post + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + b"%x\r\n" % len(body) + body +
             b"\r\n0\r\n\r\n"),
            ("Transfer-Encoding: identity", 501,
             post + b"Transfer-Encoding: identity\r\n\r\n" + body),
            ("Transfer-Encoding on a GET", 501,
             b"GET /healthz HTTP/1.1\r\n" + HOST + b"Transfer-Encoding: xyz\r\n\r\n"),
        ]
        for what, status, req in cases:
            t0 = time.monotonic()
            st, hdrs, resp, closed = raw(srv.port, req, timeout=8)
            took = time.monotonic() - t0
            eq(st, status, what)
            check(took < 3, "%s: answered at once (%.1f s)" % (what, took))
            check("close" in str(hdrs.get("connection", "")).lower(),
                  "%s: the connection is closed (Connection: close): %r" % (what, hdrs))
            p = json.loads(resp.decode() or "{}")
            eq(p.get("status"), status, what + " (problem body)")
        c = srv.client()
        expect_status(c.get("/v1/sessions/a/segments/x"), 404, "nothing was stored")
        # ordinary variants still pass: chunked in any case, blanks, bare LF, a leading CRLF
        ok = [
            b"\r\nGET /healthz HTTP/1.1\r\n" + HOST + b"Connection: close\r\n\r\n",
            b"GET /healthz HTTP/1.1\nHost: 127.0.0.1\nConnection: close\n\n",
            b"GET /healthz?a=%41 HTTP/1.1\r\n" + HOST + b"X-A:   v  \r\nX-B:\r\n"
            b"Connection:close\r\n\r\n",
        ]
        for req in ok:
            st, _, _, _ = raw(srv.port, req, timeout=5)
            eq(st, 200, "ordinary request %r" % req[:40])
        st, _, _, _ = raw(srv.port, post + b"Transfer-Encoding: Chunked\r\nConnection: close\r\n"
                          b"\r\n%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n", timeout=5)
        eq(st, 201, "a chunked POST")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


# ---- Host check off loopback, warnings, tokens --------------------------------------------

def outside_address():
    """A non-loopback address of this machine, or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True,
                             timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    for a in out:
        if "." in a and not a.startswith("127."):
            return a
    return None


def get_from(addr, port, host):
    s = socket.create_connection((addr, port), timeout=5)
    s.sendall(b"GET /v1/sessions HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host)
    buf = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        buf += d
    s.close()
    m = re.match(rb"HTTP/1\.1 (\d+)", buf)
    return int(m.group(1)) if m else None, buf


def test_non_loopback_listener_warns_and_checks_host():
    addr = outside_address()
    if not addr:
        print("# no non-loopback address: skipped")
        return
    srv = Server("--listen", "0.0.0.0", "--allowed-host", "monitor.example")
    try:
        check(re.search(r"WARN .*listening on 0\.0\.0\.0 without a token", srv.logs()),
              "a WARN names the open listener: %r" % srv.logs()[-800:])
        port = srv.port
        st, body = get_from(addr, port, b"evil.example:%d" % port)
        eq(st, 403, "a DNS name from another machine without read-token (rebinding)")
        check(b"forbidden-host" in body, "forbidden-host: %r" % body[-300:])
        eq(get_from(addr, port, b"%s:%d" % (addr.encode(), port))[0], 200, "an IP literal Host")
        eq(get_from(addr, port, b"monitor.example")[0], 200, "an allowed-host")
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()
    w, r = "write-token-0123456789", "read-token-0123456789"
    srv = Server("--listen", "0.0.0.0", "--write-token", w, "--read-token", r)
    try:
        check(not re.search(r"WARN .*listening on", srv.logs()), "no WARN with tokens")
        st, _ = get_from(addr, srv.port, b"monitor.example")
        eq(st, 401, "with read-token any Host passes to authentication")
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_short_tokens_are_refused_at_start():
    d = tmpdir("adaptmon-tok-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADAPTMON_")}
    for flag, tok in (("--write-token", "x"), ("--write-token", "fifteen-chars-1")):
        p = subprocess.run([ADAPTMON, "serve", "--port", "0", "--db", os.path.join(d, "t.db"),
                            flag, tok], capture_output=True, text=True, timeout=30, env=env)
        check(p.returncode != 0, "%s of %d characters refused" % (flag, len(tok)))
        check("at least 16 characters" in p.stderr, "the message says why: %r" % p.stderr)


# ---- rescore on a full database --------------------------------------------------------------

def test_rescore_on_a_full_database_is_507():
    d = tmpdir("adaptmon-full-")
    db = os.path.join(d, "x.db")
    srv = Server("--max-db-size", "192KiB", db=db)
    try:
        c = srv.client()
        c.create_session(id="a", options=dict(OPTIONS))
        text = " ".join("word%d" % k for k in range(60))
        n = 0
        for i in range(3000):
            r = c.post("/v1/sessions/a/segments",
                       {"id": "s%d" % i, "source": text, "hypothesis": text, "translation": text})
            if r.status != 201:
                eq(r.status, 507, "the fill ends with 507")
                break
            n += 1
        check(n >= 3, "some segments stored (%d)" % n)
        r = c.post("/v1/sessions/a/rescore", None)
        eq(r.status, 507, "rescore on a full database: %s" % r.body[:300])
        eq(r.json()["type"], "https://adaptmon.dev/problems/insufficient-storage", "type")
        eq(c.jget("/v1/sessions/a")["segments"], n, "the session is unchanged")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
