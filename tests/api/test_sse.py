#!/usr/bin/env python3
"""Black-box tests of the live event stream, GET /v1/sessions/{id}/events
(Server-Sent Events), against a spawned `adaptmon serve`.

Streams are read with raw sockets (HTTP/1.1 chunked decoding and the SSE
framing are done here, independently of the server), one thread per
stream. Covers: 200 concurrent streams receiving 50 posted segments exactly
once and in order with the POST answers as data, resume with Last-Event-ID
(no gap, no duplicate, also while segments are being posted), ?after=0,
PUT re-sends, the deleted event, 404, heartbeats, ?access_token=, a client
that falls too far behind, and SIGTERM with open streams. It also prints
(never asserts) the posting latency with 0 and 200 open streams.

Prints "ok NAME" / "FAILED NAME" + traceback per test and ends with
"N passed, N failed". APITEST_ONLY=REGEX runs a subset. Python standard
library only.
"""
import json
import os
import socket
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (Server, base, check, eq, expect_problem, expect_status,  # noqa: E402
                     run_tests, serve, shutdown, tico19)

S = None      # the main server (no authentication, heartbeat 1 s)
C = None      # a client of S

WAIT = 60.0   # generous upper bound for anything to arrive (ASan builds are slow)


def setup():
    global S, C
    # 200 streams of one session from one address: above the per-client and
    # per-session caps (tests/reliability/test_streams.py tests those)
    S, C = serve("--sse-heartbeat", "1", "--max-connections", "2000", "--max-streams", "1000",
                 "--max-streams-per-client", "0", "--max-streams-per-session", "0")


def teardown():
    shutdown(S, C)


def segs(n, start=0, prefix=""):
    """n TICO-19 segments (ids made unique with prefix)."""
    t = tico19()
    out = []
    for i in range(start, start + n):
        s = dict(t[i % len(t)])
        s["id"] = "%s%d-%s" % (prefix, i, s["id"])
        out.append(s)
    return out


def post(c, sid, seg):
    r = c.post(base(sid) + "/segments", seg)
    expect_status(r, 201, "POST segment %s" % seg["id"])
    return r.json()


# ---- an SSE client on a raw socket ---------------------------------------------------

