#!/usr/bin/env python3
"""Guards of the write path and the request gate (issue 25, "Tests that
protect the write path before it is rewritten"), against a spawned
`adaptmon serve`. Each test here was written against a small deliberate
bug planted in the code it guards (tests/mutants/*.patch, run by
`make mutants`, tools/mutants.sh) and fails on it:

  * group commit, a failing batch: 8 writers into a database capped with
    --max-db-size (PRAGMA max_page_count: SQLite fails with SQLITE_FULL as
    on a full disk) until writes are refused; after a restart without the
    cap every segment answered 201 is stored and every other one is not
    (a batch's error must reach every job of the batch, also the jobs that
    never ran or whose savepoint was released before the commit failed);
  * group commit, a failing job in a busy batch: re-posts of stored ids
    with another body (409) among concurrent good POSTs of 8 writers;
    after a restart the stored totals and counts equal a replay of the
    stored segment log (the failing job's savepoint must be rolled back,
    or its totals are committed with the batch);
  * the list matcher of --cors-origin and --allowed-host: an entry matches
    whole; a prefix or an extension of a listed entry is refused;
  * the same-origin write check: a write from another origin (scheme +
    host + port of the Host header) is 403 forbidden-origin, changes
    nothing; the server's own origin passes;
  * the body limit (--max-body) at its boundary, with Content-Length and
    chunked: exactly the limit is accepted, one byte more is 413
    payload-too-large and stores nothing;
  * the resume race of the event stream: a stream resumed with
    Last-Event-ID while POSTs land during its replay delivers every
    segment exactly once, in order (driven many rounds).

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only.
"""
import http.client
import json
import os
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reliability"))
from harness import (Server, base, check, db_query, eq, expect_problem,  # noqa: E402
                     expect_status, run_tests, sqlite_only, tico19)
from rel import db_segments, replay_equals, scale  # noqa: E402  (the replay check)

OPTIONS = {"profile": "simianer2019", "stopwords": "iso"}
WRITERS = 8
WAIT = 60.0  # upper bound for anything to arrive (ASan and valgrind builds are slow)


def seg(i, prefix="s"):
    """TICO-19 segment i under client id PREFIX-i."""
    t = tico19()
    s = t[i % len(t)]
    return {"id": "%s%d" % (prefix, i), "source": s["source"], "hypothesis": s["hypothesis"],
            "translation": s["translation"]}


def run_threads(fns, timeout=300):
    """Runs each callable in its own thread at once; joins them; re-raises
    the first exception one of them raised."""
    errors = []

    def wrap(f):
        def run():
            try:
                f()
            except BaseException as e:  # reported below
                errors.append(e)
        return run

    ts = [threading.Thread(target=wrap(f)) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout)
        check(not t.is_alive(), "a writer thread still runs after %d s" % timeout)
    if errors:
        raise errors[0]


def stored_state(srv):
    """{session id: (segments column, [client ids in seq order])} of a
    stopped server's database, on either backend (harness.db_query)."""
    out = {}
    for sid_text, sid, n in db_query(srv, "SELECT id, sid, segments FROM sessions"):
        ids = [r[0] for r in db_query(
            srv, "SELECT client_id FROM segments WHERE sid = ? ORDER BY seq", (int(sid),))]
        out[sid_text] = (int(n), ids)
    return out


# ---- group commit: a batch that fails (a full database, 8 writers) ---------------------

