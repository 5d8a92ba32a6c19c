#!/usr/bin/env python3
"""RSS against the session cache's memory budget (issue 25, item 2).

usage: memory.py ADAPTMON

Starts adaptmon serve on 127.0.0.1 (temporary database) with
--session-memory BUDGET (default 256MiB) and, with /healthz polled every
0.2 s and VmRSS sampled every 0.2 s throughout:

  1. SESSIONS sessions (default 8) each get an ENTRIES-entry glossary
     (default 100,000: ~70 MB compiled, the issue's case) and one POST,
     which builds its scorer, twice round;
  2. one more session gets VERSIONS glossary versions (default 6) with a
     POST after each, then a PUT of its first segment replays the log over
     all of them (one older version's scorer at a time);
  3. the eviction cost: a POST into a session whose runtime is cached
     against a POST into one evicted by the budget (its scorer rebuilt
     from the database), REPEAT times each (default 3), median;
  4. every session is DELETEd and RSS read again after a second.

Prints the budget, the counted bytes and peak (/metrics), the evictions,
RSS (start, peak, end of each phase, after the deletes), the slowest
/healthz answer and any failure, and the eviction cost.

Then the combined worst case (issue 25, "Memory"), on a second server with
the same budget and the stream caps raised (--max-streams,
--max-streams-per-client and --max-streams-per-session STREAMS + 100,
--max-connections STREAMS + 200, --max-batch and --max-body raised for the
batches): STREAMS event streams (default 2,000) are opened and held over
MIX (default 8) sessions, then at once every one of those sessions gets an
ENTRIES-entry glossary PUT, TMX_N (default 2) background vocabularies of
TMX_MB MB of TMX (default 20) are PUT, and BATCH_N (default 2) batches of
BATCH items (default 20,000) are POSTed into sessions of their own; a
client answered 503 waits its Retry-After and tries again (at most 20
times). Prints each request kind's answers, the streams that were open at
the end, RSS's high-water mark (VmHWM) against the budget, and the /healthz
latency (median, max) and failures during the mix. COMBINED=0 skips it,
COMBINED=only runs it alone. COMBINED=put runs only a measure of one
ENTRIES-entry glossary PUT per format (JSON, CSV, TBX) into a fresh server:
the body's size and VmHWM less VmRSS before the PUT. `make bench` runs it;
the figures go to bench/README.md ("Memory budget").
"""
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tico  # noqa: E402

ADAPTMON = os.path.abspath(sys.argv[1])
MIB = 1 << 20
BUDGET = os.environ.get("BUDGET", "256MiB")
SESSIONS = int(os.environ.get("SESSIONS", "8"))
ENTRIES = int(os.environ.get("ENTRIES", "100000"))
VERSIONS = int(os.environ.get("VERSIONS", "6"))
REPEAT = int(os.environ.get("REPEAT", "3"))
COMBINED = os.environ.get("COMBINED", "1")
STREAMS = int(os.environ.get("STREAMS", "2000"))
MIX = int(os.environ.get("MIX", "8"))
TMX_N = int(os.environ.get("TMX_N", "2"))
TMX_MB = float(os.environ.get("TMX_MB", "20"))
BATCH_N = int(os.environ.get("BATCH_N", "2"))
BATCH = int(os.environ.get("BATCH", "20000"))
OPTS = {"profile": "standard"}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Api:
    def __init__(self, port):
        self.port = port
        self.c = None

    def req(self, method, path, body=None, timeout=600, ctype=None, retry_after=None):
        if self.c is None:
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        hdr = {}
        if body is not None and ctype is None:
            body = json.dumps(body).encode("utf-8")
            hdr["Content-Type"] = "application/json"
        elif ctype is not None:
            hdr["Content-Type"] = ctype
        try:
            self.c.request(method, path, body=body, headers=hdr)
            r = self.c.getresponse()
            data = r.read()
        except (http.client.HTTPException, OSError):
            self.c.close()
            self.c = None
            raise
        if retry_after is not None:
            retry_after.append(r.getheader("Retry-After"))
        return r.status, data


