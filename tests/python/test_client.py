#!/usr/bin/env python3
"""Black-box tests of the Python HTTP client, python/adaptmon/client.py.

Every method runs against a spawned `adaptmon serve` (tests/api/harness.py:
a free loopback port, a temporary database), with authentication on; every
answer the client receives from it is recorded through the client's
on_response hook and, in the last test, validated against openapi.yaml by
tests/api/response_check.mjs (also appended to APITEST_RECORD_DIR when set).
Retry-After, transport retries, timeouts and SSE reconnection after a
dropped connection are tested against a small scripted HTTP server in this
file, which can misbehave on purpose.

The module is loaded by its file path (importlib), so neither the compiled
extension nor an installed package is needed.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only (and node for the openapi check).
"""
import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "api"))
from harness import (Server, Skip, check, eq, record, run_tests, shutdown,  # noqa: E402
                     tico19)

_spec = importlib.util.spec_from_file_location(
    "adaptmon_client_under_test", os.path.join(ROOT, "python", "adaptmon", "client.py"))
am = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(am)

W = "W-token-123-45678"   # write token
R = "R-token-456-78901"   # read token
S = None                  # the server under test
RECORDED = []             # every exchange with S: (method, path, status, headers, body)
_rec_lock = threading.Lock()
WAIT = 60.0


def on_response(method, path, status, headers, body):
    with _rec_lock:
        RECORDED.append((method, path, status, headers, body))
    record(method, path, status, headers, body)   # APITEST_RECORD_DIR, when set


def client(token=W, **kw):
    kw.setdefault("on_response", on_response)
    return am.Client("http://127.0.0.1:%d" % S.port, token=token, **kw)


def setup():
    global S
    # --stream-max-age 2: streams are ended by the server (event: reconnect)
    # while the tests read them, so the client's resume is exercised
    S = Server("--write-token", W, "--read-token", R, "--max-body", "65536",
               "--stream-max-age", "2", "--sse-heartbeat", "1")


def teardown():
    shutdown(S)


def raises(status, kind, fn, *args, **kw):
    """Calls fn; it must raise ApiError with this status and problem kind."""
    try:
        fn(*args, **kw)
    except am.ApiError as e:
        eq(e.status, status, "ApiError.status of %s" % fn.__name__)
        eq(e.kind, kind, "ApiError.kind of %s" % fn.__name__)
        eq(e.type, "https://adaptmon.dev/problems/" + kind, "ApiError.type")
        check(isinstance(e.title, str) and e.title, "ApiError.title empty: %r" % e)
        check(isinstance(e.detail, str) and e.detail, "ApiError.detail empty: %r" % e)
        eq(e.problem.get("status"), status, "problem.status")
        return e
    raise AssertionError("%s did not raise ApiError %d %s" % (fn.__name__, status, kind))


def segs(n, prefix, start=0):
    """n TICO-19 segments as SegmentRequest dicts with unique ids."""
    t = tico19()
    return [am.Client.segment("%s%d" % (prefix, i), t[i]["translation"],
                              hypothesis=t[i]["hypothesis"], source=t[i]["source"])
            for i in range(start, start + n)]


# ---- the service --------------------------------------------------------------

def test_service_routes():
    c = client(token=None)     # service routes are open
    eq(c.health(), {"status": "ok"}, "health()")
    r = c.ready()
    check(r["status"] in ("ok", "ready"), "ready() status: %r" % r)
    check(isinstance(r.get("schema_version"), int), "ready() schema_version: %r" % r)
    check(c.openapi().startswith("openapi: 3.1"), "openapi() is the contract")


def test_url_and_arguments_checked():
    for bad in ("127.0.0.1:8080", "ftp://h/", "http://"):
        try:
            am.Client(bad)
        except ValueError:
            continue
        raise AssertionError("Client(%r) accepted" % bad)
    c = client()
    for fn in (lambda: c.put_glossary("x", "source,target\na,b\n"),
               lambda: c.post_segment("x", "1", "t"),
               lambda: c.post_segment("x", "1", "t", hypothesis="h", hypotheses={"a": "h"}),
               lambda: c.metrics("x", ci=1.5),
               lambda: c.export("x", "xml"),
               lambda: c.post_batch("x", [{"translation": "t", "hypothesis": "h"}])):
        try:
            fn()
        except ValueError:
            continue
        raise AssertionError("bad arguments reached the server")