def fill_round(cap, crash):
    """8 writers (a session each) post until the capped database refuses
    them; then a restart without the cap, after SIGKILL when crash (an
    acknowledged commit is in the file, whatever the process does next),
    else after SIGTERM. Returns the number of 201s."""
    srv = Server("--max-db-size", cap)
    db = srv.db
    c = srv.client()
    for w in range(WRITERS):
        c.create_session(id="w%d" % w, options=OPTIONS)
    c.close()
    text = " ".join("word%d" % k for k in range(40))
    answers = {w: [] for w in range(WRITERS)}  # (client id, status) per writer

    def writer(w):
        def run():
            cw = srv.client()
            refused = 0
            for i in range(2000):
                cid = "w%d-%d" % (w, i)  # never retried: one answer per id
                body = {"id": cid, "source": text, "hypothesis": "%s %d" % (text, i),
                        "translation": "%s %d %d" % (text, w, i)}
                r = cw.post(base("w%d" % w) + "/segments", body)
                answers[w].append((cid, r.status))
                if r.status != 201:
                    check(r.status in (503, 507), "a refused write answers 507 (or 503), "
                          "got %d: %s" % (r.status, r.body[:300]))
                    refused += 1
                    if refused >= 12:
                        break
            cw.close()
        return run

    run_threads([writer(w) for w in range(WRITERS)])
    full = sum(1 for w in answers for _cid, st in answers[w] if st == 507)
    check(full > 0, "the database never filled up")
    if crash:
        srv.kill()
    else:
        eq(srv.stop(), 0, "exit status of the capped server")
    # restart without the cap: the database as the next start finds it
    srv.args = []
    srv.start()
    c = srv.client()
    acked = 0
    for w in range(WRITERS):
        sid = "w%d" % w
        ok = [cid for cid, st in answers[w] if st == 201]
        acked += len(ok)
        eq(c.jget(base(sid))["segments"], len(ok), "segments of %s after the restart "
           "(201 answers: %d)" % (sid, len(ok)))
        for cid, st in answers[w]:
            r = c.get(base(sid) + "/segments/" + cid)
            if st == 201:
                eq(r.status, 200, "segment %s answered 201, after the restart" % cid)
            else:
                eq(r.status, 404, "segment %s answered %d, after the restart" % (cid, st))
    c.close()
    eq(srv.stop(), 0, "exit status after the restart")
    state = stored_state(srv)
    for w in range(WRITERS):
        n, ids = state["w%d" % w]
        eq(ids, [cid for cid, st in answers[w] if st == 201],
           "stored ids of w%d, in order, are exactly the acknowledged ones" % w)
        eq(n, len(ids), "sessions.segments of w%d" % w)
    return acked


def test_full_database_8_writers_every_201_stored_every_refusal_absent():
    # three rounds with different caps: where the batch that meets the
    # full database starts and how many jobs it holds differ
    sqlite_only("--max-db-size is SQLite's max_page_count; PostgreSQL has no such cap")
    rounds = (("192KiB", False), ("256KiB", True), ("320KiB", True))
    for cap, crash in rounds[:scale(3, 1)]:  # one under valgrind
        acked = fill_round(cap, crash)
        check(acked >= WRITERS, "some segments were stored first (%d)" % acked)
        print("# cap %s: %d segments acknowledged" % (cap, acked))


# ---- group commit: a failing job inside a busy batch ---------------------------------