class Stream:
    """GET path on its own socket, read by a thread: status, headers, the
    chunked body decoded, and the SSE events parsed as they arrive."""

    def __init__(self, port, path, headers=None, rcvbuf=None, start=True):
        self.port, self.path = port, path
        self.extra = headers or {}
        self.rcvbuf = rcvbuf
        self.status = None
        self.headers = {}
        self.events = []        # dicts: event, id, data (str), retry, comment
        self.eof = False        # the server closed the connection
        self.finished = False   # the chunked body ended (terminal chunk)
        self.error = None
        self.cond = threading.Condition()
        self.sock = None
        self.thread = None
        if start:
            self.start()

    def start(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        s.settimeout(WAIT * 2)
        s.connect(("127.0.0.1", self.port))
        req = "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" % self.path
        for k, v in self.extra.items():
            req += "%s: %s\r\n" % (k, v)
        s.sendall((req + "\r\n").encode())
        self.sock = s
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def close(self):
        """Closes the socket (as a client that goes away)."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        if self.thread:
            self.thread.join(10)

    # -- reading
    def _recv(self):
        try:
            d = self.sock.recv(65536)
        except OSError:
            d = b""
        return d

    def _run(self):
        buf = b""
        try:
            while b"\r\n\r\n" not in buf:
                d = self._recv()
                if not d:
                    raise EOFError("closed before the headers")
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            hdrs = {}
            for ln in lines[1:]:
                k, _, v = ln.partition(":")
                hdrs[k.strip().lower()] = v.strip()
            with self.cond:
                self.status, self.headers = status, hdrs
                self.cond.notify_all()
            if hdrs.get("transfer-encoding", "").lower() != "chunked":
                n = int(hdrs.get("content-length", "0"))
                while len(buf) < n:
                    d = self._recv()
                    if not d:
                        break
                    buf += d
                with self.cond:
                    self.body = buf[:n]
                    self.finished = True
                    self.cond.notify_all()
                return
            text = b""
            while True:
                # one chunk: size line, data, CRLF
                while b"\r\n" not in buf:
                    d = self._recv()
                    if not d:
                        raise EOFError
                    buf += d
                line, buf = buf.split(b"\r\n", 1)
                size = int(line.split(b";")[0], 16)
                while len(buf) < size + 2:
                    d = self._recv()
                    if not d:
                        raise EOFError
                    buf += d
                chunk, buf = buf[:size], buf[size + 2:]
                if size == 0:
                    with self.cond:
                        self.finished = True
                        self.cond.notify_all()
                    return
                text += chunk
                while b"\n\n" in text:
                    block, text = text.split(b"\n\n", 1)
                    self._event(block.decode("utf-8"))
        except EOFError:
            pass
        except Exception as e:  # reported by the test that waits
            self.error = repr(e)
        finally:
            with self.cond:
                self.eof = True
                self.cond.notify_all()

    def _event(self, block):
        ev = {}
        for ln in block.split("\n"):
            if ln.startswith(":"):
                ev["comment"] = ln[1:].strip()
                continue
            k, _, v = ln.partition(":")
            if v.startswith(" "):
                v = v[1:]
            if k == "data" and "data" in ev:
                ev["data"] += "\n" + v
            else:
                ev[k] = v
        with self.cond:
            self.events.append(ev)
            self.cond.notify_all()

    # -- waiting
    def wait(self, pred, what, timeout=WAIT):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not pred(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("%s: timed out; status %r, %d events, eof %r, error %r"
                                         % (what, self.status, len(self.events), self.eof,
                                            self.error))
                self.cond.wait(min(left, 1.0))

    def segments(self):
        with self.cond:
            return [e for e in self.events if e.get("event") == "segment"]

    def nseg(self):
        return sum(1 for e in self.events if e.get("event") == "segment")


def open_streams(path, n, **kw):
    streams = [Stream(S.port, path, **kw) for _ in range(n)]
    for st in streams:  # "retry:" arrives once the subscription exists
        st.wait(lambda s: s.events or s.eof, "stream opened")
        eq(st.status, 200, "stream status")
    return streams


def check_segment_events(evs, answers, what):
    """evs are the segment events of one stream; answers the POST answers in
    seq order: each once, in order, id = seq, data = the answer."""
    eq([int(e["id"]) for e in evs], [a["seq"] for a in answers], what + ": ids")
    for e, a in zip(evs, answers):
        d = json.loads(e["data"])
        if d != a:
            raise AssertionError("%s: data of seq %s differs from the POST answer:\n%r\n%r"
                                 % (what, e["id"], d, a))


# ---- tests ----------------------------------------------------------------------------

def test_404_for_unknown_session_and_bad_last_event_id():
    r = C.get(base("no-such-session") + "/events")
    expect_problem(r, 404, "not-found", "events of an unknown session")
    C.create_session(id="sse-bad")
    r = C.get(base("sse-bad") + "/events", headers={"Last-Event-ID": "x1"})
    expect_problem(r, 400, "bad-request", "Last-Event-ID that is not a seq")
    r = C.get(base("sse-bad") + "/events?after=-3")
    expect_problem(r, 400, "bad-request", "?after=-3")


def test_headers_retry_and_session_link():
    sess = C.create_session(id="sse-h")
    eq(sess["links"].get("events"), base("sse-h") + "/events", "links.events of the session")
    st = Stream(S.port, base("sse-h") + "/events")
    try:
        st.wait(lambda s: s.events, "first event")
        eq(st.status, 200, "status")
        eq(st.headers.get("content-type", "").split(";")[0], "text/event-stream", "Content-Type")
        eq(st.headers.get("cache-control"), "no-store", "Cache-Control")
        eq(st.events[0], {"retry": "2000"}, "first block")
    finally:
        st.close()


def test_200_streams_receive_every_segment_once_in_order():
    C.create_session(id="sse-200")
    streams = open_streams(base("sse-200") + "/events", 200)
    try:
        answers = [post(C, "sse-200", s) for s in segs(50)]
        eq([a["seq"] for a in answers], list(range(1, 51)), "seqs of the posts")
        for i, st in enumerate(streams):
            st.wait(lambda s: s.nseg() >= 50 or s.eof, "stream %d: 50 segments" % i)
        time.sleep(0.3)  # anything extra (a duplicate) would arrive now
        for i, st in enumerate(streams):
            check(not st.eof, "stream %d ended early (%r)" % (i, st.error))
            check_segment_events(st.segments(), answers, "stream %d" % i)
    finally:
        for st in streams:
            st.close()


def test_after_0_replays_history_then_live():
    C.create_session(id="sse-hist")
    answers = [post(C, "sse-hist", s) for s in segs(100, prefix="h")]  # > one replay page
    st = Stream(S.port, base("sse-hist") + "/events?after=0")
    try:
        st.wait(lambda s: s.nseg() >= 100, "history")
        answers.append(post(C, "sse-hist", segs(1, 100, prefix="h")[0]))
        st.wait(lambda s: s.nseg() >= 101, "live after history")
        time.sleep(0.2)
        check_segment_events(st.segments(), answers, "?after=0")
    finally:
        st.close()
    st = Stream(S.port, base("sse-hist") + "/events?after=97")
    try:
        st.wait(lambda s: s.nseg() >= 4, "?after=97")
        time.sleep(0.2)
        check_segment_events(st.segments(), answers[97:], "?after=97")
    finally:
        st.close()
    st = Stream(S.port, base("sse-hist") + "/events")  # neither: live only
    try:
        st.wait(lambda s: s.events, "live-only stream")
        a = post(C, "sse-hist", segs(1, 101, prefix="h")[0])
        st.wait(lambda s: s.nseg() >= 1, "live-only segment")
        time.sleep(0.2)
        check_segment_events(st.segments(), [a], "live only")
    finally:
        st.close()


def test_resume_with_last_event_id_no_gap_no_duplicate():
    C.create_session(id="sse-res")
    batch = segs(60, prefix="r")
    answers = [post(C, "sse-res", s) for s in batch[:10]]
    st = Stream(S.port, base("sse-res") + "/events")
    st.wait(lambda s: s.events, "opened")
    answers += [post(C, "sse-res", s) for s in batch[10:15]]
    st.wait(lambda s: s.nseg() >= 5, "5 live segments")
    st.close()  # the dashboard goes away mid-way
    last = int(st.segments()[-1]["id"])
    eq(last, 15, "last id seen")
    answers += [post(C, "sse-res", s) for s in batch[15:25]]  # missed while away
    # reconnect while another client keeps posting: the hand-over from the
    # replay to the live events must neither lose nor repeat a segment
    posted = []

    def poster():
        c = S.client()
        for s in batch[25:60]:
            posted.append(post(c, "sse-res", s))
        c.close()

    th = threading.Thread(target=poster)
    th.start()
    time.sleep(0.01)
    st2 = Stream(S.port, base("sse-res") + "/events", headers={"Last-Event-ID": str(last)})
    th.join()
    answers += posted
    try:
        st2.wait(lambda s: s.nseg() >= 45 or s.eof, "resumed stream")
        time.sleep(0.3)
        check_segment_events(st2.segments(), answers[15:], "resumed with Last-Event-ID 15")
    finally:
        st2.close()


def test_put_resends_replaced_and_later_segments():
    C.create_session(id="sse-put")
    batch = segs(5, prefix="p")
    answers = [post(C, "sse-put", s) for s in batch]
    st = Stream(S.port, base("sse-put") + "/events")
    try:
        st.wait(lambda s: s.events, "opened")
        new = dict(batch[2], translation=batch[2]["translation"] + " encore")
        r = C.put(base("sse-put") + "/segments/" + new["id"], new)
        expect_status(r, 200, "PUT")
        st.wait(lambda s: s.nseg() >= 3, "re-sent segments")
        time.sleep(0.2)
        evs = st.segments()
        eq([int(e["id"]) for e in evs], [3, 4, 5], "seqs re-sent after the PUT of seq 3")
        eq(json.loads(evs[0]["data"]), r.json(), "data of the replaced segment = PUT answer")
        for e, old in zip(evs, answers[2:]):
            now = C.jget(base("sse-put") + "/segments/" + old["id"])
            now.pop("request", None)
            eq(json.loads(e["data"]), now, "re-sent seq %s = the stored result" % e["id"])
        check(json.loads(evs[2]["data"])["totals"] != answers[4]["totals"],
              "the running totals of the last segment changed")
    finally:
        st.close()


def test_segment_delete_sends_a_notice_then_the_later_segments():
    C.create_session(id="sse-sdel")
    batch = segs(5, prefix="q")
    for s in batch:
        post(C, "sse-sdel", s)
    st = Stream(S.port, base("sse-sdel") + "/events")
    try:
        st.wait(lambda s: s.events, "opened")
        expect_status(C.delete(base("sse-sdel") + "/segments/" + batch[1]["id"]), 204, "DELETE")
        st.wait(lambda s: s.nseg() >= 3, "re-sent segments")
        time.sleep(0.2)
        evs = [e for e in st.events if "comment" not in e and "retry" not in e]
        eq(evs[0], {"event": "segment-deleted",
                    "data": json.dumps({"id": batch[1]["id"], "seq": 2}, separators=(",", ":"))},
           "the notice first")
        segevs = [e for e in evs if e.get("event") == "segment"]
        eq([int(e["id"]) for e in segevs], [3, 4, 5],
           "the later segments under their unchanged seqs (seq 2 stays unused)")
        for e in segevs:
            d = json.loads(e["data"])
            now = C.jget(base("sse-sdel") + "/segments/" + d["id"])
            now.pop("request", None)
            eq(d, now, "re-sent seq %s = the stored result" % e["id"])
        eq([json.loads(e["data"])["id"] for e in segevs], [b["id"] for b in batch[2:]],
           "ids of the re-sent segments")
    finally:
        st.close()


def test_deleted_event_ends_the_stream():
    C.create_session(id="sse-del")
    st = Stream(S.port, base("sse-del") + "/events")
    try:
        st.wait(lambda s: s.events, "opened")
        a = post(C, "sse-del", segs(1, prefix="d")[0])
        expect_status(C.delete(base("sse-del")), 204, "DELETE")
        st.wait(lambda s: s.finished or s.eof, "end of the stream")
        check(st.finished, "the chunked body did not end cleanly (%r)" % st.error)
        evs = [e for e in st.events if "comment" not in e]
        check_segment_events([e for e in evs if e.get("event") == "segment"], [a], "before delete")
        eq(evs[-1], {"event": "deleted", "data": "{}"}, "last event")
    finally:
        st.close()
    expect_problem(C.get(base("sse-del") + "/events"), 404, "not-found", "after DELETE")


def test_heartbeat_comment():
    C.create_session(id="sse-hb")
    st = Stream(S.port, base("sse-hb") + "/events")
    try:
        st.wait(lambda s: sum(1 for e in s.events if e.get("comment") == "ping") >= 2,
                "two ': ping' comments with --sse-heartbeat 1", timeout=20)
        eq(st.events[0], {"retry": "2000"}, "retry first")
    finally:
        st.close()


def test_client_far_behind_is_disconnected():
    """A client that does not read falls behind; past the backlog limit
    (1024 events) the server drops it rather than buffering without bound."""
    C.create_session(id="sse-slow")
    # a raw socket that never reads, with a small receive buffer
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", S.port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % (base("sse-slow") + "/events")).encode())
    time.sleep(0.3)
    good = Stream(S.port, base("sse-slow") + "/events")
    good.wait(lambda x: x.events, "a reading stream")
    try:
        t = tico19()
        n = 1400
        for i in range(n):
            # 8 systems: large events, so that the kernel's socket buffers
            # (megabytes on loopback) cannot hide the backlog
            x = t[i % len(t)]
            sg = {"id": "slow%d" % i, "source": x["source"], "translation": x["translation"],
                  "hypotheses": {"sys%d" % k: x["hypothesis"] for k in range(8)}}
            r = C.post(base("sse-slow") + "/segments", sg)
            expect_status(r, 201, "POST %d" % i)
        good.wait(lambda x: x.nseg() >= n, "the reading stream got all %d" % n)
        # the stalled socket: after draining what the kernel buffered the
        # server must have closed it (EOF or reset), long before n events
        s.settimeout(WAIT)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        got = b""
        try:
            while got.count(b"event: segment") < n:  # heartbeats keep coming
                d = s.recv(1 << 16)
                if not d:
                    break
                got += d
        except ConnectionResetError:
            pass
        seen = got.count(b"event: segment")
        print("  %d bytes per event" % (len(got) // max(seen, 1)))
        check(seen < n, "the stalled client got all %d events (%d bytes)" % (n, len(got)))
        check(not got.endswith(b"0\r\n\r\n"), "the stalled client got a clean end, not a drop")
        print("  stalled client: %d of %d events before it was dropped" % (seen, n))
    finally:
        s.close()
        good.close()


def test_access_token_query_parameter():
    W, R = "W-tok-sse-1-0123456", "R-tok-sse-2-0123456"  # at least 16 characters
    srv = Server("--write-token", W, "--read-token", R)
    try:
        c = srv.client(token=W)
        c.create_session(id="sse-auth")
        path = base("sse-auth") + "/events"
        expect_problem(c.get(path, token=""), 401, "unauthorized", "no token")
        expect_problem(c.get(path + "?access_token=wrong", token=""), 403, "forbidden",
                       "wrong access_token")
        for tok in (R, W):
            st = Stream(srv.port, path + "?access_token=" + tok)
            try:
                st.wait(lambda s: s.events or s.eof, "stream with ?access_token")
                eq(st.status, 200, "status with ?access_token=%s" % tok[:5])
            finally:
                st.close()
        st = Stream(srv.port, path, headers={"Authorization": "Bearer " + R})
        try:
            st.wait(lambda s: s.events or s.eof, "stream with the header")
            eq(st.status, 200, "status with Authorization: Bearer")
        finally:
            st.close()
        # other reads take it too (RFC 6750 §2.3 on GET); writes do not
        expect_status(c.get(base("sse-auth") + "?access_token=" + R, token=""), 200,
                      "GET session with ?access_token")
        seg = segs(1, prefix="a")[0]
        expect_problem(c.post(base("sse-auth") + "/segments?access_token=" + W, seg, token=""),
                       401, "unauthorized", "POST with ?access_token")
        c.close()
        eq(srv.stop(), 0, "exit status")
        logs = srv.logs(tail=10 ** 6)
        check("GET /v1/sessions/sse-auth/events 200" in logs, "the stream was logged:\n" + logs)
        for tok in (W, R, "wrong"):
            check(tok not in logs, "a token appears in the log:\n" + logs)
    finally:
        srv.kill()


def test_sigterm_with_50_open_streams():
    srv = Server("--max-streams-per-client", "64")  # 50 from one address: above the default 32
    try:
        c = srv.client()
        c.create_session(id="sse-term")
        c.close()
        streams = [Stream(srv.port, base("sse-term") + "/events") for _ in range(50)]
        for st in streams:
            st.wait(lambda s: s.events, "opened")
        t0 = time.monotonic()
        rc = srv.stop(timeout=30)
        secs = time.monotonic() - t0
        eq(rc, 0, "exit status after SIGTERM")
        check(secs < 5, "SIGTERM took %.1f s with 50 open streams" % secs)
        for i, st in enumerate(streams):
            st.wait(lambda s: s.eof, "stream %d closed" % i, timeout=10)
            st.close()
        print("  SIGTERM with 50 open streams: stopped in %.3f s" % secs)
    finally:
        srv.kill()


class Drain:
    """n raw event streams read by ONE thread (selectors) that only counts
    segment events: a light client, so that the measurement below is about
    the server and not about 200 Python threads parsing events."""

    PAT = b"\nevent: segment\n"

    def __init__(self, port, path, n):
        import selectors
        self.sel = selectors.DefaultSelector()
        self.counts = [0] * n
        self.tails = [b""] * n
        self.socks = []
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ, i)
            self.socks.append(s)
        self.stop = False
        self.opened = [False] * n
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            for key, _ in self.sel.select(0.2):
                i = key.data
                try:
                    d = key.fileobj.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    d = b""
                if not d:
                    self.sel.unregister(key.fileobj)
                    continue
                buf = self.tails[i] + d
                if b"retry: 2000" in buf:
                    self.opened[i] = True
                self.counts[i] += buf.count(self.PAT)
                self.tails[i] = buf[-(len(self.PAT) - 1):]

    def wait(self, pred, what, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while not pred():
            check(time.monotonic() < deadline, what + ": timed out")
            time.sleep(0.05)

    def close(self):
        self.stop = True
        self.thread.join(10)
        for s in self.socks:
            s.close()


def test_measure_post_latency_0_vs_200_streams():
    """Prints the median POST latency with no stream and with 200 open
    streams on the session (a measurement, not an assertion; the 200
    streams are drained by one light client thread)."""
    def measure(sid, prefix):
        c = S.client()
        lat = []
        for s in segs(200, prefix=prefix):
            t0 = time.perf_counter()
            post(c, sid, s)
            lat.append(time.perf_counter() - t0)
        c.close()
        return statistics.median(lat) * 1e3, sorted(lat)[int(len(lat) * 0.95)] * 1e3

    C.create_session(id="sse-lat0")
    m0, p0 = measure("sse-lat0", "l0")
    C.create_session(id="sse-lat200")
    d = Drain(S.port, base("sse-lat200") + "/events", 200)
    try:
        d.wait(lambda: all(d.opened), "200 streams open")
        m200, p200 = measure("sse-lat200", "l2")
        d.wait(lambda: min(d.counts) >= 200, "every stream got 200 segments")
        time.sleep(0.2)
        eq(set(d.counts), {200}, "segments per stream")
    finally:
        d.close()
    print("  POST latency, 200 posts: median %.2f ms (p95 %.2f) with 0 streams; "
          "median %.2f ms (p95 %.2f) with 200 open streams" % (m0, p0, m200, p200))


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals()), setup, teardown))