def glossary(n, salt):
    return [{"source": "term%d w%d" % (k, salt), "targets": ["terme%d" % k, "mot%d" % k]}
            for k in range(n)]


def seg(s, cid):
    return {"id": cid, "source": s["source"], "hypothesis": s["hypothesis"],
            "translation": s["translation"]}


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def metrics(api):
    st, data = api.req("GET", "/metrics")
    out = {}
    for line in data.decode().splitlines():
        if line.startswith("adaptmon_session") or line.startswith("adaptmon_sessions_cached"):
            k, v = line.split()
            out[k] = float(v)
    return out


def must(status, data, ok, what):
    if status not in ok:
        raise SystemExit("%s: %d %s" % (what, status, data[:300]))


def tmx_body(mb):
    """A TMX of about mb MB: sentence pairs of distinct words."""
    tus, size, k = [], 0, 0
    while size < mb * 1e6:
        fr = " ".join("mot%d" % (k * 7 + j) for j in range(12))
        tu = ('<tu><tuv xml:lang="en"><seg>word %d and more words here</seg></tuv>'
              '<tuv xml:lang="fr"><seg>%s</seg></tuv></tu>\n' % (k, fr))
        tus.append(tu)
        size += len(tu)
        k += 1
    return ('<?xml version="1.0"?><tmx version="1.4"><header srclang="en" segtype="sentence"/>'
            '<body>%s</body></tmx>' % "".join(tus)).encode()


def batch_body(n, prefix):
    t = "the quick brown fox jumps over the lazy dog near the river bank today"
    return json.dumps([{"id": "%s%d" % (prefix, i), "source": t, "hypothesis": t,
                        "translation": t} for i in range(n)]).encode()