def test_conflicting_repost_in_a_busy_batch_leaves_no_trace_after_restart():
    srv = Server()
    db = srv.db
    c = srv.client()
    # A session scored from its cached state (two POSTs in) answers a
    # re-post with another body from the group-commit job: the id's unique
    # index refuses the insert after the job wrote the totals. After one such
    # re-post the session takes the snapshot path for a while (re-posts come
    # in runs: AM_SESS_REPEAT_PAUSE), so each session gets one, as its last
    # write (a later good POST would overwrite totals the job left behind).
    reposts = ["rp%d" % k for k in range(12)]
    goods = ["g%d" % w for w in range(WRITERS)]
    for sid in reposts + goods:
        c.create_session(id=sid, options=OPTIONS)
    stop = threading.Event()
    errors = []

    def writer(w):
        def run():
            cw = srv.client()
            i = 0
            try:
                while not stop.is_set() or i < 5:
                    s = seg(i + 7 * w, "g%d-" % w)
                    expect_status(cw.post(base(goods[w]) + "/segments", s), 201,
                                  "POST %s" % s["id"])
                    i += 1
            except BaseException as e:  # reported by the test
                errors.append(e)
            finally:
                cw.close()
        return run

    ts = [threading.Thread(target=writer(w)) for w in range(WRITERS)]
    for t in ts:
        t.start()
    try:
        for k, sid in enumerate(reposts):
            for i in (0, 1):
                s = seg(3 * k + i, sid + "-")
                expect_status(c.post(base(sid) + "/segments", s), 201, "POST %s" % s["id"])
            old = seg(3 * k, sid + "-")
            other = dict(old, translation=old["translation"] + " autre")
            expect_problem(c.post(base(sid) + "/segments", other), 409, "conflict",
                           "re-post of %s/%s with another body" % (sid, old["id"]))
    finally:
        stop.set()
        for t in ts:
            t.join(120)
    check(not errors, "a writer failed: %r" % errors[:1])
    before = {s: c.jget(base(s) + "/metrics") for s in reposts + goods}
    for sid in reposts:
        eq(before[sid]["segments"], 2, "segments of %s before the restart" % sid)
    c.close()
    eq(srv.stop(), 0, "exit status")
    state = stored_state(srv)
    for sid in reposts:
        eq(state[sid], (2, [sid + "-%d" % (3 * reposts.index(sid) + i) for i in (0, 1)]),
           "stored segments of %s (sessions.segments, ids)" % sid)
    srv.start()
    c = srv.client()
    after = {s: c.jget(base(s) + "/metrics") for s in before}
    c.close()
    eq(srv.stop(), 0, "exit status after the restart")
    for s in sorted(before):
        eq(after[s]["segments"], before[s]["segments"], "segments of %s after the restart" % s)
    # the stored totals (read back after the restart) and the ones served
    # before it, each against a replay of the stored segment log
    segs, _sess = db_segments(db)
    options = {sid: OPTIONS for sid in segs}
    replay_equals(after, segs, options, "after the restart:")
    replay_equals(before, segs, options, "before the restart:")


# ---- the list matcher: --cors-origin and --allowed-host --------------------------------

SESSION = {"id": "web", "source_lang": "en", "target_lang": "fr"}


def test_cors_origin_list_matches_whole_entries_only():
    srv = Server("--cors-origin", "http://a.example.com", "--cors-origin",
                 "https://ui.example.org:8443")
    c = srv.client()
    try:
        for o in ("http://a.example.com", "https://ui.example.org:8443"):
            r = c.get("/v1/sessions", headers={"Origin": o})
            eq(r.header("Access-Control-Allow-Origin"), o, "Allow-Origin for the listed %s" % o)
        refused = ("http://a.example.co", "http://a.example.com.evil", "http://a.example.comx",
                   "http://a.example.com:80", "http://a.example", "http://", "h",
                   "https://ui.example.org:844", "https://ui.example.org:84430",
                   "https://ui.example.org", "https://ui.example.org:8443/",
                   "http://a.example.com,https://ui.example.org:8443",
                   "xhttp://a.example.com", "https://evil.ui.example.org:8443")
        for o in refused:
            r = c.get("/v1/sessions", headers={"Origin": o})
            eq(r.header("Access-Control-Allow-Origin"), None, "no Allow-Origin for %r" % o)
            r = c.request("OPTIONS", "/v1/sessions", headers={
                "Origin": o, "Access-Control-Request-Method": "POST"})
            eq(r.header("Access-Control-Allow-Origin"), None, "no preflight grant for %r" % o)
            r = c.post("/v1/sessions", SESSION, headers={"Origin": o})
            expect_problem(r, 403, "forbidden-origin", "POST from %r" % o)
            eq(c.jget("/v1/sessions")["sessions"], [], "nothing created by %r" % o)
        r = c.post("/v1/sessions", SESSION, headers={"Origin": "http://a.example.com"})
        expect_status(r, 201, "POST from the listed origin")
        c.close()
        eq(srv.stop(), 0, "exit status of adaptmon serve")
    finally:
        c.close()
        srv.kill()


