#!/usr/bin/env python3
"""Resource limits at their edges: exactly at the limit is accepted, one over
is refused with the documented status.

  --max-body N              a body of N bytes → 201, N+1 → 413 payload-too-large
  --max-glossary-body N     a glossary of N bytes → 200, N+1 → 413
  --max-tokens N            a text of N tokens → 201, N+1 → 422 too-many-tokens
                            (a segment's texts and both texts of a /check)
  --max-segment-tokens N    a segment whose texts hold N tokens together → 201,
                            N+1 → 422 too-many-tokens, whatever the systems
  --max-term-occurrences N  N glossary term occurrences → 201, N+1 → 422
  --max-glossary-entries N  N entries → 200, N+1 → 413 (PUT and inline at POST /v1/sessions)
  --max-connections N       the N-th simultaneous connection is served, the
                            N+1-th is not (503 on a reserved connection, which
                            serves only /healthz, /readyz and /metrics; or it
                            waits in the listen backlog) until one of the N
                            closes; with the default threads (16) above N, the
                            pool is N
  --conn-timeout N          an idle connection survives well under N s and is
                            closed after N s (+ the server's 1 s tick)
  --request-timeout-ms N    a request that computes longer (a PUT replaying a
                            12,000-segment session) is abandoned: 503
                            request-timeout, nothing stored
  export memory             exports (json, csv, tmx) and the timeline of a
                            session several times larger than the bound are
                            streamed: the server's peak RSS (VmHWM) grows by
                            less than EXPORT_BOUND_MB for one, twice that for
                            four at once
"""
import base64
import http.client
import json
import os
import re
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, grow_session, problem_type, raw, scale, seg_body, tico19  # noqa: E402
from harness import Server, check, eq, expect_problem, expect_status, run_tests  # noqa: E402

MAX_BODY = 4096
MAX_GBODY = 8192
MAX_TOKENS = 50
MAX_ENTRIES = 5


def padded(obj, size):
    """JSON of obj padded with spaces to exactly size bytes."""
    text = json.dumps(obj).encode()
    check(len(text) <= size, "padding target too small")
    return text[:-1] + b" " * (size - len(text)) + b"}"