def open_stream(port, sid):
    """An event stream held open: the socket, or None when refused."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(("GET /v1/sessions/%s/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
               "Accept: text/event-stream\r\n\r\n" % (sid, port)).encode())
    head = b""
    while b"\r\n" not in head:
        got = s.recv(4096)
        if not got:
            break
        head += got
    if not head.startswith(b"HTTP/1.1 200"):
        s.close()
        return None
    return s


def combined():
    """The combined worst case (see the docstring)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, STREAMS + 1000)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    tmp = tempfile.mkdtemp(prefix="adaptmon-bench-mix-")
    port = free_port()
    cap = str(STREAMS + 100)
    proc = subprocess.Popen([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(port),
                             "--db", os.path.join(tmp, "m.db"), "--session-memory", BUDGET,
                             "--request-timeout-ms", "0", "--log-level", "warn",
                             "--max-streams", cap, "--max-streams-per-client", cap,
                             "--max-streams-per-session", cap,
                             "--max-connections", str(STREAMS + 200),
                             "--max-batch", str(max(BATCH, 5000)), "--max-body", "64MiB"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    health = []
    fails = [0]
    hwm = [0]
    streams = []
    try:
        api = Api(port)
        for _ in range(200):
            try:
                if api.req("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        rss0 = rss(proc.pid)
        mix = ["mix%d" % i for i in range(MIX)]
        bat = ["bat%d" % i for i in range(BATCH_N)]
        for sid in mix + bat:
            must(*api.req("POST", "/v1/sessions", {"id": sid, "source_lang": "en",
                                                   "target_lang": "fr", "options": OPTS}),
                 (201,), "create")
        t0 = time.monotonic()
        refused_streams = 0
        for k in range(STREAMS):
            s = open_stream(port, mix[k % MIX])
            if s is None:
                refused_streams += 1
            else:
                streams.append(s)
        streams_s = time.monotonic() - t0
        rss_streams = rss(proc.pid)

        def watch():
            h = Api(port)
            while not stop.is_set():
                t = time.monotonic()
                try:
                    ok = h.req("GET", "/healthz", timeout=30)[0] == 200
                except (OSError, http.client.HTTPException):
                    ok = False
                health.append(time.monotonic() - t)
                fails[0] += 0 if ok else 1
                with open("/proc/%d/status" % proc.pid) as f:
                    for line in f:
                        if line.startswith("VmHWM:"):
                            hwm[0] = int(line.split()[1]) * 1024
                time.sleep(0.2)

        answers = {}
        lock = threading.Lock()

        def run(kind, method, path, body, ctype):
            cl = Api(port)
            for _ in range(20):
                ra = []
                try:
                    st, data = cl.req(method, path, body, ctype=ctype, retry_after=ra)
                except (OSError, http.client.HTTPException):
                    st, data = 0, b""
                with lock:
                    answers.setdefault(kind, []).append(st)
                if st != 503:
                    break
                time.sleep(float(ra[0] or 1))

        gl = [json.dumps(glossary(ENTRIES, 500 + i)).encode() for i in range(MIX)]
        tmx = tmx_body(TMX_MB)
        bb = [batch_body(BATCH, "b%d_" % i) for i in range(BATCH_N)]
        jobs = [("glossary PUT (%d entries, %.1f MB)" % (ENTRIES, len(gl[0]) / 1e6), "PUT",
                 "/v1/sessions/%s/glossary" % sid, gl[i], "application/json")
                for i, sid in enumerate(mix)]
        jobs += [("TMX vocabulary PUT (%.1f MB)" % (len(tmx) / 1e6), "PUT",
                  "/v1/vocabularies/tmx%d" % i, tmx, "application/x-tmx+xml")
                 for i in range(TMX_N)]
        jobs += [("batch POST (%d items, %.1f MB)" % (BATCH, len(bb[0]) / 1e6), "POST",
                  "/v1/sessions/%s/segments" % sid, bb[i], "application/json")
                 for i, sid in enumerate(bat)]
        w = threading.Thread(target=watch)
        w.start()
        t0 = time.monotonic()
        threads = [threading.Thread(target=run, args=j) for j in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        mix_s = time.monotonic() - t0
        stop.set()
        w.join()
        if proc.poll() is not None:
            raise SystemExit("the server exited (status %s) during the mix" % proc.returncode)
        m = metrics(Api(port))  # api's connection idled out during the mix
        alive = 0
        for s in streams:  # still open: a non-blocking peek finds no EOF
            s.setblocking(False)
            try:
                alive += 0 if s.recv(1, socket.MSG_PEEK) == b"" else 1
            except BlockingIOError:
                alive += 1
            except OSError:
                pass
        budget = m["adaptmon_session_memory_budget_bytes"]
        print("== combined worst case: --session-memory %s, %d streams, %d sessions" %
              (BUDGET, STREAMS, MIX))
        print("streams: %d opened in %.1f s (%d refused), %d still open after the mix; "
              "RSS %.0f MiB with them (%.0f MiB before)" %
              (len(streams), streams_s, refused_streams, alive, rss_streams / MIB, rss0 / MIB))
        for kind, sts in answers.items():
            cnt = {}
            for x in sts:
                cnt[x] = cnt.get(x, 0) + 1
            print("%-46s %s" % (kind, ", ".join("%s x%d" % (k, v) for k, v in sorted(cnt.items()))))
        hs = sorted(health)
        print("mix: %.1f s; RSS high-water mark %.0f MiB against the budget %.0f MiB "
              "(counted peak %.0f MiB, %d refusals)" %
              (mix_s, hwm[0] / MIB, budget / MIB, m["adaptmon_session_memory_peak_bytes"] / MIB,
               sum(1 for v in answers.values() for x in v if x == 503)))
        if hs:
            print("/healthz during the mix: %d polls, median %.0f ms, slowest %.0f ms, %d failed"
                  % (len(hs), hs[len(hs) // 2] * 1000, hs[-1] * 1000, fails[0]))
    finally:
        stop.set()
        for s in streams:
            s.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def hwm(pid, key="VmHWM:"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def put_peak():
    """One ENTRIES-entry glossary PUT per format into a fresh server."""
    n = ENTRIES
    bodies = [
        ("JSON", "application/json", json.dumps(glossary(n, 1)).encode()),
        ("CSV", "text/csv", ("source,target\n" + "".join(
            "term%d w1,terme%d\n" % (k, k) for k in range(n))).encode()),
        ("TBX", "application/x-tbx", (
            '<?xml version="1.0"?><tbx type="TBX-Basic" xml:lang="en"><tbxHeader><fileDesc>'
            '<sourceDesc><p>x</p></sourceDesc></fileDesc></tbxHeader><text><body>' + "".join(
                '<conceptEntry id="c%d"><langSec xml:lang="en"><termSec><term>term%d w1</term>'
                '</termSec></langSec><langSec xml:lang="fr"><termSec><term>terme%d</term>'
                '</termSec></langSec></conceptEntry>' % (k, k, k) for k in range(n)) +
            '</body></text></tbx>').encode())]
    print("== one %d-entry glossary PUT per format (--session-memory %s)" % (n, BUDGET))
    for name, ctype, body in bodies:
        tmp = tempfile.mkdtemp(prefix="adaptmon-bench-put-")
        port = free_port()
        proc = subprocess.Popen([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(port),
                                 "--db", os.path.join(tmp, "m.db"), "--session-memory", BUDGET,
                                 "--log-level", "warn"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            api = Api(port)
            for _ in range(200):
                try:
                    if api.req("GET", "/healthz")[0] == 200:
                        break
                except OSError:
                    time.sleep(0.05)
            must(*api.req("POST", "/v1/sessions", {"id": "p", "source_lang": "en",
                                                   "target_lang": "fr", "options": OPTS}),
                 (201,), "create")
            r0 = hwm(proc.pid, "VmRSS:")
            t = time.monotonic()
            st, data = api.req("PUT", "/v1/sessions/p/glossary", body, ctype=ctype)
            dt = time.monotonic() - t
            peak = hwm(proc.pid) - r0
            print("%-5s %d  body %5.1f MB  peak %4.0f MB  %5.1f bytes per body byte  %.1f s" %
                  (name, st, len(body) / 1e6, peak / 1e6, peak / len(body), dt))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
            shutil.rmtree(tmp, ignore_errors=True)


def main():
    if COMBINED == "put":
        put_peak()
        return
    if COMBINED != "only":
        budget_phases()
    if COMBINED != "0":
        combined()


def budget_phases():
    tmp = tempfile.mkdtemp(prefix="adaptmon-bench-mem-")
    port = free_port()
    proc = subprocess.Popen([ADAPTMON, "serve", "--listen", "127.0.0.1", "--port", str(port),
                             "--db", os.path.join(tmp, "m.db"), "--session-memory", BUDGET,
                             "--request-timeout-ms", "0", "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop = threading.Event()
    samples = {"rss_max": 0, "health_max": 0.0, "health_fail": 0, "health_n": 0}
    try:
        api = Api(port)
        for _ in range(200):
            try:
                if api.req("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        rss0 = rss(proc.pid)

        def watch():
            h = Api(port)
            while not stop.is_set():
                t0 = time.monotonic()
                try:
                    ok = h.req("GET", "/healthz", timeout=10)[0] == 200
                except (OSError, http.client.HTTPException):
                    ok = False
                dt = time.monotonic() - t0
                samples["health_n"] += 1
                samples["health_max"] = max(samples["health_max"], dt)
                samples["health_fail"] += 0 if ok else 1
                samples["rss_max"] = max(samples["rss_max"], rss(proc.pid))
                time.sleep(0.2)

        w = threading.Thread(target=watch)
        w.start()
        segs = [{"source": a, "hypothesis": b, "translation": c} for a, b, c in tico.segments()]
        phases = []
        ids = ["mem%d" % i for i in range(SESSIONS)]
        t0 = time.monotonic()
        for i, sid in enumerate(ids):
            must(*api.req("POST", "/v1/sessions", {"id": sid, "source_lang": "en",
                                                   "target_lang": "fr", "options": OPTS}),
                 (201,), "create")
            must(*api.req("PUT", "/v1/sessions/%s/glossary" % sid, glossary(ENTRIES, i)), (200,),
                 "glossary")
        for rnd in range(2):
            for i, sid in enumerate(ids):
                must(*api.req("POST", "/v1/sessions/%s/segments" % sid,
                              seg(segs[(rnd * SESSIONS + i) % len(segs)], "r%d" % rnd)),
                     (201,), "post")
        m = metrics(api)
        phases.append(("%d sessions x %d entries, 2 rounds" % (SESSIONS, ENTRIES),
                       time.monotonic() - t0, rss(proc.pid), m))

        t0 = time.monotonic()
        must(*api.req("POST", "/v1/sessions", {"id": "ver", "source_lang": "en",
                                               "target_lang": "fr", "options": OPTS}),
             (201,), "create ver")
        for k in range(VERSIONS):
            must(*api.req("PUT", "/v1/sessions/ver/glossary", glossary(ENTRIES, 1000 + k)),
                 (200,), "glossary version")
            must(*api.req("POST", "/v1/sessions/ver/segments", seg(segs[k % len(segs)], "v%d" % k)),
                 (201,), "post ver")
        tr = time.monotonic()
        must(*api.req("PUT", "/v1/sessions/ver/segments/v0", seg(segs[0], "v0")), (200,), "replay")
        replay_s = time.monotonic() - tr
        m = metrics(api)
        phases.append(("replay over %d glossary versions (%.1f s)" % (VERSIONS, replay_s),
                       time.monotonic() - t0, rss(proc.pid), m))

        # eviction cost: the most recent session is cached, the oldest evicted
        cached_ms, rebuilt_ms = [], []
        for k in range(REPEAT):
            t = time.monotonic()
            must(*api.req("POST", "/v1/sessions/ver/segments", seg(segs[(k + 7) % len(segs)],
                                                                   "c%d" % k)), (201,), "cached")
            cached_ms.append((time.monotonic() - t) * 1000)
            ev0 = metrics(api)["adaptmon_session_evictions_total"]
            sid = ids[k % SESSIONS]
            t = time.monotonic()
            must(*api.req("POST", "/v1/sessions/%s/segments" % sid,
                          seg(segs[(k + 11) % len(segs)], "e%d" % k)), (201,), "evicted")
            rebuilt_ms.append((time.monotonic() - t) * 1000)
            ev1 = metrics(api)["adaptmon_session_evictions_total"]
            if ev1 == ev0:
                print("  note: POST into %s evicted nothing (rebuilt within the budget's room, "
                      "or it was cached)" % sid)
        m = metrics(api)
        for sid in ids + ["ver"]:
            must(*api.req("DELETE", "/v1/sessions/%s" % sid), (204,), "delete")
        time.sleep(1)
        after = rss(proc.pid)
        mend = metrics(api)
        stop.set()
        w.join()
        budget = m["adaptmon_session_memory_budget_bytes"]
        print("== memory budget (bench/memory.py): --session-memory %s = %.0f MiB" %
              (BUDGET, budget / MIB))
        print("%-46s %7s %9s %9s %9s %9s" % ("phase", "s", "RSS MiB", "counted", "peak",
                                            "evicted"))
        for name, secs, r, mm in phases:
            print("%-46s %7.1f %9.0f %9.0f %9.0f %9d" % (
                name, secs, r / MIB, mm["adaptmon_session_memory_bytes"] / MIB,
                mm["adaptmon_session_memory_peak_bytes"] / MIB,
                mm["adaptmon_session_evictions_total"]))
        print("RSS: start %.0f MiB, peak %.0f MiB, after deleting every session %.0f MiB "
              "(counted %.0f MiB)" % (rss0 / MIB, samples["rss_max"] / MIB, after / MIB,
                                      mend["adaptmon_session_memory_bytes"] / MIB))
        print("/healthz: %d polls, slowest %.0f ms, %d failed" %
              (samples["health_n"], samples["health_max"] * 1000, samples["health_fail"]))
        print("eviction cost: POST into a cached session %.0f ms, into an evicted one %.0f ms "
              "(its %d-entry scorer rebuilt; median of %d)" %
              (statistics.median(cached_ms), statistics.median(rebuilt_ms), ENTRIES, REPEAT))
    finally:
        stop.set()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
