#!/usr/bin/env python3
"""Safe defaults of the HTTP service (issue 11 §5): with no tokens set (the
default) a web page the user visits must not be able to create sessions or
post segments.

  * a body without Content-Type is not read as JSON: 415, nothing stored;
  * a write (POST/PUT/DELETE) carrying a foreign Origin is refused with 403
    forbidden-origin before anything runs; the server's own origin passes;
  * on a loopback connection (IPv4 and IPv6), a Host header that names another
    machine (DNS rebinding: evil.example resolving to 127.0.0.1) is refused
    with 403 forbidden-host on every route; localhost, 127.x and [::1] pass,
    and --allowed-host adds names (a reverse proxy's);
  * --cors-origin ORIGIN (repeatable; ADAPTMON_CORS_ORIGIN comma-separated):
    preflight answered with Access-Control-Allow-Origin/Methods/Headers/
    Max-Age, actual answers (problems and event streams too) carry
    Access-Control-Allow-Origin and expose ETag, Location, Link, Retry-After;
    other origins get none of it and their writes are refused.
The real-browser side of CORS is tests/browser/test_cors.py.
"""
import json
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import raw  # noqa: E402
from harness import Server, check, eq, expect_problem, expect_status, run_tests  # noqa: E402

SESSION = {"id": "web", "source_lang": "en", "target_lang": "fr"}


def sessions(c):
    return [s["id"] for s in c.jget("/v1/sessions")["sessions"]]


def test_json_body_without_content_type_is_415_and_stores_nothing():
    srv = Server()
    c = srv.client()
    r = c.post("/v1/sessions", json.dumps(SESSION).encode())  # bytes: no Content-Type
    expect_problem(r, 415, "unsupported-media-type", "POST without Content-Type")
    check("application/json" in r.json()["detail"], "detail names the type: %r" % r.json())
    c.create_session(id="a")
    seg = {"id": "s1", "source": "a b", "hypothesis": "a b", "translation": "a b"}
    for ctype in (None, "text/plain", "application/x-www-form-urlencoded",
                  "multipart/form-data; boundary=x"):
        r = c.post("/v1/sessions/a/segments", json.dumps(seg).encode(), ctype=ctype)
        expect_problem(r, 415, "unsupported-media-type", "segment POST as %s" % ctype)
    eq(sessions(c), ["a"], "sessions")
    eq(c.jget("/v1/sessions/a")["segments"], 0, "segments stored")
    c.close()
    srv.stop()


def test_write_from_a_foreign_origin_is_403_and_changes_nothing():
    srv = Server()
    c = srv.client()
    c.create_session(id="a")
    evil = {"Origin": "http://evil.example"}
    r = c.post("/v1/sessions", SESSION, headers=evil)
    expect_problem(r, 403, "forbidden-origin", "cross-origin POST")
    r = c.delete("/v1/sessions/a", headers={"Origin": "null"})
    expect_problem(r, 403, "forbidden-origin", "DELETE from a sandboxed page (Origin: null)")
    r = c.put("/v1/sessions/a/glossary", "source,target\nvirus,virus\n", ctype="text/csv",
              headers={"Origin": "http://127.0.0.1:1"})  # another port is another origin
    expect_problem(r, 403, "forbidden-origin", "PUT from another port")
    eq(sessions(c), ["a"], "nothing created or deleted")
    # the server's own origin (the dashboard, curl with -H Origin) passes
    r = c.post("/v1/sessions", SESSION, headers={"Origin": "http://127.0.0.1:%d" % srv.port})
    expect_status(r, 201, "same-origin POST")
    # reads from any origin are answered (the browser withholds them without CORS)
    expect_status(c.get("/v1/sessions", headers=evil), 200, "cross-origin GET")
    c.close()
    srv.stop()


def test_foreign_host_header_on_loopback_is_403_on_every_route():
    srv = Server()
    c = srv.client()
    c.create_session(id="a")
    for host in ("evil.example:%d" % srv.port, "evil.example", "10.0.0.1:%d" % srv.port,
                 "localhost.evil.example"):
        for method, path, body in (("GET", "/v1/sessions", None), ("GET", "/healthz", None),
                                   ("POST", "/v1/sessions", SESSION),
                                   ("GET", "/v1/sessions/a/events", None)):
            r = c.request(method, path, body, headers={"Host": host})
            expect_problem(r, 403, "forbidden-host", "%s %s with Host: %s" % (method, path, host))
    eq(sessions(c), ["a"], "nothing created")
    for host in ("127.0.0.1:%d" % srv.port, "localhost:%d" % srv.port, "localhost",
                 "LOCALHOST.:%d" % srv.port, "127.1.2.3", "[::1]:%d" % srv.port,
                 "app.localhost:%d" % srv.port):
        r = c.get("/v1/sessions", headers={"Host": host})
        expect_status(r, 200, "GET with Host: %s" % host)
    # HTTP/1.0 without a Host header (health checkers): answered
    st, _h, _b, _c = raw(srv.port, b"GET /healthz HTTP/1.0\r\n\r\n")
    eq(st, 200, "HTTP/1.0 without Host")
    c.close()
    srv.stop()