def test_body_tokens_glossary_limits():
    srv = Server("--max-body", str(MAX_BODY), "--max-glossary-body", str(MAX_GBODY),
                 "--max-tokens", str(MAX_TOKENS), "--max-glossary-entries", str(MAX_ENTRIES))
    try:
        c = srv.client()
        c.create_session(id="lim", options=dict(OPTIONS))
        path = "/v1/sessions/lim/segments"
        # body size
        b = padded({"id": "at", "hypothesis": "a", "translation": "b"}, MAX_BODY)
        eq(len(b), MAX_BODY, "body size")
        expect_status(c.post(path, b, ctype="application/json"), 201, "body of max-body bytes")
        b = padded({"id": "over", "hypothesis": "a", "translation": "b"}, MAX_BODY + 1)
        expect_problem(c.post(path, b, ctype="application/json"), 413, "payload-too-large",
                       "body of max-body+1 bytes")
        c.close()
        expect_status(c.get(path + "/over"), 404, "the refused segment is not stored")
        # tokens, in each text of a segment
        words = lambda n: " ".join(["mot"] * n)  # noqa: E731
        expect_status(c.post(path, {"id": "t-at", "source": words(MAX_TOKENS),
                                    "hypothesis": words(MAX_TOKENS),
                                    "translation": words(MAX_TOKENS)}), 201,
                      "texts of max-tokens tokens")
        for field in ("translation", "hypothesis", "source"):
            body = {"id": "t-over", "source": "a", "hypothesis": "a", "translation": "a"}
            body[field] = words(MAX_TOKENS + 1)
            p = expect_problem(c.post(path, body), 422, "too-many-tokens",
                               "%s of max-tokens+1 tokens" % field)
            check(field in json.dumps(p), "the problem names %s: %r" % (field, p))
        expect_status(c.get(path + "/t-over"), 404, "the refused segment is not stored")
        # glossary body size (CSV padded with blank lines, which the parser ignores)
        g = b"source,target\nvirus,virus\n"
        gl = "/v1/sessions/lim/glossary"
        r = c.put(gl, g + b"\n" * (MAX_GBODY - len(g)), ctype="text/csv")
        expect_status(r, (200, 201), "glossary of max-glossary-body bytes")
        r = c.put(gl, g + b"\n" * (MAX_GBODY + 1 - len(g)), ctype="text/csv")
        expect_problem(r, 413, "payload-too-large", "glossary of max-glossary-body+1 bytes")
        c.close()
        eq(len(c.jget(gl)["entries"]), 1, "glossary after the refused upload")
        # glossary entries: PUT and inline at session creation
        rows = lambda n: "source,target\n" + "".join("w%d,m%d\n" % (i, i) for i in range(n))  # noqa
        expect_status(c.put(gl, rows(MAX_ENTRIES), ctype="text/csv"), (200, 201),
                      "glossary of max-glossary-entries entries")
        # a glossary over the entry limit is "too large" (server/api/api_glossary.c)
        p = expect_problem(c.put(gl, rows(MAX_ENTRIES + 1), ctype="text/csv"), 413,
                           "payload-too-large", "glossary of max-glossary-entries+1 entries")
        eq(len(c.jget(gl)["entries"]), MAX_ENTRIES, "glossary after the refused upload")
        inline = lambda n: [{"source": "w%d" % i, "targets": ["m%d" % i]} for i in range(n)]  # noqa
        c.create_session(id="inl-at", options=dict(OPTIONS), glossary=inline(MAX_ENTRIES))
        r = c.post("/v1/sessions", {"id": "inl-over", "source_lang": "en", "target_lang": "fr",
                                    "glossary": inline(MAX_ENTRIES + 1)})
        # inline at POST /v1/sessions the same limit answers the same 413
        expect_problem(r, 413, "payload-too-large",
                       "inline glossary of max-glossary-entries+1 entries")
        expect_status(c.get("/v1/sessions/inl-over"), 404, "the refused session")
        print("# over-limit glossary: %s" % p.get("detail"))
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_segment_token_budget_and_check_tokens():
    """16 systems each at max-tokens made a POST cost 16 single-system ones
    (0.17 s at 2,500 tokens, over the 100 ms goal): the whole segment has a
    budget, --max-segment-tokens. /check had no token limit at all."""
    seg_max = 3 * MAX_TOKENS
    srv = Server("--max-tokens", str(MAX_TOKENS), "--max-segment-tokens", str(seg_max))
    try:
        c = srv.client()
        c.create_session(id="budget", options=dict(OPTIONS))
        path = "/v1/sessions/budget/segments"
        words = lambda n: " ".join(["mot"] * n)  # noqa: E731
        # 6 systems of 20 tokens + source and translation of 15: exactly the budget
        hyps = {"s%d" % i: words(20) for i in range(6)}
        at = {"id": "at", "source": words(15), "translation": words(15), "hypotheses": hyps}
        expect_status(c.post(path, at), 201, "a segment of max-segment-tokens tokens")
        over = dict(at, id="over", translation=words(16))
        p = expect_problem(c.post(path, over), 422, "too-many-tokens",
                           "a segment of max-segment-tokens+1 tokens, each text under max-tokens")
        check("max-segment-tokens" in p.get("detail", ""), "the problem names the limit: %r" % p)
        expect_status(c.get(path + "/over"), 404, "the refused segment is not stored")
        eq(c.jget("/v1/sessions/budget")["segments"], 1, "segments after the refusal")
        # /check: each text within max-tokens
        ck = "/v1/sessions/budget/check"
        expect_status(c.post(ck, {"source": words(MAX_TOKENS), "hypothesis": words(MAX_TOKENS)}), 200,
                      "check with texts of max-tokens tokens")
        for field in ("source", "hypothesis"):
            body = {"source": "a", "hypothesis": "a"}
            body[field] = words(MAX_TOKENS + 1)
            p = expect_problem(c.post(ck, body), 422, "too-many-tokens", "check %s of max-tokens+1" % field)
            check(field in p.get("detail", ""), "the problem names %s: %r" % (field, p))
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_max_term_occurrences_edge():
    """--max-term-occurrences N: a segment (or check) with N glossary term
    occurrences is answered, N+1 get 422 too-many-term-occurrences and
    nothing is stored; the limit also covers the default (2000), which
    bounds the time of a 10,000-token segment with a nested glossary."""
    n = 40
    srv = Server("--max-term-occurrences", str(n))
    try:
        c = srv.client()
        c.create_session(id="occ", options=dict(OPTIONS))
        expect_status(c.put("/v1/sessions/occ/glossary", [{"source": "a", "targets": ["b"]}]),
                      (200, 201), "glossary")
        path = "/v1/sessions/occ/segments"
        words = lambda w, k: " ".join([w] * k)  # noqa: E731
        expect_status(c.post(path, {"id": "at", "source": words("a", n), "hypothesis": words("b", n),
                                    "translation": words("b", n)}), 201, "N occurrences")
        p = expect_problem(c.post(path, {"id": "over", "source": words("a", n + 1),
                                         "hypothesis": words("b", n + 1),
                                         "translation": words("b", n + 1)}),
                           422, "too-many-term-occurrences", "N+1 occurrences")
        check(str(n) in p.get("detail", ""), "the problem names the limit: %r" % p)
        expect_status(c.get(path + "/over"), 404, "the refused segment is not stored")
        chk = "/v1/sessions/occ/check"
        r = c.post(chk, {"source": words("a", n), "hypothesis": words("b", n)})
        expect_status(r, 200, "check with N occurrences")
        eq(len(r.json()["terms"]), n, "check items")
        expect_problem(c.post(chk, {"source": words("a", n + 1), "hypothesis": words("b", n)}),
                       422, "too-many-term-occurrences", "check with N+1 occurrences")
        c.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def _hold(port):
    """A kept-alive connection that got one answer (so the server holds it)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    buf = b""
    while b"\r\n\r\n" not in buf:
        got = s.recv(4096)
        if not got:
            break
        buf += got
    check(buf.startswith(b"HTTP/1.1 200"), "held connection answered: %r" % buf[:80])
    return s


def test_max_connections_edge():
    _max_connections_edge("--threads", "1")


def test_max_connections_below_the_default_threads():
    """--max-connections 4 alone (the default threads are 16): the pool is
    lowered to 4 threads, said in the ready log line, and the edge holds."""
    _max_connections_edge()


def _max_connections_edge(*extra):
    n = 4
    srv = Server("--max-connections", str(n), "--conn-timeout", "30", *extra)
    try:
        if not extra:
            check(re.search(r"\b%d threads\b" % n, srv.logs()),
                  "the ready line names %d threads: %r" % (n, srv.logs()[-600:]))
        held = [_hold(srv.port) for _ in range(n - 1)]
        # the n-th connection is served
        st, _, _, _ = raw(srv.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                          timeout=5)
        eq(st, 200, "connection number %d (the limit)" % n)
        held.append(_hold(srv.port))
        # n held: the probes still answer, on the reserved connections beyond
        # max-connections (issue 25) ...
        st, _, _, _ = raw(srv.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                          timeout=5)
        eq(st, 200, "/healthz with %d connections held" % n)
        # ... but any other request is not served: 503 on a reserved connection
        # (or, once those are taken too, it waits in the kernel's backlog)
        extra = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        extra.sendall(b"GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        extra.settimeout(scale(2, 6))
        try:
            got = extra.recv(4096)
        except socket.timeout:
            got = None
        check(got is None or got == b"" or got.startswith(b"HTTP/1.1 503"),
              "connection number %d was served: %r" % (n + 1, got))
        if got is None:
            held.pop().close()
            extra.settimeout(10)
            got = extra.recv(4096)
            check(got.startswith(b"HTTP/1.1 200"),
                  "the waiting connection is served once one closes: %r" % got[:80])
        extra.close()
        # after one released a new connection is served
        held.pop().close()
        time.sleep(0.3)
        st, _, _, _ = raw(srv.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                          timeout=5)
        eq(st, 200, "after connections closed")
        for s in held:
            s.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_conn_timeout_edge():
    t = 2
    srv = Server("--conn-timeout", str(t))
    try:
        s = _hold(srv.port)
        time.sleep(t / 2.0)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        got = s.recv(4096)
        check(got.startswith(b"HTTP/1.1 200"), "idle %.1fs (< conn-timeout): %r" % (t / 2.0, got))
        time.sleep(t + 1.5)
        try:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            got = s.recv(4096)
        except (ConnectionResetError, BrokenPipeError):
            got = b""
        eq(got, b"", "idle %.1fs (> conn-timeout): the connection is closed" % (t + 1.5))
        s.close()
        eq(srv.stop(), 0, "exit status")
    finally:
        srv.kill()


def test_request_over_budget_is_503_and_changes_nothing():
    # the expensive request: a PUT, which replays the whole session (12,000
    # segments: seconds of CPU, far over a 300 ms budget)
    srv = Server("--request-timeout-ms", "300")
    try:
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        segs = tico19()
        for k in range(40):
            expect_status(c.post("/v1/sessions/g/segments", seg_body(segs[k], "s%d" % k)), 201)
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        grow_session(db, "g", 12000)
        srv.kill()
        srv = Server("--request-timeout-ms", "300", db=db)
        c = srv.client()
        before = c.get("/v1/sessions/g/metrics")
        expect_status(before, 200)
        eq(before.json()["segments"], 12000, "segments of the grown session")
        last = c.get("/v1/sessions/g/segments?after=11990&limit=10").json()
        r = c.put("/v1/sessions/g/segments/s1", seg_body(segs[50], "s1"), timeout=120)
        p = expect_problem(r, 503, "request-timeout", "PUT replaying 12,000 segments over the budget")
        check("300 ms" in p["detail"], "the detail names the budget: %r" % p["detail"])
        eq(r.header("Retry-After"), None, "Retry-After of a request over its budget")
        after = c.get("/v1/sessions/g/metrics")
        eq(after.body, before.body, "metrics after the abandoned PUT")
        eq(after.header("ETag"), before.header("ETag"), "ETag after the abandoned PUT")
        eq(c.get("/v1/sessions/g/segments?after=11990&limit=10").json(), last,
           "the last segments' results after the abandoned PUT")
        eq(c.get("/v1/sessions/g/segments/s1").json()["request"]["translation"],
           segs[1]["translation"], "s1 after the abandoned replacement")
        # the server still works: a normal post is scored and stored
        expect_status(c.post("/v1/sessions/g/segments", seg_body(segs[60], "new")), 201)
    finally:
        srv.kill()


EXPORT_BOUND_MB = 24  # fixed costs: 4 readers' page caches, per-thread allocator arenas
EXPORT_SEGMENTS = 60  # ~58 MB of JSON export, ~2.4 times the bound


def _proc_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _drain(port, path, out, key):
    """GETs path and counts the body's bytes without keeping them."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        n = 0
        while True:
            b = r.read(1 << 16)
            if not b:
                break
            n += len(b)
        out[key] = (r.status, n)
    finally:
        conn.close()


