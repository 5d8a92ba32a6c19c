#!/usr/bin/env python3
"""CORS in a real browser (issue 11 §5): `adaptmon serve --cors-origin
http://127.0.0.1:P1 --write-token T` and two pages served by a tiny Python
http.server on two other loopback ports, P1 (allowed) and P2 (not), opened
in the system Chromium (tests/browser/cors.mjs, playwright-core).

From the allowed page: fetch() POST with JSON and Authorization (preflighted)
creates the session, the segment POST's Location and the metrics' ETag and
Link are readable (exposed), and an EventSource receives the stored segment.
From the other page: the preflighted POST fails in the browser (no
Access-Control-Allow-Origin), reads are not readable, the EventSource fails,
and the "simple" no-cors POST without Content-Type that the browser sends
without asking is refused by the server: nothing is created.

Prints "ok NAME" / "FAILED NAME" and ends with "N passed, N failed".
"""
import functools
import http.server
import json
import os
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "api"))
sys.path.insert(0, HERE)
from harness import check, eq, run_tests  # noqa: E402
from test_dashboard import CHROMIUM, Srv, _ensure_browser, node_report  # noqa: E402

TOKEN = "cors-write-4d1e-0123"  # at least 16 characters
PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>other origin</title></head>
<body><p>a page of another origin</p></body></html>"""

_static = []
REPORT = None
S = None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def _page_server():
    """A tiny http.server on a free loopback port serving index.html."""
    d = tempfile.mkdtemp(prefix="adaptmon-cors-page-")
    with open(os.path.join(d, "index.html"), "wb") as f:
        f.write(PAGE)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(_Quiet, directory=d))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    _static.append(httpd)
    return httpd.server_address[1]


def setup():
    global REPORT, S
    _ensure_browser()
    allowed, other = _page_server(), _page_server()
    S = Srv("--cors-origin", "http://127.0.0.1:%d" % allowed, "--write-token", TOKEN)
    cfg = {"chromium": CHROMIUM, "api": S.base, "token": TOKEN,
           "pages": [{"name": "allowed", "url": "http://127.0.0.1:%d/" % allowed, "session": "ok"},
                     {"name": "other", "url": "http://127.0.0.1:%d/" % other, "session": "evil"}]}
    REPORT = node_report("cors.mjs", cfg)[0]


def teardown():
    for h in _static:
        h.shutdown()
        h.server_close()
    if S:
        eq(S.stop(), 0, "exit status of adaptmon serve")


def page(name):
    for p in REPORT["pages"]:
        if p["name"] == name:
            return p["results"]
    raise AssertionError("no report for page %s: %r" % (name, REPORT))


def test_allowed_origin_posts_json_with_authorization():
    r = page("allowed")
    eq(r["create"].get("status"), 201, "fetch POST /v1/sessions from the allowed origin: %r"
       % r["create"])
    eq(r["segment"].get("status"), 201, "fetch POST segment: %r" % r["segment"])
    check(r["segment"].get("location"), "Location is exposed to the page: %r" % r["segment"])
    check(r["segment"].get("requestId"), "X-Request-Id is exposed: %r" % r["segment"])


def test_allowed_origin_reads_etag_and_link():
    r = page("allowed")["metrics"]
    eq(r.get("status"), 200, "GET metrics: %r" % r)
    check(r.get("etag"), "ETag is exposed: %r" % r)
    check(r.get("link"), "Link is exposed: %r" % r)


def test_allowed_origin_event_stream():
    r = page("allowed")["events"]
    eq(r.get("type"), "segment", "EventSource got the stored segment: %r" % r)
    eq(r.get("lastEventId"), "1", "event id")
    eq(json.loads(r["data"]).get("id"), "p1", "event data")


def test_other_origin_is_refused():
    r = page("other")
    check("error" in r["create"], "the preflighted POST fails in the browser: %r" % r["create"])
    check("error" in r["metrics"], "a read is not readable: %r" % r["metrics"])
    check("error" in r["events"], "the EventSource fails: %r" % r["events"])
    eq(r["simple"].get("type"), "opaque", "the no-cors POST was sent: %r" % r["simple"])
    c = S.client(TOKEN)
    ids = [s["id"] for s in c.jget("/v1/sessions")["sessions"]]
    c.close()
    eq(sorted(ids), ["ok"], "sessions on the server (nothing from the other origin)")


if __name__ == "__main__":
    sys.exit(run_tests(globals(), setup=setup, teardown=teardown))