# ---- sessions -------------------------------------------------------------------

def test_sessions_create_get_list_delete():
    c = client()
    s = c.create_session("en", "fr", id="py-s1", name="first",
                         options={"baseline_system": "base"}, systems=["base", "ada"],
                         metadata={"run": 1})
    eq(s["id"], "py-s1", "created id")
    eq(s["systems"], ["base", "ada"], "created systems")
    eq(s["options"]["baseline_system"], "base", "created options")
    eq(c.get_session("py-s1")["name"], "first", "get_session name")
    c.create_session("en", "de", id="py-s2")
    c.create_session("en", "de", id="py-s3")
    page = c.list_sessions(limit=1)
    eq(len(page["sessions"]), 1, "list_sessions(limit=1) length")
    check(page["next"] is not None, "list_sessions first page has next")
    ids = [x["id"] for x in c.iter_sessions(page_size=1)]
    for i in ("py-s1", "py-s2", "py-s3"):
        check(i in ids, "iter_sessions lacks %s: %r" % (i, ids))
    eq(ids, sorted(ids), "iter_sessions in id order")
    eq(len(ids), len(set(ids)), "iter_sessions without duplicates")
    c.delete_session("py-s2")
    raises(404, "not-found", c.get_session, "py-s2")
    raises(404, "not-found", c.delete_session, "py-s2")
    # a known id: 409, nothing changed
    raises(409, "conflict", c.create_session, "en", "fr", id="py-s1")
    eq(c.get_session("py-s1")["name"], "first", "session unchanged by the 409")


def test_auth_tokens():
    client().create_session("en", "fr", id="py-auth")
    raises(401, "unauthorized", client(token=None).get_session, "py-auth")
    raises(403, "forbidden", client(token="wrong-token-0000000").list_sessions)
    rc = client(token=R)
    eq(rc.get_session("py-auth")["id"], "py-auth", "the read token reads")
    raises(403, "forbidden", rc.create_session, "en", "fr", id="py-ro")
    raises(404, "not-found", client().get_session, "py-ro")


# ---- glossary ---------------------------------------------------------------------

def test_glossary_put_get_delete():
    c = client()
    c.create_session("en", "fr", id="py-g")
    g = c.put_glossary("py-g", [{"source": "virus", "targets": ["virus"]},
                                {"source": "mask", "target": "masque"}])
    eq(g["entries"], 2, "JSON glossary entries")
    v1 = g["version"]
    got = c.get_glossary("py-g")
    eq(got["count"], 2, "get_glossary count")
    eq(sorted(e["source"] for e in got["entries"]), ["mask", "virus"], "get_glossary sources")
    g2 = c.put_glossary("py-g", "source,target\ncough,toux\nfever,fièvre|fièvres\n",
                        content_type="text/csv")
    eq(g2["entries"], 2, "CSV glossary entries")
    check(g2["version"] > v1, "a PUT makes a new version: %r then %r" % (v1, g2["version"]))
    eq(c.put_glossary("py-g", {"entries": [{"source": "a", "target": "b"}]})["entries"], 1,
       "{entries: []} form")
    raises(422, "invalid-value", c.put_glossary, "py-g",
           "en,de\nvirus,Virus\n", content_type="text/csv")
    eq(c.get_glossary("py-g")["count"], 1, "a refused glossary changed nothing")
    c.delete_glossary("py-g")
    eq(c.get_glossary("py-g").get("count", 0), 0, "glossary deleted")
    raises(404, "not-found", c.put_glossary, "py-none", [{"source": "a", "target": "b"}])


# ---- segments ----------------------------------------------------------------------

