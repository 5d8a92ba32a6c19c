#!/usr/bin/env python3
"""Graceful shutdown: SIGTERM while requests are in flight.

Writers post continuously and a slow client is in the middle of a body when
SIGTERM arrives. The server must stop accepting new connections, finish the
requests in flight (the slow client, which keeps sending, gets its 201 and
its segment is stored; so is every segment any writer got a 2xx for),
checkpoint the WAL (the -wal file is gone or empty after exit), and exit 0
within the configured --shutdown-timeout-ms plus a margin. A client that
stalls mid-body does not hold the shutdown past that bound either, and
neither does a request that is still computing (it is abandoned with 503
and stores nothing; the acknowledged segments survive).
"""
import json
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rel import OPTIONS, _parse, check_log, grow_session, scale, seg_body, tico19  # noqa: E402
from harness import TICO_GLOSSARY, Server, check, eq, pg_quick, run_tests  # noqa: E402

SHUTDOWN_MS = 5000
MARGIN = scale(5.0, 30.0)


def _post_head(sess, body):
    return (("POST /v1/sessions/%s/segments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n")
            % (sess, len(body))).encode()


def _read_response(s, timeout):
    s.settimeout(timeout)
    buf = b""
    try:
        while True:
            got = s.recv(65536)
            if not got:
                break
            buf += got
            head, sep, rest = buf.partition(b"\r\n\r\n")
            if sep and b"content-length" in head.lower():
                n = int([ln.split(b":")[1] for ln in head.split(b"\r\n")
                         if ln.lower().startswith(b"content-length")][0])
                if len(rest) >= n:
                    break
    except (socket.timeout, ConnectionResetError):
        pass
    return _parse(buf)


def _wal_empty(db):
    wal = db + "-wal"
    return not os.path.exists(wal) or os.path.getsize(wal) == 0