def test_exports_stream_with_bounded_memory():
    srv = Server()
    try:
        c = srv.client()
        c.create_session(id="big", source_lang="en", target_lang="fr")
        for k in range(EXPORT_SEGMENTS):
            # 100 long words per text: ~240 kB each, cheap to score
            words = base64.b32encode(os.urandom(100 * 1500)).decode().lower()
            text = " ".join(words[i * 2400:(i + 1) * 2400] for i in range(100))
            expect_status(c.post("/v1/sessions/big/segments",
                                 {"id": "s%d" % k, "source": text, "hypothesis": text,
                                  "translation": text}, timeout=120), 201, "big post %d" % k)
        pid = srv.proc.pid
        hwm0, rss0 = _proc_kb(pid, "VmHWM"), _proc_kb(pid, "VmRSS")
        got = {}
        _drain(srv.port, "/v1/sessions/big/export?format=json", got, "json")
        _drain(srv.port, "/v1/sessions/big/segments?limit=1000", got, "timeline")
        hwm1 = _proc_kb(pid, "VmHWM")
        # four at once (each thread keeps its own allocator arena): twice the bound
        ths = [threading.Thread(target=_drain, args=(srv.port, "/v1/sessions/big/export?format="
                                                    + f, got, "%s%d" % (f, i)))
               for i, f in enumerate(("json", "csv", "tmx", "json"))]
        for t in ths:
            t.start()
        for t in ths:
            t.join(600)
        hwm2, rss2 = _proc_kb(pid, "VmHWM"), _proc_kb(pid, "VmRSS")
        print("# export sizes %s; VmHWM +%.1f MB (one at a time), +%.1f MB (four at once), "
              "VmRSS after +%.1f MB" % (dict((k, v[1]) for k, v in sorted(got.items())),
                                        (hwm1 - hwm0) / 1024.0, (hwm2 - hwm0) / 1024.0,
                                        (rss2 - rss0) / 1024.0))
        for k, (st, n) in got.items():
            eq(st, 200, "status of %s" % k)
        check(got["json"][1] > 2 * EXPORT_BOUND_MB << 20,
              "the JSON export (%d bytes) is not several times the bound" % got["json"][1])
        check(hwm1 - hwm0 < EXPORT_BOUND_MB * 1024,
              "peak RSS grew by %.1f MB during one export (bound %d MB)"
              % ((hwm1 - hwm0) / 1024.0, EXPORT_BOUND_MB))
        check(hwm2 - hwm0 < 2 * EXPORT_BOUND_MB * 1024,
              "peak RSS grew by %.1f MB during four exports at once (bound %d MB)"
              % ((hwm2 - hwm0) / 1024.0, 2 * EXPORT_BOUND_MB))
        check(rss2 - rss0 < 2 * EXPORT_BOUND_MB * 1024,
              "RSS after the exports is %.1f MB higher (bound %d MB)"
              % ((rss2 - rss0) / 1024.0, 2 * EXPORT_BOUND_MB))
        # the streamed JSON is the complete, valid document
        e = c.get("/v1/sessions/big/export?format=json", timeout=300).json()
        eq(e["count"], EXPORT_SEGMENTS, "count of the JSON export")
        eq([s["seq"] for s in e["segments"]], list(range(1, EXPORT_SEGMENTS + 1)),
           "seqs of the JSON export")
    finally:
        srv.kill()


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