def test_segments_post_edit_list_delete():
    c = client()
    c.create_session("en", "fr", id="py-seg")
    t = tico19()
    a = c.post_segment("py-seg", "a", t[0]["translation"], hypothesis=t[0]["hypothesis"],
                       source=t[0]["source"], translator="tr1")
    eq((a["id"], a["seq"]), ("a", 1), "first segment")
    check("default" in a["totals"], "totals per system: %r" % list(a["totals"]))
    # the same id and body: the stored result, counted once
    again = c.post_segment("py-seg", "a", t[0]["translation"], hypothesis=t[0]["hypothesis"],
                           source=t[0]["source"], translator="tr1")
    eq(again["seq"], 1, "re-post answers the stored seq")
    eq(again["totals"], a["totals"], "re-post counts nothing twice")
    raises(409, "conflict", c.post_segment, "py-seg", "a", "autre chose", hypothesis="x")
    b = c.post_segment("py-seg", "b", t[1]["translation"], hypothesis=t[1]["hypothesis"],
                       source=t[1]["source"], references=[t[1]["hypothesis"]])
    eq(b["seq"], 2, "second segment")
    # the edit: b's result is recomputed
    e = c.put_segment("py-seg", "b", t[1]["hypothesis"], hypothesis=t[1]["hypothesis"],
                      source=t[1]["source"])
    eq(e["seq"], 2, "PUT keeps the seq")
    check(abs(e["scores"]["systems"]["default"]["bleu"] - 100.0) < 1e-9,
          "PUT rescored (hypothesis = translation): %r" % e["scores"]["systems"]["default"])
    # PUT of a new id appends it
    n = c.put_segment("py-seg", "c", t[2]["translation"], hypothesis=t[2]["hypothesis"])
    eq(n["seq"], 3, "PUT of a new id appends")
    got = c.get_segment("py-seg", "b")
    eq(got["request"]["translation"], t[1]["hypothesis"], "get_segment has the edit")
    page = c.list_segments("py-seg", limit=2)
    eq([x["id"] for x in page["segments"]], ["a", "b"], "list_segments first page")
    eq(page["total"], 3, "list_segments total")
    eq([x["id"] for x in c.iter_segments("py-seg", page_size=1)], ["a", "b", "c"],
       "iter_segments")
    c.delete_segment("py-seg", "b")
    eq([x["seq"] for x in c.iter_segments("py-seg")], [1, 3], "seqs after the delete")
    raises(404, "not-found", c.get_segment, "py-seg", "b")
    w = c.word("py-seg", a["scores"]["words"][0]["word"])
    check(w["occurrences"] >= 1, "word() history: %r" % w)
    ck = c.check("py-seg", t[3]["source"], hypothesis=t[3]["hypothesis"])
    check("adaptation" in ck, "check() answer: %r" % list(ck))
    eq(c.get_session("py-seg")["segments"], 2, "check() changed nothing")


def test_batch():
    c = client()
    c.create_session("en", "fr", id="py-b")
    items = segs(6, "b")
    res = c.post_batch("py-b", items)
    eq((res["created"], res["unchanged"], res["failed"]), (6, 0, None), "batch counts")
    eq([i["status"] for i in res["items"]], [201] * 6, "item statuses")
    eq([i["result"]["seq"] for i in res["items"]], list(range(1, 7)), "items in order")
    # the same batch again (a retry): stored, counted once
    res2 = c.post_batch("py-b", items, ndjson=True)
    eq((res2["created"], res2["unchanged"]), (0, 6), "re-posted batch (NDJSON)")
    eq(res2["items"][5]["result"]["totals"], res["items"][5]["result"]["totals"],
       "a re-posted batch changes no total")
    # a batch that stops at its failed item: the earlier ones are stored
    more = segs(3, "m", start=10)
    more[1] = dict(more[1], translation="différent", id="b0")     # a conflict with b0
    part = c.post_batch("py-b", more)
    eq((part["created"], part["failed"], part["not_attempted"]), (1, 1, 1), "partial batch")
    eq(part["items"][1]["status"], 409, "the failed item's status")
    e = raises(409, "conflict", c.post_batch, "py-b", more, raise_on_failure=True)
    eq(e.problem["batch"]["failed"], 1, "raise_on_failure carries the batch")
    eq(c.get_session("py-b")["segments"], 7, "6 + the item before the failure")
    raises(422, "invalid-value", c.post_batch, "py-b", [])