def test_host_check_on_ipv6_loopback():
    srv = Server("--listen", "::1")

    def get(host):
        s = socket.create_connection(("::1", srv.port), timeout=10)
        try:
            s.sendall(("GET /healthz HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                       % host).encode())
            buf = b""
            while True:
                got = s.recv(65536)
                if not got:
                    break
                buf += got
        finally:
            s.close()
        return int(buf.split()[1])

    eq(get("[::1]:%d" % srv.port), 200, "Host [::1]")
    eq(get("localhost:%d" % srv.port), 200, "Host localhost")
    eq(get("evil.example:%d" % srv.port), 403, "Host evil.example over ::1")
    srv.stop()


def test_allowed_host_adds_names():
    srv = Server("--allowed-host", "adaptmon.internal", "--allowed-host", "proxy.lan:8443")
    c = srv.client()
    expect_status(c.get("/healthz", headers={"Host": "adaptmon.internal:%d" % srv.port}), 200,
                  "allowed-host with a port")
    expect_status(c.get("/healthz", headers={"Host": "proxy.lan:8443"}), 200, "host:port entry")
    expect_problem(c.get("/healthz", headers={"Host": "other.internal"}), 403, "forbidden-host",
                   "a name not listed")
    c.close()
    srv.stop()


def cors_server(*extra):
    srv = Server("--cors-origin", "http://127.0.0.1:5001", "--cors-origin",
                 "https://ui.example", *extra)
    return srv


def test_cors_preflight_and_actual_responses_for_an_allowed_origin():
    srv = cors_server()
    c = srv.client()
    o = "https://ui.example"
    r = c.request("OPTIONS", "/v1/sessions", headers={
        "Origin": o, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    check(r.status in (200, 204), "preflight status %d" % r.status)
    eq(r.header("Access-Control-Allow-Origin"), o, "preflight Allow-Origin")
    methods = [m.strip() for m in (r.header("Access-Control-Allow-Methods") or "").split(",")]
    check("POST" in methods and "GET" in methods, "Allow-Methods: %r" % methods)
    hdrs = (r.header("Access-Control-Allow-Headers") or "").lower()
    check("authorization" in hdrs and "content-type" in hdrs, "Allow-Headers: %r" % hdrs)
    check(int(r.header("Access-Control-Max-Age") or "0") > 0, "Max-Age")
    check("origin" in (r.header("Vary") or "").lower(), "Vary: Origin")
    # the actual request
    r = c.post("/v1/sessions", SESSION, headers={"Origin": o})
    expect_status(r, 201, "POST from the allowed origin")
    eq(r.header("Access-Control-Allow-Origin"), o, "Allow-Origin on the 201")
    exposed = [h.strip().lower() for h in
               (r.header("Access-Control-Expose-Headers") or "").split(",")]
    for h in ("etag", "location", "link", "retry-after"):
        check(h in exposed, "%s exposed: %r" % (h, exposed))
    # problems carry it too (the page can read the error)
    r = c.post("/v1/sessions", SESSION, headers={"Origin": o})
    expect_problem(r, 409, "conflict", "duplicate")
    eq(r.header("Access-Control-Allow-Origin"), o, "Allow-Origin on a problem")
    # the event stream (EventSource): headers arrive before any event
    st, h, _b, _c = raw(srv.port, ("GET /v1/sessions/web/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                                   "Origin: %s\r\nAccept: text/event-stream\r\n\r\n"
                                   % (srv.port, o)).encode(), timeout=1.5)
    eq(st, 200, "event stream status")
    eq(h.get("access-control-allow-origin"), o, "Allow-Origin on the event stream")
    c.close()
    srv.stop()


def test_cors_other_origins_get_no_cors_headers_and_cannot_write():
    srv = cors_server()
    c = srv.client()
    evil = "http://127.0.0.1:5002"
    r = c.request("OPTIONS", "/v1/sessions", headers={
        "Origin": evil, "Access-Control-Request-Method": "POST"})
    eq(r.header("Access-Control-Allow-Origin"), None, "no Allow-Origin for another origin")
    eq(r.header("Access-Control-Allow-Methods"), None, "no Allow-Methods for another origin")
    r = c.post("/v1/sessions", SESSION, headers={"Origin": evil})
    expect_problem(r, 403, "forbidden-origin", "POST from a non-allowed origin")
    eq(r.header("Access-Control-Allow-Origin"), None, "no Allow-Origin on the 403")
    r = c.get("/v1/sessions", headers={"Origin": evil})
    eq(r.header("Access-Control-Allow-Origin"), None, "no Allow-Origin on a GET")
    eq(sessions(c), [], "nothing created")
    c.close()
    srv.stop()


def test_cors_is_off_by_default():
    srv = Server()
    c = srv.client()
    r = c.request("OPTIONS", "/v1/sessions", headers={
        "Origin": "https://ui.example", "Access-Control-Request-Method": "POST"})
    eq(r.header("Access-Control-Allow-Origin"), None, "CORS off by default")
    expect_problem(c.post("/v1/sessions", SESSION, headers={"Origin": "https://ui.example"}),
                   403, "forbidden-origin", "POST from an origin when none is allowed")
    c.close()
    srv.stop()


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