def test_allowed_host_list_matches_whole_entries_only():
    srv = Server("--allowed-host", "a.example.com", "--allowed-host", "proxy.lan:8443")
    c = srv.client()
    try:
        for h in ("a.example.com", "a.example.com:%d" % srv.port, "A.Example.COM",
                  "proxy.lan:8443"):
            expect_status(c.get("/v1/sessions", headers={"Host": h}), 200, "Host: %s" % h)
        for h in ("a.example.co", "a.example.co:%d" % srv.port, "a.example.com.evil",
                  "a.example.com.evil:%d" % srv.port, "a.example.comx", "xa.example.com",
                  "evil-a.example.com", "example.com", "a.example", "proxy.lan:844",
                  "proxy.lan:84430", "proxy.la:8443", "proxy.lan.evil:8443", "roxy.lan:8443"):
            expect_problem(c.get("/v1/sessions", headers={"Host": h}), 403, "forbidden-host",
                           "Host: %s" % h)
            expect_problem(c.post("/v1/sessions", SESSION, headers={"Host": h}), 403,
                           "forbidden-host", "POST with Host: %s" % h)
        eq(c.jget("/v1/sessions")["sessions"], [], "nothing created")
        c.close()
        eq(srv.stop(), 0, "exit status of adaptmon serve")
    finally:
        c.close()
        srv.kill()


# ---- the same-origin write check ------------------------------------------------------

def test_writes_from_another_origin_are_403_and_change_nothing():
    srv = Server()
    c = srv.client()
    try:
        c.create_session(id="a")
        s = seg(0)
        expect_status(c.post(base("a") + "/segments", s), 201, "POST without Origin")
        own = "http://127.0.0.1:%d" % srv.port
        before = c.jget(base("a") + "/metrics")
        seg0 = c.jget(base("a") + "/segments/s0")
        foreign = ("http://evil.example", "null", "http://127.0.0.1:1",
                   own + "0", own[:-1], own + ".evil.example", own + "@evil.example",
                   "http://127.0.0.2:%d" % srv.port, "http://localhost:%d" % srv.port,
                   "ftp://127.0.0.1:%d" % srv.port, "127.0.0.1:%d" % srv.port)
        for o in foreign:
            h = {"Origin": o}
            expect_problem(c.post("/v1/sessions", {"id": "x", "source_lang": "en",
                                                   "target_lang": "fr"}, headers=h),
                           403, "forbidden-origin", "POST /v1/sessions from %r" % o)
            expect_problem(c.post(base("a") + "/segments", seg(1), headers=h), 403,
                           "forbidden-origin", "segment POST from %r" % o)
            expect_problem(c.put(base("a") + "/segments/s0", dict(s, translation="autre"),
                                 headers=h), 403, "forbidden-origin", "segment PUT from %r" % o)
            expect_problem(c.put(base("a") + "/glossary", "source,target\nvirus,virus\n",
                                 ctype="text/csv", headers=h), 403, "forbidden-origin",
                           "glossary PUT from %r" % o)
            expect_problem(c.delete(base("a"), headers=h), 403, "forbidden-origin",
                           "DELETE from %r" % o)
            # reads are answered (a browser withholds them without CORS)
            expect_status(c.get(base("a"), headers=h), 200, "GET from %r" % o)
        eq([x["id"] for x in c.jget("/v1/sessions")["sessions"]], ["a"], "sessions")
        eq(c.jget(base("a") + "/metrics"), before, "metrics after the refused writes")
        eq(c.jget(base("a") + "/segments/s0"), seg0, "the stored segment after the refused writes")
        # the server's own origin (its dashboard) writes
        for k, o in enumerate((own, own.replace("http://", "https://"), own.upper())):
            r = c.post(base("a") + "/segments", seg(k, "own"), headers={"Origin": o})
            expect_status(r, 201, "POST from the server's own origin %r" % o)
        c.close()
        eq(srv.stop(), 0, "exit status of adaptmon serve")
    finally:
        c.close()
        srv.kill()


# ---- the body limit at its boundary -------------------------------------------------------

MAX_BODY = 4096
MAX_GBODY = 8192  # --max-glossary-body: glossary PUTs and XLIFF imports


def padded(obj, size):
    """The JSON of obj padded with blanks to exactly size bytes."""
    text = json.dumps(obj).encode()
    check(len(text) <= size, "padding target too small")
    return text[:-1] + b" " * (size - len(text)) + b"}"