def test_one_client_shared_by_threads():
    c = client()
    errors = []

    def work(k):
        try:
            sid = "py-th%d" % k
            c.create_session("en", "fr", id=sid)
            for s in segs(8, "t%d-" % k):
                c.post_segment(sid, s["id"], s["translation"], hypothesis=s["hypothesis"])
        except Exception as e:     # reported below, in the test's thread
            errors.append(e)

    ths = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    eq(errors, [], "errors in the threads")
    for k in range(4):
        m = c.metrics("py-th%d" % k)
        eq(m["segments"], 8, "segments of py-th%d" % k)
    eq(c.metrics("py-th0")["systems"], c.metrics("py-th3")["systems"],
       "the same segments give the same totals in every thread's session")


# ---- metrics, exports, rescore, vocabularies, import -----------------------------

def test_metrics_curve_plot_export_rescore():
    c = client()
    c.create_session("en", "fr", id="py-m")
    c.post_batch("py-m", segs(30, "m"))
    m = c.metrics("py-m")
    eq(m["segments"], 30, "metrics segments")
    tot = m["systems"]["default"]
    last = c.get_segment("py-m", "m29")
    eq(tot["r0"], last["totals"]["default"]["r0"], "metrics = the last segment's totals")
    mc = client(token=R).metrics("py-m", ci=0.95)
    conf = mc["confidence"]
    eq((conf["test"], conf["confidence"], conf["segments"]), ("paired-bs", 0.95, 30),
       "metrics(ci=0.95)")
    cv = c.curve("py-m", points=10)
    check(len(cv["x"]) <= 10 and cv["x"][-1] == 30, "curve x: %r" % cv["x"])
    check("r0" in cv["systems"]["default"], "curve series")
    cci = c.curve("py-m", window=5, ci=True)
    check("ci" in cci["systems"]["default"], "curve(ci=True) has ci")
    svg = c.plot_svg("py-m", points=20)
    check("<svg" in svg[:400], "plot_svg is SVG: %r" % svg[:100])
    ex = c.export("py-m")
    check(isinstance(ex, dict), "export json is a dict")
    csv = c.export("py-m", "csv")
    eq(len(csv.strip().splitlines()), 31, "export csv: a header and 30 rows")
    tmx = c.export("py-m", "tmx")
    check("<tmx" in tmx, "export tmx")
    c.put_glossary("py-m", [{"source": "symptoms", "target": "symptômes"}])
    rs = c.rescore("py-m")
    eq(rs["segments"], 30, "rescore segments")
    check(rs["glossary_version"] >= 1, "rescore with the glossary")
    check(rs["systems"]["default"]["terms"]["instances"] > 0, "rescored totals count terms")
    raises(404, "not-found", c.metrics, "py-nothere")


def test_vocabulary_and_import():
    c = client()
    v = c.put_vocabulary("py-voc", "1200 virus\n3 coronavirus\n")
    eq(v["words"], 2, "put_vocabulary words")
    eq(c.get_vocabulary("py-voc")["words"], 2, "get_vocabulary")
    c.delete_vocabulary("py-voc")
    raises(404, "not-found", c.get_vocabulary, "py-voc")
    xdir = os.path.join(ROOT, "tests", "data", "xliff")
    with open(os.path.join(xdir, "omegat.xlf"), "rb") as f:
        xlf = f.read()
    with open(os.path.join(xdir, "expected.json"), encoding="utf-8") as f:
        exp = json.load(f)
    want = exp.get("omegat.xlf") or exp.get("omegat")
    c.create_session(*_langs(xlf), id="py-x")
    res = c.import_xliff("py-x", xlf)
    check(res["imported"] > 0, "import_xliff imported: %r" % res)
    if isinstance(want, dict) and "imported" in want:
        eq(res["imported"], want["imported"], "import_xliff as tests/data/xliff/expected.json")
    again = c.import_xliff("py-x", xlf)
    eq((again["imported"], again["already_present"]), (0, res["imported"]), "re-import")