def test_sigterm_finishes_in_flight_and_checkpoints():
    srv = Server("--shutdown-timeout-ms", str(SHUTDOWN_MS))
    try:
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        c.close()
        segs = tico19()
        acked = {}
        lock = threading.Lock()
        stop = threading.Event()

        def writer(no):
            cl = srv.client()
            k = 0
            try:
                while not stop.is_set():
                    cid = "w%d-%d" % (no, k)
                    k += 1
                    try:
                        r = cl.post("/v1/sessions/g/segments",
                                    seg_body(segs[(no * 131 + k) % len(segs)], cid), timeout=30)
                    except Exception:
                        return  # the server went away: only answered posts count
                    if 200 <= r.status < 300:
                        with lock:
                            acked[cid] = r.json()
                    else:
                        return
            finally:
                cl.close()

        ws = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        for t in ws:
            t.start()
        time.sleep(scale(0.5, 3.0))
        # the slow client: headers and half of the body before SIGTERM
        body = json.dumps(seg_body(segs[5], "slow")).encode()
        slow = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        slow.sendall(_post_head("g", body) + body[:len(body) // 2])
        time.sleep(scale(0.3, 2.0))
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        # no new connection is served once the signal arrived (the probe must
        # stay well under the 2 s the server grants a request without progress)
        try:
            nc = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
            try:
                nc.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                st, _, _ = _read_response(nc, 1.0)
            except OSError:
                st = None
            nc.close()
        except OSError:
            st = None
        eq(st, None, "a new connection after SIGTERM is served")
        # the slow client keeps going and finishes its body
        slow.sendall(body[len(body) // 2:])
        st, _, rbody = _read_response(slow, scale(10, 60))
        slow.close()
        eq(st, 201, "status of the slow client's request that was in flight at SIGTERM")
        stop.set()
        rc = srv.proc.wait(SHUTDOWN_MS / 1000.0 + MARGIN)
        took = time.monotonic() - t0
        for t in ws:
            t.join(30)
        print("# exit %d after %.2fs; %d writer posts acknowledged" % (rc, took, len(acked)))
        eq(rc, 0, "exit status after SIGTERM")
        check(took < SHUTDOWN_MS / 1000.0 + MARGIN, "exit took %.1fs" % took)
        db = srv.db
        srv.proc = None
        check(_wal_empty(db), "the WAL was not checkpointed: %s-wal has %d bytes"
              % (db, os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0))
        logs, _ = check_log(db, "after SIGTERM:")
        stored = {r[1]: r for r in logs["g"]}
        check("slow" in stored, "the slow client's segment is not stored")
        eq(json.loads(stored["slow"][3]).get("seq"), json.loads(rbody)["seq"],
           "stored seq of the slow client's segment")
        for cid in acked:
            check(cid in stored, "acknowledged segment %s lost in the shutdown" % cid)
        check(len(acked) > 0, "the writers got answers")
    finally:
        srv.kill()


def test_sigterm_with_stalled_client_is_bounded():
    srv = Server("--shutdown-timeout-ms", str(SHUTDOWN_MS), "--conn-timeout", "60")
    try:
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        c.close()
        body = json.dumps(seg_body(tico19()[0], "stalled")).encode()
        stalled = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        stalled.sendall(_post_head("g", body) + body[:10])
        time.sleep(scale(0.3, 2.0))
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        rc = srv.proc.wait(SHUTDOWN_MS / 1000.0 + MARGIN)
        took = time.monotonic() - t0
        stalled.close()
        print("# exit %d after %.2fs with a stalled client" % (rc, took))
        eq(rc, 0, "exit status")
        check(took < SHUTDOWN_MS / 1000.0 + MARGIN, "exit took %.1fs" % took)
        db = srv.db
        srv.proc = None
        check(_wal_empty(db), "the WAL was not checkpointed")
        logs, _ = check_log(db, "after SIGTERM with a stalled client:")
        check(all(r[1] != "stalled" for r in logs["g"]), "a half-sent segment was stored")
    finally:
        srv.kill()


def _eight(segs, k, cid):
    """Segment k with eight systems' hypotheses (the next segments' as the
    other systems')."""
    s = segs[k]
    hyps = {"s%d" % i: segs[(k + i) % len(segs)]["hypothesis"] for i in range(8)}
    return {"id": cid, "source": s["source"], "hypotheses": hyps, "translation": s["translation"]}


def test_sigterm_during_computing_request_is_bounded():
    # the computing request: a PUT, which replays the whole session (20,000
    # segments of 8 systems with the TICO-19 glossary: tens of seconds of CPU)
    shutdown_ms = 2000
    srv = Server()
    try:
        c = srv.client()
        c.create_session(id="g", source_lang="en", target_lang="fr")
        with open(TICO_GLOSSARY, "rb") as f:
            eq(c.put("/v1/sessions/g/glossary", f.read(), ctype="text/csv").status, 200,
               "glossary upload")
        segs = tico19()
        for k in range(40):
            eq(c.post("/v1/sessions/g/segments", _eight(segs, k, "ok%d" % k)).status, 201,
               "status of a normal post")
        c.close()
        db = srv.db
        eq(srv.stop(), 0, "exit status")
        # (5,000 in the quick PostgreSQL pass: a replay there is still many
        # seconds, far beyond the second before the signal)
        grow_session(db, "g", pg_quick(20000, 5000))
        srv.kill()
        # a budget far beyond the replay: only the shutdown may abandon it (under
        # valgrind the default 5 s budget ran out first: 503 without Retry-After)
        srv = Server("--shutdown-timeout-ms", str(shutdown_ms), "--request-timeout-ms", "600000",
                     db=db)
        c = srv.client()
        for k in range(40, 45):  # acknowledged before the signal: must survive
            eq(c.post("/v1/sessions/g/segments", seg_body(segs[k], "ok%d" % k)).status, 201,
               "status of a normal post")
        c.close()
        got = {}

        def slow():
            cl = srv.client()
            try:
                got["r"] = cl.put("/v1/sessions/g/segments/ok1", seg_body(segs[77], "ok1"),
                                  timeout=600)
            except Exception as e:  # the server went away without answering: allowed
                got["r"] = e
            finally:
                cl.close()

        th = threading.Thread(target=slow)
        th.start()
        time.sleep(scale(1.0, 5.0))  # the body is sent and the replay runs
        t0 = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        try:
            rc = srv.proc.wait(shutdown_ms / 1000.0 + MARGIN)
        except Exception:
            rc = None
        took = time.monotonic() - t0
        print("# exit %s after %.2fs with a computing request" % (rc, took))
        check(rc is not None, "still running %.1fs after SIGTERM (shutdown-timeout %d ms)"
              % (took, shutdown_ms))
        eq(rc, 0, "exit status")
        th.join(30)
        r = got.get("r")
        if hasattr(r, "status"):
            eq(r.status, 503, "status of the request abandoned at shutdown")
            eq(r.header("Retry-After"), "1", "Retry-After of a request abandoned at shutdown")
        srv.proc = None
        logs, _ = check_log(db, "after SIGTERM with a computing request:")
        stored = {row[1]: row for row in logs["g"]}
        for k in range(45):
            check("ok%d" % k in stored, "acknowledged segment ok%d lost" % k)
    finally:
        srv.kill()


def test_sigterm_under_connection_churn():
    """SIGTERM while new connections keep arriving on every worker of the
    thread pool. The server stopped taking connections with
    MHD_quiesce_daemon, which with epoll races a worker removing the
    listen socket from its own epoll set: the loser aborted the process
    ("Fatal error in GNU libmicrohttpd ... Failed to remove listen FD from
    epoll set", once in make test). Now the accept policy closes new
    connections: every round exits 0, promptly, with no fatal error in its
    log; a slow client in flight keeps the server draining for a while, and
    no connection opened 0.2 s after the signal is answered meanwhile (the
    old code: none either, they waited in the listen backlog)."""
    rounds = int(scale(8, 3, 3))  # the race is libmicrohttpd's: the store adds nothing
    after = scale(0.2, 0.6)  # a signal reaches a server under valgrind later
    body = json.dumps(seg_body(tico19()[0], "slow")).encode()
    for k in range(rounds):
        srv = Server("--threads", "8", "--shutdown-timeout-ms", str(SHUTDOWN_MS))
        c = srv.client()
        c.create_session(id="g", options=dict(OPTIONS))
        c.close()
        slow = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
        slow.sendall(_post_head("g", body) + body[:len(body) // 2])
        stop = threading.Event()
        late = []  # (seconds after the signal, status) of answered connections
        sent = {}

        def churn():
            while not stop.is_set():
                t = time.monotonic()
                try:
                    s = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              b"Connection: close\r\n\r\n")
                    st, _, _ = _read_response(s, 2.0)
                    s.close()
                except OSError:
                    st = None
                if st is not None and "t0" in sent:
                    late.append((t - sent["t0"], st))

        ts = [threading.Thread(target=churn) for _ in range(8)]
        try:
            for t in ts:
                t.start()
            time.sleep(scale(0.3, 2.0))
            sent["t0"] = time.monotonic()
            srv.proc.send_signal(signal.SIGTERM)
            time.sleep(0.8)  # draining: the slow client is in flight
            slow.sendall(body[len(body) // 2:])
            st, _, _ = _read_response(slow, scale(10, 60))
            rc = srv.proc.wait(SHUTDOWN_MS / 1000.0 + MARGIN)
            took = time.monotonic() - sent["t0"]
        finally:
            stop.set()
            for t in ts:
                t.join()
            slow.close()
        logs = srv.logs(100000)
        srv.proc = None
        eq(st, 201, "round %d: the slow client's request in flight at the signal" % k)
        eq(rc, 0, "round %d: exit status (log: %s)" % (k, logs[-400:]))
        check("Fatal error" not in logs, "round %d: libmicrohttpd aborted: %s" % (k, logs[-400:]))
        check(took < SHUTDOWN_MS / 1000.0 + MARGIN, "round %d: exit took %.1fs" % (k, took))
        answered_late = [a for a in late if a[0] > after]
        eq(len(answered_late), 0, "round %d: connections opened after the signal and answered "
           "(first: %r)" % (k, answered_late[:3]))


if __name__ == "__main__":
    sys.exit(run_tests(dict(globals())))