def glossary_csv(size):
    """A glossary CSV of exactly size bytes (one line padded)."""
    head = b"source,target\n"
    rows = b"".join(b"term%d,terme%d\n" % (k, k) for k in range((size - 40) // 16))
    rows = rows[:rows.rfind(b"\n", 0, size - len(head) - 30) + 1]
    pad = size - len(head) - len(rows) - len(b"zz,") - 1
    check(pad > 0, "glossary padding")
    out = head + rows + b"zz," + b"y" * pad + b"\n"
    eq(len(out), size, "glossary size")
    return out


def send_chunked(port, path, body, chunk):
    """POSTs body with Transfer-Encoding: chunked in chunks of `chunk` bytes
    (one send per chunk); returns (status, problem type slug or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        parts = [body[i:i + chunk] for i in range(0, len(body), chunk)]
        conn.request("POST", path, body=iter(parts), encode_chunked=True,
                     headers={"Content-Type": "application/json",
                              "Transfer-Encoding": "chunked"})
        r = conn.getresponse()
        data = r.read()
        slug = None
        if r.getheader("Content-Type", "").startswith("application/problem+json"):
            slug = json.loads(data)["type"].rsplit("/", 1)[-1]
        return r.status, slug
    finally:
        conn.close()


def test_body_limit_boundary_content_length_and_chunked():
    srv = Server("--max-body", str(MAX_BODY), "--max-glossary-body", str(MAX_GBODY))
    c = srv.client()
    try:
        c.create_session(id="lim")
        path = base("lim") + "/segments"
        s = seg(0)
        # Content-Length
        b = padded(dict(s, id="cl-at"), MAX_BODY)
        eq(len(b), MAX_BODY, "body size")
        expect_status(c.post(path, b, ctype="application/json"), 201, "max-body bytes")
        b = padded(dict(s, id="cl-over"), MAX_BODY + 1)
        p = expect_problem(c.post(path, b, ctype="application/json"), 413, "payload-too-large",
                           "max-body + 1 bytes")
        eq(p.get("limit"), MAX_BODY, "the problem's limit")
        c.close()
        # chunked: one chunk, then many small ones (the limit is met across
        # upload callbacks, not inside one)
        for chunk in (MAX_BODY + 1, 1000, 97):
            b = padded(dict(s, id="ch-at-%d" % chunk), MAX_BODY)
            eq(send_chunked(srv.port, path, b, chunk), (201, None),
               "chunked (%d-byte chunks) of max-body bytes" % chunk)
            b = padded(dict(s, id="ch-over-%d" % chunk), MAX_BODY + 1)
            eq(send_chunked(srv.port, path, b, chunk), (413, "payload-too-large"),
               "chunked (%d-byte chunks) of max-body + 1 bytes" % chunk)
        ids = [x["id"] for x in c.jget(path + "?limit=100")["segments"]]
        eq(sorted(ids), sorted(["cl-at", "ch-at-4097", "ch-at-1000", "ch-at-97"]),
           "exactly the bodies within the limit are stored")
        # a glossary has its own limit, a segment keeps max-body under it
        gl = base("lim") + "/glossary"
        b = glossary_csv(MAX_GBODY)
        expect_status(c.put(gl, b, ctype="text/csv"), 200, "glossary of max-glossary-body bytes")
        p = expect_problem(c.put(gl, glossary_csv(MAX_GBODY + 1), ctype="text/csv"), 413,
                           "payload-too-large", "glossary of max-glossary-body + 1 bytes")
        eq(p.get("limit"), MAX_GBODY, "the glossary problem's limit")
        c.close()
        eq(c.jget(gl)["count"], b.count(b"\n") - 1, "entries of the stored glossary")
        b = padded(dict(s, id="between"), MAX_GBODY)
        expect_problem(c.post(path, b, ctype="application/json"), 413, "payload-too-large",
                       "a segment of max-glossary-body bytes")
        c.close()
        eq(srv.stop(), 0, "exit status of adaptmon serve")
    finally:
        c.close()
        srv.kill()


# ---- the event stream: resume while POSTs land during the replay ------------------------

class Resumed:
    """GET …/events with Last-Event-ID on a raw socket; the chunked body is
    decoded here and the ids of the segment events collected."""

    def __init__(self, port, sid, last):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(WAIT)
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                   "Last-Event-ID: %d\r\n\r\n" % (base(sid), last)).encode())
        self.sock = s
        self.buf = b""
        self.text = b""
        self.ids = []  # ids of the "segment" events, in arrival order
        self.head = None

    def _more(self, deadline):
        self.sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            d = self.sock.recv(65536)
        except socket.timeout:
            return False
        check(d, "the stream ended early (ids so far %r)" % self.ids[-5:])
        self.buf += d
        return True

    def headers(self):
        """Reads the status line and headers; returns the status."""
        deadline = time.monotonic() + WAIT
        while b"\r\n\r\n" not in self.buf:
            check(self._more(deadline), "no answer headers")
        self.head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        check(b"chunked" in self.head.lower(), "a chunked stream: %r" % self.head)
        return int(self.head.split()[1])

    def _parse(self):
        while b"\r\n" in self.buf:
            line, rest = self.buf.split(b"\r\n", 1)
            size = int(line.split(b";")[0], 16)
            if len(rest) < size + 2:
                return
            check(size, "the stream ended")
            self.text += rest[:size]
            self.buf = rest[size + 2:]
            while b"\n\n" in self.text:
                block, self.text = self.text.split(b"\n\n", 1)
                ev = {}
                for ln in block.decode("utf-8").split("\n"):
                    k, _, v = ln.partition(":")
                    ev[k] = v[1:] if v.startswith(" ") else v
                if ev.get("event") == "segment":
                    self.ids.append(int(ev["id"]))

    def read_until(self, seq, grace):
        """Reads until an id >= seq arrived, then `grace` seconds more."""
        deadline = time.monotonic() + WAIT
        while not self.ids or max(self.ids) < seq:
            check(time.monotonic() < deadline, "timed out waiting for id %d (got %d ids, last "
                  "%r)" % (seq, len(self.ids), self.ids[-3:]))
            self._more(deadline)
            self._parse()
        end = time.monotonic() + grace
        while time.monotonic() < end:
            if self._more(end):
                self._parse()

    def close(self):
        self.sock.close()


def test_resume_race_delivers_every_event_exactly_once():
    """Streams resume with Last-Event-ID while a writer posts back to back:
    POSTs commit between the subscription and the end of the replay (the
    window in which an event is both replayed and buffered live), at every
    depth of replay (one page to several)."""
    srv = Server("--max-connections", "64")
    c = srv.client()
    sid = "race"
    posted = [0]  # the last seq answered 201
    stop = threading.Event()
    errors = []

    def poster():
        cp = srv.client()
        try:
            i = 0
            while not stop.is_set():
                i += 1
                r = cp.post(base(sid) + "/segments", seg(i, "live"))
                expect_status(r, 201, "live POST %d" % i)
                posted[0] = r.json()["seq"]
        except BaseException as e:  # reported by the test
            errors.append(e)
        finally:
            cp.close()

    th = threading.Thread(target=poster)
    try:
        c.create_session(id=sid, options=OPTIONS)
        for i in range(200):  # a few replay pages of history
            expect_status(c.post(base(sid) + "/segments", seg(i, "h")), 201, "history %d" % i)
        posted[0] = 200
        th.start()
        for rnd in range(scale(40, 10)):  # 10 under valgrind
            check(not errors, "the writer failed: %r" % errors[:1])
            top = posted[0]
            last = max(0, top - (3, 40, 100, 190, 250)[rnd % 5])
            st = Resumed(srv.port, sid, last)
            try:
                eq(st.headers(), 200, "stream status")
                # through the hand-over from the replay to live events
                st.read_until(top + 3, 0.02)
                got = st.ids
                eq(got, list(range(last + 1, last + 1 + len(got))),
                   "round %d: resumed after %d while segments %d.. were posted: every event "
                   "exactly once, in order" % (rnd, last, top))
            finally:
                st.close()
        stop.set()
        th.join(60)
        c.close()
        eq(srv.stop(), 0, "exit status of adaptmon serve")
    finally:
        stop.set()
        if th.is_alive():
            th.join(60)
        c.close()
        srv.kill()
    check(not errors, "the writer failed: %r" % errors[:1])


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