def _langs(xlf):
    import re
    text = xlf.decode("utf-8", "replace")
    s = re.search(r'(?:source-language|srcLang)="([^"]+)"', text).group(1)
    t = re.search(r'(?:target-language|trgLang)="([^"]+)"', text).group(1)
    return s, t


# ---- errors ---------------------------------------------------------------------

def test_errors_401_404_409_413_422():
    c = client()
    c.create_session("en", "fr", id="py-e")
    raises(401, "unauthorized", client(token=None).post_segment, "py-e", "1", "t",
           hypothesis="h")
    raises(404, "not-found", c.post_segment, "py-nope", "1", "t", hypothesis="h")
    c.post_segment("py-e", "1", "la traduction", hypothesis="une traduction")
    raises(409, "conflict", c.post_segment, "py-e", "1", "autre", hypothesis="une traduction")
    e = raises(413, "payload-too-large", c.post_segment, "py-e", "2", "mot " * 20000,
               hypothesis="h")
    eq(e.problem.get("limit"), 65536, "413 problem names the limit")
    e = raises(422, "unknown-field", c.create_session, "en", "fr", id="py-e2",
               options={"no_such_option": 1})
    check("no_such_option" in e.detail or e.problem.get("field"), "422 names the field: %r" % e)
    raises(404, "not-found", c.get_session, "py-e2")
    eq(c.get_session("py-e")["segments"], 1, "the refused requests changed nothing")
    check(str(e).startswith("POST /v1/sessions: 422"), "ApiError text: %s" % e)


# ---- events ---------------------------------------------------------------------

def test_events_replay_live_and_resume():
    c = client(token=R)   # a stream needs the read token
    w = client()
    w.create_session("en", "fr", id="py-ev")
    posted = [w.post_segment("py-ev", s["id"], s["translation"], hypothesis=s["hypothesis"],
                             source=s["source"]) for s in segs(3, "e")]
    got = []
    it = c.events("py-ev", after=0, read_timeout=10)
    t0 = time.monotonic()

    def later():
        # posted after the server ended the first stream (--stream-max-age 2)
        time.sleep(3)
        for s in segs(3, "e", start=3):
            w.post_segment("py-ev", s["id"], s["translation"], hypothesis=s["hypothesis"])
        # then the delete ends the stream (also when events went missing: no hang)
        end = time.monotonic() + 20
        while len(got) < 6 and time.monotonic() < end:
            time.sleep(0.05)
        w.delete_session("py-ev")

    th = threading.Thread(target=later)
    th.start()
    gone = None
    try:
        for ev in it:
            got.append(ev)
            check(time.monotonic() - t0 < WAIT, "events did not end: %r" % got)
    except am.ApiError as e:
        # the server ended the stream (max age) just before the delete: the
        # resumed stream finds no session
        gone = e
    finally:
        th.join()
    kinds = [e.event for e in got]
    if gone is None:
        eq(kinds, ["segment"] * 6 + ["deleted"], "events")
    else:
        eq(kinds, ["segment"] * 6, "events before the 404")
        eq(gone.status, 404, "a resumed stream of a deleted session")
    eq([e.id for e in got[:6]], [str(i) for i in range(1, 7)], "ids: no gap, no duplicate")
    eq([e.data for e in got[:3]], posted, "replayed data = the POST answers")
    streams = [r for r in RECORDED if r[0] == "GET" and "/v1/sessions/py-ev/events" in r[1]]
    check(len(streams) >= 2, "the client reconnected after the server's max age: %d streams"
          % len(streams))
    check(all("after=0" not in r[1] for r in streams[1:]),
          "a resumed stream uses Last-Event-ID, not after: %r" % [r[1] for r in streams])


