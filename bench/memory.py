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
/healthz answer and any failure, and the eviction cost. `make bench`
runs it; the figures go to bench/README.md ("Memory budget").
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

    def req(self, method, path, body=None, timeout=600):
        if self.c is None:
            self.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        hdr = {}
        if body is not None:
            body = json.dumps(body).encode("utf-8")
            hdr["Content-Type"] = "application/json"
        try:
            self.c.request(method, path, body=body, headers=hdr)
            r = self.c.getresponse()
            data = r.read()
        except (http.client.HTTPException, OSError):
            self.c.close()
            self.c = None
            raise
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


def main():
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