def test_events_errors():
    c = client(token=R)
    raises(404, "not-found", lambda: next(c.events("py-nothing")))
    client().create_session("en", "fr", id="py-ev-auth")
    raises(401, "unauthorized", lambda: next(client(token=None).events("py-ev-auth")))


def test_docs_example_runs():
    """The first example of docs/python.md's Client section runs as printed
    (with this server's URL and token)."""
    with open(os.path.join(ROOT, "docs", "python.md"), encoding="utf-8") as f:
        doc = f.read()
    section = doc[doc.index("\n## Client\n"):]
    code = section[section.index("```python\n") + 10:]
    code = code[:code.index("```")]
    check("from adaptmon import Client, ApiError\n" in code, "the example imports adaptmon")
    code = code.replace("from adaptmon import Client, ApiError\n", "")
    code = code.replace('"http://127.0.0.1:8080"', '"http://127.0.0.1:%d"' % S.port)
    code = code.replace('"my-write-token"', repr(W))
    out = []
    ns = {"Client": am.Client, "ApiError": am.ApiError,
          "print": lambda *a: out.append(" ".join(str(x) for x in a))}
    exec(compile(code, "docs/python.md", "exec"), ns)
    eq(len(out), 3, "the example prints three lines: %r" % out)
    check(out[0].startswith("1 {'hits': "), "first line: %r" % out[0])
    check(out[1].startswith("409 conflict "), "second line: %r" % out[1])


# ---- a scripted server: retries, timeouts, dropped streams --------------------------

class Fake:
    """A loopback HTTP server answering each request with the next scripted
    action: (status, headers, body) or "drop" (close without answering) or
    ("sleep", seconds) or ("sse", text, keep_open). Records the requests."""

    def __init__(self, actions):
        self.actions = list(actions)
        self.requests = []       # (method, path, headers dict)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.th = threading.Thread(target=self._serve, daemon=True)
        self.th.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._conn, args=(conn,), daemon=True).start()

    def _conn(self, conn):
        f = conn.makefile("rb")
        try:
            while True:
                line = f.readline()
                if not line:
                    return
                method, path, _ = line.decode().split(" ", 2)
                h = {}
                while True:
                    hl = f.readline().decode().rstrip("\r\n")
                    if not hl:
                        break
                    k, _, v = hl.partition(":")
                    h[k.strip().lower()] = v.strip()
                n = int(h.get("content-length", "0"))
                body = f.read(n) if n else b""
                self.requests.append((method, path, h, body))
                act = self.actions.pop(0) if self.actions else (500, {}, b"")
                if act == "drop":
                    return
                if act[0] == "sleep":
                    time.sleep(act[1])
                    return
                if act[0] == "sse":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                 b"Connection: close\r\n\r\n" + act[1].encode())
                    if act[2]:
                        time.sleep(30)
                    return
                status, hdrs, body = act
                out = "HTTP/1.1 %d X\r\nContent-Length: %d\r\n" % (status, len(body))
                for k, v in hdrs.items():
                    out += "%s: %s\r\n" % (k, v)
                conn.sendall(out.encode() + b"\r\n" + body)
        except OSError:
            return
        finally:
            f.close()
            conn.close()

    def close(self):
        self.sock.close()


PROBLEM = {"Content-Type": "application/problem+json"}


def _problem(status, kind):
    return json.dumps({"type": "https://adaptmon.dev/problems/" + kind, "title": kind,
                       "status": status, "detail": "scripted"}).encode()


def test_retry_after_honoured():
    busy = (503, dict(PROBLEM, **{"Retry-After": "1"}), _problem(503, "unavailable"))
    ok = (200, {"Content-Type": "application/json"}, b'{"status": "ok"}')
    f = Fake([busy, ok])
    try:
        t0 = time.monotonic()
        eq(am.Client(f.url, retries=1).health(), {"status": "ok"}, "answer after the retry")
        check(time.monotonic() - t0 >= 0.95, "waited Retry-After: 1")
        eq(len(f.requests), 2, "sent twice")
    finally:
        f.close()
    # a non-idempotent request is also sent again: a 503 with Retry-After stored nothing
    f = Fake([busy, (201, {"Content-Type": "application/json"}, b'{"id": "x"}')])
    try:
        eq(am.Client(f.url, retries=1).create_session("en", "fr", id="x"), {"id": "x"},
           "create_session after Retry-After")
    finally:
        f.close()
    f = Fake([busy])
    try:
        e = raises(503, "unavailable", am.Client(f.url, retries=0).health)
        eq(e.retry_after, 1.0, "ApiError.retry_after")
    finally:
        f.close()
    # a wait above max_retry_wait is not slept: the error at once
    long_busy = (429, dict(PROBLEM, **{"Retry-After": "120"}), _problem(429, "too-many-streams"))
    f = Fake([long_busy])
    try:
        t0 = time.monotonic()
        raises(429, "too-many-streams", am.Client(f.url, max_retry_wait=5).health)
        check(time.monotonic() - t0 < 5, "no 120 s wait")
    finally:
        f.close()
    # a 503 without Retry-After (request-timeout) is not repeated
    f = Fake([(503, PROBLEM, _problem(503, "request-timeout"))])
    try:
        raises(503, "request-timeout", am.Client(f.url).health)
        eq(len(f.requests), 1, "sent once")
    finally:
        f.close()


def test_transport_retries_only_when_idempotent():
    seg = (201, {"Content-Type": "application/json"}, b'{"id": "1", "seq": 1}')
    f = Fake(["drop", seg])
    try:
        eq(am.Client(f.url).post_segment("s", "1", "t", hypothesis="h")["seq"], 1,
           "segment POST retried after a dropped connection")
        eq([r[1] for r in f.requests], ["/v1/sessions/s/segments"] * 2, "sent twice")
        eq(f.requests[0][3], f.requests[1][3], "the same body (the same segment id)")
        eq(json.loads(f.requests[1][3])["id"], "1", "the retry carries the client's id")
    finally:
        f.close()
    f = Fake(["drop", (201, {"Content-Type": "application/json"}, b"{}")])
    try:
        try:
            am.Client(f.url).create_session("en", "fr")
            raise AssertionError("create_session retried after a dropped connection")
        except (ConnectionError, OSError):
            pass
        eq(len(f.requests), 1, "create_session sent once")
    finally:
        f.close()
    f = Fake(["drop", "drop", "drop"])
    try:
        try:
            am.Client(f.url, retries=2).get_session("s")
            raise AssertionError("no error after the retries")
        except (ConnectionError, OSError):
            pass
        eq(len(f.requests), 3, "1 + retries attempts")
    finally:
        f.close()
    # a DELETE whose answer was lost: the retry's 404 means it was done
    f = Fake(["drop", (404, PROBLEM, _problem(404, "not-found"))])
    try:
        am.Client(f.url).delete_segment("s", "1")
        eq(len(f.requests), 2, "DELETE retried once")
    finally:
        f.close()


def test_timeout():
    f = Fake([("sleep", 3)])
    try:
        t0 = time.monotonic()
        try:
            am.Client(f.url, timeout=0.5, retries=0).get_session("s")
            raise AssertionError("no timeout")
        except TimeoutError:
            pass
        check(time.monotonic() - t0 < 2.5, "timed out after 0.5 s")
    finally:
        f.close()


def test_events_reconnect_after_a_dropped_connection():
    seg = lambda i: ('id: %d\nevent: segment\ndata: {"seq": %d}\n\n' % (i, i))  # noqa: E731
    f = Fake([("sse", "retry: 50\n\n" + seg(1) + ": ping\n\n" + seg(2), False),   # cut
              (503, dict(PROBLEM, **{"Retry-After": "0"}), _problem(503, "unavailable")),
              ("sse", seg(3) + "event: deleted\ndata: {}\n\n", True)])
    try:
        got = list(am.Client(f.url).events("s", after=0, read_timeout=5))
        eq([(e.event, e.id, e.data) for e in got],
           [("segment", "1", {"seq": 1}), ("segment", "2", {"seq": 2}),
            ("segment", "3", {"seq": 3}), ("deleted", None, {})], "events across the drop")
        eq(f.requests[0][1], "/v1/sessions/s/events?after=0", "first connection: after=0")
        eq(f.requests[0][2].get("last-event-id"), None, "first: no Last-Event-ID")
        eq(f.requests[2][1], "/v1/sessions/s/events", "resumed without after")
        eq(f.requests[2][2].get("last-event-id"), "2", "resumed with Last-Event-ID: 2")
    finally:
        f.close()
    f = Fake([("sse", seg(1), False)])
    try:
        got = list(am.Client(f.url).events("s", reconnect=False))
        eq([e.id for e in got], ["1"], "reconnect=False ends with the stream")
    finally:
        f.close()
    # a first connection that fails raises at once, even with reconnect
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = "http://127.0.0.1:%d" % free.getsockname()[1]    # nothing listens there
    try:
        next(am.Client(url).events("s"))
        raise AssertionError("events() of a closed port did not raise")
    except ConnectionError:
        pass
    # the server's max-age end (event: reconnect) resumes from its id
    f = Fake([("sse", seg(1) + 'id: 1\nevent: reconnect\ndata: {"reason": "max-age", '
               '"last_event_id": 1, "retry_ms": 10}\n\n', False),
              ("sse", seg(2) + "event: deleted\ndata: {}\n\n", False)])
    try:
        got = list(am.Client(f.url).events("s", max_reconnects=0))
        eq([(e.event, e.id) for e in got], [("segment", "1"), ("segment", "2"),
                                            ("deleted", None)], "events across max-age")
        eq(f.requests[1][2].get("last-event-id"), "1", "resumed after the reconnect event")
    finally:
        f.close()


# ---- last: every answer of the real server against openapi.yaml ----------------------

def test_zz_responses_match_openapi():
    check(len(RECORDED) > 50, "answers recorded: %d" % len(RECORDED))
    routes = {(m, p.split("?")[0]) for m, p, *_ in RECORDED}
    for m, p in (("POST", "/v1/sessions"), ("GET", "/v1/sessions/py-m/metrics"),
                 ("POST", "/v1/sessions/py-b/segments"), ("GET", "/v1/sessions/py-ev/events")):
        check((m, p) in routes, "%s %s was recorded" % (m, p))
    if shutil.which("node") is None:
        raise Skip("node is not installed")
    api = os.path.join(ROOT, "tests", "api")
    if not os.path.isdir(os.path.join(api, "node_modules", "ajv")):
        subprocess.run(["npm", "ci", "--prefix", api, "--no-audit", "--no-fund",
                        "--loglevel=error"], check=False, capture_output=True, timeout=600)
    if not os.path.isdir(os.path.join(api, "node_modules", "ajv")):
        raise Skip("tests/api/node_modules lacks ajv (npm ci --prefix tests/api failed)")
    d = tempfile.mkdtemp(prefix="adaptmon-pyclient-")
    try:
        path = os.path.join(d, "client.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            for m, p, status, headers, body in RECORDED:
                rec = {"method": m, "path": p, "status": status,
                       "headers": [[k, v] for k, v in headers], "truncated": False,
                       "body": body.decode("utf-8")}
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
        r = subprocess.run(["node", os.path.join(api, "response_check.mjs"),
                            os.path.join(ROOT, "openapi.yaml"), path],
                           capture_output=True, text=True, timeout=300)
        check(r.returncode == 0, "response_check.mjs failed:\n%s%s" % (r.stdout, r.stderr))
        check("%d responses, 0 failures" % len(RECORDED) in r.stdout,
              "response check summary: %r" % r.stdout[-300:])
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
